"""Domain focus as ILSP-FC does it: a weighted term list scored in a page's title, metadata, keywords and text.

A `--domain-terms FILE` holds ILSP-FC's triplets, one a line: `weight<TAB>term<TAB>subtopic` (the subtopic may
be left out; terms may be several words; `#` starts a comment). A page's relevance is ILSP-FC's

    score = sum over terms t and locations l of  n(t, l) x weight(t) x weight(l)

with n(t, l) the occurrences of t in location l and location weights title 10, metadata 4, keywords 2, text 1.
A page is in the domain when its score reaches `min_score` and it holds at least `min_terms` distinct terms.
The defaults of both thresholds here are parascout's own (ILSP-FC's configurable thresholds were not
available to check): a page must name two different terms and score at least 10 (one term in its title,
or ten in its text). Terms and text are matched as case-folded word sequences (no stemming; per language:
give each language its own file or term lines).
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

#: ILSP-FC's location weights
LOCATION_WEIGHTS = {"title": 10.0, "metadata": 4.0, "keywords": 2.0, "text": 1.0}
DEFAULT_MIN_SCORE = 10.0
DEFAULT_MIN_TERMS = 2
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class DomainTerm:
    weight: float
    words: tuple[str, ...]
    subtopic: str | None = None


@dataclass
class Relevance:
    score: float = 0.0
    distinct_terms: int = 0
    subtopics: dict[str, float] = field(default_factory=dict)

    def in_domain(self, min_score: float = DEFAULT_MIN_SCORE, min_terms: int = DEFAULT_MIN_TERMS) -> bool:
        return self.score >= min_score and self.distinct_terms >= min_terms


def words(text: str | None) -> list[str]:
    """Case-folded words of a text."""
    return _WORD.findall(text.casefold()) if text else []


def parse_domain_terms(lines: Iterable[str]) -> tuple[list[DomainTerm], int]:
    """(terms, count of unusable lines) from ILSP-FC triplet lines; blank and '#' lines are skipped, not counted."""
    terms, bad = [], 0
    for line in lines:
        line = line.strip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        try:
            weight = float(parts[0])
        except ValueError:
            bad += 1
            continue
        term = tuple(words(parts[1])) if len(parts) > 1 else ()
        if not term or not math.isfinite(weight):
            bad += 1
            continue
        subtopic = parts[2].strip() or None if len(parts) > 2 else None
        terms.append(DomainTerm(weight, term, subtopic))
    return terms, bad


def load_domain_terms(path: str) -> tuple[list[DomainTerm], int]:
    with open(path, encoding="utf-8") as handle:
        return parse_domain_terms(handle)


def count_term(tokens: list[str], term: tuple[str, ...]) -> int:
    """Occurrences of the word sequence `term` in `tokens`."""
    n = len(term)
    if n == 1:
        return tokens.count(term[0])
    first = term[0]
    return sum(1 for i, token in enumerate(tokens[: len(tokens) - n + 1]) if token == first and
               tuple(tokens[i:i + n]) == term)


def relevance(locations: dict[str, str | None], terms: list[DomainTerm],
              location_weights: dict[str, float] = LOCATION_WEIGHTS) -> Relevance:
    """ILSP-FC's relevance of one page: `locations` maps title / metadata / keywords / text to their text."""
    tokens = {location: words(locations.get(location)) for location in location_weights}
    found = Relevance()
    for term in terms:
        value = sum(count_term(tokens[location], term.words) * weight for location, weight in location_weights.items())
        if value:
            found.score += value * term.weight
            found.distinct_terms += 1
            if term.subtopic:
                found.subtopics[term.subtopic] = found.subtopics.get(term.subtopic, 0.0) + value * term.weight
    return found


def domain_relevance(pages: pd.DataFrame, terms: list[DomainTerm], min_score: float = DEFAULT_MIN_SCORE,
                     min_terms: int = DEFAULT_MIN_TERMS) -> pd.DataFrame:
    """Batch form: pages with columns among title, metadata, keywords, text -> relevance, distinct_terms,
    subtopic (the best-scoring one) and in_domain."""
    rows = []
    for record in pages.to_dict("records"):
        found = relevance(record, terms)
        rows.append({"relevance": found.score, "distinct_terms": found.distinct_terms,
                     "subtopic": max(found.subtopics, key=found.subtopics.get) if found.subtopics else None,
                     "in_domain": found.in_domain(min_score, min_terms)})
    return pd.DataFrame(rows, index=pages.index, columns=["relevance", "distinct_terms", "subtopic", "in_domain"])
