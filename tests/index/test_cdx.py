"""udfs/index/cdx.py, udfs/index/cdx_records.py, udfs/index/cdx_api.py: ZipNum block selection, gunzip to lines, line parsing."""
import functools
import gzip
import json
import random
import zlib
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from parascout.udfs.common import jvm
from parascout.udfs.common.urls import _extractor, registered_domain, surt
from parascout.udfs.index import cdx_records
from parascout.udfs.index.cdx import (
    LINE_SCHEMA,
    ByteRange,
    cdx_byte_ranges,
    cdx_line_batches,
    columnar_files,
    format_cdx_line,
    jvm_file_lines,
    jvm_readable,
    range_chunks,
    range_reader,
    select_zipnum_ranges,
    surt_prefixes,
    write_zipnum,
)
from parascout.udfs.index.cdx_api import capture_to_cdx_line
from parascout.udfs.index.cdx_records import (
    CaptureFilters,
    cdx_path_crawl,
    filter_reason,
    parse_cdx_lines,
    parse_cdx_lines_sql,
    registered_domains,
)
from tests.conftest import SHARED_DATA
from tests.support.cdx import long_line_gzip

CDX_DATA = Path(__file__).parent.parent / "data" / "cdx"


def lines_of(batches) -> list[tuple[bytes, str | None]]:
    table = pa.Table.from_batches(list(batches), schema=LINE_SCHEMA)
    return list(zip(table.column("value").to_pylist(), table.column("read_status").to_pylist()))


def test_format_cdx_line_keeps_commoncrawl_key_order_and_string_values():
    line = format_cdx_line("is,example)/", "20240805101010",
                           {"status": 200, "url": "https://www.example.is/", "languages": "isl", "charset": None})
    key, timestamp, payload = line.split(" ", 2)
    assert (key, timestamp) == ("is,example)/", "20240805101010")
    assert list(json.loads(payload).items()) == [("url", "https://www.example.is/"), ("status", "200"),
                                                  ("languages", "isl")]


# ---- ZipNum -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def zipnum(tmp_path_factory):
    """A ZipNum collection of 40 hosts x 30 URLs in 50-line blocks over two files."""
    rng = random.Random(7)
    lines = []
    for index in range(40):
        host = f"www.site{index:02d}.{'is' if index % 2 else 'com'}"
        for page in range(30):
            url = f"https://{host}/{rng.choice(['en', 'is'])}/page-{page}"
            lines.append(format_cdx_line(surt(url), "20240805101010", {"url": url, "status": "200"}))
    lines.sort()
    folder = tmp_path_factory.mktemp("zipnum")
    summary = write_zipnum(lines, str(folder), block_lines=50, lines_per_file=600)
    return folder, lines, summary


def read_selection(selection) -> list[str]:
    return [value.decode() for r in selection.ranges for value, _ in lines_of(cdx_line_batches(range_chunks(r)))]


def test_surt_prefixes_cover_hosts_ports_domains_and_tlds():
    assert surt_prefixes(hosts=["www.example.is"]) == ["is,example)", "is,example:"]
    assert surt_prefixes(domains=["example.is"], hosts=["blog.example.is"]) == ["is,example"]
    assert surt_prefixes(tlds=["is", ".mt"], domains=["example.is"]) == ["is,", "mt,"]


def test_host_filter_reads_only_the_blocks_that_can_hold_the_host(zipnum):
    folder, lines, summary = zipnum
    index = (folder / "cluster.idx").read_text().splitlines()
    assert summary["blocks"] == len(index) == 24 and summary["files"] == 2
    selection = select_zipnum_ranges(index, str(folder), surt_prefixes(hosts=["www.site07.is"]))
    assert selection.blocks_total == 24
    assert 1 <= selection.blocks_selected <= 2 < selection.blocks_total
    read = read_selection(selection)
    wanted = [line for line in lines if line.startswith("is,site07)")]
    assert len(wanted) == 30 and set(wanted) <= set(read)
    assert len(read) == 50 * selection.blocks_selected


def test_tld_filter_selects_a_key_range_and_no_filter_selects_everything(zipnum):
    folder, lines, _ = zipnum
    index = (folder / "cluster.idx").read_text().splitlines()
    by_tld = select_zipnum_ranges(index, str(folder), surt_prefixes(tlds=["com"]))
    assert {line for line in lines if line.startswith("com,")} <= set(read_selection(by_tld))
    assert by_tld.blocks_selected < by_tld.blocks_total
    everything = select_zipnum_ranges(index, str(folder), None)
    assert everything.blocks_selected == everything.blocks_total == 24
    assert len(everything.ranges) == 2  # adjacent blocks merged into one request per file
    assert sorted(read_selection(everything)) == lines


