"""scan-cdx: CDX files, ZipNum indexes, the columnar index or the CDX API -> `urls` and `hosts`.

Whole local CDX files are read and parsed in one pass on the JVM (the jar's CdxFileReader;
Spark's text reader without the jar); ZipNum blocks a host / domain / TLD filter can match,
S3 objects, and files Spark's gzip reader chokes on are fetched and gunzipped in Python
tasks, their lines parsed on the JVM (the jar's CdxLine UDF, else Spark expressions). Every record is counted: records
read = kept + filtered(reason) + bad(reason); a broken gzip member is one bad record.
"""
from __future__ import annotations

import argparse
import contextlib
import itertools
from functools import reduce

from pyspark.sql import DataFrame

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.jobs.language_pairs import language_pairs_option
from parascout.udfs.common import range_reads, storage, tables
from parascout.udfs.common.langs import pair_label
from parascout.udfs.index import cdx, cdx_records
from parascout.udfs.index.cdx_api import DEFAULT_MIRROR, fetch_cdx_lines

URL_COLUMNS = tuple(tables.columns("urls"))
#: urls columns with about one value per URL: a Parquet dictionary for them is built only to be dropped at its
#: size limit (~0.8 CPU-s per million rows); host, domain, lang, mime, crawl... keep theirs
PLAIN_ENCODED_COLUMNS = ("url", "surt", "digest", "fetch_time", "warc_filename", "warc_offset", "warc_length",
                         "redirect")
HADOOP_MAX_LINE_LENGTH = "mapreduce.input.linerecordreader.line.maxlength"


def comma_list(text) -> list[str]:
    """'a,b' (or a YAML list) -> ['a', 'b']."""
    items = text if isinstance(text, list) else str(text).split(",")
    return [str(item).strip() for item in items if str(item).strip()]


@contextlib.contextmanager
def lean_parquet_writes(spark, columns: tuple[str, ...]):
    """Parquet writes in the block encode `columns` plainly and skip the per-page size statistics (parquet
    1.15+, which Spark does not read: ~0.3 CPU-s per million rows); session settings reach the writer's
    Hadoop configuration and are restored after."""
    settings = {f"parquet.enable.dictionary#{column}": "false" for column in columns}
    settings["parquet.size.statistics.enabled"] = "false"
    previous = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


