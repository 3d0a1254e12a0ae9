"""Hostile page text through the whole pipeline: a small bilingual site whose titles, texts, links and index
entries hold script tags, javascript: links, control characters, line and paragraph separators, tabs and
newlines, bidi overrides and a 1 MB title, indexed (index-warcs), mined (scan-cdx to shortlist), replayed,
planned (export-crawl-plan), audited and reported; then every output read with the reader it is for: the TSVs
with csv and pandas, the TMX with two XML parsers, the HTML pages with html.parser, the Markdown reports as
text, and the seed list by real wget."""
from __future__ import annotations

import contextlib
import csv
import gzip
import html
import io
import json
import re
import shutil
import subprocess
import threading
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from xml.etree import ElementTree

import pandas as pd
import pytest

from parascout.jobs.audit import AuditJob
from parascout.jobs.bucket_handles import BucketHandlesJob
from parascout.jobs.export_bitext import ExportBitextJob
from parascout.jobs.export_crawl_plan import ExportCrawlPlanJob
from parascout.jobs.fetch_docs import FetchDocsJob
from parascout.jobs.index_warcs import IndexWarcs
from parascout.jobs.rank_pairs import RankPairs
from parascout.jobs.replay_crawl import ReplayCrawlJob
from parascout.jobs.scan_cdx import ScanCdx
from parascout.jobs.shortlist import ShortlistJob
from parascout.jobs.train_lexicon import TrainLexiconJob
from parascout.jobs.verify_pairs import VerifyPairsJob
from parascout.udfs.common.demo_report import build_demo_report, step_summary
from parascout.udfs.common.table_layout import table_location
from parascout.udfs.export.bitext import formats
from testkit.pipeline import BIBLE, make_archive, train_url_models
from testkit.warc import record_bytes, write_warc
from tests.conftest import run_job

pytestmark = pytest.mark.slow

SITE = "www.hostile-site.fr"
PAGES = 12  # page pairs of the site
VERSES = 6  # Bible verses a page holds, each its own paragraph
#: a sentence on every page, translated (so the sentence aligner pairs it): markup as text, links in Markdown and
#: HTML, every line break a reader knows, control characters and a bidi override
HOSTILE = {
    "en": ("On page {n} the elders of the city read <script>alert(1)</script> aloud to all the people, and wrote "
           "[click](javascript:alert(2)) and <img src=x onerror=alert(3)> upon the wall of the house\tby the gate"
           "\rof the city\u2028in the evening\u2029and the morning\x0bof the\x0cthird\x85day\x1b and the "
           "\u202eoverride | of the king ` and * the star"),
    "fr": ("À la page {n} les anciens de la ville lurent <script>alert(1)</script> à haute voix à tout le peuple, "
           "et écrivirent [cliquez](javascript:alert(2)) et <img src=x onerror=alert(3)> sur le mur de la maison"
           "\tprès de la porte\rde la ville\u2028le soir\u2029et le matin\x0bdu\x0ctroisième\x85jour\x1b et le "
           "\u202erenversement | du roi ` et * l’étoile"),
}
#: links a page carries besides its language switcher and its next page (as written in the href attribute)
HOSTILE_LINKS = ("javascript:alert(5)", "/en/line&#10;break.html", "/en/tab&#9;bed.html", "/en/\u202egpj.exe",
                 f"http://{SITE}/en/ls\u2028page.html", "http://evil.example/%0d%0aX-Injected:%201",
                 "data:text/html,&lt;script&gt;alert(6)&lt;/script&gt;", "/en/a page.html")
#: URLs an index line can carry (JSON escapes) that no WARC target URI can, each pointing at a page's record: with
#: tab and newline (scan-cdx counts them bad), with markup, separators, quotes and a bidi override in the query or
#: the host name (kept: they reach every output)
INDEX_ONLY_URLS = {
    **{f"http://{SITE}/{lang}/page-3.html": f"http://{SITE}/{lang}/page-3.html?q=a\nb\tc" for lang in ("en", "fr")},
    **{f"http://{SITE}/{lang}/page-4.html":
       f"http://{SITE}/{lang}/page-4.html?q=<script>alert(7)</script>\u2028\u2029\u202e\"'x" for lang in ("en", "fr")},
    **{f"http://{SITE}/{lang}/page-5.html": f"http://www.[x](javascript:alert(8))<b>.fr/{lang}/page-5.html"
       for lang in ("en", "fr")},
}
MARKERS = ("<script", "javascript:", "alert(")


