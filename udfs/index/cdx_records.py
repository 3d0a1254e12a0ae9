"""CDX lines and columnar-index rows -> capture records, as Spark column expressions (no SparkSession here).

Lines are parsed on the JVM, so Python never touches a line: by the Java UDF `parascout.CdxLine` (one
hand-written pass over the line and its JSON) where the session can load parascout's jar, else by Spark
expressions (split, one json_tuple, string searches and try_casts: ~2x the CPU). Every record gets a
`reason`: a bad-input reason, a filter reason, or "ok"; nothing is dropped without one. Registered
domains come from the bundled Public Suffix List (a Java UDF, else a pandas UDF that sees only hosts).

A record's `crawl` is the first that exists of: the crawl its WARC filename names (CommonCrawl's
`crawl-data/CC-MAIN-2024-33/...`), the crawl its CDX file's path names (`cdx_crawl`, from
`cdx_path_crawl`: `cc-index/collections/CC-MAIN-2024-33/indexes/cdx-00000.gz`), the line's own `crawl`
key (index-warcs writes the WARC's warcinfo `isPartOf` there, else the WARC's name stem); null when none does.
"""
from __future__ import annotations

import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import reduce

import numpy as np
import pandas as pd
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from parascout.udfs.common.jvm import java_function_available
from parascout.udfs.common.sites import name_site_column
from parascout.udfs.common.urls import (
    CONTROL_CHARACTER_CLASS,
    MAX_URL_CHARS,
    public_suffix_spec,
    registered_domain,
    url_host_column,
)
from parascout.udfs.index.cdx import READ_PROBLEMS
from parascout.udfs.index.url_language import code_spec, url_language_struct

BAD_REASONS = frozenset({"non_utf8", "malformed_line", "bad_json", "missing_url", "url_too_long",
                         "control_characters", "bad_url", "missing_status", "missing_location", *READ_PROBLEMS})
#: record_type values: a WARC revisit record (its payload is an earlier capture's), a 3xx response, any other response
RECORD_TYPES = ("revisit", "redirect", "response")
RECORD_FILTERS = ("crawl_not_selected", "host_not_allowed", "revisit", "redirect", "status", "mime")
CAPTURE_FILTERS = ("older_capture", "host_not_bilingual")
FILTERED_REASONS = frozenset({*RECORD_FILTERS, *CAPTURE_FILTERS})
JVM_DOMAIN_CLASS = "parascout.RegisteredDomain"
JVM_DOMAIN_FUNCTION = "parascout_registered_domain"
JVM_LINE_CLASS = "parascout.CdxLine"
JVM_LINE_FUNCTION = "parascout_cdx_line"
#: what parascout.CdxLine returns (its FIELDS, in order): RECORD_COLUMNS with the fetch time in epoch
#: microseconds, and the bad-input reason
JVM_RECORD_DDL = ("struct<url string, surt string, host string, status int, mime string, digest string, "
                  "fetch_micros bigint, warc_filename string, warc_offset bigint, warc_length bigint, crawl string, "
                  "record_type string, redirect string, charset string, truncated string, languages string, "
                  "reason string>")
#: rows of one host (one site with language pairs) the JVM's URL-language pass holds in memory; a bigger one's
#: other rows go to a spill file
MAX_HELD_HOST_ROWS = 100_000
HTML_MIMES = ("text/html", "application/xhtml+xml")
#: capture years a CDX timestamp may name (the first web page .. well past any crawl); a corrupted line can
#: still read as a date (year 0024, 1024), which pandas and most readers cannot even hold
CAPTURE_YEARS = (1991, 2100)
UNKNOWN_LANGUAGE = "und"
#: CDX JSON keys (the API says `encoding` where files say `charset`)
CDX_JSON_KEYS = ("url", "mime", "mime-detected", "status", "digest", "length", "offset", "filename",
                 "charset", "encoding", "languages", "redirect", "truncated", "crawl")
