"""STRAND handles: LSS lists, token-boundary stripping, learned markers, and JVM/Python agreement."""
import random
import re

import pandas as pd
import pytest
from pyspark.sql import functions as F

from parascout.udfs.common import jvm
from parascout.udfs.rank import handles
from parascout.udfs.rank.handles import (
    build_stripper,
    language_substrings,
    learn_lss,
    plain_stripper,
    strand_pairs,
    url_problem,
)
from testkit.handle_urls import synthetic_urls

EN_FR = build_stripper(("en", "fr"))


def test_lss_lists_have_codes_names_endonyms_locales_and_charsets():
    english, french = set(language_substrings("en")), set(language_substrings("fra"))
    assert {"en", "eng", "english", "en-gb", "en_gb", "en-us", "en-001", "e", "iso-8859-1", "cp1252"} <= english
    assert {"fr", "fra", "fre", "french", "français", "francais", "fran%c3%a7ais", "fr-ca", "fr_ca",
            "fr-be", "f"} <= french
    assert {"koi8-r", "cp1251", "windows-1251", "rus", "ru", "русский"} <= set(language_substrings("ru"))
    assert {"shift_jis", "shift-jis", "euc-jp", "ja", "jpn", "japanese", "日本語"} <= set(language_substrings("ja"))
    assert {"big5", "gb2312", "zh-hant-tw", "zh_hans"} <= set(language_substrings("zh"))
    assert {"is", "isl", "ice", "icelandic", "íslenska", "islenska", "is-is"} <= set(language_substrings("is"))
    assert "gb" not in english  # a country, not a language: left to the learned extension


def test_lss_list_is_user_extensible(tmp_path):
    extra = tmp_path / "lss.yaml"
    extra.write_text("query_keys: [sprache]\nlanguage_keys: [sprachid]\nlanguages:\n  isl:\n"
                     "    extra: [islandic-version]\n    charsets: [x-mac-icelandic]\n")
    stripper = build_stripper(("en", "is"), (str(extra),))
    assert {"islandic-version", "x-mac-icelandic", "x_mac_icelandic"} <= set(stripper.substrings)
    assert stripper.handle("http://a.com/islandic-version/page?sprache=is&sprachid=12") == "a.com/page"
    assert "islandic-version" not in build_stripper(("en", "is")).substrings
    with pytest.raises(FileNotFoundError):
        build_stripper(("en", "is"), (str(tmp_path / "missing.yaml"),))


TOKEN_URLS = [
    "http://example.com/energy/", "http://example.com/frenchfries", "http://example.com/english2/page",
    "http://example.com/fresh/enfr.html", "http://example.com/page?q=eng2&hl=fresh", "http://example.com/defr/",
    "http://frontier.com/entry",
]
TRANSLATION_PAIRS = [
    ("http://example.com/en/about/team.html", "http://example.com/fr/about/team.html"),
    ("http://example.com/page.php?lang=en", "http://example.com/page.php?lang=fr"),
    ("http://example.com/page.php?lang=EN&id=7", "https://example.com/page.php?id=7&lang=FR"),
    ("http://example.com/docs/page-en.html", "http://example.com/docs/page-fr.html"),
    ("http://example.com/docs/page_eng.htm", "http://example.com/docs/page_fra.htm"),
    ("http://en.example.com/news/1", "http://fr.example.com/news/1"),
    ("http://example.com/english/guide/", "http://example.com/francais/guide/"),
    ("http://example.com/English/guide/", "http://example.com/Français/guide/"),
    ("http://example.com/en_US/Main+Site/x.aspx", "http://example.com/fr_CA/Main+Site/x.aspx"),
    ("http://example.com/en-gb/shop", "http://example.com/fr-fr/shop"),
    ("http://example.com/report_e.htm", "http://example.com/report_f.htm"),
    ("http://example.com/page.html", "http://example.com/page.html?lang=fr"),
    ("http://example.com/index.php?article_id=7&clang=1", "http://example.com/index.php?clang=2&article_id=7"),
    ("http://example.com/index.php?lang=1&id=7", "http://example.com/index.php?id=7"),
    ("http://example.com/products/", "http://example.com/fr/products/"),
    ("http://example.com/iso-8859-1/a", "http://example.com/windows-1252/a"),
    ("http://example.com/fran%C3%A7ais/a", "http://example.com/english/a"),
    ("http://example.com/en/a#top", "http://example.com/fr/a#haut"),
]


