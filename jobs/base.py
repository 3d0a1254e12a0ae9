"""The one base class of parascout jobs.

A job owns its arguments (argparse, merged with `--conf conf/x.yaml`), a SparkSession
(spark-submit's master, else local[*]), counters by reason, atomic Parquet output
under `--root`, and the `_reports/<job>.json` report. A concrete job subclasses
`Job`, extends `add_arguments` / `validate_arguments` (chaining to super) and
implements `process()`; it ends with `if __name__ == "__main__": MyJob().run()`.

Job's other parts live beside it: the versioned tables in udfs.common.table_store (`self.store`), per-pair runs
in jobs.language_pairs, the root's writer lock in jobs.writer_lock, a run's identity in jobs.fingerprints.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import uuid
from collections.abc import Collection
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import yaml

from parascout.jobs.errors import ConfigError, JobFailed
from parascout.jobs.fingerprints import RunFingerprints
from parascout.jobs.language_pairs import LanguagePairs
from parascout.jobs.writer_lock import WriterLock
from parascout.udfs.common import range_reads, storage, tables
from parascout.udfs.common.langs import LangPair
from parascout.udfs.common.progress import SparkProgress
from parascout.udfs.common.redaction import install_log_filter, redact, url_credentials
from parascout.udfs.common.stage_config import config_from_mapping
from parascout.udfs.common.table_store import SwitchFailed, TableMissing, TableStore

log = logging.getLogger("parascout")


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


class Job(LanguagePairs, WriterLock, RunFingerprints):
    """Base class: argparse + conf merging, Spark session, counters, atomic outputs, report."""

    name: str = "job"
    description: str = ""
    uses_spark: bool = True
    root_required: bool = True
    #: False: the job has no --root option (it says where its output goes another way, as demo --out does)
    root_option: bool = True
    #: tables this job writes under --root; a rerun with the same arguments and inputs skips while they are its own
    outputs: tuple[str, ...] = ()
    #: arguments naming files or folders the job reads (checked at start), and model directories (or hub ids)
    input_paths: tuple[str, ...] = ()
    model_paths: tuple[str, ...] = ()
    #: arguments naming a folder or URL prefix the job reads files under (a prefix cannot be listed: not checked
    #: for existence, only for lying outside the root's tables)
    input_prefixes: tuple[str, ...] = ()
    #: values of those arguments that are not paths (replay-crawl's `--seeds home`, `--truth verified_pairs`)
    path_keywords: frozenset[str] = frozenset()
    #: outputs the job writes itself as plain folders (not versioned tables): a rerun checks they exist
    unversioned_outputs: tuple[str, ...] = ()
    #: tables under --root this job reads: the job does not start without them
    inputs: tuple[str, ...] = ()
    #: tables it reads when there: `--use-<table> auto|yes|no` (auto: when present), the choice in the report
    optional_inputs: tuple[str, ...] = ()
    #: a fraction of bad input above which the job fails (None: never)
    default_max_bad_fraction: float | None = None
    #: a share of the records sent to a store lost in transport above which the run warns (a flaky store
    #: loses a few; more means the data is incomplete for the store's sake, and a rerun may recover them)
    store_warning_fraction: float = 0.05
    #: key in the job's --conf section -> the frozen dataclass of the stage's knobs it sets (udfs.common.stage_config);
    #: the built config is `args.<key>` (defaults without the key), recorded in the report's args
    stage_configs: tuple[tuple[str, type], ...] = ()
    #: arguments naming the data the outputs are made from (scan-cdx's --cdx ...): a run into a root whose tables
    #: were made from other values is refused without --force, so one archive's tables never replace another's
    source_arguments: tuple[str, ...] = ()
    #: per drop reason, what to check when it dropped every record (the warning a run that kept nothing logs)
    drop_hints: ClassVar[dict[str, str]] = {}

    def __init__(self) -> None:
        self.args: argparse.Namespace | None = None
        self.conf: dict[str, Any] = {}
        self.spark_conf: dict[str, str] = {}
        self.report: JobReport | None = None
        self._spark = None
        self._store: TableStore | None = None
        self.lock_holder: dict = {}  # the root's writer lock as held (an s3:// lease marks itself `lost`)
        self.tables_read: dict[str, dict] = {}  # input table -> {"used", "choice", "version"}
        self.pairs: list[LangPair] = []  # --langs of a job that runs per language pair
        self.pair: LangPair | None = None  # the pair being processed: its tables go to lang_pair=<src>-<trg>/
        self.log = logging.getLogger(f"parascout.{self.name}")

    # ---- arguments -------------------------------------------------------------------
    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Declare arguments; subclasses extend and call super()."""
        if self.root_option:
            parser.add_argument("--root", required=False, help="dataset root: local dir, file://, s3:// or gs://")
        else:
            parser.set_defaults(root=None)
        parser.add_argument("--conf", action="append", default=[], metavar="YAML",
                            help="YAML config (repeatable, later wins): `spark:` properties, argument defaults, "
                                 "and a section named after the job")
        parser.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                            help="extra Spark property (repeatable)")
        parser.add_argument("--force", action="store_true",
                            help="rerun even when a finished report with the same arguments exists")
        if self.root_option:
            parser.add_argument("--wait-lock", type=float, nargs="?", const=float("inf"), default=0.0,
                                metavar="SECONDS", help="when another job is writing --root, wait for it (for "
                                                        "SECONDS, default: as long as it takes) instead of failing")
            parser.add_argument("--unlocked-root", action="store_true",
                                help="write to a root on a store parascout cannot lock (gs://), promising that "
                                     "one job at a time writes it")
        parser.add_argument("--max-bad-fraction", type=float, default=self.default_max_bad_fraction,
                            help="fail when bad records exceed this fraction of the input")
        parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
        for table in self.optional_inputs:
            parser.add_argument(f"--use-{table.replace('_', '-')}", choices=["auto", "yes", "no"], default="auto",
                                help=f"read the {table} table: auto (when present), yes (fail without it) or no")

    def validate_arguments(self, args: argparse.Namespace) -> None:
        """Check arguments together; raise ConfigError with a message that says what to fix."""
        if self.root_required and not args.root:
            raise ConfigError(f"{self.name}: --root DIR is required (or `root:` in a --conf file)")
        if args.max_bad_fraction is not None and not 0 <= args.max_bad_fraction <= 1:
            raise ConfigError("--max-bad-fraction must be between 0 and 1")

    def check_input_paths(self, args: argparse.Namespace) -> None:
        """Every file or directory named by `input_paths` / `model_paths` exists, and nothing the job reads
        (those and `input_prefixes`) lies inside a table folder of --root, which a write would replace, before
        anything is written (a model argument that may be a hub id, `org/name`, is left to the loader)."""
        missing, inside = [], []
        endpoint = getattr(args, "s3_endpoint", None)
        for option in (*self.input_paths, *self.model_paths, *self.input_prefixes):
            values = getattr(args, option, None)
            for value in values if isinstance(values, list) else [values]:
                if not value or value in self.path_keywords or (option in self.model_paths and _maybe_hub_id(value)):
                    continue
                flag = f"--{option.replace('_', '-')} {redact(value)}"
                table_folder = self.root_table_containing(value)
                if table_folder:
                    inside.append(f"{flag} lies inside {table_folder}")
                elif option not in self.input_prefixes and storage.scheme(value) not in storage.HTTP_SCHEMES \
                        and not storage.exists(value, endpoint):
                    missing.append(flag)
        if inside:
            raise ConfigError(f"{self.name}: {'; '.join(inside)}, a table folder of --root that jobs replace: "
                              "put inputs outside the root's tables")
        if missing:
            raise ConfigError(f"{self.name}: no such file or directory: {', '.join(missing)} (relative paths are "
                              f"relative to {os.getcwd()})")

    def root_table_containing(self, path: str) -> str | None:
        """The folder under --root holding `path` when it is one jobs write: this job's outputs, reports, locks,
        or any folder with a table manifest (None: outside them)."""
        if not getattr(self.args, "root", None):
            return None
        root, target = _comparable(self.args.root), _comparable(path)
        if not target.startswith(root.rstrip("/") + "/"):
            return None
        folder = target[len(root.rstrip("/")) + 1:].split("/", 1)[0]
        written = {*self.outputs, *self.unversioned_outputs, "_reports", "_locks", tables.STAGING}
        table_dir = storage.join(self.args.root, folder)
        if folder in written or storage.exists(storage.join(table_dir, tables.MANIFEST)):
            return table_dir
        return None

    def build_parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog=f"parascout {self.name}", description=self.description)
        self.add_arguments(parser)
        return parser

    def parse_arguments(self, argv: list[str] | None) -> argparse.Namespace:
        """Parse argv; YAML from --conf supplies defaults, the command line wins."""
        parser = self.build_parser()
        first, _ = parser.parse_known_args(argv)
        conf = self._load_conf(first.conf)
        known = {action.dest for action in parser._actions}
        defaults = {}
        for key, value in conf.items():
            if key in ("spark", "jobs") or isinstance(value, dict):
                continue
            dest = key.replace("-", "_")
            if dest in known:
                defaults[dest] = value
        section = conf.get(self.name) or {}
        config_classes, stage_configs = dict(self.stage_configs), {}
        for key, value in section.items():
            if key in config_classes:
                try:
                    stage_configs[key] = config_from_mapping(config_classes[key], value, f"--conf {self.name}.{key}")
                except (TypeError, ValueError) as error:
                    raise ConfigError(str(error)) from None
                continue
            dest = key.replace("-", "_")
            if dest not in known:
                raise ConfigError(f"--conf: unknown key {key!r} in section {self.name!r}; "
                                  f"known: {sorted([*(d for d in known if d != 'help'), *config_classes])}")
            defaults[dest] = value
        parser.set_defaults(**defaults)
        args = parser.parse_args(argv)
        for key, config_class in self.stage_configs:
            setattr(args, key.replace("-", "_"), stage_configs.get(key) or config_class())
        self.conf = conf
        refuse_url_credentials(args)
        self.spark_conf = {str(k): str(v) for k, v in (conf.get("spark") or {}).items()}
        for item in args.spark_conf:
            if "=" not in item:
                raise ConfigError(f"--spark-conf expects KEY=VALUE, got {item!r}")
            key, value = item.split("=", 1)
            self.spark_conf[key] = value
        return args

    @staticmethod
    def _load_conf(paths: list[str]) -> dict:
        merged: dict[str, Any] = {}
        for path in paths:
            path = resolve_conf_path(path)
            with open(path, encoding="utf-8") as handle:
                loaded = yaml.safe_load(handle) or {}
            if not isinstance(loaded, dict):
                raise ConfigError(f"--conf {path}: expected a mapping at the top level")
            for key, value in loaded.items():
                if isinstance(value, dict) and isinstance(merged.get(key), dict):
                    merged[key] = {**merged[key], **value}
                else:
                    merged[key] = value
        return merged

    # ---- Spark -----------------------------------------------------------------------
    @property
    def spark(self):
        """The SparkSession: spark-submit's master when set, else local[*]."""
        if self._spark is None:
            from pyspark import SparkConf
            from pyspark.sql import SparkSession

            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            builder = SparkSession.builder.appName(f"parascout-{self.name}")
            properties = dict(self.spark_conf)
            if not SparkConf().contains("spark.master"):
                builder = builder.master("local[*]")
                properties = {**local_spark_defaults(), **properties}
            for key, value in properties.items():
                builder = builder.config(key, value)
            self._spark = builder.getOrCreate()
            self._spark.sparkContext.setLogLevel("WARN")
        return self._spark

    def use_spark(self, session) -> Job:
        """Run inside an existing session (tests, notebooks, the demo pipeline)."""
        self._spark = session
        return self

    # ---- tables ----------------------------------------------------------------------
    @property
    def store(self) -> TableStore:
        """The versioned tables under --root (made on first use, once the arguments are parsed)."""
        if self._store is None:
            self._store = TableStore(self.args.root, lambda: self.spark, self.log)
        return self._store

    def table_path(self, table: str) -> str:
        return self.store.table_path(table)

    def read_table(self, table: str):
        """The table's data; while a pair is processed, of a table this run wrote per pair the pair's partition
        (inputs are read whole: each job picks its pair's rows by src_lang / trg_lang, in either direction)."""
        try:
            return self.store.read_table(table, self.pair_partition)
        except TableMissing as missing:
            raise ConfigError(f"{self.name}: table {table!r} not found at {missing.path}; "
                              "run the job that writes it first") from None

    def write_table(self, df, table: str) -> int:
        """Write a DataFrame as a new version of `table` (the store's write_table; while a pair is processed, to
        the pair's partition) and return its row count; the report counts the version's rows."""
        rows = self.store.write_table(df, table, self.pair_partition)
        if self.report:
            self.report.output(table, self.store.rows_written(table))
        return rows

    def commit_outputs(self) -> None:
        """Switch every table this run wrote to its new version (the store's commit), while this run still holds
        the root's writer lock."""
        if self.lock_holder.get("lost"):
            raise JobFailed(f"the writer lock on {self.args.root} was lost ({self.lock_holder['lost']}); "
                            "the tables keep their current versions")
        try:
            self.store.commit(job=self.name, run_id=self.report.data["run_id"])
        except SwitchFailed as error:
            raise JobFailed(str(error)) from None

    def discard_outputs(self) -> None:
        """A failed run: remove the versions it wrote (best effort; the next write removes what is left)."""
        self.store.discard()

    def count_by(self, df, column: str) -> dict[str, int]:
        """Counts of a DataFrame by the values of a (small-cardinality) reason column."""
        return {str(row[column]): int(row["count"]) for row in df.groupBy(column).count().collect()}

    # ---- inputs ----------------------------------------------------------------------
    def resolve_inputs(self) -> None:
        """Decide which declared inputs this run reads (and their current versions); fails when one must be there."""
        for table in (*self.inputs, *self.optional_inputs):
            choice = getattr(self.args, f"use_{table}", "yes") if table in self.optional_inputs else "required"
            manifest = tables.read_manifest(self.table_path(table)) if choice != "no" else None
            present = manifest is not None or (choice != "no" and self.store.table_exists(table))
            if choice in ("yes", "required") and not present:
                flag = "" if choice == "required" else f" (--use-{table.replace('_', '-')} yes)"
                raise ConfigError(f"{self.name}: table {table!r} not found at {self.table_path(table)}{flag}; "
                                  "run the job that writes it first")
            self.tables_read[table] = {"used": present, "choice": choice,
                                       "version": manifest["version"] if manifest else None}

    def uses(self, table: str) -> bool:
        """Whether this run reads the declared input `table` (resolve_inputs decided)."""
        if table not in self.tables_read:
            raise KeyError(f"{self.name}: {table!r} is not a declared input (inputs / optional_inputs)")
        return self.tables_read[table]["used"]

    # ---- running ---------------------------------------------------------------------
    def process(self) -> None:
        """Do the work: read inputs, write outputs, fill self.report."""
        raise NotImplementedError

    def report_path(self) -> str:
        return storage.join(self.args.root, "_reports", f"{self.name}.json")

    def run(self, argv: list[str] | None = None) -> dict:
        """Parse arguments, run the job, switch its outputs in and write the report; returns the report."""
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                            stream=sys.stderr)
        self.args = self.parse_arguments(argv)
        logging.getLogger("parascout").setLevel(self.args.log_level)
        install_log_filter()
        self.validate_arguments(self.args)
        self.check_input_paths(self.args)  # after the arguments' own checks, before anything is written
        with self.writer_lock():
            return self._run_locked()

    def _run_locked(self) -> dict:
        """The run proper, while this job is the root's one writer."""
        self.resolve_inputs()
        previous = self.already_done()
        if previous:
            self.log.info("%s already done with these arguments (%s); --force reruns it",
                          self.name, self.report_path())
            previous["skipped_rerun"] = True
            return previous
        self.check_root_holds_the_same_data()
        self.report = JobReport(self.name, self._public_args(), self.conf)
        self.report.data["run_id"] = uuid.uuid4().hex
        self.report.data["fingerprint"] = self.arguments_fingerprint()
        self.report.data["tables_read"] = self.tables_read
        try:
            if self.uses_spark:
                self.spark  # noqa: B018 - started before process(): building a Column needs an active session
            with SparkProgress(self.name):  # a line every few seconds while Spark stages run
                self.process()
            self.report.check_balance()
            self._check_store()
            self._check_bad_fraction()
            self.commit_outputs()
        except Exception as error:
            self.discard_outputs()
            self._write_report(self.report.finish("failed", f"{type(error).__name__}: {error}"))
            raise
        data = self.report.finish("ok")
        self._write_report(data)
        self.warn_if_nothing_kept(data)
        result = self.result_line()
        self.log.info("%s done in %.1fs: %s%s", self.name, data["seconds"], self.outcome_line(data),
                      f"; {result}" if result else "")
        return data

    def outcome_line(self, data: dict) -> str:
        """What the closing log line says the run did (a job whose counts mean something else overrides it)."""
        written = ", ".join(f"{table} {rows:,}" for table, rows in (data.get("outputs") or {}).items())
        return (f"kept {data['kept']}, filtered {self.report.total_filtered}, bad {self.report.total_bad}"
                + (f"; wrote {written}" if written else ""))

    def result_line(self) -> str:
        """The run's result in words for the closing log line (shortlist: its top sites); '' adds nothing."""
        return ""

    def warn_if_nothing_kept(self, data: dict) -> None:
        """A WARNING with the likeliest reason when the run kept nothing: a silent empty table costs an hour later."""
        total = self.report.primary_count
        if data.get("kept") or total is None:
            return
        if not total:
            self.log.warning("%s kept nothing: it read no %s; check that its inputs hold data", self.name,
                             str(data.get("primary_input") or "records").replace("_", " "))
            return
        dropped = {**data.get("filtered", {}), **data.get("bad", {})}
        reason, count = max(dropped.items(), key=lambda item: item[1]) if dropped else ("unknown", 0)
        hint = self.drop_hints.get(reason, "see the counts by reason")
        self.log.warning("%s kept 0 of %s %s: %s dropped as %s; %s (%s)", self.name, f"{total:,}",
                         str(data.get("primary_input")).replace("_", " "), f"{count:,}", reason, hint,
                         self.report_path())

    def _check_store(self) -> None:
        """Fail when every record sent to a store was lost in transport; warn when a high share was."""
        store, lost = self.report.data.get("store"), self.report.lost_to_store
        if not store or not lost:
            return
        sent = store["records_sent"]
        example = f" (e.g. {store['example_error']})" if store.get("example_error") else ""
        if lost >= sent:
            raise StoreUnreachable(f"the store is unreachable: all {sent} records asked for were lost in transport"
                                   f"{example}; check the prefix, the endpoint and credentials, then rerun")
        if lost / sent > self.store_warning_fraction:
            warning = (f"{lost} of {sent} records ({lost / sent:.1%}) were lost to the store in transport{example}; "
                       "a rerun fetches them again")
            self.log.warning("%s: %s", self.name, warning)
            self.report.data.setdefault("warnings", []).append(warning)

    def _check_bad_fraction(self) -> None:
        limit, total = self.args.max_bad_fraction, self.report.primary_count
        if limit is None or not total:
            return
        fraction = self.report.total_bad / total
        if fraction > limit:
            raise JobFailed(f"{self.report.total_bad} of {total} input records were bad ({fraction:.1%}), "
                            f"over --max-bad-fraction {limit:.1%}: {self.report.data['bad']}")

    def _write_report(self, data: dict) -> None:
        if self.args.root:
            storage.write_text(self.report_path(), json.dumps(data, indent=2, sort_keys=False, default=str))


