"""scan-cdx end to end: CDX files, ZipNum, columnar index and a replayed CDX API -> urls, hosts, balanced report."""
import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pyarrow.parquet as pq
import pytest

from parascout.jobs.errors import ConfigError, JobFailed
from parascout.jobs.scan_cdx import ScanCdx
from parascout.udfs.common import table_layout
from parascout.udfs.common.jvm import jvm_jar_path
from parascout.udfs.common.sites import site_of
from parascout.udfs.index.cdx import write_zipnum
from tests.conftest import run_job
from tests.support.cdx import CDX, CRAWL, DATA, site_lines, urls_of, write_columnar_index


def hosts_of(spark, root) -> dict:
    frame = spark.read.parquet(str(root / "hosts")).toPandas()
    return {row.host: (row.domain, row.n_urls, dict(row.lang_counts), row.is_candidate) for row in frame.itertuples()}


@pytest.mark.slow
def test_every_line_is_kept_filtered_or_bad_and_urls_are_laid_out_by_host(spark, tmp_path):
    report = run_job(ScanCdx, spark, [
        "--root", str(tmp_path), "--cdx", str(CDX / "captures.cdx"), "--cdx", str(CDX / "broken.cdx"),
        "--cdx", str(CDX / "truncated.cdx.gz"), "--crawl", CRAWL, "--max-bad-fraction", "0.5", "--partitions", "3"])
    assert report["status"] == "ok" and report["balanced"]
    assert report["inputs"] == {"index_records": 18 + 11 + 4}
    assert report["bad"] == {"malformed_line": 2, "bad_json": 1, "missing_url": 1, "url_too_long": 1, "bad_url": 1,
                             "missing_status": 1, "missing_location": 1, "non_utf8": 1, "truncated_gzip": 1}
    # the truncated file repeats three lines of captures.cdx: two pages (older_capture) and the redirect
    assert report["filtered"] == {"crawl_not_selected": 1, "revisit": 1, "redirect": 2, "status": 1, "mime": 1,
                                  "older_capture": 3}
    assert report["kept"] == report["outputs"]["urls"] == 14
    # the jar's CdxFileReader counts the truncated file itself; Spark's text reader (no jar) stops at it and the
    # scan reads everything again in Python tasks
    assert report["metrics"].get("reread_in_python", False) == (jvm_jar_path() is None)
    assert report["metrics"]["cdx_file_reader"] == ("spark_text" if jvm_jar_path() is None else "parascout.CdxFileReader")

    urls = urls_of(spark, tmp_path)
    about = urls.loc["https://www.example.is/en/about-us"]  # the later https capture, not the http one
    assert (about["surt"], about["domain"], about["lang"], list(about["langs"])) == (
        "is,example)/en/about-us", "example.is", "eng", ["eng"])
    assert str(about["fetch_time"]) == "2024-08-05 10:13:13" and about["warc_offset"] == 4000
    assert urls.loc["https://www.example.is/", "langs"].tolist() == ["isl", "eng"]
    assert urls.loc["https://news.example.co.uk/world/story-1", "domain"] == "example.co.uk"
    assert set(urls["record_type"]) == {"response"} and set(urls["status"]) == {200}
    assert set(urls["crawl"]) == {CRAWL}

    assert hosts_of(spark, tmp_path) == {
        "www.example.is": ("example.is", 8, {"isl": 4, "eng": 4}, True),
        "blog.example.is": ("example.is", 2, {"isl": 2}, False),
        "www.visitmalta.mt": ("visitmalta.mt", 2, {"mlt": 1, "eng": 1}, True),
        "news.example.co.uk": ("example.co.uk", 2, {"eng": 2}, False)}

    # each host lives in one output file, sorted by (site, host, surt) inside it
    files = sorted((tmp_path / "urls").glob("version=*/part-*.parquet"))
    hosts_seen = []
    for path in files:
        part = pq.read_table(path, columns=["host", "domain", "surt"]).to_pandas()
        keys = [(site_of(host, domain, frozenset(), grouped_by="name"), host, surt)
                for host, domain, surt in zip(part["host"], part["domain"], part["surt"])]
        assert keys == sorted(keys)
        hosts_seen += list(part["host"].unique())
    assert len(hosts_seen) == len(set(hosts_seen)) == 4


