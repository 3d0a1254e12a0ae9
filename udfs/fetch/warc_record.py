"""The bytes of one WARC record, exactly as a byte-range GET returns them -> a decoded record or a reason.

`decode_record(data)` inflates the gzip member, reads the WARC and HTTP headers with
FastWARC, checks the block against its Content-Length, and decodes the HTTP body
(chunked transfer coding, then Content-Encoding gzip / deflate / br / zstd). Every
layer is bounded by the same limit (`MAX_UNCOMPRESSED_BYTES`): a layer that would
expand past it stops there and the record is `too_large`, so a small record holding a
compression bomb never costs more memory than the limit. It never raises on bad bytes.

Reasons, so that every requested record is accounted for:
- the bytes: `cut_short` (the gzip member stops before its end: the transfer or the file
  was cut; the only reason a re-read can fix, see `RETRYABLE_REASONS`), `bad_gzip`
  (gzip magic, undecodable deflate stream), `wrong_offset` (not gzip and not a record, or
  a gzip member that holds no record start), `arc_format` (an ARC record), `too_large`;
- the WARC record: `not_warc` (unreadable headers), `truncated` (block shorter than its
  Content-Length), one reason per non-response type (`request_record`, ...,
  `unknown_record_type`), `revisit_unresolved` (a revisit: its original is elsewhere,
  named by `refers_to_uri` / `refers_to_date` for the caller to resolve);
- the HTTP message: `not_http`, `bad_payload`, `unsupported_encoding`.

`TimeLimit(seconds)` bounds the whole parse of one record (`timeout`); what a record's page may keep of its
links is udfs.fetch.page_walk's `LinkBudget`.
"""
from __future__ import annotations

import ctypes
import io
import os
import re
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from fastwarc.stream_io import BrotliReader, ZstdReader
from fastwarc.warc import WarcRecord

MAX_UNCOMPRESSED_BYTES = 32 * 1024 * 1024
RECORD_SECONDS = 10.0

RECORD_TYPE_REASONS = {name: f"{name}_record" for name in
                       ("request", "metadata", "warcinfo", "resource", "conversion", "continuation")}
FILTERED_REASONS = frozenset({*RECORD_TYPE_REASONS.values(), "unknown_record_type", "revisit_unresolved",
                              "too_large", "arc_format", "unsupported_encoding"})
BAD_REASONS = frozenset({"cut_short", "bad_gzip", "wrong_offset", "not_warc", "truncated", "not_http",
                         "bad_payload", "timeout"})
#: reasons a second read of the same byte range can fix (udfs.fetch.warc_fetch retries them)
RETRYABLE_REASONS = frozenset({"cut_short"})

GZIP_MAGIC = b"\x1f\x8b"
ARC_HEADER = re.compile(rb"[a-z][a-z0-9+.\-]*:\S* \d{1,3}(?:\.\d{1,3}){3} \d{8,14} ", re.IGNORECASE)
STREAM_CHUNK = 64 * 1024
INFLATE_CHUNK = 1024 * 1024  # zlib copies the unconsumed input at each step: small steps cost O(n^2) on big records
DIGITS = re.compile("[0-9]{1,15}")
CHUNK_SIZE = re.compile(rb"[0-9a-fA-F]{1,16}")
#: a chunk size with a sign or in another notation Python's int() would take: a fuzzed body, never plain text
SIGNED_NUMBER = re.compile(rb"[+-]\s*[0-9a-fA-FxX_]+|0[xX][0-9a-fA-F_]+|[0-9a-fA-F]+_[0-9a-fA-F_]+|[0-9a-fA-F]{17,}")


class RecordTimeout(BaseException):
    """Raised inside a thread whose record ran past its time limit (BaseException: no `except Exception` eats it)."""


class RecordProblem(Exception):
    """A record cannot be used: `reason` becomes its status."""

    def __init__(self, reason: str, detail: str | None = None):
        super().__init__(detail or reason)
        self.reason = reason
        self.detail = detail


