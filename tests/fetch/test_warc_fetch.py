"""udfs.fetch.warc_fetch: range planning, coalescing, retries and failure reasons (local, HTTP, S3)."""
from __future__ import annotations

import os
import threading
from http.server import ThreadingHTTPServer

import pandas as pd
import pytest

from parascout.udfs.common.range_reads import ReadError
from parascout.udfs.fetch.warc_fetch import FetchSettings, RangeReader, fetch_documents, plan_ranges
from testkit.servers import RangeServer
from testkit.warc import build_mixed_warc

CUT_RECORDS = 2  # build_mixed_warc's records that stay cut however often they are read (cut.html, tail.html)


def reread_gets(settings: FetchSettings) -> int:
    """The extra GETs build_mixed_warc's cut records cost: each is read `attempts` times in all."""
    return CUT_RECORDS * (settings.attempts - 1)

os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")


class CountingReader(RangeReader):
    """A RangeReader that counts the GETs it makes."""

    def __init__(self, settings: FetchSettings):
        super().__init__(settings.read_settings())
        self.settings = settings
        self.calls = 0
        self.lock = threading.Lock()

    def read(self, path, start, length, attempts=None):
        with self.lock:
            self.calls += 1
        return super().read(path, start, length, attempts)


def fetch_all(rows: list[dict], settings: FetchSettings, reader: RangeReader | None = None) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    return pd.concat(list(fetch_documents(iter([frame]), settings, reader)), ignore_index=True)


def test_plan_ranges_coalesces_neighbours_within_limits():
    ranges = plan_ranges([0, 100, 250, 10_000, 10_050], [100, 100, 50, 50, 50], max_gap=100, max_span=1000)
    assert [(r.offset, r.end, r.members) for r in ranges] == [(0, 300, [0, 1, 2]), (10_000, 10_100, [3, 4])]
    capped = plan_ranges([0, 100, 200, 300], [100] * 4, max_gap=10, max_span=250)
    assert [(r.offset, r.end) for r in capped] == [(0, 200), (200, 400)]
    assert len(plan_ranges([0, 100, 200], [100] * 3, max_gap=-1, max_span=0)) == 3
    assert plan_ranges([500, 0], [10, 10], max_gap=1000)[0].members == [1, 0]


def test_local_fetch_reports_every_record_with_a_reason(tmp_path):
    rows, expected = build_mixed_warc(tmp_path)
    rows.append({"url": "http://site0.example.com/lost", "warc_filename": "no-such.warc.gz", "warc_offset": 0,
                 "warc_length": 100})
    expected["http://site0.example.com/lost"] = "missing_file"
    rows.append({"url": "http://site0.example.com/nowhere", "warc_filename": None, "warc_offset": None,
                 "warc_length": None})
    expected["http://site0.example.com/nowhere"] = "no_warc_location"
    for control in ("\x00", "\r\n", "\x1b"):
        url = f"http://site0{control}.example.com/page-0.html"
        rows.append({**rows[0], "url": url})
        expected[url] = "bad_url"  # control characters, even inside the host: never fetched
    settings = FetchSettings(warc_prefix=str(tmp_path), max_record_bytes=16 * 1024, concurrency=3)
    reader = CountingReader(settings)
    docs = fetch_all(rows, settings, reader)
    assert sorted(docs["url"]) == sorted(expected)
    assert dict(zip(docs["url"], docs["status"])) == expected
    ok = docs[docs["status"] == "ok"]
    assert set(ok["cld2_lang"]) == {"eng", "deu"} and ok["cld2_reliable"].all()
    assert all(len(s) > 5 for s in ok["structure"]) and all(i[0].startswith("p") for i in ok["images"])
    # the whole file is contiguous: good and broken records come in 1 GET, plus 1 for the missing file,
    # plus the cut records read again on their own (attempts reads in all); each row's share adds up
    assert reader.calls == 2 + reread_gets(settings) and set(ok["range_records"]) == {len(rows) - 6}
    cut = docs[docs["status"] == "cut_short"]
    assert len(cut) == CUT_RECORDS and "file ends" in cut.set_index("url").loc[
        "http://site1.example.com/tail.html", "error"]
    fetched = docs[docs["range_records"] > 0]
    assert round((fetched["fetch_attempts"] / fetched["range_records"]).sum()) == reader.calls


