"""Archive bytes read as byte ranges of local, s3:// and https:// files: CDX blocks, WARC records, Parquet
footers, whole CDX and WAT files.

`RangeReader` makes byte-range GETs whose responses are verified (206 with the asked Content-Range, or a
full-object 200 sliced), retried by one loop only (`ReadSettings.attempts` tries per range; botocore's own
retries are off for these GETs), and failures classified (`ReadError.reason`). `RangeFile` gives pyarrow a
seekable file over it (only footers and wanted columns are read), `open_binary` a stream over a whole file.

Why a module of its own: it is the one place remote reads are retried and checked, a loop with its own
settings and failure classes; paths, schemes and the S3 client come from storage, like every other I/O.
"""
from __future__ import annotations

import io
import random
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from parascout.udfs.common.storage import (
    HTTP_SCHEMES,
    S3_SCHEMES,
    BadLocation,
    bucket_key,
    is_local,
    open_regular_file,
    s3_client,
    scheme,
)

READ_CHUNK_BYTES = 1 << 20
#: whole remote files are streamed as ranged GETs of this size (each retried on its own, resumed at its offset)
STREAM_CHUNK_BYTES = 8 << 20
MAX_RETRY_AFTER_SECONDS = 30.0
#: what a failed range read becomes (docs status / CDX read status)
READ_FAILURES = ("missing_file", "bad_location", "fetch_failed")
#: the read failures that are the store's, not the record's (it did not answer, or only with errors, after
#: every retry): a record lost to them is not bad itself
TRANSPORT_FAILURES = frozenset({"fetch_failed"})
_CONTENT_RANGE = re.compile(r"^\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*$", re.IGNORECASE)


@dataclass
class ByteRange:
    """Bytes [offset, offset + length) of a file (length -1: to its end); `members` are what the range
    serves (record rows of fetch-docs, ZipNum block numbers of scan-cdx)."""

    path: str
    offset: int = 0
    length: int = -1
    members: list[int] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.offset + self.length


@dataclass(frozen=True)
class ReadSettings:
    """How RangeReader reads: `attempts` is the total number of GETs one range may cost."""

    endpoint: str | None = None
    attempts: int = 4
    backoff_seconds: float = 0.5
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    pool_size: int = 8


class ReadError(Exception):
    """A range could not be read; `reason` is one of READ_FAILURES (or "retry" inside the loop)."""

    def __init__(self, reason: str, detail: str, attempts: int = 1, retry_after: float | None = None):
        super().__init__(f"{reason} after {attempts} request(s): {detail}")
        self.reason = reason
        self.detail = detail
        self.attempts = attempts
        self.retry_after = retry_after


#: the longest wait between two tries of one range (before jitter)
MAX_BACKOFF_SECONDS = 8.0


