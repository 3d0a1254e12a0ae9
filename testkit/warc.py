"""Hand-made WARC and WAT records and files (pages, broken records, CDX-like rows, `urls` tables) and warcio
readings of them, the inputs of fetch and index tests and of the fetch benchmarks."""
from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from pathlib import Path

import pandas as pd
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from parascout.udfs.common import storage
from parascout.udfs.common.urls import url_host
from parascout.udfs.fetch.documents import empty_doc, parse_record
from parascout.udfs.index.wat import _container_location, wat_document

ENGLISH = ("The committee published its annual report on the protection of coastal waters. "
           "It describes how fishing quotas were shared between the regions and what changed this year. ")
GERMAN = ("Der Ausschuss hat seinen Jahresbericht über den Schutz der Küstengewässer veröffentlicht. "
          "Er beschreibt, wie die Fangquoten zwischen den Regionen verteilt wurden und was sich geändert hat. ")


def html_page(title: str, paragraphs: list[str], images: tuple[str, ...] = (), links: tuple[str, ...] = (),
              lang: str = "en") -> str:
    """A small HTML page with the given paragraphs, images and links."""
    body = "".join(f"<p>{text}</p>" for text in paragraphs)
    body += "".join(f'<img src="{src}">' for src in images)
    body += "".join(f'<a href="{href}">link</a>' for href in links)
    return (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>'
            f"<script>var ignored = 'x';</script></head><body><h1>{title}</h1>{body}</body></html>")


def record_bytes(url: str, payload: bytes | str, content_type: str = "text/html; charset=utf-8",
                 status: str = "200 OK", headers: tuple[tuple[str, str], ...] = (), record_type: str = "response",
                 warc_headers: dict | None = None) -> bytes:
    """One gzip member holding a WARC response record, written by warcio (`warc_headers`: WARC-Date, WARC-Record-ID...
    of its own, else warcio's, which differ at each call)."""
    data = payload.encode("utf-8") if isinstance(payload, str) else payload
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    http = StatusAndHeaders(status, [("Content-Type", content_type), *headers], protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(url, record_type, payload=io.BytesIO(data), http_headers=http,
                                                  warc_headers_dict=warc_headers or {}))
    return out.getvalue()


def write_warc(path: Path, records: list[tuple[str, bytes]], filename: str | None = None) -> list[dict]:
    """Concatenate (url, record bytes) into a WARC file; CDX-like rows with each member's offset and length."""
    rows, offset = [], 0
    with open(path, "wb") as handle:
        for url, data in records:
            handle.write(data)
            rows.append({"url": url, "warc_filename": filename or path.name, "warc_offset": offset,
                         "warc_length": len(data)})
            offset += len(data)
    return rows


def gzip_members(data: bytes) -> list[tuple[int, int]]:
    """(offset, length) of every gzip member of a file, found by inflating it."""
    members, position = [], 0
    while position < len(data):
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        inflater.decompress(data[position:])
        end = len(data) - len(inflater.unused_data)
        members.append((position, end - position))
        position = end
    return members


def wat_record_bytes(url: str, links: list[dict], title: str | None = None, status: str = "200",
                     warc_type: str = "response", base: str | None = None) -> bytes:
    """One gzip member holding a WAT metadata record shaped like CommonCrawl's (Envelope -> ... -> Links)."""
    head = {key: value for key, value in (("Title", title), ("Base", base)) if value}
    envelope = {"Format": "WARC/1.0", "WARC-Header-Metadata": {"WARC-Type": warc_type, "WARC-Target-URI": url},
                "Payload-Metadata": {"Actual-Content-Type": "application/http; msgtype=response",
                                     "HTTP-Response-Metadata": {
                                         "Response-Message": {"Version": "HTTP/1.1", "Status": status},
                                         "Headers": {"Content-Type": "text/html; charset=UTF-8"},
                                         "HTML-Metadata": {"Head": head, "Links": links}}}}
    container = {"Filename": "CC-MAIN-x.warc.gz", "Offset": "1234",
                 "Gzip-Metadata": {"Header-Length": "10", "Deflate-Length": "500", "Footer-Length": "8"}}
    payload = json.dumps({"Container": container, "Envelope": envelope}).encode("utf-8")
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    writer.write_record(writer.create_warc_record(url, "metadata", payload=io.BytesIO(payload),
                                                  warc_content_type="application/json"))
    return out.getvalue()


def write_table(root, name: str, rows: list[dict]) -> None:
    storage.write_parquet_table(pd.DataFrame(rows), str(root / name))


def urls_rows(rows: list[dict]) -> list[dict]:
    """`urls` rows (DESIGN.md columns that fetch-docs reads) for CDX-like rows."""
    from parascout.udfs.common.urls import url_host

    return [{**row, "host": url_host(row["url"]), "status": "200", "fetch_time": "20240101000000"} for row in rows]


