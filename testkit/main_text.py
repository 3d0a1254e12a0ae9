"""Main text scored against the hand-labelled pages of tests/data/main_text: word-level precision, recall and F1
(bench_main_text reports them, tests/fetch/test_main_text_real.py holds parascout's extractor to a floor)."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from parascout.udfs.fetch.html_text import html_features

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "main_text"
#: a word: one CJK character (those scripts put no spaces between words), or a run of other word characters
WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]|"
                  r"[^\W\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")


def words(text: str) -> Counter:
    """The bag of case-folded words of a text."""
    return Counter(WORD.findall(text.casefold()))


def scores(found: Counter, truth: Counter) -> tuple[int, int, int]:
    """(overlap, found words, true words) of two bags."""
    return sum((found & truth).values()), sum(found.values()), sum(truth.values())


def f1(overlap: int, found: int, truth: int) -> tuple[float, float, float]:
    precision = overlap / found if found else 0.0
    recall = overlap / truth if truth else 0.0
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def parascout_main_text(html: str, url: str | None = None) -> str:
    """What fetch-docs stores as a page's main text before the per-site pass."""
    return "\n".join(p["text"] for p in html_features(html, url)["page_paragraphs"] if not p["boilerplate"])


def fixtures() -> list[tuple[str, str, str]]:
    """(name, html, labelled main text) of every fixture."""
    return [(path.stem, path.read_text(encoding="utf-8"), path.with_suffix(".txt").read_text(encoding="utf-8"))
            for path in sorted(FIXTURES.glob("*.html"))]


def quality(extract, labelled: list[tuple[str, str, str]]) -> dict:
    """Per-page (precision, recall, F1), their mean (macro) and the pooled (micro) figures."""
    per_page, totals = {}, [0, 0, 0]
    for name, html, truth in labelled:
        counts = scores(words(extract(html)), words(truth))
        per_page[name] = f1(*counts)
        totals = [a + b for a, b in zip(totals, counts)]
    macro = tuple(sum(values[i] for values in per_page.values()) / len(per_page) for i in range(3))
    return {"per_page": per_page, "macro": macro, "micro": f1(*totals)}
