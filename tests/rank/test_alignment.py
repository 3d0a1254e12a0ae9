"""Greedy 1-1 alignment, gold-pool evaluation, model candidates, and the WMT16 comparison of methods."""
import numpy as np
import pandas as pd
import pytest

from parascout.udfs.common.urls import url_host
from parascout.udfs.rank import alignment
from parascout.udfs.rank.handles import build_stripper, plain_stripper, strand_candidates
from parascout.udfs.rank.wmt16_baseline import wmt16_candidates


def _pairs(rows):
    return pd.DataFrame(rows, columns=["host", "src_url", "trg_url", "score"])


def test_greedy_takes_best_first_and_uses_each_url_once():
    pairs = _pairs([("h", "a", "x", 0.5), ("h", "a", "y", 0.9), ("h", "b", "y", 0.8), ("h", "b", "x", 0.4),
                    ("h", "c", "x", 0.4), ("g", "d", "z", 0.1)])
    aligned = alignment.greedy_one_to_one(pairs)
    assert list(zip(aligned["src_url"], aligned["trg_url"])) == [("a", "y"), ("b", "x"), ("d", "z")]
    assert aligned["src_url"].is_unique and aligned["trg_url"].is_unique
    assert alignment.greedy_one_to_one(pairs.iloc[0:0]).empty


def test_greedy_breaks_ties_by_input_order():
    aligned = alignment.greedy_one_to_one(_pairs([("h", "a", "x", 1.0), ("h", "b", "x", 1.0), ("h", "b", "y", 1.0)]))
    assert list(zip(aligned["src_url"], aligned["trg_url"])) == [("a", "x"), ("b", "y")]


def test_evaluation_counts_recall_and_precision():
    scores = alignment.evaluate_alignment([("a", "x"), ("b", "z")], [("a", "x"), ("b", "y"), ("c", "w")])
    assert scores == {"gold": 3, "predicted": 2, "correct": 1, "recall": 0.3333, "precision": 0.5, "f1": 0.4}
    assert alignment.evaluate_alignment([], [("a", "x")])["precision"] == 0.0


def test_gold_pairs_and_pool(tmp_path):
    path = tmp_path / "gold.pairs"
    path.write_text("http://a.com/en/1 http://a.com/fr/1\nhttp://b.com/x\thttp://b.com/y\n\nbroken line here\n")
    gold = alignment.read_gold_pairs(path)
    assert list(gold["host"]) == ["a.com", "b.com"]
    pool = alignment.gold_pool(gold, "eng", "fra")
    assert sorted(pool["lang"]) == ["eng", "eng", "fra", "fra"] and pool["url"].is_unique


def test_model_candidates_cross_hosts_and_block_huge_ones():
    rows = [("small.com", f"http://small.com/en/{i}", "eng") for i in range(3)]
    rows += [("small.com", f"http://small.com/fr/{i}", "fra") for i in range(2)]
    rows += [("big.com", f"http://big.com/en/page-{i}", "eng") for i in range(30)]
    rows += [("big.com", f"http://big.com/fr/page-{i}", "fra") for i in range(30)]
    rows += [("mono.com", "http://mono.com/en/1", "eng")]
    pool = pd.DataFrame(rows, columns=["host", "url", "lang"])
    pairs, stats = alignment.model_candidates(pool, "eng", "fra", max_pairs_per_host=100, block_top_k=2)
    assert stats["hosts"] == 2 and stats["hosts_blocked"] == 1 and stats["pairs_before_blocking"] == 6 + 900
    assert len(pairs[pairs["host"] == "small.com"]) == 6
    big = pairs[pairs["host"] == "big.com"]
    assert len(big) < 900 and stats["candidate_pairs"] == len(pairs)
    assert all(((big["src_url"] == f"http://big.com/en/page-{i}") & (big["trg_url"] == f"http://big.com/fr/page-{i}")).any()
               for i in range(30))


class TokenOverlapModels:
    """A tiny stand-in with the udfs.rank.url_models interface: parallel if the URLs share their last token."""

    def predict_parallel(self, src_urls, trg_urls):
        return np.array([0.9 if s.rsplit("/", 1)[-1] == t.rsplit("/", 1)[-1] else 0.1
                         for s, t in zip(src_urls, trg_urls)])

    def predict_lang(self, urls):
        rows = [{"eng": 0.8 if "/en/" in u else 0.1, "fra": 0.8 if "/fr/" in u else 0.1, "unk": 0.1} for u in urls]
        return pd.DataFrame(rows, index=urls)


def test_scores_multiply_pair_and_language_probabilities():
    pairs = pd.DataFrame({"host": "h", "src_url": ["http://h/en/a", "http://h/en/a", "http://h/fr/b"],
                          "trg_url": ["http://h/fr/a", "http://h/fr/b", "http://h/en/b"]})
    models = TokenOverlapModels()
    scored = alignment.score_with_models(pairs, models, models, "eng", "fra", batch_size=2)
    assert np.allclose(scored["score"], [0.9 * 0.8 * 0.8, 0.1 * 0.8 * 0.8, 0.9 * 0.1 * 0.1])
    assert np.allclose(alignment.score_with_models(pairs, models, None, "eng", "fra")["score"], [0.9, 0.1, 0.9])
    unknown = alignment.score_with_models(pairs, models, models, "eng", "isl")
    assert (unknown["p_trg_lang"] == 0).all()


@pytest.fixture(scope="module")
def wmt16(shared_data):
    gold = alignment.read_gold_pairs(shared_data / "wmt16" / "train.pairs")
    pool = alignment.gold_pool(gold, "eng", "fra").assign(host=lambda f: f["url"].map(url_host))
    return gold, pool


def _recall(pairs, gold):
    aligned = alignment.greedy_one_to_one(pairs)
    return alignment.evaluate_alignment(zip(aligned["src_url"], aligned["trg_url"]),
                                        zip(gold["src_url"], gold["trg_url"]))


def test_strand_beats_the_naive_strip_on_wmt16(wmt16):
    gold, pool = wmt16
    naive = _recall(strand_candidates(pool, plain_stripper(["en", "fr", "eng", "fra"]), "eng", "fra")[0], gold)
    strand = _recall(strand_candidates(pool, build_stripper(("en", "fr")), "eng", "fra")[0], gold)
    learned = _recall(strand_candidates(pool, build_stripper(("en", "fr")), "eng", "fra", learn=True)[0], gold)
    baseline = _recall(wmt16_candidates(pool, "eng", "fra"), gold)
    assert 0.45 < naive["recall"] < strand["recall"] - 0.08
    assert learned["recall"] > strand["recall"] and learned["recall"] >= baseline["recall"]
    assert min(strand["precision"], learned["precision"], baseline["precision"]) > 0.99
