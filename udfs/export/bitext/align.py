"""Sentence alignment inside one document pair: Gale–Church lengths, plus a lexicon (hunalign-style).

A dynamic programme over beads 1-1, 1-0, 0-1, 2-1 and 1-2 minimises the sum of bead costs:
- length (Gale & Church 1993): the target length in source-character units (divided by the
  document's own length ratio, so Chinese against English needs no constant) against the source
  length, delta = (l_trg/c - l_src) / sqrt(s2 · mean length), cost -log 2(1 - Phi(|delta|));
- prior: -log P(bead type) (G&C's 0.89 for 1-1, 0.089 shared by 2-1 / 1-2, 0.0099 by 1-0 / 0-1);
- lexicon (with `lexicon=`): hunalign's dictionary similarity, the share of words on both sides
  with a translation (or the identical word: numbers, names) on the other side, sim in [0, 1], each
  word weighted by its inverse sentence frequency in its document (an article in every sentence says
  little); a bead costs `lexicon_weight` · (1 - sim) · its words in units of the document's average
  sentence, so merging a poor pair into a good one dilutes nothing. A 1-0 / 0-1 bead costs as a pair of
  `null_similarity_share` times the document's typical similarity would (the median of every sentence's
  best 1-1 similarity), so a pair with fewer words in common than true pairs of that document have
  loses to leaving both sides unaligned, with a sparse lexicon as with a rich one. In this
  mode a 1-0 / 0-1 bead's prior is `lexicon_null_prior` and its length term a constant (web pages
  hold untranslated notes and furniture), the length variance is `lexicon_length_variance`, 2-2 beads are rarer and
  2-1 / 1-2 likelier (`lexicon_priors`), and when the paired sentences' length ratio differs from
  the whole documents' (an untranslated run skews it) the pair is aligned again with the former. After the DP,
  `absorb_unaligned` merges a 1-0 / 0-1 sentence into the neighbouring pair of its paragraph when that keeps at
  least `absorb_share` of the pair's similarity (recursively, so beads of any shape arise: 2-2, 1-3, 3-2 where two languages cut a
  passage into sentences at different places, a clause a translator made its own sentence); then
  `detach_untranslated` takes back out of a bead a first or last sentence that adds no link of its own (an
  untranslated verse glued to its translated neighbour) and splits a 1-1 pair with no link at all.
- structure (with `layouts=`, from the `texts` table's paragraphs): a title or heading pairs only 1-1 (with
  `type_mismatch_cost` against a sentence) or stays alone, never merged with a sentence; a bead pairing a list
  item with body text, or mixing them on one side, costs `type_mismatch_cost` too; a bead costs `crossing_cost`
  for every paragraph boundary inside one of its sides, and `boundary_cost` when it opens a paragraph on one
  side only (paragraph boundaries as soft anchors, like the <p> marks hunalign aligns).
The lexicon is any object with `.translations(src_word) -> {trg_word: prob}`; words come from the
`tokenize(text, lang)` passed in. The DP runs row by row in numpy (the 0-1 moves inside a row are a
running minimum), so a page pair costs a few hundred numpy calls, not a Python loop per cell.
The costs, priors and thresholds named in `code` are AlignmentConfig's fields (udfs.export.bitext.config), passed down as
`config`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import log_ndtr

from parascout.udfs.export.bitext.config import DEFAULT, AlignmentConfig

#: bead types (source sentences, target sentences) in the order the back-pointers use
BEADS = ((1, 1), (1, 0), (2, 1), (1, 2), (2, 2), (3, 1), (1, 3), (0, 1))
#: Gale & Church's bead priors (lengths only); with a lexicon, `lexicon_priors` replaces some of them
PRIORS = {(1, 1): 0.89, (1, 0): 0.0099 / 2, (0, 1): 0.0099 / 2, (2, 1): 0.089 / 2, (1, 2): 0.089 / 2,
          (2, 2): 0.011, (3, 1): 0.005, (1, 3): 0.005}


def lexicon_priors(config: AlignmentConfig = DEFAULT) -> dict[tuple[int, int], float]:
    """The bead priors of lexicon mode: G&C's with the config's 1-0 / 0-1, 2-1 / 1-2 and 2-2 priors."""
    return {**PRIORS, (1, 0): config.lexicon_null_prior, (0, 1): config.lexicon_null_prior,
            (2, 1): config.lexicon_merge_prior, (1, 2): config.lexicon_merge_prior,
            (2, 2): config.lexicon_two_two_prior}


@dataclass(frozen=True)
class Layout:
    """A document side's structure per sentence: opens a paragraph, is a title or heading (standalone), and
    its paragraph class (0 text, 1 list item, 2 title or heading)."""

    starts: np.ndarray
    standalone: np.ndarray
    kind: np.ndarray
    terms: dict = field(default_factory=dict, compare=False, repr=False)  # (size, merged, costs) -> window_term

    def window_term(self, size: int, merged: bool, config: AlignmentConfig = DEFAULT) -> np.ndarray:
        """Per window of `size` sentences: paragraph boundaries crossed, list items mixed with text, and (in a
        bead merging sentences) a title or heading inside; cached, as every bead type and realignment asks."""
        key = (size, merged, config.crossing_cost, config.type_mismatch_cost)
        if key not in self.terms:
            standalone = _window_sum(self.standalone.astype(np.float64), size)
            crossings = _window_sum(self.starts.astype(np.float64), size) - self.starts[:len(self.starts) - size + 1]
            items = _window_sum((self.kind == 1).astype(np.float64), size)
            self.terms[key] = (config.crossing_cost * crossings
                               + config.type_mismatch_cost * ((items > 0) & (items < size))
                               + np.where(standalone > 0, np.inf if merged else 0.0, 0.0))
        return self.terms[key]


def layout(segments) -> Layout:
    """The Layout of `sentences.Segment`s (paragraph index and type)."""
    from parascout.udfs.export.bitext.sentences import STANDALONE_TYPES

    paragraphs = [segment.paragraph for segment in segments]
    starts = np.array([k == 0 or paragraphs[k] != paragraphs[k - 1] for k in range(len(paragraphs))], dtype=bool)
    kind = np.array([2 if s.type in STANDALONE_TYPES else 1 if s.type == "list_item" else 0 for s in segments])
    return Layout(starts, kind == 2, kind)


@dataclass(frozen=True)
class Bead:
    """One aligned unit: source sentence indices, target sentence indices, a score in [0, 1]."""

    src: tuple[int, ...]
    trg: tuple[int, ...]
    score: float

    @property
    def kind(self) -> str:
        return f"{len(self.src)}-{len(self.trg)}"


def length_cost(src_chars: np.ndarray, trg_chars: np.ndarray, ratio: float,
                variance: float = DEFAULT.length_variance) -> np.ndarray:
    """-log P(lengths | match) of G&C with the target length in source units (broadcasts)."""
    scaled = trg_chars / ratio
    mean = np.maximum((src_chars + scaled) / 2.0, 1.0)
    delta = (scaled - src_chars) / np.sqrt(variance * mean)
    return -(math.log(2.0) + log_ndtr(-np.abs(delta)))


def _window_sum(values: np.ndarray, size: int, axis: int = 0) -> np.ndarray:
    """Sums of `size` consecutive entries along an axis (a window of sentences read as one)."""
    if size == 1:
        return values
    total = np.cumsum(values, axis=axis, dtype=values.dtype)
    total = np.concatenate([np.zeros_like(total.take([0], axis=axis)), total], axis=axis)
    length = values.shape[axis]
    return total.take(range(size, length + 1), axis=axis) - total.take(range(length - size + 1), axis=axis)


class LexicalSimilarity:
    """hunalign's dictionary similarity of every candidate bead of a document pair.

    Only words with a link (a lexicon translation or the identical word on the other side) enter the
    matrices: matched target words of a source window d are reachable_d @ target counts, and both
    matched counts are linear in the other side's counts, so wider windows are window sums.
    """

    def __init__(self, src_tokens: list[list[str]], trg_tokens: list[list[str]], lexicon,
                 config: AlignmentConfig = DEFAULT):
        self.null_similarity_share = config.null_similarity_share
        min_prob = config.min_translation_prob
        trg_vocabulary = {word for sentence in trg_tokens for word in sentence}
        links: dict[str, set[str]] = {}
        for word in {word for sentence in src_tokens for word in sentence}:
            translations = lexicon.translations(word)
            candidates = trg_vocabulary if len(translations) > len(trg_vocabulary) else translations
            targets = {trg for trg in candidates if translations.get(trg, 0.0) >= min_prob and trg in trg_vocabulary}
            if word in trg_vocabulary:
                targets.add(word)
            if targets:
                links[word] = targets
        src_index = {word: i for i, word in enumerate(links)}
        trg_index = {word: i for i, word in enumerate({t for targets in links.values() for t in targets})}
        self.links = np.zeros((len(src_index), len(trg_index)), dtype=np.float32)
        for word, targets in links.items():
            self.links[src_index[word], [trg_index[t] for t in targets]] = 1.0
        self.src_counts, self.src_words = _weighted_counts(src_tokens, src_index, config.idf_power)
        self.trg_counts, self.trg_words = _weighted_counts(trg_tokens, trg_index, config.idf_power)

    def bead(self, src: tuple[int, ...], trg: tuple[int, ...]) -> float:
        """The similarity of one bead of any shape (the sentences of each side read as one)."""
        src_counts = self.src_counts[list(src)].sum(axis=0)
        trg_counts = self.trg_counts[list(trg)].sum(axis=0)
        matched = (((src_counts @ self.links) > 0) @ trg_counts) + (src_counts @ ((self.links @ (trg_counts > 0)) > 0))
        words = self.src_words[list(src)].sum() + self.trg_words[list(trg)].sum()
        return float(matched / words) if words > 0 else 0.0

    def unique_share(self, side: int, index: int, rest: tuple[int, ...], other: tuple[int, ...]) -> float:
        """The share of the `other` sentences' words (of the other side) that sentence `index` of `side` links to
        and the `rest` of its side's sentences do not: what that sentence adds to a bead."""
        own_counts, other_counts = (self.src_counts, self.trg_counts) if side == 0 else (self.trg_counts, self.src_counts)
        other_words = (self.trg_words, self.src_words)[side][list(other)].sum()
        links = self.links if side == 0 else self.links.T
        reached = ((own_counts[[index]] @ links) > 0)[0]
        if rest:
            reached &= ~((own_counts[list(rest)].sum(axis=0) @ links) > 0)
        return float(other_counts[list(other)].sum(axis=0) @ reached / other_words) if other_words > 0 else 0.0

    def all_beads(self, beads=None) -> dict[tuple[int, int], np.ndarray]:
        """(matched source words + matched target words) / all words, per bead type."""
        beads = [b for b in (beads or BEADS) if b[0] and b[1]
                 and b[0] <= len(self.src_words) and b[1] <= len(self.trg_words)]
        matched_trg, matched_src = {}, {}
        for size in {di for di, _ in beads}:  # target words reachable from a source window
            reachable = (_window_sum(self.src_counts, size) @ self.links > 0).astype(np.float32)
            matched_trg[size] = reachable @ self.trg_counts.T
        for size in {dj for _, dj in beads}:  # source words with a translation in a target window
            present = (_window_sum(self.trg_counts, size).T > 0).astype(np.float32)
            translated = (self.links @ present > 0).astype(np.float32)
            matched_src[size] = self.src_counts @ translated
        similarity = {}
        for di, dj in beads:
            matched = _window_sum(matched_trg[di], dj, axis=1) + _window_sum(matched_src[dj], di, axis=0)
            words = _window_sum(self.src_words, di)[:, None] + _window_sum(self.trg_words, dj)[None, :]
            similarity[(di, dj)] = np.divide(matched, words, out=np.zeros(matched.shape), where=words > 0)
        share = 2.0 / max(np.mean(np.concatenate([self.src_words, self.trg_words])), 1.0)  # per average sentence
        for di, dj in beads:  # the bead's words in average-sentence units: merging cannot dilute a poor match
            similarity[("size", di, dj)] = share * (_window_sum(self.src_words, di)[:, None]
                                                    + _window_sum(self.trg_words, dj)[None, :]) / 2.0
        best = np.concatenate([similarity[(1, 1)].max(axis=1), similarity[(1, 1)].max(axis=0)])
        similarity["null"] = self.null_similarity_share * float(np.median(best))
        similarity[("size", 1, 0)] = share * self.src_words / 2.0
        similarity[("size", 0, 1)] = share * self.trg_words / 2.0
        return similarity


