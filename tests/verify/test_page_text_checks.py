"""verify-pairs on page text: which pages are judged (sections, templates, too little text, text in another
language, partial translations) and what counts as a copy."""
from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pandas as pd
import pytest

from parascout.udfs.fetch.html_text import paragraph_hash
from parascout.udfs.verify.decision import (
    ContentModel,
    decide,
    one_to_one,
    self_labels,
)
from parascout.udfs.verify.pages import HostPages, common_in_order, words_in_order
from parascout.udfs.verify.structure import ThresholdRule
from parascout.udfs.verify.verification import (
    CONTENT_FEATURES,
    SELF_LABEL_L2,
    verify_host,
)
from testkit.warc import ENGLISH, GERMAN
from tests.support.verify_sites import (
    HOST,
    LEXICON,
    REAL_ENGLISH,
    REAL_GERMAN,
    content_site,
    doc_row,
    sentences,
    text_columns,
    text_of,
    translate,
)


def list_columns(lang: str, own: list[str], items: list[str]) -> dict:
    """texts columns of a page with its own text (a title, running text) and list items (teasers of other pages)."""
    rows = [{"text": t, "type": "text", "lang": lang, "boilerplate": False, "hash": paragraph_hash(t)} for t in own]
    rows += [{"text": t, "type": "list_item", "lang": lang, "boilerplate": False, "hash": paragraph_hash(t)}
             for i, t in enumerate(items)]
    return {"text_paragraphs": rows, "main_text": "\n".join(own + items), "duplicate_of": None}


def section_site(rng: random.Random, sections: int = 3) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """content_site plus, per section k: an English section page (an intro, then teasers of three articles), its
    German translation (the intro translated, teasers of three other articles) and a German listing page (teasers
    only: those of the English page, translated). The listing page shares more words with the English section page
    than its translation does: by tsim alone it is the better partner."""
    pages, pairs, expected = content_site(rng)
    rows, extra = [], []
    for k in range(sections):
        intro, teasers, others = sentences(rng, 2), sentences(rng, 3), sentences(rng, 3)
        src, trg, listing = (f"http://{HOST}/en/section-{k}", f"http://{HOST}/de/sektion-{k}",
                             f"http://{HOST}/de/liste-{k}")
        lengths = [300] * 8
        rows += [{**doc_row(src, [text_of(ENGLISH, x) for x in lengths]), **list_columns("eng", intro, teasers)},
                 {**doc_row(trg, [text_of(GERMAN, x) for x in lengths]),
                  **list_columns("deu", [translate(t) for t in intro], [translate(t) for t in others])},
                 {**doc_row(listing, [text_of(GERMAN, x) for x in lengths]),
                  **list_columns("deu", [], [translate(t) for t in teasers])}]
        extra += [{"host": HOST, "src_url": src, "trg_url": trg, "src_lang": "eng", "trg_lang": "deu",
                   "source": "handle"},
                  {"host": HOST, "src_url": src, "trg_url": listing, "src_lang": "eng", "trg_lang": "deu",
                   "source": "link"}]
        expected[(src, trg)], expected[(src, listing)] = "ok", "content_rejected"
    return (pd.concat([pages, pd.DataFrame(rows)], ignore_index=True),
            pd.concat([pairs, pd.DataFrame(extra)], ignore_index=True), expected)


def test_a_section_page_pairs_with_its_translation_not_with_the_listing_of_its_teasers():
    pages, pairs, expected = section_site(random.Random(4))
    features = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON], random_count=40, seed=1)
    candidates = features[features.role == "candidate"].set_index(["src_url", "trg_url"])
    section, listing = (candidates.loc[(f"http://{HOST}/en/section-0", f"http://{HOST}/de/{page}")]
                        for page in ("sektion-0", "liste-0"))
    assert listing.tsim > section.tsim and listing.tsim_idf > section.tsim_idf  # by all the text: the listing
    assert section.own_tsim_idf == 1.0 and listing.own_tsim_idf == 0.0  # by the pages' own text: the translation
    article = candidates.loc[(f"http://{HOST}/en/p1", f"http://{HOST}/de/p1")]
    assert article.own_tsim_idf == article.tsim_idf  # no list items: its own text is all of it
    labelled, stats = self_labels(features)
    positives = set(zip(labelled[labelled.label].src_url, labelled[labelled.label].trg_url))
    assert stats["positives"] == 12 + 3 and (f"http://{HOST}/en/section-0", f"http://{HOST}/de/liste-0") not in positives
    decided = one_to_one(decide(features[features.role == "candidate"],
                                ContentModel.fit_per_language_pair(labelled, labelled["label"])))
    assert {(r.src_url, r.trg_url): "ok" if r.parallel else r.reason for r in decided.itertuples()} == expected