@pytest.mark.parametrize("url", TOKEN_URLS)
def test_lss_are_stripped_only_as_tokens(url):
    assert EN_FR.handle(url) == url.split("://", 1)[1].replace("?", "&")


@pytest.mark.parametrize("src, trg", TRANSLATION_PAIRS)
def test_translations_get_equal_handles(src, trg):
    assert EN_FR.handle(src) == EN_FR.handle(trg)


def test_different_pages_keep_different_handles():
    assert EN_FR.handle("http://example.com/en/a.html") != EN_FR.handle("http://example.com/fr/b.html")
    assert EN_FR.handle("http://example.com/en/a.html") != EN_FR.handle("http://other.com/fr/a.html")
    assert EN_FR.handle("http://x.com/p?id=1&lang=en") != EN_FR.handle("http://x.com/p?id=2&lang=fr")


def test_alternation_matches_like_a_longest_first_flat_alternation():
    rng = random.Random(7)
    words = {"".join(rng.choice("ab-c") for _ in range(rng.randint(1, 4))) for _ in range(60)}
    trie = re.compile(f"/(?:{handles.alternation(words)})(?![^/])")
    flat = re.compile("/(?:" + "|".join(map(re.escape, sorted(words, key=len, reverse=True))) + ")(?![^/])")
    for _ in range(500):
        text = "/".join("".join(rng.choice("ab-c") for _ in range(rng.randint(0, 5))) for _ in range(4))
        assert trie.sub("", text) == flat.sub("", text), text


def test_naive_stripper_only_knows_its_tokens():
    naive = plain_stripper(["en", "fr"])
    assert naive.handle("http://x.com/en/a") == naive.handle("http://x.com/fr/a") == "x.com/a"
    assert naive.handle("http://x.com/english/a") != naive.handle("http://x.com/francais/a")


PROBLEM_URLS = [
    ("", "empty_url"), (None, "empty_url"), ("   ", "empty_url"),
    ("http://x.com/" + "a" * 9000, "url_too_long"),
    ("not a url", "unparsable_url"), ("http://", "unparsable_url"), ("http:///path", "unparsable_url"),
    ("http://host:99999/", "unparsable_url"), ("http://[::1/x", "unparsable_url"), ("http://a b.com/", "unparsable_url"),
    ("http://x.com/fr/", None), ("http://user:pw@x.com:8080/en?a=1#f", None), ("http://[::1]:80/fr/", None),
    ("http://bücher.de/en/", None), ("http://xn--bcher-kva.de/en/", None), ("http://x.com/a%20b/fr", None),
]


@pytest.mark.parametrize("url, reason", PROBLEM_URLS)
def test_url_problems(url, reason):
    assert url_problem(url) == reason


def test_url_flags_count_idn_hosts_and_percent_encoding():
    assert handles.url_flags("http://bücher.de/en/") == ["idn_host"]
    assert handles.url_flags("http://xn--bcher-kva.de/fran%C3%A7ais/") == ["idn_host", "percent_encoded"]
    assert handles.url_flags("http://x.com/a") == []
    assert EN_FR.handle("http://bücher.de/en/x") == EN_FR.handle("http://BÜCHER.de/fr/x") == "bücher.de/x"


def _host_urls(host, marker, lang, n, start=0):
    return [(host, f"http://{host}/{marker}/item-{i}.html", lang) for i in range(start, start + n)]


def test_learned_lss_finds_host_specific_markers():
    rows = _host_urls("shop.example", "gb", "eng", 20) + _host_urls("shop.example", "frx", "fra", 18)
    rows += [("shop.example", "http://shop.example/gb/frx-story.html", "eng")]  # 'frx' in 1 of 21 English URLs
    rows += _host_urls("small.example", "gb", "eng", 3) + _host_urls("small.example", "frx", "fra", 3)
    frame = pd.DataFrame(rows, columns=["host", "url", "lang"])
    learned = learn_lss(frame, "eng", "fra", EN_FR.known)
    found = {(r.host, r.token, r.lang) for r in learned.itertuples()}
    assert ("shop.example", "gb", "eng") in found and ("shop.example", "frx", "fra") in found
    assert not any(token in {"item", "html"} for _, token, _ in found)  # in both languages' URLs
    assert not any(host == "small.example" for host, _, _ in found)  # under min_support
    pairs, stats, _ = handles.strand_candidates(frame, EN_FR, "eng", "fra", learn=True)
    assert ("http://shop.example/gb/item-3.html", "http://shop.example/frx/item-3.html") in set(
        zip(pairs["src_url"], pairs["trg_url"]))
    without, _, _ = handles.strand_candidates(frame, EN_FR, "eng", "fra", learn=False)
    assert without.empty and stats["learned_tokens"] >= 2 and stats["hosts_with_learned_tokens"] == 1