def bible(lang: str) -> list[str]:
    with gzip.open(BIBLE / f"{lang}.tsv.gz", "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n").split("\t", 1)[1] for _, line in zip(range(PAGES * VERSES + 3000), handle)]


def page_html(lang: str, number: int, verses: list[str]) -> str:
    other = "fr" if lang == "en" else "en"
    hostile = HOSTILE[lang].format(n=number)  # not the same sentence on every page: boilerplate is dropped
    title = ("T" * 1_000_000 if number == 0 and lang == "en" else "") + f"Page {number}: {hostile}"
    links = (f"/{other}/page-{number}.html", f"/{lang}/page-{(number + 1) % PAGES}.html", *HOSTILE_LINKS)
    anchors = "".join(f"<a href=\"{href if '&' in href else html.escape(href)}\">link {i}</a> "
                      for i, href in enumerate(links))
    paragraphs = "".join(f"<p>{html.escape(text)}</p>" for text in [*verses[:3], hostile, *verses[3:]])
    return (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<script>document.write('x')</script></head><body><h1>{html.escape(title[-200:])}</h1>"
            f"<nav>{anchors}</nav>{paragraphs}<script>alert(8)</script></body></html>")


def write_hostile_warc(folder: Path) -> Path:
    """The site's pages, English and French, as one WARC (one gzip member per record)."""
    folder.mkdir(parents=True)
    texts = {lang: bible(code)[:PAGES * VERSES] for lang, code in (("en", "eng"), ("fr", "fra"))}
    records = []
    for number in range(PAGES):
        for lang, verses in texts.items():
            url = f"http://{SITE}/{lang}/page-{number}.html"
            records.append((url, record_bytes(url, page_html(lang, number, verses[number * VERSES:(number + 1) * VERSES]))))
    write_warc(folder / "hostile.warc.gz", records)
    return folder


def index_only_lines(indexes: Path) -> str:
    """CDX lines pointing at pages' records under URLs only an index can hold (a plain CDX file's text)."""
    lines = []
    for path in sorted(indexes.glob("cdx-*.gz")):
        lines += gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
    out = []
    for line in lines:
        key, timestamp, fields = line.split(" ", 2)
        entry = json.loads(fields)
        if entry["url"] in INDEX_ONLY_URLS:
            out.append(f"{key}?q=hostile {timestamp} {json.dumps({**entry, 'url': INDEX_ONLY_URLS[entry['url']]})}")
    assert len(out) == len(INDEX_ONLY_URLS)
    return "".join(f"{line}\n" for line in sorted(out))


def bible_corpus(path: Path) -> Path:
    """Sentence-aligned English-French Bible verses (src<TAB>trg) for the lexicon."""
    english, french = bible("eng"), bible("fra")
    path.write_text("".join(f"{formats.tsv_field(e)}\t{formats.tsv_field(f)}\n" for e, f in zip(english, french)))
    return path


