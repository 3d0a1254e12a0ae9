"""rank-pairs end to end in the shared Spark session, with tiny real n-gram URL models trained here."""
from __future__ import annotations

import pandas as pd
import pytest

from parascout.jobs.errors import ConfigError
from parascout.jobs.rank_pairs import RankPairs
from parascout.udfs.common.urls import registered_domain, surt
from testkit.sites import ICELANDIC, WORDS
from tests.conftest import run_job
from tests.support.rank_pairs import (
    archive_urls,
    broken_rows,
    image_docs,
    image_site_pairs,
    links_docs,
    prose_docs,
    true_pairs,
)


def write_inputs(spark, root) -> pd.DataFrame:
    urls = archive_urls()
    table = pd.concat([urls.drop(columns=["site", "pair_id"]), urls.drop(columns=["site", "pair_id"]).head(3),
                       broken_rows()], ignore_index=True)
    spark.createDataFrame(table[["url", "surt", "host", "domain", "lang", "status", "mime"]]).write.parquet(
        str(root / "urls"))
    dir_site = urls[urls["host"] == "www.site0.is"]
    en, is_ = dir_site[dir_site["lang"] == "eng"]["url"].tolist(), dir_site[dir_site["lang"] == "isl"]["url"].tolist()
    handle_rows = [(en[0], is_[0]), (is_[1], en[1]),                         # ok, ok (reversed)
                   (en[2], "https://big.is/is/x"),                           # url_not_kept
                   (en[3], urls[urls["site"] == "big.is"]["url"].iloc[1]),   # cross_site
                   (en[4], en[5])]                                           # same_language
    candidates = pd.DataFrame(handle_rows, columns=["src_url", "trg_url"]).assign(
        host="www.site0.is", src_lang="eng", trg_lang="isl", source="handle", handle="h")
    spark.createDataFrame(candidates).write.parquet(str(root / "candidates"))
    docs = links_docs(urls)
    spark.createDataFrame(docs + image_docs() + prose_docs(), "url string, host string, status string, "
                          "outlinks array<string>, images array<string>, structure array<string>, "
                          "outlink_cues array<string>").write.parquet(str(root / "docs"))
    return urls


@pytest.mark.slow
def test_rank_pairs_blocks_scores_splits_and_aligns(spark, tmp_path, models):
    root = tmp_path / "root"
    urls = write_inputs(spark, root)
    report = run_job(RankPairs, spark, [
        "--root", str(root), "--langs", "en,is", "--lang-model", models["lang"], "--pair-model", models["pairs"],
        "--rescore-model", models["pairs"], "--top-k", "5", "--max-group-urls", "100",
        "--exhaustive-max-pairs", "150", "--lang-threshold", "0.4", "--align-min-score", "0.0",
        "--image-max-pages", "3", "--structure-top-k", "1"])

    assert report["balanced"], report
    assert report["bad"] == {"missing_url_or_host": 1}
    filtered = report["filtered"]
    assert filtered["duplicate_url"] == 3 and filtered["site_one_language"] == 5
    assert filtered["status_not_2xx"] == 1 and filtered["not_html"] == 1 and filtered["lang_other"] >= 1
    metrics = report["metrics"]
    assert metrics["urls_language_source"].get("model", 0) + filtered.get("lang_unknown", 0) + filtered[
        "lang_other"] >= 4
    assert metrics["sites_split"] == 2 and metrics["groups_chunked"] >= 2
    assert metrics["urls_capped"] == 0
    assert set(metrics["candidates_per_source"]) == {"handle", "similar", "link", "cue", "exhaustive", "image",
                                                     "structure"}
    assert metrics["candidates_per_source"]["cue"] == 10 and metrics["candidates_per_source"]["link"] == 30
    assert metrics["link_pairs_not_candidates"] == 1  # the uncued one-way link
    assert metrics["link_candidates_ok"] == 2 * 30 + 1 and "link_candidates_url_not_kept" not in metrics
    assert 14 <= metrics["candidates_per_source"]["structure"] <= 2 * 14
    assert metrics["candidates_per_source"]["image"] == 30
    assert metrics["image_names_ok"] == 30 and metrics["image_names_common"] == 2  # logo, English flag
    assert metrics["image_names_one_language"] == 1
    assert metrics["image_names_capped"] == 1 and metrics["image_pairs_capped"] == 3 * 2  # the gallery
    assert metrics["candidates_per_source"]["handle"] == 2
    assert metrics["handle_candidates_url_not_kept"] == 1 and metrics["handle_candidates_cross_site"] == 1
    assert metrics["handle_candidates_same_language"] == 1

    scored = spark.read.parquet(str(root / "scored_pairs")).toPandas()
    assert metrics["pairs_after_dedup"] == metrics["pairs_scored_fast"] == len(scored) + metrics[
        "pairs_pruned_after_fast"]
    assert metrics["pairs_pruned_after_fast"] > 0
    assert 0 < metrics["pairs_rescored"] <= len(scored)
    assert (scored["scored_by"] == "rescore").sum() == metrics["pairs_rescored"]
    assert not scored.duplicated(["src_url", "trg_url"]).any()
    english = set(urls.loc[urls["lang"] == "eng", "url"])
    assert scored["src_url"].isin(english).mean() > 0.99 and (scored["src_lang"] == "eng").all()
    assert ((scored["score_url"] - scored["p_src_lang"] * scored["p_trg_lang"] * scored["p_parallel"]).abs()
            < 1e-9).all()
    no_links = scored["link_log_odds"] == 0
    assert no_links.any() and (scored.loc[no_links, "score"] == scored.loc[no_links, "score_url"]).all()
    assert (scored.groupby("src_url")["rank"].min() == 1).all()
    assert metrics["candidates_vs_cartesian"] < 0.5

    truth = true_pairs(urls)
    found = set(zip(scored["src_url"], scored["trg_url"]))
    kept = [(s, t) in found for s, t in zip(truth["src_url"], truth["trg_url"])]
    assert sum(kept) / len(truth) >= 0.98
    linked = truth[truth["host"] == "links.is"].merge(scored, on=["src_url", "trg_url"])
    assert len(linked) == 30 and linked["source"].str.contains("link").all()
    assert linked["link_src_to_trg"].all() and linked["link_trg_to_src"].all()
    assert (linked["cue_links"] == 2).sum() == 10 and (linked["link_log_odds"] > 0).all()
    assert (linked["score"] > linked["score_url"]).all()
    pictured = truth[truth["host"] == "images.is"].merge(scored, on=["src_url", "trg_url"])
    assert len(pictured) == 30 and (pictured["source"] == "image").all()  # found by the shared image alone
    image_pairs = scored[scored["source"].str.contains("image")]
    assert set(zip(image_pairs["src_url"], image_pairs["trg_url"])) == set(image_site_pairs())
    measured = truth[truth["host"] == "prose.is"].merge(scored, on=["src_url", "trg_url"])
    assert len(measured) == 14 and (measured["source"] == "structure").all()  # found by paragraph lengths alone

    aligned = spark.read.parquet(str(root / "alignment")).toPandas()
    assert aligned["src_url"].is_unique and aligned["trg_url"].is_unique and len(aligned) > 0
    assert (aligned["host"] == aligned["src_url"].str.split("/").str[2]).all()  # the source page's host
    assert (aligned["site"] != aligned["host"]).any()  # ... and the site it was ranked in, apart (www.site0.is)
    hosts = spark.read.parquet(str(root / "rank_hosts")).toPandas().set_index("site")
    assert hosts.loc["big.is", "n_groups"] > 1 and hosts.loc["flat.is", "n_groups_chunked"] > 0
    assert hosts.loc["site7.is", "n_urls_src"] > 0  # en.site7.is and site7.is are one site