def test_an_absent_host_selects_at_most_the_block_its_key_would_be_in(zipnum):
    folder, _, _ = zipnum
    index = (folder / "cluster.idx").read_text().splitlines()
    between = select_zipnum_ranges(index, str(folder), surt_prefixes(hosts=["www.site02a.com"]))
    assert between.blocks_selected == 1
    assert not any(line.startswith("com,site02a)") for line in read_selection(between))
    before_all = select_zipnum_ranges(index, str(folder), surt_prefixes(hosts=["www.absent.com"]))
    assert before_all.blocks_selected == 0 and before_all.ranges == []


# ---- bytes -> lines ---------------------------------------------------------------------
def test_plain_and_multi_member_gzip_give_the_same_lines():
    text = b"a 1 {}\nb 2 {}\nc 3 {}"  # no newline at the end
    members = gzip.compress(b"a 1 {}\nb 2 {}\n") + gzip.compress(b"c 3 {}")
    expected = [(b"a 1 {}", None), (b"b 2 {}", None), (b"c 3 {}", None)]
    assert lines_of(cdx_line_batches([text])) == expected
    assert lines_of(cdx_line_batches([members[:5], members[5:17], members[17:]])) == expected
    assert lines_of(cdx_line_batches([])) == [] and lines_of(cdx_line_batches([b""])) == []


def test_truncated_gzip_keeps_what_decodes_and_counts_the_broken_member_once():
    data = (CDX_DATA / "truncated.cdx.gz").read_bytes()
    read = lines_of(cdx_line_batches([data]))
    assert [status for _, status in read] == [None, None, None, "truncated_gzip"]
    assert all(value.startswith(b"is,example)/") for value, _ in read[:3])


def test_corrupt_gzip_is_one_bad_record_and_a_missing_file_is_unreadable(tmp_path):
    corrupt = gzip.compress(b"a 1 {}\n") + b"\x1f\x8b\x08\x00garbage-not-deflate"
    assert lines_of(cdx_line_batches([corrupt])) == [(b"a 1 {}", None), (b"", "bad_gzip")]
    reader = range_reader()
    tasks = pa.RecordBatch.from_pylist([{"path": str(tmp_path / "missing.gz"), "offset": 0, "length": -1}])
    assert lines_of(reader(iter([tasks]))) == [(b"", "unreadable")]


def test_a_line_over_the_limit_is_counted_and_skipped_without_holding_it():
    import tracemalloc

    data = long_line_gzip(64 << 20)
    assert len(data) < 200_000  # 64 MiB of one line in a small file
    tracemalloc.start()
    read = lines_of(cdx_line_batches([data[i:i + 65536] for i in range(0, len(data), 65536)],
                                     max_line_bytes=1 << 20))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [status for _, status in read] == [None, "line_too_long", None]
    assert read[0][0] == read[2][0] and read[1][0] == b""
    assert peak < 16 << 20  # never the whole line (64 MiB), only bounded pieces
    plain = b"a 1 {}\n" + b"y" * 5000 + b"\nb 2 {}\n" + b"z" * 3000  # a long line inside one chunk, and a tail
    assert [status for _, status in lines_of(cdx_line_batches([plain], max_line_bytes=2000))] == [
        None, "line_too_long", None, "line_too_long"]


JVM_READER_CASES = {  # name -> bytes: every way a file's lines can come out, as the Python tasks read them
    "plain.cdx": b"a 1 {}\n\nb 2 {}\r\n" + b"y" * 5000 + b"\nc 3 {}\n" + b"z" * 3000,
    "members.cdx.gz": gzip.compress(b"a 1 {}\nb 2 {}\n") + gzip.compress(b"c 3 {}"),
    "empty.cdx": b"",
    "truncated.cdx.gz": (CDX_DATA / "truncated.cdx.gz").read_bytes(),
    "garbage-member.cdx.gz": gzip.compress(b"a 1 {}\n") + b"\x1f\x8b\x08\x00garbage-not-deflate",
    "trailing-junk.cdx.gz": gzip.compress(b"a 1 {}\nb 2 {}\n") + b"junk after the member",
    "bad-crc.cdx.gz": gzip.compress(b"a 1 {}\n")[:-8] + b"\0\0\0\0\7\0\0\0",
    "cut-in-trailer.cdx.gz": gzip.compress(b"a 1 {}\n")[:-3],
    "named-member.cdx.gz": b"\x1f\x8b\x08\x18" + bytes(6) + b"name\0comment\0" + zlib.compress(b"a 1 {}\n")[2:-4]
    + zlib.crc32(b"a 1 {}\n").to_bytes(4, "little") + (7).to_bytes(4, "little"),
    "bomb.cdx.gz": long_line_gzip(3 << 20),
}