#: a folder of a CDX file's path named like a CommonCrawl crawl (CC-MAIN-2024-33, CC-MAIN-2012, CC-MAIN-2009-2010):
#: CommonCrawl's index layout is cc-index/collections/<crawl>/indexes/cdx-NNNNN.gz; the last such folder counts
CDX_PATH_CRAWL = re.compile(r"^(?:.*/)?(CC-MAIN-[0-9]{4}(?:-[0-9]{2,4})?)/")
RECORD_COLUMNS = ("url", "surt", "host", "status", "mime", "digest", "fetch_time", "warc_filename", "warc_offset",
                  "warc_length", "crawl", "record_type", "redirect", "charset", "truncated", "languages")
#: columns read from the columnar index (cc-index-table schema) and their Spark types; `crawl` is the partition
COLUMNAR_FIELDS = (("url_surtkey", "string"), ("url", "string"), ("url_host_name", "string"),
                   ("fetch_time", "timestamp"), ("fetch_status", "int"), ("fetch_redirect", "string"),
                   ("content_digest", "string"), ("content_mime_type", "string"),
                   ("content_mime_detected", "string"), ("content_charset", "string"),
                   ("content_languages", "string"), ("content_truncated", "string"), ("warc_filename", "string"),
                   ("warc_record_offset", "bigint"), ("warc_record_length", "bigint"), ("crawl", "string"))


def columnar_arrow_schema():
    """COLUMNAR_FIELDS as an Arrow schema (what Python Parquet readers hand to mapInArrow)."""
    import pyarrow as pa

    types = {"string": pa.string(), "timestamp": pa.timestamp("us", tz="UTC"), "int": pa.int32(),
             "bigint": pa.int64()}
    return pa.schema([(name, types[kind]) for name, kind in COLUMNAR_FIELDS])


@dataclass(frozen=True)
class CaptureFilters:
    """Which captures a scan keeps; empty tuples mean "any"."""

    crawls: tuple[str, ...] = ()
    statuses: tuple[int, ...] = (200,)
    mimes: tuple[str, ...] = HTML_MIMES
    hosts: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    tlds: tuple[str, ...] = ()
    keep_redirects: bool = False
    keep_revisits: bool = False

    @property
    def restricts_hosts(self) -> bool:
        return bool(self.hosts or self.domains or self.tlds)


def _first_reason(rules: list[tuple[Column, str]], otherwise: Column | str | None = None) -> Column:
    """CASE WHEN over (condition, reason) rules, in order."""
    first, *rest = rules
    chained = reduce(lambda column, rule: column.when(rule[0], rule[1]), rest, F.when(first[0], first[1]))
    return chained.otherwise(otherwise) if otherwise is not None else chained


def _record_type(mime_header: Column, mime_detected: Column, status: Column) -> Column:
    """One of RECORD_TYPES: revisit (the CDX mime says warc/revisit), redirect (a 3xx status), else response."""
    revisit = (F.lower(mime_header) == "warc/revisit") | (F.lower(mime_detected) == "warc/revisit")
    return (F.when(F.coalesce(revisit, F.lit(False)), "revisit")
            .when(status.between(300, 399), "redirect").otherwise("response"))


def _common_bad_rules() -> list[tuple[Column, str]]:
    url = F.col("url")
    return [
        (url.isNull() | (url == ""), "missing_url"),
        (F.length(url) > MAX_URL_CHARS, "url_too_long"),
        # one regular expression: translate() would build a new string per URL, a map lookup per character
        (url.rlike(CONTROL_CHARACTER_CLASS), "control_characters"),
        (F.col("host").isNull() | (F.col("host") == ""), "bad_url"),
        ((F.col("record_type") != "revisit") & F.col("status").isNull(), "missing_status"),
        (F.col("warc_filename").isNull() | F.col("warc_offset").isNull() | F.col("warc_length").isNull(),
         "missing_location"),
    ]


