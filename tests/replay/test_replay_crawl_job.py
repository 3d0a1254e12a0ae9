"""replay-crawl end to end in the shared Spark session: tables, report counts, plots and the report files."""
import json
import shutil

import numpy as np
import pandas as pd
import pytest

from parascout.jobs.errors import ConfigError, JobFailed
from parascout.jobs.replay_crawl import ReplayCrawlJob
from parascout.udfs.common.storage import write_parquet_table
from parascout.udfs.replay.synthetic import multilingual_site
from tests.conftest import run_job
from tests.support.replay import HOSTS, train_tiny_url_models


@pytest.fixture(scope="module")
def tiny_url_models(tmp_path_factory) -> tuple[str, str]:
    """The tiny URL models of the replay policies (tests/support/replay.py) (trained once per session, same directory)."""
    return train_tiny_url_models(tmp_path_factory.getbasetemp() / "replay-url-models")


@pytest.mark.slow
def test_replay_without_models_skips_smart_and_reports(spark, dataset):
    root, counts = dataset
    report = run_job(ReplayCrawlJob, spark, ["--root", str(root), "--langs", "en,is",
                                             "--truth", str(root / "truth" / "pairs.parquet")])
    assert report["status"] == "ok" and report["balanced"]
    assert report["inputs"] == {"truth_pairs": counts["truth_pairs"], "docs": counts["rows"]}
    assert report["bad"] == {"missing_url_or_host": 1}
    assert report["filtered"] == {"duplicate_url": counts["duplicates"], "host_without_truth_pairs": counts["no_truth_rows"]}
    assert report["kept"] == counts["rows"] - 1 - counts["duplicates"] - counts["no_truth_rows"]
    assert "smart" in report["metrics"]["skipped_policies"]
    assert report["metrics"]["hosts_replayed"] == 3 and report["metrics"]["hosts_failed"] == 0
    assert report["outputs"] == {"replay_summary": 18, "replay_curves": report["outputs"]["replay_curves"],
                                 "replay_deciles": 180, "replay_frontier": report["outputs"]["replay_frontier"]}

    summary = spark.read.parquet(str(root / "replay_summary")).toPandas()
    assert sorted(summary["policy"].unique()) == ["bfs", "bfs+cld2", "ilsp", "oracle", "random", "strand"]
    assert (summary["status"] == "ok").all()
    for site, group in summary.groupby("site"):
        auc = group.set_index("policy")["auc"]
        assert auc["oracle"] == auc.max() and auc["strand"] > auc["bfs"] + 0.3
        assert (group["n_docs"] == counts["n_docs"][site]).all() and (group["budget_fetches"] == group["n_docs"]).all()
    curves = spark.read.parquet(str(root / "replay_curves")).toPandas()
    assert report["outputs"]["replay_curves"] == len(curves) > 15 * 100
    ends = curves.sort_values("fetched").groupby(["site", "policy"]).last().reset_index()
    merged = ends.merge(summary, on=["site", "policy"], suffixes=("_curve", ""))
    assert (merged["docs_found_curve"] == merged["docs_found"]).all()
    assert (merged["fetched_curve"] == merged["fetched"]).all()
    assert curves.groupby(["site", "policy"])["fetched"].min().eq(0).all()
    deciles = spark.read.parquet(str(root / "replay_deciles")).toPandas()
    assert sorted(deciles["decile"].unique()) == list(range(1, 11))
    total = deciles.groupby(["site", "policy"])["docs_in_decile"].sum().reset_index()
    assert (total.merge(summary, on=["site", "policy"]).eval("docs_in_decile == docs_found")).all()

    out = root / "replay"
    for name in ("report.md", "report.html", "yield_curves.png", "deciles.png", "prediction.png"):
        assert (out / name).stat().st_size > 500, name
    assert (out / "yield_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = (out / "report.md").read_text()
    assert "smart, smart+lang and smart+site skipped" in markdown and "Spearman" in markdown and "| gamma.is" in markdown
    assert "<table" in (out / "report.html").read_text()
    comparison = report["metrics"]["shortlist_comparison"]
    assert comparison["hosts_compared"] == 3 and comparison["shortlist_hosts_not_replayed"] == 1
    assert comparison["policy"] == "strand"
    on_disk = json.loads((root / "_reports" / "replay-crawl.json").read_text())
    assert on_disk["metrics"]["mean_auc"]["oracle"] >= on_disk["metrics"]["mean_auc"]["bfs"]


@pytest.mark.slow
def test_replay_with_url_models_verified_pairs_and_seed_file(spark, dataset, tiny_url_models, tmp_path):
    source, counts = dataset
    root = tmp_path / "root"
    docs = pd.read_parquet(source / "docs")
    write_parquet_table(docs, str(root / "docs"))
    truth = pd.read_parquet(source / "truth" / "pairs.parquet")
    wrong = truth.head(5).assign(trg_url=lambda frame: frame["trg_url"] + "?not-a-translation")
    verified = pd.concat([truth.assign(parallel=True), wrong.assign(parallel=False)], ignore_index=True)
    write_parquet_table(verified[["host", "src_url", "trg_url", "parallel"]].assign(method="test"),
                        str(root / "verified_pairs"))
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(f"# seeds\nhttps://{HOSTS[1]}/en/category/0/\nhttps://{HOSTS[1]}/\nnot a url\n")
    lang_dir, pair_dir = tiny_url_models
    report = run_job(ReplayCrawlJob, spark, ["--root", str(root), "--langs", "eng,isl", "--policies", "smart,bfs",
                                             "--budget", "0.5", "--seeds", str(seeds), "--lang-model", lang_dir,
                                             "--pair-model", pair_dir])
    assert report["status"] == "ok" and report["balanced"] and report["inputs"]["truth_pairs"] == counts["truth_pairs"]
    assert report["metrics"]["seed_urls"] == 2 and "skipped_policies" not in report["metrics"]
    summary = spark.read.parquet(str(root / "replay_summary")).toPandas()
    assert sorted(summary["policy"].unique()) == ["bfs", "smart"] and (summary["status"] == "ok").all()
    assert (summary["budget_fetches"] == np.round(0.5 * summary["n_docs"])).all()
    auc = summary.pivot(index="site", columns="policy", values="auc")
    assert (auc["smart"] > auc["bfs"]).all()
    speed = report["metrics"]["smart_vs_bfs_fetches_to_80"]
    assert speed["hosts_only_bfs_reached"] == 0
    assert speed["hosts_ratio_at_most_half"] + speed["hosts_only_smart_reached"] == 3, speed
    assert "No shortlist table" in (root / "replay" / "report.md").read_text()


def subdomain_site() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A bilingual site whose languages live on subdomains: home www.delta.is, en.delta.is, is.delta.is."""
    docs, truth = multilingual_site(n_articles=30, host="www.delta.is", seed=3)

    def move(url: str) -> str:
        return (url.replace("https://www.delta.is/en/", "https://en.delta.is/")
                .replace("https://www.delta.is/is/", "https://is.delta.is/"))
    docs = docs.assign(url=docs["url"].map(move),
                       outlinks=docs["outlinks"].map(lambda links: None if links is None else [move(u) for u in links]))
    docs["host"] = docs["url"].str.split("/").str[2]
    return docs, truth.assign(src_url=truth["src_url"].map(move), trg_url=truth["trg_url"].map(move))


@pytest.mark.slow
def test_a_site_spans_its_language_subdomains(spark, tmp_path):
    docs, truth = subdomain_site()
    assert docs["host"].nunique() == 3 and (truth["src_url"].str[8:10] != truth["trg_url"].str[8:10]).all()
    write_parquet_table(docs, str(tmp_path / "docs"))
    (tmp_path / "truth").mkdir()
    truth.to_parquet(tmp_path / "truth" / "pairs.parquet")  # host column: www.delta.is, neither side's host
    results = {}
    for group_by in ("site", "host"):
        root = tmp_path / group_by
        write_parquet_table(docs, str(root / "docs"))
        report = run_job(ReplayCrawlJob, spark, ["--root", str(root), "--langs", "en,is", "--policies", "bfs,oracle",
                                                 "--truth", str(tmp_path / "truth" / "pairs.parquet"),
                                                 "--group-by", group_by])
        assert report["status"] == "ok" and report["balanced"], report
        results[group_by] = spark.read.parquet(str(root / "replay_summary")).toPandas().set_index("policy")
    site = results["site"]
    assert list(site["site"].unique()) == ["delta.is"] and (site["n_pairs"] == len(truth)).all()
    assert (site["host"] == "en.delta.is,is.delta.is,www.delta.is").all()  # where a reader keys replays by host
    assert site.loc["oracle", "pairs_found"] == site.loc["bfs", "pairs_found"] == len(truth)
    assert site.loc["bfs", "n_docs"] == (docs["status"] == "ok").sum()
    # each host alone (its own site): the truth pairs join their English side's host, whose graph lacks the other side
    host = results["host"]
    assert list(host["site"].unique()) == ["en.delta.is"] and (host["n_pairs"] == 0).all()
    assert list(host["host"].unique()) == ["en.delta.is"]
    assert (host["n_unusable_truth_pairs"] == len(truth)).all()


@pytest.mark.parametrize("argv, message", [
    (["--langs", "en"], "--langs"),
    (["--langs", "en,is", "--policies", "bfs,dfs"], "dfs"),
    (["--langs", "en,is", "--budget", "0"], "--budget"),
    (["--langs", "en,is", "--lang-model", "/nowhere"], "both --lang-model and --pair-model"),
    (["--langs", "en,is", "--seeds", "/no/such/seeds.txt"], "no such file"),
])
def test_bad_arguments_fail_at_start(tmp_path, argv, message):
    with pytest.raises(ConfigError, match=message):
        ReplayCrawlJob().run(["--root", str(tmp_path), *argv])


@pytest.mark.slow
def test_sites_whose_replay_failed_fail_the_job_unless_a_share_is_allowed(spark, dataset, tmp_path):
    source, counts = dataset
    shutil.copytree(source / "docs", tmp_path / "docs")
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()  # smart's models fail to load in every task
    argv = ["--root", str(tmp_path), "--langs", "en,is", "--policies", "bfs,smart",
            "--truth", str(source / "truth" / "pairs.parquet"), "--lang-model", str(not_a_model),
            "--pair-model", str(not_a_model)]
    with pytest.raises(JobFailed, match="failed on 3 of 3 sites, over --max-failed-share 0%"):
        run_job(ReplayCrawlJob, spark, argv)
    failed = json.loads((tmp_path / "_reports" / "replay-crawl.json").read_text())
    assert failed["status"] == "failed" and failed["metrics"]["hosts_failed"] == 3
    assert not (tmp_path / "replay_summary" / "_manifest.json").exists()

    allowed = run_job(ReplayCrawlJob, spark, argv + ["--max-failed-share", "1"])
    assert allowed["status"] == "ok" and allowed["balanced"] and allowed["kept"] == 0
    assert allowed["bad"]["replay_failed"] == counts["rows"] - 1 - counts["duplicates"] - counts["no_truth_rows"]


@pytest.mark.slow
def test_several_pairs_are_replayed_in_one_job_each_into_its_partitions(spark, tmp_path):
    sites = {"eng-isl": multilingual_site(n_articles=20, host="www.iceland.is", seed=1),
             "eng-fra": multilingual_site(n_articles=25, host="www.paris.fr", langs=("eng", "fra"), codes=("en", "fr"),
                                          seed=2)}
    root = tmp_path / "root"
    docs = pd.concat([frame for frame, _ in sites.values()], ignore_index=True)
    write_parquet_table(docs, str(root / "docs"))
    (root / "truth").mkdir()
    truth = root / "truth" / "pairs.parquet"
    pd.concat([pairs for _, pairs in sites.values()], ignore_index=True).to_parquet(truth)
    report = run_job(ReplayCrawlJob, spark, ["--root", str(root), "--langs", "en:is,fr,de", "--policies", "bfs,strand",
                                             "--truth", str(truth)])
    assert report["status"] == "ok" and report["balanced"]
    assert report["metrics"]["lang_pairs"] == ["eng-isl", "eng-fra", "eng-deu"]
    assert report["metrics"]["pairs_skipped"] == {"eng-deu": "no_truth_pairs"}
    # each pair counts every docs row: its own site's replayed, the other site's without truth pairs
    assert report["inputs"]["docs"] == 3 * len(docs) and report["filtered"]["pair_no_truth_pairs"] == len(docs)
    by_pair = report["metrics"]["by_pair"]
    for label, site in (("eng-isl", "iceland.is"), ("eng-fra", "paris.fr")):
        assert by_pair[label]["hosts_replayed"] == 1 and report["by_pair"][label]["status"] == "ok"
        summary = pd.read_parquet(root / "replay_summary").query(f"lang_pair == '{label}'")
        assert set(summary["site"]) == {site} and set(summary["policy"]) == {"bfs", "strand"}
        for plot in (f"yield_curves-{label}.png", f"deciles-{label}.png"):
            assert (root / "replay" / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", plot
        assert f"yield_curves-{label}.png" in (root / "replay" / f"report-{label}.md").read_text()
    for table in ("replay_summary", "replay_curves", "replay_deciles", "replay_frontier"):
        assert set(pd.read_parquet(root / table)["lang_pair"].astype(str)) == {"eng-isl", "eng-fra"}, table
    assert not (root / "replay" / "report.md").exists() and not (root / "replay" / "report-eng-deu.md").exists()