def test_learned_tokens_keep_key_value_and_skip_known_lss():
    assert handles.learnable_tokens("http://h.de/index.php?article_id=1084&clang=1#x") == {
        "index", "php", "article", "id=1084", "clang=1"}
    assert handles.is_known_token("lang=fr", EN_FR.known) and handles.is_known_token("en", EN_FR.known)
    assert not handles.is_known_token("clang=1", EN_FR.known)
    assert handles.is_known_token("clang=1", EN_FR.known, EN_FR.language_keys)


def test_strand_pairs_cap_buckets_and_count():
    rows = [("c.com", f"http://c.com/{m}/p", "eng") for m in ("en", "english", "eng")]
    rows += [("c.com", f"http://c.com/{m}/p", "fra") for m in ("fr", "francais")]
    rows += [("c.com", "http://c.com/en/alone", "eng")]
    frame = pd.DataFrame(rows, columns=["host", "url", "lang"])
    frame["handle"] = EN_FR.handles(frame["url"])
    pairs, stats = strand_pairs(frame, "eng", "fra", max_bucket=2)
    assert len(pairs) == 4 and set(pairs["handle"]) == {"c.com/p"}
    assert stats == {"buckets": 2, "buckets_with_both_languages": 1, "capped_buckets": 1, "urls_capped": 1,
                     "largest_bucket": 5, "candidate_pairs": 4}
    assert pairs["score"].between(0, 1).all()


@pytest.mark.slow
def test_jvm_and_python_agree(spark, shared_data):
    from pyspark.sql import functions as F

    urls = [line.split()[i] for line in (shared_data / "wmt16" / "train.pairs").read_text().splitlines()
            for i in (0, 1) if len(line.split()) == 2]
    urls += ["http://x.com/index.php?lang=EN&id=3", "HTTP://X.COM/FRANÇAIS/a", "http://x.com/Fran%C3%A7ais/a?hl=FR#x",
             "http://bücher.de/en/", "http://x.com/İstanbul/en", "http://[::1]:80/fr/", "http://a@b@host/fr",
             "http://host:65535/fr", "http://host:65536/fr", "ftp://x", "not a url", "", "http:///x",
             "http://x.com/a b/en/", "http://x.com/" + "e/" * 5000, "http://x.com/p?x=1&lang=fr&y=2;hl=en"]
    frame = spark.createDataFrame([(u,) for u in urls], "url string")
    url = F.col("url")
    rows = frame.select("url", handles.handle_column(url, EN_FR).alias("handle"),
                        handles.url_problem_column(url).alias("problem"),
                        handles.learnable_tokens_column(url, EN_FR.known, EN_FR.language_keys).alias("tokens")).collect()
    for row in rows:
        assert row["problem"] == url_problem(row["url"]), row["url"]
        assert row["handle"] == EN_FR.handle(row["url"]), row["url"]
        assert set(row["tokens"]) == {t for t in handles.learnable_tokens(row["url"])
                                      if not handles.is_known_token(t, EN_FR.known, EN_FR.language_keys)}, row["url"]
    learned = spark.createDataFrame([("h", t) for t in ("gb", "clang=1", "frx", "a")], "host string, token string")
    pattern = learned.groupBy("host").agg(handles.learned_pattern_column(F.col("token")).alias("p")).first()["p"]
    assert pattern == handles.learned_pattern(["gb", "clang=1", "frx", "a"])


