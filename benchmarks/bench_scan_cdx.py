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
bounds the ratio a scan can reach. `scan columnar` scans the same captures written once as a columnar-index
table (`--index-parquet`), to compare the two index paths per row.

`duckdb` is what a data engineer would write instead: DuckDB (2 threads, in its own process) reads the same gzip
files, extracts url/mime/status/digest/filename/offset/length/languages from the JSON, keeps HTML 200 captures,
the latest per SURT, adds the host and writes Parquet sorted by host; the bench prints each scan's lines per
CPU-second against it, and every step's peak resident memory (Spark: the JVM and its Python workers). The Spark
steps share one JVM, whose heap grows over the run and is not given back, so `scan own JVM` runs scan-cdx as a user
does, in its own driver and JVM with a `--scan-heap` heap, for the scan's own peak memory against DuckDB's.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.measure import PeakMemory, TreeCpu, run_job
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


CHILDREN_CPU: list[TreeCpu] = []


def cpu_seconds() -> float:
    """CPU seconds used so far by this process's descendants (the Spark JVM and its Python workers), counted from the
    first call; a descendant that has ended keeps its CPU (measure.TreeCpu)."""
    if not CHILDREN_CPU:
        CHILDREN_CPU.append(TreeCpu(include_root=False))
    return CHILDREN_CPU[0].seconds()


def duckdb_query(files: list[str], out: str) -> str:
    """The DuckDB statement that does what scan-cdx --lang-from cdx does, as a data engineer would write it."""
    fields = ", ".join(f"'$.\"{key}\"'" for key in ("url", "mime", "mime-detected", "status", "digest", "filename",
                                                      "offset", "length", "languages"))
    return f"""COPY (
      WITH lines AS (SELECT line, instr(line, ' ') AS space FROM read_csv({files!r}, columns={{'line': 'VARCHAR'}},
             delim=E'\\x01', quote='', escape='', header=false, compression='gzip', auto_detect=false)),
      parsed AS (SELECT substr(line, 1, space - 1) AS surt, substr(line, space + 1, 14) AS timestamp,
             json_extract_string(substr(line, space + 16), [{fields}]) AS f FROM lines),
      records AS (SELECT surt, strptime(timestamp, '%Y%m%d%H%M%S') AS fetch_time, f[1] AS url,
             lower(coalesce(f[3], f[2])) AS mime, TRY_CAST(f[4] AS INTEGER) AS status, f[5] AS digest,
             f[6] AS warc_filename, TRY_CAST(f[7] AS BIGINT) AS warc_offset, TRY_CAST(f[8] AS BIGINT) AS warc_length,
             f[9] AS languages FROM parsed)
      SELECT *, lower(split_part(split_part(url, '://', 2), '/', 1)) AS host FROM records
      WHERE status = 200 AND mime IN ('text/html', 'application/xhtml+xml')
      QUALIFY row_number() OVER (PARTITION BY surt ORDER BY fetch_time DESC) = 1
      ORDER BY host, surt) TO '{out}' (FORMAT parquet)"""


