"""Fault injection on archive reads: a real S3 server (moto) behind a proxy (tests/support/s3_faults.py) that answers 503 SlowDown, stalls past the
client's read timeout, cuts bodies short (with or without a Content-Length), ignores Range (a 200 with
the whole object), or both at once (`drop_whole`: a 200 whose connection drops halfway with no length or
checksum to check, which the transport cannot notice: the record comes out cut and is read again), for a deterministic
share of range GETs. Nothing may be lost or misread: every record
ends ok (with its own bytes) or with a reason, retries cost exactly --attempts GETs, the report balances."""
from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

import boto3
import pandas as pd
import pytest

from parascout.jobs.errors import JobFailed
from parascout.jobs.fetch_docs import FetchDocsJob
from parascout.jobs.report import StoreUnreachable
from parascout.udfs.fetch.warc_fetch import FetchSettings, fetch_documents
from testkit.warc import build_mixed_warc, urls_rows, write_table
from tests.conftest import run_job
from tests.support.s3_faults import SLOWDOWN_XML, FaultProxy


def upload_archive(folder, endpoint: str, bucket: str, files: int = 3) -> tuple[list[dict], dict[str, str]]:
    """WARC files with good and broken records in a moto bucket; (CDX-like rows, expected status)."""
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    s3.create_bucket(Bucket=bucket)
    rows, expected = [], {}
    for index in range(files):
        name = f"crawl-data/segment-{index}.warc.gz"
        part_rows, part_expected = build_mixed_warc(folder, good=12, name=f"segment-{index}.warc.gz")
        for row in part_rows:
            row["url"] = row["url"].replace(".example.com/", f".example.com/{index}/")
            row["warc_filename"] = name
        rows += part_rows
        expected.update({url.replace(".example.com/", f".example.com/{index}/"): status
                         for url, status in part_expected.items()})
        s3.put_object(Bucket=bucket, Key=name, Body=(folder / f"segment-{index}.warc.gz").read_bytes())
    body, name = b"", "crawl-data/other-records.warc.gz"  # the file of the segments ends inside a record
    for kind, record in non_response_records("http://site0.example.com/other.html"):
        url = f"http://site0.example.com/{kind}.html"
        rows.append({"url": url, "warc_filename": name, "warc_offset": len(body), "warc_length": len(record)})
        expected[url] = f"{kind}_record"
        body += record
    s3.put_object(Bucket=bucket, Key=name, Body=body)
    return rows, expected


def non_response_records(url: str) -> list[tuple[str, bytes]]:
    """A request and a metadata record (each its own gzip member) as CommonCrawl's WARC files hold them beside
    responses: a CDX row pointing at one is accounted for with its own reason, through the faults too."""
    from io import BytesIO

    from warcio.warcwriter import WARCWriter

    records = []
    for kind, payload in (("request", b"GET / HTTP/1.1\r\nHost: site0.example.com\r\n\r\n"),
                          ("metadata", b"fetchTimeMs: 120\r\n")):
        buffer = BytesIO()
        writer = WARCWriter(buffer, gzip=True)
        content_type = "application/http; msgtype=request" if kind == "request" else "application/warc-fields"
        writer.write_record(writer.create_warc_record(url, kind, payload=BytesIO(payload),
                                                      warc_content_type=content_type))
        records.append((kind, buffer.getvalue()))
    return records


@pytest.mark.parametrize("coalesce", [False, True])
def test_faults_are_retried_and_nothing_is_lost(tmp_path, moto_endpoint, coalesce):
    bucket = f"faults-unit-{str(coalesce).lower()}"
    rows, expected = upload_archive(tmp_path, moto_endpoint, bucket)
    rows.append({"url": "http://doomed.example.com/x", "warc_filename": "crawl-data/doomed.warc.gz",
                 "warc_offset": 0, "warc_length": 500})
    expected["http://doomed.example.com/x"] = "fetch_failed"
    with FaultProxy(moto_endpoint, slowdown=0.15, stall=0.05, truncate=0.15, max_faults_per_range=7) as proxy:
        settings = FetchSettings(warc_prefix=f"s3://{bucket}/", s3_endpoint=proxy.endpoint, coalesce=coalesce,
                                 max_span_bytes=8 * 1024, concurrency=6, attempts=8, backoff_seconds=0.01,
                                 read_timeout=1.0, connect_timeout=2.0, max_record_bytes=16 * 1024)
        docs = pd.concat(list(fetch_documents(iter([pd.DataFrame(rows)]), settings)), ignore_index=True)
    assert len(docs) == len(rows) and docs["url"].is_unique
    assert dict(zip(docs["url"], docs["status"])) == expected
    assert all(count > 0 for kind, count in proxy.injected.items()), proxy.injected
    doomed = docs.set_index("url").loc["http://doomed.example.com/x"]
    assert doomed["fetch_attempts"] == settings.attempts == proxy.injected["doomed"] and "SlowDown" in doomed["error"]
    fetched = docs[docs["range_records"] > 0]  # each row carries its range's GETs, shared by the range's records
    assert round((fetched["fetch_attempts"] / fetched["range_records"]).sum()) == proxy.range_gets
    assert (fetched["range_records"] > 1).any() == coalesce


