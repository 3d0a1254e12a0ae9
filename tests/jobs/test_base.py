import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from parascout.jobs.arguments import _maybe_hub_id, check_input_paths, root_table_containing
from parascout.jobs.base import Job
from parascout.jobs.cli import discover, main
from parascout.jobs.errors import ConfigError, JobFailed, error_summary
from parascout.jobs.language_pairs import PairSkipped, language_pairs_option
from parascout.jobs.report import JobReport, UnknownReason
from parascout.jobs.writer_lock import RootBusy
from parascout.udfs.common import locks, table_layout, tables
from parascout.udfs.common.redaction import redact
from tests.conftest import run_job

NUMBERS = (("id*", "bigint", "a number"), ("reason*", "string", "why it was kept or dropped"))
for test_table in (tables.Table("numbers", "count-test", "kept numbers", tables.columns_from(*NUMBERS)),
                   tables.Table("extras", "extras-test", "more numbers", tables.columns_from(*NUMBERS)),
                   tables.Table("sums", "sum-test", "their sum", tables.columns_from(("sum(id)*", "bigint", "the sum"))),
                   tables.Table("pair_numbers", "pair-test", "numbers per pair",
                                (*tables.columns_from(*NUMBERS), tables.LANG_PAIR))):
    tables.register(test_table)


class CountJob(Job):
    name = "count-test"
    description = "counts a range, dropping odd numbers"
    outputs = ("numbers",)
    default_max_bad_fraction = 0.5

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--n", type=int, default=10)
        parser.add_argument("--bad-every", type=int, default=0)
        parser.add_argument("--fail-after-write", action="store_true")
        parser.add_argument("--lose", type=int, default=0, help="count this many fewer records than were read")
        parser.add_argument("--endpoint", help="a URL that may carry credentials")
        parser.add_argument("--lose-version", action="store_true",
                            help="remove the new version before the switch, as a second writer's cleanup did")

    def process(self):
        from pyspark.sql import functions as F

        df = self.spark.range(self.args.n).withColumn(
            "reason",
            F.when((F.lit(self.args.bad_every) > 0) & (F.col("id") % F.lit(max(self.args.bad_every, 1)) == 0), "bad_x")
            .when(F.col("id") % 2 == 1, "odd").otherwise("ok"))
        self.report.input("numbers", self.args.n + self.args.lose)
        self.report.add_counts(self.count_by(df, "reason"), bad_reasons={"bad_x"}, filtered_reasons={"odd"})
        self.write_table(df.where("reason = 'ok'"), self.outputs[0])
        if self.args.fail_after_write:
            raise RuntimeError("killed after writing")
        if self.args.lose_version:
            shutil.rmtree(table_layout.staging_path(self.table_path("numbers"), self.store.staged["numbers"][0]))


def test_report_balances_and_is_written(spark, tmp_path):
    report = run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "10"])
    assert report["status"] == "ok" and report["balanced"]
    assert report["kept"] == 5 and report["filtered"] == {"odd": 5}
    assert report["outputs"]["numbers"] == 5
    on_disk = json.loads((tmp_path / "_reports" / "count-test.json").read_text())
    assert on_disk["inputs"] == {"numbers": 10}
    manifest = json.loads((tmp_path / "numbers" / "_manifest.json").read_text())
    assert manifest["rows"] == 5 and manifest["run_id"] == report["run_id"]
    # one version folder of plain Parquet: readable by Spark (and pandas) as a folder, or at its location
    assert [p.name for p in (tmp_path / "numbers").iterdir() if p.is_dir()] == [f"version={manifest['version']}"]
    assert spark.read.parquet(str(tmp_path / "numbers")).count() == 5
    assert spark.read.parquet(table_layout.table_location(str(tmp_path / "numbers"))).count() == 5


def numbers_of(spark, root) -> list[int]:
    return sorted(row.id for row in spark.read.parquet(table_layout.table_location(str(root / "numbers"))).collect())


