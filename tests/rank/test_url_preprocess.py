"""URL preprocessing of the URL models (the paper's): normalisation, pre-tokenisation, pair text,
and the vectorised n-gram tokeniser agreeing with the regex on real URLs."""
import numpy as np
import pytest

from parascout.udfs.rank.url_models.ngram_features import NgramSpec, featurize
from parascout.udfs.rank.url_models.ngram_pairs import pair_features
from parascout.udfs.rank.url_models.preprocess import (
    normalize_url,
    pair_text,
    preprocess_url,
    resource_start,
    url_tokens,
)


def wmt16_urls(shared_data) -> list[str]:
    urls = []
    for line in (shared_data / "wmt16" / "train.pairs").read_text().splitlines():
        fields = line.split()
        if len(fields) == 2:
            urls.extend(fields)
    return urls


@pytest.mark.parametrize("raw, expected", [
    ("http://www.example.com/", "www.example.com"),
    ("https://example.com/a/b///", "example.com/a/b"),
    ("ftp://example.com/file", "example.com/file"),
    ("example.com/no-scheme/", "example.com/no-scheme"),
    ("http://example.com/caf%C3%A9/r%C3%A9sum%C3%A9", "example.com/café/résumé"),
    ("http://example.com/%E9t%E9", "example.com/\\xe9t\\xe9"),          # latin-1 bytes kept visible
    ("http://example.com/a%20%20b%09c", "example.com/a b c"),           # decoded blanks collapsed
    ("http://example.com/p?a=1&amp;b=&#233;&#x41;", "example.com/p?a=1&b=éA"),
    ("http://example.com/p?x=1&lang=fr&copy=2", "example.com/p?x=1&lang=fr&copy=2"),  # no ';': not an entity
    ("http://xn--bcher-kva.example/xn--not-a-host", "bücher.example/xn--not-a-host"),
    ("http://xn--invalid-.example/", "xn--invalid-.example"),
])
def test_normalize_url_handles_protocol_encodings_entities_and_idn(raw, expected):
    assert normalize_url(raw) == expected


def test_preprocess_matches_the_paper_tokenisation_on_a_real_wmt16_url(shared_data):
    url = "http://bugadacargnel.com/en/pages/artistes.php?name=18492&page=portfolio&categ=54"
    assert url in wmt16_urls(shared_data)
    assert preprocess_url(url) == ("bugadacargnel . com / en / pages / artistes . php ? name = 18492 "
                                   "& page = portfolio & categ = 54")
    # letters, digit runs, underscore runs and punctuation runs are separate tokens; '/' stays a token
    assert url_tokens("virtualhospice.ca/en_US/x__y/0CD66675-1/?q") == [
        "virtualhospice", ".", "ca", "/", "en", "_", "US", "/", "x", "__", "y", "/", "0", "CD", "66675", "-", "1",
        "/?", "q"]
    assert preprocess_url("http://ex.com/日本語/ページ?q=テスト") == "ex . com / 日本語 / ページ ? q = テスト"
    assert preprocess_url(None or "") == ""


def test_every_real_url_preprocesses_to_its_space_separated_tokens(shared_data):
    for url in wmt16_urls(shared_data):
        text = preprocess_url(url)
        assert text and "  " not in text and not text.startswith("http")
        assert text.replace(" ", "") == normalize_url(url).replace(" ", "")


def test_pair_text_uses_the_tokenizer_separator():
    assert pair_text("http://a.com/en/x/", "http://a.com/fr/x") == "a . com / en / x </s> a . com / fr / x"
    assert pair_text("http://a.com/en", "http://a.com/fr", separator="[SEP]") == "a . com / en [SEP] a . com / fr"


def test_resource_start_skips_scheme_and_authority():
    assert resource_start("http://a.com/x/y") == len("http://a.com/")
    assert resource_start("http://a.com") == len("http://a.com")
    assert resource_start("a.com/x") == len("a.com/")


def test_vectorised_tokeniser_agrees_with_the_regex(shared_data):
    tricky = ["http://xn--bcher-kva.example/ü_12a%20b", "http://ex.com/a٣b/c̈d", "http://例え.jp/テスト/ページ",
              "http://ex.com/\u00a0nbsp\u2003em", "http://ex.com/"]
    texts = [normalize_url(u) for u in wmt16_urls(shared_data) + tricky]
    batch = featurize(texts, NgramSpec(lowercase=False))
    per_url = np.bincount(batch.token_url, minlength=len(texts))
    assert per_url.tolist() == [len(url_tokens(t)) for t in texts]
    # the same token gets the same hash wherever it occurs
    again = featurize(["zz/" + texts[0]], NgramSpec(lowercase=False))
    assert set(batch.token_hash[batch.token_url == 0]) <= set(again.token_hash)


