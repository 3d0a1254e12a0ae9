"""Fetch WARC records by (file, offset, length) from local disk, s3:// or https://, politely.

`plan_ranges` coalesces records that lie close together in one file into a single
byte range (gap <= 64 KiB, span <= 8 MiB by default) so a GET serves several
records; `RangeReader` reads one range with retries — boto3's adaptive mode backs
off on S3 503 SlowDown, HTTP 429/503 honour Retry-After, truncated bodies and
timeouts are retried with exponential backoff — and classifies failures
(missing_file, truncated, fetch_failed). `fetch_documents` is the mapInPandas
function of fetch-docs: per batch it plans ranges per file, reads them on a
bounded thread pool, slices the records out and parses them (udfs.documents).
Every input row comes out exactly once, with status 'ok' or a reason.
"""
from __future__ import annotations

import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pandas as pd

from parascout.udfs import storage
from parascout.udfs.documents import DOC_COLUMNS, empty_doc, parse_record
from parascout.udfs.urls import url_host

log = logging.getLogger("parascout.warc_fetch")

KIB, MIB = 1024, 1024 * 1024
OUTPUT_BATCH_ROWS = 256
MAX_RETRY_AFTER_SECONDS = 30.0


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
    s3_retry_mode: str = "adaptive"
    s3_retry_attempts: int = 4
    connect_timeout: float = 10.0
    read_timeout: float = 60.0

    def path_of(self, warc_filename: str) -> str:
        """PREFIX + warc_filename (one slash between them)."""
        if not self.warc_prefix:
            return warc_filename
        return f"{self.warc_prefix.rstrip('/')}/{warc_filename.lstrip('/')}"


@dataclass
class ByteRange:
    """One GET: bytes [start, end) of a file, serving the records at `members` (row positions)."""

    start: int
    end: int
    members: list[int] = field(default_factory=list)

    @property
    def length(self) -> int:
        return self.end - self.start


class FetchError(Exception):
    """A range could not be read; `reason` is the docs status it becomes."""

    def __init__(self, reason: str, detail: str, attempts: int, retry_after: float | None = None):
        super().__init__(f"{reason} after {attempts} request(s): {detail}")
        self.reason = reason
        self.detail = detail
        self.attempts = attempts
        self.retry_after = retry_after


def plan_ranges(offsets: Iterable[int], lengths: Iterable[int], max_gap: int = 64 * KIB,
                max_span: int = 8 * MIB) -> list[ByteRange]:
    """Group records of one file into GET ranges: neighbours within max_gap, each range <= max_span."""
    records = sorted((offset, length, position) for position, (offset, length) in enumerate(zip(offsets, lengths)))
    ranges: list[ByteRange] = []
    for offset, length, position in records:
        end = offset + length
        current = ranges[-1] if ranges else None
        if current and offset - current.end <= max_gap and max(end, current.end) - current.start <= max_span:
            current.end = max(current.end, end)
            current.members.append(position)
        else:
            ranges.append(ByteRange(offset, end, [position]))
    return ranges


_requests_sent = threading.local()


def _count_request(**_) -> None:
    _requests_sent.count = getattr(_requests_sent, "count", 0) + 1


def _requests_so_far() -> int:
    return getattr(_requests_sent, "count", 0)


@functools.lru_cache(maxsize=8)
def s3_client_for(endpoint: str | None, connect_timeout: float, read_timeout: float, pool_size: int,
                  retry_mode: str = "adaptive", retry_attempts: int = 4):
    """A boto3 S3 client per settings: adaptive retries back off on 503 SlowDown; counts GETs per thread."""
    import boto3
    from botocore.config import Config

    config = Config(retries={"mode": retry_mode, "total_max_attempts": retry_attempts},
                    max_pool_connections=max(pool_size, 10), connect_timeout=connect_timeout,
                    read_timeout=read_timeout)
    client = boto3.client("s3", endpoint_url=endpoint or None, config=config)
    client.meta.events.register("before-send.s3.GetObject", _count_request)  # retries included
    return client