@dataclass
class DecodedRecord:
    """One WARC record: status 'ok' or a reason, its headers, and the HTTP body decoded (bounded)."""

    status: str = "ok"
    error: str | None = None
    warc_type: str | None = None
    target_uri: str | None = None
    warc_truncated: str | None = None
    refers_to_uri: str | None = None
    refers_to_date: str | None = None
    #: WARC-Date, WARC-Payload-Digest and WARC-Identified-Payload-Type as written (what a CDX line reports)
    warc_date: str | None = None
    payload_digest: str | None = None
    identified_type: str | None = None
    http_status: int | None = None
    http_headers: dict[str, str] = field(default_factory=dict)  # lower-case names, first value
    body: bytes | None = None
    #: what decoding met: 'chunked', 'gzip', 'deflate', 'br', 'zstd', 'encoding_ignored' (declared but not
    #: encoded), 'body_cut' (an encoded body that ends early, e.g. WARC-Truncated), 'trailing_bytes'
    flags: list[str] = field(default_factory=list)

    @property
    def content_type(self) -> str | None:
        """The media type of the HTTP body, lower-case and without parameters."""
        return self.http_headers.get("content-type", "").split(";")[0].strip().lower() or None

    def fail(self, reason: str, detail: str | None = None) -> DecodedRecord:
        self.status, self.error, self.body = reason, detail[:300] if detail else None, None
        return self


def decode_record(data: bytes, limit: int = MAX_UNCOMPRESSED_BYTES,
                  wants_body: Callable[[DecodedRecord], bool] | None = None) -> DecodedRecord:
    """Decode one record's bytes; the HTTP body only where `wants_body(record)` (default: always)."""
    record = DecodedRecord()
    try:
        raw = inflate_member(data, limit, record.flags)
        fast = _warc_headers(raw, record)
        if record.status == "ok" and fast.is_http:
            body = _http_message(fast, record)
            if record.status == "ok" and (wants_body is None or wants_body(record)):
                record.body = decode_body(body, record.http_headers, limit, record.flags)
    except RecordProblem as problem:
        record.fail(problem.reason, problem.detail)
    except (OSError, ValueError, UnicodeError) as error:  # FastWARC on headers no fuzzing has produced yet
        record.fail("not_warc", f"{type(error).__name__}: {error}")
    return record


def inflate_member(data: bytes, limit: int = MAX_UNCOMPRESSED_BYTES, flags: list[str] | None = None) -> bytes:
    """The uncompressed record of a gzip member (or of bytes that are already a WARC record)."""
    if data[:2] != GZIP_MAGIC:
        return _check_record_start(data)
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        raw = inflate_bounded(inflater, data, limit)
    except zlib.error as error:
        raise RecordProblem("bad_gzip", str(error)) from None
    if not inflater.eof:
        raise RecordProblem("cut_short", f"gzip member ends after {len(data)} bytes, before its end")
    if inflater.unused_data.strip(b"\0\r\n") and flags is not None:
        flags.append("trailing_bytes")
    return _check_record_start(raw)


def inflate_bounded(inflater, data: bytes, limit: int) -> bytes:
    """Inflate `data` a chunk at a time; RecordProblem('too_large') as soon as the output passes `limit`."""
    out, pending = bytearray(), data
    while not inflater.eof:
        piece = inflater.decompress(pending, INFLATE_CHUNK)
        out += piece
        if len(out) > limit:
            raise RecordProblem("too_large", f"inflates past {limit} bytes")
        pending = inflater.unconsumed_tail
        if not pending and len(piece) < INFLATE_CHUNK:
            break
    return bytes(out)


def _check_record_start(raw: bytes) -> bytes:
    if raw[:5] == b"WARC/":
        return raw
    if raw[:11] == b"filedesc://" or ARC_HEADER.match(raw[:512]):
        raise RecordProblem("arc_format", "an ARC record, not WARC")
    raise RecordProblem("wrong_offset", f"no record starts here: {raw[:40]!r}")


