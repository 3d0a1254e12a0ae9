"""One archived WARC record -> the document features parascout keeps (the `docs` table).

`parse_record(data, url)` takes the bytes of one record exactly as a byte-range GET
returns them (a gzip member, or an uncompressed record), decodes it with
udfs.fetch.warc_record (bounded, every record type a status) within a time limit, and
returns a dict of the `docs` columns: status ('ok' or the reason it is not usable), HTTP status and type,
the charset used and where it came from, CLD2's language with its reliability and
share, text length, paragraph count, outlinks resolved against the base URL and
normalised (with a same-host flag), image file names, and the STRAND linearisation
of the markup ("[START:p]", "[END:p]", "[Chunk:123]"), with the page's paragraphs for
the `texts` table (udfs.fetch.html_text does the HTML part). It never raises on bad bytes.
"""
from __future__ import annotations

import codecs
import re

from parascout.udfs.common import tables
from parascout.udfs.common.urls import normalise_link, url_host
from parascout.udfs.fetch.config import DEFAULT, ExtractionConfig
from parascout.udfs.fetch.html_text import EMPTY_TEXT_FIELDS, TEXT_FIELDS_SCHEMA, html_features
from parascout.udfs.fetch.markup_guard import markup_problem
from parascout.udfs.fetch.warc_record import (
    RECORD_SECONDS,
    DecodedRecord,
    RecordTimeout,
    TimeLimit,
    decode_record,
)

#: Spark DDL of the `docs` table (the fetch-docs job's output schema)
DOCS_SCHEMA = tables.ddl("docs")
DOC_COLUMNS = tables.columns("docs")
#: what a fetch task returns per record: the docs columns and the page's paragraphs (fetch-docs writes
#: them to `docs` and `texts`, so `docs` stays light)
RECORD_SCHEMA = f"{DOCS_SCHEMA}, {TEXT_FIELDS_SCHEMA}"
RECORD_COLUMNS = [part.strip().split(" ", 1)[0] for part in RECORD_SCHEMA.split(", ")]

HTML_TYPES = ("text/html", "application/xhtml+xml")
#: document statuses this module gives (records that are not ok keep udfs.fetch.warc_record's reason)
BAD_REASONS = frozenset({"parse_error", "html_too_complex"})
FILTERED_REASONS = frozenset({"http_redirect", "http_error", "not_html"})
WHATWG_CHARSETS = {"iso-8859-1": "cp1252", "latin-1": "cp1252", "latin1": "cp1252", "ascii": "cp1252",
                   "us-ascii": "cp1252", "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030",
                   "iso-8859-9": "cp1254", "tis-620": "cp874", "ks_c_5601-1987": "cp949", "euc-kr": "cp949",
                   "shift_jis": "cp932", "x-sjis": "cp932", "big5": "big5hkscs"}

META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.\-]+)""", re.IGNORECASE)
HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([a-zA-Z0-9_:.\-]+)""", re.IGNORECASE)


def empty_doc(status: str, error: str | None = None) -> dict:
    """A `docs` row (without url/location columns) for a record that could not be used."""
    return {"status": status, "error": error, "source": "warc", "cld2_lang": None, "cld2_reliable": None,
            "cld2_percent": None, "html_lang": None, "text_chars": None, "paragraphs": None, "outlinks": None,
            "outlinks_same_host": None, "images": None, "structure": None, "title": None, "http_status": None,
            "content_type": None, "charset": None, "charset_source": None, "warc_truncated": None,
            "refers_to_url": None, "refers_to_date": None, "outlinks_cut": None, "images_cut": None, "outlink_cues": None,
            **EMPTY_TEXT_FIELDS}


def parse_record(data: bytes, url: str | None = None, record_seconds: float | None = RECORD_SECONDS,
                 config: ExtractionConfig = DEFAULT) -> dict:
    """Features of one WARC response record, read by `config`'s bounds and rules (udfs.fetch.config); status 'ok'
    or the reason it cannot be used (`timeout` included; `html_too_complex` for markup past the bounds the parser's
    time grows with)."""
    return parse_record_and_headers(data, url, record_seconds, config)[1]