def refuse_url_credentials(args: argparse.Namespace) -> None:
    """ConfigError for an argument holding a URL with credentials: they would reach reports, logs and data."""
    for dest, values in vars(args).items():
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, str) and url_credentials(value):
                raise ConfigError(
                    f"--{dest.replace('_', '-')} {redact(value)}: credentials in a URL are refused (they would be "
                    "written to reports, logs and tables); pass them through the environment (AWS_ACCESS_KEY_ID / "
                    "AWS_SECRET_ACCESS_KEY), an AWS profile (AWS_PROFILE) or a --conf file's spark: section "
                    "(spark.hadoop.fs.s3a.access.key / secret.key)")


def _comparable(path: str) -> str:
    """A path in one spelling for prefix comparison: local paths absolute with symlinks resolved, s3a/s3n as s3."""
    if storage.is_local(path):
        return os.path.realpath(storage.local_path(path))
    kind = storage.scheme(path)
    return ("s3" + path[len(kind):] if kind in storage.S3_SCHEMES else path).rstrip("/")


def _maybe_hub_id(value: str) -> bool:
    """`xlm-roberta-base` or `org/name`: what from_pretrained may fetch from a hub rather than read from disk."""
    return "://" not in value and not value.startswith(("/", ".", "~")) and value.count("/") <= 1 \
        and not os.path.exists(value)