def test_a_feature_is_clipped_to_the_range_its_labels_showed():
    # p (the length correlation's significance) spread over 0.00-0.01 in training; a pair at p = 0.9 is far
    # outside: standardised, it alone outweighed tsim before the model clipped features to their training range
    rng = np.random.default_rng(1)
    labels = np.repeat([True, False], 40)
    frame = pd.DataFrame({"tsim": np.where(labels, 0.8, 0.2) + rng.normal(0, 0.05, 80), "tsim_idf": 0.5,
                          "p": np.where(labels, rng.uniform(0.004, 0.01, 80), rng.uniform(0.0, 0.006, 80))})
    model = ContentModel.fit(frame, labels, l2=SELF_LABEL_L2)
    outlier = pd.DataFrame({"tsim": [0.2], "tsim_idf": [0.5], "p": [0.9]})
    assert model.weights[list(CONTENT_FEATURES).index("p")] > 0
    assert dataclasses.replace(model, ranges=()).predict(outlier)[0] > 0.5 > model.predict(outlier)[0]
    restored = ContentModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert np.allclose(restored.predict(outlier), model.predict(outlier))


def test_too_little_text_or_text_in_another_language_is_not_judged_as_a_translation():
    rng = random.Random(6)
    english = sentences(rng, 4)
    lengths = [300] * 8
    pages = pd.DataFrame([
        {**doc_row(f"http://{HOST}/en/a", [text_of(ENGLISH, x) for x in lengths]), **text_columns("eng", english)},
        # the German page of the template shows the English text, untranslated
        {**doc_row(f"http://{HOST}/de/a", [text_of(GERMAN, x) for x in lengths]), **text_columns("eng", english)},
        {**doc_row(f"http://{HOST}/en/b", [text_of(ENGLISH, x) for x in lengths]), **text_columns("eng", ["Europe 2"])},
        {**doc_row(f"http://{HOST}/de/b", [text_of(GERMAN, x) for x in lengths]), **text_columns("deu", ["Europa 2"])}])
    pairs = pd.DataFrame([{"host": HOST, "src_url": f"http://{HOST}/en/{k}", "trg_url": f"http://{HOST}/de/{k}",
                           "src_lang": "eng", "trg_lang": "deu", "source": "handle"} for k in "ab"])
    features = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON]).set_index("trg_url")
    untranslated, title_only = features.loc[f"http://{HOST}/de/a"], features.loc[f"http://{HOST}/de/b"]
    assert untranslated.tsim == 1.0 and untranslated.trg_lang_share == 0.0 and not untranslated.lang_ok
    assert untranslated.reason == "untranslated"
    assert title_only.lang_ok and pd.isna(title_only.tsim)  # 2 words a side: no text to judge
    model = ContentModel(None, 0.0, (), (), 0.1, "null-threshold")
    decided = decide(features.reset_index(), model).set_index("trg_url")
    assert decided.loc[f"http://{HOST}/de/b", "reason"] == "no_text"
    assert decided.loc[f"http://{HOST}/de/a", "reason"] == "untranslated"


FRENCH = ("Le comité a publié son rapport annuel sur la protection des eaux côtières. "
          "Nous utilisons des cookies pour vous offrir la meilleure expérience sur notre site. ")


def template_page(url: str, lang: str, main: list[str], template: str) -> dict:
    """A page whose main paragraphs are `main` (in `lang`) inside a template (boilerplate) written like `template`."""
    paragraphs = [{"text": text_of(template, 200), "type": "text", "lang": None, "boilerplate": True, "hash": "b"}]
    paragraphs += [{"text": t, "type": "text", "lang": lang, "boilerplate": False, "hash": paragraph_hash(t)}
                   for t in main]
    return {**doc_row(url, [text_of(GERMAN, 300)] * 4), "text_paragraphs": paragraphs,
            "main_text": "\n".join(main), "duplicate_of": None}