def test_ngram_features_are_deterministic_and_grouped_by_url():
    spec = NgramSpec(buckets=1 << 12)
    texts = [normalize_url(u) for u in ("http://a.com/en/news", "http://b.org/fr/actualites", "")]
    first, second = featurize(texts, spec), featurize(list(texts), spec)
    assert np.array_equal(first.buckets, second.buckets)
    assert first.counts.sum() == len(first.buckets) and (first.buckets < spec.buckets).all()
    assert first.counts[2] > 0                       # an empty URL still has its boundary n-gram
    alone = featurize(texts[1:2], spec)
    offsets = first.offsets
    assert np.array_equal(alone.buckets, first.buckets[offsets[1]: offsets[1] + first.counts[1]])


def test_pair_features_see_the_substituted_language_code():
    src = [normalize_url("http://a.com/en/news/2010/report.html"), normalize_url("http://a.com/en/news/1")]
    trg = [normalize_url("http://a.com/fr/news/2010/report.html"), normalize_url("http://a.com/en/other/2")]
    bags, dense = pair_features(src, trg, NgramSpec(buckets=1 << 12))
    from parascout.udfs.rank.url_models.ngram_pairs import PAIR_BAGS, PAIR_DENSE

    assert len(bags) == len(PAIR_BAGS) and dense.shape == (2, len(PAIR_DENSE))
    column = {name: i for i, name in enumerate(PAIR_DENSE)}
    assert dense[0, column["only_markers_differ"]] == 1 and dense[1, column["only_markers_differ"]] == 0
    assert dense[0, column["single_substitution"]] == 1 and dense[1, column["single_substitution"]] == 0
    assert dense[0, column["token_jaccard"]] > dense[1, column["token_jaccard"]]


def test_cross_bag_holds_every_pair_of_differing_tokens():
    from parascout.udfs.rank.url_models.ngram_pairs import PAIR_BAGS

    spec = NgramSpec(buckets=1 << 20, cross_bag=True)
    src = [normalize_url("http://a.com/en/news/germany-economy"), normalize_url("http://a.com/x/y"),
           normalize_url("http://b.com/fr/nouvelles/allemagne-economie")]
    trg = [normalize_url("http://a.com/fr/nouvelles/allemagne-economie"), normalize_url("http://a.com/x/y"),
           normalize_url("http://b.com/en/news/germany-economy")]
    bags, _ = pair_features(src, trg, spec)
    assert len(bags) == len(PAIR_BAGS) + 1
    indices, offsets = bags[-1]
    # pair 0: {en, news, germany, economy} x {fr, nouvelles, allemagne, economie}; pair 1: identical URLs, empty bag
    assert offsets.tolist() == [0, 16, 16] and len(indices) == 32
    assert len(set(indices[:16].tolist())) == 16
    # direction matters: (news -> nouvelles) is not (nouvelles -> news)
    assert set(indices[:16].tolist()).isdisjoint(indices[16:].tolist())
    # the same word pair on another host hashes to the same bucket (what lets it carry over to unseen sites)
    same_words = pair_features([normalize_url("http://c.org/news")], [normalize_url("http://c.org/nouvelles")], spec)[0]
    assert same_words[-1][0][0] in indices[:16]


def test_models_saved_without_the_cross_bag_still_load(tmp_path):
    from parascout.udfs.rank.url_models.ngram import NgramUrlModel

    old = NgramUrlModel.create("pairs", ["non-parallel", "parallel"], NgramSpec(buckets=1 << 12, dim=8))
    old.save(tmp_path)
    loaded = NgramUrlModel.load(tmp_path)
    assert loaded.spec.cross_bag is False
    urls = ["http://a.com/en/x", "http://a.com/en/y"]
    assert loaded.predict_parallel(urls, ["http://a.com/fr/x", "http://a.com/fr/z"]).tolist() == \
        old.predict_parallel(urls, ["http://a.com/fr/x", "http://a.com/fr/z"]).tolist()
