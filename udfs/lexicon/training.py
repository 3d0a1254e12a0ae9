"""Lexicon training: IBM model 1 by EM in both directions (numpy, a few iterations) for aligned text pairs,
normalised counts both ways for dictionary entries, and the held-out lexicons of an archive-bootstrapped one.

`train_lexicon` turns the text pairs of lexicon_readers into a Lexicon; `with_held_out` adds lexicons each
trained without one fold of the archive page pairs (`page_folds`), for verify-pairs to calibrate its decision
on the scores of pages a lexicon never saw.

Why a module of its own: training runs in the train-lexicon job (and tsim's cross-fitting) only; the jobs
that only look words up import the lexicon without the EM.
"""
from __future__ import annotations

import dataclasses
import math
import time
from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from parascout.udfs.common.language_id import tokenize
from parascout.udfs.lexicon.config import DEFAULT, LexiconConfig
from parascout.udfs.lexicon.lexicon import Lexicon

#: train-lexicon --from-archive also trains this many held-out lexicons, each without one fold of the page pairs it
#: learns from (with_held_out): verify-pairs calibrates its decision on the scores they give those pairs, the scores
#: of pages a lexicon never saw (a lexicon bootstrapped from an archive knows the words of the pairs it learned from
#: far better than the words of pages it never saw)
HELD_OUT_FOLDS = 5


