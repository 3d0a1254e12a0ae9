"""The WMT16 language-id stripper, ported from the shared task's languagestripper.py / match_url_pairs.py."""
import pandas as pd
import pytest

from parascout.udfs.common.urls import url_host
from parascout.udfs.rank.alignment import evaluate_alignment, gold_pool, greedy_one_to_one, read_gold_pairs
from parascout.udfs.rank.wmt16_baseline import (
    LanguageStripper,
    code_to_language,
    normalize_url,
    strip_url,
    wmt16_candidates,
    wmt16_pairs,
)


def test_identifier_table_is_the_original_one():
    table = code_to_language()
    assert table["e"] == table["gb"] == table["us"] == table["en_us"] == table["englisch"] == "en"
    assert table["f"] == table["fran"] == table["fr_ca"] == "fr"
    assert table["suomeksi"] == "fi" and table["cz"] == "cs" and table["af_soomaali"] == "so"
    assert set(code_to_language(["fr"]).values()) == {"fr"}
    icelandic = code_to_language(["is"])  # extension: not in the original table
    assert icelandic["is"] == icelandic["isl"] == icelandic["icelandic"] == "is"


@pytest.mark.parametrize("uri, expected", [
    ("http://x.com/en/page.html", "http://x.com/page.html"),
    ("http://x.com/en/", "http://x.com/"),
    ("http://www.dfo-mpo.gc.ca/a/wolffish-loup-at-eng.htm", "http://www.dfo-mpo.gc.ca/a/wolffish-loup-at.htm"),
    ("http://x.com/index_en.html", "http://x.com/index.html"),
    ("http://x.com/EN-US/shop/", "http://x.com/shop/"),
    ("http://x.com/default.asp?lang=En&n=0CD6", "http://x.com/default.asp?n=0CD6"),
    ("http://x.com/p?en=1&a=b", "http://x.com/p?a=b"),
    ("http://x.com/energy/", "http://x.com/energy/"),
    ("http://x.com/p;jsessionid=1?a=x~y;b=2", "http://x.com/p?a=x%7Ey&b=2"),
])
def test_strip_uri_like_the_original(uri, expected):
    stripped, _ = LanguageStripper().strip_uri(uri)
    assert stripped == expected


def test_expected_language_and_query_variables():
    english = LanguageStripper(["en"])
    assert english.strip_uri("http://x.com/fr/page", expected_language="en") == ("", False)
    assert english.strip_uri("http://x.com/fr/page?lang=en", expected_language="en")[1]
    with_keys = LanguageStripper(["en"], strip_query_variables=True)
    assert with_keys.strip_uri("http://d.de/index.php?article_id=7&clang=1")[0] == "http://d.de/index.php?article_id=7"
    assert english.strip_uri("http://d.de/index.php?article_id=7&clang=1") == (
        "http://d.de/index.php?article_id=7&clang=1", False)


def test_four_tries_in_order():
    assert strip_url("http://x.com/en/a", "en") == "http://x.com/a"                 # 1: own language
    assert strip_url("http://x.com/fr-FR/a", "en") == "http://x.com/a"              # 4: any language
    assert strip_url("http://d.de/i.php?id=7&clang=1", "en") == "http://d.de/i.php?id=7"          # 3: query keys
    assert strip_url("http://x.com/plain/page", "en") is None
    assert normalize_url("x.com/a?") == "http://x.com/a" and normalize_url("https://x.com/a") == "https://x.com/a"


def test_pairs_come_in_stage_order_and_greedy_keeps_the_first():
    src = ["http://a.com/en/p", "http://b.com/q", "http://c.com/en/r", "http://c.com/r-en"]
    trg = ["http://a.com/p", "http://b.com/fr/q", "http://c.com/fr/r"]
    pairs = wmt16_pairs(src, trg, "eng", "fra")
    assert list(zip(pairs["src_url"], pairs["trg_url"], pairs["stage"])) == [
        ("http://a.com/en/p", "http://a.com/p", 1),
        ("http://b.com/q", "http://b.com/fr/q", 2),
        ("http://c.com/en/r", "http://c.com/fr/r", 3),
        ("http://c.com/r-en", "http://c.com/fr/r", 3),
    ]
    pool = pd.DataFrame({"lang": ["eng"] * 4 + ["fra"] * 3, "url": src + trg})
    pool["host"] = pool["url"].map(url_host)
    aligned = greedy_one_to_one(wmt16_candidates(pool, "eng", "fra"))
    assert len(aligned) == 3 and "http://c.com/r-en" not in set(aligned["src_url"])
    assert list(aligned["score"]) == [1.0, 0.9, 0.8]


def test_wmt16_baseline_on_the_gold_pool(shared_data):
    gold = read_gold_pairs(shared_data / "wmt16" / "train.pairs")
    pool = gold_pool(gold, "eng", "fra").assign(host=lambda f: f["url"].map(url_host))
    aligned = greedy_one_to_one(wmt16_candidates(pool, "eng", "fra"))
    scores = evaluate_alignment(zip(aligned["src_url"], aligned["trg_url"]), zip(gold["src_url"], gold["trg_url"]))
    assert scores["recall"] > 0.65 and scores["precision"] > 0.99
