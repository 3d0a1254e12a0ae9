"""One writer at a time on a dataset root: `exclusive_lock` holds a lock file while a job writes it (local:
flock; s3://: a lease, an object created only if absent and renewed until released).

Why a module of its own: an S3 lease is a protocol (conditional PUTs, a renewal thread, the takeover of an
expired lease, answers lost on the way) that reading and writing files never needs; paths, schemes and the
S3 client come from storage.
"""
from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import socket
import threading
import time
import uuid

from parascout.udfs.common.storage import S3_SCHEMES, bucket_key, is_local, local_path, s3_client, scheme

#: S3 error codes of a conditional request whose condition (If-None-Match, If-Match) did not hold
PRECONDITION_CODES = ("PreconditionFailed", "412", "ConditionalRequestConflict", "409")
#: how long an s3:// writer lock lasts without renewal (renewed every third of it): a crashed run's lock is taken
#: over after this
LOCK_LEASE_SECONDS = 600.0


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
