"""The table registry (udfs/common/tables.py): what Job.write_table checks, and docs/tables.md generated from it."""
import pytest

from parascout.jobs.base import Job
from parascout.udfs.common import table_layout, tables
from tests.conftest import REPO, run_job

tables.register(tables.Table("registry_test", "registry-test", "a test table", tables.columns_from(
    ("id*", "bigint", "a number"), ("note", "string", "an optional note"))))


class WritesColumns(Job):
    name = "registry-test"
    description = "writes registry_test with the columns it is told"
    outputs = ("registry_test",)

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--extra", help="one more column, unknown to the registry")

    def process(self):
        from pyspark.sql import functions as F

        frame = self.spark.range(3)
        if self.args.extra:
            frame = frame.withColumn(self.args.extra, F.lit(1))
        self.report.input("numbers", 3)
        self.report.kept(3)
        self.write_table(frame, "registry_test")


def test_docs_tables_md_is_what_the_registry_generates():
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_generate", REPO / "docs" / "generate.py")
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    tables_markdown = generate.tables_markdown
    assert (REPO / "docs" / "tables.md").read_text(encoding="utf-8") == tables_markdown(), \
        "docs/tables.md is out of date: run `.venv/bin/python docs/generate.py`"


def test_every_table_a_job_declares_is_registered():
    from parascout.jobs.cli import discover

    declared = {table for job in discover().values() for table in job.outputs
                if table not in getattr(job, "unversioned_outputs", ())}
    assert declared - set(tables.registry()) == set()
    # each stage declares the tables its jobs write, in its own folder
    for stage in tables.SCHEMA_STAGES:
        assert (REPO / "udfs" / stage / "schemas.py").exists()
    assert {tables.TABLES[name].job for name in tables._DECLARED["export"]} == {
        "export-bitext", "shortlist", "export-crawl-plan"}


def test_required_columns_missing_always_fail_and_unknown_ones_fail_when_strict():
    with pytest.raises(tables.TableColumnsError, match="required columns missing: id"):
        tables.check_columns("registry_test", ["note"], strict=False)
    assert tables.check_columns("registry_test", ["id"], strict=True) == []
    assert "'surprise'" in tables.check_columns("registry_test", ["id", "surprise"], strict=False)[0]
    with pytest.raises(tables.TableColumnsError, match="'surprise' is not in the table registry"):
        tables.check_columns("registry_test", ["id", "surprise"], strict=True)
    with pytest.raises(tables.TableColumnsError, match="not a registered table"):
        tables.check_columns("no_such_table", ["id"], strict=True)


@pytest.mark.slow
def test_a_job_writing_an_unregistered_column_fails(spark, tmp_path):
    assert run_job(WritesColumns, spark, ["--root", str(tmp_path)])["status"] == "ok"
    with pytest.raises(tables.TableColumnsError, match="'surprise' is not in the table registry"):
        WritesColumns().use_spark(spark).run(["--root", str(tmp_path / "other"), "--extra", "surprise"])
    assert table_layout.table_location(str(tmp_path / "other" / "registry_test")) is None