class RangeReader:
    """Reads byte ranges of local, s3:// and https:// files; the one place remote reads are retried.

    Every response is verified: a 206 must carry the Content-Range asked for and that many bytes; a 200
    (a server that ignores Range) is skipped to the offset and sliced; a body cut short (with or without a
    Content-Length) is retried. Throttling (S3 SlowDown, HTTP 429/503) backs off exponentially with jitter,
    honouring Retry-After.
    """

    def __init__(self, settings: ReadSettings | None = None):
        self.settings = settings or ReadSettings()
        self._http = None

    def read(self, path: str, start: int, length: int, attempts: int | None = None) -> tuple[bytes, int]:
        """(bytes, GETs made: at most `attempts`, default the settings'); fewer bytes than asked means the file
        ended. Raises ReadError."""
        kind = scheme(path)
        if kind in ("", "file"):
            return self._read_local(path, start, length), 1
        if kind not in S3_SCHEMES + HTTP_SCHEMES:
            raise ReadError("missing_file", f"unsupported scheme {kind!r}", 0)
        attempts, last_error = attempts or self.settings.attempts, ""
        for attempt in range(attempts):
            try:
                return (self._read_http if kind in HTTP_SCHEMES else self._read_s3)(path, start, length), attempt + 1
            except ReadError as error:
                if error.reason != "retry":
                    raise ReadError(error.reason, error.detail, attempt + 1) from None
                last_error, wait_seconds = error.detail, error.retry_after
            except Exception as error:  # noqa: BLE001 - timeouts, resets, cut bodies: all retried
                last_error, wait_seconds = f"{type(error).__name__}: {error}", None
            if attempt + 1 < attempts:
                time.sleep(wait_seconds if wait_seconds is not None else self.backoff(attempt))
        raise ReadError("fetch_failed", last_error[:300], attempts)

    def stream(self, path: str, chunk_bytes: int = STREAM_CHUNK_BYTES) -> Iterator[bytes]:
        """A whole file in chunks: local files read directly, remote ones as consecutive ranged GETs (each
        retried on its own, so a dropped connection resumes at the last good offset)."""
        if is_local(path):
            try:
                handle = open_regular_file(path)
            except BadLocation as error:
                raise ReadError("bad_location", str(error)) from None
            with handle:
                while chunk := handle.read(chunk_bytes):
                    yield chunk
            return
        offset = 0
        while True:
            chunk = self.read(path, offset, chunk_bytes)[0]
            if chunk:
                yield chunk
            if len(chunk) < chunk_bytes:
                return
            offset += len(chunk)

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt + 1`: exponential with jitter, at most MAX_BACKOFF_SECONDS
        (a tenth try must not sleep four minutes)."""
        return min(self.settings.backoff_seconds * (2 ** attempt), MAX_BACKOFF_SECONDS) * (0.5 + random.random())

    @staticmethod
    def _read_local(path: str, start: int, length: int) -> bytes:
        try:
            with open_regular_file(path) as handle:
                handle.seek(start)
                return handle.read(length)
        except BadLocation as error:
            raise ReadError("bad_location", str(error), 1) from None
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as error:
            raise ReadError("missing_file", str(error), 1) from None

    def _read_s3(self, path: str, start: int, length: int) -> bytes:
        from botocore.exceptions import ClientError

        settings = self.settings
        client = s3_client(settings.endpoint, settings.connect_timeout, settings.read_timeout, settings.pool_size,
                           retry_attempts=1)
        bucket, key = bucket_key(path)
        try:
            response = client.get_object(Bucket=bucket, Key=key, Range=f"bytes={start}-{start + length - 1}")
        except ClientError as error:
            code = str(error.response.get("Error", {}).get("Code", ""))
            if code in ("NoSuchKey", "NoSuchBucket", "404", "NotFound"):
                raise ReadError("missing_file", f"{code}: s3://{bucket}/{key}") from None
            if code in ("InvalidRange", "416"):
                return b""
            raise ReadError("retry", f"{code}: {error}") from None
        body = response["Body"]
        try:
            return verified_range(response["ResponseMetadata"]["HTTPStatusCode"], response.get("ContentRange"),
                                  response.get("ContentLength"), body, start, length)
        finally:
            body.close()

    def _session(self):
        if self._http is None:
            import requests
            from requests.adapters import HTTPAdapter

            session = requests.Session()
            adapter = HTTPAdapter(pool_connections=4, pool_maxsize=max(self.settings.pool_size, 4), max_retries=0)
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            self._http = session
        return self._http

    def _read_http(self, url: str, start: int, length: int) -> bytes:
        response = self._session().get(url, headers={"Range": f"bytes={start}-{start + length - 1}"}, stream=True,
                                       timeout=(self.settings.connect_timeout, self.settings.read_timeout))
        with response:
            status = response.status_code
            if status in (404, 403, 410):
                raise ReadError("missing_file", f"HTTP {status}: {url}")
            if status == 416:
                return b""
            if status == 429 or status >= 500:
                raise ReadError("retry", f"HTTP {status}", 1, _retry_after(response.headers.get("Retry-After")))
            response.raw.decode_content = False
            content_length = response.headers.get("Content-Length")
            return verified_range(status, response.headers.get("Content-Range"),
                                  int(content_length) if content_length and content_length.isdigit() else None,
                                  response.raw, start, length)


def verified_range(status: int, content_range: str | None, content_length: int | None, body, start: int,
                   length: int) -> bytes:
    """The bytes [start, start + length) out of a ranged GET's response, or ReadError("retry") when the
    response is not what was asked: a 206 must name exactly that range (clipped at the file's end) and carry
    all of it; a 200 is the whole object, read up to the range and sliced (never another offset's bytes)."""
    if status == 206:
        match = _CONTENT_RANGE.match(content_range or "")
        if not match:
            raise ReadError("retry", f"206 without a usable Content-Range ({content_range!r})")
        first, last, total = int(match[1]), int(match[2]), match[3]
        wanted_last = start + length - 1 if total == "*" else min(start + length - 1, int(total) - 1)
        if first != start or last != wanted_last:
            raise ReadError("retry", f"asked bytes {start}-{start + length - 1}, got Content-Range {content_range}")
        data = _read_exactly(body, last - first + 1)
        if len(data) < last - first + 1:
            raise ReadError("retry", f"body cut short: {len(data)} of {last - first + 1} bytes")
        return data
    if status == 200:  # the server ignored Range: skip to our offset, take our slice, drop the rest
        skipped = _skip(body, start)
        data = _read_exactly(body, length) if skipped == start else b""
        if content_length is not None:
            expected = max(0, min(length, content_length - start))
            if len(data) < expected:
                raise ReadError("retry", f"body cut short: {start + len(data)} of {content_length} bytes")
        return data
    raise ReadError("retry", f"HTTP {status} to a range request")


def _read_exactly(body, size: int) -> bytes:
    """Up to `size` bytes of a stream (fewer only when it ends)."""
    parts, remaining = [], size
    while remaining > 0:
        chunk = body.read(min(remaining, READ_CHUNK_BYTES))
        if not chunk:
            break
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)


def _skip(body, count: int) -> int:
    skipped = 0
    while skipped < count:
        chunk = body.read(min(count - skipped, READ_CHUNK_BYTES))
        if not chunk:
            break
        skipped += len(chunk)
    return skipped


def _retry_after(value: str | None) -> float | None:
    try:
        return min(float(value), MAX_RETRY_AFTER_SECONDS) if value is not None else None
    except ValueError:
        return None


class RangeFile(io.RawIOBase):
    """A seekable read-only file over ranged reads, so pyarrow reads only footers and wanted columns."""

    def __init__(self, path: str, size: int, reader: RangeReader):
        self.path, self.size, self.position, self.reader = path, size, 0, reader

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def readinto(self, buffer) -> int:
        length = min(len(buffer), self.size - self.position)
        if length <= 0:
            return 0
        try:
            data = self.reader.read(self.path, self.position, length)[0]
        except ReadError as error:
            raise OSError(str(error)) from None
        if len(data) != length:
            raise OSError(f"{self.path}: {len(data)} of {length} bytes at {self.position} (the file ended)")
        buffer[:length] = data
        self.position += length
        return length


class _ChunkStream(io.RawIOBase):
    """A readable stream over an iterator of byte chunks."""

    def __init__(self, chunks: Iterator[bytes]):
        self.chunks, self.pending = chunks, b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while not self.pending:
            self.pending = next(self.chunks, None)
            if self.pending is None:
                self.pending = b""
                return 0
        size = min(len(buffer), len(self.pending))
        buffer[:size], self.pending = self.pending[:size], self.pending[size:]
        return size


def open_binary(path: str, endpoint: str | None = None, settings: ReadSettings | None = None):
    """A readable binary stream over a whole local, s3:// or https:// file (remote bytes through RangeReader:
    verified, retried and resumed chunk by chunk). Raises ReadError / OSError when it cannot be read."""
    if is_local(path):
        try:
            return open_regular_file(path)
        except BadLocation as error:
            raise ReadError("bad_location", str(error)) from None
    reader = RangeReader(settings or ReadSettings(endpoint=endpoint))
    return io.BufferedReader(_ChunkStream(reader.stream(path)), buffer_size=READ_CHUNK_BYTES)
