"""Content similarity of two pages: STRAND's tsim (Resnik & Smith 2003, §3, eq. 4) and its companions.

tsim links the words of two texts (the first 500 words of each) one to one by competitive
linking (Melamed 2000): candidate links are scored — identical strings (numbers, names, codes)
1.0, a lexicon entry its probability, a cognate (udfs.lexicon.cognate) its similarity times
COGNATE_WEIGHT — and taken best first while both words are still free. Every word left over is
a one-word link, so

    tsim = two-word links / all links = L / (N_src + N_trg - L).

`tsim_idf` weighs every word by its inverse document frequency within the host (a two-word
link by the mean of its words'), so shared template words count little and names much.
Companions: overlap of numbers and of identical rare tokens, paragraph-count ratio, the
correlation of paragraph lengths, and the share of a page's text whose paragraphs CLD2 labelled
with the page's language (texts.paragraphs.lang).
"""
from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from parascout.udfs.lexicon import Lexicon, cognate, tokenize
from parascout.udfs.structure import pearson_significance

MAX_WORDS = 500
COGNATE_WEIGHT = 0.9
COGNATE_PREFIX = 4
#: a token on at most this share of a host's pages (at most RARE_MAX_DOCS, at least 2 pages) is rare
RARE_MAX_SHARE = 0.05
RARE_MAX_DOCS = 3


@dataclass
class PageText:
    """What tsim needs of one page, computed once per page (not once per pair)."""

    counts: Counter
    words: int
    numbers: frozenset[str]
    paragraph_lengths: list[int]
    lang_share: float | None
    prefixes: dict[str, list[str]]


def _fold(word: str) -> str:
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
    prefixes: dict[str, list[str]] = {}
    for word in counts:
        if len(word) >= COGNATE_PREFIX + 1 and not word.isdigit():
            prefixes.setdefault(_fold(word)[:COGNATE_PREFIX], []).append(word)
    return PageText(counts, len(tokens), frozenset(w for w in counts if w.isdigit()),
                    [len(p["text"]) for p in main], share, prefixes)


def candidate_links(src: PageText, trg: PageText, lexicon: Lexicon | None) -> list[tuple[float, str, str]]:
    """(score, src_word, trg_word) for every pair of word types that may link."""
    links = {}
    trg_counts = trg.counts
    for word in src.counts:
        if word in trg_counts:
            links[(word, word)] = 1.0
        if lexicon is not None:
            for translation, prob in lexicon.translations(word).items():
                if translation in trg_counts and prob > links.get((word, translation), 0.0):
                    links[(word, translation)] = prob
    for prefix, words in src.prefixes.items():
        for other in trg.prefixes.get(prefix, ()):
            for word in words:
                if (word, other) not in links:
                    similarity = cognate(_fold(word), _fold(other))
                    if similarity:
                        links[(word, other)] = COGNATE_WEIGHT * similarity
    return sorted(((score, s, t) for (s, t), score in links.items()), reverse=True)


def tsim(src: PageText, trg: PageText, lexicon: Lexicon | None, src_idf: dict[str, float] | None = None,
         trg_idf: dict[str, float] | None = None, default_idf: float = 1.0) -> tuple[float | None, float | None]:
    """(tsim, tsim_idf) of two pages by competitive linking; (None, None) when a side has no words."""
    if not src.words or not trg.words:
        return None, None
    src_free, trg_free = dict(src.counts), dict(trg.counts)
    links = 0
    linked_weight = 0.0
    for _, s, t in candidate_links(src, trg, lexicon):
        n = min(src_free[s], trg_free[t])
        if n:
            src_free[s] -= n
            trg_free[t] -= n
            links += n
            if src_idf is not None:
                linked_weight += n * (src_idf.get(s, default_idf) + trg_idf.get(t, default_idf)) / 2
    plain = links / (src.words + trg.words - links)
    if src_idf is None:
        return plain, None
    unlinked = (sum(n * src_idf.get(w, default_idf) for w, n in src_free.items())
                + sum(n * trg_idf.get(w, default_idf) for w, n in trg_free.items()))
    total = linked_weight + unlinked
    return plain, (linked_weight / total if total > 0 else None)


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
    """tsim, tsim_idf, number and rare-token overlap, paragraph ratio and length correlation, CLD2 shares."""
    plain, weighted = tsim(src, trg, lexicon, src_idf, trg_idf, default_idf)
    rare = rare or set()
    src_rare = {w for w in src.counts if w in rare and not w.isdigit() and len(w) > 2}
    trg_rare = {w for w in trg.counts if w in rare and not w.isdigit() and len(w) > 2}
    count = min(len(src.paragraph_lengths), len(trg.paragraph_lengths))
    r, _ = pearson_significance(src.paragraph_lengths[:count], trg.paragraph_lengths[:count])
    paragraphs = max(len(src.paragraph_lengths), len(trg.paragraph_lengths))
    return {"tsim": plain, "tsim_idf": weighted, "number_overlap": overlap(src.numbers, trg.numbers),
            "rare_overlap": overlap(src_rare, trg_rare),
            "text_paragraph_ratio": count / paragraphs if paragraphs else None, "paragraph_length_r": r,
            "src_lang_share": src.lang_share, "trg_lang_share": trg.lang_share,
            "src_words": src.words, "trg_words": trg.words}
