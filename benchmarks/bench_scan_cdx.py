"""Throughput of scan-cdx (gzip CDX -> urls Parquet) beside a gunzip-and-count Spark read of the same files.

    .venv/bin/python benchmarks/bench_scan_cdx.py --lines 1000000 --repeats 3

Generates realistic CommonCrawl CDX lines once (format_cdx_line; kept under --data), warms
every path up, then times them alternately and prints lines/s and the ratio of medians, in wall-clock
time and in CPU seconds of the JVM and its Python workers (steadier on a shared machine).
The baseline, `spark.read.text(files).count()`, only gunzips and splits lines. `scan lang=cdx` is the scan
with `--lang-from cdx` (no URL-declared languages); `scan en,is` keeps the sites of one language pair, as a
corpus builder's scan does. `scan text-rdr`
is the same scan with Spark's text reader instead of the jar's CdxFileReader (the path without the
jar, whose Hadoop line cap drops an over-long line uncounted). A third
timing reads the same lines as a ZipNum collection with a TLD filter that matches every
block: the path of filtered and S3 scans (Python tasks fetch and gunzip byte ranges).
A fourth writes the scan's own `urls` rows, held in memory, to Parquet as the job does (less the
time to read them from memory): the floor of any scan that writes that table, so gunzip + write
bounds the ratio a scan can reach.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parascout.udfs.common.urls import surt
from parascout.udfs.index.cdx import format_cdx_line, write_zipnum

CRAWL = "CC-MAIN-2024-33"
LANGS = ["eng", "eng", "eng", "isl", "isl", "deu", "fra", "eng,isl", "isl,eng", "mlt", ""]
SECTIONS = ["en", "is", "de", "news", "about", "products", "blog/2024/08", "is/frettir", "en/news"]


def realistic_lines(count: int, seed: int = 1):
    """CDX lines for Zipf-sized hosts: 200 pages mostly, redirects, 404s, revisits, PDFs, older captures."""
    rng = random.Random(seed)
    hosts = [f"{rng.choice(['www.', '', 'blog.', 'shop.'])}site{i}.{rng.choice(['is', 'com', 'de', 'co.uk', 'mt'])}"
             for i in range(max(count // 40, 10))]
    weights = [1 / (rank + 1) for rank in range(len(hosts))]
    picked = rng.choices(hosts, weights, k=count)
    for index, host in enumerate(picked):
        path = f"/{rng.choice(SECTIONS)}/article-{rng.randrange(1_000_000)}.html"
        if rng.random() < 0.2:
            path += f"?id={rng.randrange(10_000)}&lang={rng.choice(['en', 'is'])}"
        url = f"{rng.choice(['https', 'https', 'http'])}://{host}{path}"
        status = rng.choices(["200", "301", "302", "404"], [88, 5, 3, 4])[0]
        mime = rng.choices(["text/html", "application/pdf", "image/jpeg", "warc/revisit"], [93, 3, 2, 2])[0]
        day, hour, minute, second = rng.randrange(1, 15), rng.randrange(24), rng.randrange(60), rng.randrange(60)
        timestamp = f"202408{day:02d}{hour:02d}{minute:02d}{second:02d}"
        fields = {"url": url, "mime": mime, "mime-detected": None if mime == "warc/revisit" else mime,
                  "status": status, "digest": hashlib.sha1(url.encode()).hexdigest()[:32].upper(),
                  "length": str(rng.randrange(800, 90_000)), "offset": str(rng.randrange(10**9)),
                  "filename": f"crawl-data/{CRAWL}/segments/1722640{rng.randrange(100000, 999999)}.{index % 97}"
                              f"/warc/CC-MAIN-20240805082005-20240805112005-{rng.randrange(100000):05d}.warc.gz",
                  "charset": "UTF-8", "languages": rng.choice(LANGS)}
        if status.startswith("3"):
            fields["redirect"] = url.replace("http://", "https://") + ("/" if not path.endswith("/") else "")
        yield format_cdx_line(surt(url), timestamp, fields)


def generate(folder: Path, count: int, files: int) -> list[str]:
    """Write `count` sorted lines as `files` gzip CDX files (reused when already there)."""
    paths = [folder / f"cdx-{i:05d}.gz" for i in range(files)]
    marker = folder / f"_lines_{count}_{files}"
    if marker.exists():
        return [str(p) for p in paths]
    folder.mkdir(parents=True, exist_ok=True)
    started = time.time()
    lines = sorted(realistic_lines(count))
    per_file = -(-count // files)
    for index, path in enumerate(paths):
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as handle:
            handle.write("\n".join(lines[index * per_file:(index + 1) * per_file]) + "\n")
    write_zipnum(lines, str(folder.parent / "zipnum"), lines_per_file=per_file)
    marker.touch()
    print(f"generated {count:,} lines in {files} files in {time.time() - started:.0f}s -> {folder}", flush=True)
    return [str(p) for p in paths]


def cpu_seconds() -> float:
    """CPU seconds used so far by this process's children: the Spark JVM and its Python workers."""
    total = 0.0
    for process in psutil.Process().children(recursive=True):
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "parascout-bench-cdx"))
    args = parser.parse_args(argv)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from parascout.jobs.base import local_spark_defaults
    from parascout.jobs.scan_cdx import PLAIN_ENCODED_COLUMNS, ScanCdx, lean_parquet_writes

    data = Path(args.data)
    files = generate(data / "cdx", args.lines, args.files)
    builder = SparkSession.builder
    for key, value in local_spark_defaults().items():  # what a local job runs with, then the bench's own
        builder = builder.config(key, value)
    builder = (builder.master(args.master).appName("bench-scan-cdx")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC").config("spark.driver.memory", "3g")
             .config("spark.sql.shuffle.partitions", "8"))
    spark = builder.getOrCreate()  # with the Java UDFs' jar where built, as jobs run; else the fallbacks are timed
    spark.sparkContext.setLogLevel("ERROR")

    def gunzip_count() -> int:
        return spark.read.text(files).count()

    def scan(*source: str) -> int:
        report = ScanCdx().use_spark(spark).run(["--root", str(data / "out"), *source, "--force",
                                                 "--log-level", "WARNING"])
        assert report["balanced"], report
        return report["inputs"]["index_records"]

    def scan_with_spark_text_reader() -> int:
        """scan-cdx as it runs without the jar's CdxFileReader: whole files through Spark's text reader."""
        from parascout.udfs.index import cdx

        own_reader, cdx.jvm_file_lines = cdx.jvm_file_lines, lambda *args, **kwargs: None
        try:
            return scan("--cdx", str(data / "cdx"))
        finally:
            cdx.jvm_file_lines = own_reader

    held: list = []

    def cached_urls():
        """The scan's urls rows, read once and held in memory."""
        if not held:
            held.append(spark.read.parquet(str(data / "out" / "urls")).cache())
            held[0].count()
        return held[0]

    def read_cached_urls() -> int:  # what write_urls spends before the writer: subtracted from it
        cached_urls().write.format("noop").mode("overwrite").save()
        return args.lines

    def write_urls() -> int:
        """The held urls rows written to Parquet with the job's settings."""
        with lean_parquet_writes(spark, PLAIN_ENCODED_COLUMNS):
            cached_urls().write.mode("overwrite").parquet(str(data / "urls-again"))
        return args.lines

    steps = {"gunzip+count": gunzip_count,
             "scan-cdx": lambda: scan("--cdx", str(data / "cdx")),
             "scan lang=cdx": lambda: scan("--cdx", str(data / "cdx"), "--lang-from", "cdx"),
             "scan en,is": lambda: scan("--cdx", str(data / "cdx"), "--langs", "en,is"),
             "scan text-rdr": scan_with_spark_text_reader,
             "zipnum+tlds": lambda: scan("--cdx", str(data / "zipnum"), "--tlds", "is,com,de,uk,mt"),
             "read cached": read_cached_urls, "write urls": write_urls}
    timings: dict[str, list[float]] = {name: [] for name in steps}
    cpu_timings: dict[str, list[float]] = {name: [] for name in steps}
    for round_number in range(args.repeats + 1):  # round 0 warms the JVM up and is not counted
        for name, step in steps.items():
            started, cpu_started = time.time(), cpu_seconds()
            lines = step()
            elapsed, cpu = time.time() - started, cpu_seconds() - cpu_started
            assert lines == args.lines, (name, lines)
            if round_number:
                timings[name].append(elapsed)
                cpu_timings[name].append(cpu)
            print(f"round {round_number} {name:13s} {elapsed:6.1f}s {lines / elapsed:12,.0f} lines/s "
                  f"{cpu:6.1f} CPU-s {lines / cpu:12,.0f} lines/CPU-s", flush=True)
    rates = {name: args.lines / statistics.median(values) for name, values in timings.items()}
    cpu_rates = {name: args.lines / statistics.median(values) for name, values in cpu_timings.items()}
    print(f"\n{args.lines:,} lines, {args.files} gzip files, {args.master}, median of {args.repeats} warm runs")
    for name in steps:
        print(f"  {name:13s} {rates[name]:12,.0f} lines/s {cpu_rates[name]:12,.0f} lines/CPU-s")
    for name in ("scan-cdx", "scan text-rdr", "zipnum+tlds"):
        print(f"  ratio {name} / gunzip+count: {rates[name] / rates['gunzip+count']:.3f} wall, "
              f"{cpu_rates[name] / cpu_rates['gunzip+count']:.3f} CPU")

    print(f"  ratio scan-cdx / scan text-rdr (the jar's file reader vs Spark's): "
          f"{rates['scan-cdx'] / rates['scan text-rdr']:.3f} wall, "
          f"{cpu_rates['scan-cdx'] / cpu_rates['scan text-rdr']:.3f} CPU")

    def bound(values: dict) -> float:  # gunzip, then nothing but the Parquet write of the same urls rows
        gunzip, write = 1 / values["gunzip+count"], 1 / values["write urls"] - 1 / values["read cached"]
        return gunzip / (gunzip + write)

    print(f"  floor: gunzip + writing the urls rows alone reaches {bound(rates):.3f} wall, {bound(cpu_rates):.3f} CPU "
          "of the gunzip rate (no parsing, filtering or dedup)")
    spark.stop()


if __name__ == "__main__":
    main()
