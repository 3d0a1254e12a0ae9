"""One writer per dataset root: a job holds ROOT/_locks/writer.lock while it runs (locks.exclusive_lock: a
lock file on local disks, a lease on s3://), and a job it runs in the same thread shares it."""
from __future__ import annotations

import argparse
import contextlib
import logging
import threading

from parascout.jobs.errors import JobFailed
from parascout.udfs.common import locks, storage

#: (root lock path, thread) -> its holder, for the locks this process holds: a job a job runs (the demo's steps)
#: shares its lock
_HELD_LOCKS: dict[tuple[str, int], dict] = {}


class RootBusy(JobFailed):
    """Another job is writing the same dataset root (one writer per root)."""


class WriterLock:
    """Job's writer lock on --root: `writer_lock()` holds it, `lock_holder` is the lock as held (an s3:// lease
    marks itself `lost`)."""

    args: argparse.Namespace
    name: str
    log: logging.Logger
    lock_holder: dict

    def lock_path(self) -> str:
        """The root's writer lock."""
        return storage.join(self.args.root, "_locks", "writer.lock")

    @contextlib.contextmanager
    def writer_lock(self):
        """Hold ROOT/_locks/writer.lock while the job runs: a second writer on the root fails (RootBusy) or, with
        --wait-lock, waits. A job run by a job holding the lock in the same thread (the demo's steps) shares it.
        A root on a store without a lock primitive (gs://) is refused (locks.UnlockableRoot, a one-line error)
        unless --unlocked-root promises one writer at a time; it then runs unlocked, with a warning."""
        path = self.lock_path() if self.args.root else None
        key = (path, threading.get_ident())
        if path is None or key in _HELD_LOCKS:
            self.lock_holder = _HELD_LOCKS.get(key, {})
            yield
            return
        with contextlib.ExitStack() as stack:
            try:
                self.lock_holder = stack.enter_context(locks.exclusive_lock(
                    path, {"job": self.name}, wait_seconds=getattr(self.args, "wait_lock", 0.0),
                    unlocked_ok=getattr(self.args, "unlocked_root", False)))
            except locks.LockHeld as held:
                raise RootBusy(f"another job is writing {self.args.root} ({locks.describe_holder(held.holder)}); "
                               f"rerun when it ends, or pass --wait-lock to wait (lock: {path})") from None
            except locks.LockUnsupported as error:
                self.log.warning("%s: %s; run one job at a time on this root", self.name, error)
            _HELD_LOCKS[key] = self.lock_holder
            stack.callback(_HELD_LOCKS.pop, key, None)
            yield
