"""udfs.common.progress: driver-side progress lines from Spark's status tracker; bars only on a terminal."""
from __future__ import annotations

import io
import logging
import time

import pytest

from parascout.jobs.base import Job
from parascout.udfs.common.progress import SparkProgress, format_seconds, progress_bar
from tests.conftest import run_job


def slow_rows(rows):
    time.sleep(0.4)
    return rows


@pytest.mark.slow
def test_a_running_spark_job_logs_progress_lines(spark, caplog):
    caplog.set_level(logging.INFO, logger="parascout.progress")
    rdd = spark.sparkContext.parallelize(range(12), 6).map(slow_rows)
    with SparkProgress("test-job", interval=0.2) as progress:
        assert rdd.count() == 12
    lines = [r.getMessage() for r in caplog.records if r.name == "parascout.progress"]
    assert progress.lines == len(lines) >= 1
    assert all(line.startswith("test-job: stage ") and "/6 tasks done" in line for line in lines)


class SlowJob(Job):
    name = "slow-test"
    description = "counts slowly"
    outputs = ()

    def process(self):
        rows = self.spark.sparkContext.parallelize(range(8), 4).map(slow_rows).count()
        self.report.input("rows", rows)
        self.report.kept(rows)


@pytest.mark.slow
def test_every_job_logs_progress_while_spark_runs(spark, tmp_path, caplog, monkeypatch):
    monkeypatch.setattr("parascout.udfs.common.progress.PROGRESS_SECONDS", 0.2)
    caplog.set_level(logging.INFO, logger="parascout.progress")
    report = run_job(SlowJob, spark, ["--root", str(tmp_path)])
    assert report["kept"] == 8
    assert any(r.getMessage().startswith("slow-test: stage ") for r in caplog.records)


def test_no_line_without_a_spark_job():
    class NoContext(SparkProgress):
        def _context(self):
            return None

    with NoContext("idle", interval=0.05) as progress:
        time.sleep(0.2)
    assert progress.lines == 0 and progress.poll() is None


class NoSpark(SparkProgress):
    """A progress block that sees no SparkContext: model training, archive generation."""

    def _context(self):
        return None


def test_a_long_block_without_spark_says_it_is_still_running(caplog):
    caplog.set_level(logging.INFO, logger="parascout.progress")
    with NoSpark("train-pairs", interval=0.05, quiet_seconds=0.12) as progress:
        time.sleep(0.4)
    lines = [r.getMessage() for r in caplog.records if r.name == "parascout.progress"]
    assert progress.lines == len(lines) >= 2
    assert all(line.startswith("train-pairs: still running after ") for line in lines)


def test_only_the_innermost_block_logs():
    outer, inner = (NoSpark(label, interval=0.05, quiet_seconds=0.12) for label in ("demo", "train-pairs"))
    with outer, inner:
        time.sleep(0.4)
    assert outer.lines == 0 and inner.lines >= 2


def test_bars_are_off_when_stderr_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())
    bar = progress_bar(range(3), desc="x")
    assert list(bar) == [0, 1, 2] and bar.disable


def test_format_seconds():
    assert [format_seconds(s) for s in (5, 600, 36_000)] == ["5 s", "10 min", "10.0 h"]