def test_an_untranslated_copy_in_another_languages_template_loses_the_one_to_one_to_its_page():
    # de/a's German text copied into the French template (only its date line translated): one page for the 1-1,
    # and the German page keeps the pair even when the copy scores a little higher
    english = sentences(random.Random(7), 4)
    german = [translate(t) for t in english]
    pages = pd.DataFrame([
        template_page(f"http://{HOST}/en/a", "eng", ["May 2098", *english], ENGLISH),
        template_page(f"http://{HOST}/de/a", "deu", ["Mai 2098", *german], GERMAN),
        template_page(f"http://{HOST}/fr/a", "deu", ["mai 2098", *german], FRENCH),
        # the same copy in the German template is no template copy: two German pages, neither stands for the other
        template_page(f"http://{HOST}/de/a2", "deu", ["Juni 2098", *german], GERMAN)])
    pages["cld2_lang"] = ["eng", "deu", "deu", "deu"]
    pairs = pd.DataFrame([{"host": HOST, "src_url": f"http://{HOST}/en/a", "trg_url": f"http://{HOST}/{k}",
                           "src_lang": "eng", "trg_lang": "deu", "source": "similar"} for k in ("de/a", "fr/a")])
    features = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON])
    assert dict(zip(features.trg_url, features.trg_key)) == {f"http://{HOST}/de/a": f"http://{HOST}/de/a",
                                                             f"http://{HOST}/fr/a": f"http://{HOST}/de/a"}
    decided = one_to_one(features.assign(parallel=True, reason=None, p_parallel_content=[0.96, 0.97]))
    assert dict(zip(decided.trg_url, decided.reason)) == {f"http://{HOST}/de/a": None,
                                                          f"http://{HOST}/fr/a": "not_one_to_one"}
    # texts may have kept the copy's URL for the two (duplicate_of): the page still stands for itself
    kept_copy = pages.assign(duplicate_of=[None, f"http://{HOST}/fr/a", None, None])
    keys = verify_host(pairs, kept_copy, ThresholdRule().to_dict(), [LEXICON])
    assert set(keys.trg_key) == {f"http://{HOST}/de/a"}
    # without its page among the parallel pairs, the copy's pair stands
    alone = one_to_one(features[features.trg_url.str.endswith("fr/a")].assign(parallel=True, reason=None,
                                                                               p_parallel_content=0.97))
    assert alone.parallel.tolist() == [True]


def test_a_paragraph_on_most_of_a_sites_pages_makes_no_template_copies():
    # two notices the extractor kept as main text on 60 German pages and 1 German text in the French template:
    # they are the site's, so the French-template page copies nothing (and no page is compared with every other)
    notices = ["Alle Preise verstehen sich inklusive Mehrwertsteuer und zuzüglich Versand.",
               "Wir versenden innerhalb von zwei Werktagen an jede Adresse in Europa."]
    german = sentences(random.Random(9), 60)
    pages = [template_page(f"http://{HOST}/de/{i}", "deu", [*notices, translate(t)], GERMAN)
             for i, t in enumerate(german)]
    pages.append(template_page(f"http://{HOST}/fr/0", "deu", [*notices, "Ein anderer Satz steht nur hier."], FRENCH))
    frame = pd.DataFrame(pages).assign(cld2_lang="deu")
    assert HostPages(frame).key(f"http://{HOST}/fr/0") == f"http://{HOST}/fr/0"
    # on a few pages the same two paragraphs are most of the French-template page: a copy of the first German one
    few = frame[frame.url.str.endswith(("/de/0", "/de/1", "/fr/0"))]
    assert HostPages(few).key(f"http://{HOST}/fr/0") == f"http://{HOST}/de/0"


def test_a_page_cld2_found_in_its_language_unreliably_passes_by_its_main_text():
    # the German page inside an English template: CLD2 finds the page's language, not reliably; its main paragraphs
    # are all labelled in it. Without texts (no main text to check) an unreliable page still fails, unless the URLs
    # differ only in their language markers and so declare the languages CLD2 guessed
    english = sentences(random.Random(8), 4)
    lengths = [300] * 8
    src, trg = f"http://{HOST}/en/a", f"http://{HOST}/de/a"
    pages = pd.DataFrame([
        {**doc_row(src, [text_of(ENGLISH, x) for x in lengths]), **text_columns("eng", english)},
        {**doc_row(trg, [text_of(GERMAN, x) for x in lengths]),
         **text_columns("deu", [translate(t) for t in english]), "cld2_reliable": False}])
    pairs = pd.DataFrame([{"host": HOST, "src_url": src, "trg_url": trg, "src_lang": "eng", "trg_lang": "deu",
                           "source": "handle"}])
    judged = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON]).iloc[0]
    assert judged.trg_lang_share == 1.0 and judged.lang_ok and judged.reason != "lang_mismatch"
    untexted = pages.assign(text_paragraphs=None, main_text=None)
    proposed = pairs.assign(source="similar")
    assert verify_host(proposed, untexted, ThresholdRule().to_dict(), [LEXICON]).iloc[0].reason == "lang_mismatch"
    declared = verify_host(pairs, untexted, ThresholdRule().to_dict(), [LEXICON]).iloc[0]
    assert declared.lang_ok and declared.reason != "lang_mismatch"