def _warc_headers(raw: bytes, record: DecodedRecord) -> WarcRecord:
    """Parse the WARC headers into `record`; set a reason for short blocks and non-response types."""
    try:
        fast = WarcRecord.from_bytes(raw)
    except OSError as error:
        raise RecordProblem("not_warc", str(error)) from None
    headers = fast.headers
    record.warc_type = (headers.get("WARC-Type") or "").strip().lower() or None
    target = headers.get("WARC-Target-URI")
    record.target_uri = target.strip().removeprefix("<").removesuffix(">") if target else target  # WARC 1.0: <uri>
    record.warc_truncated = headers.get("WARC-Truncated")
    record.warc_date = headers.get("WARC-Date")
    record.payload_digest = headers.get("WARC-Payload-Digest")
    record.identified_type = headers.get("WARC-Identified-Payload-Type")
    declared = (headers.get("Content-Length") or "").strip(" \t")
    if not DIGITS.fullmatch(declared):
        raise RecordProblem("not_warc", f"Content-Length {declared!r}")
    if fast.content_length < int(declared):
        raise RecordProblem("truncated", f"block of {fast.content_length} bytes, Content-Length {declared}")
    if record.warc_type == "revisit":
        record.refers_to_uri = headers.get("WARC-Refers-To-Target-URI")
        record.refers_to_date = headers.get("WARC-Refers-To-Date")
        record.fail("revisit_unresolved", f"refers to {record.refers_to_uri} at {record.refers_to_date}")
    elif record.warc_type != "response":
        reason = RECORD_TYPE_REASONS.get(record.warc_type or "", "unknown_record_type")
        record.fail(reason, f"WARC-Type: {record.warc_type}")
    elif not fast.is_http:
        record.fail("not_http", f"Content-Type: {headers.get('Content-Type')}")
    return fast


def _http_message(fast: WarcRecord, record: DecodedRecord) -> bytes:
    """Parse the HTTP status and headers into `record`; the raw (still encoded) body."""
    try:
        fast.parse_http(auto_decode="none", quirks_mode=True)
    except OSError as error:
        raise RecordProblem("not_http", str(error)) from None
    headers = fast.http_headers
    if headers is None or not headers.status_code:
        raise RecordProblem("not_http", "no HTTP status line")
    record.http_status = int(headers.status_code)
    for name, value in headers.items():
        record.http_headers.setdefault(name.lower(), value)
    return fast.reader.read()


def decode_body(body: bytes, http_headers: dict[str, str], limit: int = MAX_UNCOMPRESSED_BYTES,
                flags: list[str] | None = None) -> bytes:
    """Undo chunked transfer coding, then each Content-Encoding (last applied first); each layer <= limit."""
    flags = flags if flags is not None else []
    if "chunked" in http_headers.get("transfer-encoding", "").lower():
        body = dechunk(body, flags)
    encodings = [part.strip().lower() for part in http_headers.get("content-encoding", "").split(",")]
    for encoding in reversed([part for part in encodings if part and part != "identity"]):
        body = _decode_layer(body, encoding, limit, flags)
    return body


def dechunk(body: bytes, flags: list[str]) -> bytes:
    """Chunked transfer coding -> bytes (never longer than the input: every step moves forward); not chunked at
    all -> as is. A chunk size that is not plain hex (`-5`, `0x10`, `1_0`, over 16 digits) is bad_payload."""
    pieces, position = [], 0
    while position < len(body):
        line_end = body.find(b"\n", position, position + 1024)
        size_text = body[position:line_end].split(b";")[0].strip() if line_end >= 0 else b""
        if not CHUNK_SIZE.fullmatch(size_text):
            if position == 0 and not SIGNED_NUMBER.fullmatch(size_text):
                return body  # declared chunked but sent plain, as servers and proxies do
            if SIGNED_NUMBER.fullmatch(size_text):
                raise RecordProblem("bad_payload", f"chunk size {size_text[:40]!r} at byte {position}")
            flags.append("body_cut")
            break
        size = int(size_text, 16)
        if size == 0:
            break
        start = line_end + 1
        pieces.append(body[start:start + size])
        if start + size > len(body):
            flags.append("body_cut")
            break
        position = start + size + (2 if body[start + size:start + size + 2] == b"\r\n" else 1)
    flags.append("chunked")
    return b"".join(pieces)