def write_columnar(files: list[str], folder: Path) -> Path:
    """The same captures as a columnar-index table (cc-index-table's columns, crawl=/subset= partitions), once."""
    import duckdb

    table = folder / "columnar"
    part = table / f"crawl={CRAWL}" / "subset=warc" / "part-00000.parquet"
    if part.exists():
        return table
    part.parent.mkdir(parents=True)
    fields = ", ".join(f"'$.\"{key}\"'" for key in ("url", "mime", "mime-detected", "status", "digest", "filename",
                                                      "offset", "length", "languages", "redirect", "charset"))
    duckdb.execute(f"""COPY (
      WITH lines AS (SELECT line, instr(line, ' ') AS space FROM read_csv({files!r}, columns={{'line': 'VARCHAR'}},
             delim=E'\\x01', quote='', escape='', header=false, compression='gzip', auto_detect=false)),
      parsed AS (SELECT substr(line, 1, space - 1) AS url_surtkey, substr(line, space + 1, 14) AS timestamp,
             json_extract_string(substr(line, space + 16), [{fields}]) AS f FROM lines)
      SELECT url_surtkey, f[1] AS url, lower(split_part(split_part(f[1], '://', 2), '/', 1)) AS url_host_name,
             strptime(timestamp, '%Y%m%d%H%M%S')::TIMESTAMPTZ AS fetch_time, TRY_CAST(f[4] AS INTEGER) AS fetch_status,
             f[10] AS fetch_redirect, f[5] AS content_digest, f[2] AS content_mime_type,
             f[3] AS content_mime_detected, f[11] AS content_charset, f[9] AS content_languages,
             f[6] AS warc_filename, TRY_CAST(f[7] AS INTEGER) AS warc_record_offset,
             TRY_CAST(f[8] AS INTEGER) AS warc_record_length FROM parsed) TO '{part}' (FORMAT parquet)""")
    return table


