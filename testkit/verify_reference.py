"""verify-pairs' content features as the earlier per-pair implementation computed them: the baseline bench_verify
times and tests/verify/test_tsim.py holds the current features equal to."""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from parascout.udfs.common.language_id import _WORD, normalised, script_tokens
from parascout.udfs.lexicon.lexicon import MATCHING, Lexicon, cognate, lexicon_for
from parascout.udfs.lexicon.readers import main_paragraphs
from parascout.udfs.verify.pages import HostPages, as_list
from parascout.udfs.verify.tsim import (
    _fold,
    content_features,
    feature_row,
    link_scores,
)
from parascout.udfs.verify.verification_config import DEFAULT


# ---- the previous content path: the baseline (the package has one implementation, udfs.verify.tsim) ----------
def previous_tokenize(text: str | None, lang: str | None = None) -> list[str]:
    """udfs.lexicon.lexicon.tokenize as it was: a Han test per word, whatever the page's script."""
    if not text:
        return []
    text, arabic = normalised(text)
    return script_tokens(_WORD.findall(text), True, arabic)


@dataclass
class PreviousPage:
    counts: Counter
    words: int
    numbers: frozenset[str]
    paragraph_lengths: list[int]
    prefixes: dict[str, list[tuple[str, str]]]
    positions: dict[str, list[float]]
    images: dict = field(default_factory=dict)


def previous_page_text(paragraphs, lang: str | None, main_text: str | None = None) -> PreviousPage:
    main = main_paragraphs(paragraphs)
    text = "\n".join(p["text"] for p in main) if main else (main_text or "")
    tokens = previous_tokenize(text, lang)[:DEFAULT.tsim_max_words]
    counts = Counter(tokens)
    prefixes: dict[str, list[tuple[str, str]]] = {}
    for word in counts:
        if len(word) >= MATCHING.cognate_min_chars and not word.isdigit():
            folded = _fold(word)
            prefixes.setdefault(folded[:DEFAULT.cognate_prefix], []).append((word, folded))
    positions: dict[str, list[float]] = {}
    for index, token in enumerate(tokens):
        positions.setdefault(token, []).append(index / len(tokens))
    return PreviousPage(counts, len(tokens), frozenset(w for w in counts if w.isdigit()),
                        [len(p["text"]) for p in main], prefixes, positions)


def previous_candidate_links(src: PreviousPage, trg: PreviousPage, lexicon: Lexicon | None) -> list:
    trg_counts = trg.counts
    links = [(1.0, word, word) for word in src.counts if word in trg_counts]
    if id(lexicon) not in src.images:
        table = lexicon.table if lexicon is not None else {}
        src.images[id(lexicon)] = [(prob, word, translation) for word in src.counts
                                   for translation, prob in (table.get(word) or {}).items()]
    links += [entry for entry in src.images[id(lexicon)] if entry[2] in trg_counts]
    for prefix, words in src.prefixes.items():
        for other, other_folded in trg.prefixes.get(prefix) or ():
            for word, folded in words:
                if word != other:
                    similarity = cognate(folded, other_folded)
                    if similarity:
                        links.append((DEFAULT.cognate_weight * similarity, word, other))
    links.sort(reverse=True)
    return links


def _previous_weight(page: PreviousPage, idf: dict, default_idf: float) -> float:
    key = ("idf", id(idf))
    if key not in page.images:
        page.images[key] = sum(n * idf.get(w, default_idf) for w, n in page.counts.items())
    return page.images[key]


def previous_linked(src: PreviousPage, trg: PreviousPage, lexicon: Lexicon | None, idf: dict | None,
                    default_idf: float) -> dict:
    if not src.words or not trg.words:
        return {"tsim": None, "tsim_idf": None, "links": 0, "diagonal_share": None, "best_side_coverage_idf": None}
    src_free, trg_free = dict(src.counts), dict(trg.counts)
    links = 0
    src_linked_weight = trg_linked_weight = diagonal = linked_mass = 0.0
    for _, s, t in previous_candidate_links(src, trg, lexicon):
        n = min(src_free[s], trg_free[t])
        if n:
            src_used, trg_used = src.counts[s] - src_free[s], trg.counts[t] - trg_free[t]
            src_free[s] -= n
            trg_free[t] -= n
            links += n
            weight = 1.0
            if idf is not None:
                s_weight, t_weight = idf.get(s, default_idf), idf.get(t, default_idf)
                src_linked_weight += n * s_weight
                trg_linked_weight += n * t_weight
                weight = (s_weight + t_weight) / 2
            if n == 1:
                on_diagonal = abs(src.positions[s][src_used] - trg.positions[t][trg_used]) <= DEFAULT.diagonal_band
            else:
                on_diagonal = sum(abs(a - b) <= DEFAULT.diagonal_band for a, b in zip(
                    src.positions[s][src_used:src_used + n], trg.positions[t][trg_used:trg_used + n]))
            diagonal += weight * on_diagonal
            linked_mass += weight * n
    masses = None if idf is None else (_previous_weight(src, idf, default_idf), _previous_weight(trg, idf, default_idf))
    return link_scores(links, src.words + trg.words, diagonal, linked_mass, (src_linked_weight, trg_linked_weight),
                       masses)