def test_the_jvm_file_reader_gives_the_python_readers_lines_and_reasons(spark, tmp_path):
    paths = []
    for name, data in JVM_READER_CASES.items():
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))
    paths.append(str(tmp_path / "missing.cdx.gz"))
    lines = jvm_file_lines(spark, paths, max_line_bytes=2000)
    if lines is None:
        pytest.skip("the jar is not built (`make jar`)")
    got = [(row.value.encode("utf-8", "surrogateescape"), row.read_status) for row in lines.collect()]
    # both stream: what decodes before a member proves broken (a bad CRC at its end) comes out first
    expected = [line for name, data in JVM_READER_CASES.items() for line in lines_of(cdx_line_batches(
        [data[:2], *(data[i:i + 1] for i in range(2, len(data)))], max_line_bytes=2000))] + [(b"", "unreadable")]
    assert got == expected
    assert ("line_too_long" in dict(map(reversed, expected))) and ("bad_gzip" in dict(map(reversed, expected)))


def test_reason_counts_on_the_jvm_agree_with_a_sum_per_reason(spark):
    """scan-cdx's counts by reason (reason_counters): parascout.ReasonCounts' one aggregate gives what a sum per
    reason gives, observed during a write and aggregated again: every row in `records`, a reason not named and a
    null reason in `records` only; no rows, all zeros."""
    from pyspark.sql import Observation

    if jvm.jvm_jar_path() is None:
        pytest.skip("the jar is not built (`make jar`)")
    reasons = (*sorted(cdx_records.BAD_REASONS), *cdx_records.RECORD_FILTERS, "ok")
    rng = random.Random(3)
    rows = [(rng.choice([*reasons, "ok", "ok", "not_a_reason", None]),) for _ in range(5000)]
    frame = spark.createDataFrame(rows, "reason string").repartition(3)
    expected = {"records": len(rows), **{name: sum(row[0] == name for row in rows) for name in reasons}}
    assert expected["ok"] > 0 and any(row[0] is None for row in rows)
    jvm_counters = cdx_records.reason_counters(reasons, spark=spark)
    assert [str(column) for column in jvm_counters] != [str(column) for column in cdx_records.reason_counters(reasons)]
    for counters in (jvm_counters, cdx_records.reason_counters(reasons)):
        observation = Observation()
        frame.observe(observation, *counters).where("reason = 'ok'").write.format("noop").mode("overwrite").save()
        assert cdx_records.counted_reasons(observation.get) == expected
        assert cdx_records.counted_reasons(frame.agg(*counters).first().asDict()) == expected
        empty = cdx_records.counted_reasons(frame.limit(0).agg(*counters).first().asDict())
        assert {key: value or 0 for key, value in empty.items()} == dict.fromkeys(expected, 0)


def test_files_parsed_as_the_jvm_reads_them_give_the_records_of_their_lines(spark, tmp_path):
    # every fixture line (good, each kind of bad, non-UTF-8) and every read problem, one file under a crawl's folder
    crawl_dir = tmp_path / "cc-index" / "collections" / "CC-MAIN-2024-33" / "indexes"
    crawl_dir.mkdir(parents=True)
    paths = [str(CDX_DATA / "captures.cdx"), str(CDX_DATA / "broken.cdx"), str(CDX_DATA / "truncated.cdx.gz")]
    (crawl_dir / "cdx-00000.gz").write_bytes(gzip.compress((CDX_DATA / "captures.cdx").read_bytes()))
    paths.append(str(crawl_dir / "cdx-00000.gz"))
    for name in ("plain.cdx", "bomb.cdx.gz", "bad-crc.cdx.gz"):
        (tmp_path / name).write_bytes(JVM_READER_CASES[name])
        paths.append(str(tmp_path / name))
    paths.append(str(tmp_path / "missing.cdx.gz"))
    crawls = [cdx_path_crawl(path) for path in paths]
    records = cdx_records.jvm_file_records(spark, paths, crawls, max_line_bytes=2000)
    if records is None:
        pytest.skip("the jar is not built (`make jar`)")
    lines = [jvm_file_lines(spark, [path], max_line_bytes=2000).withColumn("cdx_crawl", F.lit(crawl).cast("string"))
             for path, crawl in zip(paths, crawls)]
    expected = parse_cdx_lines(functools.reduce(lambda a, b: a.unionByName(b), lines))
    assert records.schema == expected.schema
    assert records.rdd.getNumPartitions() == len(paths)  # one task per file
    got, want = records.collect(), expected.collect()
    assert got == want
    reasons = {row.reason for row in got}
    assert {None, "non_utf8", "bad_json", "line_too_long", "truncated_gzip", "bad_gzip", "unreadable"} <= reasons
    assert {row.crawl for row in got if row.reason is None} >= {"CC-MAIN-2024-33"}


def test_range_chunks_reads_a_byte_range(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(range(100)))
    assert b"".join(range_chunks(ByteRange(str(path), 10, 5))) == bytes(range(10, 15))
    assert b"".join(range_chunks(ByteRange(str(path)), chunk_bytes=7)) == bytes(range(100))