def _decode_layer(data: bytes, encoding: str, limit: int, flags: list[str]) -> bytes:
    if encoding in ("gzip", "x-gzip", "deflate"):
        decoded = _inflate_body(data, limit, flags, zlib.MAX_WBITS | (16 if encoding != "deflate" else 0))
    elif encoding == "br":
        decoded = _read_bounded(BrotliReader, data, limit, flags)
    elif encoding == "zstd":
        decoded = _read_bounded(ZstdReader, data, limit, flags)
    else:
        raise RecordProblem("unsupported_encoding", f"Content-Encoding: {encoding}")
    if decoded is None:  # not encoded at all: servers label plain bodies gzip; keep them as sent
        flags.append("encoding_ignored")
        return data
    flags.append(encoding)
    return decoded


def _inflate_body(data: bytes, limit: int, flags: list[str], wbits: int) -> bytes | None:
    """gzip (all members) or zlib/raw deflate, stopped at limit + 1 bytes of output; None if not encoded."""
    pieces, total = [], 0
    while data:
        inflater = zlib.decompressobj(wbits)
        try:
            piece = inflate_bounded(inflater, data, limit - total)
        except zlib.error:
            if total == 0 and wbits == zlib.MAX_WBITS:
                return _inflate_body(data, limit, flags, -zlib.MAX_WBITS)  # 'deflate' sent as raw deflate
            if total == 0:
                return None
            flags.append("body_cut")
            break
        total += len(piece)
        pieces.append(piece)
        if not inflater.eof:
            flags.append("body_cut")
            break
        data = inflater.unused_data if inflater.unused_data[:2] == GZIP_MAGIC else b""
    return b"".join(pieces)


def _read_bounded(reader_class, data: bytes, limit: int, flags: list[str]) -> bytes | None:
    """Read a fastwarc decoding stream in chunks, stopping past limit; None when the data is not encoded."""
    pieces, total = [], 0
    try:
        reader = reader_class(io.BytesIO(data))
        while piece := reader.read(STREAM_CHUNK):
            total += len(piece)
            if total > limit:
                raise RecordProblem("too_large", f"Content-Encoding layer inflates past {limit} bytes")
            pieces.append(piece)
    except OSError:
        if total == 0:
            return None
        flags.append("body_cut")
    return b"".join(pieces)



class TimeLimit:
    """Raise RecordTimeout in this thread once `seconds` pass inside the block (None or <= 0: no limit).

    A watchdog thread raises the exception asynchronously (PyThreadState_SetAsyncExc) because parsing
    runs in fetch-docs' worker threads, where signal.alarm cannot reach. It lands at the next Python
    bytecode: a C call already running (one inflate, one HTML tokenizer pass) finishes first; those are
    bounded by the size limits. An exception raised but not yet delivered when the block ends is withdrawn.
    """

    _lock = threading.Lock()
    _wakeup = threading.Condition(_lock)
    _active: ClassVar[dict[int, TimeLimit]] = {}
    _watchdog_pid: int | None = None

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.fired = False

    def __enter__(self) -> None:
        if self.seconds is None or self.seconds <= 0:
            return
        self.thread_id = threading.get_ident()
        self.deadline = time.monotonic() + self.seconds
        with self._lock:
            self._start_watchdog()
            self._active[id(self)] = self
            self._wakeup.notify()

    def __exit__(self, *exc_info) -> None:
        if self.seconds is None or self.seconds <= 0:
            return
        with self._lock:
            self._active.pop(id(self), None)
            if self.fired:  # withdraw an exception not delivered yet; a delivered one is propagating now
                _set_async_exception(self.thread_id, None)

    @classmethod
    def _start_watchdog(cls) -> None:
        if cls._watchdog_pid != os.getpid():  # a forked Spark worker does not inherit the thread
            cls._active.clear()
            threading.Thread(target=cls._watch, name="record-time-limit", daemon=True).start()
            cls._watchdog_pid = os.getpid()

    @classmethod
    def _watch(cls) -> None:
        with cls._lock:
            while True:
                now = time.monotonic()
                for key, guard in list(cls._active.items()):
                    if guard.deadline <= now:
                        guard.fired = True
                        del cls._active[key]
                        _set_async_exception(guard.thread_id, RecordTimeout)
                soonest = min((guard.deadline for guard in cls._active.values()), default=now + 60.0)
                cls._wakeup.wait(max(soonest - now, 0.001))


def _set_async_exception(thread_id: int, exception: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               ctypes.py_object(exception) if exception else None)
