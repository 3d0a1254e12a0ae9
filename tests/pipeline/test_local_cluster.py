"""scan-cdx (the Java line parser, Python readers) and bucket-handles (the Java UDF), shipped to the
executors through spark.jars, in local-cluster mode: two executor JVMs.

It runs in a subprocess with its own SparkSession, so it does not clash with the shared
`spark` fixture; the executors' Python workers use this interpreter (PYSPARK_PYTHON).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parascout.udfs.common.jvm import jvm_jar_path

REPO = Path(__file__).resolve().parents[2]
CDX = REPO / "tests" / "data" / "cdx"


@pytest.mark.slow
def test_scan_cdx_runs_on_separate_executor_jvms(tmp_path):
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    # the whole fixture folder: its notes and script are skipped; the truncated file is counted by the jar's
    # CdxFileReader on the executors (without the jar Spark's reader fails on it and the scan reads again in Python)
    cluster = ["--spark-conf", "spark.master=local-cluster[2,1,1024]", "--spark-conf", "spark.ui.enabled=false",
               "--spark-conf", "spark.sql.shuffle.partitions=4"]
    command = [sys.executable, "-m", "parascout.jobs.scan_cdx", "--root", str(tmp_path), "--cdx", str(CDX),
               "--crawl", "CC-MAIN-2024-33", "--langs", "en,is", "--max-bad-fraction", "0.5", *cluster]
    finished = subprocess.run(command, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert finished.returncode == 0, finished.stderr[-3000:]
    if jvm_jar_path() is not None:  # the executors read and parsed the files with the jar's CdxFileReader
        assert "local CDX files read and parsed on the JVM (parascout.CdxFileReader.records)" in finished.stderr
    report = json.loads((tmp_path / "_reports" / "scan-cdx.json").read_text())
    assert report["metrics"]["spark_master"] == "local-cluster[2,1,1024]"
    assert report["metrics"]["executors"] == 2
    assert report["status"] == "ok" and report["balanced"]
    assert report["metrics"]["cdx_read_tasks"] == 3
    assert report["metrics"].get("reread_in_python", False) == (jvm_jar_path() is None)
    assert report["inputs"]["index_records"] == 18 + 11 + 4
    assert sum(report["bad"].values()) == 10 and report["bad"]["truncated_gzip"] == 1
    # the site example (www.example.is: isl and eng pages) keeps its Icelandic-only blog.example.is and the
    # news.example.co.uk of the same name
    assert report["kept"] == report["outputs"]["urls"] == 12
    assert report["outputs"]["hosts"] == 3

    if jvm_jar_path() is None:
        return  # no jar (`make jar`): bucket-handles would run regexp_replace, nothing to ship
    command = [sys.executable, "-m", "parascout.jobs.bucket_handles", "--root", str(tmp_path), "--langs", "en,is", *cluster]
    finished = subprocess.run(command, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert finished.returncode == 0, finished.stderr[-3000:]  # fails where the executors lack the jar
    assert "handles on the JVM: the Java UDF" in finished.stderr
    report = json.loads((tmp_path / "_reports" / "bucket-handles.json").read_text())
    assert report["status"] == "ok" and report["balanced"] and report["inputs"]["urls"] == 12
