"""A user's own crawl end to end: a tiny English/French site crawled by wget into a WARC, indexed by
index-warcs, scanned by scan-cdx; the pages arrive in `urls` at offsets that read back as their records."""
from __future__ import annotations

import shutil
import subprocess
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from parascout.jobs.index_warcs import IndexWarcs
from parascout.jobs.scan_cdx import ScanCdx
from parascout.udfs.common import table_layout
from parascout.udfs.fetch.warc_record import decode_record
from tests.conftest import run_job

TEXTS = {
    ("en", "index"): ("Welcome to the village library",
                      ("The library lends books, newspapers and films to everyone who lives in the valley. "
                      "Opening hours are posted at the door and on this page every week.")),
    ("fr", "index"): ("Bienvenue à la bibliothèque du village",
                      ("La bibliothèque prête des livres, des journaux et des films à tous les habitants de la "
                      "vallée. Les horaires sont affichés à la porte et sur cette page chaque semaine.")),
    ("en", "history"): ("A short history of the library",
                        ("The library opened in an old school building after the war, with a few hundred books "
                        "given by families of the village and a reading room heated by a wood stove.")),
    ("fr", "history"): ("Une brève histoire de la bibliothèque",
                        ("La bibliothèque a ouvert dans une ancienne école après la guerre, avec quelques "
                        "centaines de livres donnés par les familles du village et une salle de lecture chauffée "
                        "par un poêle à bois.")),
}


def write_site(folder) -> None:
    """en/ and fr/ pages linking to each other and to their translations (hreflang), and a home page."""
    for (lang, page), (title, text) in TEXTS.items():
        other = "fr" if lang == "en" else "en"
        sibling = "history" if page == "index" else "index"
        html = (f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>'
                f'<link rel="alternate" hreflang="{other}" href="/{other}/{page}.html"></head><body>'
                f'<h1>{title}</h1><p>{text}</p><p>{text}</p>'
                f'<a href="{sibling}.html">{TEXTS[(lang, sibling)][0]}</a> '
                f'<a href="/{other}/{page}.html">{other}</a></body></html>')
        (folder / lang).mkdir(parents=True, exist_ok=True)
        (folder / lang / f"{page}.html").write_text(html, encoding="utf-8")
    (folder / "index.html").write_text('<html><body><a href="/en/index.html">English</a> '
                                       '<a href="/fr/index.html">Français</a></body></html>', encoding="utf-8")


@pytest.fixture
def site(tmp_path):
    """The site served on 127.0.0.1 (its base URL)."""
    folder = tmp_path / "site"
    write_site(folder)
    handler = partial(SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_a_wget_crawl_is_indexed_scanned_and_read_back(spark, site, tmp_path):
    if shutil.which("wget") is None:
        pytest.skip("wget is not installed (apt-get install -y wget)")
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    # retries: on a loaded machine the test server may drop a connection, and a page lost to it is not the indexer's
    command = ["wget", "--recursive", "--level=3", "--no-verbose", "-e", "robots=off", "--tries=4",
               "--retry-connrefused", "--waitretry=1", "--timeout=20",
               "--directory-prefix", str(tmp_path / "mirror"), f"--warc-file={crawl / 'library'}", site]
    wget = subprocess.run(command, check=False, capture_output=True, text=True, timeout=240)
    assert (crawl / "library.warc.gz").exists(), wget.stderr  # wget exits non-zero for any failed fetch

    indexed = run_job(IndexWarcs, spark, ["--root", str(tmp_path / "root"), "--warc", str(crawl)])
    assert indexed["balanced"] and indexed["kept"] == 5 and not indexed["bad"]
    # one request record per page, and one more per retried request
    assert indexed["filtered"]["request_record"] >= 5 and indexed["filtered"]["warcinfo_record"] == 1
    scanned = run_job(ScanCdx, spark, ["--root", str(tmp_path / "root"),
                                       "--cdx", str(tmp_path / "root" / "indexes"), "--langs", "en,fr"])
    assert scanned["balanced"] and scanned["kept"] == 5
    urls = {row.url: row for row in spark.read.parquet(table_layout.table_location(str(tmp_path / "root" / "urls")))
            .collect()}
    assert {url.removeprefix(site) for url in urls} == {"", "en/index.html", "en/history.html", "fr/index.html",
                                                          "fr/history.html"}
    assert {urls[site + f"{lang}/{page}.html"].lang for lang, page in TEXTS} == {"eng", "fra"}
    assert all(urls[site + f"{lang}/{page}.html"].lang == {"en": "eng", "fr": "fra"}[lang] for lang, page in TEXTS)
    for row in urls.values():
        with open(crawl / row.warc_filename, "rb") as handle:
            handle.seek(row.warc_offset)
            record = decode_record(handle.read(row.warc_length))
        assert record.status == "ok" and record.target_uri == row.url and record.http_status == 200
    hosts = spark.read.parquet(table_layout.table_location(str(tmp_path / "root" / "hosts"))).collect()
    assert [(row.host, row.is_candidate) for row in hosts] == [("127.0.0.1", True)]
