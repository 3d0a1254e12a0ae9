"""scan-cdx --cdx-api against a real pywb CDX server (CommonCrawl's index server is pywb) on 127.0.0.1.

The collection is a ZipNum index (cluster.idx, cluster.loc, cdx-00000.gz), as CommonCrawl serves:
pywb pages a query by ZipNum blocks (`max_blocks` per page) and answers 400 past the last page,
which is how cdx_toolkit knows it has read everything. A plain .cdx/.cdxj index has no pages
(every page= answers the same lines), so cdx_toolkit, which walks page=0,1,2... until a 400,
would never stop on one: only ZipNum collections are served here.
"""
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import requests

from parascout.jobs.scan_cdx import ScanCdx
from parascout.udfs.index.cdx import format_cdx_line, write_zipnum
from parascout.udfs.index.cdx_api import CdxApiUnreachable, fetch_cdx_lines
from tests.conftest import run_job

pytest.importorskip("pywb")

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = Path(__file__).parent.parent / "data" / "cdx" / "captures.cdx"
CRAWL = "CC-MAIN-2024-33"
PATTERN = "example.is/*"
BLOCK_LINES, PAGE_BLOCKS = 3, 4  # 12 lines a page


def sample_lines() -> list[str]:
    """captures.cdx (several hosts, statuses, redirects, revisits, languages) and 40 more pages of
    www.example.is, sorted: more lines than one page holds."""
    extra = [format_cdx_line(f"is,example)/greinar/{n:03d}", f"20240805{11 + n % 10:02d}{n % 60:02d}00", {
        "url": f"https://www.example.is/greinar/{n:03d}", "mime": "text/html", "mime-detected": "text/html",
        "status": "404" if n % 9 == 0 else "200", "digest": f"D{n:031d}", "length": str(900 + n),
        "offset": str(50_000 + 1000 * n), "charset": "UTF-8", "languages": "isl,eng" if n % 2 else "isl",
        "filename": f"crawl-data/{CRAWL}/segments/1722640389001.33/warc/CC-MAIN-20240805-{n % 4:05d}.warc.gz"})
        for n in range(40)]
    return sorted(CAPTURES.read_text().splitlines() + extra)


def matching(lines: list[str]) -> list[str]:
    """The lines PATTERN ('example.is/*') selects: SURT keys under `is,example)/` (www. is folded in)."""
    return [line for line in lines if line.startswith("is,example)/")]


class PywbServer:
    def __init__(self, base_url: str, index_dir: Path, process: subprocess.Popen, log_path: Path):
        self.base_url, self.index_dir, self.process, self.log_path = base_url, index_dir, process, log_path

    def pages_asked(self) -> list[tuple[str, int]]:
        """(page, status) of each CDX query the pywb front end passed to its index server, from its log."""
        asked = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            if f'"GET /{CRAWL}/index?' in line and "page=" in line:
                page = int(line.split("page=", 1)[1].split("&", 1)[0].split(" ", 1)[0])
                asked.append((page, int(line.split('" ', 1)[1].split(" ", 1)[0])))
        return asked


@pytest.fixture(scope="module")
def pywb(tmp_path_factory):
    """pywb's FrontEndApp in its own process (pywb monkey-patches with gevent on import), collection
    CC-MAIN-2024-33 served at `/CC-MAIN-2024-33-index` as on index.commoncrawl.org."""
    base = tmp_path_factory.mktemp("pywb")
    index_dir = base / "indexes" / CRAWL
    write_zipnum(sample_lines(), str(index_dir), block_lines=BLOCK_LINES)
    (index_dir / "cluster.loc").write_text("cdx-00000.gz\tcdx-00000.gz\n")
    config = base / "config.yaml"
    config.write_text(f"cdx_api_endpoint: -index\n"
                      f"collections:\n"
                      f"  {CRAWL}:\n"
                      f"    index:\n"
                      f"      type: zipnum\n"
                      f"      path: {index_dir / 'cluster.idx'}\n"
                      f"      max_blocks: {PAGE_BLOCKS}\n")
    log_path = base / "pywb.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "tests.support.pywb_cdx_server", str(config), CRAWL],
                                   cwd=base, stdout=subprocess.PIPE, stderr=log,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        port = process.stdout.readline().decode().strip()
        if not port.isdigit():
            process.wait(timeout=10)
            pytest.fail(f"pywb did not start: {log_path.read_text()[-2000:]}")
        yield PywbServer(f"http://127.0.0.1:{port}", index_dir, process, log_path)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def fast_cdx_toolkit(monkeypatch, tmp_path):
    """cdx_toolkit's collinfo cache in tmp_path (a new port each module) and 50 ms pacing for 127.0.0.1."""
    import cdx_toolkit.commoncrawl
    import cdx_toolkit.myrequests

    monkeypatch.setattr(cdx_toolkit.commoncrawl, "CACHE_DIR", str(tmp_path / "cdxt-cache") + "/")
    monkeypatch.setitem(cdx_toolkit.myrequests.retry_info, "127.0.0.1", {"next_fetch": 0, "minimum_interval": 0.05})


