"""Fetch WARC records by (file, offset, length) from local disk, s3:// or https://, politely.

`plan_ranges` coalesces records that lie close together in one file into a single
byte range (gap <= 64 KiB, span <= 8 MiB by default) so a GET serves several
records; range_reads.RangeReader reads each range (verified, retried: `attempts` GETs at
most per range, the only retry layer) and classifies failures (missing_file,
bad_location, fetch_failed). `fetch_documents` is the mapInPandas function of
fetch-docs: per batch it plans ranges per file, reads them on a bounded thread pool,
slices the records out and parses them (udfs.fetch.documents); a record that comes out cut
(`cut_short`) is read again on its own while its GETs stay within `attempts`. Every input row
comes out exactly once, with status 'ok' or a reason.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

import pandas as pd

from parascout.udfs.common import storage
from parascout.udfs.common.range_reads import ByteRange, RangeReader, ReadError, ReadSettings
from parascout.udfs.common.redaction import redact
from parascout.udfs.common.storage import BadLocation
from parascout.udfs.common.urls import has_control_characters, url_host
from parascout.udfs.fetch import warc_record
from parascout.udfs.fetch.documents import RECORD_COLUMNS, empty_doc, parse_record

log = logging.getLogger("parascout.warc_fetch")

KIB, MIB = 1024, 1024 * 1024
OUTPUT_BATCH_ROWS = 256
#: statuses this module gives before or instead of parsing (udfs.fetch.documents adds the parse statuses)
BAD_REASONS = frozenset({"bad_url", "not_in_index", "no_warc_location", "bad_warc_location", "bad_location",
                         "missing_file", "fetch_failed", "cut_short", "parse_error"})
FILTERED_REASONS = frozenset({"too_large"})


@dataclass(frozen=True)
class FetchSettings:
    """How fetch-docs reads records; travels to the tasks inside the mapInPandas closure."""

    warc_prefix: str
    concurrency: int = 8
    attempts: int = 4
    backoff_seconds: float = 0.5
    coalesce: bool = True
    max_gap_bytes: int = 64 * KIB
    max_span_bytes: int = 8 * MIB
    max_record_bytes: int = 5 * MIB
    s3_endpoint: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 60.0

    def path_of(self, warc_filename: str) -> str:
        """PREFIX + warc_filename (one slash between them); BadLocation when the name leaves the prefix."""
        return storage.resolve_under(self.warc_prefix, warc_filename)

    def read_settings(self) -> ReadSettings:
        return ReadSettings(endpoint=self.s3_endpoint, attempts=self.attempts, backoff_seconds=self.backoff_seconds,
                            connect_timeout=self.connect_timeout, read_timeout=self.read_timeout,
                            pool_size=self.concurrency)


def plan_ranges(offsets: Iterable[int], lengths: Iterable[int], max_gap: int = 64 * KIB,
                max_span: int = 8 * MIB, path: str = "") -> list[ByteRange]:
    """Group records of one file into GET ranges: neighbours within max_gap, each range <= max_span."""
    records = sorted((offset, length, position) for position, (offset, length) in enumerate(zip(offsets, lengths)))
    ranges: list[ByteRange] = []
    for offset, length, position in records:
        end = offset + length
        current = ranges[-1] if ranges else None
        if current and offset - current.end <= max_gap and max(end, current.end) - current.offset <= max_span:
            current.length = max(current.end, end) - current.offset
            current.members.append(position)
        else:
            ranges.append(ByteRange(path, offset, length, [position]))
    return ranges


def _location_problem(row, settings: FetchSettings) -> str | None:
    """Why a record cannot (or must not) be fetched, before any request is made."""
    in_index = getattr(row, "in_index", True)
    if in_index is not None and not pd.isna(in_index) and not bool(in_index):
        return "not_in_index"
    if isinstance(row.url, str) and has_control_characters(row.url):
        return "bad_url"
    if any(pd.isna(value) for value in (row.warc_filename, row.warc_offset, row.warc_length)) \
            or not row.warc_filename:
        return "no_warc_location"
    if row.warc_length <= 0 or row.warc_offset < 0:
        return "bad_warc_location"
    if row.warc_length > settings.max_record_bytes:
        return "too_large"
    return None


def _doc_row(row, doc: dict, attempts: int = 0, range_records: int = 0) -> dict:
    host = getattr(row, "host", None) or url_host(row.url or "")
    location = {"url": row.url, "host": host, "warc_filename": row.warc_filename,
                "warc_offset": None if pd.isna(row.warc_offset) else int(row.warc_offset),
                "warc_length": None if pd.isna(row.warc_length) else int(row.warc_length),
                "fetch_attempts": attempts, "range_records": range_records}
    return {**doc, **location, "error": redact(doc.get("error"))}  # errors quote locations, prefix included


def fetch_range(reader: RangeReader, byte_range: ByteRange, rows: list,
                parse: Callable[[bytes, str | None], dict] = parse_record) -> list[dict]:
    """Read one coalesced range, slice out its records and parse each; one docs row per member.

    A record that comes out cut (`warc_record.RETRYABLE_REASONS`: the file or the transfer ended inside its
    gzip member) is read again on its own while its GETs (its range's and its own) stay within `attempts`.
    Its row's `fetch_attempts` is its range's GETs plus `range_records` x its own re-read GETs, so
    `fetch_attempts / range_records` stays the record's share of the GETs made (what the report sums)."""
    size = len(byte_range.members)
    try:
        data, made = reader.read(byte_range.path, byte_range.offset, byte_range.length)
    except ReadError as error:
        return [_doc_row(rows[m], empty_doc(error.reason, str(error)[:300]), error.attempts, size)
                for m in byte_range.members]
    except Exception as error:  # noqa: BLE001 - e.g. a local permission error: counted, never a crash
        failure = empty_doc("fetch_failed", f"{type(error).__name__}: {error}"[:300])
        return [_doc_row(rows[m], failure, 1, size) for m in byte_range.members]
    out = []
    for member in byte_range.members:
        row = rows[member]
        begin = int(row.warc_offset) - byte_range.offset
        doc = _parse_slice(data[begin:begin + int(row.warc_length)], row, parse)
        doc, reread_gets = _reread_cut(reader, byte_range.path, row, doc, parse, reader.settings.attempts - made)
        out.append(_doc_row(row, doc, made + size * reread_gets, size))
    return out


def _parse_slice(record: bytes, row, parse: Callable[[bytes, str | None], dict]) -> dict:
    """The docs fields of one record's bytes; a slice shorter than the record is cut_short (the file ends)."""
    if len(record) < row.warc_length:
        return empty_doc("cut_short", f"file ends {len(record)} bytes into a {int(row.warc_length)}-byte record")
    try:
        return parse(record, row.url)
    except Exception as error:  # noqa: BLE001 - parse_record guards itself; this guards any parse step
        return empty_doc("parse_error", f"{type(error).__name__}: {error}"[:300])


def _reread_cut(reader: RangeReader, path: str, row, doc: dict, parse: Callable[[bytes, str | None], dict],
                budget: int) -> tuple[dict, int]:
    """Read a cut record again (alone) until it is whole or `budget` GETs are spent; (doc, GETs made).
    A re-read that fails outright ends the tries: the record stays cut, as the bytes it did get were."""
    gets = 0
    while doc["status"] in warc_record.RETRYABLE_REASONS and gets < budget:
        if not storage.is_local(path):
            time.sleep(reader.backoff(gets))
        try:
            data, made = reader.read(path, int(row.warc_offset), int(row.warc_length), budget - gets)
        except ReadError as error:
            doc = {**doc, "error": f"{doc['error']}; re-read: {error}"[:300]}
            return doc, gets + error.attempts
        gets += made
        doc = _parse_slice(data, row, parse)
    return doc, gets


def fetch_documents(batches: Iterator[pd.DataFrame], settings: FetchSettings, reader: RangeReader | None = None,
                    parse: Callable[[bytes, str | None], dict] = parse_record) -> Iterator[pd.DataFrame]:
    """mapInPandas body: rows (url, host, warc_filename, warc_offset, warc_length) -> docs rows."""
    reader = reader or RangeReader(settings.read_settings())
    done = ok = 0
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="warc-fetch") as pool:
        for batch in batches:
            rows = list(batch.itertuples(index=False))
            ready: list[dict] = []
            pending: set[Future] = set()
            for byte_range in _ranges_of(rows, settings, ready):
                if len(pending) >= 2 * settings.concurrency:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    ready.extend(row for future in finished for row in future.result())
                pending.add(pool.submit(fetch_range, reader, byte_range, rows, parse))
                while len(ready) >= OUTPUT_BATCH_ROWS:
                    done, ok = _progress(ready[:OUTPUT_BATCH_ROWS], done, ok, started)
                    yield pd.DataFrame(ready[:OUTPUT_BATCH_ROWS], columns=RECORD_COLUMNS)
                    ready = ready[OUTPUT_BATCH_ROWS:]
            for future in wait(pending).done:
                ready.extend(future.result())
            if ready:
                done, ok = _progress(ready, done, ok, started)
                yield pd.DataFrame(ready, columns=RECORD_COLUMNS)


