"""discover-sites and fetch-docs' domain focus on a tiny sample archive with topical sites."""
from __future__ import annotations

import json
from importlib import resources

import pandas as pd
import pytest

from parascout.jobs.discover_sites import DiscoverSitesJob
from parascout.jobs.errors import ConfigError
from parascout.jobs.fetch_docs import FetchDocsJob
from parascout.jobs.scan_cdx import ScanCdx
from parascout.udfs.common import table_layout
from parascout.udfs.index.site_discovery import url_language_marker
from parascout.udfs.rank.domain_focus import FOCUS_COLUMNS
from parascout.udfs.sample_archive import generate
from tests.conftest import run_job

TERMS = str(resources.files("parascout.conf") / "domain_terms_money.tsv")


def read(root, table: str) -> pd.DataFrame:
    return pd.read_parquet(table_layout.table_location(str(root / table)))


@pytest.fixture(scope="module")
def topical(spark, tmp_path_factory):
    """(archive, root, fetch-docs report): 6 hosts in eng/fra/deu, 2 of them about money; every URL fetched."""
    base = tmp_path_factory.mktemp("topical")
    archive, root = base / "archive", base / "root"
    generate(str(archive), hosts=6, seed=5, pages_per_host=30, langs="eng,fra,deu", progress=False, verbose=False,
             overrides={"captures_per_warc": 150, "topical_sites": 2})
    run_job(ScanCdx, spark, ["--root", str(root), "--cdx", str(archive / "indexes")])
    report = run_job(FetchDocsJob, spark, ["--root", str(root), "--warc-prefix", f"{archive}/", "--select", "all",
                                           "--domain-terms", TERMS])
    return archive, root, report


@pytest.mark.slow
def test_fetch_docs_flags_the_topical_pages(topical):
    archive, root, report = topical
    texts = read(root, "texts")
    assert {"url", "host", "lang", "title", "paragraphs", "main_text", "duplicate_of", *FOCUS_COLUMNS} <= set(texts)
    truth = pd.read_parquet(archive / "truth" / "topics.parquet")
    assert truth.topical_host.any() and not truth[~truth.topical_host].topic.notna().any()
    articles = truth[truth.page_kind == "article"].merge(texts, on="url", suffixes=("_truth", ""))
    on_topic = articles.topic.notna()
    assert on_topic.sum() >= 20
    hits = (articles.in_domain & on_topic).sum()
    assert hits / articles.in_domain.sum() >= 0.85 and hits / on_topic.sum() >= 0.95
    focus = report["metrics"]["domain_focus"]
    assert focus["in_domain_pages"] == int(texts.in_domain.sum()) and focus["unusable_lines"] == 0
    assert focus["in_domain_pages"] + focus["off_domain_pages"] == len(texts) and focus["terms"] == 480
    assert report["balanced"]


def test_domain_terms_file_must_have_terms(tmp_path):
    empty = tmp_path / "terms.tsv"
    empty.write_text("# nothing\nnot-a-weight\tterm\n")
    with pytest.raises(ConfigError, match="no usable term line"):
        FetchDocsJob().run(["--root", str(tmp_path), "--warc-prefix", "/x", "--domain-terms", str(empty)])


@pytest.mark.slow
def test_discover_sites_ranks_the_bilingual_sites_first(spark, topical):
    archive, root, _ = topical
    report = run_job(DiscoverSitesJob, spark, ["--root", str(root), "--langs", "en,fr", "--truth",
                                               str(archive / "truth" / "hosts.parquet")])
    sites = read(root, "discovered_sites").sort_values("rank")
    hosts = pd.read_parquet(archive / "truth" / "hosts.parquet")
    bilingual = {h.removeprefix("www.") for h, langs in zip(hosts.host, hosts.languages) if {"eng", "fra"} <= set(langs)}
    assert bilingual and set(sites.site[: len(bilingual)]) == bilingual
    top = sites.iloc[0]
    assert top.urls_src > 0 and top.urls_trg > 0 and top.evidence >= 2 and top.score == top.evidence + top.balance
    urls = read(root, "urls")
    assert report["balanced"] and report["inputs"] == {"urls": len(urls)}
    assert report["kept"] == int(sites.n_urls.sum()) and set(report["filtered"]) <= {"one_language_site"}
    kinds = report["metrics"]["candidate_sites_by_evidence_kind"]
    assert kinds["index_languages"] == len(sites) and 0 < kinds["switcher_links"] <= len(sites)
    evaluation = report["metrics"]["evaluation"]
    assert evaluation["sites_relevant"] == len(bilingual) and evaluation["recall_at_r"] == 1.0
    assert json.loads((root / "_reports" / "discover-sites.json").read_text())["metrics"]["evaluation"] == evaluation

    job = FetchDocsJob().use_spark(spark)  # fetch-docs --select sites: every URL of the first N sites ranked
    job.args = job.parse_arguments(["--root", str(root), "--warc-prefix", "/x", "--select", "sites", "--max-sites", "1"])
    job.validate_arguments(job.args)
    job.resolve_inputs()
    selected = {row["url"] for row in job.selected_urls().collect()}
    top_hosts = {h for h in urls.host if h.removeprefix("www.").endswith(top.site)}
    assert selected and selected == set(urls[urls.host.isin(top_hosts)].url)


def test_url_language_markers():
    from parascout.udfs.common.langs import language_markers

    eng, fra = language_markers(("eng",)), language_markers(("fra",))

    def marker(url):
        return url_language_marker(url, eng, fra, "eng", "fra")

    assert marker("https://x.com/en/news/1") == "eng" and marker("https://fr.x.com/a") == "fra"
    assert marker("https://x.com/a?lang=fr") == "fra" and marker("https://x.com/page.en.html") == "eng"
    assert marker("https://x.com/fr-ca/a") == "fra" and marker("https://x.com/english/a") == "eng"
    assert marker("https://x.com/news/1") is None and marker("https://x.com/en/fr/") is None  # none, or both
    assert marker("https://fr.com/a") is None and marker(None) is None  # a TLD or domain is no marker