# ---- parsing on the JVM -----------------------------------------------------------------
def parse_file(spark, path: Path):
    rows = [(line.decode("utf-8", "surrogateescape"), None) for line in path.read_bytes().split(b"\n") if line]
    frame = spark.createDataFrame(rows, "value string, read_status string")
    return parse_cdx_lines(frame).toPandas()


def test_each_kind_of_bad_line_gets_its_reason(spark):
    # non-UTF-8 bytes cannot pass through Python strings; feed the raw bytes as the readers do
    raw = [line for line in (CDX_DATA / "broken.cdx").read_bytes().split(b"\n") if line]
    frame = spark.createDataFrame([(line, None) for line in raw], "value binary, read_status string")
    parsed = parse_cdx_lines(frame.selectExpr("cast(value as string) as value", "read_status")).toPandas()
    assert parsed["reason"].tolist() == [
        None, "malformed_line", "malformed_line", "bad_json", "missing_url", "url_too_long", "bad_url",
        "missing_status", "missing_location", "non_utf8", None]
    good = parsed[parsed["reason"].isna()]
    assert good["host"].tolist() == ["www.example.is"] * 2
    assert good["crawl"].tolist() == ["CC-MAIN-2024-33"] * 2
    assert str(good["fetch_time"].iloc[0]) == "2024-08-05 14:00:00"


def test_good_lines_parse_into_typed_fields(spark):
    parsed = parse_file(spark, CDX_DATA / "captures.cdx").set_index("url")
    assert parsed["reason"].isna().all()
    page = parsed.loc["https://www.visitmalta.mt/mt/dwar"]
    assert (page["surt"], page["host"], page["status"]) == ("mt,visitmalta)/mt/dwar", "www.visitmalta.mt", 200)
    assert page["mime"] == "application/xhtml+xml"  # mime-detected wins over the HTTP header
    assert page["warc_offset"] == 15000 and page["warc_length"] == 1105 and page["record_type"] == "response"
    redirect = parsed.loc["http://example.is/"]
    assert (redirect["record_type"], redirect["redirect"]) == ("redirect", "https://www.example.is/")
    assert parsed.loc["https://www.example.is/is/", "record_type"] == "revisit"
    assert parsed.loc["https://www.example.is/is/eldra", "crawl"] == "CC-MAIN-2024-30"


def odd_lines() -> list[bytes]:
    """CDX lines that stress the parsers: JSON escapes and types, odd URLs, MIME and times, bad input."""
    fields = {"url": "https://WWW.Example.IS./is/s\u00edda?a=1#x", "mime": "Text/HTML; charset=UTF-8",
              "status": "200", "digest": "D", "length": "10", "offset": "20",
              "filename": "crawl-data/CC-MAIN-2024-33/segments/1/warc/x.warc.gz", "languages": "isl,eng"}
    lines = [format_cdx_line("is,example)/is/s%c3%ada", "20240805101010", fields)]
    odd = [
        ('{"url": "http://user:pw@b.example.is:8080/p", "mime": "text/html", "status": 200, "length": 5, '
        '"offset": 0, "filename": "crawl-data/X", "encoding": "latin-1", "truncated": "length"}'),
        (r'{"url": "https:\/\/c.example.is\/\u00e9\"q\"", "mime-detected": " application/xhtml+xml ", "status": "404",'
        r' "length": "1", "offset": "2", "filename": "elsewhere.warc.gz", "redirect": null, "extra": {"a": [1, "}"]}}'),
        '{"url":"https://d.example.is/","mime":"WARC/Revisit","length":"1","offset":"2","filename":"f"}',
        ('{"url": "https://e.example.is/", "status": "301", "redirect": "https://e.example.is/x", "length": "1", '
        '"offset": "2", "filename": "f"}  trailing'),
        '{"url": "https://f.example.is/", "status": "700", "length": "1", "offset": "2", "filename": "f"}',
        '{"url": "https://g.example.is/", "status": "200", "length": "-1", "offset": "2", "filename": "f"}',
        '{"url": "https://h.example.is/", "status": "200", "length": " 7 ", "offset": "2", "filename": "f"}',
        '{"url": "example.is/no-scheme", "status": "200", "length": "1", "offset": "2", "filename": "f"}',
        '{"url": "https://.../", "status": "200", "length": "1", "offset": "2", "filename": "f"}',
        '{"url": "", "status": "200"}', '{}', '{"other": "x"}', '{"url": "https://a.is/", "status": tru}',
        '{"url": "https://a.is/" "status": "200"}', '{"url": "https://a.is/\\x"}', '["https://a.is/"]',
        # keys: escaped, near misses of a key's length and first letter, a wrong case, a repeated one (the last counts)
        ('{"u\\u0072l": "https://k.example.is/", "st\\"atus": "200", "status": "200", "length": "1", "offset": "2",'
         ' "filename": "f", "languagez": "fra", "lengtx": "9", "Mime": "warc/revisit", "mime": "WARC/Revisit",'
         ' "fileName": "g", "tRuncated": "x", "filename": "h"}'),
    ]
    lines += [f"is,example)/odd{i} 20240805101010 {text}" for i, text in enumerate(odd)]
    lines += ["is,example)/month 20241305101010 {\"url\": \"https://a.is/\"}",
              ("is,example)/leap 20240229235959 {\"url\": \"https://a.is/\", \"status\": \"200\", \"length\": \"1\", "
              "\"offset\": \"2\", \"filename\": \"f\"}"),
              "is,example)/feb30 20230230101010 {\"url\": \"https://a.is/\"}", "is,example)/short 2024080510 {}",
              " 20240805101010 {\"url\": \"https://a.is/\"}", "is,example)/two-parts 20240805101010", "", "x",
              "is,example)/no-brace 20240805101010 url",
              "is,example)/year-1024 10240805101010 {\"url\": \"https://a.is/\"}",  # a date, not a capture's
              "is,example)/tab-year \t0240805101010 {\"url\": \"https://a.is/\"}"]
    located = '"status": "200", "length": "1", "offset": "2", "filename": "f"'
    lines += [f'is,example)/ctl{i} 20240805101010 {{"url": "{url}", {located}}}' for i, url in enumerate([
        r"https://a.is/\u0000x", r"https://a.is/x\r\nSet-Cookie: y", r"https://a\u001b.is/", r"https://a.is/\u007f",
        "https://a.is/\x1b[31m", "https://a\x00b.is/", "https://a.is/\tx"])]  # escaped, then raw in the JSON
    return [line.encode("utf-8") for line in lines] + [b"is,example)/bad \xff 20240805101010 {}"]