# ---- the Java UDF (jvm/, udfs/parascout-udfs.jar) against the Python handle ---------------------------
ODD_URLS = [
    "", "x", "/", "://", "http://", "http:///", "://en", "en://fr", "http://en", "HTTP://EN/FR", "fr", "/fr", "//fr",
    "x/fr", "mailto:en@fr.com", "http://x.com//en//fr//", "http://x.com/en/fr/en", "http://x.com/" + "/" * 50 + "fr",
    "http://x.com/en-gb/", "http://x.com/en-gb-x/", "http://x.com/EN_GB.html", "http://x.com/fr-FR-x/",
    "http://x.com/iso-8859-1/", "http://x.com/iso-8859-1x/", "http://x.com/iso_8859_1.htm", "http://x.com/utf-8/en",
    "http://x.com/fran%C3%A7ais", "http://x.com/fran%c3%a7aisx", "http://x.com/Français/", "http://x.com/inglés",
    "http://x.com/#", "http://x.com/a#en", "http://x.com/a?#", "http://x.com/#/en?x", "http://x.com/a/#fr#en",
    "http://x.com/?lang=", "http://x.com/?lang=en=fr", "http://x.com/?lang=fr&", "http://x.com/?lang=fr?x=1",
    "http://x.com/?clang=&x", "http://x.com/?clang=1;x=2", "http://x.com/?CLANG=2#x", "http://x.com/?clang",
    "http://x.com/?lang_code=fr", "http://x.com/?language=english&languages=fr", "http://x.com/?langid=fr-ca",
    "http://x.com/page?hl=fr?x", "http://x.com/?l=en", "http://x.com/??en", "http://x.com/&&fr", "http://x.com/?=fr",
    "http://x.com/.en.", "http://x.com/-en-", "http://x.com/~fr~", "http://x.com/:fr:", "http://x.com/+fr+",
    "http://x.com/,fr,", "http://x.com/;fr;", "http://x.com/=fr=", "http://x.com/en,fr", "http://x.com/?lang=en/fr",
    "http://x.com/İstanbul/en", "http://x.com/\U0001F600/en", "\U0001F600http", "\U0001F600", "\U0001F600\U0001F600/fr",
    "http://x.com/ÉN/FR", "http://x.com/english2/", "http://x.com/a b/en/", "http://x.com/en\n/fr", "http://x.com/en\t",
    "HTTP://X.COM/EN?LANG=FR#TOP", "http://x.com/" + "en/" * 3000, "http://[::1]:80/fr/", "http://u:p@en.x.com:80/en",
    "http://x.com/ΣΑΣ/en", "http://x.com/русский/ru", "http://x.com/日本語/ja-jp", "http://x.com/%E6%97%A5/zh-hant-tw",
]


def _convention_urls(stripper, rng: random.Random) -> list[str]:
    """Every LSS word of a stripper in every URL convention: tokens, key=value, hosts, fragments, near-misses."""
    words, keys = list(stripper.substrings), list(stripper.query_keys) + list(stripper.language_keys)
    shapes = ["http://h.com/{w}/p", "http://h.com/p-{w}.html", "http://h.com/p_{W}.htm", "http://{w}.h.com/",
              "http://h.com/p?{k}={w}", "http://h.com/p?id=3&{K}={W}#x", "http://h.com/{w}x/p", "http://h.com/x{w}/",
              "http://h.com//{w}//{v}//", "http://h.com/{w}-{v}/", "http://h.com/p#{w}", "h.com/{w}", "{w}",
              "http://h.com/{k}={w}{v}", "http://h.com/p?{k}=1;{w}", "http://h.com/{w}.{v}.{w}"]
    return [rng.choice(shapes).format(w=word, W=word.upper(), v=rng.choice(words), k=rng.choice(keys),
                                      K=rng.choice(keys).upper())
            for word in words for _ in range(4)]


@pytest.fixture(scope="module")
def jvm_udf(spark):
    """The session with the Java UDF registered; skips where `make jar` has not built the jar."""
    if jvm.jvm_jar_path() is None:
        pytest.skip(f"{jvm.JVM_JAR} not built (`make jar`, needs javac): the Java UDF cannot be tested")
    assert handles.jvm_handles_available(spark), "the jar is built but the session cannot load the UDF"
    return spark


def _spark_handles(spark, stripper, urls, **options) -> list:
    frame = spark.createDataFrame([(u,) for u in urls], "url string")
    return [row[0] for row in frame.select(handles.handle_column(F.col("url"), stripper, **options)).collect()]


def _disagreements(spark, stripper, urls, **options) -> list:
    computed = _spark_handles(spark, stripper, urls, **options)
    return [(url, got, stripper.handle(url)) for url, got in zip(urls, computed) if got != stripper.handle(url)]


def _test_urls() -> list[str]:
    """The URLs of this file's other tests."""
    pairs = [url for pair in TRANSLATION_PAIRS for url in pair]
    return [*TOKEN_URLS, *pairs, *(url for url, _ in PROBLEM_URLS if url is not None), "http://BÜCHER.de/fr/x"]


