"""A job's report: the counters of one run (input = kept + filtered(reason) + bad(reason), nothing silent), per
language pair too, and the checks a run must pass before its outputs are switched in: the counts balance, the
store did not lose every record, bad records stay under --max-bad-fraction."""
from __future__ import annotations

import time
from collections.abc import Collection
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

from parascout.jobs.errors import JobFailed
from parascout.udfs.common import range_reads
from parascout.udfs.common.redaction import redact


class StoreUnreachable(JobFailed):
    """Every record the job asked a store for was lost in transport: the store, not the data, failed."""


class UnknownReason(JobFailed):
    """A status was counted that the modules emitting it declare neither bad nor filtered."""


class JobReport:
    """Counters of one run: input = kept + filtered(reason) + bad(reason), nothing silent."""

    def __init__(self, job: str, args: dict, conf: dict):
        self.data: dict[str, Any] = {
            "job": job,
            "status": "running",
            "args": redact(args),
            "conf": redact(conf),
            "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "inputs": {},
            "kept": 0,
            "filtered": {},
            "bad": {},
            "outputs": {},
            "metrics": {},
        }
        self._started = time.monotonic()
        self.pair: str | None = None  # the language pair (eng-fra) being counted, in a many-pair run
        self.single_pair = True  # one pair: its metrics also go to the top level, as before pairs were listed

    @contextmanager
    def pair_scope(self, label: str, single_pair: bool):
        """Count into `by_pair[label]` too, and send metrics to `metrics.by_pair[label]` (also to the top level
        when the run has one pair), while the block runs."""
        self.pair, self.single_pair = label, single_pair
        self.data.setdefault("by_pair", {})[label] = {"status": "ok", "inputs": {}, "kept": 0, "filtered": {},
                                                       "bad": {}}
        self.data["metrics"].setdefault("by_pair", {})[label] = {}
        try:
            yield self.data["by_pair"][label]
        finally:
            self.pair = None

    def _scopes(self) -> list[dict]:
        """The count holders a count goes to: the run's, and the pair's while one is counted."""
        return [self.data, self.data["by_pair"][self.pair]] if self.pair else [self.data]

    def input(self, name: str, count: int, primary: bool = True) -> None:
        """Record an input count; the primary input is the one that must balance. In a pair scope the pairs'
        counts add up (a table read once per pair counts once per pair)."""
        self.data["inputs"][name] = int(count) + (self.data["inputs"].get(name, 0) if self.pair else 0)
        if self.pair:
            self.data["by_pair"][self.pair]["inputs"][name] = int(count)
        if primary:
            self.data["primary_input"] = name

    def kept(self, count: int) -> None:
        for scope in self._scopes():
            scope["kept"] += int(count)

    def filtered(self, reason: str, count: int) -> None:
        for scope in self._scopes() if count else ():
            scope["filtered"][reason] = scope["filtered"].get(reason, 0) + int(count)

    def bad(self, reason: str, count: int) -> None:
        for scope in self._scopes() if count else ():
            scope["bad"][reason] = scope["bad"].get(reason, 0) + int(count)

    def add_counts(self, counts: dict[str, int], *, bad_reasons: Collection[str], filtered_reasons: Collection[str],
                   kept_key: str = "ok") -> None:
        """Add a {reason: n} mapping: `kept_key` is kept, `bad_reasons` are bad, `filtered_reasons` filtered.

        The sets are the emitting modules' BAD_REASONS / FILTERED_REASONS; a reason in neither raises, so a new
        failure status cannot pass as filtered and escape --max-bad-fraction."""
        bad_reasons, filtered_reasons = frozenset(bad_reasons), frozenset(filtered_reasons)
        unknown = sorted(set(counts) - {kept_key} - bad_reasons - filtered_reasons)
        if unknown or bad_reasons & filtered_reasons:
            raise UnknownReason(f"{self.data['job']}: reasons {unknown or sorted(bad_reasons & filtered_reasons)} "
                                "are not declared bad or filtered (or are both); add each to its module's "
                                "BAD_REASONS or FILTERED_REASONS")
        for reason, count in counts.items():
            if reason == kept_key:
                self.kept(count)
            elif reason in bad_reasons:
                self.bad(reason, count)
            else:
                self.filtered(reason, count)

    def output(self, table: str, count: int) -> None:
        self.data["outputs"][table] = int(count)

    def store_reads(self, records_sent: int, example_error: str | None = None) -> None:
        """Records this run asked a store for. Those bad for a reason in range_reads.TRANSPORT_FAILURES were lost to
        the store; the report keeps them apart from the records that are bad themselves."""
        self.data["store"] = {"records_sent": int(records_sent), "example_error": redact(example_error)}

    @property
    def lost_to_store(self) -> int:
        return sum(self.data["bad"].get(reason, 0) for reason in range_reads.TRANSPORT_FAILURES)

    def metric(self, key: str, value: Any) -> None:
        """A metric of the run, or of the pair being counted (metrics.by_pair; the top level too with one pair)."""
        if self.pair:
            self.data["metrics"]["by_pair"][self.pair][key] = value
        if not self.pair or self.single_pair:
            self.data["metrics"][key] = value

    def pair_metric(self, label: str, key: str) -> Any:
        """A metric recorded for the pair `label` (None when it has none)."""
        return self.data["metrics"].get("by_pair", {}).get(label, {}).get(key)

    def skip_pair(self, reason: str) -> int:
        """The pair being counted is skipped: what of its primary input is not yet accounted for is filtered as
        `pair_<reason>`, so the run still balances. Returns that count."""
        counts = self.data["by_pair"][self.pair]
        primary = counts["inputs"].get(self.data.get("primary_input"), 0)
        rest = primary - counts["kept"] - sum(counts["filtered"].values()) - sum(counts["bad"].values())
        self.filtered(f"pair_{reason}", rest)
        counts["status"] = f"skipped: {reason}"
        self.data["metrics"].setdefault("pairs_skipped", {})[self.pair] = reason
        return rest

    @property
    def total_bad(self) -> int:
        return sum(self.data["bad"].values())

    @property
    def total_filtered(self) -> int:
        return sum(self.data["filtered"].values())

    @property
    def primary_count(self) -> int | None:
        name = self.data.get("primary_input")
        return self.data["inputs"].get(name) if name else None

    @property
    def accounted(self) -> int:
        return self.data["kept"] + self.total_filtered + self.total_bad

    def check_balance(self) -> None:
        """Raise JobFailed when the primary input is not all kept, filtered or bad: something vanished."""
        primary = self.primary_count
        if primary is not None and self.accounted != primary:
            raise JobFailed(f"the report does not balance: {primary} {self.data['primary_input']} in, "
                            f"{self.accounted} accounted for (kept {self.data['kept']}, filtered {self.data['filtered']}, "
                            f"bad {self.data['bad']})")

    def check_store(self, warning_fraction: float) -> str | None:
        """Raise StoreUnreachable when every record sent to a store was lost in transport; when more than
        `warning_fraction` of them were, add a warning to the report and return it (a rerun may recover them)."""
        store, lost = self.data.get("store"), self.lost_to_store
        if not store or not lost:
            return None
        sent = store["records_sent"]
        example = f" (e.g. {store['example_error']})" if store.get("example_error") else ""
        if lost >= sent:
            raise StoreUnreachable(f"the store is unreachable: all {sent} records asked for were lost in transport"
                                   f"{example}; check the prefix, the endpoint and credentials, then rerun")
        if lost / sent <= warning_fraction:
            return None
        warning = (f"{lost} of {sent} records ({lost / sent:.1%}) were lost to the store in transport{example}; "
                   "a rerun fetches them again")
        self.data.setdefault("warnings", []).append(warning)
        return warning

    def check_bad_fraction(self, limit: float | None) -> None:
        """Raise JobFailed when bad records exceed `limit` (--max-bad-fraction) of the primary input."""
        total = self.primary_count
        if limit is None or not total:
            return
        fraction = self.total_bad / total
        if fraction > limit:
            raise JobFailed(f"{self.total_bad} of {total} input records were bad ({fraction:.1%}), "
                            f"over --max-bad-fraction {limit:.1%}: {self.data['bad']}")

    def finish(self, status: str, error: str | None = None) -> dict:
        primary = self.primary_count
        if primary is not None:
            self.data["accounted"] = self.accounted
            self.data["balanced"] = self.accounted == primary
        if "store" in self.data:
            self.data["store"].update(records_lost=self.lost_to_store, bad_records_own=self.total_bad - self.lost_to_store)
        self.data["status"] = status
        if error:
            self.data["error"] = redact(error)
        self.data["finished_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.data["seconds"] = round(time.monotonic() - self._started, 3)
        return self.data