REAL_SPANISH = [
    "Las herramientas de selección sirven para elegir regiones de la capa activa y trabajar sobre ellas.",
    "Cada herramienta tiene sus propias opciones, que aparecen en el diálogo al pulsar dos veces el icono.",
    "Puede guardar la configuración actual de una herramienta y recuperarla más tarde desde la lista.",
    "Cuando la imagen es más grande que la ventana, el diálogo de navegación muestra qué parte está viendo."]


def test_a_half_translated_page_or_one_quoting_code_is_in_its_language_a_mostly_untranslated_one_is_not():
    # a side is in its language unless most of its main prose is the other side's words or prose CLD2 reliably
    # finds in another language: English leftovers below half of it, English code blocks of any size, or short
    # lines CLD2 cannot tell keep a German page German; English prose over half of it is untranslated, Spanish
    # prose a language mismatch
    src, trg = f"http://{HOST}/en/a", f"http://{HOST}/de/a"

    def paragraph(text: str, kind: str = "text", lang: str | None = None) -> dict:
        return {"text": text, "type": kind, "lang": lang, "boilerplate": False, "hash": paragraph_hash(text)}

    def judged(target: list[dict]):
        english = [paragraph(t, lang="eng") for t in REAL_ENGLISH]
        pages = pd.DataFrame([
            {**doc_row(src, [text_of(ENGLISH, 300)] * 6), "text_paragraphs": english,
             "main_text": "\n".join(REAL_ENGLISH), "duplicate_of": None},
            {**doc_row(trg, [text_of(GERMAN, 300)] * 6), "text_paragraphs": target,
             "main_text": "\n".join(p["text"] for p in target), "duplicate_of": None}])
        pairs = pd.DataFrame([{"host": HOST, "src_url": src, "trg_url": trg, "src_lang": "eng", "trg_lang": "deu",
                               "source": "handle"}])
        return verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON]).iloc[0]

    def english(index: int) -> str:  # an untranslated paragraph long enough for CLD2 to tell
        return f"{REAL_ENGLISH[index]} {REAL_ENGLISH[(index + 1) % len(REAL_ENGLISH)]}"

    leftovers = [paragraph(t) for t in REAL_GERMAN] + [paragraph(english(index)) for index in (4, 5)]
    partial = judged(leftovers)
    assert partial.lang_ok and 0.5 < partial.trg_lang_share < 0.8
    # labels CLD2 gave the whole page are not evidence: a paragraph's own text is
    mislabelled = judged([paragraph(t, lang="eng") for t in REAL_GERMAN])
    assert mislabelled.lang_ok and mislabelled.trg_lang_share == 1.0
    code = [paragraph(t) for t in REAL_GERMAN[:2]] + [paragraph(
        "Use the command line to install the package and then run the program with every option you need.", "code")
        for _ in range(4)] + [paragraph("Abbildung 17.53"), paragraph("5.2 Optionen")]
    assert judged(code).lang_ok and judged(code).trg_lang_share == 1.0
    mostly_english = [paragraph(REAL_GERMAN[0])] + [paragraph(english(index)) for index in range(1, 6)]
    assert judged(mostly_english).reason == "untranslated" and not judged(mostly_english).lang_ok
    copied = [paragraph(t) for t in REAL_ENGLISH[:4]] + [paragraph(REAL_GERMAN[4])]
    assert judged(copied).reason == "untranslated"
    spanish = [paragraph(t) for t in REAL_SPANISH]
    assert judged(spanish).reason == "lang_mismatch"


def text_page(url: str, texts: list[str]) -> dict:
    """A texts row of `texts`, one prose paragraph each, no CLD2 label."""
    return {"url": url, "status": "ok", "cld2_lang": None, "duplicate_of": None, "main_text": None,
            "text_paragraphs": [{"text": t, "type": "text", "boilerplate": False, "hash": paragraph_hash(t)}
                                for t in texts]}


