"""WARC and ARC files -> CommonCrawl-style CDX lines and WAT link records (index-warcs' per-file work).

A file is cut into records by framing alone: gzip members (one per record, as CommonCrawl, wget,
Heritrix and Browsertrix write them) or, uncompressed, the header plus its Content-Length (an ARC
record: the length on its header line). Each record's bytes, exactly what a byte-range GET of
(offset, length) returns, then go through udfs.fetch.documents / udfs.fetch.warc_record, the one WARC parser, so
the index says what fetch-docs will read there. A response becomes a `SURT TIMESTAMP {json}` line and,
with a WAT folder, a WAT metadata record with its links (what udfs.index.wat reads back); every other record
is counted under its reason. A line's `crawl` key (not one of CommonCrawl's: their filenames name the crawl)
is the `isPartOf` field of the file's last warcinfo record before it (CommonCrawl and Heritrix write one; wget
does not), else the file's name stem.

A gzip member holding more than one record (a whole file gzipped at once) cannot be range-read: the
first such member makes the file `whole_file_gzip` (one counted record), unless a recompression folder
is given: the file is then rewritten there one gzip member per record and that copy is indexed.
"""
from __future__ import annotations

import contextlib
import gzip
import json
import re
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from parascout.udfs.common import range_reads, storage
from parascout.udfs.common.langs import UnknownLanguage, to_iso639_3
from parascout.udfs.common.urls import surt
from parascout.udfs.fetch import warc_record
from parascout.udfs.fetch.documents import parse_record_and_headers
from parascout.udfs.index.cdx import format_cdx_line