#: (WARC filename, the line's `crawl` key, the crawl its CDX file's path names) -> the record's crawl
CRAWL_SOURCES = [
    (("crawl-data/CC-MAIN-2024-33/segments/1/warc/x.warc.gz", "job", "CC-MAIN-2020-01"), "CC-MAIN-2024-33"),
    (("mycrawl-00001.warc.gz", "job", "CC-MAIN-2020-01"), "CC-MAIN-2020-01"),
    (("mycrawl-00001.warc.gz", "job", None), "job"),
    (("mycrawl-00001.warc.gz", "", None), None),
    (("crawls/mycrawl-00001.warc.gz", None, None), None),
]


def crawl_source_lines() -> list[tuple[bytes, str | None]]:
    """(CDX line, the crawl its file's path names) of CRAWL_SOURCES, in their order."""
    lines = []
    for index, ((filename, key, cdx_crawl), _) in enumerate(CRAWL_SOURCES):
        fields = {"url": f"https://a.example.is/{index}", "status": "200", "length": "1", "offset": "2",
                  "filename": filename, "crawl": key}
        lines.append((f"is,example,a)/{index} 20240805101010 {json.dumps(fields)}".encode(), cdx_crawl))
    return lines


def test_the_java_line_parser_gives_the_records_of_the_spark_expressions(spark):
    raw = [line for path in ("captures.cdx", "broken.cdx") for line in (CDX_DATA / path).read_bytes().split(b"\n")
           if line] + odd_lines()
    frame = spark.createDataFrame([(line, None, None) for line in raw] + [(b"", "truncated_gzip", None)]
                                  + [(line, None, cdx_crawl) for line, cdx_crawl in crawl_source_lines()],
                                  "value binary, read_status string, cdx_crawl string")
    lines = frame.selectExpr("cast(value as string) as value", "read_status", "cdx_crawl")
    by_java, by_sql = parse_cdx_lines(lines).toPandas(), parse_cdx_lines_sql(lines).toPandas()
    assert spark.catalog.functionExists("parascout_cdx_line") or jvm.jvm_jar_path() is None
    assert by_java["reason"].tolist() == by_sql["reason"].tolist()
    assert by_java["reason"].isna().sum() >= 9 and by_java["reason"].nunique() >= 9
    good = by_sql["reason"].isna()  # a bad record carries its reason only
    pd.testing.assert_frame_equal(by_java[good].reset_index(drop=True), by_sql[good].reset_index(drop=True))
    crawls = by_java.iloc[-len(CRAWL_SOURCES):]
    assert crawls["reason"].isna().all() and set(crawls["record_type"]) == {"response"}
    assert crawls["crawl"].tolist() == [crawl for _, crawl in CRAWL_SOURCES]
    odd = by_java.iloc[-len(odd_lines()) - 1 - len(CRAWL_SOURCES):-len(CRAWL_SOURCES)]
    assert odd["reason"].tolist() == [
        None, None, None, None, None, "missing_status", "missing_location", None, "bad_url", "bad_url",
        "missing_url", "bad_json", "bad_json", "bad_json", "bad_json", "bad_json", "malformed_line", None,
        "malformed_line", None, *["malformed_line"] * 9, *["control_characters"] * 7, "non_utf8", "truncated_gzip"]
    odd = odd[odd["reason"].isna()].set_index("surt")
    assert odd["host"].tolist() == ["www.example.is", "b.example.is", "c.example.is", "d.example.is",
                                    "e.example.is", "h.example.is", "k.example.is", "a.is"]
    assert odd.loc["is,example)/odd1", "url"] == 'https://c.example.is/\u00e9"q"'
    assert odd.loc["is,example)/odd1", "mime"] == "application/xhtml+xml" and odd["mime"].iloc[0] == "text/html"
    assert odd.loc["is,example)/odd0", ["status", "crawl", "charset"]].tolist() == [200, "X", "latin-1"]
    assert odd.loc["is,example)/odd2", "record_type"] == "revisit" and odd.loc["is,example)/odd6", "warc_length"] == 7
    keys = odd.loc["is,example)/odd16"]  # the escaped and repeated keys, not the near misses
    assert [keys["url"], keys["status"], keys["warc_length"], keys["warc_filename"], keys["record_type"]] == [
        "https://k.example.is/", 200, 1, "h", "revisit"] and keys["languages"] is None and keys["truncated"] is None