@pytest.fixture(scope="module")
def hostile_run(spark, tmp_path_factory):
    """Every step on the hostile site; the root and the reports by job."""
    base = tmp_path_factory.mktemp("hostile")
    archive, root, lexicon = base / "archive", base / "root", str(base / "lexicon")
    warcs = write_hostile_warc(archive / "warcs")
    models = train_url_models(make_archive(base / "training", hosts=8, seed=1002, pages_per_host=30, cdx_only=True),
                              base / "models")
    langs, quiet = "en,fr", ["--log-level", "WARNING"]
    reports = {"index-warcs": run_job(IndexWarcs, spark, ["--root", str(archive), "--warc", str(warcs), *quiet])}
    extra = archive / "index-only.cdx"
    extra.write_text(index_only_lines(archive / "indexes"))
    steps = [
        (ScanCdx, ["--root", str(root), "--cdx", str(archive / "indexes"), "--cdx", str(extra), "--langs", langs]),
        (BucketHandlesJob, ["--root", str(root), "--langs", langs]),
        (FetchDocsJob, ["--root", str(root), "--warc-prefix", f"{warcs}/", "--select", "all"]),
        (RankPairs, ["--root", str(root), "--langs", langs, "--lang-model", models["lang"],
                     "--pair-model", models["pairs"]]),
        (TrainLexiconJob, ["--langs", langs, "--out", lexicon, "--corpus", str(bible_corpus(base / "bible.tsv"))]),
        (VerifyPairsJob, ["--root", str(root), "--pairs", "scored_pairs", "--lexicon", lexicon]),
        (ExportBitextJob, ["--root", str(root), "--langs", langs, "--lexicon", lexicon]),
        (ShortlistJob, ["--root", str(root), "--langs", langs]),
        (ReplayCrawlJob, ["--root", str(root), "--langs", langs, "--lang-model", models["lang"],
                          "--pair-model", models["pairs"]]),
        (ExportCrawlPlanJob, ["--root", str(root), "--langs", langs, "--top", "5"]),
        (AuditJob, ["--root", str(root), "--langs", langs]),
    ]
    for job_class, argv in steps:
        reports[job_class.name] = run_job(job_class, spark, argv + quiet)
    summaries = [step_summary(name, "", report, False) for name, report in reports.items()]
    shortlist = pd.read_parquet(table_location(str(root / "shortlist")))
    run = {"langs": ("eng", "fra"), "hosts": 1, "seed": 0, "text_source": "hostile pages", "seconds": 1.0}
    build_demo_report(run, summaries, {}, shortlist).write(str(root), "report")
    return root, reports


def test_every_step_ran_and_hostile_text_reached_the_outputs(hostile_run):
    root, reports = hostile_run
    for name, report in reports.items():
        assert report["status"] == "ok" and report.get("balanced", True), (name, report)
    assert reports["scan-cdx"]["bad"] == {"control_characters": 2}  # the index lines with a tab and a newline
    assert reports["export-bitext"]["kept"] > 0 and reports["export-crawl-plan"]["kept"] == 2
    sentences = gzip.decompress((root / "bitext" / f"eng-fra{formats.SENTENCES_SUFFIX}").read_bytes()).decode()
    assert all(marker in sentences for marker in MARKERS)  # the hostile paragraph was exported, as text
    assert reports["export-crawl-plan"]["metrics"]["frontier_urls_not_listable"] > 0


