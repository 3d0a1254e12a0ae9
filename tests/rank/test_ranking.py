"""Ranking: language assignment, score combination, fast/rescore cascade, ranks, 1-1 alignment (pure pandas)."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from parascout.udfs.common.langs import language_markers
from parascout.udfs.rank import blocking, ranking

MARKERS = language_markers(("eng", "isl"))


def marker_language_model(urls: list[str]) -> pd.DataFrame:
    """A rule-based URL language scorer: /is/ -> Icelandic, /en/ -> English, /de/ -> German, else unknown."""
    rows = []
    for url in urls:
        row = {"eng": 0.05, "isl": 0.05, "deu": 0.05, "unk": 0.85}
        for code, lang in (("/is/", "isl"), ("/en/", "eng"), ("/de/", "deu")):
            if code in url:
                row = {**{k: 0.02 for k in row}, lang: 0.94}
        if "/maybe-is/" in url:
            row = {"eng": 0.3, "isl": 0.4, "deu": 0.0, "unk": 0.3}
        rows.append(row)
    return pd.DataFrame(rows, columns=["eng", "isl", "deu", "unk"])


def handle_pair_model(src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
    """A strict pair scorer: 0.95 when the language-neutral handles match, else 0.05."""
    return np.array([0.95 if blocking.neutral_handle(s, MARKERS) == blocking.neutral_handle(t, MARKERS) else 0.05
                     for s, t in zip(src_urls, trg_urls)])


def jaccard_pair_model(src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
    """A lenient pair scorer: token Jaccard of the two URLs."""
    scores = []
    for s, t in zip(src_urls, trg_urls):
        a, b = blocking.similarity_tokens(s, MARKERS), blocking.similarity_tokens(t, MARKERS)
        scores.append(len(a & b) / len(a | b) if a | b else 0.0)
    return np.array(scores)


def test_assign_languages_prefers_cdx_then_model_above_threshold():
    urls = pd.DataFrame({"url": ["https://x.is/en/a", "https://x.is/is/a", "https://x.is/de/a", "https://x.is/a",
                                 "https://x.is/maybe-is/a", "https://x.is/fr/a"],
                         "lang": [None, None, None, None, None, "fra"]})
    out = ranking.assign_languages(urls, ("eng", "isl"), marker_language_model, threshold=0.5)
    assert out["lang"].tolist() == ["eng", "isl", "deu", None, None, "fra"]
    assert out["language_status"].tolist() == ["ok", "ok", "lang_other", "lang_unknown", "lang_unknown",
                                               "lang_other"]
    assert out["lang_source"].tolist() == ["model", "model", "model", None, None, "cdx"]
    assert out["p_lang"].tolist() == pytest.approx([0.94, 0.94, 0.94, 0.85, 0.4, 1.0])
    cdx = pd.DataFrame({"url": ["https://x.is/is/a"], "lang": ["eng"]})
    assert ranking.assign_languages(cdx, ("eng", "isl"), marker_language_model)["lang"].tolist() == ["eng"]
    no_model = ranking.assign_languages(urls, ("eng", "isl"), None)
    assert no_model["language_status"].tolist()[:5] == ["lang_missing_no_model"] * 5


def candidate_frame(n: int = 6) -> pd.DataFrame:
    """Every English page x every Icelandic page of a small site (n each)."""
    english = [f"https://x.is/en/page-{i}" for i in range(n)]
    icelandic = [f"https://x.is/is/page-{i}" for i in range(n)]
    rows = [(s, t) for s, t in itertools.product(english, icelandic)]
    pairs = pd.DataFrame(rows, columns=["src_url", "trg_url"])
    pairs["p_src_lang"] = 1.0
    pairs["p_trg_lang"] = np.where(pairs["trg_url"].str.endswith("-0"), 0.5, 1.0)
    return pairs


def test_cascade_scores_everything_fast_and_rescores_only_top_k_per_url():
    pairs = candidate_frame()
    scored = ranking.cascade_scores(pairs, jaccard_pair_model, handle_pair_model, rescore_top_k=2)
    assert len(scored) == len(pairs)
    expected_rescored = ranking.top_k_mask(scored.assign(score=scored["p_parallel_fast"] * scored["p_trg_lang"]),
                                           "score", 2)
    assert (scored["scored_by"] == "rescore").to_numpy().tolist() == expected_rescored.tolist()
    assert 0 < expected_rescored.sum() < len(pairs)
    fast_only = scored["scored_by"] == "fast"
    assert np.allclose(scored.loc[fast_only, "p_parallel"], scored.loc[fast_only, "p_parallel_fast"])
    assert np.allclose(scored["score"], scored["p_src_lang"] * scored["p_trg_lang"] * scored["p_parallel"])
    best = scored[scored["rank"] == 1].set_index("src_url")["trg_url"]
    assert all(best[f"https://x.is/en/page-{i}"] == f"https://x.is/is/page-{i}" for i in range(1, 6))
    for _, group in scored.groupby("src_url"):
        assert sorted(group["rank"]) == list(range(1, len(group) + 1))
        assert group.sort_values("rank")["score"].is_monotonic_decreasing


def test_cascade_without_rescorer_and_on_empty_input():
    scored = ranking.cascade_scores(candidate_frame(3), handle_pair_model)
    assert set(scored["scored_by"]) == {"fast"} and scored["p_parallel"].equals(scored["p_parallel_fast"])
    empty = ranking.cascade_scores(candidate_frame(0), handle_pair_model, handle_pair_model)
    assert empty.empty and set(ranking.SCORED_COLUMNS) <= set(empty.columns)


def test_predict_pairs_batches_and_clips(monkeypatch):
    monkeypatch.setattr(ranking, "SCORING_BATCH", 4)
    calls = []

    def scaled(src, trg):
        calls.append(len(src))
        return np.array([2.0 if s.endswith("1") else -1.0 for s in src])

    scores = ranking.predict_pairs([f"u{i}" for i in range(10)], ["v"] * 10, scaled)
    assert calls == [4, 4, 2] and scores.min() == 0.0 and scores.max() == 1.0


def test_greedy_alignment_is_one_to_one_and_best_first():
    pairs = pd.DataFrame({
        "src_url": ["a", "a", "b", "b", "c", "d"],
        "trg_url": ["x", "y", "x", "z", "z", "w"],
        "score": [0.9, 0.8, 0.85, 0.3, 0.7, 0.05],
    })
    aligned = ranking.greedy_alignment(pairs, min_score=0.1)
    assert set(zip(aligned["src_url"], aligned["trg_url"])) == {("a", "x"), ("c", "z")}
    assert aligned["src_url"].is_unique and aligned["trg_url"].is_unique
    everything = ranking.greedy_alignment(pairs, min_score=0.0)
    assert set(zip(everything["src_url"], everything["trg_url"])) == {("a", "x"), ("c", "z"), ("d", "w")}


def test_greedy_alignment_on_random_scores_is_one_to_one_and_maximal():
    rng = np.random.default_rng(0)
    pairs = pd.DataFrame({"src_url": rng.integers(0, 40, 500).astype(str), "trg_url": rng.integers(0, 30, 500)
                          .astype(str), "score": rng.random(500)}).drop_duplicates(["src_url", "trg_url"])
    aligned = ranking.greedy_alignment(pairs, min_score=0.2)
    assert aligned["src_url"].is_unique and aligned["trg_url"].is_unique
    assert (aligned["score"] >= 0.2).all()
    free = pairs[(pairs["score"] >= 0.2) & ~pairs["src_url"].isin(aligned["src_url"])
                 & ~pairs["trg_url"].isin(aligned["trg_url"])]
    assert free.empty


def test_align_group_keeps_the_scored_columns():
    scored = ranking.cascade_scores(candidate_frame(4), handle_pair_model)
    aligned = ranking.align_group(scored)
    assert list(aligned.columns) == list(scored.columns) and len(aligned) == 4


def test_fast_stage_prunes_exhaustive_only_pairs_to_the_top_k_per_url():
    pairs = candidate_frame(6)
    pairs["source"] = np.where(pairs.index % 2 == 0, "exhaustive", "similar")
    scored = ranking.cascade_scores(pairs, jaccard_pair_model, keep_top_k=1)
    survivors = scored[scored["source"] == "exhaustive"]
    fast = pairs.assign(p_parallel=jaccard_pair_model(pairs["src_url"].tolist(), pairs["trg_url"].tolist()))
    fast["score"] = ranking.combine_scores(fast)
    best = fast[ranking.top_k_mask(fast, "score", 1)]
    assert set(survivors.index) == set(best[best["source"] == "exhaustive"].index)
    assert (scored["source"] == "similar").sum() == (pairs["source"] == "similar").sum()


# ---- link evidence -------------------------------------------------------------------------
SWITCHER_SRC = "https://news.is/article?id=120"
LINKED_TRG = "https://news.is/article?id=121&lang=fr"
LIKED_TRG = "https://news.is/article?id=415&lang=fr"


def id_loving_pair_model(src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
    """A pair model that happens to like ?id=415 for ?id=120 (0.6) and not the switcher-linked ?id=121 (0.02)."""
    return np.array([0.6 if "id=415" in t else 0.02 for t in trg_urls])


def switcher_pairs() -> pd.DataFrame:
    """?id=120 with two French candidates: ?id=121, linked both ways by a language switcher naming the other
    language (cue links both ways, exclusive) and sharing a rare image, and ?id=415 with no evidence."""
    return pd.DataFrame({
        "host": "news.is", "src_url": [SWITCHER_SRC, SWITCHER_SRC], "trg_url": [LINKED_TRG, LIKED_TRG],
        "source": ["cue,image,link", "similar"], "p_src_lang": 1.0, "p_trg_lang": 1.0,
        "link_src_to_trg": [True, False], "link_trg_to_src": [True, False], "cue_links": [2, 0],
        "cue_exclusive": [True, False], "shared_alternates": [0, 0]})


def test_a_switcher_link_flips_the_ranking_the_url_model_alone_gets_wrong():
    by_url = ranking.cascade_scores(switcher_pairs(), id_loving_pair_model, link_weights={})
    assert by_url.set_index("trg_url").loc[LIKED_TRG, "rank"] == 1 and (by_url["link_log_odds"] == 0).all()
    assert ranking.greedy_alignment(by_url)["trg_url"].tolist() == [LIKED_TRG]

    scored = ranking.cascade_scores(switcher_pairs(), id_loving_pair_model).set_index("trg_url")
    assert scored.loc[LINKED_TRG, "rank"] == 1 and scored.loc[LIKED_TRG, "rank"] == 2
    assert scored.loc[LINKED_TRG, "link_log_odds"] > 0 and scored.loc[LIKED_TRG, "link_log_odds"] == 0
    assert scored.loc[LIKED_TRG, "score"] == scored.loc[LIKED_TRG, "score_url"] == pytest.approx(0.6)
    assert scored.loc[LINKED_TRG, "score_url"] == pytest.approx(0.02)
    assert scored.loc[LINKED_TRG, "score"] > 0.6
    aligned = ranking.align_group(scored.reset_index())
    assert aligned["trg_url"].tolist() == [LINKED_TRG] and "score_url" in aligned.columns


def test_link_features_read_directions_cues_alternates_and_images():
    pairs = switcher_pairs()
    pairs.loc[1, ["link_trg_to_src", "shared_alternates"]] = [True, 3]
    features = ranking.link_features(pairs)
    assert list(features.columns) == list(ranking.LINK_EVIDENCE_WEIGHTS)
    assert features.iloc[0].to_dict() == {"links_both_ways": 1, "link_one_way": 0, "cue_links": 2,
                                          "cue_exclusive": 1, "shared_alternates": 0, "shared_image": 1}
    assert features.iloc[1].to_dict() == {"links_both_ways": 0, "link_one_way": 1, "cue_links": 0,
                                          "cue_exclusive": 0, "shared_alternates": 1, "shared_image": 0}
    bare = ranking.link_features(pairs[["src_url", "trg_url"]])  # no docs: no evidence
    assert (bare.to_numpy() == 0).all()


def test_fit_link_weights_learns_what_the_evidence_is_worth_beyond_the_url_score():
    rng = np.random.default_rng(1)
    n = 4000
    linked = rng.random(n) < 0.3
    url_score = rng.uniform(0.05, 0.95, n)
    true_log_odds = ranking.logit(url_score) + np.where(linked, 3.0, 0.0)
    labels = rng.random(n) < 1 / (1 + np.exp(-true_log_odds))
    pairs = pd.DataFrame({"src_url": "a", "trg_url": "b", "link_src_to_trg": linked, "link_trg_to_src": linked})
    weights = ranking.fit_link_weights(pairs, url_score, labels, l2=0.1)
    assert weights["links_both_ways"] == pytest.approx(3.0, abs=0.4)
    assert weights["cue_links"] == 0 and weights["shared_image"] == 0  # evidence no pair shows


def test_link_evidence_moves_scores_its_way_only_and_leaves_pairs_without_it_alone():
    url_score = np.array([0.0, 0.3, 1.0, 0.3, 0.3])
    log_odds = np.array([2.0, 0.0, 2.0, -2.0, 2.0])
    combined = ranking.with_link_evidence(url_score, log_odds)
    assert combined[1] == 0.3 and combined[2] == 1.0 and combined[0] > 0
    assert combined[3] < 0.3 < combined[4]
    assert combined[4] == pytest.approx(1 / (1 + np.exp(-(np.log(0.3 / 0.7) + 2.0))))