def test_interrupted_switch_keeps_the_old_version_and_the_rerun_redoes_the_work(spark, tmp_path, monkeypatch):
    first = run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "4"])
    assert numbers_of(spark, tmp_path) == [0, 2]

    def interrupted(*args, **kwargs):
        raise OSError("killed during the switch")

    monkeypatch.setattr(table_layout, "write_manifest", interrupted)
    with pytest.raises(OSError, match="killed"):
        run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "8"])
    monkeypatch.undo()
    assert numbers_of(spark, tmp_path) == [0, 2]  # the old version, whole
    assert json.loads((tmp_path / "numbers" / "_manifest.json").read_text())["run_id"] == first["run_id"]
    failed = json.loads((tmp_path / "_reports" / "count-test.json").read_text())
    assert failed["status"] == "failed" and "killed during the switch" in failed["error"]
    assert len([p for p in (tmp_path / "numbers").iterdir() if p.is_dir()]) == 1  # the new version was removed

    again = run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "8"])
    assert "skipped_rerun" not in again and again["outputs"]["numbers"] == 4
    assert numbers_of(spark, tmp_path) == [0, 2, 4, 6]


def test_a_failed_job_leaves_no_new_version_and_stale_versions_are_removed(spark, tmp_path):
    run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "4"])
    with pytest.raises(RuntimeError, match="killed after writing"):
        run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "8", "--fail-after-write"])
    assert numbers_of(spark, tmp_path) == [0, 2]
    stale = tmp_path / "numbers" / "version=v20000101T000000-deadbeef"  # as a killed run leaves it
    stale.mkdir()
    (stale / "part-00000.parquet").write_bytes(b"half")
    report = run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "8"])
    assert report["status"] == "ok" and numbers_of(spark, tmp_path) == [0, 2, 4, 6]
    assert not stale.exists()


def test_a_table_folder_read_the_obvious_way_holds_the_current_rows_once(spark, tmp_path, monkeypatch):
    """While a rewrite of the table is in flight (here: killed after writing, its version left as kill -9 leaves
    it), DuckDB, pandas, pyarrow and Spark reading the table folder as docs/tables.md shows count its rows once."""
    import duckdb
    import pandas
    import pyarrow.parquet

    run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "10"])
    monkeypatch.setattr(CountJob, "discard_outputs", lambda self: None)  # killed: nothing cleans up
    with pytest.raises(RuntimeError, match="killed after writing"):
        run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "40", "--fail-after-write"])
    monkeypatch.undo()
    staged = list((tmp_path / table_layout.STAGING / "numbers").glob("version=*/*.parquet"))
    assert staged  # a second version is there, outside the table folder
    table = str(tmp_path / "numbers")
    counts = {}
    for tool, language, template in table_layout.READ_EXAMPLES:
        code = template.format(table=table)
        if language == "sql":
            counts[tool] = len(duckdb.sql(code).df())
        else:
            frame = eval(code, {"pandas": pandas, "pyarrow": pyarrow, "spark": spark})  # the docs' line, run as written
            counts[tool] = frame.count() if tool == "Spark" else len(frame)
    assert counts == {"DuckDB": 5, "pandas": 5, "pyarrow": 5, "Spark": 5}
    report = run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "40"])  # the next write clears the stale one
    assert report["status"] == "ok" and not (tmp_path / table_layout.STAGING / "numbers").exists()
    assert len(pandas.read_parquet(table)) == 20


def test_a_job_that_lost_its_writer_lock_switches_nothing(spark, tmp_path):
    """An s3:// lease that expired and was taken over marks the holder lost (tests/common/test_storage.py); the job then
    fails before its switch and the tables keep the version the new holder may be replacing."""
    run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "4"])

    class LostLock(CountJob):
        def process(self) -> None:
            super().process()
            self.lock_holder["lost"] = "taken over"

    with pytest.raises(JobFailed, match="writer lock .* was lost"):
        run_job(LostLock, spark, ["--root", str(tmp_path), "--n", "8"])
    assert numbers_of(spark, tmp_path) == [0, 2]