#: bytes of a record's start read to find where it ends (real WARC headers stay under a few kB)
HEAD_BYTES = 64 * 1024
#: blank bytes a writer may leave after a record inside its gzip member before it counts as a second record
TRAILER_SLACK = 64
READ_CHUNK = 1 << 20
WAT_BATCH_ROWS = 1000
WARC_CONTENT_LENGTH = re.compile(rb"(?:^|\n)content-length:[ \t]*(\d{1,15})[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
ARC_HEADER_LINE = re.compile(rb"^\S+ \S+ \d{8,14} \S* (\d{1,15})\r?$")
GZIP_MAGIC = b"\x1f\x8b"
#: names of archive files (longest first: the stem of a name is what is left without its suffix)
ARCHIVE_SUFFIXES = (".warc.gz", ".arc.gz", ".warc", ".arc")

#: per-file and framing reasons of this module; record reasons come from udfs.fetch.warc_record
BAD_REASONS = frozenset({*warc_record.BAD_REASONS, "unreadable_file", "multi_record_member", "missing_url",
                         "bad_url", "missing_date"})
FILTERED_REASONS = frozenset({*warc_record.FILTERED_REASONS, "whole_file_gzip", "non_http_response"}) - {
    "unsupported_encoding"}
#: record statuses met after the HTTP headers were read: the record is still a response and is indexed
BODY_STATUSES = frozenset({"ok", "unsupported_encoding", "too_large"})
OUTPUT_SCHEMA = "reason string, surt string, timestamp string, line string"


@dataclass
class FramedRecord:
    """One record's place in its file and its bytes (None with a `problem` when they are not kept)."""

    offset: int
    length: int
    data: bytes | None
    problem: str | None = None


class WholeFileGzip(Exception):
    """The file's first gzip member holds more than one record: its records have no range of their own."""


@dataclass(frozen=True)
class IndexSettings:
    max_record_bytes: int = warc_record.MAX_UNCOMPRESSED_BYTES
    record_seconds: float | None = warc_record.RECORD_SECONDS
    wat_dir: str | None = None
    recompress_dir: str | None = None
    s3_endpoint: str | None = None


# ---- framing ---------------------------------------------------------------------------
def record_end(head: bytes) -> int | None:
    """Where the record starting at `head` ends, before the blank lines that close it (as warcio measures an
    uncompressed record); None: not known yet."""
    if head.startswith(b"WARC/"):
        end = head.find(b"\r\n\r\n")
        match = WARC_CONTENT_LENGTH.search(head, 0, end) if end >= 0 else None
        return end + 4 + int(match[1]) if match else None
    line_end = head.find(b"\n")
    match = ARC_HEADER_LINE.match(head[:line_end]) if line_end > 0 else None
    return line_end + 1 + int(match[1]) if match else None


def plain_records(stream, max_record_bytes: int, initial: bytes = b"") -> Iterator[FramedRecord]:
    """Records of an uncompressed WARC/ARC stream (`initial`: its bytes already read); bytes that start no
    record end the file (`not_warc`)."""
    buffer, offset, ended = bytearray(initial), 0, False

    def fill(size: int) -> None:
        nonlocal ended
        while len(buffer) < size and not ended:
            chunk = stream.read(max(READ_CHUNK, size - len(buffer)))
            ended = not chunk
            buffer.extend(chunk)

    while True:
        fill(HEAD_BYTES)
        blank = len(buffer) - len(buffer.lstrip(b"\r\n"))
        del buffer[:blank]
        offset += blank
        if not buffer:
            fill(HEAD_BYTES)
            if not buffer:
                return
            continue
        end = record_end(bytes(buffer[:HEAD_BYTES]))
        if end is None:
            yield FramedRecord(offset, len(buffer), None, "not_warc")
            return
        if end > max_record_bytes:  # streamed past, never held
            skipped = 0
            while skipped < end and buffer:
                step = min(end - skipped, len(buffer))
                del buffer[:step]
                skipped += step
                fill(min(READ_CHUNK, end - skipped))
            yield FramedRecord(offset, skipped, None, "too_large")
            offset += skipped
            continue
        fill(end)
        data = bytes(buffer[:end])
        del buffer[:end]
        yield FramedRecord(offset, len(data), data)
        offset += len(data)


def gzip_records(chunks: Iterator[bytes], max_record_bytes: int) -> Iterator[FramedRecord]:
    """One record per gzip member, with the member's offset and length; raises WholeFileGzip when the first
    member holds several records (a later one is counted `multi_record_member`)."""
    position, decoder, first = 0, None, True
    for chunk in chunks:
        data = chunk
        while data:
            if decoder is None:
                decoder, start, member, head, inflated, end = zlib.decompressobj(31), position, bytearray(), \
                    bytearray(), 0, None
                problem = None
            try:
                out = decoder.decompress(data, READ_CHUNK)
            except zlib.error:
                yield FramedRecord(start, position - start, None, "bad_gzip")  # no way to find the next member
                return
            rest = decoder.unused_data if decoder.eof else decoder.unconsumed_tail
            consumed = len(data) - len(rest)
            if problem is None:
                member += data[:consumed]
            position, data, inflated = position + consumed, rest, inflated + len(out)
            if len(head) < HEAD_BYTES:
                head += out[:HEAD_BYTES - len(head)]
                end = record_end(bytes(head))
            if problem is None and end is not None and inflated > end + TRAILER_SLACK:
                if first:
                    raise WholeFileGzip(f"the first gzip member holds more than one record ({inflated} bytes so far)")
                problem, member = "multi_record_member", bytearray()
            if problem is None and len(member) > max_record_bytes:
                problem, member = "too_large", bytearray()
            if decoder.eof:
                yield FramedRecord(start, position - start, bytes(member) if problem is None else None, problem)
                decoder, first = None, False
    if decoder is not None:  # the file ends inside a member: its bytes say cut_short
        yield FramedRecord(start, position - start, bytes(member) if problem is None else None, problem)


def framed_records(path: str, settings: IndexSettings) -> Iterator[FramedRecord]:
    """The records of a file (gzip detected from its first bytes)."""
    with contextlib.closing(range_reads.open_binary(path, settings.s3_endpoint)) as stream:
        first = stream.read(READ_CHUNK)
        if first[:2] == GZIP_MAGIC:
            yield from gzip_records(_chain(first, iter(lambda: stream.read(READ_CHUNK), b"")),
                                    settings.max_record_bytes)
        else:
            yield from plain_records(stream, settings.max_record_bytes, first)


def recompressed_records(path: str, target: str, settings: IndexSettings) -> Iterator[FramedRecord]:
    """A whole-file gzip rewritten to `target` one gzip member per record; the new members' places."""
    offset = 0
    with contextlib.closing(range_reads.open_binary(path, settings.s3_endpoint)) as source, \
            gzip.GzipFile(fileobj=source) as inflated, storage.open_output(target) as out:
        for record in plain_records(inflated, settings.max_record_bytes):
            if record.data is None:
                yield FramedRecord(offset, 0, None, record.problem)
                continue
            member = gzip.compress(record.data + b"\r\n\r\n", compresslevel=6, mtime=0)
            out.write(member)
            yield FramedRecord(offset, len(member), member)
            offset += len(member)


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


# ---- one record -> a CDX line and a WAT record -------------------------------------------
def cdx_timestamp(warc_date: str | None) -> str | None:
    """'2024-05-18T12:34:56Z' -> '20240518123456' (ARC's 14 digits pass as they are)."""
    digits = re.sub(r"\D", "", warc_date or "")[:14]
    return digits if len(digits) == 14 else None


def record_languages(doc: dict, content_language: str | None) -> str | None:
    """CDX `languages`: CLD2's reliable answer, then what the page declares (<html lang>, Content-Language),
    then CLD2's unreliable guess; ISO 639-3, comma-separated."""
    declared = []
    for code in (doc.get("html_lang"), *(content_language or "").split(",")):
        if code and code.strip():
            with contextlib.suppress(UnknownLanguage):
                declared.append(to_iso639_3(code))
    cld2 = doc.get("cld2_lang")
    ordered = [cld2 if doc.get("cld2_reliable") else None, *declared, cld2]
    return ",".join(dict.fromkeys(code for code in ordered if code)) or None


def name_stem(filename: str) -> str:
    """An archive's name without folders and suffix: 'crawls/mycrawl-00001.warc.gz' -> 'mycrawl-00001'."""
    name = filename.rsplit("/", 1)[-1]
    suffix = next((suffix for suffix in ARCHIVE_SUFFIXES if name.endswith(suffix)), "")
    return name.removesuffix(suffix) or name


def warcinfo_crawl(data: bytes) -> str | None:
    """The `isPartOf` field of a warcinfo record's bytes (the crawl's name), None when it has none or the
    record cannot be read."""
    try:
        raw = warc_record.inflate_member(data)
    except warc_record.RecordProblem:
        return None
    block = raw.partition(b"\r\n\r\n")[2]
    for line in block.decode("utf-8", "replace").splitlines():
        name, colon, value = line.partition(":")
        if colon and name.strip().lower() == "ispartof" and value.strip():
            return value.strip()
    return None


def index_record(framed: FramedRecord, filename: str, settings: IndexSettings, crawl: str | None = None
                 ) -> tuple[str, dict | None]:
    """(reason, CDX fields with the doc's links) of one framed record; reason 'ok' for an indexed response,
    whose line names `crawl`."""
    if framed.data is None:
        return framed.problem or "not_warc", None
    record, doc = parse_record_and_headers(framed.data, None, settings.record_seconds)
    if record is None:
        return doc["status"], None
    if record.status == "not_http" and record.warc_type == "response":
        return "non_http_response", None  # a dns: or ftp: capture, as Heritrix writes them
    if record.status not in BODY_STATUSES or record.http_status is None:
        return record.status, None
    url = record.target_uri
    if not url:
        return "missing_url", None
    key, timestamp = surt(url), cdx_timestamp(record.warc_date)
    if not key:
        return "bad_url", None
    if not timestamp:
        return "missing_date", None
    digest = record.payload_digest or ""
    fields = {
        "url": url, "mime": record.content_type or "unk",
        "mime-detected": (record.identified_type or "").split(";")[0].strip().lower() or None,
        "status": str(record.http_status), "digest": digest.split(":", 1)[-1] if digest else None,
        "length": str(framed.length), "offset": str(framed.offset), "filename": filename,
        "charset": doc["charset"].upper() if doc.get("charset") else None,
        "languages": record_languages(doc, record.http_headers.get("content-language")),
        "redirect": (doc.get("outlinks") or [None])[0] if doc["status"] == "http_redirect" else None,
        "truncated": record.warc_truncated, "crawl": crawl,
    }
    return "ok", {"surt": key, "timestamp": timestamp, "fields": fields, "doc": doc,
                  "warc_date": record.warc_date, "content_type": record.http_headers.get("content-type")}


def wat_member(indexed: dict, gzipped: bool) -> bytes:
    """The WAT metadata record (one gzip member) of an indexed response, in CommonCrawl's layout: the
    container's place, the HTTP status and type, and for HTML pages the title and links."""
    fields, doc = indexed["fields"], indexed["doc"]
    length, offset = int(fields["length"]), fields["offset"]
    lengths = ("10", str(length - 18), "8") if gzipped else ("0", str(length), "0")
    response = {"Response-Message": {"Status": fields["status"]},
                "Headers": {"Content-Type": indexed["content_type"] or ""}}
    if doc["status"] == "ok":
        links = [{"path": "A@/href", "url": link} for link in doc.get("outlinks") or []]
        response["HTML-Metadata"] = {"Head": {"Title": doc.get("title")}, "Links": links}
    envelope = {"Format": "WARC", "WARC-Header-Metadata": {"WARC-Type": "response", "WARC-Target-URI": fields["url"],
                                                           "WARC-Date": indexed["warc_date"]},
                "Payload-Metadata": {"HTTP-Response-Metadata": response}}
    container = {"Filename": fields["filename"], "Compressed": gzipped, "Offset": offset,
                 "Gzip-Metadata": dict(zip(("Header-Length", "Deflate-Length", "Footer-Length"), lengths))}
    block = json.dumps({"Container": container, "Envelope": envelope}, ensure_ascii=False).encode("utf-8")
    record_id = uuid.uuid5(uuid.NAMESPACE_URL, f"{fields['filename']}#{offset}")  # the same on a rerun
    head = (f"WARC/1.0\r\nWARC-Type: metadata\r\nWARC-Target-URI: {fields['url']}\r\n"
            f"WARC-Date: {indexed['warc_date']}\r\nWARC-Record-ID: <urn:uuid:{record_id}>\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(block)}\r\n\r\n").encode()
    return gzip.compress(head + block + b"\r\n\r\n", compresslevel=6, mtime=0)


def wat_name(filename: str) -> str:
    """CommonCrawl's WAT name for a WARC name: x.warc.gz -> x.warc.wat.gz (folders flattened)."""
    return filename.replace("/", "_").removesuffix(".gz") + ".wat.gz"


# ---- one file ----------------------------------------------------------------------------
def index_file(path: str, filename: str, settings: IndexSettings) -> Iterator[dict]:
    """OUTPUT_SCHEMA rows of one file: a CDX line per indexed response, a reason per other record; the
    file's WAT written beside (atomically) when settings.wat_dir is set."""
    wat = storage.open_output(storage.join(settings.wat_dir, wat_name(filename))) if settings.wat_dir else None
    with wat or contextlib.nullcontext() as wat_out:
        try:
            yield from _index_records(framed_records(path, settings), filename, settings, wat_out)
        except WholeFileGzip:
            if not settings.recompress_dir:
                yield {"reason": "whole_file_gzip", "surt": None, "timestamp": None, "line": None}
                return
            target = storage.join(settings.recompress_dir, filename)
            yield from _index_records(recompressed_records(path, target, settings), filename, settings, wat_out)
        except (OSError, range_reads.ReadError, EOFError, zlib.error):  # missing, unreadable or undecodable file
            yield {"reason": "unreadable_file", "surt": None, "timestamp": None, "line": None}


def _index_records(records: Iterator[FramedRecord], filename: str, settings: IndexSettings, wat_out
                   ) -> Iterator[dict]:
    crawl = name_stem(filename)
    for framed in records:
        reason, indexed = index_record(framed, filename, settings, crawl)
        if reason == warc_record.RECORD_TYPE_REASONS["warcinfo"]:
            crawl = warcinfo_crawl(framed.data) or name_stem(filename)
        if indexed is None:
            yield {"reason": reason, "surt": None, "timestamp": None, "line": None}
            continue
        if wat_out is not None:
            wat_out.write(wat_member(indexed, framed.data[:2] == GZIP_MAGIC))
        yield {"reason": "ok", "surt": indexed["surt"], "timestamp": indexed["timestamp"],
               "line": format_cdx_line(indexed["surt"], indexed["timestamp"], indexed["fields"])}


def index_files(settings: IndexSettings):
    """A mapInPandas function: (path, filename) rows in, OUTPUT_SCHEMA rows out."""

    def index(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        columns = ["reason", "surt", "timestamp", "line"]
        for batch in batches:
            for path, filename in zip(batch["path"], batch["filename"]):
                rows = []
                for row in index_file(path, filename, settings):
                    rows.append(row)
                    if len(rows) >= WAT_BATCH_ROWS:
                        yield pd.DataFrame(rows, columns=columns)
                        rows = []
                if rows:
                    yield pd.DataFrame(rows, columns=columns)

    return index
