"""The one base class of parascout jobs.

A job owns its arguments (argparse, merged with `--conf conf/x.yaml`), a SparkSession
(spark-submit's master, else local[*]), counters by reason, atomic Parquet output
under `--root`, and the `_reports/<job>.json` report. A concrete job subclasses
`Job`, extends `add_arguments` / `validate_arguments` (chaining to super) and
implements `process()`; it ends with `if __name__ == "__main__": MyJob().run()`.

Job keeps the run's lifecycle; the rest lives beside it: the report in jobs.report, --conf and input checks in
jobs.arguments, Spark in jobs.spark_session, versioned tables in udfs.common.table_store (`self.store`), the input
tables a run reads in jobs.table_inputs, per-pair runs in jobs.language_pairs, the writer lock in jobs.writer_lock, a
run's identity in jobs.fingerprints, the pipeline's order from the declared inputs and outputs in jobs.pipeline.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import uuid
from typing import Any, ClassVar

from parascout.jobs import arguments
from parascout.jobs.errors import ConfigError, JobFailed, error_summary
from parascout.jobs.fingerprints import RunFingerprints
from parascout.jobs.language_pairs import LanguagePairs
from parascout.jobs.report import JobReport
from parascout.jobs.spark_session import run_properties, start_session
from parascout.jobs.table_inputs import TableInputs
from parascout.jobs.writer_lock import WriterLock
from parascout.udfs.common import storage
from parascout.udfs.common.langs import LangPair
from parascout.udfs.common.progress import SparkProgress
from parascout.udfs.common.redaction import install_log_filter
from parascout.udfs.common.table_store import SwitchFailed, TableMissing, TableStore


class Job(LanguagePairs, WriterLock, RunFingerprints, TableInputs):
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
    #: of those, the ones a later job writes: read on a second pass, no ordering constraint (jobs.pipeline)
    later_inputs: tuple[str, ...] = ()
    #: files other jobs are given by an argument of that name (models, indexes); path_artifacts: argument -> what
    #: it reads where the names differ (train-lexicon's --from-archive reads texts and scored_pairs)
    makes: tuple[str, ...] = ()
    path_artifacts: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: a fraction of bad input above which the job fails (None: never)
    default_max_bad_fraction: float | None = None
    #: a share of records lost in transport to a store above which the run warns (a rerun may recover them)
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
        parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                            help="how much the job logs")
        for table in self.optional_inputs:
            parser.add_argument(f"--use-{table.replace('_', '-')}", choices=["auto", "yes", "no"], default="auto",
                                help=f"read the {table} table: auto (when present), yes (fail without it) or no")
        arguments.add_knob_options(parser, self.stage_configs)

    def validate_arguments(self, args: argparse.Namespace) -> None:
        """Check arguments together; raise ConfigError with a message that says what to fix."""
        if self.root_required and not args.root:
            raise ConfigError(f"{self.name}: --root DIR is required (or `root:` in a --conf file)")
        if args.max_bad_fraction is not None and not 0 <= args.max_bad_fraction <= 1:
            raise ConfigError("--max-bad-fraction must be between 0 and 1")

    def build_parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog=f"parascout {self.name}", description=self.description)
        self.add_arguments(parser)
        return parser

    def parse_arguments(self, argv: list[str] | None) -> argparse.Namespace:
        """Parse argv; YAML from --conf supplies defaults, the command line wins."""
        parser = self.build_parser()
        first, _ = parser.parse_known_args(argv)
        conf = arguments.load_conf(first.conf)
        defaults, stage_configs = arguments.conf_defaults(conf, parser, self.name, dict(self.stage_configs))
        parser.set_defaults(**defaults)
        args = parser.parse_args(argv)
        arguments.set_stage_configs(args, self.stage_configs, stage_configs)
        self.conf = conf
        arguments.refuse_url_credentials(args)
        self.spark_conf = run_properties(conf, args.spark_conf)
        return args

    # ---- Spark -----------------------------------------------------------------------
    @property
    def spark(self):
        """The SparkSession (jobs.spark_session), started on first use."""
        if self._spark is None:
            self._spark = start_session(f"parascout-{self.name}", self.spark_conf)
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
        arguments.check_input_paths(self, self.args)  # after the arguments' own checks, before anything is written
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
            if self.uses_spark:  # started before process(): building a Column needs an active session; its
                try:  # Hadoop set up for the root before any work is done
                    self.store.spark  # noqa: B018
                except storage.HadoopStorageMissing as error:
                    raise ConfigError(f"{self.name}: {error}") from None
            with SparkProgress(self.name):  # a line every few seconds while Spark stages run
                self.process()
            self.report.check_balance()
            self._check_store()
            self.report.check_bad_fraction(self.args.max_bad_fraction)
            self.commit_outputs()
        except Exception as error:
            self.discard_outputs()
            self._write_report(self.report.finish("failed", error_summary(error)))
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
        warning = self.report.check_store(self.store_warning_fraction)
        if warning:
            self.log.warning("%s: %s", self.name, warning)

    def _write_report(self, data: dict) -> None:
        if self.args.root:
            storage.write_text(self.report_path(), json.dumps(data, indent=2, sort_keys=False, default=str))