@pytest.mark.slow
def test_language_pair_keeps_bilingual_hosts_and_kept_revisits_are_labelled(spark, tmp_path):
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path), "--cdx", str(CDX / "captures.cdx"), "--crawl", CRAWL,
                                      "--langs", "en,is", "--keep-revisits"])
    assert report["balanced"] and report["inputs"]["index_records"] == 18 and report["bad"] == {}
    assert "reread_in_python" not in report["metrics"]
    # a site is the hosts of one registered-domain name: blog.example.is (Icelandic only) and news.example.co.uk
    # stay with www.example.is, which holds both languages; www.visitmalta.mt has no Icelandic
    assert report["filtered"] == {"crawl_not_selected": 1, "redirect": 1, "status": 1, "mime": 1,
                                  "older_capture": 1, "host_not_bilingual": 2}
    urls = urls_of(spark, tmp_path)
    assert len(urls) == report["kept"] == 11
    assert set(urls["host"]) == {"www.example.is", "blog.example.is", "news.example.co.uk"}
    revisit = urls.loc["https://www.example.is/is/"]  # no CDX language: its URL's, a slot the host uses for them
    assert revisit["record_type"] == "revisit" and revisit["lang"] == "isl" and revisit["lang_source"] == "url"
    assert revisit["cdx_lang"] is None
    assert hosts_of(spark, tmp_path)["www.example.is"] == ("example.is", 7, {"isl": 4, "eng": 3}, True)


@pytest.mark.slow
def test_several_pairs_keep_a_site_holding_both_languages_of_any_pair(spark, tmp_path):
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path), "--cdx", str(CDX / "captures.cdx"), "--crawl", CRAWL,
                                      "--langs", "mt-en,de-fr,is-de", "--keep-revisits"])
    # only www.visitmalta.mt holds both languages of a pair (mlt, eng); example.is has no German
    assert report["balanced"] and report["filtered"]["host_not_bilingual"] == 11
    assert report["metrics"]["lang_pairs"] == ["mlt-eng", "deu-fra", "isl-deu"]
    assert set(urls_of(spark, tmp_path)["host"]) == {"www.visitmalta.mt"} and report["kept"] == 2
    assert hosts_of(spark, tmp_path) == {"www.visitmalta.mt": ("visitmalta.mt", 2, {"mlt": 1, "eng": 1}, True)}


@pytest.mark.slow
def test_zipnum_host_filter_reads_only_matching_blocks(spark, tmp_path):
    write_zipnum(site_lines(), str(tmp_path / "indexes"), block_lines=50, lines_per_file=400)
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path / "out"), "--cdx", str(tmp_path / "indexes"),
                                      "--hosts", "www.site07.is,www.site30.is"])
    metrics = report["metrics"]
    assert metrics["zipnum_blocks_total"] == 24
    assert 2 <= metrics["zipnum_blocks_read"] <= 4 < metrics["zipnum_blocks_total"]
    assert report["inputs"]["index_records"] == 50 * metrics["zipnum_blocks_read"]
    assert report["balanced"] and report["kept"] == 60
    assert report["filtered"] == {"host_not_allowed": 50 * metrics["zipnum_blocks_read"] - 60}
    assert set(urls_of(spark, tmp_path / "out")["host"]) == {"www.site07.is", "www.site30.is"}


@pytest.mark.slow
def test_a_commoncrawl_index_path_names_the_crawl_of_lines_with_plain_warc_names(spark, tmp_path):
    lines = [line.replace(f"crawl-data/{CRAWL}/segments/1/warc/a.warc.gz", "mycrawl-00001.warc.gz")
             for line in site_lines(sites=4)]
    collection = tmp_path / "cc-index" / "collections" / CRAWL / "indexes"
    plain = tmp_path / "mine" / "indexes"
    for folder in (collection, plain):
        write_zipnum(lines, str(folder), block_lines=20)
    # whole files (read on the JVM) and selected ZipNum blocks (read in Python tasks)
    for name, hosts in (("whole", []), ("blocks", ["--hosts", "www.site01.is"])):
        report = run_job(ScanCdx, spark, ["--root", str(tmp_path / name), "--cdx", str(collection), "--cdx", str(plain),
                                          "--crawl", CRAWL, *hosts])
        assert report["balanced"] and report["kept"] == (120 if name == "whole" else 30)
        assert ("cdx_file_reader" in report["metrics"]) == (name == "whole")  # else no file was read whole
        assert report["filtered"]["crawl_not_selected"] == report["inputs"]["index_records"] // 2  # the plain copy's
        urls = urls_of(spark, tmp_path / name)
        assert set(urls["crawl"]) == {CRAWL} and set(urls["warc_filename"]) == {"mycrawl-00001.warc.gz"}
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path / "plain"), "--cdx", str(plain)])
    urls = urls_of(spark, tmp_path / "plain")
    assert report["kept"] == len(urls) == 120 and urls["crawl"].isna().all()  # nothing names a crawl
    assert set(urls["record_type"]) == {"response"}