def crawl_of(warc_filename: Column) -> Column:
    """'crawl-data/CC-MAIN-2024-33/segments/...' -> 'CC-MAIN-2024-33' (null for other names)."""
    return F.when(warc_filename.startswith("crawl-data/"),
                  F.substring_index(F.substring_index(warc_filename, "/", 2), "/", -1))


def cdx_path_crawl(path: str) -> str | None:
    """The crawl a CDX file's path names: '.../cc-index/collections/CC-MAIN-2024-33/indexes/cdx-00000.gz' ->
    'CC-MAIN-2024-33'; None for a path with no folder named like a CommonCrawl crawl. Once per file, on the driver."""
    match = CDX_PATH_CRAWL.match(path)
    return match[1] if match else None


def record_crawl(warc_filename: Column, cdx_crawl: Column, crawl_key: Column) -> Column:
    """The first crawl name that exists: the WARC filename's, the CDX file path's, the line's `crawl` key's."""
    return F.coalesce(crawl_of(warc_filename), cdx_crawl, F.nullif(crawl_key, F.lit("")))


def _cdx_crawl(lines: DataFrame) -> Column:
    """The lines' `cdx_crawl` column (the crawl their CDX file's path names), null where they have none."""
    return F.col("cdx_crawl") if "cdx_crawl" in lines.columns else F.lit(None).cast("string")


def _count(text: Column) -> Column:
    """A non-negative integer field ("1234"), else null; try_cast is far cheaper than a regex per line."""
    number = text.try_cast("long")
    return F.when(number >= 0, number)


def _utc_timestamp(digits: Column) -> Column:
    """'20240805101010' -> that instant in UTC (null when not a date in CAPTURE_YEARS): one try_cast and
    arithmetic, cheaper than a pattern parser or six substrings (try_make_timestamp rejects a month 13 or a
    day 32)."""
    number = digits.try_cast("long")

    def part(scale: int, modulo: int = 100) -> Column:  # 14 digits < 2**53: the double quotient truncates exactly
        return ((number / scale).cast("long") % modulo).cast("int")

    year = part(10**10, 10**4)
    return F.when((F.length(digits) == 14) & (number >= 0) & year.between(*CAPTURE_YEARS), F.try_make_timestamp(
        year, part(10**8), part(10**6), part(10**4), part(100), part(1), F.lit("UTC")))