def test_coalescing_reduces_gets(tmp_path):
    rows, _ = build_mixed_warc(tmp_path, good=20)
    wanted = rows[::2]
    with_coalescing = CountingReader(FetchSettings(warc_prefix=str(tmp_path)))
    without = CountingReader(FetchSettings(warc_prefix=str(tmp_path), coalesce=False))
    a, b = fetch_all(wanted, with_coalescing.settings, with_coalescing), fetch_all(wanted, without.settings, without)
    cut_wanted = sum(row["url"].endswith(("cut.html", "tail.html")) for row in wanted)
    assert without.calls == len(wanted) + cut_wanted * 3 and with_coalescing.calls == 1 + cut_wanted * 3
    assert a.sort_values("url")["status"].tolist() == b.sort_values("url")["status"].tolist()


class CuttingReader(CountingReader):
    """Answers its first `cut_reads` reads with the first half of the bytes only (a connection that dropped
    without the transport noticing), then reads normally."""

    def __init__(self, settings: FetchSettings, cut_reads: int):
        super().__init__(settings)
        self.cut_reads = cut_reads

    def read(self, path, start, length, attempts=None):
        data, made = super().read(path, start, length, attempts)
        with self.lock:
            cut, self.cut_reads = self.cut_reads > 0, self.cut_reads - 1
        return (data[: len(data) // 2] if cut else data), made


@pytest.mark.parametrize("cut_reads", [1, 2, 3])
def test_a_cut_record_is_read_again_up_to_attempts_reads(tmp_path, cut_reads):
    rows, _ = build_mixed_warc(tmp_path, good=1)
    settings = FetchSettings(warc_prefix=str(tmp_path), attempts=3, coalesce=False)
    reader = CuttingReader(settings, cut_reads)
    docs = fetch_all(rows[:1], settings, reader)
    if cut_reads < settings.attempts:  # whole again before the attempts run out: ok, its own page
        assert docs["status"].tolist() == ["ok"] and docs["title"].tolist() == ["Page 0"]
    else:
        assert docs["status"].tolist() == ["cut_short"] and "file ends" in docs["error"][0]
    assert docs["fetch_attempts"].tolist() == [reader.calls] == [min(cut_reads + 1, settings.attempts)]


def test_a_re_read_that_fails_outright_leaves_the_record_cut(tmp_path):
    class FailingReread(CuttingReader):
        def read(self, path, start, length, attempts=None):
            if self.calls:
                self.calls += 1
                raise ReadError("fetch_failed", "HTTP 503", 2)
            return super().read(path, start, length, attempts)

    rows, _ = build_mixed_warc(tmp_path, good=1)
    settings = FetchSettings(warc_prefix=str(tmp_path), attempts=4, coalesce=False)
    docs = fetch_all(rows[:1], settings, FailingReread(settings, cut_reads=1))
    assert docs["status"].tolist() == ["cut_short"] and docs["fetch_attempts"].tolist() == [1 + 2]
    assert "file ends" in docs["error"][0] and "re-read" in docs["error"][0]


def test_cut_record_reads_of_a_coalesced_range_are_counted_per_record(tmp_path):
    rows, _ = build_mixed_warc(tmp_path, good=4)
    settings = FetchSettings(warc_prefix=str(tmp_path), attempts=4, max_record_bytes=16 * 1024)
    docs = fetch_all(rows, settings, reader := CountingReader(settings))
    cut = docs[docs["status"] == "cut_short"]
    size = len(rows) - 1  # one range; the too_large record is never read
    assert len(cut) == CUT_RECORDS and set(cut["fetch_attempts"]) == {1 + size * (settings.attempts - 1)}
    assert set(docs.loc[docs["status"] == "ok", "fetch_attempts"]) == {1}
    assert round((docs["fetch_attempts"] / docs["range_records"].clip(lower=1)).sum()) == reader.calls


@pytest.fixture
def http_root(tmp_path):
    handler = type("Handler", (RangeServer,), {"root": tmp_path, "throttle": 3, "seen": [], "ignore_range": False,
                                               "cut_every": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", handler
    server.shutdown()
    thread.join()


def test_https_style_range_requests_back_off_on_throttling(tmp_path, http_root):
    prefix, handler = http_root
    rows, expected = build_mixed_warc(tmp_path)
    rows.append({"url": "http://x/lost", "warc_filename": "gone.warc.gz", "warc_offset": 0, "warc_length": 10})
    expected["http://x/lost"] = "missing_file"
    settings = FetchSettings(warc_prefix=prefix, max_record_bytes=16 * 1024, backoff_seconds=0.01, attempts=5,
                             coalesce=False, concurrency=2)
    docs = fetch_all(rows, settings)
    assert dict(zip(docs["url"], docs["status"])) == expected
    assert docs["fetch_attempts"].sum() == len(handler.seen) == len(rows) - 1 + 3 + reread_gets(settings)


def test_http_gives_up_after_the_configured_attempts(tmp_path, http_root):
    prefix, handler = http_root
    handler.throttle = 10_000
    rows, _ = build_mixed_warc(tmp_path, good=1)
    settings = FetchSettings(warc_prefix=prefix, backoff_seconds=0.0, attempts=3, max_record_bytes=16 * 1024)
    docs = fetch_all(rows[:1], settings)
    assert docs["status"].tolist() == ["fetch_failed"] and docs["fetch_attempts"].tolist() == [3]
    assert "HTTP 429" in docs["error"][0] or "HTTP 503" in docs["error"][0]


def titles_are_their_own(docs: pd.DataFrame) -> bool:
    """Each ok page carries its own title ('Page i' for page-i.html), never a neighbour's bytes."""
    pages = docs[(docs["status"] == "ok") & docs["url"].str.contains("/page-")]
    return len(pages) > 0 and all(title == "Page " + url.rsplit("page-", 1)[1].removesuffix(".html")
                                  for url, title in zip(pages["url"], pages["title"]))


def test_a_server_ignoring_range_gives_each_record_its_own_bytes(tmp_path, http_root):
    prefix, handler = http_root
    handler.throttle, handler.ignore_range = 0, True
    rows, expected = build_mixed_warc(tmp_path)
    settings = FetchSettings(warc_prefix=prefix, max_record_bytes=16 * 1024, coalesce=False, backoff_seconds=0.0)
    docs = fetch_all(rows, settings)
    assert dict(zip(docs["url"], docs["status"])) == expected and titles_are_their_own(docs)
    # one GET each, no retry, but for the cut records' re-reads
    assert docs["fetch_attempts"].sum() == len(handler.seen) == len(rows) - 1 + reread_gets(settings)


def test_a_body_cut_short_without_content_length_is_retried(tmp_path, http_root):
    prefix, handler = http_root
    handler.throttle, handler.cut_every = 0, 2  # every second answer stops halfway, with no length to check
    rows, expected = build_mixed_warc(tmp_path)
    settings = FetchSettings(warc_prefix=prefix, max_record_bytes=16 * 1024, coalesce=False, backoff_seconds=0.0,
                             concurrency=1, attempts=3)
    docs = fetch_all(rows, settings)
    assert dict(zip(docs["url"], docs["status"])) == expected and titles_are_their_own(docs)
    fetched = docs[docs["status"] != "too_large"]
    assert (fetched["fetch_attempts"] == 2).sum() >= len(fetched) // 2 - 1  # the cut answers were retried
    assert fetched["fetch_attempts"].sum() == len(handler.seen)


def test_file_names_leaving_the_prefix_and_non_regular_files_are_bad_location(tmp_path):
    prefix = tmp_path / "warc"
    prefix.mkdir()
    rows, expected = build_mixed_warc(prefix, good=2)
    outside = tmp_path / "outside.warc.gz"
    outside.write_bytes((prefix / "mixed.warc.gz").read_bytes())
    (prefix / "escape.warc.gz").symlink_to(outside)  # a symlink out of the prefix
    (prefix / "inside.warc.gz").symlink_to(prefix / "mixed.warc.gz")  # one that stays inside is fine
    os.mkfifo(prefix / "pipe.warc.gz")  # opening a FIFO for reading would block the task forever
    first = rows[0]
    probes = {"../outside.warc.gz": "bad_location", "sub/../../outside.warc.gz": "bad_location",
              "escape.warc.gz": "bad_location", "pipe.warc.gz": "bad_location", "inside.warc.gz": "ok",
              str(outside): "missing_file"}  # an absolute name is read under the prefix, where it is absent
    for index, (name, status) in enumerate(probes.items()):
        rows.append({**first, "url": f"http://probe.example.com/{index}", "warc_filename": name})
        expected[f"http://probe.example.com/{index}"] = status
    settings = FetchSettings(warc_prefix=str(prefix), max_record_bytes=16 * 1024, coalesce=False)
    docs = fetch_all(rows, settings)
    assert dict(zip(docs["url"], docs["status"])) == expected
    assert not docs.loc[docs["status"] == "bad_location", "title"].notna().any()


def test_s3_range_reads_against_moto(tmp_path):
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        endpoint = "http://{}:{}".format(*server.get_host_and_port())
        rows, expected = build_mixed_warc(tmp_path)
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        s3.create_bucket(Bucket="commoncrawl")
        s3.put_object(Bucket="commoncrawl", Key="crawl-data/mixed.warc.gz", Body=(tmp_path / "mixed.warc.gz").read_bytes())
        for row in rows:
            row["warc_filename"] = "crawl-data/mixed.warc.gz"
        rows.append({"url": "http://x/lost", "warc_filename": "crawl-data/nope.warc.gz", "warc_offset": 0,
                     "warc_length": 10})
        expected["http://x/lost"] = "missing_file"
        settings = FetchSettings(warc_prefix="s3://commoncrawl/", s3_endpoint=endpoint, max_record_bytes=16 * 1024)
        docs = fetch_all(rows, settings)
        assert dict(zip(docs["url"], docs["status"])) == expected
    finally:
        server.stop()


def test_docs_errors_never_hold_the_credentials_of_a_prefix():
    rows = pd.DataFrame([{"url": "http://a.example.com/x", "warc_filename": "../other/x.warc.gz", "warc_offset": 0,
                          "warc_length": 100},
                         {"url": "http://a.example.com/y", "warc_filename": "%2e%2e/other/y.warc.gz", "warc_offset": 0,
                          "warc_length": 100}])
    settings = FetchSettings(warc_prefix="s3://AKIAKEY:TopSecret@bucket/crawl-data")
    docs = pd.concat(list(fetch_documents(iter([rows]), settings)), ignore_index=True)
    assert docs["status"].tolist() == ["bad_location", "bad_location"]
    assert not docs["error"].str.contains("TopSecret").any() and docs["error"].str.contains("***@bucket", regex=False).all()


@pytest.mark.parametrize("argv", [
    ["--warc-prefix", "s3://AKIAKEY:TopSecret@bucket/crawl-data/"],
    ["--warc-prefix", "https://user:TopSecret@data.example.org/"],
])
def test_fetch_docs_refuses_credentials_in_its_prefix(tmp_path, argv):
    from parascout.jobs.errors import ConfigError
    from parascout.jobs.fetch_docs import FetchDocsJob

    with pytest.raises(ConfigError, match="credentials in a URL are refused") as raised:
        FetchDocsJob().run(["--root", str(tmp_path), *argv])
    assert "TopSecret" not in str(raised.value) and not (tmp_path / "_reports").exists()


class DecodingRangeServer(RangeServer):
    """A RangeServer that decodes and normalises the request path, as real HTTP servers do."""

    def do_GET(self):
        from posixpath import normpath
        from urllib.parse import unquote

        self.path = normpath(unquote(unquote(self.path.split("?")[0])))
        super().do_GET()


@pytest.mark.parametrize("name", ["%2e%2e/private/mixed.warc.gz", "%2E%2E%2Fprivate/mixed.warc.gz",
                                  "sub/%2e%2e%2f%2e%2e/private/mixed.warc.gz", "%252e%252e/private/mixed.warc.gz",
                                  "..%5cprivate/mixed.warc.gz"])
def test_percent_encoded_dot_segments_never_reach_the_server(tmp_path, name):
    (tmp_path / "warc").mkdir()
    rows, expected = build_mixed_warc(tmp_path / "warc", good=1)
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "mixed.warc.gz").write_bytes((tmp_path / "warc" / "mixed.warc.gz").read_bytes())
    handler = type("Handler", (DecodingRangeServer,), {"root": tmp_path, "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        good = next(row for row in rows if expected[row["url"]] == "ok")
        evil = {**good, "url": good["url"] + "?evil", "warc_filename": name}
        settings = FetchSettings(warc_prefix=f"http://127.0.0.1:{server.server_address[1]}/warc/",
                                 max_record_bytes=16 * 1024, backoff_seconds=0.0)
        docs = fetch_all([good, evil], settings)
    finally:
        server.shutdown()
    assert dict(zip(docs["url"], docs["status"])) == {good["url"]: "ok", evil["url"]: "bad_location"}
    assert len(handler.seen) == 1  # the good record's GET only


@pytest.mark.parametrize("prefix", ["s3://bucket/crawl-data/", "https://data.example.org/crawl-data/", "LOCAL"])
def test_encoded_dot_segments_are_refused_on_every_scheme(tmp_path, prefix):
    from parascout.udfs.common.storage import BadLocation, resolve_under

    prefix = str(tmp_path) if prefix == "LOCAL" else prefix
    for name in ("%2e%2e/x.warc.gz", "a/%2E%2E%2F%2E%2E%2Fx.warc.gz", "%252E%252E/x.warc.gz", "%2e./x", ".%2e/x"):
        with pytest.raises(BadLocation):
            resolve_under(prefix, name)
    assert resolve_under(prefix, "a/%2e/b%20c.warc.gz").endswith("a/%2e/b%20c.warc.gz")  # a dot alone stays put