def previous_idf(pages) -> tuple[dict, float, set]:
    frequencies: Counter = Counter()
    documents = 0
    for page in pages:
        documents += 1
        frequencies.update(page.counts.keys())
    idf = {word: math.log((documents + 1) / (df + 0.5)) for word, df in frequencies.items()}
    rare_limit = max(2, min(DEFAULT.rare_max_docs, int(DEFAULT.rare_max_share * documents)))
    return idf, math.log((documents + 1) / 0.5), {word for word, df in frequencies.items() if df <= rare_limit}


def previous_cut(lexicon: Lexicon | None, vocabulary: dict) -> Lexicon | None:
    """The lexicon cut to a host's words by strings (verify-pairs' HostPages.restricted before), with the stem
    back-off written out on strings: a word neither side knows takes its stem's known words' rows (source side) or
    stands in for them as a translation (target side), stem_weight times; the best entry of a pair is kept."""
    if lexicon is None:
        return None
    src_stems, trg_stems = lexicon.stems("src"), lexicon.stems("trg")
    unknown = [word for word in vocabulary if word not in src_stems.known and word not in trg_stems.known]
    stand_ins: dict[str, list[str]] = {}
    for word in unknown:
        for known in trg_stems.matches(word):
            stand_ins.setdefault(known, []).append(word)
    rows = [(word, lexicon.table[word], 1.0) for word in vocabulary.keys() & lexicon.table.keys()]
    rows += [(word, lexicon.table[known], MATCHING.stem_weight) for word in unknown for known in src_stems.matches(word)]
    table: dict[str, dict[str, float]] = {}
    for word, translations, weight in rows:
        row = table.setdefault(word, {})
        for translation, prob in translations.items():
            entries = [(translation, prob * weight)] if translation in vocabulary else []
            entries += [(other, prob * weight * MATCHING.stem_weight) for other in stand_ins.get(translation, ())]
            for other, score in entries:
                row[other] = max(row.get(other, 0.0), score)
    return Lexicon(lexicon.src_lang, lexicon.trg_lang, {word: row for word, row in table.items() if row},
                   lexicon.metadata)


def previous_content_features(src: PreviousPage, trg: PreviousPage, lexicon: Lexicon | None, idf: dict | None = None,
                              default_idf: float = 1.0, rare: set | None = None) -> dict:
    rare = rare or set()
    src_rare = {w for w in src.counts if w in rare and not w.isdigit() and len(w) > 2}
    trg_rare = {w for w in trg.counts if w in rare and not w.isdigit() and len(w) > 2}
    return feature_row(previous_linked(src, trg, lexicon, idf, default_idf), src, trg, src_rare, trg_rare)


# ---- the content features of every candidate, per host as verify-pairs prepares them ---------------------
def previous_content(candidates: pd.DataFrame, pages: pd.DataFrame, lexicons: list[Lexicon]) -> list[dict | None]:
    out = []
    for _, group in candidates.groupby("host"):
        rows = pages[pages["url"].isin(set(group["src_url"]) | set(group["trg_url"]))].to_dict("records")
        texts = {row["url"]: None if row["text_paragraphs"] is None and not row.get("main_text") else
                 previous_page_text(as_list(row["text_paragraphs"]), row["cld2_lang"], row["main_text"])
                 for row in rows}
        idf, unseen, rare = previous_idf(t for t in texts.values() if t is not None)
        cuts: dict[tuple, Lexicon | None] = {}
        for pair in group.to_dict("records"):
            key = (pair["src_lang"], pair["trg_lang"])
            if key not in cuts:
                cuts[key] = previous_cut(lexicon_for(lexicons, *key), idf)
            src, trg = texts.get(pair["src_url"]), texts.get(pair["trg_url"])
            out.append(None if src is None or trg is None else
                       previous_content_features(src, trg, cuts[key], idf, unseen, rare))
    return out


def current_content(candidates: pd.DataFrame, pages: pd.DataFrame, lexicons: list[Lexicon]) -> list[dict | None]:
    out = []
    for _, group in candidates.groupby("host"):
        host = HostPages(pages[pages["url"].isin(set(group["src_url"]) | set(group["trg_url"]))])
        chosen: dict[tuple, Lexicon | None] = {}
        for pair in group.to_dict("records"):
            key = (pair["src_lang"], pair["trg_lang"])
            if key not in chosen:
                chosen[key] = lexicon_for(lexicons, *key)
            src, trg = host.text(pair["src_url"]), host.text(pair["trg_url"])
            out.append(None if src is None or trg is None else
                       content_features(src, trg, chosen[key], host.idf, host.idf, host.unseen_idf, host.rare))
    return out


def same_features(a: dict | None, b: dict | None) -> bool:
    """Every feature equal (floats exactly), or both pairs without text."""
    if a is None or b is None:
        return a is b
    return a.keys() == b.keys() and all((a[k] is None and b[k] is None) or
                                        (a[k] is not None and b[k] is not None and a[k] == b[k]) for k in a)