def _ranges_of(rows: list, settings: FetchSettings, ready: list[dict]) -> Iterator[ByteRange]:
    """The GET ranges for a batch, per file in order; rows that need no GET go straight to `ready`."""
    by_file: dict[str, list[int]] = {}
    paths: dict[str, str | BadLocation] = {}
    for position, row in enumerate(rows):
        problem = _location_problem(row, settings)
        if not problem and row.warc_filename not in paths:
            try:
                paths[row.warc_filename] = settings.path_of(row.warc_filename)
            except BadLocation as error:
                paths[row.warc_filename] = error
        if not problem and isinstance(paths[row.warc_filename], BadLocation):
            ready.append(_doc_row(row, empty_doc("bad_location", str(paths[row.warc_filename])[:300])))
        elif problem:
            ready.append(_doc_row(row, empty_doc(problem)))
        else:
            by_file.setdefault(row.warc_filename, []).append(position)
    for filename, positions in by_file.items():
        offsets = [int(rows[p].warc_offset) for p in positions]
        lengths = [int(rows[p].warc_length) for p in positions]
        gap, span = (settings.max_gap_bytes, settings.max_span_bytes) if settings.coalesce else (-1, 0)
        for byte_range in plan_ranges(offsets, lengths, gap, span, paths[filename]):
            byte_range.members = [positions[m] for m in byte_range.members]
            yield byte_range


def _progress(rows: list[dict], done: int, ok: int, started: float) -> tuple[int, int]:
    before = done
    done += len(rows)
    ok += sum(1 for row in rows if row["status"] == "ok")
    if done // 1000 > before // 1000:
        rate = done / max(time.monotonic() - started, 1e-9)
        log.info("fetched %d records (%d ok) at %.1f records/s", done, ok, rate)
    return done, ok
