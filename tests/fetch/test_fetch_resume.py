"""fetch-docs relaunched after a kill -9: finished fetch tasks are read back, only the others are fetched, and the
docs, texts and report equal an undisturbed run's; stale or finished runs' kept tasks are never reused."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pandas as pd
import pytest
from pyspark.sql import functions as F

from parascout.jobs.fetch_docs import FetchDocsJob
from parascout.jobs.report import StoreUnreachable
from parascout.udfs.common import storage, table_layout
from parascout.udfs.fetch import resume
from testkit.servers import kill_tree, serve
from testkit.warc import file_records, urls_rows, write_table, write_warc
from tests.conftest import REPO, run_job
from tests.support.s3a import require_s3a

pytestmark = pytest.mark.slow
PARTITIONS = 10
HELD = (8, 9)  # the partitions a killed run never finishes: 20%, scheduled last
#: the run's own Spark in a subprocess: two task slots, as the shared session has
SUBPROCESS_SPARK = ["--spark-conf", "spark.master=local[2]", "--spark-conf", "spark.ui.enabled=false",
                    "--spark-conf", "spark.sql.shuffle.partitions=4"]


def files_by_partition(spark, partitions: int, pages: int, folder: Path) -> tuple[dict[int, str], list[dict]]:
    """One WARC file per fetch partition (named so Spark's hash puts it there), `pages` pages each, plus a PDF
    (filtered) and bytes that are no WARC record (bad) in the first; ({partition: file}, CDX-like rows)."""
    names = [f"crawl-{i:03d}.warc.gz" for i in range(20 * partitions)]
    hashed = spark.createDataFrame([(name,) for name in names], "name string").select(
        "name", F.pmod(F.hash("name"), F.lit(partitions)).alias("partition")).collect()
    chosen: dict[int, str] = {}
    for row in hashed:
        chosen.setdefault(row["partition"], row["name"])
    rows = []
    for partition, name in sorted(chosen.items()):
        rows += write_warc(folder / name, file_records(partition, pages))
    return chosen, rows


@pytest.fixture
def archive(spark, tmp_path):
    """An HTTP-served archive of PARTITIONS files and its `urls` rows: (prefix, handler, {partition: file}, rows)."""
    folder = tmp_path / "archive"
    folder.mkdir()
    chosen, rows = files_by_partition(spark, PARTITIONS, 3, folder)
    prefix, handler, server = serve(folder)
    yield prefix, handler, chosen, urls_rows(rows)
    handler.gate.set()
    server.shutdown()


def argv_for(root: Path, prefix: str) -> list[str]:
    return ["--root", str(root), "--warc-prefix", prefix, "--select", "all", "--partitions", str(PARTITIONS)]


def sorted_table(spark, root: Path, table: str) -> pd.DataFrame:
    frame = spark.read.parquet(str(root / table)).toPandas()
    return frame.sort_values("url").reset_index(drop=True).drop(columns=["version"], errors="ignore")


def counts_of(report: dict) -> dict:
    """What a run accounted for, metrics included, less what says whether it was resumed."""
    metrics = {key: value for key, value in report["metrics"].items() if not key.startswith("resumed_")}
    return {**{key: report[key] for key in ("inputs", "kept", "filtered", "bad", "outputs", "balanced")},
            "metrics": metrics}


def kill_when_finished(command: list[str], area: str, wanted: int, log: Path) -> set[str]:
    """Start the run, SIGKILL it with every process under it once `wanted` tasks are kept; the tasks kept."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    with open(log, "wb") as output:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    try:
        while len(resume.finished_parts(area)) < wanted:
            assert process.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, f"{wanted} tasks not finished in time: {log.read_text()[-3000:]}"
            time.sleep(0.2)
    finally:
        kill_tree(process)
    assert process.returncode == -signal.SIGKILL
    return resume.finished_parts(area)


def test_a_killed_run_is_resumed_fetching_only_its_unfinished_tasks(spark, tmp_path, archive):
    prefix, handler, chosen, urls = archive
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    for root in (whole, killed):
        write_table(root, "urls", urls)
    undisturbed = run_job(FetchDocsJob, spark, argv_for(whole, prefix))
    assert undisturbed["metrics"]["resumed_partitions"] == 0 and sum(handler.gets.values()) == PARTITIONS

    handler.held = {chosen[partition] for partition in HELD}
    area = resume.area_path(str(killed), "fetch-docs")
    command = [sys.executable, "-m", "parascout.jobs.fetch_docs", *argv_for(killed, prefix), *SUBPROCESS_SPARK]
    kept = kill_when_finished(command, area, PARTITIONS - len(HELD), tmp_path / "killed.log")
    assert kept == {resume.warc_part(partition) for partition in range(PARTITIONS) if partition not in HELD}
    assert not (killed / "docs").exists() and not (killed / "_reports").exists()

    handler.gate.set()
    handler.gets.clear()
    rerun = run_job(FetchDocsJob, spark, argv_for(killed, prefix))
    assert handler.gets == {chosen[partition]: 1 for partition in HELD}  # one coalesced GET per unfinished file
    assert rerun["metrics"]["resumed_partitions"] == PARTITIONS - len(HELD)
    assert rerun["metrics"]["resumed_records"] == 3 * (PARTITIONS - len(HELD)) + 2
    assert counts_of(rerun) == counts_of(undisturbed)
    assert rerun["balanced"] and rerun["kept"] == 3 * PARTITIONS
    assert rerun["filtered"] == {"not_html": 1} and sum(rerun["bad"].values()) == 1
    for table in ("docs", "texts"):
        pd.testing.assert_frame_equal(sorted_table(spark, killed, table), sorted_table(spark, whole, table))
    assert not Path(area).exists()  # committed: the kept tasks are gone


def test_a_failed_run_keeps_its_tasks_and_another_runs_are_never_read(spark, tmp_path, archive, monkeypatch):
    prefix, handler, _, urls = archive
    write_table(tmp_path, "urls", urls)
    area = resume.area_path(str(tmp_path), "fetch-docs")
    monkeypatch.setattr(FetchDocsJob, "write_texts", lambda self, fetched: 1 / 0)  # fails after fetching
    with pytest.raises(ZeroDivisionError):
        run_job(FetchDocsJob, spark, argv_for(tmp_path, prefix))
    assert len(resume.finished_parts(area)) == PARTITIONS and sum(handler.gets.values()) == PARTITIONS
    monkeypatch.undo()

    plan = json.loads(Path(area, resume.PLAN).read_text())
    Path(area, resume.PLAN).write_text(json.dumps({**plan, "fingerprint": "another-run"}))
    handler.gets.clear()
    other = run_job(FetchDocsJob, spark, argv_for(tmp_path, prefix))  # another run's tasks: removed, fetched again
    assert other["metrics"]["resumed_partitions"] == 0 and sum(handler.gets.values()) == PARTITIONS
    assert other["balanced"] and not Path(area).exists()


def test_a_task_with_records_lost_to_the_store_is_not_kept(spark, tmp_path, archive, monkeypatch):
    prefix, handler, _, urls = archive
    write_table(tmp_path, "urls", urls)
    monkeypatch.setattr(handler, "throttle", 10_000)  # every GET answered 429/503: fetch_failed
    with pytest.raises(StoreUnreachable):
        run_job(FetchDocsJob, spark, [*argv_for(tmp_path, prefix), "--attempts", "1"])
    area = resume.area_path(str(tmp_path), "fetch-docs")
    assert Path(area, resume.PLAN).exists() and resume.finished_parts(area) == set()  # a rerun asks again


def test_the_resume_area_on_s3(moto_endpoint, monkeypatch):
    for key, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"),
                       ("AWS_DEFAULT_REGION", "us-east-1"), ("AWS_ENDPOINT_URL", moto_endpoint)):
        monkeypatch.setenv(key, value)
    boto3.client("s3", endpoint_url=moto_endpoint).create_bucket(Bucket="resume")
    area = resume.area_path("s3://resume/root", "fetch-docs")
    identity = {"fingerprint": "f1", "docs_version": None}
    assert resume.load_plan(area, identity) is None
    resume.save_plan(area, {**identity, "partitions": 4})
    frame = pd.DataFrame({"url": ["http://a/1", "http://a/2"], "status": ["ok", "not_html"]})
    import pyarrow as pa

    schema = pa.schema([("url", pa.string()), ("status", pa.string())])
    assert len(list(resume.kept_frames(area, resume.warc_part(3), iter([frame]), schema))) == 1
    assert len(list(resume.kept_frames(area, resume.wat_part("s3://x/a.wat.gz"), iter([frame]), None))) == 1
    assert resume.load_plan(area, identity)["partitions"] == 4
    assert resume.finished_parts(area) == {"warc-00003", resume.wat_part("s3://x/a.wat.gz")}
    assert resume.warc_partitions(resume.finished_parts(area)) == [3]
    assert resume.load_plan(area, {**identity, "docs_version": "v2"}) is None  # docs changed since: removed
    assert resume.finished_parts(area) == set()