def local_spark_defaults() -> dict[str, str]:
    """Spark properties for local[*] runs (a laptop, the demo): few shuffle partitions, UI off.

    The console progress bar is shown on a terminal only; logs get the jobs' own progress lines.
    parascout's Java UDFs go in spark.jars where `make jar` built them (else handles use regexp_replace).
    The driver, which runs the tasks here, uses the throughput collector: G1's concurrent threads compete
    with 2-4 task threads (scan-cdx 1.14x faster on 2 cores, benchmarks/bench_scan_cdx.py).
    """
    from parascout.udfs.common.jvm import jvm_jar_path

    defaults = {
        "spark.sql.shuffle.partitions": str(max(4, 2 * (os.cpu_count() or 2))),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "true" if sys.stderr.isatty() else "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.memory": "4g",
        "spark.driver.extraJavaOptions": "-XX:+UseParallelGC",
    }
    return {**defaults, "spark.jars": jvm_jar_path()} if jvm_jar_path() else defaults


def resolve_conf_path(path: str) -> str:
    """A --conf path as given, else the same file in the packaged conf/ (a cluster node has no checkout)."""
    if os.path.exists(path):
        return path
    packaged = resources.files("parascout.conf") / Path(path).name
    if packaged.exists():
        return str(packaged)
    raise ConfigError(f"--conf {path}: no such file (nor {packaged})")


def spark_properties(path: str) -> str:
    """The `spark:` section of a conf YAML as a spark-submit --properties-file text."""
    with open(resolve_conf_path(path), encoding="utf-8") as handle:
        conf = yaml.safe_load(handle) or {}
    return "".join(f"{key} {value}\n" for key, value in (conf.get("spark") or {}).items())

