"""udfs.fetch.near_duplicates: site-wide repeated paragraphs and ILSP-FC near-duplicate groups."""
from __future__ import annotations

import pandas as pd
import pytest

from parascout.udfs.fetch.near_duplicates import (
    SiteTextSettings,
    near_duplicate_groups,
    repeated_hashes,
    site_text_pass,
)

SETTINGS = SiteTextSettings()


def test_a_hash_on_enough_of_the_sites_pages_is_repeated():
    pages = [["menu", "footer", f"body{i}"] for i in range(9)] + [["menu", "rare", "rare"]]
    assert repeated_hashes(pages, SETTINGS) == {"menu", "footer"}
    assert repeated_hashes(pages[:2], SETTINGS) == set()  # two pages: fewer than min_pages
    assert repeated_hashes(pages, SiteTextSettings(min_share=0.95)) == {"menu"}


def test_near_duplicates_keep_the_page_with_most_text():
    urls = ["http://s/a", "http://s/a?print=1", "http://s/b", "http://s/c", "http://s/d"]
    hashes = [["p1", "p2", "p3", "p4", "p5"], ["p1", "p2", "p3", "p4"], ["q1", "q2"], ["p1", "x", "y", "z"], []]
    chars = [500, 400, 200, 400, 0]
    assert near_duplicate_groups(urls, hashes, chars, SETTINGS) == {"http://s/a?print=1": "http://s/a"}
    # 3 of 4 shared (0.75) is not a near-duplicate under ILSP-FC's 0.8; it is under 0.7
    hashes[1] = ["p1", "p2", "p3", "other"]
    assert near_duplicate_groups(urls, hashes, chars, SETTINGS) == {}
    assert near_duplicate_groups(urls, hashes, chars, SiteTextSettings(min_overlap=0.7)) == {
        "http://s/a?print=1": "http://s/a"}


def test_site_text_pass_marks_template_paragraphs_before_comparing_pages():
    template = ["nav", "footer"]
    pages = pd.DataFrame({
        "url": ["http://s/1", "http://s/2", "http://s/3", "http://s/3-copy"],
        "hashes": [template + ["a1", "a2"], template + ["b1", "b2"], template + ["c1", "c2"], template + ["c1", "c2"]],
        "boilerplate": [[False] * 4] * 4,
        "chars": [[10, 10, 100, 100]] * 3 + [[10, 10, 100, 90]],
    })
    out = site_text_pass(pages, SETTINGS)
    assert out["repeated_hashes"].map(list).tolist() == [["footer", "nav"]] * 4
    assert out["duplicate_of"].tolist() == [None, None, None, "http://s/3"]  # only the template is shared by 1-3


NAV = '<nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ul></nav>'
FOOTER = "<footer><p>Example Agency, Harbour Street 1, 4000 Port Town, telephone 555 0100 and fax</p></footer>"
STORIES = [
    "The harbour authority opened a new quay for fishing boats after two years of works on the northern pier.",
    "Volunteers counted more than four hundred seabirds on the island during the spring survey this year.",
    "The ferry timetable changes in October, with two more crossings on weekdays and one fewer on Sundays.",
]


def site_page(title: str, story: str, extra: str = "") -> str:
    return (f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head><body>{NAV}'
            f"<main><h1>{title}</h1><p>{story}</p><p>{story[::-1].capitalize()} again.</p>{extra}</main>"
            f"{FOOTER}</body></html>")


