"""udfs.fetch.warc_record: every record type a status, bounded decoding of every layer, accurate reasons, time limit."""
from __future__ import annotations

import gzip
import io
import random
import threading
import time
import tracemalloc
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastwarc.stream_io import BrotliWriter, ZstdWriter

from parascout.udfs.fetch import documents
from parascout.udfs.fetch.documents import parse_record
from parascout.udfs.fetch.page_walk import MAX_OUTLINK_CHARS, MAX_OUTLINKS, MAX_OUTLINKS_TOTAL_CHARS, bound_links
from parascout.udfs.fetch.warc_record import (
    BAD_REASONS,
    FILTERED_REASONS,
    MAX_UNCOMPRESSED_BYTES,
    RETRYABLE_REASONS,
    RecordTimeout,
    TimeLimit,
    decode_record,
)
from testkit.warc import ENGLISH, gzip_members, html_page, http_response, warc_record

MIB = 1024 * 1024
PAGE = html_page("Report", [ENGLISH]).encode("utf-8")


def gzip_stream(size: int, chunk: bytes = b"\0" * MIB) -> bytes:
    """gzip of `size` zero bytes, compressed chunk by chunk (never `size` bytes in memory)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(packer.compress(chunk) for _ in range(size // len(chunk))) + packer.flush()


def stream_encoded(writer_class, size: int) -> bytes:
    out = io.BytesIO()
    writer = writer_class(out)
    for _ in range(size // MIB):
        writer.write(b"\0" * MIB)
    writer.close()
    return out.getvalue()


def test_reason_sets_are_disjoint_and_retryable_ones_are_bad():
    assert not BAD_REASONS & FILTERED_REASONS and RETRYABLE_REASONS <= BAD_REASONS
    assert {"cut_short", "truncated", "wrong_offset", "bad_gzip", "timeout"} <= BAD_REASONS
    assert {"too_large", "arc_format", "revisit_unresolved", "request_record", "unknown_record_type"} <= FILTERED_REASONS


@pytest.mark.parametrize(("warc_type", "reason"), [
    ("request", "request_record"), ("metadata", "metadata_record"), ("warcinfo", "warcinfo_record"),
    ("resource", "resource_record"), ("conversion", "conversion_record"), ("continuation", "continuation_record"),
    ("unknown", "unknown_record_type"), ("x-custom", "unknown_record_type")])
def test_every_record_type_gets_a_reason(warc_type, reason):
    record = decode_record(warc_record(warc_type, "http://a.example/", b"GET / HTTP/1.1\r\n\r\n"))
    assert (record.status, record.warc_type, record.body) == (reason, warc_type, None)
    assert reason in FILTERED_REASONS and warc_type in record.error


def test_revisit_names_its_original_and_response_decodes():
    revisit = decode_record(warc_record("revisit", "http://a.example/p", http_response(b"", status="304 Not Modified"),
                                        extra=(("WARC-Refers-To-Target-URI", "http://a.example/p"),
                                               ("WARC-Refers-To-Date", "2024-04-01T08:00:00Z"))))
    assert revisit.status == "revisit_unresolved"
    assert (revisit.refers_to_uri, revisit.refers_to_date) == ("http://a.example/p", "2024-04-01T08:00:00Z")
    ok = decode_record(warc_record("response", "http://a.example/p", http_response(PAGE, (("Location", "/x"),))))
    assert (ok.status, ok.http_status, ok.content_type, ok.body) == ("ok", 200, "text/html", PAGE)
    assert ok.target_uri == "http://a.example/p" and ok.http_headers["location"] == "/x"


@pytest.mark.parametrize(("encoding", "body", "flags"), [
    ("gzip", gzip.compress(PAGE), ["gzip"]),
    ("deflate", zlib.compress(PAGE), ["deflate"]),
    ("deflate", zlib.compress(PAGE)[2:-4], ["deflate"]),  # raw deflate, as some servers send it
    ("br", None, ["br"]), ("zstd", None, ["zstd"]),
    ("gzip", PAGE, ["encoding_ignored"]),  # labelled gzip, sent plain: kept as sent (as warcio does)
    ("gzip, gzip", gzip.compress(gzip.compress(PAGE)), ["gzip", "gzip"]),
])
def test_http_body_layers_decode(encoding, body, flags):
    if body is None:
        out = io.BytesIO()
        writer = (BrotliWriter if encoding == "br" else ZstdWriter)(out)
        writer.write(PAGE)
        writer.close()
        body = out.getvalue()
    record = decode_record(warc_record("response", "http://a.example/", http_response(
        body, (("Content-Encoding", encoding),))))
    assert (record.status, record.body, record.flags) == ("ok", PAGE, flags)


def test_chunked_bodies_and_unknown_encodings():
    def chunks(data: bytes) -> bytes:
        return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (data[:100], data[100:])) + b"0\r\n\r\n"

    chunked = chunks(PAGE)
    record = decode_record(warc_record("response", "http://a.example/", http_response(
        chunks(gzip.compress(PAGE)), (("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")))))
    assert (record.status, record.body, record.flags) == ("ok", PAGE, ["chunked", "gzip"])
    record = decode_record(warc_record("response", "http://a.example/", http_response(
        chunked, (("Transfer-Encoding", "chunked"),))))
    assert (record.body, record.flags) == (PAGE, ["chunked"])
    plain = decode_record(warc_record("response", "http://a.example/", http_response(
        PAGE, (("Transfer-Encoding", "chunked"),))))
    assert plain.body == PAGE  # declared chunked, sent plain
    cut = decode_record(warc_record("response", "http://a.example/", http_response(
        chunked[:150], (("Transfer-Encoding", "chunked"),))))
    assert cut.status == "ok" and "body_cut" in cut.flags and cut.body == PAGE[:140]  # 150 bytes less two chunk headers and one CRLF
    odd = decode_record(warc_record("response", "http://a.example/", http_response(
        PAGE, (("Content-Encoding", "compress"),))))
    assert (odd.status, odd.body) == ("unsupported_encoding", None)


def test_gzip_in_gzip_bomb_is_too_large_with_memory_near_the_limit():
    body = gzip_stream(256 * MIB)  # the HTTP body inflates to 256 MiB; the record is a few hundred kB
    bomb = warc_record("response", "http://bomb.example/", http_response(body, (("Content-Encoding", "gzip"),)))
    assert len(bomb) < 2 * MIB
    tracemalloc.start()
    started = time.process_time()
    try:
        record = decode_record(bomb)
        doc = parse_record(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert record.status == doc["status"] == "too_large" and record.body is None
    assert peak < 1.25 * MAX_UNCOMPRESSED_BYTES + 2 * MIB, peak  # the limit, its buffer's slack, one chunk
    assert time.process_time() - started < 5.0
    small = decode_record(bomb, limit=4 * MIB)
    assert small.status == "too_large"


def test_records_just_under_the_limit_decode_whole():
    size = MAX_UNCOMPRESSED_BYTES - MIB
    encoded = decode_record(warc_record("response", "http://big.example/", http_response(
        gzip_stream(size), (("Content-Encoding", "gzip"),))))
    assert encoded.status == "ok" and len(encoded.body) == size and not encoded.body.strip(b"\0")
    plain = decode_record(warc_record("response", "http://big.example/", http_response(b"\0" * size)))
    assert plain.status == "ok" and len(plain.body) == size


@pytest.mark.parametrize("writer_class", [BrotliWriter, ZstdWriter])
def test_brotli_and_zstd_bombs_stop_at_the_limit(writer_class):
    encoding = "br" if writer_class is BrotliWriter else "zstd"
    bomb = warc_record("response", "http://bomb.example/", http_response(
        stream_encoded(writer_class, 64 * MIB), (("Content-Encoding", encoding),)))
    tracemalloc.start()
    try:
        record = decode_record(bomb, limit=4 * MIB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert record.status == "too_large" and peak < 6 * MIB


def test_outer_member_over_the_limit_is_too_large():
    bomb = gzip.compress(b"WARC/1.0\r\n" + b"\0" * (40 * MIB), compresslevel=1)
    assert decode_record(bomb).status == "too_large"


def test_broken_bytes_get_accurate_reasons():
    good = warc_record("response", "http://a.example/", http_response(PAGE))
    assert decode_record(good[: len(good) // 2]).status == "cut_short"
    assert "cut_short" in RETRYABLE_REASONS  # a body cut in transit: warc_fetch reads the range again
    raw = gzip.decompress(good)
    assert decode_record(gzip.compress(raw[:-200])).status == "truncated"  # a whole member, a short block
    assert decode_record(raw[:-200]).status == "truncated"  # the same, uncompressed
    assert decode_record(b"\x1f\x8b\x08\x00garbage-after-the-magic").status == "bad_gzip"
    assert decode_record(good[7:]).status == "wrong_offset"  # inside a gzip member
    assert decode_record(gzip.compress(b"com,example)/ 20240101 {}\n")).status == "wrong_offset"
    assert decode_record(b"not gzip, not a record").status == "wrong_offset"
    assert decode_record(gzip.compress(b"WARC/1.0\r\nnonsense\r\n\r\n")).status == "not_warc"
    arc = b"http://a.example/ 192.0.2.1 20080101123456 text/html 1234\nHTTP/1.0 200 OK\r\n\r\n<html>"
    assert decode_record(gzip.compress(arc)).status == decode_record(arc).status == "arc_format"
    assert decode_record(gzip.compress(b"filedesc://x.arc 0.0.0.0 20080101 text/plain 76\n")).status \
        == "arc_format"
    not_http = warc_record("response", "dns:a.example", b"a.example. 300 IN A 192.0.2.1", content_type="text/dns")
    assert decode_record(not_http).status == "not_http"


def test_real_records_cut_shortened_and_misplaced(shared_data):
    data = (shared_data / "cc-sample" / "CC-MAIN-2020-34-excerpt.warc.gz").read_bytes()
    members = gzip_members(data)
    statuses = [decode_record(data[o:o + n]).status for o, n in members]
    assert statuses.count("ok") == 16 and set(statuses) == {"ok", "request_record", "metadata_record",
                                                            "warcinfo_record"}
    offset, length = next((o, n) for (o, n), s in zip(members, statuses) if s == "ok")
    record = data[offset:offset + length]
    assert decode_record(record[: length - 100]).status == "cut_short"
    short_block = gzip.compress(zlib.decompress(record, 31)[:-300])
    assert parse_record(short_block)["status"] == "truncated"
    assert decode_record(data[offset + 100:offset + length]).status == "wrong_offset"
    assert decode_record(data[offset:offset + length + 500]).status == "ok"  # CDX length too long: still read


def test_outlinks_are_bounded_by_count_length_and_bytes():
    huge_base = "http://a.example/" + "d/" * 100_000
    links = "".join(f'<a href="p{i}.html">x</a>' for i in range(2_000))
    page = f'<html><head><base href="{huge_base}"></head><body>{links}</body></html>'.encode()
    started = time.process_time()
    doc = parse_record(warc_record("response", "http://a.example/x/", http_response(page)))
    assert doc["status"] == "ok" and time.process_time() - started < 2.0
    assert len(doc["outlinks"]) == MAX_OUTLINKS and doc["outlinks_cut"] == 0
    assert doc["outlinks"][0] == "http://a.example/x/p0.html"  # a base href longer than a URL may be is ignored
    long_links = "".join(f'<a href="/{i}/{"y" * 1_000}">x</a>' for i in range(1_000))
    page = f'<html><body><a href="/{"z" * 5_000}">x</a>{long_links}</body></html>'.encode()
    doc = parse_record(warc_record("response", "http://a.example/", http_response(page)))
    assert sum(map(len, doc["outlinks"])) <= MAX_OUTLINKS_TOTAL_CHARS
    assert doc["outlinks_cut"] == 1 + 1_000 - len(doc["outlinks"]) and len(doc["outlinks"]) > 450
    assert all(len(link) <= MAX_OUTLINK_CHARS for link in doc["outlinks"])
    kept, cut = bound_links(["http://a/" + "x" * n for n in (10, 5_000, 20)])
    assert [len(link) for link in kept] == [19, 29] and cut == 1


def busy(seconds: float) -> str:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    return "done"


def guarded(seconds: float, work: float) -> str:
    try:
        with TimeLimit(seconds):
            return busy(work)
    except RecordTimeout:
        return "timeout"


def test_time_limit_interrupts_a_worker_thread_and_never_fires_late():
    threads_before = threading.active_count()  # servers of tests that ran earlier in the session may still be up
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(guarded, [0.2, 5.0, 0.2], [3.0, 0.05, 0.01]))
    assert results == ["timeout", "done", "done"] and time.monotonic() - started < 2.0
    for _ in range(50):  # blocks ending right at their limit: the exception never escapes the block
        assert guarded(0.002, 0.002) in ("done", "timeout")
    busy(0.05)
    assert threading.active_count() < threads_before + 8


def test_a_record_over_its_time_limit_is_a_timeout_row(monkeypatch):
    monkeypatch.setattr(documents, "html_features", lambda html, url, *_: {"status": busy(30.0)})
    started = time.monotonic()
    doc = parse_record(warc_record("response", "http://a.example/", http_response(PAGE)), record_seconds=0.3)
    assert doc["status"] == "timeout" and "0.3" in doc["error"] and time.monotonic() - started < 3.0


@pytest.mark.slow
def test_fetch_docs_accounts_for_every_record_type(spark, tmp_path):
    from parascout.jobs.fetch_docs import FetchDocsJob
    from testkit.warc import urls_rows, write_table, write_warc
    from tests.conftest import run_job

    archive, root = tmp_path / "archive", tmp_path / "out"
    archive.mkdir()
    refers = (("WARC-Refers-To-Target-URI", "http://a.example/page"), ("WARC-Refers-To-Date", "2024-04-01T08:00:00Z"))
    lost = (("WARC-Refers-To-Target-URI", "http://a.example/gone"), ("WARC-Refers-To-Date", "2023-01-01T00:00:00Z"))
    bomb_body = http_response(gzip_stream(64 * MIB), (("Content-Encoding", "gzip"),))
    records = [
        ("http://a.example/page", warc_record("response", "http://a.example/page", http_response(PAGE)), "20240401080000"),
        ("http://a.example/page", warc_record("revisit", "http://a.example/page", http_response(b""), refers),
         "20240518100000"),
        ("http://a.example/old", warc_record("revisit", "http://a.example/old", http_response(b""), lost),
         "20240518100000"),
        ("http://a.example/req", warc_record("request", "http://a.example/req", b"GET / HTTP/1.1\r\n\r\n"), None),
        ("http://a.example/meta", warc_record("metadata", "http://a.example/meta", b"fetchTimeMs: 5\r\n"), None),
        ("http://a.example/info", warc_record("warcinfo", "http://a.example/info", b"software: x\r\n"), None),
        ("http://a.example/what", warc_record("unknown", "http://a.example/what", b"??"), None),
        ("http://a.example/bomb", warc_record("response", "http://a.example/bomb", bomb_body), None),
        ("http://a.example/links", warc_record("response", "http://a.example/links", http_response(
            f'<html><body><a href="/{"z" * 5_000}">x</a><a href="/b">b</a></body></html>'.encode())), None),
    ]
    urls = urls_rows(write_warc(archive / "types.warc.gz", [(url, data) for url, data, _ in records]))
    for row, (_, _, when) in zip(urls, records):
        row["fetch_time"] = when or "20240518100000"  # the revisit of /page is newer: it is the one selected
    write_table(root, "urls", urls)
    report = run_job(FetchDocsJob, spark, ["--root", str(root), "--warc-prefix", str(archive), "--select", "all"])
    docs = {row["url"]: row.asDict() for row in spark.read.parquet(str(root / "docs")).collect()}
    assert {url: doc["status"] for url, doc in docs.items()} == {
        "http://a.example/page": "ok", "http://a.example/old": "revisit_unresolved",
        "http://a.example/req": "request_record", "http://a.example/meta": "metadata_record",
        "http://a.example/info": "warcinfo_record", "http://a.example/what": "unknown_record_type",
        "http://a.example/bomb": "too_large", "http://a.example/links": "ok"}
    page = docs["http://a.example/page"]
    assert page["refers_to_url"] == "http://a.example/page" and page["warc_offset"] == 0 and page["title"] == "Report"
    assert docs["http://a.example/links"]["outlinks"] == ["http://a.example/b"]
    assert docs["http://a.example/links"]["outlinks_cut"] == 1
    assert report["balanced"] and report["inputs"]["requested"] == 8 and report["kept"] == 2
    assert report["metrics"]["outlinks_cut"] == 1 and report["metrics"]["cut_docs"] == 1
    assert report["filtered"] == {"revisit_unresolved": 1, "request_record": 1, "metadata_record": 1,
                                  "warcinfo_record": 1, "unknown_record_type": 1, "too_large": 1}


def test_mutated_real_records_never_raise_and_get_known_reasons(shared_data):
    data = (shared_data / "cc-sample" / "CC-MAIN-2020-34-excerpt.warc.gz").read_bytes()
    raws = [zlib.decompress(data[o:o + n], 31)[:6000] for o, n in gzip_members(data)]
    rng, known = random.Random(5), BAD_REASONS | FILTERED_REASONS | {"ok"}
    statuses = set()
    for i in range(600):  # bytes flipped, cut out, or header lines inserted; every other one gzipped
        raw = bytearray(rng.choice(raws))
        for _ in range(rng.randint(1, 6)):
            position = rng.randrange(len(raw))
            if rng.random() < 0.4:
                raw[position] = rng.randrange(256)
            elif rng.random() < 0.5:
                del raw[position:position + rng.randint(1, 40)]
            else:
                raw[position:position] = rng.choice([b"\r\n", b":", b"\0", b"Content-Length: 99999999\r\n",
                                                     b"Transfer-Encoding: chunked\r\n", b"Content-Encoding: br\r\n"])
        statuses.add(decode_record(gzip.compress(bytes(raw)) if i % 2 else bytes(raw)).status)
    assert statuses <= known and {"truncated", "not_warc", "request_record"} <= statuses


def test_fetch_docs_refuses_a_negative_record_time_limit(tmp_path):
    from parascout.jobs.errors import ConfigError
    from parascout.jobs.fetch_docs import FetchDocsJob

    with pytest.raises(ConfigError, match="--record-seconds"):
        FetchDocsJob().run(["--root", str(tmp_path), "--warc-prefix", str(tmp_path), "--record-seconds", "-1"])


CHUNK_BOUND_SCRIPT = r"""
import random, resource, sys
from parascout.udfs.fetch.warc_record import RecordProblem, dechunk, decode_record
from testkit.warc import http_response, warc_record

