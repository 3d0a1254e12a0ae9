"""The one base class of parascout jobs.

A job owns its arguments (argparse, merged with `--conf conf/x.yaml`), a SparkSession
(spark-submit's master, else local[*]), counters by reason, atomic Parquet output
under `--root`, and the `_reports/<job>.json` report. A concrete job subclasses
`Job`, extends `add_arguments` / `validate_arguments` (chaining to super) and
implements `process()`; it ends with `if __name__ == "__main__": MyJob().run()`.

Why one module: JobReport, the Job life cycle (arguments, inputs, versions, report) and the
training-job skeleton are the framework every job subclasses; the table versions live in udfs.common.tables.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import yaml

from parascout.udfs.common import storage, tables
from parascout.udfs.common.langs import LangPair, pair_label, parse_lang_pair, parse_lang_pairs
from parascout.udfs.common.progress import SparkProgress
from parascout.udfs.common.redaction import install_log_filter, redact, url_credentials
from parascout.udfs.common.stage_config import config_from_mapping

log = logging.getLogger("parascout")
#: the column (and partition folder) naming a row's language pair in the tables of per-pair jobs
PAIR_COLUMN = "lang_pair"


class ConfigError(ValueError):
    """Bad configuration: raised at start, with a message that says what to fix."""


class JobFailed(RuntimeError):
    """The job ran but its result must not be trusted (e.g. too much bad input)."""


class StoreUnreachable(JobFailed):
    """Every record the job asked a store for was lost in transport: the store, not the data, failed."""


class RootBusy(JobFailed):
    """Another job is writing the same dataset root (one writer per root)."""


class UnknownReason(JobFailed):
    """A status was counted that the modules emitting it declare neither bad nor filtered."""


class PairSkipped(Exception):
    """One language pair of the run cannot be processed (no lexicon, no pages of a language): its input is counted
    filtered as `pair_<reason>` and the other pairs go on."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


#: (root lock path, thread) pairs this process holds: a job a job runs (the demo's steps) shares its lock
_HELD_LOCKS: dict[tuple[str, int], dict] = {}  # (lock path, thread) -> its holder, shared with jobs run inside


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
        """Records this run asked a store for. Those bad for a reason in storage.TRANSPORT_FAILURES were lost to
        the store; the report keeps them apart from the records that are bad themselves."""
        self.data["store"] = {"records_sent": int(records_sent), "example_error": redact(example_error)}

    @property
    def lost_to_store(self) -> int:
        return sum(self.data["bad"].get(reason, 0) for reason in storage.TRANSPORT_FAILURES)

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