def test_bitextor_tsvs_read_with_a_constant_column_count(hostile_run):
    root, _ = hostile_run
    for suffix, columns in ((formats.SENTENCES_SUFFIX, formats.SENTENCE_COLUMNS),
                            (formats.DOCUMENTS_SUFFIX, formats.DOCUMENT_COLUMNS)):
        raw = gzip.decompress((root / "bitext" / f"eng-fra{suffix}").read_bytes()).decode("utf-8")
        rows = list(csv.reader(io.StringIO(raw, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
        assert len(rows) > 1 and {len(row) for row in rows} == {len(columns)}, suffix
        assert all(not re.search("[\t\n\r]", field) for row in rows for field in row)
        frame = pd.read_csv(io.StringIO(raw), sep="\t", quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False)
        assert list(frame.columns) == list(columns) and len(frame) == len(rows) - 1
        assert raw.count("\n") == len(rows) and raw.splitlines() == raw.split("\n")[:-1]  # no other line breaks


def test_tmx_parses_with_both_xml_parsers(hostile_run):
    from lxml import etree

    root, _ = hostile_run
    data = gzip.decompress((root / "bitext" / "eng-fra.tmx.gz").read_bytes())
    units = ElementTree.fromstring(data).findall("./body/tu")
    parsed = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
    assert len(units) == len(parsed.findall("./body/tu")) > 0
    segments = [seg.text or "" for seg in parsed.iter("seg")]
    assert any("<script>alert(1)</script>" in text for text in segments)  # text, not markup


class Elements(HTMLParser):
    """Every start tag and its attributes, as a browser's tokenizer sees them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def assert_safe_html(text: str, own_scripts: int = 0) -> None:
    parser = Elements()
    parser.feed(text)
    parser.close()
    assert sum(tag == "script" for tag, _ in parser.tags) == own_scripts
    for tag, attributes in parser.tags:
        assert not any(name.startswith("on") for name in attributes), (tag, attributes)
        for name in ("href", "src", "action", "formaction"):
            value = re.sub(r"[\x00-\x20]", "", attributes.get(name) or "").lower()
            assert not value.startswith(("javascript:", "data:", "vbscript:")), (tag, attributes)
        assert tag != "img" or attributes.get("src", "").endswith(".png"), attributes  # the report's own plots


def test_html_pages_run_no_script_and_link_no_javascript(hostile_run):
    root, _ = hostile_run
    assert_safe_html((root / "report.html").read_text())
    pages = sorted((root / "audit").glob("audit-*.html"))
    assert pages
    for page in pages:
        text = page.read_text()
        assert "javascript:alert" in text or "alert(" in text  # the hostile text is on the page, escaped
        assert_safe_html(text, own_scripts=1)  # the audit page's own script, nothing from the web
    for report in root.glob("replay/*.html"):
        assert_safe_html(report.read_text())


def test_markdown_reports_hold_no_raw_html_or_links_from_page_text(hostile_run):
    root, _ = hostile_run
    documents = [root / "report.md", root / "crawl-plan" / "plan.md", *root.glob("replay/*.md")]
    for path in documents:
        text = path.read_text()
        assert not re.search(r"<\s*(script|img|a|iframe)\b", text, re.IGNORECASE), path
        assert not re.search(r"\]\(\s*javascript:", text, re.IGNORECASE), path
        assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x85\u2028\u2029\u202a-\u202e]", text), path
        for line in text.splitlines():
            if line.startswith("|") and not line.startswith("|-"):  # a table row keeps its column count
                assert line.endswith("|"), (path, line)
    for path in (root / "report.md", root / "crawl-plan" / "plan.md"):  # the site named by a hostile host, as text
        assert "| \\[x\\](javascript |" in path.read_text(), path


def test_url_lists_hold_only_absolute_urls_wget_reads_as_given(hostile_run, tmp_path):
    from parascout.udfs.export.crawl_plan import listable_url

    root, _ = hostile_run
    plan = root / "crawl-plan"
    lists = [plan / "seeds.txt", *plan.glob("sites/*/seeds.txt"), *plan.glob("sites/*/ranked_urls.txt")]
    for path in lists:
        raw = path.read_bytes().decode("utf-8")  # a site none of whose URLs is listable has empty lists
        assert all(listable_url(line) for line in raw.split("\n")[:-1]) and raw.count("\n") == len(raw.splitlines())
    for path in [plan / "hosts.txt", *plan.glob("sites/*/hosts.txt")]:
        assert all(re.fullmatch(r"[a-z0-9.-]+", host) for host in path.read_text().splitlines()), path
    frontier = next(plan.glob("sites/*/frontier.tsv")).read_text()
    rows = list(csv.reader(io.StringIO(frontier, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    assert {len(row) for row in rows} == {len(rows[0])} and frontier.count("\n") == len(rows)
    assert_wget_reads(plan / "seeds.txt", tmp_path)


def assert_wget_reads(url_list: Path, folder: Path) -> None:
    """wget --input-file --spider on the list, through a proxy that records the requests: exactly the listed URLs
    are requested, each as itself."""
    if not shutil.which("wget"):
        pytest.skip("wget not installed")
    listed = url_list.read_text().splitlines()
    with recording_proxy() as (proxy, requested):
        done = subprocess.run(["wget", "--spider", "--input-file", str(url_list), "-e", "robots=off", "-e",
                               f"http_proxy={proxy}", "--tries", "1", "--timeout", "60", "-o", str(folder / "wget.log")],
                              check=False, timeout=600)
    assert done.returncode in (0, 8), (folder / "wget.log").read_text()
    assert sorted(requested) == sorted(listed)


@contextlib.contextmanager
def recording_proxy():
    """An HTTP proxy on 127.0.0.1 answering 200 to anything; yields its URL and the URLs requested through it."""
    requested: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_HEAD(self):
            requested.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")  # the server closes it: wget must not try to reuse it
            self.end_headers()

        do_GET = do_HEAD

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", requested
    finally:
        server.shutdown()
        server.server_close()