def test_rerun_with_same_arguments_is_skipped(spark, tmp_path):
    run_job(CountJob, spark, ["--root", str(tmp_path)])
    again = run_job(CountJob, spark, ["--root", str(tmp_path)])
    assert again.get("skipped_rerun") is True
    forced = run_job(CountJob, spark, ["--root", str(tmp_path), "--force"])
    assert "skipped_rerun" not in forced


def test_conf_yaml_sets_defaults_and_cli_wins(spark, tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("spark:\n  spark.sql.shuffle.partitions: '3'\ncount-test:\n  n: 4\n")
    report = run_job(CountJob, spark, ["--root", str(tmp_path / "a"), "--conf", str(conf)])
    assert report["inputs"]["numbers"] == 4
    report = run_job(CountJob, spark, ["--root", str(tmp_path / "b"), "--conf", str(conf), "--n", "6"])
    assert report["inputs"]["numbers"] == 6


def test_bad_conf_fails_at_start(tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("count-test:\n  no_such_option: 1\n")
    with pytest.raises(ConfigError, match="no_such_option"):
        CountJob().run(["--root", str(tmp_path), "--conf", str(conf)])
    with pytest.raises(ConfigError, match="--root"):
        CountJob().run([])


def test_too_much_bad_input_fails_with_a_report(spark, tmp_path):
    with pytest.raises(JobFailed, match="max-bad-fraction"):
        run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "10", "--bad-every", "1"])
    report = json.loads((tmp_path / "_reports" / "count-test.json").read_text())
    assert report["status"] == "failed" and report["bad"] == {"bad_x": 10}
    assert table_layout.table_location(str(tmp_path / "numbers")) is None  # nothing readable from a failed run


def test_cli_lists_jobs(capsys):
    assert main(["--help"]) == 0
    assert "usage: parascout" in capsys.readouterr().out
    assert main(["no-such-job"]) == 2
    assert all(cls.description for cls in discover().values())


def test_a_report_that_does_not_balance_fails_the_job(spark, tmp_path, capsys):
    with pytest.raises(JobFailed, match="does not balance: 12 numbers in, 10 accounted"):
        run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "10", "--lose", "2"])
    report = json.loads((tmp_path / "_reports" / "count-test.json").read_text())
    assert report["status"] == "failed" and report["balanced"] is False and report["accounted"] == 10
    assert table_layout.table_location(str(tmp_path / "numbers")) is None