def test_a_cdx_path_names_the_crawl_of_a_commoncrawl_collection_folder():
    assert [cdx_path_crawl(path) for path in (
        "s3://commoncrawl/cc-index/collections/CC-MAIN-2024-33/indexes/cdx-00000.gz",
        "/data/cc-index/collections/CC-MAIN-2009-2010/indexes/cdx-00299.gz",
        "file:///mirror/CC-MAIN-2012/indexes/cdx-00001.gz",
        "/data/CC-MAIN-2024-33/mine/indexes/cdx-00000.gz",  # a CommonCrawl folder, then one's own: the last counts
        "/out/mycrawl/indexes/cdx-00000.gz", "/data/CC-MAIN-2024-33-cdx-00000.gz",
        "/data/CC-MAIN-20240805082005-20240805082005-00001/x.cdx",  # a WARC's stem, not a crawl
    )] == ["CC-MAIN-2024-33", "CC-MAIN-2009-2010", "CC-MAIN-2012", "CC-MAIN-2024-33", None, None, None]


def test_real_commoncrawl_lines_give_both_parsers_the_crawl_and_record_type(spark, shared_data):
    from parascout.udfs.index.warc_index import IndexSettings, index_file

    name = "CC-MAIN-2020-34-excerpt.warc.gz"
    lines = [row["line"] for row in index_file(str(shared_data / "cc-sample" / name), name, IndexSettings())
             if row["line"]]
    # the same captures as CommonCrawl's index lists them: the WARC's path under crawl-data/, no crawl key
    warc_path = "crawl-data/CC-MAIN-2020-34/segments/1/warc/CC-MAIN-20200808165417-20200808195417-00395.warc.gz"
    listed = [" ".join([*line.split(" ", 2)[:2], json.dumps({**json.loads(line.split(" ", 2)[2]),
                                                              "filename": warc_path, "crawl": None})])
              for line in lines]
    frame = spark.createDataFrame([(line, None, cdx_crawl) for line in lines for cdx_crawl in (None, "CC-MAIN-2099-01")]
                                  + [(line, None, None) for line in listed],
                                  "value string, read_status string, cdx_crawl string")
    by_java, by_sql = parse_cdx_lines(frame).toPandas(), parse_cdx_lines_sql(frame).toPandas()
    pd.testing.assert_frame_equal(by_java, by_sql)
    assert len(by_java) == 3 * 16 and by_java["reason"].isna().all()
    assert set(by_java["record_type"]) == {"response"}  # 16 responses of status 200
    # index-warcs' lines: the warcinfo's isPartOf, unless the CDX file's path names a crawl; CommonCrawl's: the path
    assert by_java["crawl"].tolist() == ["CC-MAIN-2020-34", "CC-MAIN-2099-01"] * 16 + ["CC-MAIN-2020-34"] * 16


def mutated_lines(count: int, seed: int) -> list[bytes]:
    """CDX lines of captures.cdx with 1-3 random byte deletions, insertions or swaps each (JSON punctuation,
    digits, spaces, tabs, control characters, UTF-8 and invalid bytes)."""
    rng = random.Random(seed)
    base = [line for line in (CDX_DATA / "captures.cdx").read_bytes().split(b"\n") if line]
    alphabet = b' {}[]":,\\/0123456789abcdeu.-\xc3\xa9\xff\t\x00\x1b\r\x7f'
    lines = []
    for _ in range(count):
        line = bytearray(rng.choice(base))
        for _ in range(rng.randint(1, 3)):
            position = rng.randrange(len(line))
            kind = rng.random()
            if kind < 0.4:
                del line[position]
            elif kind < 0.8:
                line.insert(position, rng.choice(alphabet))
            else:
                line[position] = rng.choice(alphabet)
        lines.append(bytes(line))
    return lines