def urls_frame(spark, root: Path):
    frame = spark.read.parquet(str(root / "urls")).toPandas().drop(columns="version")  # the run's own version id
    return frame.sort_values("url").reset_index(drop=True)


@pytest.mark.slow
def test_pywb_pages_the_zipnum_collection_and_a_page_past_the_end_is_400(pywb):
    endpoint = f"{pywb.base_url}/{CRAWL}-index"
    count = requests.get(endpoint, params={"url": PATTERN, "output": "json", "showNumPages": "true"}).json()
    assert count["pageSize"] == PAGE_BLOCKS and count["pages"] > 1
    lines = [requests.get(endpoint, params={"url": PATTERN, "output": "json", "page": page}).text.splitlines()
             for page in range(count["pages"])]
    assert sum(map(len, lines)) == len(matching(sample_lines()))
    past = requests.get(endpoint, params={"url": PATTERN, "output": "json", "page": count["pages"]})
    assert past.status_code == 400 and "Last Page is" in past.text


@pytest.mark.slow
def test_scan_through_pywb_equals_scanning_the_same_lines_directly(spark, tmp_path, pywb, fast_cdx_toolkit):
    api = run_job(ScanCdx, spark, ["--root", str(tmp_path / "api"), "--cdx-api", "--url", PATTERN,
                                   "--crawl", CRAWL, "--cdx-api-mirror", pywb.base_url + "/"])
    direct_cdx = tmp_path / "example.is.cdx"
    direct_cdx.write_text("\n".join(matching(sample_lines())) + "\n")
    direct = run_job(ScanCdx, spark, ["--root", str(tmp_path / "direct"), "--cdx", str(direct_cdx),
                                      "--crawl", CRAWL])

    # every page was read (page 0 on, then one 400 past the last), each line once
    pages = requests.get(f"{pywb.base_url}/{CRAWL}-index",
                         params={"url": PATTERN, "output": "json", "showNumPages": "true"}).json()["pages"]
    assert pywb.pages_asked()[-pages - 1:] == [(page, 200) for page in range(pages)] + [(pages, 400)]
    assert api["metrics"]["cdx_api_captures"] == direct["inputs"]["index_records"] == len(matching(sample_lines()))

    assert api["balanced"] and direct["balanced"]
    assert api["kept"] == direct["kept"] > 40
    assert api["filtered"] == direct["filtered"] and api["filtered"]["status"] >= 5  # the 404s of both
    assert api["bad"] == direct["bad"]
    api_urls, direct_urls = urls_frame(spark, tmp_path / "api"), urls_frame(spark, tmp_path / "direct")
    for frame in (api_urls, direct_urls):
        frame["langs"] = frame["langs"].map(list)
    pd.testing.assert_frame_equal(api_urls, direct_urls)
    assert (api_urls["lang"].notna().sum(), api_urls["warc_offset"].min()) == (
        direct_urls["lang"].notna().sum(), direct_urls["warc_offset"].min())


@pytest.mark.slow
def test_an_api_side_status_filter_is_applied_by_pywb(pywb, fast_cdx_toolkit):
    import cdx_toolkit

    fetcher = cdx_toolkit.CDXFetcher(source="cc", crawl=[CRAWL], cc_mirror=pywb.base_url + "/")
    statuses = [capture["status"] for capture in fetcher.iter(PATTERN, filter=["status:404"])]
    expected = [line for line in matching(sample_lines()) if '"status": "404"' in line]
    assert statuses == ["404"] * len(expected) and len(expected) >= 5


@pytest.mark.slow
def test_a_server_error_is_retried_and_the_scan_is_complete(pywb, fast_cdx_toolkit, caplog):
    """A shard pywb cannot read answers 500; cdx_toolkit retries it (logged), never reads it as the end."""
    shard, hidden = pywb.index_dir / "cdx-00000.gz", pywb.index_dir / "cdx-00000.gz.hidden"
    failures_before = pywb.pages_asked().count((0, 500))

    def restore_after_a_500():  # the shard comes back once pywb has answered 500 for it
        deadline = time.monotonic() + 60
        while pywb.pages_asked().count((0, 500)) == failures_before and time.monotonic() < deadline:
            time.sleep(0.05)
        hidden.rename(shard)

    shard.rename(hidden)
    restore = threading.Thread(target=restore_after_a_500)
    restore.start()
    try:
        with caplog.at_level(logging.INFO, logger="cdx_toolkit"):
            lines = list(fetch_cdx_lines([PATTERN], [CRAWL], pywb.base_url + "/"))
    finally:
        restore.join()
    assert pywb.pages_asked().count((0, 500)) > failures_before
    assert any("retrying" in record.getMessage() and "500" in record.getMessage() for record in caplog.records)
    assert len(lines) == len(matching(sample_lines()))


@pytest.mark.slow
def test_a_stopped_server_is_a_clear_error_not_an_empty_result(pywb, fast_cdx_toolkit):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/"
    with pytest.raises(CdxApiUnreachable, match="cannot reach the CDX API"):
        list(fetch_cdx_lines([PATTERN], [CRAWL], closed))
