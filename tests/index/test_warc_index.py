"""udfs/index/warc_index.py: WARC/ARC framing, CDX lines checked against cdxj-indexer, WAT links read back."""
from __future__ import annotations

import gzip
import io
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from parascout.udfs.fetch.warc_record import decode_record
from parascout.udfs.index.warc_index import (
    BAD_REASONS,
    FILTERED_REASONS,
    IndexSettings,
    index_file,
    name_stem,
    warcinfo_crawl,
    wat_name,
)
from parascout.udfs.index.wat import read_wat
from parascout.udfs.sample_archive import generate
from tests.support.own_crawl import HERITRIX_WARCINFO, WGET_WARCINFO, warcinfo_bytes, write_own_warc

CC_SAMPLES = ("CC-MAIN-2020-34-excerpt.warc.gz", "CC-MAIN-2024-22-whirlwind.warc.gz")


def index(path: Path, filename: str | None = None, **settings) -> tuple[list[dict], Counter]:
    """(CDX lines parsed, reasons counted) of one file."""
    rows = list(index_file(str(path), filename or path.name, IndexSettings(**settings)))
    reasons = Counter(row["reason"] for row in rows)
    assert set(reasons) <= {"ok", *BAD_REASONS, *FILTERED_REASONS}
    return [parse_line(row["line"]) for row in rows if row["line"]], reasons


def parse_line(line: str) -> dict:
    key, timestamp, fields = line.split(" ", 2)
    return {"surt": key, "timestamp": timestamp, **json.loads(fields)}


def cdxj_indexer(path: Path) -> list[dict]:
    """The real indexer's lines for a file (response records, its default)."""
    from cdxj_indexer.main import write_cdx_index

    out = io.StringIO()
    write_cdx_index(out, [str(path)], {"sort": False, "post_append": False, "dir_root": str(path.parent)})
    return [parse_line(line) for line in out.getvalue().splitlines()]


def comparable(entry: dict) -> tuple:
    """What both indexes must agree on (digests without cdxj's `sha1:` prefix)."""
    return (entry["url"], entry["timestamp"], entry["offset"], entry["length"], entry["status"],
            entry["mime"], entry["digest"].split(":")[-1])


def assert_same_records(ours: list[dict], path: Path) -> None:
    theirs = cdxj_indexer(path)
    assert theirs and sorted(map(comparable, ours)) == sorted(map(comparable, theirs))


def assert_ranges_readable(lines: list[dict], folder: Path) -> None:
    """Each line's (offset, length) is one whole record that decodes as a response."""
    for line in lines:
        with open(folder / line["filename"], "rb") as handle:
            handle.seek(int(line["offset"]))
            record = decode_record(handle.read(int(line["length"])))
        assert record.status == "ok" and record.target_uri == line["url"], line


@pytest.mark.parametrize("name", CC_SAMPLES)
def test_commoncrawl_excerpts_index_like_cdxj_indexer(shared_data, name):
    path = shared_data / "cc-sample" / name
    lines, reasons = index(path)
    assert_same_records(lines, path)
    assert reasons["ok"] == len(lines) and reasons["request_record"] >= len(lines)
    assert all(line["languages"] and line["charset"] and line["mime-detected"] for line in lines)


@pytest.mark.parametrize(("name", "crawl"), zip(CC_SAMPLES, ("CC-MAIN-2020-34", "CC-MAIN-2024-22")))
def test_commoncrawl_lines_name_the_crawl_of_the_warcinfo_record(shared_data, name, crawl):
    lines, reasons = index(shared_data / "cc-sample" / name)
    assert reasons["warcinfo_record"] == 1 and lines and {line["crawl"] for line in lines} == {crawl}
    assert list(lines[0])[-1] == "crawl"  # after CommonCrawl's keys, in their order


def test_own_crawls_lines_name_the_warcinfo_crawl_else_the_warc_name_stem(tmp_path):
    cases = {"heritrix-20240805-00001.warc.gz": (HERITRIX_WARCINFO, "weekly-news"),
             "mycrawl-00001.warc.gz": (WGET_WARCINFO, "mycrawl-00001"),  # wget names no crawl
             "bare.warc.gz": (None, "bare")}  # no warcinfo record at all
    for name, (warcinfo, crawl) in cases.items():
        urls = write_own_warc(tmp_path / name, warcinfo)
        lines, reasons = index(tmp_path / name, f"crawls/{name}")
        assert [line["url"] for line in lines] == urls and {line["crawl"] for line in lines} == {crawl}, name
        assert reasons["warcinfo_record"] == (warcinfo is not None) and reasons["ok"] == len(urls)
    assert warcinfo_crawl(warcinfo_bytes("x.warc.gz", {"IsPartOf": " job-7 "})) == "job-7"
    assert warcinfo_crawl(b"\x1f\x8b\x08\x00 not deflate") is None
    assert [name_stem(name) for name in ("a/b.warc.gz", "c.arc", "d.warc", "e.gz", ".warc")] == [
        "b", "c", "d", "e.gz", ".warc"]