class Job:
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
        self._staged: dict[str, tuple[str, int]] = {}  # table -> (version written by this run, rows)
        self.lock_holder: dict = {}  # the root's writer lock as held (an s3:// lease marks itself `lost`)
        self.tables_read: dict[str, dict] = {}  # input table -> {"used", "choice", "version"}
        self.pairs: list[LangPair] = []  # --langs of a job that runs per language pair
        self.pair: LangPair | None = None  # the pair being processed: its tables go to lang_pair=<src>-<trg>/
        self._pair_writes: dict[str, list[str]] = {}  # pair label -> partition folders it wrote
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
    def table_path(self, table: str) -> str:
        return storage.join(self.args.root, table)

    def table_location(self, table: str) -> str | None:
        """Where `table`'s data is: this run's new version once written, else the current version (None: absent)."""
        if table in self._staged:
            return tables.staging_path(self.table_path(table), self._staged[table][0])
        return tables.table_location(self.table_path(table))

    def table_exists(self, table: str) -> bool:
        return self.table_location(table) is not None

    def read_table(self, table: str):
        """The table's data; while a pair is processed, of a table this run wrote per pair the pair's partition
        (inputs are read whole: each job picks its pair's rows by src_lang / trg_lang, in either direction)."""
        location = self.table_location(table)
        if location is None:
            raise ConfigError(f"{self.name}: table {table!r} not found at {self.table_path(table)}; "
                              "run the job that writes it first")
        if self.pair is None:
            return self.spark.read.parquet(location)
        label = pair_label(self.pair)
        partition = storage.join(location, f"{PAIR_COLUMN}={label}")
        if table in self._staged and storage.exists(partition):
            return self.spark.read.option("basePath", location).parquet(partition)
        return self.spark.read.parquet(location)

    def pair_rows(self, frame):
        """The rows of the pair being processed (either direction) of a table written per pair; others whole."""
        if self.pair is None or PAIR_COLUMN not in frame.columns:
            return frame
        from pyspark.sql import functions as F

        return frame.where(F.col(PAIR_COLUMN).isin(pair_label(self.pair), pair_label(self.pair[::-1])))

    def pairs_in_domain(self, pairs, by: str | None = None):
        """--in-domain-only (shortlist, replay-crawl, export-bitext): the pairs with a page in the domain by the
        texts table, and {'in_domain' | reason: pairs} (per value of the column `by`, when given); a texts table
        without the flag is a ConfigError."""
        from parascout.udfs.rank.domain_focus import pairs_in_domain

        try:
            return pairs_in_domain(pairs, self.read_table("texts"), by)
        except ValueError as error:
            raise ConfigError(str(error)) from error

    def write_table(self, df, table: str) -> int:
        """Write a DataFrame as a new version of `table` in the root's staging folder and return its row count.

        The job's later steps read the new version; readers elsewhere keep the current one until the job
        succeeds and `commit_outputs` moves it into the table folder (see parascout.udfs.common.tables). While a
        pair is processed the rows go to the version's `lang_pair=<src>-<trg>` partition, and every pair of the run
        shares the version; a frame with a `lang_pair` column written outside a pair is partitioned by it the same
        way."""
        if self.pair is not None and PAIR_COLUMN in df.columns:
            df = df.drop(PAIR_COLUMN)  # a pair's rows read from a per-pair input: the partition path says it
        columns = [*df.columns, PAIR_COLUMN] if self.pair is not None else df.columns
        for problem in tables.check_columns(table, columns):  # raises on a missing required column (tests: any)
            self.log.warning("%s", problem)
        table_dir = self.table_path(table)
        if self.pair is not None and table in self._staged:
            version, rows_before = self._staged[table]
        else:
            self._remove_stale_versions(table_dir)
            version, rows_before = tables.new_version(), 0
        location = tables.staging_path(table_dir, version)
        if self.pair is not None:
            location = storage.join(location, f"{PAIR_COLUMN}={pair_label(self.pair)}")
            self._pair_writes.setdefault(pair_label(self.pair), []).append(location)
        writer = df.write.mode("errorifexists")
        if self.pair is None and PAIR_COLUMN in df.columns:
            writer = writer.partitionBy(PAIR_COLUMN)  # every pair in one pass: the same layout as for_each_pair's
        writer.parquet(location)
        if self.pair is None and PAIR_COLUMN in df.columns and not self._has_partitions(location):
            # no rows: a partitioned write leaves no file to read the table's columns from
            self.spark.createDataFrame([], df.schema).write.mode("overwrite").parquet(location)
        rows = self.spark.read.parquet(location).count()
        self._staged[table] = (version, rows_before + rows)
        if self.report:
            self.report.output(table, rows_before + rows)
        self.log.info("wrote %s: %d rows -> %s", table, rows, location)
        return rows

    # ---- language pairs --------------------------------------------------------------
    def for_each_pair(self, work: Callable[[LangPair], None]) -> None:
        """Run `work` for each pair of --langs: its counts and metrics go to the report's by_pair, its tables to
        the pair's partitions; a pair that raises PairSkipped is a counted skip and the others go on."""
        done = []
        for pair in self.pairs:
            label = pair_label(pair)
            with self.report.pair_scope(label, single_pair=len(self.pairs) == 1):
                self.pair = pair
                try:
                    work(pair)
                    done.append(label)
                except PairSkipped as skip:
                    skipped = self.report.skip_pair(skip.reason)
                    self._remove_pair_writes(label)
                    self.log.warning("%s: pair %s skipped (%s); %d input rows counted filtered as pair_%s",
                                     self.name, label, skip, skipped, skip.reason)
                finally:
                    self.pair = None
        self.report.metric("lang_pairs", [pair_label(pair) for pair in self.pairs])
        if not done:
            raise JobFailed(f"{self.name}: every language pair was skipped: {self.report.data['metrics']['pairs_skipped']}")
        for table, (version, _) in self._staged.items():  # every pair's partitions are written: the version is
            marker = storage.join(tables.staging_path(self.table_path(table), version), "_SUCCESS")  # complete
            if not storage.exists(marker):
                storage.write_text(marker, "")

    def _has_partitions(self, location: str) -> bool:
        """Whether a partitioned write made any `lang_pair=` folder under `location`."""
        fs, folder = self._hadoop_fs(location), self._hadoop_path(location)
        return any(status.getPath().getName().startswith(f"{PAIR_COLUMN}=") for status in fs.listStatus(folder))

    def _remove_pair_writes(self, label: str) -> None:
        """A skipped pair's partitions, written before it was skipped (the table's rows count without them)."""
        for location in self._pair_writes.pop(label, []):
            for table, (version, rows) in list(self._staged.items()):
                if location.startswith(tables.staging_path(self.table_path(table), version) + "/"):
                    removed = self.spark.read.parquet(location).count()
                    self._staged[table] = (version, rows - removed)
                    self.report.output(table, rows - removed)
            self._delete(location)

    def commit_outputs(self) -> None:
        """Switch every table this run wrote to its new version: move it from the staging folder into the table
        folder, write the manifest, remove the version it replaced; nothing is switched unless every new version
        is still complete, and while this run still holds the root's writer lock."""
        if self.lock_holder.get("lost"):
            raise JobFailed(f"the writer lock on {self.args.root} was lost ({self.lock_holder['lost']}); "
                            "the tables keep their current versions")
        gone = [table for table, (version, _) in self._staged.items()
                if not tables.staged_complete(self.table_path(table), version)]
        if gone:
            raise JobFailed(f"the new versions of {gone} are gone before the switch (removed by another writer?); "
                            "the tables keep their current versions")
        for table, (version, rows) in list(self._staged.items()):
            table_dir = self.table_path(table)
            self._move(tables.staging_path(table_dir, version), tables.version_path(table_dir, version))
            self._delete(tables.staging_path(table_dir))
            tables.write_manifest(table_dir, version, rows=rows, job=self.name, run_id=self.report.data["run_id"])
            del self._staged[table]
            self._remove_versions(table_dir, keep=version, legacy_too=True)

    def discard_outputs(self) -> None:
        """A failed run: remove the versions it wrote (best effort; the next write removes what is left)."""
        for table, (version, _) in self._staged.items():
            table_dir = self.table_path(table)
            moved = [tables.version_path(table_dir, version)] if self._current_version(table_dir) != version else []
            try:
                for location in [tables.staging_path(table_dir, version), *moved]:  # moved: a switch cut short
                    self._delete(location)
            except Exception as error:  # noqa: BLE001 - the job's own error is the one to report
                self.log.warning("could not remove the unfinished %s version %s: %s", table, version, error)
        self._staged = {}

    def _move(self, source: str, target: str) -> None:
        """Rename a version folder into its table folder (a rename on local disks and HDFS, a copy on object
        stores); the table folder is made first where the table is new."""
        fs = self._hadoop_fs(target)
        fs.mkdirs(self._hadoop_path(target).getParent())
        if not fs.rename(self._hadoop_path(source), self._hadoop_path(target)):
            raise JobFailed(f"could not move the new version {source} to {target}; the table keeps its current "
                            "version")

    def _remove_stale_versions(self, table_dir: str) -> None:
        """Before a new version is written: the table folder's versions but the current one, and the table's
        staging folder (versions of failed or killed runs: the writer lock makes this run the only writer)."""
        self._remove_versions(table_dir, keep=self._current_version(table_dir))
        self._delete(tables.staging_path(table_dir))

    def _delete(self, location: str) -> None:
        """Remove a folder and everything under it (nothing to do when it is not there)."""
        self._hadoop_fs(location).delete(self._hadoop_path(location), True)

    @staticmethod
    def _current_version(table_dir: str) -> str | None:
        manifest = tables.read_manifest(table_dir)
        return manifest["version"] if manifest else None

    def _remove_versions(self, table_dir: str, keep: str | None, legacy_too: bool = False) -> None:
        """Delete the table folder's version folders but `keep`; with `legacy_too`, also files of a plain table
        that the manifest replaced (everything but the manifest)."""
        fs, folder = self._hadoop_fs(table_dir), self._hadoop_path(table_dir)
        if not fs.exists(folder):
            return
        for status in fs.listStatus(folder):
            name = status.getPath().getName()
            is_version = name.startswith(tables.VERSION_PREFIX)
            if name == tables.MANIFEST or (is_version and name == tables.VERSION_PREFIX + str(keep)):
                continue
            if is_version or legacy_too:
                fs.delete(status.getPath(), True)

    def _hadoop_path(self, path: str):
        return self.spark.sparkContext._jvm.org.apache.hadoop.fs.Path(storage.to_hadoop(path))

    def _hadoop_fs(self, path: str):
        return self._hadoop_path(path).getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration())

    def count_by(self, df, column: str) -> dict[str, int]:
        """Counts of a DataFrame by the values of a (small-cardinality) reason column."""
        return {str(row[column]): int(row["count"]) for row in df.groupBy(column).count().collect()}

    def run_pair_label(self, label):
        """Column: the run's label (--langs order) of the pair a stored `label` column names in either direction
        (eng-fra or fra-eng -> eng-fra); null for a pair not in the run."""
        from pyspark.sql import functions as F

        labels = {}
        for pair in self.pairs:
            labels[pair_label(pair[::-1])] = labels[pair_label(pair)] = pair_label(pair)
        return F.create_map(*[F.lit(value) for item in labels.items() for value in item])[label]

    def pair_languages(self, pairs: Iterable[LangPair] | None = None):
        """(lang, lang_pair, src_lang, trg_lang): each language of each pair (the run's by default), for a broadcast
        join on `lang` that gives a row once for every pair holding its language."""
        pairs = self.pairs if pairs is None else pairs
        return self.spark.createDataFrame([(lang, pair_label(pair), *pair) for pair in pairs for lang in pair],
                                          f"lang string, {PAIR_COLUMN} string, src_lang string, trg_lang string")

    @staticmethod
    def counts_by_pair(df, column: str | None = None, every_pair: Collection[str] = ()) -> dict:
        """Rows of a DataFrame of several language pairs per lang_pair ({label: n}), or per lang_pair and value of
        `column` ({label: {value: n}}), in one grouped action; the labels `every_pair` names are there without
        rows too."""
        counts: dict = {label: {} if column else 0 for label in every_pair}
        for row in df.groupBy(PAIR_COLUMN, *([column] if column else [])).count().collect():
            if column:
                counts.setdefault(row[PAIR_COLUMN], {})[str(row[column])] = int(row["count"])
            else:
                counts[row[PAIR_COLUMN]] = int(row["count"])
        return counts

    # ---- inputs ----------------------------------------------------------------------
    def resolve_inputs(self) -> None:
        """Decide which declared inputs this run reads (and their current versions); fails when one must be there."""
        for table in (*self.inputs, *self.optional_inputs):
            choice = getattr(self.args, f"use_{table}", "yes") if table in self.optional_inputs else "required"
            manifest = tables.read_manifest(self.table_path(table)) if choice != "no" else None
            present = manifest is not None or (choice != "no" and self.table_exists(table))
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
        skip = {"force", "log_level", "spark_conf", "wait_lock", "unlocked_root"}
        return {k: dataclasses.asdict(v) if dataclasses.is_dataclass(v) and not isinstance(v, type) else v
                for k, v in vars(self.args).items() if k not in skip}

    def already_done(self) -> dict | None:
        """The previous report when this exact run already finished and its outputs are still the ones it wrote."""
        if self.args.force or not self.args.root or not storage.exists(self.report_path()):
            return None
        previous = json.loads(storage.read_text(self.report_path()))
        if previous.get("status") != "ok" or previous.get("fingerprint") != self.arguments_fingerprint():
            return None
        if not all(storage.exists(self.table_path(table)) for table in self.unversioned_outputs):
            return None
        versioned = [table for table in self.outputs if table not in self.unversioned_outputs]
        written_by = [(tables.read_manifest(self.table_path(table)) or {}).get("run_id") for table in versioned]
        if any(run_id != previous.get("run_id") for run_id in written_by):
            return None  # an output is missing, or a later (or interrupted) run replaced it
        for table in versioned:
            problem = tables.table_problem(self.table_path(table))
            if problem:
                self.log.warning("%s: redoing the work: %s", self.name, problem)
                return None
        return previous

    def lock_path(self) -> str:
        """The root's writer lock."""
        return storage.join(self.args.root, "_locks", "writer.lock")

    @contextlib.contextmanager
    def writer_lock(self):
        """Hold ROOT/_locks/writer.lock while the job runs: a second writer on the root fails (RootBusy) or, with
        --wait-lock, waits. A job run by a job holding the lock in the same thread (the demo's steps) shares it.
        A root on a store without a lock primitive (gs://) is refused (storage.UnlockableRoot, a one-line error)
        unless --unlocked-root promises one writer at a time; it then runs unlocked, with a warning."""
        path = self.lock_path() if self.args.root else None
        key = (path, threading.get_ident())
        if path is None or key in _HELD_LOCKS:
            self.lock_holder = _HELD_LOCKS.get(key, {})
            yield
            return
        with contextlib.ExitStack() as stack:
            try:
                self.lock_holder = stack.enter_context(storage.exclusive_lock(
                    path, {"job": self.name}, wait_seconds=getattr(self.args, "wait_lock", 0.0),
                    unlocked_ok=getattr(self.args, "unlocked_root", False)))
            except storage.LockHeld as held:
                raise RootBusy(f"another job is writing {self.args.root} ({storage.describe_holder(held.holder)}); "
                               f"rerun when it ends, or pass --wait-lock to wait (lock: {path})") from None
            except storage.LockUnsupported as error:
                self.log.warning("%s: %s; run one job at a time on this root", self.name, error)
            _HELD_LOCKS[key] = self.lock_holder
            stack.callback(_HELD_LOCKS.pop, key, None)
            yield

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

    def previous_report(self) -> dict | None:
        """The last finished report of this job under --root, while one of the tables it wrote is still there."""
        if not self.args.root or not storage.exists(self.report_path()):
            return None
        previous = json.loads(storage.read_text(self.report_path()))
        if previous.get("status") != "ok" or not any(self.table_exists(table) for table in self.outputs):
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