def test_reports_redact_credentials(spark, tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("spark:\n  spark.hadoop.fs.s3a.secret.key: SECRET1\n  spark.hadoop.fs.s3a.access.key: AKIA1\n"
                    "  spark.sql.shuffle.partitions: '3'\nstorage:\n  nested: {db_password: SECRET2, api_token: SECRET3}\n")
    run_job(CountJob, spark, ["--root", str(tmp_path), "--conf", str(conf), "--n", "2"])
    text = (tmp_path / "_reports" / "count-test.json").read_text()
    assert not any(secret in text for secret in ("SECRET1", "AKIA1", "SECRET2", "SECRET3"))
    report = json.loads(text)
    assert report["conf"]["spark"] == {"spark.hadoop.fs.s3a.secret.key": "***",
                                       "spark.hadoop.fs.s3a.access.key": "***", "spark.sql.shuffle.partitions": "3"}


@pytest.mark.parametrize("url", ["https://user:SECRET4@minio.local:9000/bucket", "s3://AKIAKEY:SECRET4@bucket/x",
                                 "s3a://SECRET4@bucket/x"])
def test_credentials_in_url_arguments_are_refused_at_start_with_how_to_pass_them(tmp_path, url):
    with pytest.raises(ConfigError) as raised:
        CountJob().run(["--root", str(tmp_path), "--endpoint", url])
    message = str(raised.value)
    assert "SECRET4" not in message and "credentials in a URL are refused" in message
    assert "AWS_PROFILE" in message and "--conf" in message and "\n" not in message
    assert not (tmp_path / "_reports").exists()


def test_key_names_and_scheme_less_userinfo_are_redacted():
    secrets = {"fs.azure.account.key.acct.blob.core.windows.net": "S1", "private.key": "S2", "api_key": "S3",
               "apikey": "S4", "sas_key": "S5", "Authorization": "S6"}
    assert set(redact(secrets).values()) == {"***"}
    assert redact({"partitions": 4, "sort": "host"}) == {"partitions": 4, "sort": "host"}
    message = 'An error occurred (InvalidBucketName): The specified bucket is not valid: "AKIAKEY:S7@bucket/a.warc.gz"'
    assert "S7" not in redact(message) and "***@bucket/a.warc.gz" in redact(message)
    assert redact("at 10:30 user x@y.org wrote a:b") == "at 10:30 user x@y.org wrote a:b"


def test_log_records_are_redacted(caplog):
    import logging

    from parascout.udfs.common.redaction import install_log_filter

    install_log_filter()  # on the root logger's handlers, caplog's among them
    logging.getLogger("parascout.test").warning("reading %s", "s3://AKIAKEY:S8@bucket/x and KEY:S9@bucket/y")
    assert "S8" not in caplog.text and "S9" not in caplog.text and "s3://***@bucket/x" in caplog.text


def test_redact_walks_any_nesting():
    assert redact({"a": [{"Credentials": {"x": 1}}, "s3://k:s@b/p", ("http://u@h/",)], "token": None}) == {
        "a": [{"Credentials": "***"}, "s3://***@b/p", ["http://***@h/"]], "token": None}
    assert redact("see https://example.org/a@b and mailto:x@y") == "see https://example.org/a@b and mailto:x@y"


class ExtrasJob(CountJob):
    name = "extras-test"
    outputs = ("extras",)


class SumJob(Job):
    name = "sum-test"
    description = "sums the numbers, and the extras when there"
    outputs = ("sums",)
    inputs = ("numbers",)
    optional_inputs = ("extras",)

    def process(self):
        frame = self.read_table("numbers").select("id")
        if self.uses("extras"):
            frame = frame.unionByName(self.read_table("extras").select("id"))
        rows = frame.count()
        self.report.input("numbers", rows)
        self.report.kept(rows)
        self.write_table(frame.groupBy().sum("id"), "sums")


def total_of(spark, root) -> int:
    return spark.read.parquet(table_layout.table_location(str(root / "sums"))).first()[0]


def test_inputs_are_declared_and_a_changed_input_is_not_already_done(spark, tmp_path):
    root = ["--root", str(tmp_path)]
    with pytest.raises(ConfigError, match="table 'numbers' not found"):
        SumJob().run(root)
    run_job(CountJob, spark, [*root, "--n", "4"])  # 0, 2
    first = run_job(SumJob, spark, root)
    assert total_of(spark, tmp_path) == 2 and first["tables_read"]["extras"] == {
        "used": False, "choice": "auto", "version": None}
    assert first["tables_read"]["numbers"]["used"] and first["tables_read"]["numbers"]["choice"] == "required"
    assert run_job(SumJob, spark, root).get("skipped_rerun") is True

    run_job(CountJob, spark, [*root, "--n", "8"])  # numbers changed: 0, 2, 4, 6
    again = run_job(SumJob, spark, root)
    assert "skipped_rerun" not in again and total_of(spark, tmp_path) == 12

    run_job(ExtrasJob, spark, [*root, "--n", "6"])  # extras appeared: 0, 2, 4
    with_extras = run_job(SumJob, spark, root)
    assert "skipped_rerun" not in with_extras and total_of(spark, tmp_path) == 18
    assert with_extras["tables_read"]["extras"]["used"] is True
    assert with_extras["tables_read"]["extras"]["version"] == json.loads(
        (tmp_path / "extras" / "_manifest.json").read_text())["version"]
    without = run_job(SumJob, spark, [*root, "--use-extras", "no"])
    assert without["tables_read"]["extras"]["used"] is False and total_of(spark, tmp_path) == 12


def test_an_optional_input_demanded_with_yes_must_be_there(tmp_path):
    (tmp_path / "numbers").mkdir()
    (tmp_path / "numbers" / "_SUCCESS").write_text("")  # a table written by another tool: read as it is
    with pytest.raises(ConfigError, match=r"table 'extras' not found.*--use-extras yes"):
        SumJob().run(["--root", str(tmp_path), "--use-extras", "yes"])


def test_add_counts_refuses_a_reason_declared_neither_bad_nor_filtered():
    report = JobReport("t", {}, {})
    with pytest.raises(UnknownReason, match="new_failure"):
        report.add_counts({"ok": 1, "new_failure": 2}, bad_reasons={"bad_x"}, filtered_reasons={"odd"})
    with pytest.raises(UnknownReason, match="odd"):
        report.add_counts({"ok": 1}, bad_reasons={"odd"}, filtered_reasons={"odd"})
    report.add_counts({"ok": 1, "odd": 2, "bad_x": 3}, bad_reasons={"bad_x"}, filtered_reasons={"odd"})
    assert (report.data["kept"], report.data["filtered"], report.data["bad"]) == (1, {"odd": 2}, {"bad_x": 3})


def test_cli_prints_where_a_table_s_current_version_is(tmp_path, capsys):
    table = tmp_path / "urls"
    assert main(["table-location", str(table)]) == 1
    (table / "version=v1").mkdir(parents=True)
    (table / "version=v1" / "_SUCCESS").touch()
    table_layout.write_manifest(str(table), "v1", rows=0)
    assert main(["table-location", str(table)]) == 0
    assert capsys.readouterr().out.strip() == str(table / "version=v1")


def test_missing_input_paths_fail_at_start_and_write_nothing(tmp_path, capsys):
    out = tmp_path / "models" / "pairs"
    assert main(["train-pairs", "--positives", str(tmp_path / "no" / "train.pairs"), "--out", str(out)]) == 2
    message = capsys.readouterr().err
    assert "no such file or directory: --positives" in message and "train.pairs" in message
    assert not (tmp_path / "models").exists()  # no report, no partial output directory


def test_model_arguments_that_may_be_hub_ids_are_left_to_the_loader(tmp_path):
    assert _maybe_hub_id("xlm-roberta-base") and _maybe_hub_id("org/model")
    assert not _maybe_hub_id("./models/pairs") and not _maybe_hub_id("s3://bucket/models/pairs")
    assert not _maybe_hub_id(str(tmp_path / "models" / "pairs"))


def writer_lock_of(root) -> str:
    return str(root / "_locks" / "writer.lock")


def test_a_second_writer_on_a_root_fails_with_one_line_and_writes_nothing(spark, tmp_path):
    with locks.exclusive_lock(writer_lock_of(tmp_path), {"job": "scan-cdx"}):
        with pytest.raises(RootBusy) as raised:
            run_job(CountJob, spark, ["--root", str(tmp_path), "--force"])
        with pytest.raises(RootBusy):  # a bounded wait ends the same way
            run_job(CountJob, spark, ["--root", str(tmp_path), "--wait-lock", "0.3"])
    message = str(raised.value)
    assert "\n" not in message and "another job is writing" in message and "scan-cdx pid" in message
    assert "--wait-lock" in message
    assert not (tmp_path / "numbers").exists() and not (tmp_path / "_reports").exists()
    assert run_job(CountJob, spark, ["--root", str(tmp_path)])["status"] == "ok"  # released: the next one runs


def test_wait_lock_waits_for_the_writer_to_finish(spark, tmp_path):
    held, release = threading.Event(), threading.Event()

    def other_writer():
        with locks.exclusive_lock(writer_lock_of(tmp_path), {"job": "other"}):
            held.set()
            release.wait(30)

    thread = threading.Thread(target=other_writer)
    thread.start()
    held.wait(10)
    threading.Timer(0.5, release.set).start()
    report = run_job(CountJob, spark, ["--root", str(tmp_path), "--wait-lock", "30"])
    thread.join()
    assert report["status"] == "ok" and numbers_of(spark, tmp_path) == [0, 2, 4, 6, 8]
    assert "wait_lock" not in report["args"] or report["fingerprint"] == run_job(
        CountJob, spark, ["--root", str(tmp_path)])["fingerprint"]


def test_the_manifest_never_names_a_version_that_is_gone(spark, tmp_path):
    first = run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "4"])
    with pytest.raises(JobFailed, match="gone before the switch"):
        run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "8", "--lose-version"])
    manifest = json.loads((tmp_path / "numbers" / "_manifest.json").read_text())
    assert manifest["run_id"] == first["run_id"]
    assert (tmp_path / "numbers" / f"version={manifest['version']}" / "_SUCCESS").exists()
    with pytest.raises(FileNotFoundError):  # the switch itself refuses a missing version
        table_layout.write_manifest(str(tmp_path / "numbers"), "v20000101T000000-deadbeef", rows=0)
    assert numbers_of(spark, tmp_path) == [0, 2]