def test_a_range_always_throttled_costs_exactly_attempts_gets(tmp_path, moto_endpoint):
    rows = [{"url": "http://doomed.example.com/x", "warc_filename": "crawl-data/doomed.warc.gz",
             "warc_offset": 0, "warc_length": 500}]
    with FaultProxy(moto_endpoint) as proxy:
        settings = FetchSettings(warc_prefix="s3://faults-unit/", s3_endpoint=proxy.endpoint, attempts=4,
                                 backoff_seconds=0.01)
        started = time.monotonic()
        docs = pd.concat(list(fetch_documents(iter([pd.DataFrame(rows)]), settings)), ignore_index=True)
    assert proxy.range_gets == proxy.injected["doomed"] == 4  # not 4 x botocore's own retries
    assert docs["status"].tolist() == ["fetch_failed"] and docs["fetch_attempts"].tolist() == [4]
    assert time.monotonic() - started < 5


def test_cut_bodies_without_length_and_ignored_ranges_never_give_wrong_bytes(tmp_path, moto_endpoint):
    rows, expected = upload_archive(tmp_path, moto_endpoint, "faults-range", files=2)
    local = {row["url"]: row for row in rows}
    with FaultProxy(moto_endpoint, cut_unsized=0.25, ignore_range=0.3, seed=3, max_faults_per_range=7) as proxy:
        settings = FetchSettings(warc_prefix="s3://faults-range/", s3_endpoint=proxy.endpoint, attempts=8,
                                 backoff_seconds=0.01, max_record_bytes=16 * 1024, concurrency=4, coalesce=False)
        docs = pd.concat(list(fetch_documents(iter([pd.DataFrame(rows)]), settings)), ignore_index=True)
    assert proxy.injected["cut_unsized"] > 0 and proxy.injected["ignore_range"] > 0, proxy.injected
    assert dict(zip(docs["url"], docs["status"])) == expected  # cut bodies retried, full objects sliced
    for url, text in zip(docs["url"], docs["title"]):
        if local[url]["url"].endswith(".html") and expected[url] == "ok":
            assert text == "Page " + url.rsplit("page-", 1)[1].removesuffix(".html")  # its own page, no other
    assert docs.loc[docs["status"] != "too_large", "fetch_attempts"].sum() == proxy.range_gets


@pytest.mark.parametrize("coalesce", [False, True])
def test_records_cut_without_the_transport_noticing_are_read_again(tmp_path, moto_endpoint, coalesce):
    bucket = f"faults-drop-{str(coalesce).lower()}"
    rows, expected = upload_archive(tmp_path, moto_endpoint, bucket, files=2)
    with FaultProxy(moto_endpoint, drop_whole=0.4, seed=5) as proxy:  # threads draw in any order: attempts leave
        settings = FetchSettings(warc_prefix=f"s3://{bucket}/", s3_endpoint=proxy.endpoint, attempts=12,  # margin
                                 backoff_seconds=0.0, max_record_bytes=16 * 1024, concurrency=4, coalesce=coalesce,
                                 max_span_bytes=2 * 1024)
        docs = pd.concat(list(fetch_documents(iter([pd.DataFrame(rows)]), settings)), ignore_index=True)
    assert proxy.injected["drop_whole"] > 0, proxy.injected
    assert dict(zip(docs["url"], docs["status"])) == expected  # cut_short only where the file itself is cut
    local = {row["url"]: row for row in rows}
    for url, title in zip(docs["url"], docs["title"]):
        if local[url]["url"].endswith(".html") and expected[url] == "ok":
            assert title == "Page " + url.rsplit("page-", 1)[1].removesuffix(".html")
    fetched = docs[docs["range_records"] > 0]
    assert round((fetched["fetch_attempts"] / fetched["range_records"]).sum()) == proxy.range_gets
    reread = fetched[(fetched["status"] == "ok") & (fetched["fetch_attempts"] > fetched["range_records"])]
    # some ok records needed a second read; with coalescing a dropped range may instead be retried whole, as the
    # threads' order decides, so only the single-record ranges must show it on every run
    assert len(reread) > 0 or coalesce
    assert (docs.loc[docs["status"] == "cut_short", "fetch_attempts"] >= settings.attempts).all()
    if not coalesce:  # a record's GETs, its re-reads' included, stay within --attempts
        assert fetched["fetch_attempts"].max() == settings.attempts