class TrainingJob(Job):
    """train-url2lang and train-pairs: no Spark, --out doubles as the root, the shared training options.

    A subclass names its `task`, adds and checks its source options (`add_source_arguments`,
    `source_problems`), loads the examples counting every input row (`examples` -> frame and the
    source's metadata) and may add metrics of its own (`report_result`).
    """

    uses_spark = False
    root_required = False
    root_option = False  # --out is where the model directory and its report go
    task = ""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        from parascout.udfs.rank.url_models.training import add_training_arguments

        super().add_arguments(parser)
        self.add_source_arguments(parser)
        add_training_arguments(parser)

    def add_source_arguments(self, parser: argparse.ArgumentParser) -> None:
        raise NotImplementedError

    def lock_path(self) -> str:
        """Beside the model directory: it is replaced whole by a rename, which would take a lock inside with it."""
        parent, _, name = self.args.out.rstrip("/").rpartition("/")
        return storage.join(parent or ".", f".{name}.writer.lock")

    def source_problems(self, args: argparse.Namespace) -> list[str]:
        return []

    def validate_arguments(self, args: argparse.Namespace) -> None:
        from parascout.udfs.rank.url_models.training import check_training_arguments

        if not args.root:
            args.root = args.out
        super().validate_arguments(args)
        problems = check_training_arguments(args) + self.source_problems(args)
        if problems:
            raise ConfigError("; ".join(problems))

    def examples(self):
        """(training frame with a split column, metadata naming the source)."""
        raise NotImplementedError

    def count_input(self, what: str, counts: dict) -> None:
        """Report a loader's counts: input rows, 'bad:<reason>' and 'filtered:<reason>' skips, kept."""
        self.report.input(what, counts.pop("input", 0))
        skips = {key: value for key, value in counts.items() if ":" in key}
        declared = {kind: {key.split(":", 1)[1] for key in skips if key.startswith(f"{kind}:")}
                    for kind in ("bad", "filtered")}
        self.report.add_counts({key.split(":", 1)[1]: value for key, value in skips.items()},
                               bad_reasons=declared["bad"], filtered_reasons=declared["filtered"])
        self.report.kept(counts["kept"])

    def process(self) -> None:
        from parascout.udfs.rank.url_models.model_dir import summary_line, write_model_dir
        from parascout.udfs.rank.url_models.training import config_from_args, train_model

        frame, source = self.examples()
        result = train_model(self.task, frame, config_from_args(self.args), source)
        path = write_model_dir(result, self.args.out)
        print(summary_line(result, path))         # the per-class tables go to the model directory's report.txt
        for split in ("dev", "test"):
            self.report.metric(f"{split}_macro_f1", result.metrics[split]["macro"]["f1"])
        self.report_result(result)
        self.report.metric("model_dir", path)
        self.report.metric("model_version", result.metadata["model_version"])

    def report_result(self, result) -> None:
        """Metrics of the trained model beyond macro-F1 (a subclass's choice)."""


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


def _maybe_hub_id(value: str) -> bool:
    """`xlm-roberta-base` or `org/name`: what from_pretrained may fetch from a hub rather than read from disk."""
    return "://" not in value and not value.startswith(("/", ".", "~")) and value.count("/") <= 1 \
        and not os.path.exists(value)


def language_pairs_option(value: str | None) -> list[LangPair]:
    """`--langs en,is`, `en:fr,de` or `en-fr,de-fr` as ISO 639-3 pairs; [] when not given; a ConfigError that
    names the option."""
    if not value:
        return []
    try:
        return parse_lang_pairs(value)
    except ValueError as error:  # UnknownLanguage included
        raise ConfigError(f"--langs {value}: {error}") from error


def language_pair_option(value: str | None) -> tuple[str, str] | None:
    """`--langs en,is` as ISO 639-3 (eng, isl); None when not given; a ConfigError that names the option."""
    if not value:
        return None
    try:
        return parse_lang_pair(value)
    except ValueError as error:  # UnknownLanguage included
        raise ConfigError(f"--langs {value}: {error}") from error


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

