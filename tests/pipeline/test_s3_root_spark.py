"""Spark's own writes to an s3:// root under faults: a job's tables written through Hadoop's S3A (hadoop-aws, as a
cluster off EMR has it) to a real S3 server (moto's) behind the fault proxy (tests/support/s3_faults.py), which
throttles, fails multipart uploads and cuts connections. Whatever happens, the job ends done or with an error that
names the fault, each table reads as its last complete version (through its manifest, by Spark and by pyarrow),
nothing of a failed version is left, and a rerun without faults succeeds. The store's endpoint is named once
(AWS_ENDPOINT_URL) for parascout's own clients and Spark's alike."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from parascout.jobs.base import Job
from parascout.jobs.errors import JobFailed
from parascout.jobs.scan_cdx import ScanCdx
from parascout.udfs.common import storage, table_layout, tables
from tests.conftest import run_job
from tests.support.s3_faults import FaultProxy, OperationFault, keys, unfinished_uploads
from tests.support.s3a import require_s3a

pytestmark = pytest.mark.slow

CAPTURES = Path(__file__).parent.parent / "data" / "cdx" / "captures.cdx"
tables.register(tables.Table("padded", "s3-root-test", "numbers with a padding column",
                             tables.columns_from(("id*", "bigint", "a number"), ("pad*", "string", "padding"))))


class PaddedJob(Job):
    """Writes --n numbers, each with --pad hex characters of padding, as one file of table `padded`."""

    name = "s3-root-test"
    description = "writes numbers with padding"
    outputs = ("padded",)

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--n", type=int, default=10)
        parser.add_argument("--pad", type=int, default=1, help="sha512 digests of padding per row")

    def process(self):
        from pyspark.sql import functions as F

        digests = [F.sha2(F.concat(F.col("id").cast("string"), F.lit(str(k))), 512) for k in range(self.args.pad)]
        df = self.spark.range(self.args.n).withColumn("pad", F.concat(*digests)).coalesce(1)
        self.report.input("numbers", self.args.n)
        self.report.add_counts({"ok": self.args.n}, bad_reasons=set(), filtered_reasons=set())
        self.write_table(df, "padded")


@pytest.fixture
def proxy(spark, moto_endpoint, through):
    """The fault proxy as every S3 client's endpoint (AWS_ENDPOINT_URL), parascout's and Spark's S3A, for the whole
    test; a run's faults are set in `proxy.operations` (empty: none)."""
    require_s3a(spark)
    with FaultProxy(moto_endpoint) as running:
        through(running.endpoint)
        yield running


def rows_by_spark(spark, table_dir: str, column: str) -> list:
    return sorted(row[column] for row in spark.read.parquet(table_layout.table_location(table_dir)).collect())


def rows_by_pyarrow(table_dir: str, column: str) -> list:
    filesystem, inner = storage.arrow_filesystem(table_layout.table_location(table_dir))
    return sorted(pq.read_table(inner, filesystem=filesystem).column(column).to_pylist())


def assert_only_current_versions(moto_endpoint: str, bucket: str) -> None:
    """Every object under the root is a report, a manifest or a file of the version its table's manifest names:
    nothing staged, no lock, no version of a failed run; no unfinished upload."""
    for key in keys(moto_endpoint, bucket, "root/"):
        parts = key.split("/")
        if key.endswith("/") or parts[1] == "_reports" or parts[-1] == table_layout.MANIFEST:
            continue
        version = table_layout.read_manifest(f"s3://{bucket}/root/{parts[1]}")["version"]
        assert parts[2] == table_layout.VERSION_PREFIX + version, key
    assert unfinished_uploads(moto_endpoint, bucket) == []


def test_scan_cdx_writes_its_tables_to_a_throttled_s3_root_as_to_a_local_one(spark, tmp_path, moto_endpoint,
                                                                            bucket, proxy):
    local = run_job(ScanCdx, spark, ["--root", str(tmp_path / "root"), "--cdx", str(CAPTURES)])
    # a quarter of every operation throttled once: within S3A's and botocore's tries
    proxy.operations[:] = [OperationFault(operation, "slowdown", share=0.25) for operation in
                           ("PUT", "GET", "HEAD", "LIST", "COPY", "DELETE")]
    proxy.max_faults_per_request = 1
    root = f"s3://{bucket}/root"
    remote = run_job(ScanCdx, spark, ["--root", root, "--cdx", str(CAPTURES)])
    assert remote["status"] == "ok" and remote["outputs"] == local["outputs"] == {"urls": 13, "hosts": 4}
    assert sum(count for (operation, _), count in proxy.operation_faults.items() if operation == "PUT") >= 2
    assert [key for key in keys(moto_endpoint, bucket) if "/version=" in key and key.endswith(".parquet")]
    for table, column in (("urls", "url"), ("hosts", "host")):
        expected = rows_by_spark(spark, str(tmp_path / "root" / table), column)
        assert rows_by_spark(spark, f"{root}/{table}", column) == expected
        assert rows_by_pyarrow(f"{root}/{table}", column) == expected
    assert_only_current_versions(moto_endpoint, bucket)