def parse_cdx_lines(lines: DataFrame, use_jvm_udf: bool = True) -> DataFrame:
    """(value string, read_status[, cdx_crawl]) lines -> RECORD_COLUMNS + `reason` (a bad-input reason, null when
    good): by the Java UDF where the active session can load it, else by Spark expressions (the same records)."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession() if use_jvm_udf else None
    if spark is not None and java_function_available(spark, JVM_LINE_FUNCTION, JVM_LINE_CLASS, "CDX lines",
                                                     "Spark expressions", JVM_RECORD_DDL):
        record = F.call_function(JVM_LINE_FUNCTION, F.col("value").cast("binary"), F.col("read_status"),
                                 F.lit(MAX_URL_CHARS), *[F.lit(year) for year in CAPTURE_YEARS],
                                 _cdx_crawl(lines)).alias("record")
        fields = lines.select(record).select("record.*")
        return fields.select(*[F.timestamp_micros("fetch_micros").alias(name) if name == "fetch_time" else name
                               for name in RECORD_COLUMNS], "reason")
    return parse_cdx_lines_sql(lines)


def jvm_file_records(spark, paths: list[str], crawls: list[str | None], max_line_bytes: int) -> DataFrame | None:
    """RECORD_COLUMNS + `reason` of whole local CDX files, each line parsed as it is read, one task per file, by the
    jar's parascout.CdxFileReader.records (parascout.CdxLine's parse; a read problem, as cdx.jvm_file_lines counts
    them, is the record's reason): the same records as parse_cdx_lines of the files' lines, without Spark converting
    the lines and the parsed structs from external rows. `crawls`: each file's crawl as its path names it
    (cdx_path_crawl). None when the jar is not on the classpath."""
    from py4j.java_gateway import JavaClass

    reader = spark._jvm.parascout.CdxFileReader
    if not isinstance(reader, JavaClass):
        return None
    return DataFrame(reader.records(spark._jsparkSession, list(paths), list(crawls), int(max_line_bytes),
                                    MAX_URL_CHARS, *CAPTURE_YEARS), spark)


def parse_cdx_lines_sql(lines: DataFrame) -> DataFrame:
    """parse_cdx_lines by Spark expressions (split, json_tuple, string searches), for sessions without the jar."""
    value = F.col("value")
    parts = F.split(value, " ", 3)
    json_columns = [f"j_{key.replace('-', '_')}" for key in CDX_JSON_KEYS]
    fields = lines.select(
        "read_status", _cdx_crawl(lines).alias("cdx_crawl"), F.is_valid_utf8(value).alias("utf8"),
        F.get(parts, 0).alias("surt"), F.get(parts, 1).alias("timestamp"), F.get(parts, 2).alias("json"),
    ).select("*", F.json_tuple("json", *CDX_JSON_KEYS).alias(*json_columns))
    status = F.col("j_status").try_cast("int")
    records = fields.select(
        "read_status", "utf8", "json",
        F.col("j_url").alias("url"), "surt",
        url_host_column(F.col("j_url")).alias("host"),
        F.when(status.between(100, 599), status).alias("status"),
        F.lower(F.trim(F.substring_index(F.coalesce("j_mime_detected", "j_mime"), ";", 1))).alias("mime"),
        F.col("j_digest").alias("digest"),
        _utc_timestamp(F.col("timestamp")).alias("fetch_time"),
        F.col("j_filename").alias("warc_filename"),
        _count(F.col("j_offset")).alias("warc_offset"),
        _count(F.col("j_length")).alias("warc_length"),
        record_crawl(F.col("j_filename"), F.col("cdx_crawl"), F.col("j_crawl")).alias("crawl"),
        "j_mime", "j_mime_detected",
        F.col("j_redirect").alias("redirect"),
        F.coalesce("j_charset", "j_encoding").alias("charset"),
        F.col("j_truncated").alias("truncated"),
        F.col("j_languages").alias("languages"),
        reduce(lambda a, b: a | b, [F.col(c).isNotNull() for c in json_columns]).alias("any_field"),
    ).withColumn("record_type", _record_type(F.col("j_mime"), F.col("j_mime_detected"), F.col("status")))
    malformed = (F.col("json").isNull() | ~F.col("json").startswith("{") | (F.col("surt") == "")
                 | F.col("fetch_time").isNull())
    reason = _first_reason([
        (F.col("read_status").isNotNull(), F.col("read_status")),
        (~F.col("utf8"), F.lit("non_utf8")),
        (malformed, F.lit("malformed_line")),
        (~F.col("any_field"), F.lit("bad_json")),
        *[(condition, F.lit(name)) for condition, name in _common_bad_rules()],
    ])
    return records.select(*RECORD_COLUMNS, reason.alias("reason"))


def columnar_rows(table: DataFrame, crawls: tuple[str, ...]) -> DataFrame:
    """COLUMNAR_FIELDS of a columnar-index table read by Spark: subset=warc and the wanted crawls only
    (partition filters, so other partitions are never read); absent optional columns come back null."""
    if "subset" in table.columns:
        table = table.where(F.col("subset") == "warc")
    if crawls and "crawl" in table.columns:
        table = table.where(F.col("crawl").isin(list(crawls)))
    return table.select(*[F.col(name).cast(kind) if name in table.columns else F.lit(None).cast(kind).alias(name)
                          for name, kind in COLUMNAR_FIELDS])


def parse_columnar_rows(rows: DataFrame) -> DataFrame:
    """Columnar-index rows (COLUMNAR_COLUMNS + crawl) -> RECORD_COLUMNS + `reason` (null when good)."""
    status = F.col("fetch_status").cast("int")
    mime_header = F.col("content_mime_type")
    records = rows.select(
        "url", F.col("url_surtkey").alias("surt"), F.lower(F.col("url_host_name")).alias("host"),
        status.alias("status"),
        F.lower(F.coalesce("content_mime_detected", mime_header)).alias("mime"),
        F.col("content_digest").alias("digest"), F.col("fetch_time").cast("timestamp").alias("fetch_time"),
        "warc_filename", F.col("warc_record_offset").cast("long").alias("warc_offset"),
        F.col("warc_record_length").cast("long").alias("warc_length"), "crawl",
        _record_type(mime_header, F.col("content_mime_detected"), status).alias("record_type"),
        F.col("fetch_redirect").alias("redirect"), F.col("content_charset").alias("charset"),
        F.col("content_truncated").alias("truncated"), F.col("content_languages").alias("languages"),
    )
    reason = _first_reason([(condition, F.lit(name)) for condition, name in _common_bad_rules()])
    return records.select(*RECORD_COLUMNS, reason.alias("reason"))


def host_allowed(filters: CaptureFilters) -> Column:
    """Is the host in the allow-lists: a listed host, or under a listed domain or TLD? A suffix of n labels
    is compared with the host's last n labels (one substring_index per label count, not an array per row)."""
    host = F.col("host")
    allowed = host.isin(list(filters.hosts)) if filters.hosts else F.lit(False)
    suffixes = sorted({d.lower().strip(".") for d in filters.domains} | {t.lower().strip(".") for t in filters.tlds})
    by_labels: dict[int, list[str]] = {}
    for suffix in suffixes:
        by_labels.setdefault(suffix.count(".") + 1, []).append(suffix)
    for labels, group in sorted(by_labels.items()):
        allowed = allowed | F.substring_index(host, ".", -labels).isin(group)
    return allowed


