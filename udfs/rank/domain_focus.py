"""Domain focus as ILSP-FC does it: a weighted term list scored in a page's title, metadata, keywords and text.

A `--domain-terms FILE` holds ILSP-FC's triplets, one a line: `weight<TAB>term<TAB>subtopic[<TAB>lang]`
(the subtopic and the language may be left out; terms may be several words; `#` starts a comment).
ILSP-FC's own topic-definition lines, `weight:term=subtopic>lang` (its wiki, "Topic Definitions"), are read
too. A term with a language (ISO 639-1 or 639-3) is matched only in pages of that language; a term without
one in every page. Terms of one language can be carried into another through a translation lexicon
(`translate_terms`, word by word, the likeliest translation of each word). A page's relevance is ILSP-FC's

    score = sum over terms t and locations l of  n(t, l) x weight(t) x weight(l)

with n(t, l) the occurrences of t in location l and location weights title 10, metadata 4, keywords 2, text 1.
In `texts` the locations are the page's title, its meta description (metadata), its meta keywords (each keyword
apart: a term never spans two) and its main text.
A page is in the domain when its score reaches `min_score` and it holds at least `min_terms` distinct terms.
ILSP-FC's wiki gives the file format and suggests one weight for every term (100; lower for ambiguous ones)
but no default thresholds that could be found. parascout's defaults, for term lists weighted 1 per term
(scale min_score with the weights), were tuned on sample-archive seed 42 (benchmarks/eval_domain_focus.py):
score >= 2 and one distinct term, i.e. two mentions in the text or one in the title. The earlier untuned
guess (score >= 10, two terms) kept precision at 1.0 but found under half the on-topic pages.
Words are those of the lexicon's tokenizer (case-folded, Han per character, Arabic normalised); no stemming.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

import pandas as pd

from parascout.udfs.common.langs import UnknownLanguage, to_iso639_3
from parascout.udfs.common.language_id import tokenize
from parascout.udfs.lexicon.lexicon import Lexicon

#: ILSP-FC's location weights
LOCATION_WEIGHTS = {"title": 10.0, "metadata": 4.0, "keywords": 2.0, "text": 1.0}
DEFAULT_MIN_SCORE = 2.0
DEFAULT_MIN_TERMS = 1
#: columns fetch-docs adds to `texts` with --domain-terms
FOCUS_COLUMNS = ["relevance", "distinct_terms", "subtopic", "in_domain"]
FOCUS_SCHEMA = "relevance double, distinct_terms int, subtopic string, in_domain boolean"


@dataclass(frozen=True)
class DomainTerm:
    weight: float
    words: tuple[str, ...]
    subtopic: str | None = None
    lang: str | None = None  # ISO 639-3; None: any page


@dataclass
class Relevance:
    score: float = 0.0
    distinct_terms: int = 0
    subtopics: dict[str, float] = field(default_factory=dict)

    def in_domain(self, min_score: float = DEFAULT_MIN_SCORE, min_terms: int = DEFAULT_MIN_TERMS) -> bool:
        return self.score >= min_score and self.distinct_terms >= min_terms

    @property
    def best_subtopic(self) -> str | None:
        return max(self.subtopics, key=self.subtopics.get) if self.subtopics else None


def words(text: str | None, lang: str | None = None) -> list[str]:
    """Case-folded words of a text (the lexicon's tokenizer: one word notion across parascout)."""
    return tokenize(text, lang)


def _fields(line: str) -> tuple[str, str, str, str] | None:
    """(weight, term, subtopic, lang) of a tab-separated or ILSP-FC `weight:term=subtopic>lang` line."""
    if "\t" in line:
        parts = line.split("\t") + ["", ""]
        return parts[0], parts[1], parts[2], parts[3]
    weight, colon, rest = line.partition(":")
    if not colon:
        return None
    rest, _, lang = rest.partition(">")
    term, _, subtopic = rest.partition("=")
    return weight, term, subtopic, lang


def _language(code: str) -> str | None:
    code = code.strip()
    return to_iso639_3(code) if code else None


def parse_domain_terms(lines: Iterable[str]) -> tuple[list[DomainTerm], int]:
    """(terms, count of unusable lines) from term lines; blank and '#' lines are skipped, not counted."""
    terms, bad = [], 0
    for line in lines:
        line = line.strip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = _fields(line)
        try:
            weight = float(fields[0]) if fields else math.nan
            lang = _language(fields[3]) if fields else None
        except (ValueError, UnknownLanguage):
            bad += 1
            continue
        term = tuple(words(fields[1].strip().strip('"'), lang)) if fields else ()
        if not term or not math.isfinite(weight):
            bad += 1
            continue
        terms.append(DomainTerm(weight, term, fields[2].strip() or None, lang))
    return terms, bad


def load_domain_terms(path: str) -> tuple[list[DomainTerm], int]:
    with open(path, encoding="utf-8") as handle:
        return parse_domain_terms(handle)


def translate_terms(terms: list[DomainTerm], lexicon: Lexicon, min_prob: float = 0.0) -> tuple[list[DomainTerm], int]:
    """Terms of the lexicon's source language (or of none) carried into its target language, word by word
    (each word's likeliest translation at or above min_prob); returns (translated terms, terms left out)."""
    translated, missing = [], 0
    for term in terms:
        if term.lang not in (None, lexicon.src_lang):
            continue
        best = [max(lexicon.translations(word).items(), key=lambda item: item[1], default=(None, 0.0))
                for word in term.words]
        if any(word is None or prob < min_prob for word, prob in best):
            missing += 1
            continue
        translated.append(replace(term, words=tuple(word for word, _ in best), lang=lexicon.trg_lang))
    return translated, missing


def count_term(tokens: list[str], term: tuple[str, ...]) -> int:
    """Occurrences of the word sequence `term` in `tokens`."""
    n = len(term)
    if n == 1:
        return tokens.count(term[0])
    first = term[0]
    return sum(1 for i, token in enumerate(tokens[: len(tokens) - n + 1]) if token == first and
               tuple(tokens[i:i + n]) == term)


def location_words(value, lang: str | None = None) -> list[list[str]]:
    """The word lists of one location: one text, or several texts a term never spans (a keywords list)."""
    if value is None or isinstance(value, float):  # null (pandas may give NaN)
        return []
    if isinstance(value, str):
        return [words(value, lang)]
    return [words(text, lang) for text in value if isinstance(text, str)]


def relevance(locations: dict, terms: list[DomainTerm],
              location_weights: dict[str, float] = LOCATION_WEIGHTS, lang: str | None = None) -> Relevance:
    """ILSP-FC's relevance of one page: `locations` maps title / metadata / keywords / text to a text or a list
    of texts; with `lang`, terms of another language are not counted."""
    tokens = {location: location_words(locations.get(location), lang) for location in location_weights}
    found = Relevance()
    for term in terms:
        if lang and term.lang and term.lang != lang:
            continue
        value = sum(count_term(part, term.words) * weight for location, weight in location_weights.items()
                    for part in tokens[location])
        if value:
            found.score += value * term.weight
            found.distinct_terms += 1
            if term.subtopic:
                found.subtopics[term.subtopic] = found.subtopics.get(term.subtopic, 0.0) + value * term.weight
    return found


def domain_relevance(pages: pd.DataFrame, terms: list[DomainTerm], min_score: float = DEFAULT_MIN_SCORE,
                     min_terms: int = DEFAULT_MIN_TERMS) -> pd.DataFrame:
    """Batch form: pages with columns among title, metadata, keywords, text (and lang) -> relevance,
    distinct_terms, subtopic (the best-scoring one) and in_domain."""
    rows = []
    for record in pages.to_dict("records"):
        found = relevance(record, terms, lang=record.get("lang") or None)
        rows.append({"relevance": found.score, "distinct_terms": found.distinct_terms,
                     "subtopic": found.best_subtopic, "in_domain": found.in_domain(min_score, min_terms)})
    return pd.DataFrame(rows, index=pages.index, columns=FOCUS_COLUMNS)


def score_texts(batches: Iterator[pd.DataFrame], terms: list[DomainTerm], min_score: float = DEFAULT_MIN_SCORE,
                min_terms: int = DEFAULT_MIN_TERMS) -> Iterator[pd.DataFrame]:
    """mapInPandas over `texts` rows (url, lang, title, description, keywords, main_text): url and the
    FOCUS_COLUMNS."""
    for batch in batches:
        pages = pd.DataFrame({"title": batch["title"], "metadata": batch["description"],
                              "keywords": batch["keywords"], "text": batch["main_text"], "lang": batch["lang"]})
        scored = domain_relevance(pages, terms, min_score, min_terms)
        scored["distinct_terms"] = scored["distinct_terms"].astype("int32")
        yield pd.concat([batch[["url"]], scored], axis=1)


#: pairs left out by --in-domain-only: neither page in the domain, or neither page scored (no texts row)
FILTERED_REASONS = frozenset({"off_domain", "no_domain_text"})
BAD_REASONS: frozenset[str] = frozenset()
NO_FOCUS_MESSAGE = "--in-domain-only: the texts table has no in_domain column; run fetch-docs with --domain-terms FILE"


def pairs_in_domain(pairs, texts, by: str | None = None, error: type[Exception] = ValueError):
    """Spark: (the pairs whose src or trg page is in the domain, {'in_domain' | reason: pairs}); with `by`, the
    counts per value of that column, {value: {'in_domain' | reason: pairs}}. A texts table without the in_domain
    flag raises `error` (a job passes its ConfigError: fetch-docs must run with --domain-terms first).

    One in-domain side is enough: a translation is on its original's topic, and a term list often covers one
    language better than the other. A pair neither of whose pages has a texts row is `no_domain_text`."""
    from pyspark.sql import functions as F

    if "in_domain" not in texts.columns:
        raise error(NO_FOCUS_MESSAGE)
    flags = texts.select("url", "in_domain").dropDuplicates(["url"])
    for side in ("src", "trg"):
        pairs = pairs.join(flags.select(F.col("url").alias(f"{side}_url"), F.col("in_domain").alias(f"_{side}_in")),
                           f"{side}_url", "left")
    status = (F.when(F.col("_src_in") | F.col("_trg_in"), "in_domain")
              .when(F.col("_src_in").isNull() & F.col("_trg_in").isNull(), "no_domain_text").otherwise("off_domain"))
    labelled = pairs.withColumn("_domain_status", status)
    counts: dict = {}
    for row in labelled.groupBy(*([by] if by else []), "_domain_status").count().collect():
        (counts.setdefault(row[by], {}) if by else counts)[row["_domain_status"]] = row["count"]
    kept = labelled.where(F.col("_domain_status") == "in_domain").drop("_src_in", "_trg_in", "_domain_status")
    return kept, counts
