"""Shortlist: predicted pairs per site, ranking, Spearman and precision@k on a hand-made example."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from parascout.jobs.shortlist import ShortlistJob
from parascout.udfs.common.table_layout import table_location
from parascout.udfs.export import shortlist
from tests.conftest import run_job

PREDICTED = {"a.is": 10, "b.is": 8, "c.is": 5, "d.is": 3, "e.is": 0}
TRUE = {"a.is": 9, "b.is": 2, "c.is": 7, "d.is": 0, "e.is": 1, "f.is": 6}


def average_ranks(values: list[float]) -> np.ndarray:
    """1-based ranks, ties sharing their mean rank (what Spearman's rho correlates)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = np.zeros(len(values))
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for position in range(i, j + 1):
            ranks[order[position]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def hand_made_shortlist() -> pd.DataFrame:
    hosts = pd.DataFrame({"site": list(PREDICTED), "predicted_pairs": list(PREDICTED.values())})
    hosts["predicted_ratio"] = 0.5
    return shortlist.rank_sites(hosts)


def test_rank_sites_orders_by_pairs_then_ratio_then_name():
    hosts = pd.DataFrame({"site": ["b", "a", "c", "d"], "predicted_pairs": [3, 3, 3, 9],
                          "predicted_ratio": [0.1, 0.1, 0.5, 0.0]})
    assert shortlist.rank_sites(hosts)[["site", "rank"]].values.tolist() == [["d", 1], ["c", 2], ["a", 3], ["b", 4]]


def test_predicted_ratio_divides_by_the_smaller_side():
    ratio = shortlist.predicted_ratio(pd.Series([4, 3, 0]), pd.Series([8, 0, 5]), pd.Series([10, 4, 5]))
    assert ratio.tolist() == [0.5, 0.0, 0.0]


def test_spearman_and_precision_at_k_on_a_hand_made_example():
    truth = pd.DataFrame({"site": list(TRUE), "true_pairs": list(TRUE.values())})
    metrics = shortlist.evaluate_shortlist(hand_made_shortlist(), truth, min_true_pairs=5, ks=(1, 2, 5, 10))
    hosts = sorted(TRUE)
    predicted = [PREDICTED.get(h, 0) for h in hosts]
    true = [TRUE[h] for h in hosts]
    expected_rho = np.corrcoef(average_ranks(predicted), average_ranks(true))[0, 1]
    assert metrics["spearman"] == pytest.approx(expected_rho)
    assert metrics["hosts_evaluated"] == 6 and metrics["hosts_relevant"] == 3  # a, c, f
    assert metrics["precision_at_1"] == 1.0      # a
    assert metrics["precision_at_2"] == 0.5      # a, b
    assert metrics["precision_at_5"] == 0.4      # a, b, c, d, e
    assert metrics["precision_at_10"] == 0.4     # only 5 sites ranked


def test_verified_pairs_compare_only_checked_sites():
    verified = pd.DataFrame({"site": ["a.is", "d.is"], "true_pairs": [9, 0]})
    metrics = shortlist.evaluate_shortlist(hand_made_shortlist(), verified, min_true_pairs=5, ks=(1, 2),
                                           truth_covers_all_hosts=False)
    assert metrics["hosts_evaluated"] == 2 and metrics["spearman"] == pytest.approx(1.0)
    assert metrics["precision_at_2"] == 0.5


def test_constant_input_has_no_spearman():
    truth = pd.DataFrame({"site": ["a.is"], "true_pairs": [3]})
    assert shortlist.evaluate_shortlist(hand_made_shortlist().head(1), truth)["spearman"] is None


def test_true_pair_counts_filters_languages_and_verdicts():
    pairs = pd.DataFrame({"site": ["a", "a", "a", "b", "b"], "src_url": ["1", "1", "2", "3", "4"],
                          "trg_url": ["x", "x", "y", "z", "w"], "src_lang": ["eng", "eng", "isl", "eng", "eng"],
                          "trg_lang": ["isl", "isl", "eng", "fra", "isl"]})
    counts = shortlist.true_pair_counts(pairs, ("eng", "isl"))
    assert counts.set_index("site")["true_pairs"].to_dict() == {"a": 2, "b": 1}
    verified = pairs.assign(parallel=[True, True, False, True, None])
    assert shortlist.true_pair_counts(verified).set_index("site")["true_pairs"].to_dict() == {"a": 1, "b": 1}


@pytest.mark.slow
def test_shortlist_job_ranks_sites_and_reports_evaluation(spark, tmp_path):
    root = tmp_path / "root"
    rank_hosts = pd.DataFrame({
        "site": [*PREDICTED, "g.de"], "src_lang": ["eng"] * 5 + ["deu"], "trg_lang": ["isl"] * 5 + ["fra"],
        "n_urls_src": [20, 10, 40, 6, 5, 9], "n_urls_trg": [12, 30, 10, 3, 8, 9],
        "n_groups": 1, "n_urls_capped": 0, "n_groups_chunked": 0, "grouped_by": "site"})
    spark.createDataFrame(rank_hosts).write.parquet(str(root / "rank_hosts"))
    rows = []
    for host, count in PREDICTED.items():
        rows += [(host, f"https://{host}/en/{i}", f"https://{host}/is/{i}", 0.9) for i in range(count)]
    rows += [("d.is", "https://d.is/en/low", "https://d.is/is/low", 0.2), ("e.is", "https://e.is/en/x",
                                                                            "https://e.is/is/x", 0.4)]
    spark.createDataFrame(pd.DataFrame(rows, columns=["site", "src_url", "trg_url", "score"])).write.parquet(
        str(root / "alignment"))
    truth_rows = [(host.replace("a.is", "en.a.is"), f"https://{host}/en/t{i}", f"https://{host}/is/t{i}", "eng", "isl")
                  for host, count in TRUE.items() for i in range(count)]
    truth_rows.append(("a.is", "https://a.is/de/t", "https://a.is/is/t", "deu", "isl"))
    truth_path = tmp_path / "pairs.parquet"
    pd.DataFrame(truth_rows, columns=["host", "src_url", "trg_url", "src_lang", "trg_lang"]).to_parquet(truth_path)

    report = run_job(ShortlistJob, spark, ["--root", str(root), "--langs", "is,en", "--truth", str(truth_path),
                                           "--relevant-min-pairs", "5"])
    assert report["balanced"] and report["kept"] == 5 and report["filtered"] == {"other_language_pair": 1}
    result = spark.read.parquet(str(root / "shortlist")).toPandas().set_index("site")
    assert result["rank"].to_dict() == {"a.is": 1, "b.is": 2, "c.is": 3, "d.is": 4, "e.is": 5}
    assert result.loc["c.is", "predicted_ratio"] == pytest.approx(5 / 10)
    assert result.loc["d.is", "expected_pairs"] == pytest.approx(3 * 0.9 + 0.2)
    evaluation = report["metrics"]["evaluation"]
    expected = shortlist.evaluate_shortlist(hand_made_shortlist(), pd.DataFrame(
        {"site": list(TRUE), "true_pairs": list(TRUE.values())}), min_true_pairs=5)
    assert evaluation["spearman"] == pytest.approx(expected["spearman"])
    assert evaluation["precision_at_5"] == 0.4 and evaluation["hosts_evaluated"] == 6
    on_disk = json.loads((root / "_reports" / "shortlist.json").read_text())
    assert on_disk["metrics"]["evaluation"]["truth"] == "truth table"

    # --in-domain-only: a.is's English pages are in the domain, b.is's pages are not, the rest were never scored
    texts = [(f"https://a.is/en/{i}", True) for i in range(PREDICTED["a.is"])]
    texts += [(f"https://b.is/{side}/{i}", False) for side in ("en", "is") for i in range(PREDICTED["b.is"])]
    spark.createDataFrame(pd.DataFrame(texts, columns=["url", "in_domain"])).write.parquet(str(root / "texts"))
    focused = run_job(ShortlistJob, spark, ["--root", str(root), "--langs", "is,en", "--in-domain-only"])
    assert focused["balanced"] and focused["metrics"]["aligned_pairs_by_domain"] == {
        "in_domain": 10, "off_domain": 8, "no_domain_text": 5 + 3 + 2}
    predicted = spark.read.parquet(str(root / "shortlist")).toPandas().set_index("site")["predicted_pairs"]
    assert predicted.to_dict() == {"a.is": 10, "b.is": 0, "c.is": 0, "d.is": 0, "e.is": 0}


@pytest.mark.slow
def test_in_domain_only_needs_scored_texts(spark, tmp_path):
    from parascout.jobs.errors import ConfigError

    root = tmp_path / "root"
    spark.createDataFrame(pd.DataFrame({"site": ["a.is"], "src_lang": ["eng"], "trg_lang": ["isl"], "n_urls_src": [1],
                                        "n_urls_trg": [1], "grouped_by": ["site"]})).write.parquet(str(root / "rank_hosts"))
    spark.createDataFrame(pd.DataFrame({"site": ["a.is"], "src_url": ["u"], "trg_url": ["v"], "score": [0.9]})
                          ).write.parquet(str(root / "alignment"))
    spark.createDataFrame(pd.DataFrame({"url": ["u"], "main_text": ["x"]})).write.parquet(str(root / "texts"))
    with pytest.raises(ConfigError, match="--domain-terms"):
        run_job(ShortlistJob, spark, ["--root", str(root), "--in-domain-only"])


def write_two_pair_root(spark, root) -> None:
    """rank-pairs' tables of eng-isl and deu-fra (a.is ranked in both, with other pairs in each), verified pairs
    and domain flags."""
    hosts = [(host, "eng", "isl", 20, 12) for host in PREDICTED] + [("a.is", "deu", "fra", 6, 6), ("g.de", "deu", "fra", 9, 9)]
    rank_hosts = pd.DataFrame(hosts, columns=["site", "src_lang", "trg_lang", "n_urls_src", "n_urls_trg"]).assign(
        n_groups=1, n_urls_capped=0, n_groups_chunked=0, grouped_by="site")
    rank_hosts["lang_pair"] = rank_hosts["src_lang"] + "-" + rank_hosts["trg_lang"]
    spark.createDataFrame(rank_hosts).write.partitionBy("lang_pair").parquet(str(root / "rank_hosts"))
    rows = [(host, f"https://{host}/en/{i}", f"https://{host}/is/{i}", 0.9, "eng-isl")
            for host, count in PREDICTED.items() for i in range(count)]
    rows += [("a.is", f"https://a.is/de/{i}", f"https://a.is/fr/{i}", 0.8, "deu-fra") for i in range(2)]
    rows += [("g.de", f"https://g.de/de/{i}", f"https://g.de/fr/{i}", 0.7, "deu-fra") for i in range(4)]
    alignment = pd.DataFrame(rows, columns=["site", "src_url", "trg_url", "score", "lang_pair"])
    spark.createDataFrame(alignment).write.partitionBy("lang_pair").parquet(str(root / "alignment"))
    verified = alignment.assign(host=alignment["site"], parallel=alignment["score"] > 0.75,
                                src_lang=alignment["lang_pair"].str[:3], trg_lang=alignment["lang_pair"].str[4:])
    spark.createDataFrame(verified).write.partitionBy("lang_pair").parquet(str(root / "verified_pairs"))
    texts = pd.DataFrame({"url": alignment["src_url"], "in_domain": ~alignment["src_url"].str.contains("/1$")})
    spark.createDataFrame(texts).write.parquet(str(root / "texts"))


@pytest.mark.slow
def test_pairs_shortlisted_in_one_run_each_equal_their_one_pair_run(spark, tmp_path):
    root = tmp_path / "root"
    write_two_pair_root(spark, root)
    argv = ["--root", str(root), "--in-domain-only"]
    single = {}
    for langs in ("is,en", "de,fr"):
        report = run_job(ShortlistJob, spark, [*argv, "--langs", langs])
        label = next(iter(report["by_pair"]))
        single[label] = (report["by_pair"][label], report["metrics"]["by_pair"][label],
                         pd.read_parquet(table_location(str(root / "shortlist"))))
    report = run_job(ShortlistJob, spark, [*argv, "--langs", "is-en,de-fr"])
    assert report["balanced"] and report["metrics"]["summary"]["pairs"] == ["isl-eng", "deu-fra"]
    shortlist_rows = pd.read_parquet(table_location(str(root / "shortlist")))
    for label, (counts, metrics, one_pair_rows) in single.items():
        assert report["by_pair"][label] == counts and report["metrics"]["by_pair"][label] == metrics, label
        rows = shortlist_rows[shortlist_rows["lang_pair"] == label]
        assert set(rows["src_lang"]) | set(rows["trg_lang"]) == set(label.split("-"))  # no other pair's rows
        pd.testing.assert_frame_equal(  # expected_pairs: a float sum, in partitions of their own
            rows.astype({"lang_pair": str}).sort_values("site").reset_index(drop=True),
            one_pair_rows.astype({"lang_pair": str}).sort_values("site").reset_index(drop=True))
    deu_fra = shortlist_rows[shortlist_rows["lang_pair"] == "deu-fra"].set_index("site")
    assert deu_fra["predicted_pairs"].to_dict() == {"a.is": 1, "g.de": 3}  # its own pairs, in the domain
    assert deu_fra["rank"].to_dict() == {"g.de": 1, "a.is": 2}
    assert report["metrics"]["by_pair"]["deu-fra"]["aligned_pairs_by_domain"] == {"in_domain": 4, "off_domain": 2}
