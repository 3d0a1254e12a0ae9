"""A job's SparkSession: spark-submit's master when one is set, else local[*] with defaults fit for a laptop; the
Spark properties a run asks for (a --conf file's `spark:` section, then --spark-conf)."""
from __future__ import annotations

import os
import sys

import yaml

from parascout.jobs.arguments import resolve_conf_path
from parascout.jobs.errors import ConfigError


def start_session(app_name: str, properties: dict[str, str]):
    """The SparkSession: spark-submit's master when set, else local[*] with local_spark_defaults under
    `properties`. Started lazily by a job, so one that never touches Spark never pays for a JVM."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    properties = dict(properties)
    if not SparkConf().contains("spark.master"):
        builder = builder.master("local[*]")
        properties = {**local_spark_defaults(), **properties}
    for key, value in properties.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session


def run_properties(conf: dict, spark_conf: list[str]) -> dict[str, str]:
    """The Spark properties of a run: the merged --conf's `spark:` section, then each --spark-conf KEY=VALUE."""
    properties = {str(k): str(v) for k, v in (conf.get("spark") or {}).items()}
    for item in spark_conf:
        if "=" not in item:
            raise ConfigError(f"--spark-conf expects KEY=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        properties[key] = value
    return properties


def local_spark_defaults() -> dict[str, str]:
    """Spark properties for local[*] runs (a laptop, the demo): few shuffle partitions, UI off.

    The console progress bar is shown on a terminal only; logs get the jobs' own progress lines.
    parascout's Java UDFs go in spark.jars where `make jar` built them (else handles use regexp_replace).
    The driver, which runs the tasks here, uses the throughput collector: G1's concurrent threads compete
    with 2-4 task threads (scan-cdx 1.14x faster on 2 cores, benchmarks/bench_scan_cdx.py).
    """
    from parascout.udfs.common.jvm import jvm_jar_path

    defaults = {
        "spark.sql.shuffle.partitions": str(max(4, 2 * (os.cpu_count() or 2))),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "true" if sys.stderr.isatty() else "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.memory": "4g",
        "spark.driver.extraJavaOptions": "-XX:+UseParallelGC",
    }
    return {**defaults, "spark.jars": jvm_jar_path()} if jvm_jar_path() else defaults


def spark_properties(path: str) -> str:
    """The `spark:` section of a conf YAML as a spark-submit --properties-file text."""
    with open(resolve_conf_path(path), encoding="utf-8") as handle:
        conf = yaml.safe_load(handle) or {}
    return "".join(f"{key} {value}\n" for key, value in (conf.get("spark") or {}).items())