@pytest.mark.slow
def test_the_java_line_parser_agrees_with_the_spark_expressions_on_mutated_lines(spark):
    frame = spark.createDataFrame([(line, None) for line in mutated_lines(3000, seed=5)],
                                  "value binary, read_status string")
    lines = frame.selectExpr("cast(value as string) as value", "read_status")

    def parsed(parse) -> pd.DataFrame:  # fetch_time as text: a corrupted year would not fit a pandas timestamp
        return parse(lines).withColumn("fetch_time", F.col("fetch_time").cast("string")).toPandas()

    by_java, by_sql = parsed(parse_cdx_lines), parsed(parse_cdx_lines_sql)
    reasons = by_java["reason"].fillna("ok")
    assert reasons.tolist() == by_sql["reason"].fillna("ok").tolist()
    assert reasons.nunique() >= 6 and (reasons == "ok").sum() > 500  # the mutations reach every check
    assert (reasons == "control_characters").sum() > 20
    good = reasons == "ok"
    pd.testing.assert_frame_equal(by_java[good].reset_index(drop=True), by_sql[good].reset_index(drop=True))


def test_filter_reasons_follow_the_options(spark):
    parsed = parse_cdx_lines(spark.createDataFrame(
        [(line, None) for line in (CDX_DATA / "captures.cdx").read_text().splitlines()],
        "value string, read_status string"))

    def reasons(filters: CaptureFilters) -> dict:
        frame = parsed.withColumn("why", filter_reason(filters)).select("url", "why").toPandas()
        return dict(zip(frame["url"], frame["why"]))

    default = reasons(CaptureFilters(crawls=("CC-MAIN-2024-33",)))
    assert default["https://www.example.is/is/eldra"] == "crawl_not_selected"
    assert default["http://example.is/"] == "redirect"
    assert default["https://www.example.is/is/"] == "revisit"
    assert default["https://www.example.is/is/gamalt"] == "status"
    assert default["https://www.example.is/skjol/arsskyrsla.pdf"] == "mime"
    assert list(default.values()).count("ok") == 13
    kept = reasons(CaptureFilters(keep_redirects=True, keep_revisits=True, mimes=(), statuses=()))
    assert set(kept.values()) == {"ok"}
    by_host = reasons(CaptureFilters(hosts=("blog.example.is",), domains=("co.uk",), tlds=("mt",)))
    allowed = {url for url, why in by_host.items() if why != "host_not_allowed"}
    assert {u.split("/")[2] for u in allowed} == {"blog.example.is", "news.example.co.uk", "www.visitmalta.mt"}


def test_registered_domains_use_the_bundled_public_suffix_list():
    hosts = pd.Series(["www.example.co.uk", "blog.example.is", "www.example.co.uk", None])
    assert registered_domains(hosts).tolist() == ["example.co.uk", "example.is", "example.co.uk", None]


ODD_HOSTS = [
    "", ".", "..", "localhost", "com", "co.uk", "example.co.uk.", "WWW.Example.CO.UK", "a..example.com",
    "192.168.0.1", "256.1.1.1", "1.2.3", "01.2.3.4", "١.2.3.4", "[::1]", "[2001:db8::1]", "[::ffff:1.2.3.4]",
    "[2001:db8::1%eth0]", "[1:2:3:4:5:6:7:8]", "[1:2:3:4:5:6:7:8:9]", "[:::]", "[12345::]", "[fe80::1",
    "user@www.example.is", "www.example.is:8080", " www.example.is ", "www.example.is\u3002", "a\u3002b\uff0ec.jp",
    "//example.com/x", "http://www.example.fr/page?q#f", "x1://host.de", "foo.bar.ck", "www.ck", "bar.ck",
    "city.kawasaki.jp", "a.city.kawasaki.jp", "a.b.kawasaki.jp", "b.kawasaki.jp", "example.xn--p1ai",
    "пример.рф", "www.пример.рф", "xn--e1afmkfd.xn--p1ai", "xn--invalid-.com", "example.XN--P1AI",
    "example.\u00a0com", "ex ample.com", "a.b.c.d.e.nosuchtld", "s3.amazonaws.com", "user.github.io",
]


def psl_hosts(seed: int, count: int) -> list[str]:
    """Hosts under rules of the bundled PSL (wildcards and exceptions included), in Unicode and A-label form."""
    rng = random.Random(seed)
    rules = sorted(_extractor().tlds)
    hosts = []
    for rule in rng.sample(rules, count):
        labels = [rng.choice(["www", "news", "a-b", "x1"]) for _ in range(rng.randint(0, 2))]
        suffix = rule.lstrip("!").replace("*", rng.choice(["foo", "bar9"]))
        hosts.append(".".join([*labels, suffix]))
        if not suffix.isascii():
            hosts.append(".".join([*labels, suffix.encode("idna").decode("ascii")]))
    return hosts