def test_a_run_on_an_s3_root_resumes_from_its_kept_tasks_and_writes_an_undisturbed_run_s_tables(
        spark, tmp_path, archive, moto_endpoint, monkeypatch):
    """The resume area, the staged versions and the tables on an s3:// root (Spark's writes through S3A): a run
    that fails after fetching keeps every task there, and its rerun fetches nothing and writes what a local root
    gets."""
    require_s3a(spark)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    boto3.client("s3", endpoint_url=moto_endpoint).create_bucket(Bucket="resume-root")
    prefix, handler, _, urls = archive
    local, root = tmp_path / "local", "s3://resume-root/root"
    write_table(local, "urls", urls)
    storage.write_parquet_table(pd.DataFrame(urls), f"{root}/urls")
    undisturbed = run_job(FetchDocsJob, spark, argv_for(local, prefix))

    area = resume.area_path(root, "fetch-docs")
    with monkeypatch.context() as patched:
        patched.setattr(FetchDocsJob, "write_texts", lambda self, fetched: 1 / 0)  # fails after fetching
        with pytest.raises(ZeroDivisionError):
            run_job(FetchDocsJob, spark, argv_for(root, prefix))
    assert len(resume.finished_parts(area)) == PARTITIONS
    handler.gets.clear()
    rerun = run_job(FetchDocsJob, spark, argv_for(root, prefix))
    assert sum(handler.gets.values()) == 0 and rerun["metrics"]["resumed_partitions"] == PARTITIONS
    assert counts_of(rerun) == counts_of(undisturbed)
    for table in ("docs", "texts"):
        remote = spark.read.parquet(table_layout.table_location(f"{root}/{table}")).toPandas()
        remote = remote.sort_values("url").reset_index(drop=True).drop(columns=["version"], errors="ignore")
        pd.testing.assert_frame_equal(remote, sorted_table(spark, local, table))
    assert not storage.exists(storage.join(area, resume.PLAN))  # committed: the kept tasks are gone