@pytest.mark.slow
def test_fetch_docs_writes_texts_with_site_boilerplate_and_near_duplicates(spark, tmp_path):
    from parascout.jobs.fetch_docs import FetchDocsJob
    from testkit.warc import record_bytes, urls_rows, write_table, write_warc
    from tests.conftest import run_job

    site = "http://news.example.org"
    pages = {f"{site}/story-{i}.html": site_page(f"Story {i}", story) for i, story in enumerate(STORIES)}
    pages[f"{site}/story-0-print.html"] = site_page("Story 0", STORIES[0], "<p>Printed from the web site.</p>")
    pages[f"{site}/broken.html"] = f"<html><body><p>Unclosed <b>{STORIES[2][::-1]} <div>a table cell<td>cell text"
    pages[f"{site}/huge.html"] = site_page("Huge", " ".join(STORIES) * 400)
    keywords = ", ".join(f"k{i}" for i in range(60))  # over MAX_KEYWORDS (50): cut and counted
    pages[f"{site}/empty.html"] = ('<html><head><title>Nothing</title><meta name="description" content=" Nothing  here">'
                                   f'<meta name="keywords" content="{keywords}"><script>x()</script></head><body></body></html>')
    records = [(url, record_bytes(url, html)) for url, html in pages.items()]
    russian = "<html><body><p>" + "Компания работает на рынке пожарной безопасности с 2005 года. " * 3 + "</p></body></html>"
    records.append((f"{site}/ru.html", record_bytes(f"{site}/ru.html", russian.encode("cp1251"),
                                                     content_type="text/html; charset=windows-1251")))
    archive, root = tmp_path / "archive", tmp_path / "out"
    archive.mkdir()
    write_table(root, "urls", urls_rows(write_warc(archive / "site.warc.gz", records)))
    report = run_job(FetchDocsJob, spark, ["--root", str(root), "--warc-prefix", str(archive), "--select", "all",
                                           "--max-text-chars", "20000"])
    texts = {row["url"]: row.asDict(recursive=True) for row in spark.read.parquet(str(root / "texts")).collect()}
    assert len(texts) == len(records) == report["kept"]
    assert {url.rsplit("/", 1)[1]: row["status"] for url, row in texts.items()} == {
        "story-0.html": "ok", "story-1.html": "ok", "story-2.html": "ok", "story-0-print.html": "ok",
        "broken.html": "ok", "huge.html": "ok", "empty.html": "no_text", "ru.html": "ok"}
    story = texts[f"{site}/story-1.html"]
    assert story["lang"] == "eng" and story["title"] == "Story 1"
    assert story["main_text"].split("\n")[:2] == ["Story 1", STORIES[1]]
    footer = [p for p in story["paragraphs"] if p["text"].startswith("Example Agency")]
    assert footer and footer[0]["boilerplate"]  # in <footer>, and on every page of the site
    assert "Example Agency" not in story["main_text"] and "Home" not in story["main_text"]
    assert texts[f"{site}/story-0.html"]["duplicate_of"] == f"{site}/story-0-print.html"  # the one with more text
    assert sum(row["duplicate_of"] is not None for row in texts.values()) == 1
    assert texts[f"{site}/huge.html"]["text_truncated"] and len(texts[f"{site}/huge.html"]["main_text"]) <= 20000
    assert STORIES[2][::-1] in texts[f"{site}/broken.html"]["main_text"]
    assert texts[f"{site}/ru.html"]["lang"] == "rus" and "Компания" in texts[f"{site}/ru.html"]["main_text"]
    empty = texts[f"{site}/empty.html"]  # metadata is kept for a page without text too
    assert empty["description"] == "Nothing here" and empty["keywords"] == [f"k{i}" for i in range(50)]
    assert empty["metadata_truncated"] and not story["metadata_truncated"]
    assert story["description"] is None and story["keywords"] is None
    metrics = report["metrics"]
    assert metrics["texts_metadata_truncated"] == metrics["texts_with_description"] == metrics["texts_with_keywords"] == 1
    assert metrics["texts"] == 8 and metrics["near_duplicates"] == 1 and metrics["texts_truncated"] == 1
    assert metrics["texts_by_status"] == {"ok": 7, "no_text": 1}
    assert 0 < metrics["boilerplate_paragraphs"] < metrics["paragraphs"]
    docs = spark.read.parquet(str(root / "docs"))
    assert "page_paragraphs" not in docs.columns and docs.count() == 8  # docs stays light
