"""Paths, clients and bytes on local disk, file://, s3:// and https:// — every byte parascout reads or writes.

- Tables and small files (reports, markers) go through pyarrow.fs (`exists`, `read_text`, `write_text`,
  `write_parquet_table`); folders of objects are copied by `upload_dir` / `download_dir`.
- Archive bytes (CDX blocks, WARC records, Parquet footers, whole CDX and WAT files) are read by
  `RangeReader`: byte-range GETs whose responses are verified (206 with the asked Content-Range, or a
  full-object 200 sliced), retried by one loop only (`ReadSettings.attempts` tries per range; botocore's
  own retries are off for these GETs), and failures classified (`ReadError.reason`).
- Locations named by index lines are untrusted: `resolve_under` keeps a file name under its prefix
  (`..` and symlinks included) and only regular files are opened (a FIFO never blocks a task).
- `exclusive_lock` holds a lock file (local: flock; s3://: an object created only if absent) so one writer
  at a time works on a dataset root.

S3 clients come from one factory, `s3_client(endpoint, ...)`; the endpoint is a parameter (None: boto3's
own resolution, AWS_ENDPOINT_URL included), never set in the environment by parascout.

Why one module: it is the one owner of I/O (clients, verified range reads, retries, path
resolution, sync); the rest of parascout imports no boto3, pyarrow.fs or urllib of its own.
"""
from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import os
import random
import re
import socket
import stat
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

S3_SCHEMES = ("s3", "s3a", "s3n")
#: S3 error codes of a conditional request whose condition (If-None-Match, If-Match) did not hold
PRECONDITION_CODES = ("PreconditionFailed", "412", "ConditionalRequestConflict", "409")
#: how long an s3:// writer lock lasts without renewal (renewed every third of it): a crashed run's lock is taken
#: over after this
LOCK_LEASE_SECONDS = 600.0
HTTP_SCHEMES = ("http", "https")
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


# ---- paths -------------------------------------------------------------------------------
def scheme(path: str) -> str:
    return urlsplit(path).scheme if "://" in path else ""


def join(root: str, *parts: str) -> str:
    return "/".join([root.rstrip("/"), *[p.strip("/") for p in parts]])


def is_local(path: str) -> bool:
    return scheme(path) in ("", "file")


def local_path(path: str) -> str:
    return urlsplit(path).path if path.startswith("file://") else path


def to_hadoop(path: str) -> str:
    """A path Hadoop's FileSystem understands (local paths made absolute)."""
    return os.path.abspath(path) if scheme(path) == "" else path


def bucket_key(path: str) -> tuple[str, str]:
    """s3://bucket/key -> (bucket, key)."""
    parts = urlsplit(path)
    return parts.netloc, parts.path.lstrip("/")


class BadLocation(ValueError):
    """A file name that leaves its prefix, or names something that is not a regular file."""


def resolve_under(prefix: str, name: str) -> str:
    """PREFIX + name (one slash between), refusing names that leave the prefix on any scheme: a `..` segment
    anywhere, percent-encoded or not, and for local prefixes any path whose real location (symlinks
    resolved) is outside the prefix's."""
    if not prefix:
        return name
    if any(any(part == ".." for part in re.split(r"[/\\]", form)) or "\x00" in form for form in _decodings(name)):
        raise BadLocation(f"{name!r} leaves the prefix {prefix}")
    joined = f"{prefix.rstrip('/')}/{name.lstrip('/')}"
    if is_local(prefix):
        root = os.path.realpath(local_path(prefix))
        real = os.path.realpath(local_path(joined))
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            raise BadLocation(f"{name!r} resolves to {real}, outside {root}")
    return joined


def _decodings(name: str, rounds: int = 3) -> list[str]:
    """The name and its percent-decodings, once and again: an HTTP server (or a proxy before it) decodes
    `%2e%2e%2f` into `../`, some twice (`%252e`); every form must stay under the prefix."""
    forms = [name]
    for _ in range(rounds):
        decoded = unquote(forms[-1])
        if decoded == forms[-1]:
            break
        forms.append(decoded)
    return forms