@pytest.mark.parametrize("damage", ["version_removed", "file_truncated"])
def test_a_rerun_checks_its_outputs_are_there_and_readable_before_calling_the_work_done(spark, tmp_path, damage):
    run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "6"])
    location = tmp_path / "numbers" / f"version={json.loads((tmp_path / 'numbers' / '_manifest.json').read_text())['version']}"
    if damage == "version_removed":
        shutil.rmtree(location)
    else:
        for part in location.glob("part-*.parquet"):
            part.write_bytes(part.read_bytes()[:20])
    again = run_job(CountJob, spark, ["--root", str(tmp_path), "--n", "6"])
    assert "skipped_rerun" not in again and again["outputs"]["numbers"] == 3
    assert numbers_of(spark, tmp_path) == [0, 2, 4]


class ReadsAFileJob(CountJob):
    name = "reads-a-file-test"
    input_paths = ("input",)

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--input")


@pytest.mark.parametrize("where", ["numbers", "_reports", "docs"])
def test_inputs_inside_a_table_folder_of_the_root_are_refused(tmp_path, where):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "_manifest.json").write_text("{}")  # another job's table
    target = tmp_path / where / "input.txt"
    target.parent.mkdir(exist_ok=True)
    target.write_text("data")
    with pytest.raises(ConfigError, match="lies inside"):
        ReadsAFileJob().run(["--root", str(tmp_path), "--input", str(target)])
    beside = tmp_path / "inputs" / "input.txt"  # a plain folder of the root is not a table
    beside.parent.mkdir()
    beside.write_text("data")
    job = ReadsAFileJob()
    job.args = job.parse_arguments(["--root", str(tmp_path), "--input", str(beside)])
    check_input_paths(job, job.args)