@pytest.mark.slow
def test_columnar_index_reads_only_the_wanted_crawl_and_subset(spark, tmp_path):
    table_root = tmp_path / "cc-index" / "table" / "cc-main" / "warc"
    sizes = write_columnar_index(CDX / "captures.cdx", table_root)
    assert sizes == {(CRAWL, "crawldiagnostics"): 2, (CRAWL, "warc"): 15, ("CC-MAIN-2024-30", "warc"): 1}
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path / "out"), "--index-parquet", str(table_root),
                                      "--crawl", CRAWL])
    assert report["balanced"] and report["inputs"]["index_records"] == 15 and report["bad"] == {}
    assert report["filtered"] == {"revisit": 1, "mime": 1, "older_capture": 1}
    urls = urls_of(spark, tmp_path / "out")
    assert len(urls) == report["kept"] == 12
    story = urls.loc["https://news.example.co.uk/world/story-2"]
    assert (story["domain"], story["crawl"], story["status"], story["warc_length"]) == (
        "example.co.uk", CRAWL, 200, 1126)
    assert str(story["fetch_time"]) == "2024-08-05 13:01:01"


class RecordedCdxApi(BaseHTTPRequestHandler):
    """Replays tests/data/cdx_api as index.commoncrawl.org would answer (a real server on 127.0.0.1)."""

    recordings = DATA / "cdx_api"

    def do_GET(self):
        parts = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        self.server.requests.append((parts.path, query))
        if parts.path == "/collinfo.json":
            text = (self.recordings / "collinfo.json").read_text()
            return self.reply(200, text.replace("https://index.commoncrawl.org", self.server.base_url))
        pattern = query.get("url", "").removesuffix("/*").removeprefix("*.")
        page = int(query.get("page", "0"))
        recorded = self.recordings / f"{parts.path.strip('/')}.{pattern}.page-{page}.jsonl"
        if recorded.exists():
            return self.reply(200, recorded.read_text())
        if page > 0:
            return self.reply(400, f"Page {page} invalid: First Page is 0, Last Page is {page - 1}")
        return self.reply(404, json.dumps({"message": f"No Captures found for: {query.get('url')}"}))

    def reply(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if body.startswith(("{", "[")) else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def cdx_api(monkeypatch, tmp_path):
    """The replay server's base URL; cdx_toolkit's collinfo cache goes to tmp_path, pacing to 50 ms."""
    import cdx_toolkit.commoncrawl
    import cdx_toolkit.myrequests

    server = ThreadingHTTPServer(("127.0.0.1", 0), RecordedCdxApi)
    server.base_url = f"http://127.0.0.1:{server.server_port}"
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(cdx_toolkit.commoncrawl, "CACHE_DIR", str(tmp_path / "cdxt-cache") + "/")
    monkeypatch.setitem(cdx_toolkit.myrequests.retry_info, "127.0.0.1", {"next_fetch": 0, "minimum_interval": 0.05})
    yield server
    server.shutdown()


@pytest.mark.slow
def test_cdx_api_scan_replays_recorded_responses(spark, tmp_path, cdx_api):
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path), "--cdx-api", "--url", "example.is/*",
                                      "--crawl", CRAWL, "--cdx-api-mirror", cdx_api.base_url + "/"])
    asked = [(path, query.get("page")) for path, query in cdx_api.requests]
    assert asked == [("/collinfo.json", None), (f"/{CRAWL}-index", "0"), (f"/{CRAWL}-index", "1"),
                     (f"/{CRAWL}-index", "2")]
    assert all(query["url"] == "example.is/*" and query["output"] == "json" for _, query in cdx_api.requests[1:])
    assert report["balanced"] and report["metrics"]["cdx_api_captures"] == 8
    assert report["filtered"] == {"redirect": 1, "status": 1, "mime": 1, "older_capture": 1}
    urls = urls_of(spark, tmp_path)
    assert sorted(urls.index) == ["https://www.example.is/", "https://www.example.is/en/",
                                  "https://www.example.is/en/contact", "https://www.example.is/is/hafa-samband"]
    contact = urls.loc["https://www.example.is/en/contact"]
    assert (contact["charset"], str(contact["fetch_time"])) == ("UTF-8", "2024-08-05 09:03:03")


@pytest.mark.slow
def test_too_much_bad_input_fails_with_a_clear_message(spark, tmp_path):
    with pytest.raises(JobFailed, match="input records were bad"):
        run_job(ScanCdx, spark, ["--root", str(tmp_path), "--cdx", str(CDX / "broken.cdx")])
    written = json.loads((tmp_path / "_reports" / "scan-cdx.json").read_text())
    assert written["status"] == "failed" and written["bad"]["malformed_line"] == 2
    assert table_layout.table_location(str(tmp_path / "urls")) is None  # no urls for the next job to read