def open_regular_file(path: str):
    """A local file opened for reading, only when it is a regular file (a FIFO or a device would block or never
    end: BadLocation). Opened non-blocking, checked on the open descriptor, then switched back to blocking."""
    descriptor = os.open(local_path(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise BadLocation(f"{path} is not a regular file")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


# ---- clients -----------------------------------------------------------------------------
@functools.lru_cache(maxsize=16)
def s3_client(endpoint: str | None = None, connect_timeout: float = 10.0, read_timeout: float = 60.0,
              pool_size: int = 16, retry_attempts: int = 3):
    """The one boto3 S3 client factory, cached per settings. Range reads ask for retry_attempts=1 (their
    retries are RangeReader's loop); listing, HEAD and directory sync keep botocore's standard retries."""
    import boto3
    from botocore.config import Config

    config = Config(retries={"mode": "standard", "total_max_attempts": retry_attempts},
                    max_pool_connections=max(pool_size, 10), connect_timeout=connect_timeout,
                    read_timeout=read_timeout)
    return boto3.client("s3", endpoint_url=endpoint or None, config=config)


def arrow_filesystem(path: str, endpoint: str | None = None):
    """(pyarrow filesystem, path inside it) for a local, file://, s3:// or gs:// path."""
    from pyarrow import fs

    if is_local(path):
        return fs.LocalFileSystem(), os.path.abspath(local_path(path))
    uri = path.replace("s3a://", "s3://", 1).replace("s3n://", "s3://", 1)
    endpoint = endpoint or (os.environ.get("AWS_ENDPOINT_URL") if uri.startswith("s3://") else None)
    if uri.startswith("s3://") and endpoint:
        parts = urlsplit(endpoint)
        filesystem = fs.S3FileSystem(endpoint_override=parts.netloc, scheme=parts.scheme or "http",
                                     region=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"))
        return filesystem, uri[len("s3://"):]
    return fs.FileSystem.from_uri(uri)


def exists(path: str, endpoint: str | None = None) -> bool:
    from pyarrow import fs

    filesystem, inner = arrow_filesystem(path, endpoint)
    return filesystem.get_file_info(inner).type != fs.FileType.NotFound


def read_text(path: str) -> str:
    filesystem, inner = arrow_filesystem(path)
    with filesystem.open_input_stream(inner) as handle:
        return handle.read().decode("utf-8")


def write_text(path: str, text: str) -> None:
    """Write a small text file; locally via a temporary name and rename (atomic)."""
    with open_output(path) as handle:
        handle.write(text.encode("utf-8"))


@contextlib.contextmanager
def open_output(path: str, compression: str | None = None):
    """A binary output stream to `path` (local, s3://, gs://) written under a temporary name and moved into
    place when the block ends without an error, so a reader never sees a half-written file."""
    filesystem, inner = arrow_filesystem(path)
    parent = inner.rsplit("/", 1)[0]
    filesystem.create_dir(parent, recursive=True)
    temporary = f"{parent}/{TEMPORARY_PREFIX}{uuid.uuid4().hex[:8]}-{inner.rsplit('/', 1)[1]}"
    try:
        with filesystem.open_output_stream(temporary, compression=compression) as handle:
            yield handle
        filesystem.move(temporary, inner)  # on object stores a copy, then a delete
    except BaseException:
        _discard_temporary(filesystem, path, temporary)  # the write's own error is the one raised
        raise


def _discard_temporary(filesystem, path: str, temporary: str) -> None:
    """Best effort, after a failed write: delete its temporary file (absent when the upload failed) and, on S3,
    abort its unfinished multipart uploads (invisible, but stored and billed until aborted)."""
    with contextlib.suppress(OSError):
        filesystem.delete_file(temporary)
    if scheme(path) not in S3_SCHEMES:
        return
    bucket, key = bucket_key(path)[0], temporary.split("/", 1)[1]
    with contextlib.suppress(Exception):
        client = s3_client()
        for upload in client.list_multipart_uploads(Bucket=bucket, Prefix=key).get("Uploads", []):
            client.abort_multipart_upload(Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])


TEMPORARY_PREFIX = ".tmp-"


def file_sizes(folder: str) -> dict[str, int]:
    """{name: bytes} of the files directly in a local, s3:// or gs:// folder ({} when it is absent)."""
    from pyarrow import fs

    filesystem, inner = arrow_filesystem(folder)
    if filesystem.get_file_info(inner).type == fs.FileType.NotFound:
        return {}
    return {info.base_name: info.size for info in filesystem.get_file_info(fs.FileSelector(inner))
            if info.type == fs.FileType.File}


def remove_temporaries(folder: str) -> int:
    """Delete what open_output left under temporary names in a folder (a killed writer's files); how many."""
    filesystem, inner = arrow_filesystem(folder)
    leftovers = [name for name in file_sizes(folder) if name.startswith(TEMPORARY_PREFIX)]
    for name in leftovers:
        filesystem.delete_file(f"{inner}/{name}")
    return len(leftovers)


def delete_file(path: str) -> None:
    """Delete a file when it is there."""
    if exists(path):
        filesystem, inner = arrow_filesystem(path)
        filesystem.delete_file(inner)


def modified_at(path: str):
    """When a file was last written (a UTC datetime), None when it is absent."""
    from pyarrow import fs

    filesystem, inner = arrow_filesystem(path)
    info = filesystem.get_file_info(inner)
    return None if info.type == fs.FileType.NotFound else info.mtime


def delete_dir(path: str) -> None:
    from pyarrow import fs

    filesystem, inner = arrow_filesystem(path)
    if filesystem.get_file_info(inner).type != fs.FileType.NotFound:
        filesystem.delete_dir(inner)


def write_parquet_table(frame, path: str, partition_by: list[str] | None = None) -> None:
    """Write a pandas DataFrame as a Parquet folder with _SUCCESS, atomically (temp folder, rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    filesystem, inner = arrow_filesystem(path)
    parent = inner.rsplit("/", 1)[0]
    temporary = f"{parent}/_tmp/{inner.rsplit('/', 1)[1]}-{uuid.uuid4().hex[:8]}"
    table = pa.Table.from_pandas(frame, preserve_index=False)
    filesystem.create_dir(temporary, recursive=True)
    if partition_by:
        pq.write_to_dataset(table, temporary, partition_cols=partition_by, filesystem=filesystem)
    else:
        pq.write_table(table, f"{temporary}/part-00000.parquet", filesystem=filesystem)
    with filesystem.open_output_stream(f"{temporary}/_SUCCESS"):
        pass
    if filesystem.get_file_info(inner).type.name != "NotFound":
        filesystem.delete_dir(inner)
    filesystem.move(temporary, inner)


def list_files(path: str, suffix: str = "", endpoint: str | None = None) -> list[str]:
    """Files under a local or s3:// folder (or the path itself when it is a file), sorted."""
    kind = scheme(path)
    if kind in ("", "file"):
        base = local_path(path)
        if os.path.isfile(base):
            return [path]
        found = []
        for folder, _, names in os.walk(base):
            found.extend(os.path.join(folder, n) for n in names if n.endswith(suffix))
        return sorted(found)
    if kind in S3_SCHEMES:
        bucket, prefix = bucket_key(path)
        paginator = s3_client(endpoint).get_paginator("list_objects_v2")
        keys = [obj["Key"] for page in paginator.paginate(Bucket=bucket, Prefix=prefix)
                for obj in page.get("Contents", []) if obj["Key"].endswith(suffix)]
        return sorted(f"{kind}://{bucket}/{key}" for key in keys)
    return [path]


def object_size(path: str, endpoint: str | None = None) -> int:
    """Size in bytes of a local or s3:// file."""
    if is_local(path):
        return os.path.getsize(local_path(path))
    bucket, key = bucket_key(path)
    return int(s3_client(endpoint).head_object(Bucket=bucket, Key=key)["ContentLength"])


def upload_dir(local: str | Path, remote: str, endpoint: str | None = None) -> int:
    """Copy every file under a local folder to an s3:// prefix (keys relative to the folder); files copied."""
    local = Path(local)
    bucket, prefix = bucket_key(remote)
    client = s3_client(endpoint)
    files = [path for path in sorted(local.rglob("*")) if path.is_file()]
    for path in files:
        key = "/".join(p for p in (prefix.rstrip("/"), path.relative_to(local).as_posix()) if p)
        client.upload_file(str(path), bucket, key)
    return len(files)


def download_dir(remote: str, local: str | Path, endpoint: str | None = None) -> int:
    """Copy every object under an s3:// prefix into a local folder (paths relative to the prefix); objects
    copied. A key that would land outside the folder is refused (BadLocation)."""
    local = Path(local)
    bucket, prefix = bucket_key(remote)
    prefix = prefix.rstrip("/") + "/"
    client = s3_client(endpoint)
    found = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            relative = item["Key"][len(prefix):]
            if not relative or relative.endswith("/"):
                continue
            destination = Path(resolve_under(str(local), relative))
            destination.parent.mkdir(parents=True, exist_ok=True)
            client.download_file(bucket, item["Key"], str(destination))
            found += 1
    return found


# ---- locks -------------------------------------------------------------------------------
class LockHeld(Exception):
    """Another process holds the lock; `holder` is what it wrote about itself (job, pid, host, since)."""

    def __init__(self, path: str, holder: dict):
        super().__init__(f"{path} is held by {describe_holder(holder)}")
        self.path = path
        self.holder = holder


class LockUnsupported(Exception):
    """The store offers no primitive parascout can lock with (gs:// and others), and the user said they run one
    writer at a time on it (a job's --unlocked-root): the job runs unlocked."""


class UnlockableRoot(ValueError):
    """The store offers no primitive parascout can lock with, and nobody said only one writer uses it."""



def describe_holder(holder: dict) -> str:
    parts = [holder.get("job") or "a writer", f"pid {holder['pid']}" if holder.get("pid") else "",
             f"on {holder['host']}" if holder.get("host") else "", f"since {holder['since']}" if holder.get("since") else ""]
    return " ".join(part for part in parts if part)


@contextlib.contextmanager
def exclusive_lock(path: str, owner: dict, wait_seconds: float = 0.0, poll_seconds: float = 0.5,
                   endpoint: str | None = None, lease_seconds: float = LOCK_LEASE_SECONDS,
                   unlocked_ok: bool = False):
    """Hold the lock `path` for the block, waiting up to `wait_seconds` for another holder; LockHeld after that.

    Local paths: flock on the file (the OS releases it when the holder dies, so a killed run leaves no stale
    lock). s3://: a lease, an object PUT with If-None-Match: * (S3's conditional create) naming its expiry,
    renewed every third of `lease_seconds` with If-Match on the holder's own ETag and deleted at the end the same
    way. A run killed before it deletes leaves the object; once its lease has expired the next writer takes it over
    with If-Match on the stale object's ETag (of several, one wins). A holder whose renewal finds the object
    changed has lost the lock: the yielded holder dict then carries `lost` (Job checks it before switching its
    tables). A conditional write whose answer was lost (the connection cut after the store applied it) is
    recognised by the lease id in the object, so the retry that then fails its condition still holds the lock.
    Other schemes (gs://: no conditional create parascout uses): UnlockableRoot, so two jobs never write one root
    unknowingly; LockUnsupported with `unlocked_ok` (the user runs one writer at a time)."""
    holder = {"pid": os.getpid(), "host": socket.gethostname(),
              "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **owner}
    if is_local(path):
        lock = _local_lock
    elif scheme(path) in S3_SCHEMES:
        lock = functools.partial(_s3_lock, endpoint=endpoint, lease_seconds=lease_seconds)
    elif unlocked_ok:
        raise LockUnsupported(f"no writer lock on {scheme(path)}:// stores (--unlocked-root)")
    else:
        raise UnlockableRoot(
            f"parascout cannot lock {scheme(path)}:// stores, so two jobs could write {path.rsplit('/_locks', 1)[0]} at "
            f"once and mix their tables; write to a local or s3:// root and copy it, or, running one job at a time "
            f"on it, pass --unlocked-root")
    with lock(path, holder, time.monotonic() + wait_seconds, poll_seconds):
        yield holder


@contextlib.contextmanager
def _local_lock(path: str, holder: dict, deadline: float, poll_seconds: float):
    import fcntl

    path = local_path(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockHeld(path, _holder_of(lambda: os.pread(descriptor, 4096, 0))) from None
                time.sleep(poll_seconds)
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, json.dumps(holder).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(descriptor, 0)
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def _s3_lock(path: str, holder: dict, deadline: float, poll_seconds: float, endpoint: str | None,
             lease_seconds: float):
    client, (bucket, key) = s3_client(endpoint), bucket_key(path)
    lease = _S3Lease(client, bucket, key, holder, lease_seconds)
    while not lease.acquire():
        if time.monotonic() >= deadline:
            raise LockHeld(path, _holder_of(lambda: client.get_object(Bucket=bucket, Key=key)["Body"].read())) \
                from None
        time.sleep(poll_seconds)
    renewer = threading.Thread(target=lease.keep, name=f"lease {key}", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        lease.released.set()
        renewer.join()  # no renewal in flight: the delete names the object's last ETag
        lease.release()


class _S3Lease:
    """One holder's lease on an S3 lock object: its last ETag, renewed until released (see exclusive_lock)."""

    def __init__(self, client, bucket: str, key: str, holder: dict, lease_seconds: float):
        self.client, self.bucket, self.key, self.holder = client, bucket, key, holder
        self.lease_seconds = lease_seconds
        self.etag: str | None = None
        self.lease_id = uuid.uuid4().hex  # tells this holder's own object from another's
        self.released = threading.Event()

    def body(self) -> bytes:
        return json.dumps({**self.holder, "lease_id": self.lease_id,
                           "expires_at": time.time() + self.lease_seconds}).encode()

    def own_etag(self) -> str | None:
        """The lock object's ETag when it is this holder's (a write whose answer was lost), else None."""
        try:
            found = self.client.get_object(Bucket=self.bucket, Key=self.key)
        except self._client_error():
            return None
        return found["ETag"] if _holder_of(lambda: found["Body"].read()).get("lease_id") == self.lease_id else None

    def acquire(self) -> bool:
        """Create the object, or take over one whose lease expired; False while another holder's lease runs."""
        try:
            self.etag = self._put(IfNoneMatch="*")
            return True
        except _PreconditionFailed:
            pass
        try:
            found = self.client.get_object(Bucket=self.bucket, Key=self.key)
        except self._client_error() as error:
            if _error_code(error) in ("NoSuchKey", "404"):  # released meanwhile: try again at once
                return False
            raise
        current = _holder_of(lambda: found["Body"].read())
        if current.get("lease_id") == self.lease_id:  # our own create, its answer lost and the retry refused
            self.etag = found["ETag"]
            return True
        expires_at = current.get("expires_at")
        if not isinstance(expires_at, (int, float)) or expires_at > time.time():  # held (or by a lease-less writer)
            return False
        try:
            self.etag = self._put(IfMatch=found["ETag"])
        except _PreconditionFailed:  # another writer renewed it or took it over first
            return False
        self.holder["took_over"] = True
        return True

    def keep(self) -> None:
        """Renew every third of the lease until released; a renewal that finds the object changed marks the
        holder `lost` and stops (the job refuses to switch its tables)."""
        while not self.released.wait(self.lease_seconds / 3):
            try:
                self.etag = self._put(IfMatch=self.etag)
            except _PreconditionFailed:
                self.etag = self.own_etag()  # a renewal applied whose answer was lost: still ours
                if self.etag is None:
                    self.holder["lost"] = "the lock object changed: its lease expired and another writer took it over"
                    return
            except Exception as error:  # noqa: BLE001 - a failed renewal is retried; the lease covers two of them
                logging.getLogger("parascout.storage").warning("lease renewal of %s failed: %s", self.key, error)

    def release(self) -> None:
        """Delete the lock object if it is still this holder's (the renewals stopped first)."""
        if self.holder.get("lost"):
            return
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self.key, IfMatch=self.etag)
        except self._client_error() as error:  # taken over (the lease ran out): the new holder's object stays
            if _error_code(error) not in (*PRECONDITION_CODES, "NoSuchKey", "404"):
                raise

    def _put(self, **condition) -> str:
        try:
            return self.client.put_object(Bucket=self.bucket, Key=self.key, Body=self.body(), **condition)["ETag"]
        except self._client_error() as error:
            if _error_code(error) in PRECONDITION_CODES:
                raise _PreconditionFailed from error
            raise

    @staticmethod
    def _client_error():
        from botocore.exceptions import ClientError

        return ClientError


class _PreconditionFailed(Exception):
    """A conditional write found the object in another state than the condition named."""


def _error_code(error) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def _holder_of(read) -> dict:
    """What the holder wrote about itself ({} when it cannot be read: being written, or just released)."""
    try:
        return json.loads(read() or b"{}")
    except Exception:  # noqa: BLE001 - the lock is held either way; who holds it is a courtesy
        return {}


# ---- byte ranges -------------------------------------------------------------------------
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