@pytest.mark.slow
def test_java_registered_domain_agrees_with_tldextract(spark):
    if jvm.jvm_jar_path() is None:
        pytest.skip(f"{jvm.JVM_JAR} not built (`make jar`, needs javac): the Java UDF cannot be tested")
    from pyspark.sql import functions as F

    hosts = ODD_HOSTS + psl_hosts(seed=3, count=3000) + [
        "www.example.is", "blog.example.co.uk", "news.bbc.co.uk", "en.wikipedia.org"]
    wmt16 = SHARED_DATA / "wmt16" / "train.pairs"  # real hosts where ../shared is present
    if wmt16.is_file():
        for line in wmt16.read_text().split():
            hosts.append(line.split("/")[2] if "://" in line else line)
    frame = spark.createDataFrame([(host,) for host in hosts] + [(None,)], "host string")
    java = cdx_records.registered_domain_column(F.col("host"))
    assert cdx_records.JVM_DOMAIN_FUNCTION in str(java), "the jar is built but the session cannot load the UDF"
    rows = frame.select("host", java.alias("java"), cdx_records.registered_domain_column(
        F.col("host"), use_jvm_udf=False).alias("pandas")).collect()
    assert len(rows) > 3000
    disagreements = [(row.host, row.java, registered_domain(row.host)) for row in rows
                     if row.java != registered_domain(row.host) or row.java != row.pandas]
    assert disagreements == []
    by_host = {row.host: row.java for row in rows}
    assert by_host["a.city.kawasaki.jp"] == "city.kawasaki.jp" and by_host["foo.bar.ck"] == "foo.bar.ck"
    assert by_host["xn--e1afmkfd.xn--p1ai"] == "xn--e1afmkfd.xn--p1ai" and by_host["[::1]"] == "[::1]"


def test_cdx_api_capture_becomes_a_cdx_line():
    capture = {"urlkey": "is,example)/", "timestamp": "20240805101010", "url": "https://www.example.is/",
               "status": "200", "encoding": "UTF-8"}
    key, timestamp, payload = capture_to_cdx_line(capture).split(" ", 2)
    assert (key, timestamp) == ("is,example)/", "20240805101010")
    assert json.loads(payload) == {"url": "https://www.example.is/", "status": "200", "encoding": "UTF-8"}
    assert capture_to_cdx_line({"url": "https://www.example.is/a", "timestamp": "1"}).startswith("is,example)/a 1 ")


def test_a_cdx_folder_lists_only_cdx_files_and_spark_reads_those_whose_name_tells_gzip(tmp_path):
    ranges, selection = cdx_byte_ranges(str(CDX_DATA), None)
    assert selection is None
    assert sorted(Path(r.path).name for r in ranges) == ["broken.cdx", "captures.cdx", "truncated.cdx.gz"]
    assert all(jvm_readable(r) for r in ranges)
    disguised = tmp_path / "gzipped.cdx"
    disguised.write_bytes(gzip.compress(b"a 1 {}\n"))
    assert not jvm_readable(ByteRange(str(disguised)))  # gzip without .gz: Python tasks sniff the bytes
    assert not jvm_readable(ByteRange(str(CDX_DATA / "captures.cdx"), 0, 100))


def test_columnar_files_keep_the_warc_subset_of_wanted_crawls(tmp_path):
    for crawl, subset in [("CC-MAIN-2024-33", "warc"), ("CC-MAIN-2024-33", "crawldiagnostics"),
                          ("CC-MAIN-2024-30", "warc")]:
        folder = tmp_path / f"crawl={crawl}" / f"subset={subset}"
        folder.mkdir(parents=True)
        (folder / "part-0.parquet").write_bytes(b"")
    found = columnar_files(str(tmp_path), ["CC-MAIN-2024-33"])
    assert [(Path(path).parent.name, crawl) for path, crawl in found] == [("subset=warc", "CC-MAIN-2024-33")]
    assert len(columnar_files(str(tmp_path))) == 2


def test_an_unfiltered_local_zipnum_collection_is_read_as_whole_files(zipnum):
    folder, _, _ = zipnum
    ranges, selection = cdx_byte_ranges(str(folder), None)
    assert [Path(r.path).name for r in ranges] == ["cdx-00000.gz", "cdx-00001.gz"]
    assert all(r.length == -1 and jvm_readable(r) for r in ranges)
    assert selection.blocks_selected == selection.blocks_total == 24
    filtered, _ = cdx_byte_ranges(str(folder), surt_prefixes(hosts=["www.site07.is"]))
    assert all(r.length > 0 and not jvm_readable(r) for r in filtered)
