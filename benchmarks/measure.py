"""What the benchmarks measure beside wall time: CPU seconds and peak resident memory of a process tree."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Self

import psutil

from testkit.servers import kill_tree


class PeakMemory:
    """Peak resident memory of a process (`pid`, else this one) and all its descendants (driver, JVM, Python workers).

    A process a JVM thread has just started shares the JVM's memory until it runs its own program (Java starts
    commands by vfork or posix_spawn: Spark's heartbeat and task threads start a few); such a child, named after the
    thread that forked it and still running the JVM's executable and command line, is not counted again."""

    def __init__(self, interval: float = 0.5, pid: int | None = None) -> None:
        self.interval, self.pid, self.peak, self.peak_by_kind = interval, pid or os.getpid(), 0, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            me = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        while not self._stop.is_set():
            total, by_kind = 0, {}
            try:
                tree = [me, *me.children(recursive=True)]
            except psutil.NoSuchProcess:
                return
            for process in tree:
                try:
                    if unexecuted_jvm_child(process):
                        continue
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


def unexecuted_jvm_child(process: psutil.Process) -> bool:
    """Whether `process` is a JVM's child that has not yet run its own program: the same executable and command line
    as its parent, a java one (its memory is the parent's)."""
    parent = process.parent()
    if parent is None:
        return False
    exe = process.exe()
    return "java" in os.path.basename(exe) and exe == parent.exe() and process.cmdline() == parent.cmdline()


class TreeCpu:
    """CPU seconds of a process tree (`pid` and its descendants, or the descendants alone), sampled in a thread every
    `interval` seconds: a process that has ended keeps what it was last seen using, so the count never goes back
    when a Python worker or a child exits between two readings (one that lives less than `interval` is missed)."""

    def __init__(self, pid: int | None = None, include_root: bool = True, interval: float = 0.2) -> None:
        self.root, self.include_root, self.interval = psutil.Process(pid or os.getpid()), include_root, interval
        self.seen: dict[tuple[int, float], float] = {}  # (pid, start time): the pid may be reused
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        try:
            tree = self.root.children(recursive=True) + ([self.root] if self.include_root else [])
        except psutil.NoSuchProcess:
            return
        for process in tree:
            try:
                times, key = process.cpu_times(), (process.pid, process.create_time())
            except psutil.Error:
                continue
            with self._lock:
                self.seen[key] = times.user + times.system  # an ended child is counted by its own entry

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def seconds(self) -> float:
        """The tree's CPU seconds so far."""
        self._sample()
        with self._lock:
            return sum(self.seen.values())

    def total(self) -> float:
        """Stop sampling: the tree's CPU seconds."""
        self._stop.set()
        self._thread.join()
        return self.seconds()


def run_job(command: list[str], log: Path, kill_when=None) -> dict:
    """Run a job in its own process tree (its output to `log`); with `kill_when`, kill the tree once kill_when()
    holds. Its CPU seconds, wall seconds and peak resident memory in MB (TreeCpu, PeakMemory over its tree); a job
    that fails unasked exits the benchmark with its log's end."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    started = time.monotonic()
    with open(log, "wb") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
    cpu = TreeCpu(process.pid)
    with PeakMemory(interval=0.05, pid=process.pid) as memory:
        if kill_when is not None:
            while not kill_when() and process.poll() is None:
                time.sleep(0.2)
            kill_tree(process)
        process.wait()
    if kill_when is None and process.returncode != 0:
        raise SystemExit(log.read_text()[-3000:])
    return {"cpu": cpu.total(), "wall": time.monotonic() - started, "peak_mb": memory.peak / 2**20}
