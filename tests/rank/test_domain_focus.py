"""ILSP-FC's domain relevance on a hand-made page: location weights, multi-word terms, thresholds, bad lines."""
import numpy as np
import pandas as pd
import pytest

from parascout.udfs.rank.domain_focus import domain_relevance, parse_domain_terms, relevance

TERMS_FILE = """# weight<TAB>term<TAB>subtopic
10\trenewable energy\tenergy
5\twind turbine\tenergy
3\tsolar\tenergy
2\ttariff\tpolicy
not-a-weight\tbroken
7\t\tempty term
4\tgrid
"""


def test_terms_file_and_bad_lines():
    terms, bad = parse_domain_terms(TERMS_FILE.splitlines())
    assert bad == 2
    assert [(t.weight, t.words, t.subtopic) for t in terms] == [
        (10.0, ("renewable", "energy"), "energy"), (5.0, ("wind", "turbine"), "energy"), (3.0, ("solar",), "energy"),
        (2.0, ("tariff",), "policy"), (4.0, ("grid",), None)]


def test_relevance_weighs_locations_10_4_2_1():
    terms, _ = parse_domain_terms(TERMS_FILE.splitlines())
    page = {"title": "Renewable energy in Iceland",                   # 10 x 10
            "metadata": "Wind turbines and solar parks",                # solar 3 x 4 ('turbines' is not 'turbine')
            "keywords": ["tariff", "grid"],                             # 2 x 2 + 4 x 2 (texts' keywords list)
            "text": "The grid carries renewable energy; the grid is old. Solar."}  # 4 x 2 + 10 x 1 + 3 x 1
    found = relevance(page, terms)
    assert found.score == pytest.approx(100 + 12 + 4 + 8 + 8 + 10 + 3)
    assert found.distinct_terms == 4
    assert found.subtopics == pytest.approx({"energy": 125.0, "policy": 4.0})
    assert found.in_domain() and not found.in_domain(min_terms=5) and not found.in_domain(min_score=200)


def test_keywords_count_each_apart_and_metadata_weighs_4():
    terms, _ = parse_domain_terms(TERMS_FILE.splitlines())
    page = {"metadata": "A grid for renewable energy",           # 4 x 4 + 10 x 4
            "keywords": ["renewable", "energy", "wind turbine"]}  # no term spans two keywords; 5 x 2
    found = relevance(page, terms)
    assert found.score == pytest.approx(16 + 40 + 10) and found.distinct_terms == 3
    assert relevance({"keywords": "renewable, energy"}, terms).score == 20.0  # one text: the term is found


def test_a_hand_made_page_scores_its_title_description_keywords_and_main_text():
    from parascout.udfs.fetch.html_text import html_features

    terms, _ = parse_domain_terms(TERMS_FILE.splitlines())
    html = ('<html><head><title>Solar news</title><meta name="description" content="Tariff changes for solar.">'
            '<meta name="keywords" content="grid, wind turbine"></head><body><nav><a href="/">Tariff</a></nav>'
            "<p>The new solar tariff was agreed by the grid operator after a long debate in the national parliament.</p>"
            "</body></html>")
    doc = html_features(html, "http://example.com/")
    main_text = "\n".join(p["text"] for p in doc["page_paragraphs"] if not p["boilerplate"])
    batch = pd.DataFrame({"url": ["u"], "lang": [doc["cld2_lang"]], "title": [doc["title"]],
                          "description": [doc["description"]], "keywords": [np.array(doc["keywords"], dtype=object)],
                          "main_text": [main_text]})
    from parascout.udfs.rank.domain_focus import score_texts

    out = next(score_texts(iter([batch]), terms))
    # solar: title 3 x 10, description 3 x 4, text 3 x 1; tariff: description 2 x 4, text 2 x 1 (the nav link is
    # boilerplate); grid: keywords 4 x 2, text 4 x 1; wind turbine: keywords 5 x 2
    assert out["relevance"].tolist() == [30 + 12 + 3 + 8 + 2 + 8 + 4 + 10]
    assert out["distinct_terms"].tolist() == [4] and out["subtopic"].tolist() == ["energy"]