@pytest.mark.slow
def test_filters_that_keep_nothing_give_empty_tables_and_a_balanced_report(spark, tmp_path):
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path), "--cdx", str(CDX / "captures.cdx"), "--status", "418"])
    assert report["status"] == "ok" and report["balanced"] and report["kept"] == 0
    assert report["inputs"] == {"index_records": 18} and report["bad"] == {}
    assert report["filtered"] == {"status": 16, "revisit": 1, "redirect": 1}
    assert report["outputs"] == {"urls": 0, "hosts": 0}
    assert spark.read.parquet(table_layout.table_location(str(tmp_path / "urls"))).count() == 0


@pytest.mark.parametrize("argv, message", [
    ([], "give a source"),
    (["--cdx-api", "--crawl", CRAWL], "--cdx-api needs --url"),
    (["--cdx", "/no/such/folder"], "no such file or directory: --cdx /no/such/folder"),
    (["--cdx", str(CDX), "--langs", "en,xx"], "unknown language"),
    (["--cdx", str(CDX), "--status", "ok"], "--status expects"),
])
def test_bad_configuration_fails_at_start(tmp_path, argv, message):
    with pytest.raises(ConfigError, match=message):
        ScanCdx().run(["--root", str(tmp_path), *argv])


@pytest.mark.slow
def test_a_line_over_the_length_limit_is_counted_on_both_paths_and_never_held(spark, tmp_path):
    from tests.support.cdx import long_line_gzip

    good = (CDX / "captures.cdx").read_bytes()
    disguised = tmp_path / "cdx" / "bomb.cdx"  # gzip bytes without .gz: Python tasks read it
    disguised.parent.mkdir()
    disguised.write_bytes(long_line_gzip(5 << 20) + gzip.compress(good))
    on_jvm = tmp_path / "jvm" / "bomb.cdx.gz"  # the same bytes named .gz: the JVM reader
    on_jvm.parent.mkdir()
    on_jvm.write_bytes(disguised.read_bytes())
    argv = ["--crawl", CRAWL, "--max-line-bytes", "100000", "--max-bad-fraction", "0.5"]
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path / "py"), "--cdx", str(disguised), *argv])
    assert report["bad"].get("line_too_long") == 1 and report["balanced"]
    jvm = run_job(ScanCdx, spark, ["--root", str(tmp_path / "jvm-out"), "--cdx", str(on_jvm), *argv])
    assert jvm["kept"] == report["kept"] > 0 and jvm["balanced"]
    if jvm_jar_path() is None:  # Spark's text reader: Hadoop skips the line unheld, uncounted (README known limits)
        assert jvm["inputs"]["index_records"] == report["inputs"]["index_records"] - 1
    else:  # the jar's CdxFileReader counts it, as the Python tasks do
        assert jvm["inputs"] == report["inputs"] and jvm["bad"] == report["bad"]
        assert jvm["metrics"]["cdx_file_reader"] == "parascout.CdxFileReader"


def test_a_second_scan_on_the_same_root_fails_with_one_line(tmp_path, capsys):
    from parascout.jobs.cli import main
    from parascout.udfs.common import locks

    with locks.exclusive_lock(str(tmp_path / "_locks" / "writer.lock"), {"job": "scan-cdx"}):
        code = main(["scan-cdx", "--root", str(tmp_path), "--cdx", str(CDX / "captures.cdx"), "--force"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and "another job is writing" in lines[0]
    assert not (tmp_path / "urls").exists()


def test_an_input_inside_the_root_s_tables_is_refused_and_kept(tmp_path):
    table_dir = tmp_path / "urls" / "version=v20240101T000000-0123abcd"
    table_dir.mkdir(parents=True)
    inside = table_dir / "captures.cdx"
    inside.write_bytes((CDX / "captures.cdx").read_bytes())
    with pytest.raises(ConfigError, match=r"--cdx .*captures.cdx lies inside .*urls, a table folder"):
        ScanCdx().run(["--root", str(tmp_path), "--cdx", str(inside), "--force"])
    assert inside.read_bytes() == (CDX / "captures.cdx").read_bytes()
    assert not (tmp_path / "_reports").exists()


def test_credentials_in_a_cdx_url_are_refused_before_anything_is_read(tmp_path):
    with pytest.raises(ConfigError, match="credentials in a URL are refused") as raised:
        ScanCdx().run(["--root", str(tmp_path), "--cdx", "s3://AKIAKEY:TopSecret@bucket/indexes/"])
    assert "TopSecret" not in str(raised.value) and not (tmp_path / "_reports").exists()
