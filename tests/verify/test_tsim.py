"""tsim (STRAND eq. 4) on hand-checkable examples, its IDF variant and the companion features; the host vocabulary
of integer ids gives exactly the features of the string-based path it replaced."""
from __future__ import annotations

import gzip
import itertools

import pandas as pd
import pytest

from parascout.udfs.lexicon.lexicon import MATCHING, Lexicon, WordMatching, cognate
from parascout.udfs.lexicon.readers import read_aligned_files
from parascout.udfs.lexicon.training import train_lexicon
from parascout.udfs.verify.tsim import (
    Vocabulary,
    candidate_links,
    content_features,
    cross_fitted_pairs,
    inverse_document_frequencies,
    overlap,
    page_text,
    tsim,
)
from parascout.udfs.verify.verification_config import VerificationConfig
from testkit.verify_reference import current_content, previous_content, same_features

LEXICON = Lexicon("eng", "fra", {"the": {"le": 0.5}, "cat": {"chat": 0.9}, "on": {"sur": 0.8},
                                 "mat": {"tapis": 0.7}})


def page(text: str, lang: str = "eng"):
    paragraphs = [{"text": line, "type": "text", "lang": lang, "boilerplate": False}
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


def test_an_inflected_form_the_lexicon_lacks_links_through_its_stem():
    lexicon = Lexicon("eng", "deu", {"king": {"könig": 0.8}, "house": {"haus": 0.6}, "kings": {"könige": 0.7}})
    links = candidate_links(page("the kings houses"), page("der könige hauses haus", "deu"), lexicon)
    # kings and könige are known: exact, no back-off; houses -> house -> haus exact, hauses -> haus: both stand in
    assert [(s, t) for _, s, t in links] == [("kings", "könige"), ("houses", "haus"), ("houses", "hauses")]
    assert [score for score, _, _ in links] == pytest.approx([0.7, 0.6 * MATCHING.stem_weight, 0.6 * MATCHING.stem_weight ** 2])
    assert candidate_links(page("kingdoms"), page("königreich", "deu"), lexicon) == []  # 4 letters beyond "king"
    plain = tsim(page("the kings houses"), page("der könige hauses", "deu"), Lexicon("eng", "deu", {}))[0]
    assert tsim(page("the kings houses"), page("der könige hauses", "deu"), lexicon)[0] > plain


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
    trg = page("Zorglub a vu le chat en 2019.\nLe chat était sur le tapis.\nCeci est une autre ligne", "fra")
    features = content_features(src, trg, LEXICON, rare={"zorglub"})
    assert features["number_overlap"] == 1.0 and features["rare_overlap"] == 1.0
    assert features["text_paragraph_ratio"] == 1.0 and features["paragraph_length_r"] > 0.9
    assert "src_lang_share" not in features  # the pages' languages are verification's (HostPages.language_shares)
    assert features["src_words"] == 15 and 0 < features["tsim"] < features["short_side_coverage"] < 1


def test_pages_of_other_vocabularies_link_as_in_one():
    # a page made without the host's vocabulary (a spliced or partial text) is re-indexed into it
    host = Vocabulary()
    src = page_text([{"text": "The international cat sat on the mat in 2019."}], "eng", vocabulary=host)
    trg = page_text([{"text": "Le chat international était sur le tapis en 2019."}], "fra", vocabulary=host)
    alone = page_text([{"text": "Le chat international était sur le tapis en 2019."}], "fra")
    assert alone.vocabulary is not host and src.vocabulary is trg.vocabulary is host
    idf = inverse_document_frequencies([src, trg])[0]
    expected = content_features(src, trg, LEXICON, idf, idf)
    assert content_features(src, alone, LEXICON, idf, idf) == expected
    assert content_features(alone, src, LEXICON.reversed(), idf, idf)["tsim"] == expected["tsim"]
    assert expected["tsim"] == pytest.approx(7 / 11)  # the/le ×2, cat/chat, on/sur, mat/tapis, 2019, international


def test_the_verification_configs_tsim_knobs_reach_the_linking():
    def features(config: VerificationConfig) -> dict:
        host = Vocabulary(config)
        src = page_text([{"text": "The nationalisation of the railways began in 1948 and ended late."}], "eng",
                        vocabulary=host)
        trg = page_text([{"text": "Late ended and 1948 in began railways the of nationalisations the."}], "eng",
                        vocabulary=host)
        idf = inverse_document_frequencies([src, trg], config)[0]
        return {**content_features(src, trg, None, idf, idf), "cognate": max(host.cognates().scores, default=0.0),
                "words": src.words}

    default = features(VerificationConfig())
    assert default["cognate"] == pytest.approx(0.9 * cognate("nationalisation", "nationalisations"))
    assert features(VerificationConfig(cognate_weight=0.5))["cognate"] == pytest.approx(default["cognate"] * 5 / 9)
    assert features(VerificationConfig(tsim_max_words=4))["words"] == 4 < default["words"]
    # the second page is the first one reversed: few links on the diagonal, all of them with a band of 1
    assert default["diagonal_share"] < 0.5 and features(VerificationConfig(diagonal_band=1.0))["diagonal_share"] == 1
    looser = VerificationConfig(matching=WordMatching(cognate_min_similarity=0.5, cognate_min_chars=4))
    assert cognate("table", "tafel") == 0 < cognate("table", "tafel", looser.matching)  # similarity 0.6
    assert features(VerificationConfig(matching=WordMatching(cognate_min_chars=20)))["cognate"] == 0.0
    # a name on 4 of a host's 100 pages: rare only when rare_max_docs lets it be
    pages = [page_text([{"text": f"page {n} {'Reykjavik' if n < 4 else ''}"}], "eng") for n in range(100)]
    assert "reykjavik" not in inverse_document_frequencies(pages)[2]
    assert "reykjavik" in inverse_document_frequencies(pages, VerificationConfig(rare_max_docs=4))[2]
    assert "reykjavik" not in inverse_document_frequencies(pages, VerificationConfig(rare_max_docs=4,
                                                                                     rare_max_share=0.03))[2]


def test_a_host_vocabulary_that_grows_rebuilds_what_it_derived():
    host = Vocabulary()
    src = page_text([{"text": "nationalisation"}], "eng", vocabulary=host)
    first = page_text([{"text": "autre"}], "fra", vocabulary=host)
    assert candidate_links(src, first, None) == []  # the src page's links are built here, for 2 words
    later = page_text([{"text": "nationalisations"}], "fra", vocabulary=host)  # a new cognate joins the host
    assert [(s, t) for _, s, t in candidate_links(src, later, None)] == [("nationalisation", "nationalisations")]


def bible_host(bible, lang: str, chapters: int):
    """The first `chapters` chapters of Genesis both files hold, in English and `lang`, as one host's pages (a page
    per chapter, 3 verses per paragraph, a boilerplate menu), each English chapter paired with its translation and
    two other chapters, and a lexicon trained on 2,000 other verses."""
    verses: dict[tuple[str, int], list[str]] = {}
    for code in ("eng", lang):
        with gzip.open(bible / f"{code}.tsv.gz", "rt", encoding="utf-8") as handle:
            for line in handle:
                verse_id, text = line.rstrip("\n").split("\t", 1)
                book, chapter = verse_id.split(".")[1:3]
                if book == "GEN":
                    verses.setdefault((code, int(chapter)), []).append(text)
    both = sorted(chapter for code, chapter in verses if code == lang and ("eng", chapter) in verses)[:chapters]
    host = f"bible-{lang}.example"
    pages = []
    for code, chapter in itertools.product(("eng", lang), both):
        texts = verses[(code, chapter)]
        paragraphs = [{"text": "Home | Books | 2024", "type": "list_item", "lang": code, "boilerplate": True}]
        paragraphs += [{"text": " ".join(texts[k:k + 3]), "type": "text", "lang": code, "boilerplate": False}
                       for k in range(0, len(texts), 3)]
        pages.append({"url": f"https://{host}/{code}/{chapter}", "text_paragraphs": paragraphs, "main_text": None,
                      "cld2_lang": code})
    pairs = [{"host": host, "src_url": f"https://{host}/eng/{both[k]}", "trg_url": f"https://{host}/{lang}/{both[m]}",
              "src_lang": "eng", "trg_lang": lang, "true": m == k}
             for k in range(len(both)) for m in (k, (k + 1) % len(both), (7 * k + 3) % len(both))]
    training = itertools.islice(read_aligned_files(bible / "eng.tsv.gz", bible / f"{lang}.tsv.gz"), 2000, 4000)
    return pages, pairs, train_lexicon("eng", lang, training)


def test_content_features_are_the_previous_paths_on_real_text(shared_data):
    # the id-based features equal, float for float, the string-based path they replaced (kept in bench_verify, the
    # stem back-off written out there on strings)
    bible = shared_data / "parallel-text" / "bible"
    if not (bible / "ara.tsv.gz").exists():
        pytest.skip("the Bible files are not in ../shared/data/parallel-text/bible")
    pages, pairs, lexicons = [], [], []
    for lang in ("fra", "zho", "ara"):
        host_pages, host_pairs, lexicon = bible_host(bible, lang, 40)
        pages += host_pages
        pairs += host_pairs
        lexicons.append(lexicon)
    candidates, pages = pd.DataFrame(pairs), pd.DataFrame(pages)
    previous = previous_content(candidates, pages, lexicons)
    current = current_content(candidates, pages, lexicons)
    assert len(current) == len(candidates) == 360 and all(features is not None for features in current)
    assert sum(same_features(a, b) for a, b in zip(previous, current)) == 360
    tsims = pd.DataFrame({"host": candidates["host"], "true": candidates["true"],
                          "tsim": [features["tsim"] for features in current]})
    means = tsims.groupby(["host", "true"])["tsim"].mean().unstack()
    assert (means[True] > means[False] + 0.05).all()  # and they still tell translations (weak lexicons: 2,000 verses)


def test_cross_fitted_pairs_keep_what_a_lexicon_without_them_still_finds_best():
    learned = [("the red house", "la maison rouge"), ("the blue cat", "le chat bleu"), ("a red cat", "un chat rouge"),
               ("a blue house", "une maison bleue"), ("the small dog", "le petit chien"),
               ("a small bird", "un petit oiseau"), ("the dog and the bird", "le chien et le oiseau")]
    texts = {"http://h/en/1": "small dog small bird", "http://h/fr/1": "petit chien petit oiseau",
             "http://h/en/3": "red house blue cat", "http://h/fr/3": "chien noir court vite",
             "http://h/fr/4": "maison rouge chat bleu", "http://h/en/4": "green tree", "http://h/fr/5": "arbre vert"}
    paragraphs = {url: [{"text": text, "type": "text", "lang": "eng" if "/en/" in url else "fra", "boilerplate": False}]
                  for url, text in texts.items()}
    # en/3-fr/3 is wrong (fr/4 is en/3's translation); en/4-fr/5 only teaches itself (another fold: crc32 of en/4)
    proposed = [("http://h/en/1", "http://h/fr/1"), ("http://h/en/3", "http://h/fr/3"), ("http://h/en/4", "http://h/fr/5")]
    english, french = [url for url in texts if "/en/" in url], [url for url in texts if "/fr/" in url]
    rivals = [(src, url) for src, _ in proposed for url in french] + [(url, trg) for _, trg in proposed for url in english]
    assert cross_fitted_pairs("eng", "fra", learned, proposed, rivals, paragraphs) == [proposed[0]]
    # scored by a lexicon that learned it, the wrong pair ties its page's translation: it would teach itself
    vocabulary = Vocabulary()
    pages = {url: page_text(paragraphs[url], "eng" if "/en/" in url else "fra", vocabulary=vocabulary) for url in texts}
    taught = train_lexicon("eng", "fra", learned + [(texts["http://h/en/3"], texts["http://h/fr/3"])])
    assert tsim(pages["http://h/en/3"], pages["http://h/fr/3"], taught)[0] >= tsim(
        pages["http://h/en/3"], pages["http://h/fr/4"], taught)[0] > 0



def test_cross_fitted_pairs_judge_pairs_nothing_proposed():
    learned = [("the red house", "la maison rouge"), ("the blue cat", "le chat bleu")]
    texts = {"http://h/en/cat": "red house blue cat small dog", "http://h/fr/cat": "maison rouge chat bleu petit chien",
             "http://h/en/dog": "small dog sleeps", "http://h/fr/dog": "petit chien dort",
             "http://h/en/tree": "green tree", "http://h/fr/tree": "arbre vert"}
    paragraphs = {url: [{"text": text, "type": "text", "lang": "eng" if "/en/" in url else "fra", "boilerplate": False}]
                  for url, text in texts.items()}
    english, french = [url for url in texts if "/en/" in url], [url for url in texts if "/fr/" in url]
    judged = [("http://h/en/cat", "http://h/fr/cat"), ("http://h/en/dog", "http://h/fr/dog"),
              ("http://h/en/tree", "http://h/fr/tree")]  # folds 0, 1, 0 (crc32 of the source)
    rivals = [(src, url) for src, _ in judged for url in french] + [(url, trg) for _, trg in judged for url in english]
    # nothing proposed: the cat pages win on the learned words alone; the dog and tree pages share none with them
    assert cross_fitted_pairs("eng", "fra", learned, [], rivals, paragraphs, judged=judged) == [judged[0]]
    # the cat pages proposed teach the dog's fold (another fold) small dog / petit chien; the tree is still unknown
    assert cross_fitted_pairs("eng", "fra", learned, [judged[0]], rivals, paragraphs, judged=judged) == judged[:2]
