"""Content similarity of two pages: STRAND's tsim (Resnik & Smith 2003, §3, eq. 4) and its companions.

tsim links the words of two texts (the first 500 words of each) one to one by competitive
linking (Melamed 2000): candidate links are scored — identical strings (numbers, names, codes)
1.0, a lexicon entry its probability, a cognate (udfs.lexicon.cognate) its similarity times
COGNATE_WEIGHT — and taken best first while both words are still free. Every word left over is
a one-word link, so

    tsim = two-word links / all links = L / (N_src + N_trg - L).

`tsim_idf` weighs every word by its inverse document frequency within the host (a two-word
link by the mean of its words'), so shared template words count little and names much.
`short_side_coverage` is the share of the shorter text's words linked: tsim's denominator
grows with the length difference, which a terse translation (Arabic, Basque) has for real.
`diagonal_share` is the (IDF-weighted) share of linked word occurrences whose relative positions
in the two texts differ by at most DIAGONAL_BAND (a type's k-th free occurrence links the other's
k-th): a translation says the same things in the same order, while two listing pages of one
section in two languages share translated teasers at shifted places between items that differ.
Companions: overlap of numbers and of identical rare tokens, paragraph-count ratio, the
correlation of paragraph lengths, and the share of a page's text whose paragraphs CLD2 labelled
with the page's language (texts.paragraphs.lang).
"""
from __future__ import annotations

import functools
import math
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from parascout.udfs.lexicon import COGNATE_MIN_CHARS, Lexicon, cognate, tokenize
from parascout.udfs.structure import pearson_significance

MAX_WORDS = 500
COGNATE_WEIGHT = 0.9
COGNATE_PREFIX = 4
#: a token on at most this share of a host's pages (at most RARE_MAX_DOCS, at least 2 pages) is rare
RARE_MAX_SHARE = 0.05
RARE_MAX_DOCS = 3
#: a link is on the diagonal when its words' relative positions (position / words) differ by at most this
DIAGONAL_BAND = 0.1


@dataclass
class PageText:
    """What tsim needs of one page, computed once per page (not once per pair)."""

    counts: Counter
    words: int
    numbers: frozenset[str]
    paragraph_lengths: list[int]
    lang_share: float | None
    prefixes: dict[str, list[tuple[str, str]]]  # cognate candidates: folded 4-letter prefix -> (word, folded)
    positions: dict[str, list[float]]  # word -> its occurrences' relative positions (position / words)
    images: dict = field(default_factory=dict)  # translation_image per lexicon, IDF mass per table: on first use


@functools.lru_cache(maxsize=1 << 16)
def _fold(word: str) -> str:
    """The word without diacritics (cognates compare folded words); cached: a host's pages repeat their words."""
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def page_text(paragraphs: Iterable[dict] | None, lang: str | None, main_text: str | None = None) -> PageText:
    """Tokens (first MAX_WORDS of the non-boilerplate text), numbers, paragraph lengths, CLD2 share."""
    main = [p for p in (paragraphs or []) if not p.get("boilerplate") and (p.get("text") or "").strip()]
    text = "\n".join(p["text"] for p in main) if main else (main_text or "")
    tokens = tokenize(text, lang)[:MAX_WORDS]
    counts = Counter(tokens)
    labelled = [(len(p["text"]), p.get("lang")) for p in main if p.get("lang")]
    total = sum(length for length, _ in labelled)
    share = sum(length for length, code in labelled if code == lang) / total if total and lang else None
    prefixes: dict[str, list[tuple[str, str]]] = {}
    for word in counts:
        if len(word) >= COGNATE_MIN_CHARS and not word.isdigit():
            folded = _fold(word)
            prefixes.setdefault(folded[:COGNATE_PREFIX], []).append((word, folded))
    positions: dict[str, list[float]] = {}
    for index, token in enumerate(tokens):
        positions.setdefault(token, []).append(index / len(tokens))
    return PageText(counts, len(tokens), frozenset(w for w in counts if w.isdigit()),
                    [len(p["text"]) for p in main], share, prefixes, positions)


def translation_image(page: PageText, lexicon: Lexicon | None) -> list[tuple[float, str, str]]:
    """(prob, word, translation) of every lexicon entry of the page's words (computed once per page)."""
    if lexicon is None:
        return []
    table = lexicon.table
    return [(prob, word, translation) for word in page.counts for translation, prob in
            (table.get(word) or {}).items()]


def candidate_links(src: PageText, trg: PageText, lexicon: Lexicon | None,
                    image: list[tuple[float, str, str]] | None = None) -> list[tuple[float, str, str]]:
    """(score, src_word, trg_word) for every pair of word types that may link, best first (a pair may
    appear twice, e.g. identical and in the lexicon: competitive linking uses the first)."""
    trg_counts = trg.counts
    links = [(1.0, word, word) for word in src.counts if word in trg_counts]
    if image is None:
        key = id(lexicon)
        if key not in src.images:
            src.images[key] = translation_image(src, lexicon)
        image = src.images[key]
    links += [entry for entry in image if entry[2] in trg_counts]
    for prefix, words in src.prefixes.items():
        others = trg.prefixes.get(prefix)
        if others:
            for other, other_folded in others:
                for word, folded in words:
                    if word != other:
                        similarity = cognate(folded, other_folded)
                        if similarity:
                            links.append((COGNATE_WEIGHT * similarity, word, other))
    links.sort(reverse=True)
    return links


