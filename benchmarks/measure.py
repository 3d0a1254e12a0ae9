"""What the benchmarks measure beside time: peak resident memory of a run and its child processes."""
from __future__ import annotations

import os
import threading
from typing import Self

import psutil


class PeakMemory:
    """Peak resident memory of this process and all its descendants (driver, JVM, Python workers)."""

    def __init__(self, interval: float = 0.5) -> None:
        self.interval, self.peak, self.peak_by_kind = interval, 0, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me = psutil.Process(os.getpid())
        while not self._stop.is_set():
            total, by_kind = 0, {}
            for process in [me, *me.children(recursive=True)]:
                try:
                    rss = process.memory_info().rss
                    kind = "jvm" if "java" in process.name() else ("driver" if process.pid == me.pid else "workers")
                except psutil.Error:
                    continue
                total += rss
                by_kind[kind] = by_kind.get(kind, 0) + rss
            if total > self.peak:
                self.peak, self.peak_by_kind = total, by_kind
            self._stop.wait(self.interval)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