class RangeReader:
    """Reads byte ranges of local, s3:// and https:// files with retries; counts requests."""

    def __init__(self, settings: FetchSettings):
        self.settings = settings
        self._http = None

    def read(self, path: str, start: int, length: int) -> tuple[bytes, int]:
        """(bytes, requests made); fewer bytes than asked means the file ended. Raises FetchError."""
        kind = storage.scheme(path)
        if kind in ("", "file"):
            return self._read_local(path, start, length), 1
        if kind not in ("s3", "s3a", "s3n", "http", "https"):
            raise FetchError("missing_file", f"unsupported scheme {kind!r}", 0)
        requests_made, last_error = 0, ""
        for attempt in range(self.settings.attempts):
            try:
                if kind in ("http", "https"):
                    data, made = self._read_http(path, start, length)
                else:
                    data, made = self._read_s3(path, start, length)
                return data, requests_made + made
            except FetchError as error:
                if error.reason != "retry":
                    raise FetchError(error.reason, error.detail, requests_made + error.attempts) from None
                requests_made += error.attempts
                last_error = error.detail
                wait_seconds = error.retry_after
            except Exception as error:  # noqa: BLE001 - timeouts, resets, truncated bodies: all retried
                requests_made += 1
                last_error = f"{type(error).__name__}: {error}"
                wait_seconds = None
            if attempt + 1 < self.settings.attempts:
                time.sleep(wait_seconds if wait_seconds is not None else self._backoff(attempt))
        raise FetchError("fetch_failed", last_error[:300], requests_made)

    def _backoff(self, attempt: int) -> float:
        return self.settings.backoff_seconds * (2 ** attempt) * (0.5 + random.random())

    @staticmethod
    def _read_local(path: str, start: int, length: int) -> bytes:
        try:
            with open(storage.local_path(path), "rb") as handle:
                handle.seek(start)
                return handle.read(length)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as error:
            raise FetchError("missing_file", str(error), 1) from None

    def _read_s3(self, path: str, start: int, length: int) -> tuple[bytes, int]:
        from botocore.exceptions import ClientError

        settings = self.settings
        client = s3_client_for(settings.s3_endpoint, settings.connect_timeout, settings.read_timeout,
                               settings.concurrency, settings.s3_retry_mode, settings.s3_retry_attempts)
        parts = urlsplit(path)
        bucket, key = parts.netloc, parts.path.lstrip("/")
        before = _requests_so_far()
        try:
            response = client.get_object(Bucket=bucket, Key=key, Range=f"bytes={start}-{start + length - 1}")
            return response["Body"].read(), _requests_so_far() - before  # a short body raises: retried
        except ClientError as error:
            code = str(error.response.get("Error", {}).get("Code", ""))
            made = _requests_so_far() - before
            if code in ("NoSuchKey", "NoSuchBucket", "404", "NotFound"):
                raise FetchError("missing_file", f"{code}: s3://{bucket}/{key}", made) from None
            if code in ("InvalidRange", "416"):
                return b"", made
            raise FetchError("retry", f"{code}: {error}", made) from None
        except Exception as error:  # noqa: BLE001 - timeouts after botocore's own retries, truncated bodies
            raise FetchError("retry", f"{type(error).__name__}: {error}", _requests_so_far() - before) from None

    def _session(self):
        if self._http is None:
            import requests
            from requests.adapters import HTTPAdapter

            session = requests.Session()
            adapter = HTTPAdapter(pool_connections=4, pool_maxsize=max(self.settings.concurrency, 4), max_retries=0)
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            self._http = session
        return self._http

    def _read_http(self, url: str, start: int, length: int) -> tuple[bytes, int]:
        response = self._session().get(url, headers={"Range": f"bytes={start}-{start + length - 1}"},
                                       timeout=(self.settings.connect_timeout, self.settings.read_timeout))
        status = response.status_code
        if status in (404, 403, 410):
            raise FetchError("missing_file", f"HTTP {status}: {url}", 1)
        if status == 416:
            return b"", 1
        if status == 429 or status >= 500:
            raise FetchError("retry", f"HTTP {status}", 1, _retry_after(response.headers.get("Retry-After")))
        if status == 200:  # the server ignored Range: take our slice of the whole body
            return response.content[start:start + length], 1
        if status != 206:
            raise FetchError("retry", f"HTTP {status}", 1)
        return response.content, 1  # a short body raises ChunkedEncodingError / ProtocolError: retried


def _retry_after(value: str | None) -> float | None:
    try:
        return min(float(value), MAX_RETRY_AFTER_SECONDS) if value is not None else None
    except ValueError:
        return None


