"""The benchmarks' process-tree measures: another process's tree is measured, and a child running its own program is
counted (only a JVM's child that has not yet run its own program shares, and is not counted twice)."""
from __future__ import annotations

import subprocess
import sys
import time

import psutil

from benchmarks.measure import PeakMemory, unexecuted_jvm_child


def test_peak_memory_of_another_process_tree_counts_its_children():
    holder = "import subprocess, sys; subprocess.run([sys.executable, '-c', " \
             "'x = bytearray(300 * 2**20); x[::4096] = b\"1\" * len(x[::4096]); import time; time.sleep(1.5)'])"
    process = subprocess.Popen([sys.executable, "-c", holder])
    with PeakMemory(interval=0.05, pid=process.pid) as memory:
        process.wait()
    assert memory.peak >= 300 * 2**20  # the grandchild's 300 MB, touched page by page
    assert set(memory.peak_by_kind) == {"driver", "workers"}


def test_a_child_running_its_own_program_is_not_taken_for_a_jvm_fork():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"])
    try:
        time.sleep(0.2)
        assert not unexecuted_jvm_child(psutil.Process(child.pid))
        assert not unexecuted_jvm_child(psutil.Process())
    finally:
        child.kill()
        child.wait()
