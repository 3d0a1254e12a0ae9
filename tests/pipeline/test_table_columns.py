"""Every table a job writes has the registry's columns (udfs/common/tables.py): names, order and Spark types; the
schemas and select lists in code are the registry's, less the differences they name."""
import pytest
from pyspark.sql.types import ArrayType, IntegerType, LongType, StringType, StructField, StructType

from parascout.jobs.export_bitext import ExportBitextJob
from parascout.jobs.export_crawl_plan import PLAN_TYPES, ExportCrawlPlanJob
from parascout.jobs.fetch_docs import METADATA_SCHEMA, TEXT_COLUMNS, FetchDocsJob
from parascout.jobs.replay_crawl import ReplayCrawlJob
from parascout.jobs.scan_cdx import URL_COLUMNS, ScanCdx
from parascout.udfs.common import table_layout, tables
from parascout.udfs.export.bitext.export import DOCUMENT_COLUMNS, DOCUMENT_KEYS, DOCUMENT_SCHEMA
from parascout.udfs.fetch.documents import DOC_COLUMNS, DOCS_SCHEMA
from parascout.udfs.rank.domain_focus import FOCUS_COLUMNS
from parascout.udfs.replay.batch import INTEGER_COLUMNS, RESULT_COLUMNS, SUMMARY_COLUMNS, SUMMARY_SCHEMA
from testkit.warc import build_mixed_warc, urls_rows, write_table
from tests.conftest import run_job
from tests.support.bitext import write_inputs
from tests.support.cdx import CDX, CRAWL

LANG_PAIR = tables.LANG_PAIR.name


def test_columns_and_ddl_follow_the_registry_and_leave_out_only_registered_columns():
    assert tables.columns("hosts") == ["host", "domain", "n_urls", "lang_counts", "is_candidate"]
    assert tables.columns("hosts", without=("lang_counts",)) == ["host", "domain", "n_urls", "is_candidate"]
    assert tables.ddl("hosts", without=("lang_counts", "is_candidate")) == "host string, domain string, n_urls bigint"
    assert tables.ddl("hosts", without=("domain", "n_urls", "lang_counts"), struct=True) == \
        "struct<host:string, is_candidate:boolean>"
    with pytest.raises(tables.TableColumnsError, match="cannot leave out surprise"):
        tables.columns("hosts", without=("surprise",))


def test_code_copies_are_the_registry_less_the_differences_they_name():
    assert list(URL_COLUMNS) == tables.columns("urls")
    assert DOC_COLUMNS == tables.columns("docs") and DOCS_SCHEMA == tables.ddl("docs")
    assert [*TEXT_COLUMNS, *FOCUS_COLUMNS] == tables.columns("texts")  # focus columns only with --domain-terms
    assert METADATA_SCHEMA == {"description": "string", "keywords": "array<string>", "metadata_truncated": "boolean"}
    # the export UDF's rows: bitext_documents less lang_pair, plus the beads exploded into bitext_sentences
    assert DOCUMENT_COLUMNS == [*tables.columns("bitext_documents", without=(LANG_PAIR,)), "sentences"]
    beads = tables.ddl("bitext_sentences", without=(*DOCUMENT_KEYS, LANG_PAIR), struct=True)
    assert DOCUMENT_SCHEMA == f"{tables.ddl('bitext_documents', without=(LANG_PAIR,))}, sentences array<{beads}>"
    assert [*DOCUMENT_KEYS, *tables.columns("bitext_sentences", without=(*DOCUMENT_KEYS, LANG_PAIR))] == \
        tables.columns("bitext_sentences", without=(LANG_PAIR,))
    # the replay UDF's rows: replay_summary less lang_pair, then its curve, decile and frontier arrays
    assert SUMMARY_COLUMNS == RESULT_COLUMNS[:len(SUMMARY_COLUMNS)] == tables.columns("replay_summary")[:-1]
    assert SUMMARY_SCHEMA == tables.ddl("replay_summary", without=(LANG_PAIR,))
    assert {"n_rows", "fetches_to_80"} <= set(INTEGER_COLUMNS) and "recall" not in INTEGER_COLUMNS
    assert list(PLAN_TYPES) == tables.columns("crawl_plan")


def test_schema_problems_name_unknown_columns_other_types_and_another_order():
    def schema(*fields):
        return StructType([StructField(name, kind) for name, kind in fields])

    assert tables.schema_problems("hosts", schema(("host", StringType()), ("n_urls", LongType()))) == []
    assert tables.schema_problems("hosts", schema(("host", StringType()), ("surprise", StringType()))) == [
        "hosts.surprise: not in the table registry"]
    assert tables.schema_problems("hosts", schema(("host", StringType()), ("n_urls", IntegerType()))) == [
        "hosts.n_urls: written as int, registered as bigint"]
    assert tables.schema_problems("hosts", schema(("n_urls", LongType()), ("host", StringType()))) == [
        "hosts: columns written in the order ['n_urls', 'host'], not the registry's"]
    assert tables.schema_problems("urls", schema(("langs", ArrayType(StringType())))) == []


def written_problems(spark, root, jobs) -> dict[str, list[str]]:
    """What differs from the registry in each table the jobs declare as outputs, read as other tools read them."""
    problems = {}
    for table in (table for job in jobs for table in job.outputs if table not in job.unversioned_outputs):
        location = table_layout.table_location(str(root / table))
        assert location is not None, f"{table} was not written"
        problems[table] = tables.schema_problems(table, spark.read.parquet(location).schema)
    return problems


@pytest.mark.slow
def test_scan_cdx_writes_the_registry_s_columns(spark, tmp_path):
    run_job(ScanCdx, spark, ["--root", str(tmp_path), "--cdx", str(CDX / "captures.cdx"), "--crawl", CRAWL])
    assert written_problems(spark, tmp_path, [ScanCdx]) == {"urls": [], "hosts": []}


@pytest.mark.slow
def test_fetch_docs_writes_the_registry_s_columns(spark, tmp_path):
    archive, root = tmp_path / "archive", tmp_path / "out"
    archive.mkdir()
    rows, _ = build_mixed_warc(archive, good=4)
    write_table(root, "urls", urls_rows(rows))
    run_job(FetchDocsJob, spark, ["--root", str(root), "--warc-prefix", str(archive), "--select", "all"])
    assert written_problems(spark, root, [FetchDocsJob]) == {"docs": [], "texts": []}


@pytest.mark.slow
def test_export_bitext_writes_the_registry_s_columns(spark, tmp_path):
    write_inputs(spark, tmp_path)
    run_job(ExportBitextJob, spark, ["--root", str(tmp_path), "--langs", "en,fr"])
    assert written_problems(spark, tmp_path, [ExportBitextJob]) == {
        "bitext_documents": [], "bitext_sentences": [], "bitext_sites": []}


@pytest.mark.slow
def test_replay_crawl_and_export_crawl_plan_write_the_registry_s_columns(spark, planned):
    root = planned[0]
    problems = written_problems(spark, root, [ReplayCrawlJob, ExportCrawlPlanJob])
    assert problems == {table: [] for table in (*ReplayCrawlJob.outputs, *ExportCrawlPlanJob.outputs)}