def build_mixed_warc(folder: Path, good: int = 6, name: str = "mixed.warc.gz") -> tuple[list[dict], dict[str, str]]:
    """A WARC with `good` HTML pages and one of each broken kind; (CDX-like rows, expected status per URL)."""
    records, expected = [], {}
    for i in range(good):
        text = ENGLISH if i % 2 == 0 else GERMAN
        url = f"http://site{i % 2}.example.com/page-{i}.html"
        records.append((url, record_bytes(url, html_page(f"Page {i}", [text] * (2 + i % 3), images=(f"p{i}.jpg",)))))
        expected[url] = "ok"
    cut = record_bytes("http://site0.example.com/cut.html", html_page("cut", [ENGLISH] * 3))
    broken = [("http://site0.example.com/cut.html", cut[: len(cut) // 2]),
              ("http://site0.example.com/garbage", os.urandom(300)),
              ("http://site0.example.com/doc.pdf", record_bytes("http://site0.example.com/doc.pdf", b"%PDF-1.4 ...",
                                                                "application/pdf"))]
    for url, data in broken:  # what the record parser says of these bytes (udfs.fetch.documents owns those reasons)
        records.append((url, data))
        expected[url] = parse_record(data, url)["status"]
        assert expected[url] != "ok"
    big = record_bytes("http://site0.example.com/big.html", html_page("big", [os.urandom(20000).hex()]))
    records.append(("http://site0.example.com/big.html", big))
    expected["http://site0.example.com/big.html"] = "too_large"
    tail = record_bytes("http://site1.example.com/tail.html", html_page("tail", [GERMAN]))
    records.append(("http://site1.example.com/tail.html", tail))
    expected["http://site1.example.com/tail.html"] = "cut_short"  # the file ends inside it
    rows = write_warc(folder / name, records)
    with open(folder / name, "r+b") as handle:  # the file ends in the middle of its last record
        handle.truncate(rows[-1]["warc_offset"] + len(tail) // 2)
    return rows, expected


def file_records(number: int, pages: int) -> list[tuple[str, bytes]]:
    """(url, record) of WARC file `number`: `pages` English and German pages of one of three sites; file 0 adds a
    PDF (filtered) and bytes that are no WARC record (bad)."""
    records = []
    for page in range(pages):
        url = f"http://site{number % 3}.example.com/{number}/page-{page}.html"
        text = ENGLISH if page % 2 else GERMAN
        records.append((url, record_bytes(url, html_page(f"Page {number}-{page}", [text] * (1 + page % 3)))))
    if number == 0:
        pdf = "http://site0.example.com/doc.pdf"
        records += [(pdf, record_bytes(pdf, b"%PDF-1.4 ...", "application/pdf")),
                    ("http://site0.example.com/garbage", b"this is not a WARC record at all " * 10)]
    return records


def http_response(body: bytes, headers: tuple[tuple[str, str], ...] = (), status: str = "200 OK",
                  content_type: str = "text/html; charset=utf-8") -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {content_type}", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def warc_record(warc_type: str, url: str, block: bytes, extra: tuple[tuple[str, str], ...] = (),
                content_type: str = "application/http; msgtype=response", compress: bool = True,
                declared_length: int | None = None) -> bytes:
    """One WARC record written by hand (any type, any header), as one gzip member unless compress=False."""
    headers = [("WARC-Type", warc_type), ("WARC-Record-ID", f"<urn:uuid:{abs(hash((url, warc_type)))}>"),
               ("WARC-Date", "2024-05-18T10:00:00Z"), ("WARC-Target-URI", url), ("Content-Type", content_type),
               *extra, ("Content-Length", str(len(block) if declared_length is None else declared_length))]
    raw = b"WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers).encode() + b"\r\n" + block + b"\r\n\r\n"
    return gzip.compress(raw) if compress else raw


def warcio_read_wat(stream) -> list[dict]:
    """The baseline: udfs.index.wat.read_wat as it was on warcio (same rows, warcio reads the records)."""
    rows = []
    for record in ArchiveIterator(stream):
        if record.rec_type != "metadata":
            continue
        url = record.rec_headers.get_header("WARC-Target-URI")
        try:
            payload = json.loads(record.content_stream().read())
            doc = wat_document(payload["Envelope"])
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            rows.append({**empty_doc("bad_wat_json", f"{type(error).__name__}: {error}"[:200]), "source": "wat",
                         "url": url, "host": url_host(url) if url else None})
            continue
        rows.append({**doc, **_container_location(payload.get("Container") or {})})
    return rows


def http_responses(warc_paths: list[Path]) -> list[tuple[str, str]]:
    """(url, decoded HTML) of the 200 text/html responses of WARC files (warcio: outside the timed code)."""
    from parascout.udfs.fetch.documents import decode_html

    pages = []
    for path in warc_paths:
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type != "response" or record.http_headers is None:
                    continue
                content_type = record.http_headers.get_header("Content-Type") or ""
                if record.http_headers.get_statuscode() != "200" or "html" not in content_type:
                    continue
                payload = record.content_stream().read()
                pages.append((record.rec_headers.get_header("WARC-Target-URI"),
                              decode_html(payload, content_type)[0]))
    return pages