def filter_reason(filters: CaptureFilters) -> Column:
    """Why a good record is not kept ('ok' when it is), by the order of RECORD_FILTERS."""
    record_type = F.col("record_type")
    response = record_type == "response"
    rules = [
        (F.lit(bool(filters.crawls)) & ~F.coalesce(F.col("crawl").isin(list(filters.crawls)), F.lit(False)),
         "crawl_not_selected"),
        (F.lit(filters.restricts_hosts) & ~host_allowed(filters), "host_not_allowed"),
        ((record_type == "revisit") & F.lit(not filters.keep_revisits), "revisit"),
        ((record_type == "redirect") & F.lit(not filters.keep_redirects), "redirect"),
        (response & F.lit(bool(filters.statuses)) & ~F.col("status").isin(list(filters.statuses)), "status"),
        (response & F.lit(bool(filters.mimes)) & ~F.coalesce(F.col("mime").isin(list(filters.mimes)), F.lit(False)),
         "mime"),
    ]
    return _first_reason([(condition, F.lit(name)) for condition, name in rules], F.lit("ok"))


#: the struct reason_counters' one JVM aggregate fills (counted_reasons reads it)
REASON_COUNTS = "reason_counts"


def reason_counters(reasons: tuple[str, ...], column: str = "reason", spark=None) -> list[Column]:
    """Aggregate expressions counting the rows (`records`) and each reason (for DataFrame.observe: counted during the
    write); counted_reasons reads their values. A sum per reason, each updated for every row; or, where `spark` is
    given and loads parascout's jar, one aggregate, parascout.ReasonCounts, whose update is one hash lookup but
    which costs about ten sums in all: worth it for many reasons, not for a few."""
    from py4j.java_gateway import JavaClass

    if spark is not None and isinstance(spark._jvm.parascout.ReasonCounts, JavaClass):
        function = f"parascout_reason_counts_{zlib.crc32(','.join(reasons).encode()):08x}"  # one per reason list
        if not spark.catalog.functionExists(function):
            names = spark._sc._gateway.new_array(spark._jvm.java.lang.String, len(reasons))
            for index, name in enumerate(reasons):
                names[index] = name
            aggregate = spark._jvm.org.apache.spark.sql.functions.udaf(
                spark._jvm.parascout.ReasonCounts(names), spark._jvm.org.apache.spark.sql.Encoders.STRING())
            spark._jsparkSession.udf().register(function, aggregate)
        return [F.call_function(function, F.col(column)).alias(REASON_COUNTS)]
    return [F.count(F.lit(1)).alias("records"),
            *[F.sum(F.when(F.col(column) == name, 1).otherwise(0)).alias(name) for name in reasons]]