class ScanCdx(Job):
    name = "scan-cdx"
    description = "CDX files / ZipNum / columnar index / CDX API -> urls and hosts (filtered, latest capture per URL)"
    outputs = ("urls", "hosts")
    input_paths = ("cdx", "index_parquet")
    default_max_bad_fraction = 0.1
    source_arguments, drop_hints = ("cdx", "index_parquet", "cdx_api", "url", "crawl"), cdx.DROP_HINTS

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        super().add_arguments(parser)
        sources = parser.add_argument_group("sources (at least one)")
        sources.add_argument("--cdx", action="append", default=[], metavar="PATH",
                             help="CDX file or folder (plain or gzip) or ZipNum folder with cluster.idx; repeatable")
        sources.add_argument("--index-parquet", action="append", default=[], metavar="PATH",
                             help="columnar index table folder (crawl=/subset= partitions); repeatable")
        sources.add_argument("--cdx-api", action="store_true", help="query the CDX API (needs --url and --crawl)")
        sources.add_argument("--url", action="append", default=[], metavar="PATTERN", help="CDX API URL pattern")
        sources.add_argument("--cdx-api-mirror", default=DEFAULT_MIRROR, help="CDX API base URL (collinfo.json)")
        sources.add_argument("--api-limit", type=int, default=10_000, help="at most this many CDX API captures")
        sources.add_argument("--s3-endpoint", help="S3-compatible endpoint URL for s3:// inputs (else AWS)")
        filters = parser.add_argument_group("filters")
        filters.add_argument("--crawl", type=comma_list, default=[],
                             help="crawls to keep (urls.crawl): ids like CC-MAIN-2024-33, or an own crawl's name")
        filters.add_argument("--status", type=comma_list, default=["200"], help="HTTP statuses of pages to keep")
        filters.add_argument("--mime", type=comma_list, default=list(cdx_records.HTML_MIMES),
                             help="MIME types to keep (mime-detected first), or 'any'")
        filters.add_argument("--hosts", type=comma_list, default=[], help="allowed hosts")
        filters.add_argument("--domains", type=comma_list, default=[], help="allowed registered domains")
        filters.add_argument("--tlds", type=comma_list, default=[], help="allowed TLDs, e.g. is,mt")
        filters.add_argument("--langs", help="language pair(s): keep sites with URLs in both languages of a pair; "
                                             "en,is, or several in one scan: en:fr,de,is or en-fr,de-fr")
        filters.add_argument("--keep-redirects", action="store_true", help="keep 3xx captures (record_type=redirect)")
        filters.add_argument("--lang-from", choices=["url", "cdx"], default="url",
                             help="a page's language: url = the one its URL declares where the site uses URL language "
                                  "markers, else CLD2's (the CDX `languages`); cdx = CLD2's only (a third of the CPU)")
        filters.add_argument("--keep-revisits", action="store_true", help="keep revisit records (record_type=revisit)")
        parser.add_argument("--partitions", type=int, help="output partitions of urls (default: Spark decides)")
        parser.add_argument("--max-line-bytes", type=int, default=cdx.MAX_LINE_BYTES,
                            help="CDX lines longer than this are counted line_too_long and skipped unread")

    def validate_arguments(self, args: argparse.Namespace) -> None:
        super().validate_arguments(args)
        if not (args.cdx or args.index_parquet or args.cdx_api):
            raise ConfigError("scan-cdx: give a source: --cdx PATH, --index-parquet PATH or --cdx-api --url PATTERN")
        if args.cdx_api and not (args.url and args.crawl):
            raise ConfigError("--cdx-api needs --url PATTERN (e.g. 'example.is/*') and --crawl CC-MAIN-YYYY-WW")
        if not all(status.isdigit() for status in comma_list(args.status)):
            raise ConfigError(f"--status expects HTTP status codes like 200,203; got {args.status!r}")
        self.pairs = language_pairs_option(args.langs)

    def filters(self) -> cdx_records.CaptureFilters:
        mimes = comma_list(self.args.mime)
        return cdx_records.CaptureFilters(
            crawls=tuple(comma_list(self.args.crawl)), statuses=tuple(int(s) for s in comma_list(self.args.status)),
            mimes=() if mimes == ["any"] else tuple(m.lower() for m in mimes),
            hosts=tuple(h.lower() for h in comma_list(self.args.hosts)), domains=tuple(comma_list(self.args.domains)),
            tlds=tuple(comma_list(self.args.tlds)), keep_redirects=self.args.keep_redirects,
            keep_revisits=self.args.keep_revisits)

    # ---- sources -------------------------------------------------------------------------
    def cdx_ranges(self, path: str, filters: cdx_records.CaptureFilters) -> list[range_reads.ByteRange]:
        """Byte ranges to read under a --cdx path; ZipNum block counts go to the report."""
        prefixes = cdx.surt_prefixes(filters.hosts, filters.domains, filters.tlds) if filters.restricts_hosts else None
        ranges, selection = cdx.cdx_byte_ranges(path, prefixes, self.args.s3_endpoint)
        if selection:
            self.add_metric("zipnum_blocks_total", selection.blocks_total)
            self.add_metric("zipnum_blocks_read", selection.blocks_selected)
            self.add_metric("zipnum_bytes_read", selection.bytes_selected)
            self.log.info("%s: reading %d of %d ZipNum blocks (%.1f MB) in %d requests", path,
                          selection.blocks_selected, selection.blocks_total, selection.bytes_selected / 1e6,
                          len(ranges))
        return ranges

    def cdx_lines(self, ranges: list[range_reads.ByteRange], jvm_reader: bool):
        """(value, read_status, cdx_crawl) lines of the byte ranges; `cdx_crawl` is the crawl their file's path
        names (cc-index/collections/CC-MAIN-2024-33/indexes/...), found once per file and added as a literal to
        the lines of the files that name it."""
        from pyspark.sql import functions as F

        by_crawl: dict[str | None, list[range_reads.ByteRange]] = {}
        for byte_range in ranges:
            by_crawl.setdefault(cdx_records.cdx_path_crawl(byte_range.path), []).append(byte_range)
        return reduce(DataFrame.unionByName, [
            self.read_lines(group, jvm_reader).withColumn("cdx_crawl", F.lit(crawl).cast("string"))
            for crawl, group in by_crawl.items()])

    def read_lines(self, ranges: list[range_reads.ByteRange], jvm_reader: bool):
        """(value, read_status) lines of the byte ranges: whole local files through Spark's text reader when
        `jvm_reader` (they are here only when the jar is not loaded: jvm_records reads them otherwise), the rest
        (ZipNum blocks, S3, broken files) read and gunzipped in Python tasks."""
        whole_files = [r for r in ranges if jvm_reader and cdx.jvm_readable(r)]
        in_python = [r for r in ranges if r not in whole_files]
        parts = [self.spark_text_lines([storage.local_path(r.path) for r in whole_files])] if whole_files else []
        if in_python or not parts:
            tasks = self.spark.sparkContext.parallelize([(r.path, r.offset, r.length) for r in in_python],
                                                        max(len(in_python), 1))
            lines = self.spark.createDataFrame(tasks, "path string, offset long, length long").mapInArrow(
                cdx.range_reader(self.args.s3_endpoint, self.args.max_line_bytes), cdx.LINE_SCHEMA_DDL)
            parts.append(lines.select(lines.value.cast("string").alias("value"), "read_status"))
        return reduce(DataFrame.unionByName, parts)

    def spark_text_lines(self, paths: list[str]):
        """Whole local files' lines through Spark's text reader, for a session without the jar, whose
        parascout.CdxFileReader counts a line over --max-line-bytes (line_too_long) and a broken gzip stream
        (truncated_gzip, bad_gzip) itself: Hadoop's line cap skips a longer line uncounted and the reader fails on
        a broken gzip file (read again in Python). The report's `cdx_file_reader` says which one read."""
        from pyspark.sql import functions as F

        self.log.warning("the jar's CdxFileReader is not on the classpath (`make jar`): Spark's text reader skips "
                         "CDX lines over %d bytes without counting them", self.args.max_line_bytes)
        self.report.metric("cdx_file_reader", "spark_text")
        text = self.spark.read.option(HADOOP_MAX_LINE_LENGTH, str(self.args.max_line_bytes + 2)).text(
            [storage.to_hadoop(path) for path in paths])
        return text.select("value", F.lit(None).cast("string").alias("read_status"))

    def jvm_records(self, ranges: list[range_reads.ByteRange]) -> tuple[list, list[range_reads.ByteRange]]:
        """([the records of the whole local files among `ranges`, parsed as the jar's CdxFileReader reads them], the
        ranges left to read as lines); ([], ranges) when there is no such file or the jar is not on the classpath."""
        on_jvm = [r for r in ranges if cdx.jvm_readable(r)]
        if not on_jvm:
            return [], ranges
        records = cdx_records.jvm_file_records(self.spark, [storage.local_path(r.path) for r in on_jvm],
                                               [cdx_records.cdx_path_crawl(r.path) for r in on_jvm],
                                               self.args.max_line_bytes)
        if records is None:
            return [], ranges
        self.report.metric("cdx_file_reader", "parascout.CdxFileReader")
        self.log.info("%d local CDX files read and parsed on the JVM (parascout.CdxFileReader.records)", len(on_jvm))
        return [records], [r for r in ranges if r not in on_jvm]

    def api_lines(self) -> list[str]:
        """CDX API captures as lines; at most --api-limit of them pass through the driver."""
        lines = list(fetch_cdx_lines(self.args.url, comma_list(self.args.crawl), self.args.cdx_api_mirror,
                                     self.args.api_limit))
        self.report.metric("cdx_api_captures", len(lines))
        return lines

    def columnar_rows(self, path: str, crawls: tuple[str, ...]):
        """Columnar-index rows of subset=warc and the wanted crawls: Spark reads local tables (partition
        pruning, column pruning); Python tasks read object-store files with ranged GETs."""
        if storage.is_local(path):
            table = self.spark.read.parquet(storage.to_hadoop(storage.local_path(path)))
            return cdx_records.columnar_rows(table, crawls)
        tasks = cdx.columnar_files(path, crawls, self.args.s3_endpoint)
        self.add_metric("columnar_files_read", len(tasks))
        task_frame = self.spark.createDataFrame(self.spark.sparkContext.parallelize(tasks, max(len(tasks), 1)),
                                                "path string, crawl string")
        return task_frame.mapInArrow(cdx.parquet_reader(cdx_records.columnar_arrow_schema(), self.args.s3_endpoint),
                                     ", ".join(f"{name} {kind}" for name, kind in cdx_records.COLUMNAR_FIELDS))

    def records(self, filters: cdx_records.CaptureFilters, ranges: list[range_reads.ByteRange], api_lines: list[str] | None,
                jvm_reader: bool):
        """Parsed records of every source, one schema, each with a bad-input `reason` (null when good): whole local
        CDX files parsed on the JVM as they are read where the jar loads, every other line by parse_cdx_lines."""
        parts, ranges = self.jvm_records(ranges) if jvm_reader else ([], ranges)
        line_sources = [self.cdx_lines(ranges, jvm_reader)] if ranges else []
        if api_lines is not None:
            line_sources.append(self.spark.createDataFrame([(line, None, None) for line in api_lines],
                                                           "value string, read_status string, cdx_crawl string"))
        if line_sources:
            parts.append(cdx_records.parse_cdx_lines(reduce(DataFrame.unionByName, line_sources)))
        parts += [cdx_records.parse_columnar_rows(self.columnar_rows(path, filters.crawls))
                  for path in self.args.index_parquet]
        return reduce(DataFrame.unionByName, parts)

    # ---- the scan ------------------------------------------------------------------------
    def process(self) -> None:
        self.report.metric("spark_master", self.spark.sparkContext.master)
        filters = self.filters()
        ranges = [r for path in self.args.cdx for r in self.cdx_ranges(path, filters)]
        self.report.metric("cdx_read_tasks", len(ranges))
        api_lines = self.api_lines() if self.args.cdx_api else None
        try:
            self.scan(self.records(filters, ranges, api_lines, jvm_reader=True), filters)
        except Exception as error:  # Spark's gzip reader stops at a broken file; Python tasks count it instead
            if "FAILED_READ_FILE" not in str(error):
                raise
            self.log.warning("a CDX file is broken (%s); reading again with Python tasks, which skip and count "
                             "broken gzip members", str(error).splitlines()[0][:300])
            self.report.metric("reread_in_python", True)
            self.scan(self.records(filters, ranges, api_lines, jvm_reader=False), filters)
        self.write_table(cdx_records.host_table(self.read_table("urls"), self.pairs), "hosts")
        if self.pairs:
            self.report.metric("lang_pairs", [pair_label(pair) for pair in self.pairs])
        executors = self.spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
        self.report.metric("executors", max(executors - 1, 1))  # the driver is listed too, except in local mode

    def scan(self, records, filters: cdx_records.CaptureFilters) -> None:
        """Filter, keep the latest capture per URL, write urls (by site, sorted by site, host and SURT), count reasons."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        records = records.withColumn("reason", F.coalesce("reason", cdx_records.filter_reason(filters)))
        # two dozen reasons: one aggregate on the JVM counts them for less than a sum each (a handful: the sums)
        record_counters = cdx_records.reason_counters(
            (*sorted(cdx_records.BAD_REASONS), *cdx_records.RECORD_FILTERS, "ok"), spark=self.spark)
        record_counts = Observation("records")
        kept = records.observe(record_counts, *record_counters).where(F.col("reason") == "ok").drop("reason")
        captures = cdx_records.latest_captures(kept, self.pairs, self.args.partitions,
                                               url_languages=self.args.lang_from == "url")
        capture_counters = cdx_records.reason_counters(cdx_records.CAPTURE_FILTERS, "capture_reason")
        capture_counts = Observation("captures")
        # latest_captures lays the rows out by site, ordered by site, host and SURT: the order urls is written in
        urls = (captures.observe(capture_counts, *capture_counters).where(F.col("capture_reason") == "ok")
                .select(*URL_COLUMNS))
        with lean_parquet_writes(self.spark, PLAIN_ENCODED_COLUMNS):
            written = self.write_table(urls, "urls")
        if not written:
            self.log.info("no index record passed the filters: urls and hosts are empty (see the report's counts)")
        self.count_reasons(self.observed(record_counts, records, record_counters),
                           self.observed(capture_counts, captures, capture_counters), written)

    def observed(self, observation, frame, counters) -> dict:
        """An Observation's counts; when Spark never reported them (it can optimise an empty result's steps away),
        the same counters computed in a second pass over `frame`."""
        try:
            return cdx_records.counted_reasons(observation.get)
        except Exception as error:  # noqa: BLE001 - Py4J's assertion that no metrics were collected
            self.log.info("counting reasons in a second pass (%s)", str(error).splitlines()[0][:200])
            return cdx_records.counted_reasons(frame.agg(*counters).first().asDict())

    def add_metric(self, key: str, count: int) -> None:
        self.report.metric(key, self.report.data["metrics"].get(key, 0) + count)

    def count_reasons(self, records: dict, captures: dict, written: int) -> None:
        """Fill the report: records = kept + filtered(reason) + bad(reason)."""
        records = {key: int(value or 0) for key, value in records.items()}
        captures = {key: int(value or 0) for key, value in captures.items()}
        self.report.input("index_records", records["records"])
        for reason in cdx_records.BAD_REASONS:
            self.report.bad(reason, records[reason])
        for reason, count in itertools.chain(((r, records[r]) for r in cdx_records.RECORD_FILTERS),
                                             ((r, captures[r]) for r in cdx_records.CAPTURE_FILTERS)):
            self.report.filtered(reason, count)
        self.report.kept(written)
        self.report.metric("captures_after_filters", records["ok"])
        self.log.info("%d records: %d urls kept, filtered %s, bad %s", records["records"], written,
                      self.report.data["filtered"], self.report.data["bad"])


if __name__ == "__main__":
    ScanCdx().run()
