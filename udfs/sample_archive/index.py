"""The archive's indexes: CDX lines sorted by SURT (external sort), ZipNum, and the columnar index.

Lines are buffered, spilled to sorted run files when the buffer is full, and merged
once at the end, so millions of URLs never sit in memory. The merged stream feeds
`udfs.index.cdx.write_zipnum` and, line by line, the columnar Parquet writer.
"""
from __future__ import annotations

import contextlib
import heapq
import json
import os
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq

from parascout.udfs.common.urls import registered_domain

COLUMNAR_SCHEMA = pa.schema([
    ("url_surtkey", pa.string()), ("url", pa.string()), ("url_host_name", pa.string()),
    ("url_host_tld", pa.string()), ("url_host_2nd_last_part", pa.string()), ("url_host_3rd_last_part", pa.string()),
    ("url_host_4th_last_part", pa.string()), ("url_host_5th_last_part", pa.string()),
    ("url_host_registry_suffix", pa.string()), ("url_host_registered_domain", pa.string()),
    ("url_host_private_suffix", pa.string()), ("url_host_private_domain", pa.string()),
    ("url_host_name_reversed", pa.string()), ("url_protocol", pa.string()), ("url_port", pa.int32()),
    ("url_path", pa.string()), ("url_query", pa.string()), ("fetch_time", pa.timestamp("us", tz="UTC")),
    ("fetch_status", pa.int16()), ("fetch_redirect", pa.string()), ("content_digest", pa.string()),
    ("content_mime_type", pa.string()), ("content_mime_detected", pa.string()), ("content_charset", pa.string()),
    ("content_languages", pa.string()), ("content_truncated", pa.string()), ("warc_filename", pa.string()),
    ("warc_record_offset", pa.int32()), ("warc_record_length", pa.int32()), ("warc_segment", pa.string()),
])
ROW_GROUP_ROWS = 100_000
UTC = timezone.utc


class CdxSorter:
    """Collects CDX lines and yields them sorted, spilling sorted runs to disk past `buffer_lines`."""

    def __init__(self, spill_dir: str, buffer_lines: int = 200_000):
        self.spill_dir = spill_dir
        self.buffer_lines = buffer_lines
        self.buffer: list[str] = []
        self.runs: list[str] = []
        self.count = 0

    def add(self, line: str) -> None:
        self.buffer.append(line)
        self.count += 1
        if len(self.buffer) >= self.buffer_lines:
            self._spill()

    def _spill(self) -> None:
        os.makedirs(self.spill_dir, exist_ok=True)
        path = os.path.join(self.spill_dir, f"run-{len(self.runs):05d}.cdx")
        self.buffer.sort()
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(line + "\n" for line in self.buffer)
        self.runs.append(path)
        self.buffer = []

    def sorted_lines(self) -> Iterator[str]:
        """Every line added, in SURT + timestamp order (the order CommonCrawl's indexes use)."""
        self.buffer.sort()
        if not self.runs:
            yield from self.buffer
            return
        with contextlib.ExitStack() as stack:
            handles = [stack.enter_context(open(path, encoding="utf-8")) for path in self.runs]
            yield from heapq.merge(*((line.rstrip("\n") for line in handle) for handle in handles), self.buffer)
        for path in self.runs:
            os.remove(path)


class ColumnarWriter:
    """Writes the columnar index (cc-index/table/cc-main/warc/crawl=.../subset=.../part-*.parquet)."""

    def __init__(self, root: str, crawl: str, segments: dict[str, str], part_name: str):
        self.base = os.path.join(root, "cc-index", "table", "cc-main", "warc", f"crawl={crawl}")
        self.segments = segments
        self.part_name = part_name
        self.writers: dict[str, pq.ParquetWriter] = {}
        self.columns: dict[str, dict[str, list]] = {}
        self.counts: dict[str, int] = {}

    def add_cdx_line(self, line: str) -> None:
        row, subset = columnar_row(line, self.segments)
        columns = self.columns.get(subset)
        if columns is None:
            columns = self.columns[subset] = {name: [] for name in COLUMNAR_SCHEMA.names}
        for name, value in row.items():
            columns[name].append(value)
        if len(columns["url"]) >= ROW_GROUP_ROWS:
            self._flush(subset)

    def _flush(self, subset: str) -> None:
        columns = self.columns.get(subset)
        if not columns or not columns["url"]:
            return
        if subset not in self.writers:
            folder = os.path.join(self.base, f"subset={subset}")
            os.makedirs(folder, exist_ok=True)
            self.writers[subset] = pq.ParquetWriter(os.path.join(folder, self.part_name), COLUMNAR_SCHEMA,
                                                    compression="gzip")
        self.writers[subset].write_table(pa.table(columns, schema=COLUMNAR_SCHEMA))
        self.counts[subset] = self.counts.get(subset, 0) + len(columns["url"])
        self.columns[subset] = {name: [] for name in COLUMNAR_SCHEMA.names}

    def close(self) -> dict[str, int]:
        for subset in sorted(self.columns):
            self._flush(subset)
        for writer in self.writers.values():
            writer.close()
        return dict(sorted(self.counts.items()))


def columnar_row(line: str, segments: dict[str, str]) -> tuple[dict, str]:
    """A columnar-index row (and its subset) from a CDX line, as CommonCrawl derives both from one capture."""
    surt_key, timestamp, payload = line.split(" ", 2)
    fields = json.loads(payload)
    url = fields["url"]
    parts = urlsplit(url)
    host = parts.hostname or ""
    labels = host.split(".")
    domain = registered_domain(host)
    suffix = domain.split(".", 1)[1] if domain and "." in domain else None
    filename = fields["filename"]
    row = {
        "url_surtkey": surt_key, "url": url, "url_host_name": host, "url_host_tld": labels[-1],
        "url_host_2nd_last_part": _label(labels, 2), "url_host_3rd_last_part": _label(labels, 3),
        "url_host_4th_last_part": _label(labels, 4), "url_host_5th_last_part": _label(labels, 5),
        "url_host_registry_suffix": suffix, "url_host_registered_domain": domain,
        "url_host_private_suffix": suffix, "url_host_private_domain": domain,
        "url_host_name_reversed": ".".join(reversed(labels)), "url_protocol": parts.scheme, "url_port": parts.port,
        "url_path": parts.path or "/", "url_query": parts.query or None,
        "fetch_time": datetime(int(timestamp[:4]), int(timestamp[4:6]), int(timestamp[6:8]), int(timestamp[8:10]),
                               int(timestamp[10:12]), int(timestamp[12:14]), tzinfo=UTC),
        "fetch_status": int(fields["status"]), "fetch_redirect": fields.get("redirect"),
        "content_digest": fields.get("digest"), "content_mime_type": fields.get("mime"),
        "content_mime_detected": fields.get("mime-detected"), "content_charset": fields.get("charset"),
        "content_languages": fields.get("languages"), "content_truncated": fields.get("truncated"),
        "warc_filename": filename, "warc_record_offset": int(fields["offset"]),
        "warc_record_length": int(fields["length"]), "warc_segment": segments.get(filename),
    }
    return row, filename.split("/", 1)[0]


def _label(labels: list[str], position: int) -> str | None:
    return labels[-position] if len(labels) >= position else None


def tee(lines: Iterable[str], consumer) -> Iterator[str]:
    """Yield lines unchanged while handing each to `consumer` (feeds ZipNum and columnar in one pass)."""
    for line in lines:
        consumer(line)
        yield line