def _weighted_counts(sentences: list[list[str]], index: dict[str, int], idf_power: float = DEFAULT.idf_power
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(weighted counts of the indexed words per sentence, weighted length of every sentence). A word weighs
    log(1 + sentences / sentences holding it) ** idf_power in its document, so a word found in every sentence
    (an article, a particle) tells less than one found in a single sentence."""
    vocabulary: dict[str, int] = {}
    rows = np.array([row for row, sentence in enumerate(sentences) for _ in sentence], dtype=np.int64)
    columns = np.array([vocabulary.setdefault(word, len(vocabulary)) for sentence in sentences for word in sentence],
                       dtype=np.int64)
    n, size = len(sentences), max(len(vocabulary), 1)
    holding = np.bincount(np.unique(rows * size + columns) % size, minlength=size)
    weight = np.log1p(n / np.maximum(holding, 1)) ** idf_power
    lengths = np.bincount(rows, weights=weight[columns], minlength=n).astype(np.float64)
    mapping = np.array([index.get(word, -1) for word in vocabulary] or [-1], dtype=np.int64)[columns]
    linked = mapping >= 0
    counts = np.zeros((n, len(index)), dtype=np.float32)
    np.add.at(counts, (rows[linked], mapping[linked]), weight[columns[linked]])
    return counts, lengths


def length_ratio(src_chars: float, trg_chars: float, limit: float = DEFAULT.max_document_ratio) -> float:
    """Target / source characters, clipped to [1/limit, limit]."""
    return float(np.clip(trg_chars / max(src_chars, 1.0), 1 / limit, limit))


def structure_cost(bead: tuple[int, int], src: Layout, trg: Layout, config: AlignmentConfig = DEFAULT
                   ) -> np.ndarray | float:
    """The structure term of every bead of a type with sentences on both sides (see the module docstring)."""
    di, dj = bead
    merged = di * dj > 1
    cost = src.window_term(di, merged, config)[:, None] + trg.window_term(dj, merged, config)[None, :]
    src_starts, trg_starts = src.starts[:len(src.starts) - di + 1], trg.starts[:len(trg.starts) - dj + 1]
    src_kind, trg_kind = src.kind[:len(src.kind) - di + 1], trg.kind[:len(trg.kind) - dj + 1]
    return (cost + config.boundary_cost * (src_starts[:, None] != trg_starts[None, :])
            + config.type_mismatch_cost * (src_kind[:, None] != trg_kind[None, :]))


def bead_costs(src: list[str], trg: list[str], similarity: dict | None, ratio: float | None = None,
               layouts: tuple[Layout, Layout] | None = None, config: AlignmentConfig = DEFAULT
               ) -> tuple[dict[tuple[int, int], np.ndarray], dict[tuple[int, int], np.ndarray]]:
    """(cost, score) arrays per bead type: cost[(1,1)][i, j] is the bead src i .. with trg j ..

    `ratio`: target / source characters (default: the whole documents')."""
    src_chars = np.array([len(s) for s in src], dtype=np.float64)
    trg_chars = np.array([len(t) for t in trg], dtype=np.float64)
    ratio = ratio or length_ratio(src_chars.sum(), trg_chars.sum(), config.max_document_ratio)
    lengths = {(1, 0): (src_chars, np.zeros_like(src_chars)), (0, 1): (np.zeros_like(trg_chars), trg_chars)}
    for di, dj in BEADS:
        if di and dj and di <= len(src) and dj <= len(trg):
            lengths[(di, dj)] = (_window_sum(src_chars, di)[:, None], _window_sum(trg_chars, dj)[None, :])
    costs, scores = {}, {}
    priors = lexicon_priors(config) if similarity is not None else PRIORS
    variance = config.length_variance if similarity is None else config.lexicon_length_variance
    for bead, (src_length, trg_length) in lengths.items():
        length = length_cost(src_length, trg_length, ratio, variance)
        if similarity is not None and 0 in bead:  # with words to go by, a deletion's length says little
            length = np.full_like(length, config.null_length_cost)
        prior = priors[bead]
        cost = length - math.log(prior)
        score = np.exp(-length)  # P(|delta| at least this large): 1 for a perfect length match
        if similarity is not None:
            sim = similarity.get(bead, similarity["null"])
            cost = cost + config.lexicon_weight * (1.0 - sim) * similarity[("size", *bead)]
            score = (score + sim) / 2.0
        if layouts is not None and 0 not in bead:
            cost = cost + structure_cost(bead, *layouts, config)
        costs[bead], scores[bead] = cost, score
    return costs, scores


def _dp(costs: dict[tuple[int, int], np.ndarray], n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-by-row DP; returns (bead choice per cell, column the 0-1 run started from per cell)."""
    total = np.full((n + 1, m + 1), np.inf)
    choice = np.zeros((n + 1, m + 1), dtype=np.int8)
    run_start = np.zeros((n + 1, m + 1), dtype=np.int64)
    insert_prefix = np.concatenate([[0.0], np.cumsum(costs[(0, 1)])])  # cost of 0-1 beads for trg 0..j-1
    columns = np.arange(m + 1)
    moves = [(index, bead) for index, bead in enumerate(BEADS) if bead[0] and bead in costs]
    candidates = np.full((len(BEADS), m + 1), np.inf)
    for i in range(n + 1):
        candidates.fill(np.inf)
        if i == 0:
            candidates[0, 0] = 0.0
        else:
            for index, (di, dj) in moves:
                if di <= i:
                    bead_cost = costs[(di, dj)][i - di]
                    if dj:
                        candidates[index, dj:] = total[i - di, :m + 1 - dj] + bead_cost
                    else:
                        candidates[index] = total[i - di] + bead_cost
        kind = np.argmin(candidates, axis=0).astype(np.int8)
        best = candidates[kind, columns]
        shifted = best - insert_prefix  # a 0-1 run from column k to j costs prefix[j] - prefix[k]
        running = np.minimum.accumulate(shifted)
        start = np.maximum.accumulate(np.where(shifted <= running, columns, 0))
        total[i] = running + insert_prefix
        choice[i] = kind
        run_start[i] = start
    return choice, run_start


def align_sentences(src: list[str], trg: list[str], src_lang: str | None = None, trg_lang: str | None = None,
                    lexicon=None, tokenize: Callable[[str, str | None], list[str]] | None = None,
                    layouts: tuple[Layout, Layout] | None = None, config: AlignmentConfig = DEFAULT
                    ) -> list[Bead]:
    """The best bead sequence of two sentence lists (length-only when no lexicon is given; `layouts`: the
    sides' paragraph structure, see `layout`; `config`: the costs and priors)."""
    n, m = len(src), len(trg)
    if n == 0 or m == 0:
        return [Bead((i,), (), 0.0) for i in range(n)] + [Bead((), (j,), 0.0) for j in range(m)]
    similarity = None
    if lexicon is not None:
        if tokenize is None:
            raise ValueError("align_sentences: a lexicon needs a tokenize(text, lang) function")
        lexical = LexicalSimilarity([tokenize(s, src_lang) for s in src], [tokenize(t, trg_lang) for t in trg],
                                    lexicon, config)
        similarity = lexical.all_beads()
    beads = _best_beads(src, trg, similarity, None, layouts, config)
    if similarity is not None:  # untranslated runs skew the documents' length ratio: re-estimate it on the pairs
        paired = [bead for bead in beads if bead.src and bead.trg]
        ratio = length_ratio(sum(len(src[i]) for b in paired for i in b.src),
                             sum(len(trg[j]) for b in paired for j in b.trg), config.max_document_ratio)
        whole = length_ratio(sum(map(len, src)), sum(map(len, trg)), config.max_document_ratio)
        if paired and abs(math.log(ratio / whole)) > config.ratio_tolerance:
            beads = _best_beads(src, trg, similarity, ratio, layouts, config)
        else:
            ratio = whole
        lengths = ([len(s) for s in src], [len(t) for t in trg], ratio)
        beads = detach_untranslated(absorb_unaligned(beads, lexical, layouts, lengths, config), lexical, lengths,
                                    similarity[(1, 1)], config)
    return beads


def _neighbours(beads: list[Bead], k: int, side: int):
    """The paired beads before and after the unaligned bead k whose `side` sentences touch its sentence (beads
    unaligned on the other side only may lie between)."""
    index = (beads[k].src or beads[k].trg)[0]
    for step in (-1, 1):
        n = k + step
        while 0 <= n < len(beads) and not (beads[n].src and beads[n].trg) and not (beads[n].src, beads[n].trg)[side]:
            n += step
        if not (0 <= n < len(beads)) or not (beads[n].src and beads[n].trg):
            continue
        own = (beads[n].src, beads[n].trg)[side]
        if (own[-1] == index - 1) if step < 0 else (own[0] == index + 1):
            yield n


def absorb_unaligned(beads: list[Bead], lexical: LexicalSimilarity, layouts: tuple[Layout, Layout] | None,
                     lengths: tuple[list[int], list[int], float], config: AlignmentConfig = DEFAULT) -> list[Bead]:
    """Unaligned sentences merged into a neighbouring pair of the same paragraph when the merged bead's lexical
    similarity is at least `absorb_share` of the pair's own (vecalign/hunalign-style recursive merging: a piece a
    translator cut off a sentence, or a short one with no counterpart, joins the pair it belongs to; an
    untranslated sentence dilutes the pair's similarity and stays alone). `lengths`: the sides' sentence lengths in
    characters and the target / source ratio, for the merged bead's score."""
    beads = list(beads)
    paragraphs = None if layouts is None else [np.cumsum(side.starts) for side in layouts]
    similarities: dict[tuple, float] = {}  # each pass after a merge looks again at the beads it passed: scored once

    def similarity(src: tuple[int, ...], trg: tuple[int, ...]) -> float:
        if (src, trg) not in similarities:
            similarities[src, trg] = lexical.bead(src, trg)
        return similarities[src, trg]

    changed = True
    while changed:
        changed = False
        for k, bead in enumerate(beads):
            if bead.src and bead.trg:
                continue
            side = 0 if bead.src else 1
            index = (bead.src or bead.trg)[0]
            if layouts is not None and layouts[side].standalone[index]:
                continue
            best, best_gain = None, -np.inf
            for n in _neighbours(beads, k, side):
                sides = [beads[n].src, beads[n].trg]
                if layouts is not None:
                    near = sides[side][-1] if n < k else sides[side][0]
                    if paragraphs[side][near] != paragraphs[side][index] \
                            or layouts[side].kind[near] != layouts[side].kind[index] \
                            or any(layouts[0].standalone[list(beads[n].src)]) \
                            or any(layouts[1].standalone[list(beads[n].trg)]):
                        continue
                old = similarity(beads[n].src, beads[n].trg)
                sides[side] = tuple(sorted(sides[side] + (index,)))
                new = similarity(*sides)
                if new >= config.absorb_share * old and new - old > best_gain:
                    best, best_gain = (n, sides), new - old
            if best is not None:
                n, (src, trg) = best
                beads[n] = Bead(src, trg, _bead_score(src, trg, lexical, lengths, config))
                del beads[k]
                changed = True
                break
    return beads


def _bead_score(src: tuple[int, ...], trg: tuple[int, ...], lexical: LexicalSimilarity,
                lengths: tuple[list[int], list[int], float], config: AlignmentConfig = DEFAULT) -> float:
    """A bead's score after the DP: its length fit and lexical similarity, as `bead_costs` scores it."""
    src_chars, trg_chars = sum(lengths[0][i] for i in src), sum(lengths[1][j] for j in trg)
    fit = math.exp(-float(length_cost(np.float64(src_chars), np.float64(trg_chars), lengths[2],
                                      config.lexicon_length_variance)))
    return (fit + lexical.bead(src, trg)) / 2.0


def detach_untranslated(beads: list[Bead], lexical: LexicalSimilarity, lengths: tuple[list[int], list[int], float],
                        pairs: np.ndarray | None = None, config: AlignmentConfig = DEFAULT) -> list[Bead]:
    """A first or last sentence of a bead's side that adds almost no link into the other side (the words it links
    to, the rest of its side links to as well: less than `detach_unique_share` of its share of the side's words) while
    holding at least `detach_min_share` of them, and `detach_min_length` of the page's median sentence, leaves the bead as
    a 1-0 / 0-1 (an untranslated verse glued to its translated neighbour: neighbouring verses share names and words,
    so its own links say little, what it adds does); of two such ends, the one whose leaving keeps the more similar
    bead goes first. A 1-1 pair with no link either way is two unaligned sentences. `lengths`: as `absorb_unaligned`
    takes them, for the smaller bead's score; `pairs`: every 1-1 bead's similarity when already computed."""
    result: list[Bead] = []
    typical = (float(np.median(lexical.src_words)), float(np.median(lexical.trg_words)))
    for bead in beads:
        if not bead.src or not bead.trg:
            result.append(bead)
            continue
        if len(bead.src) == 1 and len(bead.trg) == 1:
            if (lexical.bead(bead.src, bead.trg) if pairs is None else pairs[bead.src[0], bead.trg[0]]) == 0.0:
                result += [Bead(bead.src, (), 0.0), Bead((), bead.trg, 0.0)]
            else:
                result.append(bead)
            continue
        sides = [list(bead.src), list(bead.trg)]
        before, after = [], []
        while True:  # the qualifying end whose leaving keeps the most similar bead goes first, then look again
            best = None
            for side in (0, 1):
                words = (lexical.src_words, lexical.trg_words)[side]
                total = words[sides[side]].sum()
                for index in {sides[side][0], sides[side][-1]} if len(sides[side]) > 1 else ():
                    rest = tuple(k for k in sides[side] if k != index)
                    share = words[index] / total if total > 0 else 0.0
                    if share < config.detach_min_share or words[index] < config.detach_min_length * typical[side] \
                            or lexical.unique_share(side, index, rest, tuple(sides[1 - side])) \
                            >= config.detach_unique_share * share:
                        continue
                    kept = (rest, tuple(sides[1])) if side == 0 else (tuple(sides[0]), rest)
                    similarity = lexical.bead(*kept)
                    if best is None or similarity > best[0]:
                        best = (similarity, side, index)
            if best is None:
                break
            _, side, index = best
            (before if index == sides[side][0] else after).append(Bead((index,), (), 0.0) if side == 0 else Bead((), (index,), 0.0))
            sides[side].remove(index)
        if len(sides[0]) == len(bead.src) and len(sides[1]) == len(bead.trg):
            result.append(bead)
            continue
        src, trg = tuple(sides[0]), tuple(sides[1])
        result += before + [Bead(src, trg, _bead_score(src, trg, lexical, lengths, config))] + after[::-1]
    return result


def align_segments(src, trg, src_lang: str | None = None, trg_lang: str | None = None, lexicon=None,
                   tokenize: Callable[[str, str | None], list[str]] | None = None, **options) -> list[Bead]:
    """align_sentences over `sentences.Segment`s, their paragraph structure included."""
    return align_sentences([s.text for s in src], [t.text for t in trg], src_lang, trg_lang, lexicon, tokenize,
                           layouts=(layout(src), layout(trg)), **options)


def _best_beads(src, trg, similarity, ratio, layouts=None, config: AlignmentConfig = DEFAULT) -> list[Bead]:
    n, m = len(src), len(trg)
    costs, scores = bead_costs(src, trg, similarity, ratio, layouts, config)
    choice, run_start = _dp(costs, n, m)
    beads: list[Bead] = []
    i, j = n, m
    while i > 0 or j > 0:
        start = run_start[i, j]
        if start < j or i == 0:
            j -= 1
            beads.append(Bead((), (j,), float(scores[(0, 1)][j])))
            continue
        di, dj = BEADS[choice[i, j]]
        i, j = i - di, j - dj
        beads.append(Bead(tuple(range(i, i + di)), tuple(range(j, j + dj)), float(_score(scores, (di, dj), i, j))))
    return beads[::-1]


def _score(scores: dict, bead: tuple[int, int], i: int, j: int) -> float:
    if bead[1] == 0:
        return scores[bead][i]
    return scores[bead][i, j]
