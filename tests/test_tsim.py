"""tsim (STRAND eq. 4) on hand-checkable examples, its IDF variant and the companion features."""
from __future__ import annotations

import pytest

from parascout.udfs.lexicon import Lexicon
from parascout.udfs.tsim import (
    candidate_links,
    content_features,
    inverse_document_frequencies,
    overlap,
    page_text,
    tsim,
)

LEXICON = Lexicon("eng", "fra", {"the": {"le": 0.5}, "cat": {"chat": 0.9}, "on": {"sur": 0.8},
                                 "mat": {"tapis": 0.7}})


def page(text: str, lang: str = "eng", paragraph_lang: str | None = None):
    paragraphs = [{"text": line, "type": "text", "lang": paragraph_lang or lang, "boilerplate": False}
                  for line in text.split("\n")]
    return page_text(paragraphs, lang)


def test_tsim_counts_two_word_links_among_all_links():
    # the/le twice, cat/chat, on/sur, mat/tapis: 5 two-word links; sat and était: 2 one-word links
    plain, weighted = tsim(page("The cat sat on the mat."), page("Le chat était sur le tapis.", "fra"), LEXICON)
    assert plain == pytest.approx(5 / 7) and weighted is None
    # without a lexicon only identical strings link
    assert tsim(page("The cat sat on the mat."), page("Le chat était sur le tapis.", "fra"), None)[0] == 0.0
    assert tsim(page("Paris 2019"), page("Paris 2019", "fra"), None)[0] == 1.0
    assert tsim(page(""), page("Paris", "fra"), LEXICON) == (None, None)


def test_competitive_linking_takes_the_best_link_first():
    lexicon = Lexicon("eng", "fra", {"a": {"x": 0.9, "y": 0.8}, "b": {"x": 0.7}})
    # a-x (0.9) is taken first, so b-x and a-y are blocked: 1 two-word link, 2 one-word links
    # (a maximum matching would link a-y and b-x; STRAND approximates it by competitive linking)
    assert tsim(page("a b"), page("x y", "fra"), lexicon)[0] == pytest.approx(1 / 3)
    links = candidate_links(page("a b nationalisation"), page("x y nationalisations", "fra"), lexicon)
    assert [(s, t) for _, s, t in links] == [("a", "x"), ("nationalisation", "nationalisations"), ("a", "y"),
                                             ("b", "x")]
    assert links[1][0] == pytest.approx(0.9 * 30 / 31)  # a cognate: Indel similarity × 0.9


def test_tsim_idf_weighs_rare_words_up():
    src, trg = page("the the the cat"), page("le le le chien", "fra")
    idf = {"the": 0.1, "le": 0.1, "cat": 3.0, "chien": 3.0}
    plain, weighted = tsim(src, trg, LEXICON, idf, idf)
    assert plain == pytest.approx(3 / 5)  # three the/le links, cat and chien alone
    assert weighted == pytest.approx(0.3 / (0.3 + 6.0))


def test_diagonal_share_is_the_share_of_links_in_the_same_place():
    lexicon = Lexicon("eng", "fra", {w: {w + "x": 0.9} for w in "abcdefghij"})
    same_order = content_features(page("a b c d e\nf g h i j"), page("ax bx cx dx ex\nfx gx hx ix jx", "fra"), lexicon)
    assert same_order["tsim"] == 1.0 and same_order["diagonal_share"] == 1.0
    # a listing page of the same section: the shared teasers (f..j) sit where the other page lists other items
    shifted = content_features(page("a b c d e\nf g h i j"), page("fx gx hx ix jx\nk l m n o", "fra"), lexicon)
    assert shifted["diagonal_share"] == 0.0 and 0 < shifted["tsim"] < 1
    assert content_features(page("a"), page("k", "fra"), lexicon)["diagonal_share"] is None  # nothing linked


def test_idf_rare_words_and_overlaps():
    pages = [page("Zorglub met the cat"), page("Zorglub rencontre le chat", "fra"), page("the cat"),
             page("the dog")]
    idf, unseen, rare = inverse_document_frequencies(pages)
    assert idf["the"] < idf["zorglub"] < unseen and "zorglub" in rare and "the" not in rare
    assert overlap({"1", "2"}, {"2"}) == pytest.approx(2 / 3) and overlap(set(), set()) is None


def test_content_features_of_a_pair():
    src = page("Zorglub met the cat in 2019.\nThe cat sat on the mat.\nAnother line here", "eng")
    trg = page("Zorglub a vu le chat en 2019.\nLe chat était sur le tapis.\nCeci est une autre ligne", "fra",
               paragraph_lang="eng")
    features = content_features(src, trg, LEXICON, rare={"zorglub"})
    assert features["number_overlap"] == 1.0 and features["rare_overlap"] == 1.0
    assert features["text_paragraph_ratio"] == 1.0 and features["paragraph_length_r"] > 0.9
    assert features["src_lang_share"] == 1.0 and features["trg_lang_share"] == 0.0  # CLD2 said eng on a fra page
    assert features["src_words"] == 15 and 0 < features["tsim"] < features["short_side_coverage"] < 1