def test_inputs_in_a_remote_root_s_tables_are_refused_whatever_the_s3_spelling():
    job = ReadsAFileJob()
    job.args = job.parse_arguments(["--root", "s3a://bucket/root/"])
    assert root_table_containing(job, "s3://bucket/root/numbers/part-0.parquet") == "s3a://bucket/root/numbers"
    assert root_table_containing(job, "s3://bucket/other/numbers/x") is None


class PairJob(Job):
    name = "pair-test"
    description = "numbers per language pair; a pair with German is skipped"
    outputs = ("pair_numbers",)

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--langs", required=True)

    def validate_arguments(self, args):
        super().validate_arguments(args)
        self.pairs = language_pairs_option(args.langs)

    def process(self):
        self.for_each_pair(self.count_pair)

    def count_pair(self, pair):
        from pyspark.sql import functions as F

        n = 4 + 2 * self.pairs.index(pair)
        self.report.input("numbers", n)
        if "deu" in pair:
            self.report.filtered("odd", 1)
            raise PairSkipped("no_lexicon", "no lexicon for German")
        df = self.spark.range(n).withColumn("reason", F.when(F.col("id") % 2 == 1, "odd").otherwise("ok"))
        self.report.add_counts(self.count_by(df, "reason"), bad_reasons=(), filtered_reasons={"odd"})
        self.write_table(df.where("reason = 'ok'"), "pair_numbers")
        assert self.read_table("pair_numbers").count() == n // 2  # this pair's partition only
        self.report.metric("even", n // 2)


def test_a_many_pair_run_writes_lang_pair_partitions_and_counts_a_skipped_pair(spark, tmp_path):
    report = run_job(PairJob, spark, ["--root", str(tmp_path), "--langs", "en:fr,de,is"])
    assert report["status"] == "ok" and report["balanced"]
    assert report["inputs"] == {"numbers": 4 + 6 + 8}
    assert report["kept"] == 2 + 4 and report["filtered"] == {"odd": 2 + 1 + 4, "pair_no_lexicon": 5}
    assert report["by_pair"]["eng-deu"]["status"] == "skipped: no_lexicon"
    assert report["metrics"]["pairs_skipped"] == {"eng-deu": "no_lexicon"}
    assert report["metrics"]["by_pair"]["eng-isl"] == {"even": 4} and "even" not in report["metrics"]
    assert report["metrics"]["lang_pairs"] == ["eng-fra", "eng-deu", "eng-isl"]
    location = table_layout.table_location(str(tmp_path / "pair_numbers"))
    assert sorted(p.name for p in (tmp_path / "pair_numbers").glob("version=*/lang_pair=*")) == [
        "lang_pair=eng-fra", "lang_pair=eng-isl"]
    counts = {row["lang_pair"]: row["count"] for row in spark.read.parquet(location).groupBy("lang_pair").count().collect()}
    assert counts == {"eng-fra": 2, "eng-isl": 4} and report["outputs"]["pair_numbers"] == 6


def test_a_single_pair_run_keeps_its_metrics_at_the_top(spark, tmp_path):
    report = run_job(PairJob, spark, ["--root", str(tmp_path), "--langs", "en,fr"])
    assert report["metrics"]["even"] == 2 and report["metrics"]["by_pair"]["eng-fra"] == {"even": 2}
    assert spark.read.parquet(table_layout.table_location(str(tmp_path / "pair_numbers"))).columns == [
        "id", "reason", "lang_pair"]


def test_a_run_whose_every_pair_is_skipped_fails(spark, tmp_path):
    with pytest.raises(JobFailed, match="every language pair was skipped"):
        run_job(PairJob, spark, ["--root", str(tmp_path), "--langs", "de,fr"])
class SourcedJob(CountJob):
    """CountJob whose tables are made from --source, for a --langs pair."""

    source_arguments, drop_hints = ("source",), {"odd": "--n counts only odd numbers"}

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--source", default="a")
        parser.add_argument("--langs")

    def result_line(self):
        return "the result in words"


def test_a_root_made_from_another_source_is_refused_unless_forced(spark, tmp_path, caplog):
    run_job(SourcedJob, spark, ["--root", str(tmp_path), "--source", "archive-1"])
    with pytest.raises(ConfigError, match=r"holds numbers made by count-test .* from --source archive-1; this run "
                                          r"reads --source archive-2\. Use another --root .* or --force"):
        run_job(SourcedJob, spark, ["--root", str(tmp_path), "--source", "archive-2"])
    assert json.loads((tmp_path / "_reports" / "count-test.json").read_text())["args"]["source"] == "archive-1"
    with caplog.at_level("WARNING", logger="parascout"):
        forced = run_job(SourcedJob, spark, ["--root", str(tmp_path), "--source", "archive-2", "--force"])
    assert forced["args"]["source"] == "archive-2"
    assert "--force: replacing" in caplog.text and "from --source archive-1" in caplog.text
    # two spellings of one local path are the same source
    (tmp_path / "in").mkdir()
    other = tmp_path / "other"
    run_job(SourcedJob, spark, ["--root", str(other), "--source", str(tmp_path / "in")])
    assert run_job(SourcedJob, spark, ["--root", str(other), "--source", str(tmp_path / "in") + "/", "--n", "12"])


def test_another_language_pair_s_tables_are_replaced_loudly(spark, tmp_path, caplog):
    run_job(SourcedJob, spark, ["--root", str(tmp_path), "--langs", "en,fr"])
    with caplog.at_level("WARNING", logger="parascout"):
        run_job(SourcedJob, spark, ["--root", str(tmp_path), "--langs", "eng,fra", "--n", "12"])
        assert "REPLACED" not in caplog.text  # the same pair, spelt in ISO 639-3
        run_job(SourcedJob, spark, ["--root", str(tmp_path), "--langs", "en,de"])
    assert "for the language pair eng,fra; this run's pair is eng,deu, so they are REPLACED" in caplog.text


def test_a_run_that_keeps_nothing_warns_with_the_likeliest_reason(spark, tmp_path, caplog):
    with caplog.at_level("INFO", logger="parascout"):
        run_job(SourcedJob, spark, ["--root", str(tmp_path), "--n", "1"])  # keeps the number 0
        done = [record for record in caplog.records if " done in " in record.getMessage()][-1].getMessage()
    assert done.endswith("kept 1, filtered 0, bad 0; wrote numbers 1; the result in words"), done

    class OddOnly(SourcedJob):
        def process(self):
            self.report.input("numbers", 3)
            self.report.filtered("odd", 3)
            self.write_table(self.spark.range(0).selectExpr("id", "'ok' as reason"), "numbers")

    caplog.clear()
    with caplog.at_level("WARNING", logger="parascout"):
        run_job(OddOnly, spark, ["--root", str(tmp_path / "odd")])
    assert "count-test kept 0 of 3 numbers: 3 dropped as odd; --n counts only odd numbers" in caplog.text


@pytest.mark.slow
def test_scan_cdx_refuses_a_root_scanned_from_another_index_and_says_why_it_kept_nothing(spark, tmp_path, caplog):
    from parascout.jobs.scan_cdx import ScanCdx

    captures = Path(__file__).parent.parent / "data" / "cdx" / "captures.cdx"
    shutil.copy(captures, tmp_path / "other.cdx")
    root = str(tmp_path / "root")
    with caplog.at_level("WARNING", logger="parascout"):
        run_job(ScanCdx, spark, ["--root", root, "--cdx", str(captures), "--status", "418"])
    assert "scan-cdx kept 0 of 18 index records: 16 dropped as status; no capture has a --status the scan keeps" \
        in caplog.text
    with pytest.raises(ConfigError, match=f"from --cdx \\['{captures}'\\]; this run reads --cdx "
                                          f"\\['{tmp_path / 'other.cdx'}'\\]"):
        run_job(ScanCdx, spark, ["--root", root, "--cdx", str(tmp_path / "other.cdx")])


@pytest.mark.slow
def test_scan_cdx_reruns_when_its_index_was_rewritten_in_place(spark, tmp_path):
    """A rebuilt archive at the same path is new input: skipping would keep the old archive's urls."""
    from parascout.jobs.scan_cdx import ScanCdx

    index = tmp_path / "captures.cdx"
    shutil.copy(Path(__file__).parent.parent / "data" / "cdx" / "captures.cdx", index)
    argv = ["--root", str(tmp_path / "root"), "--cdx", str(index)]
    first = run_job(ScanCdx, spark, argv)
    assert run_job(ScanCdx, spark, argv).get("skipped_rerun") is True
    os.utime(index, ns=(index.stat().st_atime_ns, index.stat().st_mtime_ns + 10**9))
    rerun = run_job(ScanCdx, spark, argv)
    assert "skipped_rerun" not in rerun and rerun["run_id"] != first["run_id"]


def test_a_failed_run_s_report_names_the_java_exception_and_its_causes_without_their_stack_frames(spark):
    from py4j.protocol import Py4JJavaError

    with pytest.raises(Py4JJavaError) as raised:  # an exception PySpark does not convert: its Java trace comes along
        spark.sparkContext._jvm.java.util.Objects.requireNonNull(None, "nothing there")
    assert "\tat java.base/java.util.Objects.requireNonNull" in str(raised.value)
    summary = error_summary(raised.value)
    assert summary == ("Py4JJavaError: An error occurred while calling z:java.util.Objects.requireNonNull.\n"
                       ": java.lang.NullPointerException: nothing there")
    assert error_summary(RuntimeError("x" * 5000), max_chars=100) == "RuntimeError: " + "x" * 86 + " …"
