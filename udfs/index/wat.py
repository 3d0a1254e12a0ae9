"""CommonCrawl WAT files -> `docs` rows with outlinks and images, without touching WARC payloads.

A WAT file holds one JSON metadata record per WARC record. For a response the
links sit at Envelope -> Payload-Metadata -> HTTP-Response-Metadata ->
HTML-Metadata -> Links (entries like {"path": "A@/href", "url": "..."}), the
<head> at HTML-Metadata -> Head (Title, Base, Link), and the WARC location at
Container (Filename, Offset, Gzip-Metadata lengths). Links are resolved and
normalised exactly as udfs.fetch.html_text does for WARC payloads (udfs.common.urls).
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import urljoin

import pandas as pd
from fastwarc.warc import ArchiveIterator, WarcRecordType

from parascout.udfs.common import range_reads
from parascout.udfs.common.urls import image_file_name, normalise_link, url_host
from parascout.udfs.fetch.config import DEFAULT
from parascout.udfs.fetch.documents import RECORD_COLUMNS, empty_doc
from parascout.udfs.fetch.html_text import MAX_TITLE_CHARS
from parascout.udfs.fetch.language_cues import CUE_KINDS, wat_link_cue
from parascout.udfs.fetch.page_walk import MAX_IMAGES, LinkBudget

LINK_PATHS = frozenset({"A@/href", "AREA@/href", "FRAME@/src", "IFRAME@/src"})
IMAGE_PATHS = frozenset({"IMG@/src", "IMG@/data-src"})
OUTPUT_BATCH_ROWS = 1000


def wat_document(envelope: dict, cue_kinds: frozenset[str] | tuple[str, ...] = CUE_KINDS,
                 max_label_words: int = DEFAULT.max_label_words) -> dict:
    """One docs row from the Envelope of a WAT record; status 'not_response' for request/metadata records.
    `cue_kinds`: the link context that may give a link's language cue (`outlink_cues`; udfs.fetch.language_cues);
    `max_label_words`: the longest link label a language name counts in (udfs.fetch.config)."""
    header = envelope.get("WARC-Header-Metadata") or {}
    url = header.get("WARC-Target-URI")
    doc = {**empty_doc("ok"), "source": "wat", "url": url, "host": url_host(url) if url else None}
    if header.get("WARC-Type") != "response":
        return {**doc, "status": "not_response", "error": header.get("WARC-Type")}
    response = (envelope.get("Payload-Metadata") or {}).get("HTTP-Response-Metadata") or {}
    headers = response.get("Headers") or {}
    doc["http_status"] = _int_or_none((response.get("Response-Message") or {}).get("Status"))
    content_type = headers.get("Content-Type") or headers.get("content-type") or ""
    doc["content_type"] = content_type.split(";")[0].strip().lower() or None
    html = response.get("HTML-Metadata")
    if html is None:
        return {**doc, "status": "not_html"}
    head = html.get("Head") or {}
    base = urljoin(url, head["Base"]) if isinstance(head.get("Base"), str) else url
    outlinks, images, budget, cues = [], [], LinkBudget(), {}
    alternates = [item for item in head.get("Link") or [] if "alternate" in str(item.get("rel", "")).lower()]
    items = [*(html.get("Links") or []), *alternates]
    for position, item in enumerate(items):
        path, target = item.get("path", ""), item.get("url") or item.get("href")
        if path in IMAGE_PATHS:
            name = image_file_name(base, target)
            if name and len(images) < MAX_IMAGES:
                images.append(name)
        elif path in LINK_PATHS or item in alternates:
            link = normalise_link(base, target)
            if link and budget.admit(link):
                outlinks.append(link)
                cue = cues.get(link) or wat_link_cue(item, items[position + 1] if position + 1 < len(items) else None,
                                                     cue_kinds, max_label_words)
                cues[link] = cue
    outlinks = list(dict.fromkeys(outlinks))
    title = head.get("Title")
    status = doc["http_status"] or 0
    return {**doc, "status": "ok" if 200 <= status < 300 else "http_redirect" if 300 <= status < 400 else "http_error",
            "outlinks": outlinks, "outlinks_same_host": [url_host(link) == doc["host"] for link in outlinks],
            "outlinks_cut": budget.cut, "outlink_cues": [cue.lang if (cue := cues.get(link)) else None for link in outlinks],
            "images": list(dict.fromkeys(images)), "title": title.strip()[:MAX_TITLE_CHARS] if title else None}


def _int_or_none(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _container_location(container: dict) -> dict:
    """warc_filename / offset / length of the WARC record a WAT record describes."""
    gzip = container.get("Gzip-Metadata") or {}
    parts = [_int_or_none(gzip.get(key)) for key in ("Header-Length", "Deflate-Length", "Footer-Length")]
    return {"warc_filename": container.get("Filename"), "warc_offset": _int_or_none(container.get("Offset")),
            "warc_length": sum(parts) if all(p is not None for p in parts) else None}


def read_wat(stream, cue_kinds: frozenset[str] | tuple[str, ...] = CUE_KINDS,
             max_label_words: int = DEFAULT.max_label_words) -> Iterator[dict]:
    """docs rows for every metadata record of a WAT stream (undecodable JSON -> status 'bad_wat_json').
    FastWARC reads the records (gzip detected; only metadata records parsed): x2.6 warcio's rate, same bytes."""
    for record in ArchiveIterator(stream, record_types=WarcRecordType.metadata, parse_http=False):
        url = record.headers.get("WARC-Target-URI")
        try:
            payload = json.loads(record.reader.read())
            doc = wat_document(payload["Envelope"], cue_kinds, max_label_words)
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            yield {**empty_doc("bad_wat_json", f"{type(error).__name__}: {error}"[:200]), "source": "wat",
                   "url": url, "host": url_host(url) if url else None}
            continue
        yield {**doc, **_container_location(payload.get("Container") or {})}


def read_wat_files(batches: Iterator[pd.DataFrame], s3_endpoint: str | None = None,
                   max_label_words: int = DEFAULT.max_label_words) -> Iterator[pd.DataFrame]:
    """mapInPandas body: a frame of WAT paths (column `path`) -> docs rows, in batches."""
    for batch in batches:
        for path in batch["path"]:
            rows = []
            try:
                with range_reads.open_binary(path, s3_endpoint) as stream:
                    for doc in read_wat(stream, max_label_words=max_label_words):
                        rows.append(doc)
                        if len(rows) >= OUTPUT_BATCH_ROWS:
                            yield pd.DataFrame(rows, columns=RECORD_COLUMNS)
                            rows = []
            except Exception as error:  # noqa: BLE001 - a broken WAT file is one counted row, not a crash
                rows.append({**empty_doc("bad_wat_file", f"{type(error).__name__}: {error}"[:200]), "source": "wat",
                             "url": None, "warc_filename": path})
            if rows:
                yield pd.DataFrame(rows, columns=RECORD_COLUMNS)
