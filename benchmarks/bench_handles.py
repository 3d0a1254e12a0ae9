"""Handles per second per core: the Python path (one precompiled trie regex) and the two Spark paths (the
Java UDF's trie scan, and the same regex in regexp_replace), against baselines measured in the same run (a
flat, case-insensitive longest-first alternation in Python; regexp_replace for the Java UDF) and against
STRAND's reported 5,000 URLs/s (a 1990s workstation).

Rates are per CPU-second (process CPU time: Python's, or the whole local[1] JVM's, GC and JIT included),
so they mean "per core" even on a busy machine; wall-clock rates are printed beside them.

    .venv/bin/python benchmarks/bench_handles.py [--n-python 300000] [--n-spark 2000000]
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from parascout.udfs.rank.handles import DELIM_CLASS, NON_DELIM_CLASS, build_stripper
from testkit.handle_urls import synthetic_urls

STRAND_URLS_PER_SECOND = 5_000


def per_second(function, items) -> tuple[float, float]:
    """(items per CPU-second, items per wall-clock second)."""
    cpu, wall = time.process_time(), time.perf_counter()
    for item in items:
        function(item)
    return len(items) / (time.process_time() - cpu), len(items) / (time.perf_counter() - wall)


def python_path(urls: list[str]) -> tuple[tuple[float, float], tuple[float, float]]:
    stripper = build_stripper(("en", "fr"))
    optimized = per_second(stripper.handle, urls)
    flat = re.compile(f"{DELIM_CLASS}(?:" + "|".join(map(re.escape, stripper.substrings)) + f")(?!{NON_DELIM_CLASS})",
                      re.IGNORECASE)
    baseline = per_second(lambda url: flat.sub("", "/" + url.split("://", 1)[-1].split("#", 1)[0].replace("?", "&")),
                          urls)
    return optimized, baseline


def spark_path(urls: list[str], repeats: int) -> dict[str, tuple[float, float]]:
    """Rates on local[1] of a Parquet scan alone and of scan + handle by regexp_replace ('regex') and by the
    Java UDF ('java', where the jar is built): (per JVM CPU-second, per wall second)."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from parascout.udfs.common.jvm import jvm_jar_path
    from parascout.udfs.rank.handles import handle_column, jvm_handles_available

    builder = (SparkSession.builder.master("local[1]").appName("bench-handles").config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", "3g"))
    spark = (builder.config("spark.jars", jvm_jar_path()) if jvm_jar_path() else builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jvm_cpu = jvm_cpu_seconds(spark)
    stripper = build_stripper(("en", "fr"))
    columns = {"scan": F.length("url"),
               "regex": F.length(handle_column(F.col("url"), stripper, use_jvm_udf=False))}
    if jvm_handles_available(spark):
        columns["java"] = F.length(handle_column(F.col("url"), stripper))
    rates = {}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "urls")
        spark.createDataFrame([(u,) for u in urls], "url string").repartition(1).write.parquet(path)
        frame = spark.read.parquet(path)
        for name, column in columns.items():
            frame.select(F.sum(column)).collect()  # warm up (codegen, JIT)
            cpu, wall = jvm_cpu(), time.perf_counter()
            for _ in range(repeats):
                frame.select(F.sum(column)).collect()
            cpu_seconds = jvm_cpu() - cpu
            rates[name] = (repeats * len(urls) / cpu_seconds, repeats * len(urls) / (time.perf_counter() - wall))
    spark.stop()
    return rates


def jvm_cpu_seconds(spark):
    """A function returning the CPU seconds the driver JVM (local mode: also the executor) has used."""
    pid = spark.sparkContext._gateway.proc.pid
    ticks = os.sysconf("SC_CLK_TCK")

    def read() -> float:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime, all threads (GC and JIT included)
    return read


def net_rate(total: float, scan: float) -> float:
    """The handle's own rate once the scan's time per URL is taken out."""
    return 1 / max(1 / total - 1 / scan, 1e-12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-python", type=int, default=300_000)
    parser.add_argument("--n-spark", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    urls = synthetic_urls(max(args.n_python, args.n_spark))
    print(f"{len(urls):,} synthetic URLs, e.g. {urls[0]} {urls[3]}")
    (optimized, optimized_wall), (baseline, _) = python_path(urls[:args.n_python])
    print(f"python path: {optimized:>11,.0f} handles/s/core (wall {optimized_wall:,.0f}/s); "
          f"{optimized / baseline:.1f}x the flat case-insensitive alternation ({baseline:,.0f}/s), "
          f"{optimized / STRAND_URLS_PER_SECOND:,.0f}x STRAND's {STRAND_URLS_PER_SECOND:,}/s")
    rates = spark_path(urls[:args.n_spark], args.repeats)
    scan = rates["scan"][0]
    for name, label in (("regex", "regexp_replace"), ("java", "Java UDF")):
        if name not in rates:
            print(f"spark path, {label}: not measured (no jar: `make jar` builds udfs/parascout-udfs.jar)")
            continue
        total, total_wall = rates[name]
        print(f"spark path, {label:<14}: {total:>11,.0f} handles/s/core with the Parquet scan (wall "
              f"{total_wall:,.0f}/s), {net_rate(total, scan):,.0f}/s/core net of the scan ({scan:,.0f}/s alone); "
              f"{total / STRAND_URLS_PER_SECOND:,.0f}x STRAND, {total / optimized:.1f}x the Python path")
    if "java" in rates:
        (java, _), (regex, _) = rates["java"], rates["regex"]
        print(f"Java UDF / regexp_replace: {java / regex:.2f}x with the scan, "
              f"{net_rate(java, scan) / net_rate(regex, scan):.2f}x net of the scan")

if __name__ == "__main__":
    main()