def _location_problem(row, settings: FetchSettings) -> str | None:
    """Why a record cannot (or must not) be fetched, before any request is made."""
    in_index = getattr(row, "in_index", True)
    if in_index is not None and not pd.isna(in_index) and not bool(in_index):
        return "not_in_index"
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
    return {**doc, **location}


def fetch_range(reader: RangeReader, path: str, byte_range: ByteRange, rows: list,
                parse: Callable[[bytes, str | None], dict] = parse_record) -> list[dict]:
    """Read one coalesced range, slice out its records and parse each; one docs row per member."""
    size = len(byte_range.members)
    try:
        data, made = reader.read(path, byte_range.start, byte_range.length)
    except FetchError as error:
        return [_doc_row(rows[m], empty_doc(error.reason, str(error)[:300]), error.attempts, size)
                for m in byte_range.members]
    except Exception as error:  # noqa: BLE001 - e.g. a local permission error: counted, never a crash
        failure = empty_doc("fetch_failed", f"{type(error).__name__}: {error}"[:300])
        return [_doc_row(rows[m], failure, 1, size) for m in byte_range.members]
    out = []
    for member in byte_range.members:
        row = rows[member]
        begin = int(row.warc_offset) - byte_range.start
        record = data[begin:begin + int(row.warc_length)]
        if len(record) < row.warc_length:
            doc = empty_doc("truncated", f"file ends {len(record)} bytes into a {int(row.warc_length)}-byte record")
        else:
            try:
                doc = parse(record, row.url)
            except Exception as error:  # noqa: BLE001 - parse_record guards itself; this guards any parse step
                doc = empty_doc("parse_error", f"{type(error).__name__}: {error}"[:300])
        out.append(_doc_row(row, doc, made, size))
    return out


def fetch_documents(batches: Iterator[pd.DataFrame], settings: FetchSettings, reader: RangeReader | None = None,
                    parse: Callable[[bytes, str | None], dict] = parse_record) -> Iterator[pd.DataFrame]:
    """mapInPandas body: rows (url, host, warc_filename, warc_offset, warc_length) -> docs rows."""
    reader = reader or RangeReader(settings)
    done = ok = 0
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="warc-fetch") as pool:
        for batch in batches:
            rows = list(batch.itertuples(index=False))
            ready: list[dict] = []
            pending: set[Future] = set()
            for path, byte_range in _ranges_of(rows, settings, ready):
                if len(pending) >= 2 * settings.concurrency:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    ready.extend(row for future in finished for row in future.result())
                pending.add(pool.submit(fetch_range, reader, path, byte_range, rows, parse))
                while len(ready) >= OUTPUT_BATCH_ROWS:
                    done, ok = _progress(ready[:OUTPUT_BATCH_ROWS], done, ok, started)
                    yield pd.DataFrame(ready[:OUTPUT_BATCH_ROWS], columns=DOC_COLUMNS)
                    ready = ready[OUTPUT_BATCH_ROWS:]
            for future in wait(pending).done:
                ready.extend(future.result())
            if ready:
                done, ok = _progress(ready, done, ok, started)
                yield pd.DataFrame(ready, columns=DOC_COLUMNS)


def _ranges_of(rows: list, settings: FetchSettings, ready: list[dict]) -> Iterator[tuple[str, ByteRange]]:
    """The GET ranges for a batch, per file in order; rows that need no GET go straight to `ready`."""
    by_file: dict[str, list[int]] = {}
    for position, row in enumerate(rows):
        problem = _location_problem(row, settings)
        if problem:
            ready.append(_doc_row(row, empty_doc(problem)))
        else:
            by_file.setdefault(row.warc_filename, []).append(position)
    for filename, positions in by_file.items():
        offsets = [int(rows[p].warc_offset) for p in positions]
        lengths = [int(rows[p].warc_length) for p in positions]
        gap, span = (settings.max_gap_bytes, settings.max_span_bytes) if settings.coalesce else (-1, 0)
        for byte_range in plan_ranges(offsets, lengths, gap, span):
            byte_range.members = [positions[m] for m in byte_range.members]
            yield settings.path_of(filename), byte_range


def _progress(rows: list[dict], done: int, ok: int, started: float) -> tuple[int, int]:
    before = done
    done += len(rows)
    ok += sum(1 for row in rows if row["status"] == "ok")
    if done // 1000 > before // 1000:
        rate = done / max(time.monotonic() - started, 1e-9)
        log.info("fetched %d records (%d ok) at %.1f records/s", done, ok, rate)
    return done, ok