def tsim(src: PageText, trg: PageText, lexicon: Lexicon | None, src_idf: dict[str, float] | None = None,
         trg_idf: dict[str, float] | None = None, default_idf: float = 1.0) -> tuple[float | None, float | None]:
    """(tsim, tsim_idf) of two pages by competitive linking; (None, None) when a side has no words."""
    result = linked(src, trg, lexicon, src_idf, trg_idf, default_idf)
    return result["tsim"], result["tsim_idf"]


def linked(src: PageText, trg: PageText, lexicon: Lexicon | None, src_idf: dict[str, float] | None = None,
           trg_idf: dict[str, float] | None = None, default_idf: float = 1.0) -> dict:
    """tsim, tsim_idf, two-word `links`, diagonal_share and best_side_coverage_idf (the IDF mass linked on the
    better-covered side: high for a translation, and for a partial one, low when both sides say other things)."""
    if not src.words or not trg.words:
        return {"tsim": None, "tsim_idf": None, "links": 0, "diagonal_share": None, "best_side_coverage_idf": None}
    src_free, trg_free = dict(src.counts), dict(trg.counts)
    links = 0
    src_linked_weight = trg_linked_weight = 0.0
    diagonal = linked_mass = 0.0
    for _, s, t in candidate_links(src, trg, lexicon):
        n = min(src_free[s], trg_free[t])
        if n:
            src_used, trg_used = src.counts[s] - src_free[s], trg.counts[t] - trg_free[t]
            src_free[s] -= n
            trg_free[t] -= n
            links += n
            weight = 1.0
            if src_idf is not None:
                s_weight, t_weight = src_idf.get(s, default_idf), trg_idf.get(t, default_idf)
                src_linked_weight += n * s_weight
                trg_linked_weight += n * t_weight
                weight = (s_weight + t_weight) / 2
            if n == 1:
                on_diagonal = abs(src.positions[s][src_used] - trg.positions[t][trg_used]) <= DIAGONAL_BAND
            else:
                on_diagonal = sum(abs(a - b) <= DIAGONAL_BAND for a, b in zip(
                    src.positions[s][src_used:src_used + n], trg.positions[t][trg_used:trg_used + n]))
            diagonal += weight * on_diagonal
            linked_mass += weight * n
    result = {"tsim": links / (src.words + trg.words - links), "tsim_idf": None, "links": links,
              "diagonal_share": diagonal / linked_mass if linked_mass > 0 else None, "best_side_coverage_idf": None}
    if src_idf is None:
        return result
    src_weight, trg_weight = _weight(src, src_idf, default_idf), _weight(trg, trg_idf, default_idf)
    linked_weight = (src_linked_weight + trg_linked_weight) / 2
    total = linked_weight + src_weight - src_linked_weight + trg_weight - trg_linked_weight
    result["tsim_idf"] = linked_weight / total if total > 0 else None
    if src_weight > 0 and trg_weight > 0:
        result["best_side_coverage_idf"] = max(src_linked_weight / src_weight, trg_linked_weight / trg_weight)
    return result


def _weight(page: PageText, idf: dict[str, float], default_idf: float) -> float:
    """The IDF mass of a page's words (cached on the page per IDF table)."""
    key = ("idf", id(idf))
    if key not in page.images:
        page.images[key] = sum(n * idf.get(w, default_idf) for w, n in page.counts.items())
    return page.images[key]


def inverse_document_frequencies(pages: Iterable[PageText]) -> tuple[dict[str, float], float, set[str]]:
    """(idf per word, the idf of an unseen word, the rare words) over one host's pages."""
    frequencies: Counter = Counter()
    documents = 0
    for page in pages:
        documents += 1
        frequencies.update(page.counts.keys())
    idf = {word: math.log((documents + 1) / (df + 0.5)) for word, df in frequencies.items()}
    rare_limit = max(2, min(RARE_MAX_DOCS, int(RARE_MAX_SHARE * documents)))  # a pair's shared name: df 2
    rare = {word for word, df in frequencies.items() if df <= rare_limit}
    return idf, math.log((documents + 1) / 0.5), rare


def overlap(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float | None:
    """Dice coefficient of two sets; None when both are empty."""
    if not a and not b:
        return None
    return 2 * len(a & b) / (len(a) + len(b))


def content_features(src: PageText, trg: PageText, lexicon: Lexicon | None, src_idf: dict | None = None,
                     trg_idf: dict | None = None, default_idf: float = 1.0, rare: set[str] | None = None) -> dict:
    """tsim, tsim_idf, diagonal share, number and rare-token overlap, paragraph ratio and length correlation, CLD2 shares."""
    result = linked(src, trg, lexicon, src_idf, trg_idf, default_idf)
    rare = rare or set()
    src_rare = {w for w in src.counts if w in rare and not w.isdigit() and len(w) > 2}
    trg_rare = {w for w in trg.counts if w in rare and not w.isdigit() and len(w) > 2}
    count = min(len(src.paragraph_lengths), len(trg.paragraph_lengths))
    r, _ = pearson_significance(src.paragraph_lengths[:count], trg.paragraph_lengths[:count])
    paragraphs = max(len(src.paragraph_lengths), len(trg.paragraph_lengths))
    shorter = min(src.words, trg.words)
    return {"tsim": result["tsim"], "tsim_idf": result["tsim_idf"],
            "short_side_coverage": result["links"] / shorter if shorter else None,
            "diagonal_share": result["diagonal_share"], "best_side_coverage_idf": result["best_side_coverage_idf"],
            "number_overlap": overlap(src.numbers, trg.numbers),
            "rare_overlap": overlap(src_rare, trg_rare),
            "text_paragraph_ratio": count / paragraphs if paragraphs else None, "paragraph_length_r": r,
            "src_lang_share": src.lang_share, "trg_lang_share": trg.lang_share,
            "src_words": src.words, "trg_words": trg.words}