def counted_reasons(values: dict) -> dict:
    """The values of reason_counters' aggregates (an Observation's, or a row of them) as {records: n, reason: n}."""
    nested = values.get(REASON_COUNTS)
    return nested.asDict() if nested is not None else dict(values)


def latest_captures(records: DataFrame, pairs: Sequence[tuple[str, str]], partitions: int | None,
                    url_languages: bool = True) -> DataFrame:
    """Records laid out by site (`site_name`) and ordered by site, host and SURT within each partition, with
    `domain`, the page language and `capture_reason`.

    `capture_reason` is ok, older_capture or host_not_bilingual.

    The latest capture of a URL (host + SURT key, so http/https variants collapse) is kept. Its language
    (`lang`) is the one its URL declares in a slot the host uses for languages (udfs.index.url_language), else the
    CDX's primary language (`cdx_lang`); `lang_source` says which. With language pairs, a site (hosts of one
    registered domain's name: en.example.com, fr.example.com, example.de, example.fr) needs a kept URL in
    each language of at least one pair. Without `url_languages`, `lang` is the CDX's (a third of the scan's CPU).

    One shuffle, by site, and one sort of the rows: the latest capture, the URL-language evidence and the site's
    languages are one pass per host (per site with pairs) on the JVM where the jar loads (parascout.UrlLanguagePass),
    else windows (three more sorts); the site's languages are never a join of the records with an aggregate of
    themselves (which Spark computes by reading and parsing the whole index a second time).
    """
    # domains are looked up before the shuffle: after it, the Python step would hide the window's sort
    # order from Spark and cost a second sort of the output
    with_domain = records.withColumn("domain", registered_domain_column(F.col("host")))
    with_domain = with_domain.withColumn("site_name", name_site_column(F.col("host"), F.col("domain")))
    by_site = (with_domain.repartition(partitions, "site_name") if partitions
               else with_domain.repartition("site_name"))
    by_site = with_languages(by_site)  # after the shuffle: a short string moves, not an array
    newest_first = ("site_name", "host", "surt", F.desc("fetch_time"), F.desc("warc_filename"),
                    F.desc("warc_offset"))
    ranked = url_language_pass(by_site.sortWithinPartitions(*newest_first), pairs) if url_languages else None
    on_jvm = ranked is not None
    if not on_jvm:
        ranked = by_site.withColumn("capture_rank", F.row_number().over(
            Window.partitionBy(*newest_first[:3]).orderBy(*newest_first[3:])))
        ranked = with_url_languages(ranked) if url_languages else ranked.withColumn(
            "lang", F.col("cdx_lang")).withColumn("lang_source", F.when(F.col("cdx_lang").isNotNull(), F.lit("cdx")))
        if pairs:
            ranked = with_site_bilingual(ranked, pairs)
    latest = F.col("capture_rank") == 1
    rules = [(~latest, "older_capture")]
    if pairs:
        rules.append((~F.col("site_bilingual"), "host_not_bilingual"))
    reason = _first_reason([(condition, F.lit(name)) for condition, name in rules], F.lit("ok"))
    captures = ranked.withColumn("capture_reason", reason).drop("capture_rank", "site_bilingual")
    # the pass keeps its input's order, which Spark cannot see; a window's order Spark sees (the sort is then free)
    return captures if on_jvm else captures.sortWithinPartitions(*newest_first[:3])


