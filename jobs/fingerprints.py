"""A run's identity: its arguments and the versions of its inputs, so a rerun of a finished run is skipped and a
run into a root holding another source's tables is refused."""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from parascout.jobs.errors import ConfigError
from parascout.udfs.common import storage, table_layout
from parascout.udfs.common.langs import parse_lang_pair
from parascout.udfs.common.table_store import TableStore

#: arguments that change how a run goes, not what it makes: left out of its identity
RUN_ONLY_ARGUMENTS = frozenset({"force", "log_level", "spark_conf", "wait_lock", "unlocked_root"})


class RunFingerprints:
    """Job's run identity: `arguments_fingerprint()`, whether this run `already_done()`, and the check that the
    root's tables were made from the same sources."""

    args: argparse.Namespace
    name: str
    log: logging.Logger
    store: TableStore
    outputs: tuple[str, ...]
    unversioned_outputs: tuple[str, ...]
    source_arguments: tuple[str, ...]
    tables_read: dict[str, dict]
    report_path: Callable[[], str]

    def arguments_fingerprint(self) -> str:
        """The run's identity: its arguments and the versions of the inputs it reads (not of its own outputs)."""
        versions = {table: read["version"] for table, read in self.tables_read.items()
                    if read["used"] and table not in self.outputs}
        # the source files' sizes and times: a rebuilt archive at the same path is new input, not a finished run
        sources = {name: _files_signature(getattr(self.args, name, None)) for name in self.source_arguments}
        payload = json.dumps({**self._public_args(), "_input_versions": versions, "_source_files": sources},
                             sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def _public_args(self) -> dict:
        return {k: dataclasses.asdict(v) if dataclasses.is_dataclass(v) and not isinstance(v, type) else v
                for k, v in vars(self.args).items() if k not in RUN_ONLY_ARGUMENTS}

    def already_done(self) -> dict | None:
        """The previous report when this exact run already finished and its outputs are still the ones it wrote."""
        if self.args.force or not self.args.root or not storage.exists(self.report_path()):
            return None
        previous = json.loads(storage.read_text(self.report_path()))
        if previous.get("status") != "ok" or previous.get("fingerprint") != self.arguments_fingerprint():
            return None
        if not all(storage.exists(self.store.table_path(table)) for table in self.unversioned_outputs):
            return None
        versioned = [table for table in self.outputs if table not in self.unversioned_outputs]
        written_by = [(table_layout.read_manifest(self.store.table_path(table)) or {}).get("run_id") for table in versioned]
        if any(run_id != previous.get("run_id") for run_id in written_by):
            return None  # an output is missing, or a later (or interrupted) run replaced it
        for table in versioned:
            problem = table_layout.table_problem(self.store.table_path(table))
            if problem:
                self.log.warning("%s: redoing the work: %s", self.name, problem)
                return None
        return previous

    def previous_report(self) -> dict | None:
        """The last finished report of this job under --root, while one of the tables it wrote is still there."""
        if not self.args.root or not storage.exists(self.report_path()):
            return None
        previous = json.loads(storage.read_text(self.report_path()))
        if previous.get("status") != "ok" or not any(self.store.table_exists(table) for table in self.outputs):
            return None
        return previous

    def check_root_holds_the_same_data(self) -> None:
        """Refuse (without --force) to replace tables made from other sources; warn when another pair's are replaced."""
        previous = self.previous_report()
        if previous is None:
            return
        before, now = previous.get("args") or {}, self._public_args()
        changed = [name for name in self.source_arguments
                   if name in before and _as_paths(before[name]) != _as_paths(now.get(name))]
        where = f"{self.args.root} holds {', '.join(self.outputs)} made by {self.name} on {previous.get('started_at')}"
        if changed:
            was = " ".join(f"--{name.replace('_', '-')} {before[name]}" for name in changed)
            wants = " ".join(f"--{name.replace('_', '-')} {now.get(name)}" for name in changed)
            if not self.args.force:
                raise ConfigError(f"{self.name}: {where} from {was}; this run reads {wants}. Use another --root for "
                                  f"other data, or --force to replace them ({self.report_path()} says what made them)")
            self.log.warning("%s: --force: replacing %s from %s with this run's (%s)", self.name, where, was, wants)
        pair_before, pair_now = _pair_or_none(before.get("langs")), _pair_or_none(now.get("langs"))
        if "langs" in now and pair_before != pair_now:
            self.log.warning("%s: %s for the language pair %s; this run's pair is %s, so they are REPLACED by it; "
                             "use another --root to keep both", self.name, where,
                             ",".join(pair_before or ["(any)"]), ",".join(pair_now or ["(any)"]))


def _files_signature(value: Any) -> Any:
    """A digest of the sizes and modification times of the local files an argument names (None for others)."""
    if isinstance(value, list):
        return [_files_signature(item) for item in value]
    if not (isinstance(value, str) and storage.is_local(value) and os.path.exists(storage.local_path(value))):
        return None
    top = Path(storage.local_path(value))
    files = sorted(top.rglob("*")) if top.is_dir() else [top]
    stats = [(str(path.relative_to(top)) if top.is_dir() else "", path.stat().st_size, path.stat().st_mtime_ns)
             for path in files if path.is_file()]
    return hashlib.sha256(json.dumps(stats).encode()).hexdigest()[:16]


def _as_paths(value: Any) -> Any:
    """An argument's value with each existing local path made absolute, so `a/x` and `/cwd/a/x` compare equal."""
    if isinstance(value, list):
        return [_as_paths(item) for item in value]
    if isinstance(value, str) and storage.is_local(value) and os.path.exists(storage.local_path(value)):
        return os.path.abspath(storage.local_path(value))
    return value


def _pair_or_none(value: str | None) -> tuple[str, str] | None:
    """--langs as ISO 639-3 codes in order, for comparing runs; None when absent or not a pair."""
    try:
        return parse_lang_pair(value) if value else None
    except ValueError:
        return None
