"""Crawl policies that score each link: ilsp (the link's context names the other language) and smart,
smart+lang (the URL models' P(language) and P(parallel), the paper's smart crawler).

Also what these policies read about a link before scoring it: the language class of the page it is
on, the language its context names (`graph.link_cues`), its position among its page's links, and,
after the crawl, the page linking to each page with the highest P(parallel) as its predicted translation.

Why together: each is `per_edge`, scoring every reachable link in one vectorised call; smart+site
(site_policy) builds on smart+lang and these helpers.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from parascout.udfs.replay.config import DEFAULT
from parascout.udfs.replay.graph import SiteGraph, TruthIndex
from parascout.udfs.replay.policy_base import LangScorer, PairScorer, Policy, UrlPredictions


class Ilsp(Policy):
    """ILSP-FC's link scoring without a topic: a link on a page in one language of the pair whose context
    (anchor text, attributes, flag image: `graph.link_cues`) names the other language gets the bonus `c`;
    every other link scores 0, so the order is otherwise breadth-first (ties in discovery order).

    ILSP-FC adds `c` to the similarity of the link's surrounding text to the topic's terms; without a
    topic that term is 0 for every link, which is this policy. Without `outlink_cues` in `docs` it is bfs.
    """

    name = "ilsp"
    per_edge = True
    bonus = DEFAULT.ilsp_bonus
    knobs = (("bonus", "ilsp_bonus"),)

    def __init__(self, langs: tuple[str, str]):
        self.langs = tuple(langs)

    def prepare(self, graph: SiteGraph, truth: TruthIndex) -> None:
        self._page_lang = page_language_classes(graph, self.langs)

    def priority(self, graph: SiteGraph, sources: np.ndarray | None, targets: np.ndarray) -> np.ndarray:
        if len(targets) == 0:
            return np.zeros(0)
        return self.bonus * _names_other_language(self._page_lang[sources], edge_cues(graph, sources, targets),
                                                  self.langs)


class Smart(Policy):
    """The paper's smart crawler: link v found on page u in language A gets P(v in B) × P(u, v parallel).

    B is the other language of the pair. When u is in neither language (or CLD2 gave none) the
    priority is max(P(v in A), P(v in B)) × P(u, v parallel): the best of both directions.
    """

    name = "smart"
    per_edge = True
    #: weight of max(P(v in A), P(v in B)) added to every link's priority (0: the paper's formula)
    language_focus = 0.0
    partner_min_p = DEFAULT.partner_min_p
    knobs = (("partner_min_p", "partner_min_p"),)

    def __init__(self, langs: tuple[str, str], lang_scorer: LangScorer, pair_scorer: PairScorer,
                 batch_size: int = 65_536):
        self.langs, self.lang_scorer, self.pair_scorer, self.batch_size = tuple(langs), lang_scorer, pair_scorer, batch_size

    def prepare(self, graph: SiteGraph, truth: TruthIndex) -> None:
        self._page_lang = page_language_classes(graph, self.langs)
        self._edges: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._p_langs: tuple[np.ndarray, np.ndarray] | None = None

    def priority(self, graph: SiteGraph, sources: np.ndarray | None, targets: np.ndarray) -> np.ndarray:
        if len(targets) == 0:
            return np.zeros(0)
        urls = np.array(graph.urls, dtype=object)  # one vectorised lookup per id array instead of a Python loop
        linked = np.zeros(graph.n_nodes, dtype=bool)
        linked[targets] = True
        unique = np.flatnonzero(linked)  # each linked page scored once (a mask: cheaper than np.unique's sort)
        p_first, p_second = np.full(graph.n_nodes, np.nan), np.full(graph.n_nodes, np.nan)
        p_first[unique], p_second[unique] = self._lang_probabilities(urls[unique].tolist())
        self._p_langs = (p_first, p_second)
        p_first, p_second = p_first[targets], p_second[targets]
        p_parallel = self._pair_probabilities(urls[sources].tolist(), urls[targets].tolist())
        self._edges = (sources, targets, p_parallel)
        return self._link_scores(self._page_lang[sources], p_first, p_second, p_parallel)

    def url_predictions(self, graph: SiteGraph) -> UrlPredictions | None:
        """The URL model's likelier language of the pair per linked page, and as its translation the page linking
        to it with the highest P(parallel), when that is at least `partner_min_p`."""
        if self._p_langs is None or self._edges is None:
            return None
        p_first, p_second = (_padded(p, graph.n_nodes, np.nan) for p in self._p_langs)
        scored = ~np.isnan(p_first)
        lang = np.where(p_first >= p_second, self.langs[0], self.langs[1]).astype(object)
        lang[~scored] = None
        partner = best_linking_page(graph.n_nodes, *self._edges, self.partner_min_p)
        return UrlPredictions(lang, np.fmax(p_first, p_second), partner)

    def _link_scores(self, page_lang: np.ndarray, p_first: np.ndarray, p_second: np.ndarray,
                     p_parallel: np.ndarray, focus_weights: tuple[float, float] = (1.0, 1.0)) -> np.ndarray:
        """P(v in the other language of u) × P(u, v parallel) + focus × P(v in either), per link u -> v;
        `focus_weights` weigh P(v in A) and P(v in B) in the focus term."""
        p_other = np.where(page_lang == 0, p_second, np.where(page_lang == 1, p_first, np.maximum(p_first, p_second)))
        focus = np.maximum(focus_weights[0] * p_first, focus_weights[1] * p_second)
        return p_other * p_parallel + self.language_focus * focus

    def _lang_probabilities(self, urls: list[str]) -> tuple[np.ndarray, np.ndarray]:
        first, second = self._lang_columns(urls, self.langs)
        return first, second

    def _lang_columns(self, urls: list[str], langs: Sequence[str]) -> list[np.ndarray]:
        """P(lang | URL) per lang, scored in batches; the pair's languages must be scored, others are 0 if not."""
        parts = [self.lang_scorer(urls[i:i + self.batch_size]) for i in range(0, len(urls), self.batch_size)]
        columns = []
        for lang in langs:
            missing = [part for part in parts if lang not in part]
            if missing and lang in self.langs:
                raise ValueError(f"lang_scorer gave no probability for {lang!r}; it returned {list(missing[0])}")
            columns.append(np.concatenate([np.asarray(part[lang], dtype=float) if lang in part else
                                           np.zeros(len(np.asarray(part[self.langs[0]]))) for part in parts]))
        return columns

    def _pair_probabilities(self, src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
        step = self.batch_size
        parts = [np.asarray(self.pair_scorer(src_urls[i:i + step], trg_urls[i:i + step]), dtype=float).reshape(-1)
                 for i in range(0, len(src_urls), step)]
        return np.concatenate(parts)


class SmartLang(Smart):
    """smart plus a language focus: every link also gets 0.05 × max(P(v in A), P(v in B)).

    The paper's score ranks links by the chance that they lead to a translation of the page
    they were found on; links to more pages in the same language (the lists and sections whose
    pages have translations of their own) then all score near zero, and their order is noise.
    The small focus term breaks that tie towards pages in either wanted language over pages in
    a site's other languages, without reordering links that have a likely translation behind them.
    """

    name = "smart+lang"
    language_focus = DEFAULT.language_focus
    knobs = (*Smart.knobs, ("language_focus", "language_focus"))


def _padded(values: np.ndarray, size: int, fill) -> np.ndarray:
    """`values` cut or extended with `fill` to `size` (pages added to the graph after scoring)."""
    return np.concatenate([values[:size], np.full(max(0, size - len(values)), fill, dtype=values.dtype)])


def best_linking_page(n_nodes: int, sources: np.ndarray, targets: np.ndarray, p_parallel: np.ndarray,
                      min_p: float) -> np.ndarray:
    """Per node: the page linking to it with the highest P(parallel) >= min_p (-1 where none)."""
    partner = np.full(n_nodes, -1, dtype=np.int64)
    keep = np.flatnonzero(np.asarray(p_parallel) >= min_p)
    if len(keep):
        order = keep[np.lexsort((-np.asarray(p_parallel)[keep], targets[keep]))]
        first = np.concatenate([[True], targets[order][1:] != targets[order][:-1]])
        partner[targets[order][first]] = sources[order][first]
    return partner


def page_language_classes(graph: SiteGraph, langs: Sequence[str]) -> np.ndarray:
    """Per page: 0 in the pair's first language, 1 in its second, 2 in another or none."""
    first, second = langs
    return np.array([0 if lang == first else 1 if lang == second else 2 for lang in graph.langs], dtype=np.int8)


def edge_cues(graph: SiteGraph, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per link sources[i] -> targets[i]: the language its context names (object array, None where none)."""
    if graph.link_cues is None or len(targets) == 0:
        return np.full(len(targets), None, dtype=object)
    offsets, _ = graph.csr()
    return graph.cue_array()[offsets[sources] + link_positions(graph, sources, targets)]


def _names_other_language(page_lang: np.ndarray, cues: np.ndarray, langs: Sequence[str]) -> np.ndarray:
    """1.0 where a link's cue names the other language of the pair than its page's (page_lang 0 / 1), else 0."""
    first, second = langs
    return (((page_lang == 0) & (cues == second)) | ((page_lang == 1) & (cues == first))).astype(float)


def link_positions(graph: SiteGraph, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per link sources[i] -> targets[i]: its position among the links of its source page (0: the first)."""
    offsets, linked = graph.csr()
    keys = np.repeat(np.arange(graph.n_nodes, dtype=np.int64), np.diff(offsets)) * graph.n_nodes + linked
    order = np.argsort(keys, kind="stable")
    found = order[np.searchsorted(keys[order], sources.astype(np.int64) * graph.n_nodes + targets)]
    return found - offsets[sources]
