"""ILSP-FC's domain relevance on a hand-made page: location weights, multi-word terms, thresholds, bad lines."""
import pandas as pd
import pytest

from parascout.udfs.domain_focus import domain_relevance, parse_domain_terms, relevance

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
            "keywords": "tariff, grid",                                 # 2 x 2 + 4 x 2
            "text": "The grid carries renewable energy; the grid is old. Solar."}  # 4 x 2 + 10 x 1 + 3 x 1
    found = relevance(page, terms)
    assert found.score == pytest.approx(100 + 12 + 4 + 8 + 8 + 10 + 3)
    assert found.distinct_terms == 4
    assert found.subtopics == pytest.approx({"energy": 125.0, "policy": 4.0})
    assert found.in_domain() and not found.in_domain(min_terms=5) and not found.in_domain(min_score=200)


def test_batch_flags_and_off_topic_pages():
    terms, _ = parse_domain_terms(TERMS_FILE.splitlines())
    pages = pd.DataFrame({"title": ["Solar tariff news", "Cooking with fish", None],
                          "text": ["", "The grid of the oven.", None]})
    out = domain_relevance(pages, terms)
    assert out["relevance"].tolist() == [50.0, 4.0, 0.0]
    assert out["in_domain"].tolist() == [True, False, False]  # one term only: below min_terms
    assert out["subtopic"].tolist() == ["energy", None, None]