def parse_record_and_headers(data: bytes, url: str | None = None, record_seconds: float | None = RECORD_SECONDS,
                             config: ExtractionConfig = DEFAULT) -> tuple[DecodedRecord | None, dict]:
    """parse_record's features and the decoded record they came from (None after a timeout), for index-warcs,
    which needs the WARC headers too."""
    try:
        with TimeLimit(record_seconds):
            return _record_features(data, url, config)
    except RecordTimeout:
        return None, empty_doc("timeout", f"parsing the record took longer than {record_seconds} s")


def _wants_body(record: DecodedRecord) -> bool:
    """Decode the HTTP body only of 2xx pages that are (or may be) HTML."""
    return 200 <= (record.http_status or 0) < 300 and record.content_type in (*HTML_TYPES, None)


def _record_features(data: bytes, url: str | None, config: ExtractionConfig) -> tuple[DecodedRecord, dict]:
    record = decode_record(data, wants_body=_wants_body)
    return record, _features(record, url, config)


def _features(record: DecodedRecord, url: str | None, config: ExtractionConfig) -> dict:
    doc = {**empty_doc(record.status, record.error), "warc_truncated": record.warc_truncated,
           "http_status": record.http_status, "content_type": record.content_type,
           "refers_to_url": record.refers_to_uri, "refers_to_date": record.refers_to_date}
    if record.status != "ok":
        return doc
    url = url or record.target_uri
    status = record.http_status
    if 300 <= status < 400:
        location = record.http_headers.get("location")
        target = normalise_link(url, location) if location else None
        return {**doc, "status": "http_redirect", "outlinks": [target] if target else [],
                "outlinks_same_host": [url_host(target) == url_host(url)] if target else []}
    if status >= 400 or status < 200:
        return {**doc, "status": "http_error"}
    payload = record.body
    if payload is None or (doc["content_type"] is None and not _looks_like_html(payload)):
        return {**doc, "status": "not_html"}
    text, doc["charset"], doc["charset_source"] = decode_html(payload, record.http_headers.get("content-type", ""))
    problem = markup_problem(text, config.max_tag_attributes, config.max_nesting_depth)
    if problem:
        return {**doc, "status": "html_too_complex", "error": problem}
    try:
        return {**doc, **html_features(text, url, config)}
    except Exception as error:  # noqa: BLE001 - a bad page becomes a status, never a crash
        return {**doc, "status": "parse_error", "error": f"{type(error).__name__}: {error}"[:200]}


def _looks_like_html(payload: bytes) -> bool:
    head = payload[:1024].lower()
    return b"<html" in head or b"<!doctype html" in head


def _codec(name: str | None) -> str | None:
    """A Python codec for a declared charset (browser aliases applied), None when unknown."""
    if not name:
        return None
    name = WHATWG_CHARSETS.get(name.strip().lower(), name.strip().lower())
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode_html(payload: bytes, content_type_header: str = "") -> tuple[str, str, str]:
    """Decode an HTML payload with the HTTP-declared, then meta-declared, then detected charset."""
    declared = HEADER_CHARSET.search(content_type_header or "")
    meta = META_CHARSET.search(payload[:4096])
    candidates = (("header", declared.group(1) if declared else None),
                  ("meta", meta.group(1).decode("ascii", "ignore") if meta else None))
    for source, name in candidates:
        codec = _codec(name)
        if codec:
            try:
                return payload.decode(codec), codec, source
            except UnicodeDecodeError:
                continue  # declared wrongly: try the next source, detection last
    return _detect_and_decode(payload)


def _detect_and_decode(payload: bytes) -> tuple[str, str, str]:
    try:
        return payload.decode("utf-8"), "utf-8", "detected"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(payload[:65536]).best()
    codec = _codec(best.encoding) if best else None
    if codec:
        return payload.decode(codec, errors="replace"), codec, "detected"
    return payload.decode("cp1252", errors="replace"), "cp1252", "fallback"