def test_batch_flags_and_off_topic_pages():
    terms, _ = parse_domain_terms(TERMS_FILE.splitlines())
    pages = pd.DataFrame({"title": ["Solar tariff news", "Cooking with fish", None],
                          "text": ["", "The grid of the oven.", None]})
    out = domain_relevance(pages, terms, min_score=10, min_terms=2)
    assert out["relevance"].tolist() == [50.0, 4.0, 0.0]
    assert out["in_domain"].tolist() == [True, False, False]  # one term only: below min_terms
    assert out["subtopic"].tolist() == ["energy", None, None]
    # the defaults (score >= 2, one term: tuned on sample-archive seed 42) take one weighty mention
    assert domain_relevance(pages, terms)["in_domain"].tolist() == [True, True, False]


def test_ilsp_fc_lines_languages_and_bad_codes():
    lines = ["100:wind turbine=energy>en", "70:éolienne=énergie>fr", "50\tsolar\tenergy\tdeu", "10\tgrid\t\txx-nope",
             "no colon or tab"]
    terms, bad = parse_domain_terms(lines)
    assert bad == 2  # an unknown language code, a line of neither form
    assert [(t.weight, t.words, t.subtopic, t.lang) for t in terms] == [
        (100.0, ("wind", "turbine"), "energy", "eng"), (70.0, ("éolienne",), "énergie", "fra"),
        (50.0, ("solar",), "energy", "deu")]


def test_terms_count_only_in_pages_of_their_language():
    terms, _ = parse_domain_terms(["1\teuro\tmoney\ten", "1\tevra\tmoney\tis", "1\t美元\tmoney\tzh", "1\tbank\tmoney"])
    pages = pd.DataFrame({"lang": ["eng", "isl", "zho", "fra"],
                          "title": ["Euro news", "Evra", "欧元和美元", "Bank"],
                          "text": ["euro evra bank", "euro evra bank", "美元。美元", "euro bank"]})
    out = domain_relevance(pages, terms, min_score=1, min_terms=1)
    # eng: euro (title 10 + text 1) + bank 1; isl: evra 11 + bank 1; zho: 美元 per character, 10 + 2; fra: bank only
    assert out["relevance"].tolist() == [12.0, 12.0, 12.0, 11.0]
    assert out["distinct_terms"].tolist() == [2, 2, 1, 1]


def test_terms_translated_through_a_lexicon():
    from parascout.udfs.lexicon.lexicon import Lexicon
    from parascout.udfs.rank.domain_focus import translate_terms

    lexicon = Lexicon("eng", "fra", {"wind": {"vent": 0.7, "éolien": 0.2}, "turbine": {"turbine": 0.9},
                                     "grid": {"réseau": 0.04}})
    terms, _ = parse_domain_terms(["5\twind turbine\tenergy\ten", "3\tgrid", "2\tsolar", "1\tsonne\t\tde"])
    translated, missing = translate_terms(terms, lexicon, min_prob=0.05)
    assert [(t.weight, t.words, t.subtopic, t.lang) for t in translated] == [
        (5.0, ("vent", "turbine"), "energy", "fra")]
    assert missing == 2  # grid below min_prob, solar unknown; the German term is not the lexicon's source


def test_score_texts_batches_keep_urls():
    from parascout.udfs.rank.domain_focus import FOCUS_COLUMNS, score_texts

    terms, _ = parse_domain_terms(["1\teuro", "1\tdollar"])
    batch = pd.DataFrame({"url": ["u1", "u2", "u3"], "lang": ["eng", None, "eng"], "title": ["Euro", None, None],
                          "description": [None, None, "About the dollar"],
                          "keywords": [None, None, np.array(["euro", "yen"], dtype=object)],
                          "main_text": ["dollar", None, ""]})
    out = pd.concat(list(score_texts(iter([batch]), terms, min_score=2, min_terms=2)))
    assert out.columns.tolist() == ["url", *FOCUS_COLUMNS]
    assert out["in_domain"].tolist() == [True, False, True] and out["relevance"].tolist() == [11.0, 0.0, 6.0]
