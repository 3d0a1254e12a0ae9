"""Synthetic negatives: never a positive, never (u, u), same host, mono/bi by language, k per positive."""
import random

import pandas as pd
import pytest

from parascout.udfs.common.urls import url_host
from parascout.udfs.rank.url_models.negatives import (
    ALL_STRATEGIES,
    DEFAULT_STRATEGIES,
    generate_negatives,
    parse_strategies,
    remove_random_tokens,
)
from parascout.udfs.rank.url_models.preprocess import normalize_url, url_tokens


def wmt16_positives(shared_data) -> pd.DataFrame:
    rows = [line.split() for line in (shared_data / "wmt16" / "train.pairs").read_text().splitlines()]
    return pd.DataFrame([r for r in rows if len(r) == 2], columns=["src_url", "trg_url"])


def multilingual_positives() -> pd.DataFrame:
    """Two hosts, three languages, known languages (as the sample archive's truth/pairs.parquet)."""
    rows = []
    for host in ("a.example", "b.example"):
        for i in range(12):
            rows.append((host, f"http://{host}/en/page{i}", f"http://{host}/fr/page{i}", "eng", "fra"))
            rows.append((host, f"http://{host}/en/page{i}", f"http://{host}/de/seite{i}", "eng", "deu"))
    return pd.DataFrame(rows, columns=["host", "src_url", "trg_url", "src_lang", "trg_lang"])


def check_invariants(positives: pd.DataFrame, negatives: pd.DataFrame, per_positive: int) -> None:
    positive_set = set(zip(positives["src_url"], positives["trg_url"]))
    for src, trg in zip(negatives["src_url"], negatives["trg_url"]):
        assert (src, trg) not in positive_set and (trg, src) not in positive_set
        assert src != trg
    assert not negatives.duplicated(["src_url", "trg_url"]).any()
    language_of = {}
    for _, row in positives.iterrows():
        language_of.setdefault(row["src_url"], row.get("src_lang", "src"))
        language_of.setdefault(row["trg_url"], row.get("trg_lang", "trg"))
    host_urls = positives.groupby(positives["src_url"].map(url_host))[["src_url", "trg_url"]].agg(
        lambda s: set(s)).apply(lambda r: r["src_url"] | r["trg_url"], axis=1).to_dict()
    for row in negatives.itertuples():
        mono = row.strategy.endswith("-mono")
        assert (row.src_lang == row.trg_lang) == mono, row
        if not row.strategy.startswith("remove"):
            # random / jaccard partners are real URLs of the same host, in the stated languages
            assert row.trg_url in host_urls[row.host] and row.src_url in host_urls[row.host]
            assert language_of[row.src_url] == row.src_lang and language_of[row.trg_url] == row.trg_lang
        assert url_host(row.src_url) == url_host(row.trg_url) == row.host
    per_query = negatives[~negatives["strategy"].str.startswith("remove")].groupby(["src_url", "strategy"]).size()
    assert per_query.max() <= per_positive * positives["src_url"].value_counts().max()


@pytest.mark.parametrize("per_positive", [1, 3])
def test_wmt16_negatives_follow_the_definitions(shared_data, per_positive):
    positives = wmt16_positives(shared_data)
    negatives = generate_negatives(positives, ALL_STRATEGIES, per_positive=per_positive, seed=7)
    assert set(negatives["strategy"]) == set(ALL_STRATEGIES)
    counts = negatives["strategy"].value_counts()
    for name in ("random-bi", "random-mono", "jaccard-bi"):
        assert counts[name] >= 0.9 * per_positive * len(positives)
    # in a pair file the side is the language: bi = (src side, trg side), mono = one side only
    bi = negatives[negatives["strategy"].isin(["random-bi", "jaccard-bi"])]
    assert set(zip(bi["src_lang"], bi["trg_lang"])) == {("src", "trg")}
    check_invariants(positives, negatives, per_positive)


def test_known_languages_drive_mono_and_bi():
    positives = multilingual_positives()
    negatives = generate_negatives(positives, ALL_STRATEGIES, per_positive=2, seed=1)
    check_invariants(positives, negatives, 2)
    mono = negatives[negatives["strategy"] == "random-mono"]
    assert set(mono["src_lang"]) <= {"eng", "fra", "deu"} and (mono["src_lang"] == mono["trg_lang"]).all()
    bi = negatives[negatives["strategy"] == "random-bi"]
    assert set(zip(bi["src_lang"], bi["trg_lang"])) == {("eng", "fra"), ("eng", "deu")}
    assert all(t.split("/")[3] == {"fra": "fr", "deu": "de"}[lang] for t, lang in zip(bi["trg_url"], bi["trg_lang"]))
    assert set(negatives["host"]) == {"a.example", "b.example"}