size_kib = int(next(line for line in open("/proc/self/status") if line.startswith("VmSize")).split()[1])
limit = (size_kib << 10) + (64 << 20)  # what the interpreter holds now, and 64 MiB for the records
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
body = b"10\r\n" + b"a" * 16 + b"\r\n-5\r\n" + b"b" * 5600 + b"\r\n0\r\n\r\n"
record = warc_record("response", "http://a.example/x", http_response(body, (("Transfer-Encoding", "chunked"),)))
print(decode_record(record).status)
rng = random.Random(5)
for _ in range(3000):  # fuzzed chunk sizes: the output never outgrows the input
    parts = [rng.choice([b"-5", b"0", b"3", b"ff", b"+2", b"0x1", b"1_0", b"f" * 17, b"-0", b"z"]) + b"\r\n"
             + rng.randbytes(rng.randrange(0, 40)) + b"\r\n" for _ in range(rng.randrange(1, 6))]
    fuzzed = b"".join(parts)
    try:
        assert len(dechunk(fuzzed, [])) <= len(fuzzed)
    except RecordProblem as problem:
        assert problem.reason == "bad_payload"
print("bounded")
"""


def test_a_negative_chunk_size_is_bad_payload_and_memory_stays_bounded(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    result = subprocess.run([sys.executable, "-c", CHUNK_BOUND_SCRIPT], capture_output=True, text=True, timeout=300, check=False,
                            cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["bad_payload", "bounded"]


@pytest.mark.parametrize("size", [b"0x10", b"+10", b"1_0", b"f" * 17, b"-0"])
def test_chunk_sizes_only_python_would_read_are_bad_payload(size):
    body = b"10\r\n" + b"a" * 16 + b"\r\n" + size + b"\r\n" + b"b" * 16 + b"\r\n0\r\n\r\n"
    record = decode_record(warc_record("response", "http://a.example/x",
                                       http_response(body, (("Transfer-Encoding", "chunked"),))))
    assert record.status == "bad_payload" and "chunk size" in record.error
    assert "bad_payload" in BAD_REASONS