def _type_counts(tokens: list[str], vocab: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    ids: dict[int, int] = {}
    for token in tokens:
        index = vocab.setdefault(token, len(vocab))
        ids[index] = ids.get(index, 0) + 1
    return np.fromiter(ids.keys(), dtype=np.int64, count=len(ids)), np.fromiter(ids.values(), dtype=np.float64,
                                                                               count=len(ids))


def train_ibm1(pairs: list[tuple[list[str], list[str]]], iterations: int = 5, config: LexiconConfig = DEFAULT
               ) -> dict[tuple[str, str], float]:
    """p(trg_word | src_word) of IBM model 1 (with a NULL source word) after `iterations` EM steps, each text cut to
    config.max_sentence_words words, entries under config.min_prob dropped.

    Sentences are bags of word types with counts, every (source type, target type) link of a
    sentence pair one array entry, so an EM step is a few numpy bincounts over all links.
    """
    src_vocab, trg_vocab = {"<null>": 0}, {}
    link_pair, link_group, link_src_count, group_trg_count = [], [], [], []
    groups = 0
    for src_tokens, trg_tokens in pairs:
        if not src_tokens or not trg_tokens:
            continue
        src_tokens, trg_tokens = src_tokens[:config.max_sentence_words], trg_tokens[:config.max_sentence_words]
        src_ids, src_counts = _type_counts(src_tokens, src_vocab)
        src_ids, src_counts = np.append(src_ids, 0), np.append(src_counts, 1.0)
        trg_ids, trg_counts = _type_counts(trg_tokens, trg_vocab)
        link_pair.append((src_ids[:, None] << 32 | trg_ids[None, :]).ravel())
        link_src_count.append(np.repeat(src_counts, len(trg_ids)))
        link_group.append(np.tile(np.arange(groups, groups + len(trg_ids)), len(src_ids)))
        group_trg_count.append(trg_counts)
        groups += len(trg_ids)
    if not link_pair:
        return {}
    keys, pair_index = np.unique(np.concatenate(link_pair), return_inverse=True)
    link_group_all = np.concatenate(link_group)
    src_weight = np.concatenate(link_src_count)
    trg_weight = np.concatenate(group_trg_count)
    pair_src = (keys >> 32).astype(np.int64)
    prob = np.ones(len(keys))
    for _ in range(iterations):
        weighted = src_weight * prob[pair_index]
        totals = np.bincount(link_group_all, weighted, minlength=groups)
        posterior = weighted / totals[link_group_all] * trg_weight[link_group_all]
        expected = np.bincount(pair_index, posterior, minlength=len(keys))
        prob = expected / np.bincount(pair_src, expected)[pair_src]
    src_words = _inverse(src_vocab)
    trg_words = _inverse(trg_vocab)
    keep = (prob >= config.min_prob) & (pair_src != 0)
    return {(src_words[s], trg_words[t]): float(p)
            for s, t, p in zip(pair_src[keep], (keys[keep] & 0xFFFFFFFF), prob[keep])}


def _inverse(vocab: dict[str, int]) -> list[str]:
    words = [""] * len(vocab)
    for word, index in vocab.items():
        words[index] = word
    return words


def dictionary_probabilities(entries: list[tuple[list[str], list[str]]]) -> tuple[dict, dict]:
    """(p(trg|src), p(src|trg)) from dictionary entries: every word pair of an entry counted once."""
    forward: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    backward: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for src_tokens, trg_tokens in entries:
        for s in set(src_tokens):
            for t in set(trg_tokens):
                forward[s][t] += 1.0
                backward[t][s] += 1.0

    def normalise(table):
        return {(a, b): count / sum(row.values()) for a, row in table.items() for b, count in row.items()}

    return normalise(forward), {(s, t): p for (t, s), p in normalise(backward).items()}


def symmetric_table(forward: dict[tuple[str, str], float], backward: dict[tuple[str, str], float],
                    config: LexiconConfig = DEFAULT) -> dict[str, dict[str, float]]:
    """sqrt(p(t|s) · p(s|t)) for pairs both directions know, from config.min_prob, pruned to the
    config.max_translations best per source word."""
    min_prob, max_translations = config.min_prob, config.max_translations
    rows: dict[str, dict[str, float]] = defaultdict(dict)
    for key, p_forward in forward.items():
        p_backward = backward.get(key)
        if p_backward:
            prob = math.sqrt(p_forward * p_backward)
            if prob >= min_prob:
                rows[key[0]][key[1]] = prob
    return {src: dict(sorted(row.items(), key=lambda kv: -kv[1])[:max_translations]) for src, row in rows.items()}


def merge_tables(*tables: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The highest probability any source gives each pair."""
    merged: dict[str, dict[str, float]] = defaultdict(dict)
    for table in tables:
        for src, row in table.items():
            for trg, prob in row.items():
                if prob > merged[src].get(trg, 0.0):
                    merged[src][trg] = prob
    return dict(merged)


def train_lexicon(src_lang: str, trg_lang: str, corpus: Iterable[tuple[str, str]] = (),
                  dictionary: Iterable[tuple[str, str]] = (), iterations: int = 5,
                  sources: list[str] | None = None, config: LexiconConfig = DEFAULT) -> Lexicon:
    """A lexicon from aligned text pairs (IBM model 1 both ways) and/or dictionary entries."""
    started = time.process_time()
    corpus_tokens = [(tokenize(a, src_lang), tokenize(b, trg_lang)) for a, b in corpus]
    dictionary_tokens = [(tokenize(a, src_lang), tokenize(b, trg_lang)) for a, b in dictionary]
    tables = []
    if corpus_tokens:
        forward = train_ibm1(corpus_tokens, iterations, config)
        backward = {(s, t): p for (t, s), p in train_ibm1([(b, a) for a, b in corpus_tokens], iterations, config
                                                          ).items()}
        tables.append(symmetric_table(forward, backward, config))
    if dictionary_tokens:
        tables.append(symmetric_table(*dictionary_probabilities(dictionary_tokens), config))
    table = merge_tables(*tables)
    metadata = {"src_lang": src_lang, "trg_lang": trg_lang, "sources": sources or [],
                "sizes": {"entries": sum(len(row) for row in table.values()), "src_words": len(table),
                          "corpus_pairs": len(corpus_tokens), "dictionary_entries": len(dictionary_tokens)},
                "iterations": iterations, "training_cpu_seconds": round(time.process_time() - started, 3)}
    return Lexicon(src_lang, trg_lang, table, metadata)


def page_folds(page_pairs: Iterable[tuple[str, str]], folds: int) -> dict[str, int]:
    """Page url -> fold: the connected components of the page pairs (a page, its partners, their partners ...: one
    fold, so no fold's lexicon learned from a page another fold holds), dealt out in the order of their first url."""
    parent: dict[str, str] = {}

    def root(url: str) -> str:
        while parent.setdefault(url, url) != url:
            parent[url] = parent[parent[url]]
            url = parent[url]
        return url

    for src, trg in page_pairs:
        parent[root(src)] = root(trg)
    first: dict[str, str] = {}
    for url in sorted(parent):
        first.setdefault(root(url), url)
    order = {component: index % folds for index, component in enumerate(sorted(first, key=first.get))}
    return {url: order[root(url)] for url in parent}


def with_held_out(lexicon: Lexicon, archive_rows: list[tuple[str, str, str, str]],
                  corpus: list[tuple[str, str]] = (), dictionary: list[tuple[str, str]] = (),
                  folds: int = HELD_OUT_FOLDS, iterations: int = 5, config: LexiconConfig = DEFAULT) -> Lexicon:
    """`lexicon` (trained on `corpus`, `dictionary` and the text pairs of `archive_rows`: src_text, trg_text,
    src_url, trg_url) with its held-out lexicons: the page pairs split into `folds` (page_folds; fewer when they have
    fewer components), each held-out lexicon trained the same way without one fold's text pairs."""
    fold_of = page_folds(((src, trg) for _, _, src, trg in archive_rows), folds)
    count = min(folds, len(set(fold_of.values())))
    if count < 2:
        return lexicon
    held_out = tuple(train_lexicon(lexicon.src_lang, lexicon.trg_lang, list(corpus) + [
        (a, b) for a, b, src, _ in archive_rows if fold_of[src] != fold], dictionary, iterations, config=config)
        for fold in range(count))
    return dataclasses.replace(lexicon, held_out=held_out, fold_of=fold_of,
                               metadata={**lexicon.metadata, "held_out_folds": count})