def test_uncompressed_and_whole_file_gzip_warcs(shared_data, tmp_path):
    plain = tmp_path / "plain.warc"
    plain.write_bytes(gzip.decompress((shared_data / "cc-sample" / CC_SAMPLES[0]).read_bytes()))
    lines, _ = index(plain)
    assert len(lines) == 16
    assert_same_records(lines, plain)
    assert_ranges_readable(lines, tmp_path)

    whole = tmp_path / "whole.warc.gz"
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    lines, reasons = index(whole)
    assert not lines and reasons == {"whole_file_gzip": 1}
    copies = tmp_path / "per-record"
    lines, reasons = index(whole, recompress_dir=str(copies))
    assert len(lines) == 16 and reasons["ok"] == 16
    assert_same_records(lines, copies / "whole.warc.gz")
    assert_ranges_readable(lines, copies)


def test_broken_files_are_counted_not_raised(shared_data, tmp_path):
    path = shared_data / "cc-sample" / CC_SAMPLES[0]
    data = path.read_bytes()
    last = max(int(line["offset"]) for line in index(path)[0])
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[:last + 100])  # the file ends inside its last response
    lines, reasons = index(cut)
    assert reasons["cut_short"] == 1 and len(lines) == reasons["ok"] == 15
    garbage = tmp_path / "garbage.warc.gz"
    garbage.write_bytes(data[:2000] + b"\x1f\x8b\x08\x00not deflate at all" + data[2000:])
    _, reasons = index(garbage)
    assert reasons["bad_gzip"] == 1
    not_warc = tmp_path / "notes.warc"
    not_warc.write_bytes(b"hello, this is not an archive\n")
    assert index(not_warc)[1] == {"not_warc": 1}
    assert index(tmp_path / "missing.warc.gz")[1] == {"unreadable_file": 1}


def test_arc_records_are_framed_and_counted(tmp_path):
    body = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body>hello</body></html>"
    header = f"filedesc://x.arc 0.0.0.0 20200101000000 text/plain {5}\n".encode()
    record = f"http://example.com/ 10.0.0.1 20200101000000 text/html {len(body)}\n".encode()
    arc = tmp_path / "x.arc"
    arc.write_bytes(header + b"hello\n" + record + body + b"\n")
    assert index(arc)[1] == {"arc_format": 2}


def test_sample_archive_warcs_index_like_its_cdx_and_like_cdxj_indexer(tmp_path):
    archive = tmp_path / "archive"
    summary = generate(str(archive), hosts=2, seed=7, pages_per_host=20, progress=False, verbose=False)
    ours = []
    for filename in summary["warc_files"]:
        lines, _ = index(archive / filename, filename, wat_dir=str(tmp_path / "wat"))
        assert_same_records(lines, archive / filename)
        ours += lines
    with gzip.open(archive / "indexes" / "cdx-00000.gz", "rt") as handle:
        theirs = [parse_line(line) for line in handle]

    def key(entry):
        return (entry["surt"], entry["timestamp"], entry["url"], entry["status"], entry["mime-detected"],
                entry["digest"], entry["offset"], entry["length"], entry["filename"], entry.get("redirect"))

    assert sorted(map(key, ours)) == sorted(map(key, theirs))
    pages = [(a, b) for a in ours for b in theirs if key(a) == key(b) and b.get("languages")]
    agree = sum(a.get("languages", "").split(",")[0] == b["languages"].split(",")[0] for a, b in pages)
    assert pages and agree / len(pages) >= 0.9

    warc_name = next(name for name in summary["warc_files"] if name.startswith("warc/"))
    with open(tmp_path / "wat" / wat_name(warc_name), "rb") as stream:
        docs = [doc for doc in read_wat(stream) if doc["status"] == "ok"]
    with open(archive / "wat" / wat_name(warc_name.split("/")[-1]), "rb") as stream:
        real = {doc["url"]: doc for doc in read_wat(stream) if doc["status"] == "ok"}
    assert docs and all(set(doc["outlinks"]) <= set(real[doc["url"]]["outlinks"]) for doc in docs)
    assert sum(len(doc["outlinks"]) for doc in docs) >= 0.9 * sum(len(real[d["url"]]["outlinks"]) for d in docs)
    assert all((doc["warc_offset"], doc["warc_length"]) == (real[doc["url"]]["warc_offset"],
                                                            real[doc["url"]]["warc_length"]) for doc in docs)


def test_wat_name_follows_commoncrawl():
    assert wat_name("a/b.warc.gz") == "a_b.warc.wat.gz" and wat_name("c.warc") == "c.warc.wat.gz"


@pytest.fixture(autouse=True)
def _no_leftovers(tmp_path):
    yield
    shutil.rmtree(tmp_path, ignore_errors=True)