@pytest.mark.slow
def test_java_udf_agrees_with_python_on_test_urls_synthetic_urls_and_odd_cases(jvm_udf):
    urls = _test_urls() + ODD_URLS + synthetic_urls(20_000, seed=5)
    column = handles.handle_column(F.col("url"), EN_FR)
    assert handles.JVM_HANDLE_FUNCTION in str(column)
    assert _disagreements(jvm_udf, EN_FR, urls) == []
    assert _spark_handles(jvm_udf, EN_FR, [None]) == [None]


@pytest.mark.slow
@pytest.mark.parametrize("pair", [("en", "fr"), ("en", "is"), ("ru", "zh")])
def test_java_udf_agrees_with_python_on_every_lss_word(jvm_udf, pair):
    stripper = build_stripper(pair)
    urls = _convention_urls(stripper, random.Random(11)) + ODD_URLS
    assert len(stripper.substrings) > 90 and len(urls) > 400
    assert _disagreements(jvm_udf, stripper, urls) == []


@pytest.mark.slow
def test_java_udf_keeps_learned_patterns_as_a_second_regex(jvm_udf):
    learned = handles.learned_pattern(["gb", "frx", "clang=1"])
    urls = ["http://gb.x.com/gb/item.html", "http://x.com/frx/a?clang=1", "gb.x.com/gb", "xgb/frx", "http://en",
            "http://x.com/en/gb", "http://x.com/gbx/", "", "http://x.com/fr/#gb"]
    rows = [(url, learned if i % 4 else None) for i, url in enumerate(urls)]
    frame = jvm_udf.createDataFrame(rows, "url string, p string")
    for use_jvm_udf in (True, False):
        rows = frame.select("url", "p", handles.handle_column(F.col("url"), EN_FR, F.col("p"), use_jvm_udf)
                            .alias("handle")).collect()
        assert [r["handle"] for r in rows] == [EN_FR.handle(r["url"], re.compile(r["p"]) if r["p"] else None)
                                               for r in rows], use_jvm_udf


@pytest.mark.slow
def test_regex_fallback_agrees_when_forced_or_when_the_class_is_missing(spark, monkeypatch):
    urls = ODD_URLS + synthetic_urls(2_000, seed=6)
    forced = handles.handle_column(F.col("url"), EN_FR, use_jvm_udf=False)
    assert "regexp_replace" in str(forced) and handles.JVM_HANDLE_FUNCTION not in str(forced)
    assert _disagreements(spark, EN_FR, urls, use_jvm_udf=False) == []
    monkeypatch.setattr(handles, "JVM_HANDLE_CLASS", "parascout.NoSuchClass")
    monkeypatch.setattr(handles, "JVM_HANDLE_FUNCTION", "parascout_no_such_function")
    assert not handles.jvm_handles_available(spark)
    assert "regexp_replace" in str(handles.handle_column(F.col("url"), EN_FR))
    assert _disagreements(spark, EN_FR, urls[:200]) == []


def test_jvm_spec_refuses_words_with_its_separators():
    assert EN_FR.jvm_spec.count(b"\x1e") == 2 and b"en-gb" in EN_FR.jvm_spec.split(b"\x1e")[0].split(b"\x1f")
    with pytest.raises(ValueError):
        _ = plain_stripper(["en\x1ffr"]).jvm_spec


@pytest.mark.slow
def test_column_by_pair_takes_each_rows_pair_stripper(spark):
    strippers = {"eng-fra": EN_FR, "eng-deu": build_stripper(("en", "de")), "fra-eng": EN_FR}
    urls = ["http://x.com/fr/a", "http://x.com/de/a", "http://x.com/deutsch/b?lang=fr"]
    rows = [(label, url) for label in strippers for url in urls]
    frame = spark.createDataFrame(rows, "lang_pair string, url string")
    column = handles.column_by_pair("lang_pair", strippers, lambda stripper: handles.handle_column(F.col("url"), stripper))
    found = frame.select("lang_pair", "url", column.alias("handle")).collect()
    assert [row["handle"] for row in found] == [strippers[label].handle(url) for label, url in rows]
    assert "CASE WHEN" not in str(handles.column_by_pair("lang_pair", {"eng-fra": EN_FR},
                                                         lambda stripper: handles.handle_column(F.col("url"), stripper)))
