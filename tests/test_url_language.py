"""The language a URL declares (udfs.index.url_language) and how scan-cdx uses it for a page's language."""
from pathlib import Path

import pandas as pd
import pytest

from parascout.jobs.scan_cdx import ScanCdx
from parascout.udfs.common.urls import surt
from parascout.udfs.index.cdx import format_cdx_line
from parascout.udfs.index.url_language import url_marker, url_marker_columns
from tests.conftest import run_job

REAL_SITES = Path(__file__).resolve().parents[2] / "shared" / "data" / "real-sites"
URLS = [
    "https://docs.gimp.org/2.10/fr/gimp-tool-warp.html",  # a language directory
    "https://www.debian.org/releases/stable/amd64/apbs04.fr.html",  # content negotiation's file names
    "http://example.com/index.html.de",
    "https://docs.kicad.org/6.0/es/eeschema/eeschema.html",
    "https://fr.example.com/actualites/",  # a language host
    "http://example.com/page?lang=pt_BR&id=3",
    "http://example.com/about_es.htm",
    "http://example.com/fr-ca/a/b.html",
    "http://example.com/2024/01/news.html",  # no code anywhere
    "http://example.com/it/services.html",  # a code: whether it is a language is the host's slot's question
    "http://example.com/aa/bb/cc.html",  # two letters that name no language in the table
    "not a url",
]


def test_url_marker_finds_the_code_and_its_slot():
    assert url_marker(URLS[0]) == ("dir2", "fra")
    assert url_marker(URLS[1]) == ("suffix", "fra")
    assert url_marker(URLS[2]) == ("suffix", "deu")
    assert url_marker(URLS[3]) == ("dir2", "spa")
    assert url_marker(URLS[4]) == ("host", "fra")
    assert url_marker(URLS[5]) == ("query", "por")
    assert url_marker(URLS[6]) == ("tail", "spa")
    assert url_marker(URLS[7]) == ("dir1", "fra")
    assert url_marker(URLS[8]) is None and url_marker(URLS[11]) is None
    assert url_marker(URLS[9]) == ("dir1", "ita")


@pytest.mark.slow
def test_spark_expressions_agree_with_the_python_marker(spark):
    frame = spark.createDataFrame(pd.DataFrame({"url": URLS}))
    rows = frame.select("url", *url_marker_columns(frame["url"])).toPandas()
    for row in rows.itertuples():
        expected = url_marker(row.url)
        got = None if row.url_marker_lang is None else (row.url_marker_slot, row.url_marker_lang)
        assert got == expected, row.url


def cdx_lines(pages: list[tuple[str, str]]) -> list[str]:
    return sorted(format_cdx_line(surt(url), "20240805101000", {
        "url": url, "mime": "text/html", "status": "200", "length": "900", "offset": str(index * 900),
        "filename": "crawl-data/CC-MAIN-2024-33/segments/1/warc/a.warc.gz", "languages": languages})
        for index, (url, languages) in enumerate(pages))


@pytest.mark.slow
def test_scan_takes_the_language_a_site_declares_in_its_urls(spark, tmp_path):
    pages = [
        # a documentation site: CLD2 calls two French pages English (English code, menus, leftovers)
        *[(f"https://docs.example.org/en/page{k}.html", "eng") for k in range(4)],
        ("https://docs.example.org/fr/page0.html", "fra,eng"), ("https://docs.example.org/fr/page1.html", "fra"),
        ("https://docs.example.org/fr/page2.html", "eng"), ("https://docs.example.org/fr/page3.html", "eng,fra"),
        # an English site whose /it/ is its IT department: the slot holds one code, CLD2 never agrees
        *[(f"https://www.shop.com/it/support{k}.html", "eng") for k in range(3)],
        *[(f"https://www.shop.com/help{k}.html", "eng") for k in range(3)],
        ("https://www.shop.com/fr/aide.html", "fra"),
        # languages on two hosts of one site
        ("https://www.news.net/story.html", "eng"), ("https://fr.news.net/histoire.html", "fra"),
        ("https://fr.news.net/autre.html", "fra"),
        # a site with English only
        ("https://www.english.co.uk/a.html", "eng"),
    ]
    cdx = tmp_path / "index.cdx"
    cdx.write_text("\n".join(cdx_lines(pages)) + "\n")
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path / "out"), "--cdx", str(cdx), "--langs", "en,fr"])
    assert report["balanced"] and report["filtered"] == {"host_not_bilingual": 1}
    urls = spark.read.parquet(str(tmp_path / "out" / "urls")).toPandas().set_index("url")
    french = urls.loc[[f"https://docs.example.org/fr/page{k}.html" for k in range(4)]]
    assert set(french["lang"]) == {"fra"} and set(french["lang_source"]) == {"url"}
    assert urls.loc["https://docs.example.org/fr/page2.html", "cdx_lang"] == "eng"
    shop = urls[urls["host"] == "www.shop.com"]
    assert set(shop.loc[shop.index.str.contains("/it/"), "lang"]) == {"eng"}
    assert set(shop.loc[shop.index.str.contains("/it/"), "lang_source"]) == {"cdx"}
    assert urls.loc["https://www.shop.com/fr/aide.html", "lang"] == "fra"
    assert {"www.news.net", "fr.news.net"} <= set(urls["host"])
    assert urls.loc["https://fr.news.net/histoire.html", "lang_source"] == "url"
    assert "www.english.co.uk" not in set(urls["host"])

    cdx_only = run_job(ScanCdx, spark, ["--root", str(tmp_path / "cdx"), "--cdx", str(cdx), "--langs", "en,fr",
                                        "--lang-from", "cdx"])
    assert cdx_only["balanced"]
    by_cld2 = spark.read.parquet(str(tmp_path / "cdx" / "urls")).toPandas().set_index("url")
    assert by_cld2.loc["https://docs.example.org/fr/page2.html", "lang"] == "eng"
    assert set(by_cld2["lang_source"]) == {"cdx"}


@pytest.mark.slow
@pytest.mark.skipif(not REAL_SITES.exists(), reason="the real-sites archive (../shared/data/real-sites) is absent")
def test_real_documentation_sites_get_the_language_of_their_urls(spark, tmp_path):
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path), "--cdx", str(REAL_SITES / "indexes"),
                                      "--langs", "en,fr"])
    assert report["balanced"] and "host_not_bilingual" not in report["filtered"]  # KiCad's French is kept
    urls = spark.read.parquet(str(tmp_path / "urls")).toPandas()
    truth = pd.read_csv(REAL_SITES / "truth" / "pages.tsv", sep="\t", dtype=str, keep_default_na=False, quoting=3)
    merged = urls.merge(truth[["url", "lang"]].rename(columns={"lang": "true_lang"}), on="url")
    iso3 = {"en": "eng", "fr": "fra", "de": "deu", "es": "spa", "ru": "rus"}
    agree = (merged["lang"] == merged["true_lang"].map(lambda code: iso3.get(code, code))).mean()
    cdx_agree = (merged["cdx_lang"] == merged["true_lang"].map(lambda code: iso3.get(code, code))).mean()
    assert agree > 0.99 and cdx_agree < agree - 0.05