def test_spark_writes_throttled_past_their_retries_fail_the_job_and_each_table_keeps_its_last_version(
        spark, moto_endpoint, bucket, proxy):
    root = f"s3://{bucket}/root"
    run_job(PaddedJob, spark, ["--root", root, "--n", "3"])
    proxy.operations[:] = [OperationFault("PUT", "slowdown", key="part-")]  # every PUT of a table's data file
    with pytest.raises(Exception, match="SlowDown|reduce your request rate") as raised:
        run_job(PaddedJob, spark, ["--root", root, "--n", "5"])
    assert proxy.operation_faults["PUT", "slowdown"] >= 2, proxy.operation_faults
    error = json.loads(storage.read_text(f"{root}/_reports/s3-root-test.json"))["error"]
    assert "SlowDown" in error and "\tat " not in error and len(error) < 4000, raised  # the causes, not the frames
    assert table_layout.read_manifest(f"{root}/padded")["rows"] == 3
    assert rows_by_spark(spark, f"{root}/padded", "id") == rows_by_pyarrow(f"{root}/padded", "id") == [0, 1, 2]
    assert_only_current_versions(moto_endpoint, bucket)
    proxy.operations[:] = []
    assert run_job(PaddedJob, spark, ["--root", root, "--n", "5"])["status"] == "ok"
    assert rows_by_spark(spark, f"{root}/padded", "id") == [0, 1, 2, 3, 4]
    assert_only_current_versions(moto_endpoint, bucket)


@pytest.mark.parametrize("operation", ["UPLOAD_PART", "COMPLETE_MULTIPART"])
def test_a_table_file_whose_multipart_upload_fails_fails_the_job_and_leaves_no_upload(
        spark, moto_endpoint, bucket, proxy, operation):
    """A data file of ~12 MB goes in 5 MB parts (the session's S3A part size): parts or completion refused on
    every try fail the job naming the store's error; the table keeps its last version and no unfinished upload
    (stored and billed until aborted) is left."""
    root = f"s3://{bucket}/root"
    run_job(PaddedJob, spark, ["--root", root, "--n", "2"])
    proxy.operations[:] = [OperationFault(operation, "error", key="/part-")]  # Spark's data file, not a report
    with pytest.raises(Exception, match="InternalError|internal error|500"):
        run_job(PaddedJob, spark, ["--root", root, "--n", "48000", "--pad", "2"])
    assert proxy.operation_faults[operation, "error"] >= 1, proxy.operation_faults
    assert rows_by_pyarrow(f"{root}/padded", "id") == [0, 1]
    assert_only_current_versions(moto_endpoint, bucket)
    proxy.operations[:] = [OperationFault("UPLOAD_PART", "error", share=0)]  # none: the parts are only counted
    proxy.operations_seen.clear()
    assert run_job(PaddedJob, spark, ["--root", root, "--n", "48000", "--pad", "2"])["outputs"] == {"padded": 48000}
    assert proxy.operations_seen["UPLOAD_PART"] >= 2  # the data file went in parts
    assert_only_current_versions(moto_endpoint, bucket)


@pytest.mark.parametrize("fault", ["drop", "slowdown"])
def test_a_connection_cut_while_a_version_moves_into_its_table_leaves_the_last_complete_version(
        spark, moto_endpoint, bucket, proxy, fault):
    """The switch moves the new version from the staging folder into the table folder (on S3 a copy of each
    file, then a delete) before the manifest names it: every copy cut, or throttled past the retries, fails the
    job with the store's error; the manifest still names the last version, the copies made are removed, and a
    rerun switches."""
    root = f"s3://{bucket}/root"
    run_job(PaddedJob, spark, ["--root", root, "--n", "3"])
    proxy.operations[:] = [OperationFault("COPY", fault, key="/root/padded/version=")]  # into the table folder
    cause = "reduce your request rate" if fault == "slowdown" else "Unable to execute HTTP request"
    with pytest.raises(JobFailed, match=f"could not move the new version .*/_staging/padded/version=.* to "
                                        f"s3://.*/root/padded/version=.*\\(AWS.*Exception: copyFile.*{cause}"):
        run_job(PaddedJob, spark, ["--root", root, "--n", "5"])
    assert proxy.operation_faults["COPY", fault] >= 1, proxy.operation_faults
    assert table_layout.read_manifest(f"{root}/padded")["rows"] == 3
    assert rows_by_spark(spark, f"{root}/padded", "id") == rows_by_pyarrow(f"{root}/padded", "id") == [0, 1, 2]
    assert_only_current_versions(moto_endpoint, bucket)
    proxy.operations[:] = []
    run_job(PaddedJob, spark, ["--root", root, "--n", "5"])
    assert rows_by_pyarrow(f"{root}/padded", "id") == [0, 1, 2, 3, 4]
    assert_only_current_versions(moto_endpoint, bucket)


def test_a_root_whose_scheme_spark_s_hadoop_cannot_write_is_refused_saying_what_it_needs(spark):
    with pytest.raises(storage.HadoopStorageMissing, match="no file system for gs://.*Cloud Storage connector"):
        storage.prepare_spark(spark, "gs://bucket/root")