def run_duckdb(files: list[str], out: str) -> None:
    """In this (child) process: the DuckDB scan once; prints its CPU seconds, peak memory and rows as JSON."""
    import duckdb

    connection = duckdb.connect()
    connection.execute("SET threads = 2")
    before = resource.getrusage(resource.RUSAGE_SELF)
    connection.execute(duckdb_query(files, out))
    after = resource.getrusage(resource.RUSAGE_SELF)
    rows = connection.execute(f"SELECT count(*) FROM '{out}'").fetchone()[0]
    print(json.dumps({"cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
                      "peak_mb": after.ru_maxrss / 1024, "rows": rows}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "parascout-bench-cdx"))
    parser.add_argument("--scan-heap", default="1g",
                        help="spark.driver.memory of the scan run in its own process (its peak memory)")
    parser.add_argument("--duckdb-child", help=argparse.SUPPRESS)  # internal: run the DuckDB scan in this process
    args = parser.parse_args(argv)
    if args.duckdb_child:
        run_duckdb(sorted(str(p) for p in Path(args.duckdb_child, "cdx").glob("*.gz")),
                   str(Path(args.duckdb_child, "duckdb-urls.parquet")))
        return

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from parascout.jobs.scan_cdx import PLAIN_ENCODED_COLUMNS, ScanCdx, lean_parquet_writes
    from parascout.jobs.spark_session import local_spark_defaults

    data = Path(args.data) / f"{args.lines}-lines-{args.files}-files"  # one generated set and its tables per size
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
        from parascout.udfs.index import cdx_records

        own_reader, cdx_records.jvm_file_records = cdx_records.jvm_file_records, lambda *args, **kwargs: None
        try:
            return scan("--cdx", str(data / "cdx"))
        finally:
            cdx_records.jvm_file_records = own_reader

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

    duckdb_results: dict = {}
    own_results: dict = {}

    def scan_own_process() -> int:
        """scan-cdx as a user runs it, its own driver and JVM (local[2], a --scan-heap heap): its peak memory is the
        scan's alone, where the steps above share one JVM whose heap grows over the run and never shrinks."""
        command = [sys.executable, "-m", "parascout.jobs.scan_cdx", "--root", str(data / "own"), "--cdx",
                   str(data / "cdx"), "--force", "--log-level", "WARNING", "--spark-conf", f"spark.master={args.master}",
                   "--spark-conf", f"spark.driver.memory={args.scan_heap}",
                   "--spark-conf", "spark.sql.shuffle.partitions=8"]
        own_results.update(run_job(command, data / "own-scan.log"))
        return args.lines

    def duckdb_scan() -> int:
        """The DuckDB scan in a child process; its own CPU seconds and peak memory replace the parent's view."""
        result = subprocess.run([sys.executable, __file__, "--duckdb-child", str(data)], check=True,
                                capture_output=True, text=True)
        duckdb_results.update(json.loads(result.stdout.strip().splitlines()[-1]))
        return args.lines

    steps = {"gunzip+count": gunzip_count, "duckdb": duckdb_scan,
             "scan-cdx": lambda: scan("--cdx", str(data / "cdx")),
             "scan own JVM": scan_own_process,
             "scan lang=cdx": lambda: scan("--cdx", str(data / "cdx"), "--lang-from", "cdx"),
             "scan en,is": lambda: scan("--cdx", str(data / "cdx"), "--langs", "en,is"),
             "scan text-rdr": scan_with_spark_text_reader,
             "scan columnar": lambda: scan("--index-parquet", str(write_columnar(files, data))),
             "zipnum+tlds": lambda: scan("--cdx", str(data / "zipnum"), "--tlds", "is,com,de,uk,mt"),
             "read cached": read_cached_urls, "write urls": write_urls}
    timings: dict[str, list[float]] = {name: [] for name in steps}
    cpu_timings: dict[str, list[float]] = {name: [] for name in steps}
    peaks: dict[str, float] = {name: 0.0 for name in steps}
    for round_number in range(args.repeats + 1):  # round 0 warms the JVM up and is not counted
        for name, step in steps.items():
            started, cpu_started = time.time(), cpu_seconds()
            with PeakMemory(interval=0.05) as memory:
                lines = step()
            elapsed, cpu = time.time() - started, cpu_seconds() - cpu_started
            peak_mb = memory.peak / 2**20
            if name == "duckdb":  # measured inside its own process
                cpu, peak_mb = duckdb_results["cpu"], duckdb_results["peak_mb"]
            elif name == "scan own JVM":  # its own process tree; its CPU includes starting Spark
                peak_mb = own_results["peak_mb"]
            assert lines == args.lines, (name, lines)
            if round_number:
                timings[name].append(elapsed)
                cpu_timings[name].append(cpu)
                peaks[name] = max(peaks[name], peak_mb)
            print(f"round {round_number} {name:13s} {elapsed:6.1f}s {lines / elapsed:12,.0f} lines/s "
                  f"{cpu:6.1f} CPU-s {lines / cpu:12,.0f} lines/CPU-s {peak_mb:7,.0f} MB peak", flush=True)
    rates = {name: args.lines / statistics.median(values) for name, values in timings.items()}
    cpu_rates = {name: args.lines / statistics.median(values) for name, values in cpu_timings.items()}
    print(f"\n{args.lines:,} lines, {args.files} gzip files, {args.master}, median of {args.repeats} warm runs")
    scanned = spark.read.parquet(str(data / "out" / "urls")).count()
    print(f"  urls rows: duckdb {duckdb_results['rows']:,}, scan-cdx (last step's) {scanned:,}")
    for name in steps:
        print(f"  {name:13s} {rates[name]:12,.0f} lines/s {cpu_rates[name]:12,.0f} lines/CPU-s "
              f"{peaks[name]:7,.0f} MB peak" + (" (a fresh Spark: its start included)" if name == "scan own JVM" else ""))
    print(f"  ratio scan columnar / scan-cdx (the same captures as a columnar-index table): "
          f"{cpu_rates['scan columnar'] / cpu_rates['scan-cdx']:.2f} lines per CPU-s")
    for name in ("scan-cdx", "scan en,is", "scan lang=cdx"):
        print(f"  ratio {name} / duckdb: {cpu_rates[name] / cpu_rates['duckdb']:.2f} lines per CPU-s, "
              f"{rates[name] / rates['duckdb']:.2f} wall")
    print(f"  peak memory of scan-cdx in its own process ({args.scan_heap} heap) / duckdb's: "
          f"{peaks['scan own JVM'] / peaks['duckdb']:.2f}x ({peaks['scan own JVM']:,.0f} / {peaks['duckdb']:,.0f} MB)")
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
