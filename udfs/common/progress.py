"""Progress a person can see during a long run: Spark tasks polled on the driver, bars only on a terminal.

`SparkProgress` is a context manager around a job's work: a daemon thread on the
driver polls `SparkContext.statusTracker()` every few seconds and logs one line with
the active stages' tasks done / total, the task rate and an ETA; while no stage runs (a model
trains, an archive is generated) it says once a minute that the job is still running. Blocks nest
(the demo runs every job inside its own): only the innermost one logs. It needs nothing
from the workers (Python workers have no logging handler: their lines are lost on a
cluster) and costs one JVM call per poll.
`progress_bar` is tqdm when stderr is a terminal and a no-op wrapper otherwise, so
log files and CI never get `\\r`-joined bar lines.
"""
from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterable
from typing import Self

log = logging.getLogger("parascout.progress")

#: seconds between two progress lines
PROGRESS_SECONDS = 10.0
#: a block with no Spark stage running (model training, archive generation, driver work) says it is alive this often
QUIET_SECONDS = 60.0


#: the progress blocks open now, innermost last: only that one logs
_open_blocks: list[SparkProgress] = []


class SparkProgress:
    """Log the running Spark stages' progress every `interval` seconds while the block runs."""

    def __init__(self, label: str, interval: float | None = None, logger: logging.Logger | None = None,
                 spark_context=None, quiet_seconds: float | None = None):
        self.label = label
        self.interval = PROGRESS_SECONDS if interval is None else interval
        self.quiet_seconds = QUIET_SECONDS if quiet_seconds is None else quiet_seconds
        self.log = logger or log
        self.spark_context = spark_context
        self.lines = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._first_seen: dict[int, tuple[float, int]] = {}  # stage id -> (time first polled, tasks done then)

    def __enter__(self) -> Self:
        _open_blocks.append(self)
        if self.interval > 0:
            self._thread = threading.Thread(target=self._run, name=f"progress-{self.label}", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        _open_blocks.remove(self)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        started = last_line = time.monotonic()
        while not self._stop.wait(self.interval):
            if _open_blocks and _open_blocks[-1] is not self:  # a nested block reports
                last_line = time.monotonic()
                continue
            try:
                line = self.poll()
            except Exception as error:  # noqa: BLE001 - progress must never break the job
                line = None
                self.log.debug("progress poll failed: %s", error)
            now = time.monotonic()
            if not line and now - last_line >= self.quiet_seconds:
                line = f"{self.label}: still running after {format_seconds(now - started)} (no Spark stage active)"
            if line:
                self.log.info(line)
                self.lines += 1
                last_line = now

    def _context(self):
        if self.spark_context is not None:
            return self.spark_context
        from pyspark import SparkContext

        return SparkContext._active_spark_context

    def poll(self) -> str | None:
        """One progress line for the active stages, None when no stage is running."""
        context = self._context()
        if context is None:
            return None
        tracker = context.statusTracker()
        stages = [info for info in (tracker.getStageInfo(s) for s in sorted(tracker.getActiveStageIds())) if info]
        if not stages:
            return None
        now = time.monotonic()
        parts = [self._stage_line(stage, now) for stage in stages]
        return f"{self.label}: " + "; ".join(parts)

    def _stage_line(self, stage, now: float) -> str:
        done, total = stage.numCompletedTasks, stage.numTasks
        started, done_then = self._first_seen.setdefault(stage.stageId, (now, done))
        elapsed = now - started
        rate = (done - done_then) / elapsed if elapsed > 0 else 0.0
        line = (f"stage {stage.stageId} ({stage.name.split(' at ')[0]}) {done}/{total} tasks done, "
                f"{stage.numActiveTasks} running")
        if stage.numFailedTasks:
            line += f", {stage.numFailedTasks} failed"
        if rate > 0:
            line += f", {rate:.2f} tasks/s, ETA {format_seconds((total - done) / rate)}"
        return line


def format_seconds(seconds: float) -> str:
    """'45 s', '12 min', '3.2 h'."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def progress_bar(iterable: Iterable | None = None, enabled: bool = True, **options):
    """A tqdm bar on a terminal; elsewhere (a log file, CI) the same object with display off."""
    from tqdm import tqdm

    return tqdm(iterable, disable=not (enabled and sys.stderr.isatty()), **options)