def url_language_pass(sorted_by_site: DataFrame, pairs: Sequence[tuple[str, str]] = ()) -> DataFrame | None:
    """`capture_rank`, `lang` and `lang_source` (and `site_bilingual` with `pairs`) of rows sorted as
    latest_captures sorts them, from one pass per host (per site with pairs) on the JVM
    (parascout.UrlLanguagePass: the same answers as with_url_languages' and with_site_bilingual's windows, each URL's
    marker read by the pass itself, as parascout.UrlMarker reads it), in the rows' order; None without the jar."""
    from py4j.java_gateway import JavaClass

    spark = sorted_by_site.sparkSession
    if not isinstance(spark._jvm.parascout.UrlLanguagePass, JavaClass):
        return None
    spec = ";".join(f"{source} {target}" for source, target in pairs)
    return DataFrame(spark._jvm.parascout.UrlLanguagePass.apply(sorted_by_site._jdf, MAX_HELD_HOST_ROWS, spec,
                                                                code_spec()), spark)


def with_url_languages(ranked: DataFrame) -> DataFrame:
    """`lang` from the URL where its marker's slot is a language slot of the host, else the CDX's (`cdx_lang`).

    Among the host's latest captures, a code in a slot is the page's language when CLD2 (the CDX `languages`)
    names it on at least half the pages carrying that code there, or when the page has a sibling (the same URL
    with another code in that slot) and CLD2 confirms some code of the slot: properties of the site, so a page
    whose whole-HTML CLD2 label is wrong still gets the language its URL says. `ranked` is laid out by
    `site_name` (latest_captures): the windows lead with it, so they need no shuffle of their own."""
    ranked = ranked.withColumn("url_marker", url_language_struct(F.col("url")))
    ranked = ranked.select("*", "url_marker.*").drop("url_marker")
    marked = (F.col("capture_rank") == 1) & F.col("url_marker_lang").isNotNull()
    agrees = F.when(marked, F.coalesce(F.array_contains(F.col("langs"), F.col("url_marker_lang")),
                                       F.lit(False)).cast("double"))
    host_slot = ("site_name", "host", "url_marker_slot")
    code_confirmed = F.avg(agrees).over(Window.partitionBy(*host_slot, "url_marker_lang")) >= 0.5
    ranked = ranked.withColumn("code_confirmed", F.coalesce(code_confirmed, F.lit(False)))
    slot_confirmed = F.max(F.when(marked, F.col("code_confirmed"))).over(Window.partitionBy(*host_slot))
    siblings = F.size(F.collect_set(F.when(marked, F.col("url_marker_lang"))).over(
        Window.partitionBy(*host_slot, "sibling_key")))
    valid = F.col("url_marker_lang").isNotNull() & (
        F.col("code_confirmed") | (F.coalesce(slot_confirmed, F.lit(False)) & (siblings >= 2)))
    ranked = ranked.withColumn("url_valid", valid)  # one column: used twice below, it would be two windows each
    lang = F.when(F.col("url_valid"), F.col("url_marker_lang")).otherwise(F.col("cdx_lang"))
    source = F.when(F.col("url_valid"), F.lit("url")).when(F.col("cdx_lang").isNotNull(), F.lit("cdx"))
    return (ranked.withColumn("lang", lang).withColumn("lang_source", source)
            .drop("url_marker_slot", "url_marker_lang", "sibling_key", "code_confirmed", "url_valid"))