def test_rank_pairs_rejects_bad_configuration(spark, tmp_path):
    with pytest.raises(ConfigError, match="--langs"):
        run_job(RankPairs, spark, ["--root", str(tmp_path), "--langs", "en", "--pair-model", "x"])
    with pytest.raises(ConfigError, match="--top-k"):
        run_job(RankPairs, spark, ["--root", str(tmp_path), "--langs", "en,is", "--pair-model", "x", "--top-k", "0"])
    with pytest.raises(ConfigError, match="--image-max-share"):
        run_job(RankPairs, spark, ["--root", str(tmp_path), "--langs", "en,is", "--pair-model", "x",
                                   "--image-max-share", "2"])


def test_rank_pairs_by_name_pairs_a_site_whose_languages_live_on_two_country_domains(spark, tmp_path, models):
    """example.co.uk in English, example.is in Icelandic: two sites by default (each in one language), one site
    `example.*` with --group-by name, whose translations pair across the two domains."""
    pairs = [(f"https://www.example.co.uk/shop/{WORDS[i]}-{100 + i}.html",
              f"https://www.example.is/shop/{ICELANDIC[i]}-{100 + i}.html") for i in range(12)]
    rows = [(url, lang) for en, is_ in pairs for url, lang in ((en, "eng"), (is_, "isl"))]
    urls = pd.DataFrame(rows, columns=["url", "lang"])
    urls["host"] = [u.split("/")[2] for u in urls["url"]]
    urls["domain"] = [registered_domain(h) for h in urls["host"]]
    urls["surt"] = [surt(u) for u in urls["url"]]
    urls["status"], urls["mime"] = "200", "text/html"
    found = {}
    for group_by in ("site", "name"):
        root = tmp_path / group_by
        spark.createDataFrame(urls[["url", "surt", "host", "domain", "lang", "status", "mime"]]).write.parquet(
            str(root / "urls"))
        report = run_job(RankPairs, spark, [
            "--root", str(root), "--langs", "en,is", "--lang-model", models["lang"], "--pair-model", models["pairs"],
            "--group-by", group_by, "--align-min-score", "0.0"])
        assert report["balanced"], report
        found[group_by] = (report, spark.read.parquet(str(root / "scored_pairs")).toPandas(),
                           spark.read.parquet(str(root / "rank_hosts")).toPandas())
    report, scored, _ = found["site"]
    assert report["filtered"]["site_one_language"] == len(urls) and scored.empty
    report, scored, hosts = found["name"]
    assert set(scored["site"]) == {"example.*"}
    top = scored[scored["rank"] == 1]
    assert len(set(zip(top["src_url"], top["trg_url"])) & set(pairs)) >= 10
    assert set(hosts["grouped_by"]) == {"name"}
