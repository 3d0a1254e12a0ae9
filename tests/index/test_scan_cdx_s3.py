"""scan-cdx on s3:// inputs: a real S3-compatible server (moto's) on 127.0.0.1; Python tasks fetch the bytes."""
import os

import boto3
import pytest

from parascout.jobs.scan_cdx import ScanCdx
from parascout.udfs.index.cdx import write_zipnum
from tests.conftest import run_job
from tests.support.cdx import CDX, CRAWL, site_lines, urls_of, write_columnar_index

# the endpoint travels as --s3-endpoint (moto's keys are in the environment: tests/conftest.py)

@pytest.fixture(scope="module")
def s3_archive(tmp_path_factory):
    """A moto S3 server holding a ZipNum collection and a columnar index; yields its endpoint URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    endpoint = "http://{}:{}".format(*server.get_host_and_port())
    local = tmp_path_factory.mktemp("archive")
    write_zipnum(site_lines(), str(local / "indexes"), block_lines=50, lines_per_file=400)
    write_columnar_index(CDX / "captures.cdx", local / "cc-index" / "table" / "cc-main" / "warc")
    client = boto3.client("s3", endpoint_url=endpoint)
    client.create_bucket(Bucket="archive")
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        client.upload_file(str(path), "archive", str(path.relative_to(local)))
    yield endpoint
    server.stop()


@pytest.mark.slow
def test_scan_reads_zipnum_blocks_and_columnar_files_from_s3(spark, tmp_path, s3_archive):
    assert "AWS_ENDPOINT_URL" not in os.environ  # the endpoint travels as a parameter, to the tasks too
    report = run_job(ScanCdx, spark, [
        "--root", str(tmp_path), "--s3-endpoint", s3_archive, "--cdx", "s3://archive/indexes",
        "--index-parquet", "s3://archive/cc-index/table/cc-main/warc", "--crawl", CRAWL,
        "--hosts", "www.site07.is,www.example.is"])
    assert "AWS_ENDPOINT_URL" not in os.environ
    metrics = report["metrics"]
    assert metrics["zipnum_blocks_total"] == 24 and metrics["zipnum_blocks_read"] == 1
    assert metrics["columnar_files_read"] == 1  # crawl=CC-MAIN-2024-33/subset=warc only
    assert report["balanced"] and report["bad"] == {}
    assert report["inputs"]["index_records"] == 50 + 15
    urls = urls_of(spark, tmp_path)
    assert set(urls["host"]) == {"www.site07.is", "www.example.is"}
    assert (urls["host"] == "www.site07.is").sum() == 30
    assert urls.loc["https://www.example.is/en/about-us", "warc_offset"] == 4000


@pytest.mark.slow
def test_a_missing_or_cut_short_s3_cdx_file_is_counted_not_fatal(spark, tmp_path, s3_archive):
    local = tmp_path / "zipnum"
    write_zipnum(site_lines(), str(local), block_lines=50, lines_per_file=400)  # 3 files of 8 blocks
    client = boto3.client("s3", endpoint_url=s3_archive)
    client.create_bucket(Bucket="broken")
    client.upload_file(str(local / "cluster.idx"), "broken", "indexes/cluster.idx")
    client.put_object(Bucket="broken", Key="indexes/cdx-00000.gz", Body=(local / "cdx-00000.gz").read_bytes()[:3000])
    client.upload_file(str(local / "cdx-00002.gz"), "broken", "indexes/cdx-00002.gz")  # cdx-00001.gz is missing
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path / "out"), "--s3-endpoint", s3_archive,
                                      "--cdx", "s3://broken/indexes", "--tlds", "is", "--crawl", CRAWL])
    assert report["metrics"]["zipnum_blocks_read"] == 24
    assert report["bad"] == {"truncated_gzip": 1, "unreadable": 1} and report["balanced"]
    # the whole third file and the lines of the first file before the cut are read
    assert 400 < report["inputs"]["index_records"] - 2 < 800