def with_site_bilingual(ranked: DataFrame, pairs: Sequence[tuple[str, str]]) -> DataFrame:
    """Add `site_bilingual`: the hosts of the URL's site (`site_name`: the registered domain's name on every
    public suffix, udfs.common.sites' `--group-by name`) hold a latest capture in each language of one of `pairs`, so a
    site whose languages live on other hosts (fr.example.com) or other domains (example.fr) is kept whole.

    One pass serves every pair: a flag per language of any pair over the site's window, then an OR over the
    pairs. `ranked` is laid out by `site_name` (latest_captures), so the window needs no shuffle."""
    languages = sorted({lang for pair in pairs for lang in pair})
    latest = F.col("capture_rank") == 1
    site = Window.partitionBy("site_name")
    flags = ranked.select("*", *[(F.max((latest & (F.col("lang") == lang)).cast("int")).over(site) == 1)
                                 .alias(f"site_has_{lang}") for lang in languages])
    bilingual = reduce(lambda any_pair, pair: any_pair | (F.col(f"site_has_{pair[0]}") & F.col(f"site_has_{pair[1]}")),
                       pairs, F.lit(False))
    return flags.withColumn("site_bilingual", F.coalesce(bilingual, F.lit(False))).drop(
        *[f"site_has_{lang}" for lang in languages])


def with_languages(records: DataFrame) -> DataFrame:
    """Add `langs` (CDX `languages` split) and `cdx_lang` (its first, the primary language)."""
    langs = F.when(F.col("languages") != "", F.split(F.col("languages"), ","))
    return records.withColumn("langs", langs).withColumn("cdx_lang", F.get(F.col("langs"), 0)).drop("languages")


# ---- registered domains: one lookup per distinct host -------------------------------------
def registered_domains(hosts: pd.Series) -> pd.Series:
    """Registered domain per host (bundled PSL); each distinct host is looked up once."""
    codes, distinct = pd.factorize(hosts)  # a missing host gets code -1: the None appended last
    domains = np.array([registered_domain(host) for host in distinct] + [None], dtype=object)
    return pd.Series(domains[codes], index=hosts.index, dtype=object)


def registered_domain_column(host: Column, use_jvm_udf: bool = True) -> Column:
    """The registered domain of `host`: by the Java UDF where the active session can load it (no Python
    worker), else by the pandas UDF; both give udfs.common.urls.registered_domain's answer."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession() if use_jvm_udf else None
    if spark is not None and java_function_available(spark, JVM_DOMAIN_FUNCTION, JVM_DOMAIN_CLASS,
                                                     "registered domains", "a pandas UDF"):
        return F.call_function(JVM_DOMAIN_FUNCTION, host, F.lit(public_suffix_spec()))
    return registered_domain_udf()(host)


def registered_domain_udf():
    """pandas_udf over host names (Iterator form: the PSL loads once per task)."""
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("string")
    def registered_domain_of(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for hosts in batches:
            yield registered_domains(hosts)

    return registered_domain_of


def host_table(urls: DataFrame, pairs: Sequence[tuple[str, str]]) -> DataFrame:
    """hosts: host, domain, n_urls, lang_counts (primary language -> URLs), is_candidate (both languages of a pair;
    without pairs, two known languages)."""
    per_language = urls.groupBy("host", "domain", F.coalesce("lang", F.lit(UNKNOWN_LANGUAGE)).alias("lang")).count()
    hosts = per_language.groupBy("host", "domain").agg(
        F.sum("count").alias("n_urls"),
        F.map_from_entries(F.collect_list(F.struct("lang", "count"))).alias("lang_counts"))
    languages = F.map_keys("lang_counts")
    if pairs:
        is_candidate = reduce(lambda any_pair, pair: any_pair | (F.array_contains(languages, pair[0])
                                                                 & F.array_contains(languages, pair[1])),
                              pairs, F.lit(False))
    else:
        is_candidate = F.size(F.array_remove(languages, UNKNOWN_LANGUAGE)) >= 2
    return hosts.withColumn("is_candidate", is_candidate)