def test_jaccard_picks_the_most_similar_non_partner():
    positives = pd.DataFrame({
        "src_url": ["http://h.com/en/news/2010/budget", "http://h.com/en/sport/football", "http://h.com/en/arts/film"],
        "trg_url": ["http://h.com/fr/nouvelles/2010/budget", "http://h.com/fr/sport/football",
                    "http://h.com/fr/arts/cinema"],
    })
    negatives = generate_negatives(positives, ("jaccard-bi",), per_positive=1, seed=0)
    chosen = dict(zip(negatives["src_url"], negatives["trg_url"]))
    assert chosen["http://h.com/en/sport/football"] in {"http://h.com/fr/nouvelles/2010/budget",
                                                        "http://h.com/fr/arts/cinema"}
    tokens = {u: set(url_tokens(normalize_url(u).lower())) for u in positives["trg_url"]}
    query = set(url_tokens(normalize_url("http://h.com/en/news/2010/budget")))

    def jaccard(u):
        return len(query & tokens[u]) / len(query | tokens[u])
    picked = chosen["http://h.com/en/news/2010/budget"]
    others = [u for u in positives["trg_url"] if u != "http://h.com/fr/nouvelles/2010/budget"]
    assert jaccard(picked) == max(jaccard(u) for u in others)


def test_remove_random_tokens_keeps_the_host_and_removes_something():
    rng = random.Random(3)
    url = "https://www.h.com/en/news/2010/budget-report.html"
    for _ in range(50):
        shorter = remove_random_tokens(url, rng)
        assert shorter.startswith("https://www.h.com/") and shorter != url and len(shorter) < len(url)
        assert "//" not in shorter[len("https://"):]
    assert remove_random_tokens("http://h.com", rng) == "http://h.com"
    # a host-only positive cannot yield a remove-bi negative: it would equal the positive, so it is dropped
    only_hosts = pd.DataFrame({"src_url": ["http://h.com"], "trg_url": ["http://fr.h.com"], "host": ["h.com"]})
    assert generate_negatives(only_hosts, ("remove-bi",)).empty


def test_duplicate_translations_are_never_negatives():
    # one English page with two French versions: (en, fr2) is a positive and must not come back as a negative
    positives = pd.DataFrame({"src_url": ["http://h.com/en/a", "http://h.com/en/a", "http://h.com/en/b"],
                              "trg_url": ["http://h.com/fr/a", "http://h.com/fr/a2", "http://h.com/fr/b"]})
    negatives = generate_negatives(positives, ALL_STRATEGIES, per_positive=3, seed=0)
    assert not ({("http://h.com/en/a", "http://h.com/fr/a2"), ("http://h.com/en/a", "http://h.com/fr/a")}
                & set(zip(negatives["src_url"], negatives["trg_url"])))


def test_strategy_names():
    assert parse_strategies("default") == DEFAULT_STRATEGIES
    assert DEFAULT_STRATEGIES == ("random-mono", "random-bi", "jaccard-mono", "jaccard-bi", "remove-bi",
                                  "neighbour-bi")
    assert parse_strategies("all") == ALL_STRATEGIES
    assert parse_strategies("jaccard-bi, remove-mono") == ("jaccard-bi", "remove-mono")
    with pytest.raises(ValueError, match="unknown negative strategies"):
        parse_strategies("random-tri")


def test_neighbour_negatives_pick_the_nearest_id_of_the_same_shape():
    positives = pd.DataFrame({"src_url": [f"http://h.com/en/item.php?id={i}" for i in (10, 11, 12, 50)] +
                              ["http://h.com/en/about"],
                              "trg_url": [f"http://h.com/fr/item.php?id={i}" for i in (10, 11, 12, 50)] +
                              ["http://h.com/fr/a-propos"]})
    negatives = generate_negatives(positives, ("neighbour-bi", "neighbour-mono"), seed=0)
    bi = dict(zip(*negatives.loc[negatives["strategy"] == "neighbour-bi", ["src_url", "trg_url"]].T.values))
    assert bi["http://h.com/en/item.php?id=10"] == "http://h.com/fr/item.php?id=11"
    assert bi["http://h.com/en/item.php?id=50"] == "http://h.com/fr/item.php?id=12"
    assert "http://h.com/en/about" not in bi                    # no id: no neighbour
    mono = negatives[negatives["strategy"] == "neighbour-mono"]
    assert (mono["src_lang"] == mono["trg_lang"]).all() and len(mono) == 4