def test_of_a_line_translated_in_part_only_the_words_the_other_page_holds_are_its_copy():
    # a reference page's trail and entry titles keep the function names and translate the rest: the French words
    # of `Scilab Help >> Fonctions Elémentaires > Trigonométrie > tand` are French, not a copy of the English trail
    en, fr = f"http://{HOST}/en_US/tand.html", f"http://{HOST}/fr_FR/tand.html"
    untranslated = "The elements of t are the tangent of the elements of x (in degree)."
    trail_en, trail_fr = ("Scilab Help >> Elementary Functions > Trigonometry > tand",
                          "Scilab Help >> Fonctions Elémentaires > Trigonométrie > tand")
    pages = HostPages(pd.DataFrame([text_page(en, [trail_en, untranslated]), text_page(fr, [trail_fr, untranslated])]))
    assert pages.is_shared(pages.prose(fr)[0], en)  # most of its words are the English trail's
    words = ("scilab", "help", "fonctions", "elémentaires", "trigonométrie", "tand")
    held = sum(len(word) for word in ("scilab", "help", "tand")) / sum(map(len, words))
    assert pages.copied_share(pages.prose(fr)[0], en) == pytest.approx(held)
    assert pages.copied_share(pages.prose(fr)[1], en) == 1.0
    share, other = pages.language_shares(fr, "fra", "eng", en)
    total = len(trail_fr) + len(untranslated)
    assert other == pytest.approx((held * len(trail_fr) + len(untranslated)) / total)
    assert share == pytest.approx(1 - other)


def test_a_translation_that_shares_cognates_and_names_with_its_original_is_no_copy():
    # a Scilab section page lists its functions, the French line translated, the next one left in English: the
    # translated line shares half its words with the English page (names, `instructions`, `variables`), but not in
    # order in any one English line, as a line left untranslated does
    en, fr = f"http://{HOST}/en_US/section_a.html", f"http://{HOST}/fr_FR/section_b.html"
    english = ["unix_g — executes some Windows, Linux or MacOS instructions: output in variables",
               "unix_s — executes some Windows, Linux or MacOS instructions: output is suppressed",
               "load — Loads some archived variables, a saved graphic figure, a library of functions"]
    french = ["unix_g — exécute des instructions Windows, Linux ou MacOS : résultats dans des variables",
              "unix_s — exécute des instructions Windows, Linux ou MacOS : résultats masqués (mode Silencieux)",
              "load — Loads some archived variables, a saved graphic figure, a library of functions"]
    reworded = "load — Loads archived variables, a saved figure, a library of functions"
    pages = HostPages(pd.DataFrame([text_page(en, english), text_page(fr, [*french[:2], reworded])]))
    translated, untranslated = pages.prose(fr)[0], pages.prose(fr)[2]
    assert pages.copy_in_order(translated, en).shared == 5  # unix, windows, linux, macos, variables
    assert not pages.is_shared(translated, en) and not pages.is_shared(pages.prose(fr)[1], en)
    assert pages.is_shared(untranslated, en)  # a copy edited since: its words still follow the English line
    assert pages.copied_share(untranslated, en) == 1.0  # every word of it is in the English line, in order
    share, other = pages.language_shares(fr, "fra", "eng", en)
    assert other == pytest.approx(len(reworded) / sum(len(t) for t in [*french[:2], reworded]))
    assert share == pytest.approx(1 - other)


def test_a_copy_of_the_other_pages_text_is_no_translation():
    # the German article shown untranslated in the English template (CLD2 and the paragraph labels say English):
    # its main paragraphs are the German page's, word for word
    english = sentences(random.Random(9), 4)
    german = [translate(t) for t in english]
    pages = pd.DataFrame([template_page(f"http://{HOST}/en/a", "eng", ["January 2098", *german], ENGLISH),
                          template_page(f"http://{HOST}/de/a", "deu", ["Januar 2098", *german], GERMAN),
                          template_page(f"http://{HOST}/en/b", "eng", ["January 2098", *english], ENGLISH)])
    pages["cld2_lang"] = ["eng", "deu", "eng"]
    pairs = pd.DataFrame([{"host": HOST, "src_url": f"http://{HOST}/en/{k}", "trg_url": f"http://{HOST}/de/a",
                           "src_lang": "eng", "trg_lang": "deu", "source": "handle"} for k in "ab"])
    features = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON]).set_index("src_url")
    copy, translation = features.loc[f"http://{HOST}/en/a"], features.loc[f"http://{HOST}/en/b"]
    assert copy.tsim > 0.9 and copy.reason == "untranslated" and not copy.lang_ok
    assert translation.tsim > 0.9 and translation.lang_ok and translation.reason != "lang_mismatch"


def test_the_bit_parallel_common_subsequence_counts_what_the_dynamic_programme_does():
    rng = random.Random(5)
    for _ in range(2000):
        words = [rng.choice("abcdefg") for _ in range(rng.randrange(0, 40))]
        other = [rng.choice("abcdefgh") for _ in range(rng.randrange(0, 70))]
        count, chars = common_in_order(words, other)
        assert words_in_order(words, other) == count == chars  # one-letter words: a character each