@pytest.mark.slow
def test_fetch_docs_job_through_the_fault_proxy(spark, tmp_path, moto_endpoint):
    archive, root = tmp_path / "archive", tmp_path / "out"
    archive.mkdir()
    rows, expected = upload_archive(archive, moto_endpoint, "faults-job", files=2)
    write_table(root, "urls", urls_rows(rows))
    with FaultProxy(moto_endpoint, slowdown=0.1, stall=0.05, truncate=0.2, seed=11,  # adaptive retries
                    max_faults_per_range=9) as proxy:
        report = run_job(FetchDocsJob, spark, [
            "--root", str(root), "--select", "all", "--warc-prefix", "s3://faults-job/", "--s3-endpoint",
            proxy.endpoint, "--no-coalesce", "--read-timeout", "0.5", "--attempts", "10",
            "--max-record-bytes", "16384"])
    docs = spark.read.parquet(str(root / "docs")).select("url", "status").toPandas()
    assert docs["url"].is_unique and dict(zip(docs["url"], docs["status"])) == expected
    assert report["balanced"] and report["inputs"]["requested"] == len(expected)
    by_status = Counter(expected.values())
    assert report["kept"] == by_status["ok"] == 24 and report["bad"] == {s: by_status[s] for s in report["bad"]}
    assert sum(report["bad"].values()) + sum(report["filtered"].get(s, 0) for s in by_status) == len(expected) - 24
    metrics = report["metrics"]
    assert metrics["get_requests"] == proxy.range_gets and sum(proxy.injected.values()) > 0
    fetched = sum(n for s, n in by_status.items() if s != "too_large")  # one range per record (no coalescing)
    assert metrics["get_retries"] == metrics["get_requests"] - fetched > 0


class DeadStore:
    """An S3 endpoint on 127.0.0.1 that answers 503 SlowDown to every request."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                FaultProxy.reply(self, 503, {"Content-Type": "application/xml"}, SLOWDOWN_XML)

            do_GET = do_PUT = do_HEAD = answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()


@pytest.mark.slow
def test_a_store_that_never_answers_fails_the_job_with_one_line(spark, tmp_path):
    root = tmp_path / "out"
    rows = [{"url": f"http://site.example.com/page-{n}.html", "warc_filename": f"crawl-data/file-{n % 2}.warc.gz",
             "warc_offset": 1000 * n, "warc_length": 500} for n in range(4)]
    write_table(root, "urls", urls_rows(rows))
    with DeadStore() as store, pytest.raises(StoreUnreachable) as raised:
        run_job(FetchDocsJob, spark, ["--root", str(root), "--select", "all", "--warc-prefix", "s3://archive/",
                                      "--s3-endpoint", store.endpoint, "--attempts", "2", "--no-coalesce"])
    message = str(raised.value)
    assert "\n" not in message and message.startswith("the store is unreachable: all 4 records")
    assert "503" in message or "SlowDown" in message
    report = json.loads((root / "_reports" / "fetch-docs.json").read_text())
    assert report["status"] == "failed" and report["balanced"] and report["bad"] == {"fetch_failed": 4}
    assert report["store"]["records_sent"] == report["store"]["records_lost"] == 4
    assert report["store"]["bad_records_own"] == 0
    assert not (root / "docs" / "_manifest.json").exists()  # nothing switched in


@pytest.mark.slow
def test_records_lost_to_the_store_are_counted_apart_warned_of_and_held_to_max_bad_fraction(spark, tmp_path,
                                                                                             moto_endpoint):
    archive, root = tmp_path / "archive", tmp_path / "out"
    archive.mkdir()
    rows, expected = upload_archive(archive, moto_endpoint, "half-dead", files=1)
    doomed = [{"url": f"http://doomed.example.com/{n}", "warc_filename": "crawl-data/doomed.warc.gz",
               "warc_offset": 1000 * n, "warc_length": 500} for n in range(6)]
    write_table(root, "urls", urls_rows(rows + doomed))
    argv = ["--root", str(root), "--select", "all", "--warc-prefix", "s3://half-dead/", "--attempts", "2",
            "--max-record-bytes", "16384", "--no-coalesce"]
    with FaultProxy(moto_endpoint) as proxy:  # every range GET of doomed.warc.gz answers 503
        report = run_job(FetchDocsJob, spark, [*argv, "--s3-endpoint", proxy.endpoint])
        own_bad = sum(1 for status in expected.values() if status in report["bad"])
        assert report["status"] == "ok" and report["balanced"] and report["bad"]["fetch_failed"] == 6
        assert report["store"]["records_lost"] == 6 and report["store"]["bad_records_own"] == own_bad
        assert any("lost to the store" in warning for warning in report["warnings"])
        with pytest.raises(JobFailed, match="over --max-bad-fraction"):
            run_job(FetchDocsJob, spark, [*argv, "--s3-endpoint", proxy.endpoint, "--force",
                                          "--max-bad-fraction", "0.1"])
