"""Crawl policies for the replay simulator: one small class per policy.

A policy says how the frontier is ordered. FIFO policies (`fifo = True`) use a queue;
the others give priorities, higher first, ties in discovery order:
- `per_edge = True`: `priority(graph, sources, targets)` scores every reachable link (u, v)
  in one vectorised call before the loop (smart);
- `per_edge = False`: `priority(graph, None, nodes)` scores pages, and a `dynamic` policy's
  `on_fetch(node, node_priorities)` may raise pages' priorities after each fetch (strand,
  oracle); a queued page is only ever re-prioritised upward;
- `per_edge` and `rescores = True`: `rescore(graph, fetched, discovered)` gives every scored link a
  new priority at the fetch counts `next_rescore(count)` names, and the simulator re-keys the
  queue with them, down as well as up (smart+site).
Languages are ISO 639-3 codes (the `docs` table's cld2_lang).
"""
from __future__ import annotations

import functools
import re
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

import numpy as np
from scipy import sparse

from parascout.udfs.replay.config import DEFAULT, ReplayConfig
from parascout.udfs.replay.graph import SiteGraph, TruthIndex, url_key

LangScorer = Callable[[list[str]], "object"]
PairScorer = Callable[[list[str], list[str]], np.ndarray]
HandleFunction = Callable[[list[str], tuple[str, str]], tuple[list[str], list["str | None"]]]

POLICY_NAMES = ("bfs", "bfs+cld2", "ilsp", "smart", "smart+lang", "smart+site", "strand", "random", "oracle")
#: policies that score links with the URL models
MODEL_POLICIES = frozenset({"smart", "smart+lang", "smart+site"})


class UrlPredictions(NamedTuple):
    """What a policy guessed about each page before fetching it (arrays over the graph's nodes)."""

    lang: np.ndarray      # object: the predicted language (ISO 639-3), None where the policy has no guess
    p_lang: np.ndarray    # float: its probability, NaN where the policy gives none
    partner: np.ndarray   # int: the node of the predicted translation, -1 where none


class Policy:
    """Base policy: FIFO or priority order, which pages' links are followed, optional dynamic updates."""

    name = "policy"
    fifo = False
    per_edge = False
    dynamic = False
    rescores = False
    #: (attribute, ReplayConfig field) of the policy's knobs: the class attributes hold the defaults
    knobs: tuple[tuple[str, str], ...] = ()

    def configure(self, config: ReplayConfig) -> Policy:
        """Set the policy's knobs from `config` (on this instance); returns the policy."""
        for attribute, name in self.knobs:
            setattr(self, attribute, getattr(config, name))
        return self

    def prepare(self, graph: SiteGraph, truth: TruthIndex) -> None:
        """Per-host set-up before the crawl (called once per simulate)."""

    def follows_links(self, graph: SiteGraph) -> Sequence[bool] | None:
        """Per page: are its links followed? None: every page's links are."""
        return None

    def priority(self, graph: SiteGraph, sources: np.ndarray | None, targets: np.ndarray) -> np.ndarray:
        """Priorities (higher first) of links sources[i] -> targets[i], or of pages when sources is None."""
        return np.zeros(len(targets))

    def on_fetch(self, node: int, node_priorities: list[float]) -> Iterable[int]:
        """After fetching `node`: raise entries of node_priorities and return the raised pages."""
        return ()

    def next_rescore(self, fetched: int) -> int:
        """The fetch count at which a `rescores` policy wants its links re-scored next."""
        raise NotImplementedError(f"{self.name} does not rescore")

    def rescore(self, graph: SiteGraph, fetched: np.ndarray, discovered: np.ndarray) -> np.ndarray:
        """New priorities of every scored link (same order as the per-edge `priority` call), for `rescores`."""
        raise NotImplementedError(f"{self.name} does not rescore")

    def url_predictions(self, graph: SiteGraph) -> UrlPredictions | None:
        """Per page, after a crawl: its predicted language and translation (None: the policy predicts neither)."""
        return None


class Bfs(Policy):
    """Heritrix's default: breadth-first, first in first out."""

    name = "bfs"
    fifo = True


class BfsCld2(Bfs):
    """The paper's Heritrix+CLD2: links are followed only from documents CLD2 puts in one of the two languages."""

    name = "bfs+cld2"

    def __init__(self, langs: tuple[str, str]):
        self.langs = frozenset(langs)

    def follows_links(self, graph: SiteGraph) -> list[bool]:
        # redirects and other non-documents (ids >= n_docs) have no language: their links are followed
        return [node >= graph.n_docs or lang in self.langs for node, lang in enumerate(graph.langs)]


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


class SmartSite(SmartLang):
    """smart+lang whose P(v in A), P(v in B) also learn this site's URL conventions from the pages fetched.

    A crawler knows the language of every page it has fetched (CLD2 on the content). Each URL is
    described by site-local features: its host, its first path segments by position, its query,
    its path words, and the languages of the fetched pages linking to it. A naive Bayes over those
    features, fitted on the fetched pages (one class per language of the site, one for documents
    without a language, one for pages missing from the archive), multiplies the URL model's
    probabilities; features not yet seen on a fetched page say nothing. So once `/fi/...` or `?l=3`
    pages turned out Finnish or French, the URL model's guess for the rest of them is overruled,
    which a model trained on other sites cannot know. The URL model's probabilities are also calibrated
    to the site: a class it expected on 40 of the fetched pages and that none of them had (often "a
    language the site lacks" for URLs of a kind it has not seen) is down-weighted on every page,
    even on pages with no feature seen yet, which the feature likelihoods alone cannot do (a class
    with no fetched page falls back on each feature's overall rate). A link's context includes its position in the
    header of the page it is on: a site's template puts its language switcher in the same slots on every
    page, so once slot 3 of German pages led to Spanish ones, it does on the next German page too, even
    where URLs carry no language at all (`?p=123`).

    A link whose context names the other language of its page (ILSP-FC's cue: anchor "Deutsch", a flag,
    an `hreflang`; `graph.link_cues`) gets `cue_weight` more: the site's switcher said where it leads. A link on a
    page in neither language whose cue names one of them gets `entry_cue_weight` (the way into the pair from a
    third-language home), and a link whose cue names a language outside the pair scores `-third_cue_penalty` and
    nothing else (`third_cue_overrides`): before the naive Bayes has seen a page of that language, the switcher
    already says it is not wanted, whatever the URL models guess (the pair model takes /english/ for the translation
    of /malti/ as readily as /francais/). Once a fetched
    page's switcher names its translation (or sends it to the other language's home: it has none), the URL model's
    partner guesses for that page give no bonus (`switchers_override`).

    The language focus term weighs A and B by the share of their pages expected to have a translation
    in the other language (see `_translation_shares`): on a site whose German pages outnumber its
    Spanish ones three to one, a Spanish page is three times as likely to be half of a pair, so the
    smaller language's lists are walked first and the larger's pages are reached by their translations'
    links. The crawl re-scores every link after `first_rescore` fetches and then each time the fetched
    count grew by `rescore_growth`.
    """

    name = "smart+site"
    rescores = True
    #: the numeric knobs: ReplayConfig's site_* fields
    first_rescore = DEFAULT.site_first_rescore
    rescore_growth = DEFAULT.site_rescore_growth
    smoothing = DEFAULT.site_smoothing
    prior_floor = DEFAULT.site_prior_floor
    missing_prior = DEFAULT.site_missing_prior
    partner_k = DEFAULT.site_partner_k
    partner_weight = DEFAULT.site_partner_weight
    found_partner_share = DEFAULT.site_found_partner_share
    link_slots = DEFAULT.site_link_slots
    size_smoothing = DEFAULT.site_size_smoothing
    cue_weight = DEFAULT.site_cue_weight
    entry_cue_weight = DEFAULT.site_entry_cue_weight
    third_cue_penalty = DEFAULT.site_third_cue_penalty
    class_rate_smoothing = DEFAULT.site_class_rate_smoothing
    knobs = (*SmartLang.knobs, *((attribute, f"site_{attribute}") for attribute in (
        "first_rescore", "rescore_growth", "smoothing", "prior_floor", "missing_prior", "partner_k", "partner_weight",
        "found_partner_share", "link_slots", "size_smoothing", "cue_weight", "entry_cue_weight", "third_cue_penalty",
        "class_rate_smoothing")))
    #: also learn from the languages of the fetched pages linking to a page (and, for the first `link_slots` links
    #: of a page, from the link's position there: slot 3 of a German page may be its Spanish translation on every
    #: page of a site)
    link_context = True
    #: a fetched page whose switcher (a link cued with the pair's other language) leads elsewhere gives no partner bonus
    #: to the pages the URL model pairs it with: the switcher, not URL similarity, says where its translation is
    switchers_override = True
    #: a link whose cue names a language outside the pair scores `-third_cue_penalty` alone: the URL models' guess
    #: that it leads into the pair is overruled
    third_cue_overrides = True
    #: also learn from the languages links' contexts name ("linked from a fetched page with a cue for X"): once
    #: cued links turned out to lead to their cue's language, a cue for a third language says "not wanted"
    cue_features = True

    def prepare(self, graph: SiteGraph, truth: TruthIndex) -> None:
        super().prepare(graph, truth)
        first, second = self.langs
        others = sorted({lang for lang in graph.langs[: graph.n_docs] if lang and lang not in self.langs})
        self._class_langs = [first, second, *others]
        index = {lang: k for k, lang in enumerate(self._class_langs)}
        n_langs = len(self._class_langs)
        self._classes = np.array([index.get(lang, n_langs) for lang in graph.langs], dtype=np.int64)
        self._classes[graph.n_docs:] = n_langs + 1
        self._features = site_feature_matrix(graph.urls)
        self._edges: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._focus_weights = (1.0, 1.0)
        self._prior: np.ndarray | None = None

    def next_rescore(self, fetched: int) -> int:
        return self.first_rescore if fetched < self.first_rescore else int(np.ceil(fetched * self.rescore_growth))

    def priority(self, graph: SiteGraph, sources: np.ndarray | None, targets: np.ndarray) -> np.ndarray:
        n_classes = len(self._class_langs) + 2
        self._prior = np.full((graph.n_nodes, n_classes), 1.0 / n_classes)
        if len(targets) == 0:
            self._edges = (sources, targets, np.zeros(0))
            return np.zeros(0)
        urls = np.array(graph.urls, dtype=object)
        linked = np.zeros(graph.n_nodes, dtype=bool)
        linked[targets] = True
        unique = np.flatnonzero(linked)
        self._prior[unique] = self._class_prior(urls[unique].tolist())
        self._p_langs = (self._prior[:, 0], self._prior[:, 1])
        p_parallel = self._pair_probabilities(urls[sources].tolist(), urls[targets].tolist())
        self._edges = (sources, targets, p_parallel)
        self._slots = link_positions(graph, sources, targets)
        cues = edge_cues(graph, sources, targets)
        self._cue_bonus = self._cue_scores(self._page_lang[sources], cues)
        self._third_cued = self._names_third_language(cues)
        index = {lang: k for k, lang in enumerate(self._class_langs)}
        self._cue_classes = np.array([index.get(cue, -1) for cue in cues.tolist()], dtype=np.int64)
        self._candidates = self._candidate_pairs(urls, unique)
        self._bonus = np.zeros(graph.n_nodes)
        return self._combine(self._prior[:, 0], self._prior[:, 1])

    def rescore(self, graph: SiteGraph, fetched: np.ndarray, discovered: np.ndarray) -> np.ndarray:
        """Link priorities with the language probabilities refitted on the pages fetched so far."""
        if len(self._edges[1]) == 0:
            return np.zeros(0)
        features = (sparse.hstack([self._features, self._linked_from(fetched)], format="csr") if self.link_context
                    else self._features)
        posterior = site_class_posterior(features, self._classes, fetched, self._prior, self.smoothing,
                                         self.class_rate_smoothing if self.class_rate_smoothing >= 0 else None)
        p_first, p_second = posterior[:, 0], posterior[:, 1]
        self._p_langs = (p_first, p_second)
        self._focus_weights = self._translation_shares(posterior, discovered)
        left, right, p_pair = self._candidates
        value = p_pair * (p_first[left] * p_second[right] + p_second[left] * p_first[right])
        self._bonus = np.zeros(graph.n_nodes)
        switched, switcher_links = self._switcher_links(fetched)
        for node, partner in ((left, right), (right, left)):  # a fetched partner: this page completes a pair
            found = discovered[partner]
            weight = np.where(fetched[partner[found]], 1.0, self.found_partner_share)
            if self.switchers_override:  # a fetched partner whose switcher leads elsewhere has another translation
                elsewhere = switched[partner[found]] & ~np.isin(partner[found] * graph.n_nodes + node[found],
                                                                 switcher_links)
                weight = np.where(elsewhere, 0.0, weight)
            np.maximum.at(self._bonus, node[found], value[found] * weight)
        return self._combine(p_first, p_second)

    def _switcher_links(self, fetched: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(per node: fetched, in one language of the pair, with a link whose cue names the other; those links as
        source x n_nodes + target): where a fetched page's language switcher says its translation is."""
        sources, targets, _ = self._edges
        source_classes = self._classes[sources]
        switcher = fetched[sources] & (source_classes < 2) & (self._cue_classes == 1 - source_classes)
        switched = np.zeros(len(fetched), dtype=bool)
        switched[sources[switcher]] = True
        return switched, np.unique(sources[switcher] * len(fetched) + targets[switcher])

    def _candidate_pairs(self, urls: np.ndarray, nodes: np.ndarray):
        """(left, right, P(parallel)) for each linked page and its `partner_k` most token-similar linked pages."""
        from parascout.udfs.rank.blocking import language_markers, similar_pairs, url_features

        markers = language_markers(self.langs)
        tokens = [url_features(url, markers) for url in urls[nodes].tolist()]
        pairs, _ = similar_pairs(tokens, tokens, self.partner_k)
        pairs = pairs[pairs["src_index"] < pairs["trg_index"]]
        left, right = nodes[pairs["src_index"].to_numpy()], nodes[pairs["trg_index"].to_numpy()]
        p_pair = (self._pair_probabilities(urls[left].tolist(), urls[right].tolist()) if len(left)
                  else np.zeros(0))
        return left, right, p_pair

    def _class_prior(self, urls: list[str]) -> np.ndarray:
        """URLs x classes: the URL model's P(language) over the site's languages, 'no language' and 'missing'."""
        n_langs = len(self._class_langs)
        prior = np.zeros((len(urls), n_langs + 2))
        prior[:, :n_langs] = np.stack(self._lang_columns(urls, self._class_langs), axis=1)
        prior[:, n_langs] = np.clip(1.0 - prior[:, :n_langs].sum(axis=1), 0.0, 1.0)  # languages the site lacks
        prior[:, : n_langs + 1] *= 1.0 - self.missing_prior
        prior[:, n_langs + 1] = self.missing_prior
        prior /= np.maximum(prior.sum(axis=1, keepdims=True), 1e-12)
        return (1.0 - self.prior_floor) * prior + self.prior_floor / prior.shape[1]

    def _linked_from(self, fetched: np.ndarray):
        """Nodes x (classes + classes x slots + classes), binary: linked from a fetched page of that class, from
        that slot of a fetched page of that class (a link's context), and by a link whose cue names that class."""
        sources, targets, _ = self._edges
        found = fetched[sources]
        n_classes = len(self._class_langs) + 2
        source_classes, slots, linked = self._classes[sources[found]], self._slots[found], targets[found]
        header = slots < self.link_slots
        cue_classes = self._cue_classes[found] if self.cue_features else np.full(len(linked), -1)
        cued = cue_classes >= 0
        rows = np.concatenate([linked, linked[header], linked[cued]])
        columns = np.concatenate([source_classes, n_classes + source_classes[header] * self.link_slots + slots[header],
                                  n_classes * (1 + self.link_slots) + cue_classes[cued]])
        matrix = sparse.csr_matrix((np.ones(len(rows)), (rows, columns)),
                                   shape=(len(fetched), n_classes * (2 + self.link_slots)))
        matrix.sum_duplicates()
        matrix.data[:] = 1.0
        return matrix

    def _cue_scores(self, page_lang: np.ndarray, cues: np.ndarray) -> np.ndarray:
        """Per link: `cue_weight` when its cue names the other language of its page, `entry_cue_weight` when its page
        is in neither language and the cue names one of them, minus `third_cue_penalty` when it names another."""
        names_pair = (cues == self.langs[0]) | (cues == self.langs[1])
        return (self.cue_weight * _names_other_language(page_lang, cues, self.langs)
                + self.entry_cue_weight * ((page_lang == 2) & names_pair)
                - self.third_cue_penalty * self._names_third_language(cues))

    def _names_third_language(self, cues: np.ndarray) -> np.ndarray:
        """Per link: does its cue name a language outside the pair?"""
        named = np.array([cue is not None for cue in cues.tolist()], dtype=bool)
        return named & (cues != self.langs[0]) & (cues != self.langs[1])

    def _combine(self, p_first: np.ndarray, p_second: np.ndarray) -> np.ndarray:
        sources, targets, p_parallel = self._edges
        scores = (self._link_scores(self._page_lang[sources], p_first[targets], p_second[targets], p_parallel,
                                    self._focus_weights)
                  + self.partner_weight * self._bonus[targets] + self._cue_bonus)
        return np.where(self._third_cued, -self.third_cue_penalty, scores) if self.third_cue_overrides else scores

    def _translation_shares(self, posterior: np.ndarray, discovered: np.ndarray) -> tuple[float, float]:
        """(A, B): the share of a language's pages expected to have a translation in the other language.

        A site's languages are taken as independent subsets of its content, the largest language as all
        of it: a page in A has a translation in B with probability size(B) / size(largest). Sizes are the
        expected counts of the pages found so far (their posterior mass), smoothed by `size_smoothing` pages.
        """
        sizes = posterior[discovered, : len(self._class_langs)].sum(axis=0) + self.size_smoothing
        return min(1.0, sizes[1] / sizes.max()), min(1.0, sizes[0] / sizes.max())


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


_SITE_TOKEN = re.compile(r"[^\W_]+")


def site_url_features(url: str) -> list[str]:
    """A URL's site-local features: host, path depth, first three path segments by position, the query
    (whole, each parameter, each key; 'Q:' when there is none) and the path's words."""
    key = url_key(url).lower()
    path_start = key.find("/", 2)
    host, rest = (key[2:], "/") if path_start < 0 else (key[2:path_start], key[path_start:])
    path, _, query = rest.partition("#")[0].partition("?")
    segments = [part for part in path.split("/") if part]
    params = sorted(part for part in query.split("&") if part)
    features = [f"h:{host}", f"n:{min(len(segments), 4)}", f"Q:{'&'.join(params)}"]
    features += [f"p{i}:{segment}" for i, segment in enumerate(segments[:3])]
    features += [f"q:{param}" for param in params] + [f"k:{param.partition('=')[0]}" for param in params]
    features += {f"w:{word}" for word in _SITE_TOKEN.findall(path)}
    return features


def site_feature_matrix(urls: Sequence[str]):
    """A binary CSR matrix, URLs x site features."""
    vocabulary: dict[str, int] = {}
    indices, indptr = [], [0]
    for url in urls:
        row = {vocabulary.setdefault(feature, len(vocabulary)) for feature in site_url_features(url)}
        indices.extend(sorted(row))
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float64)
    return sparse.csr_matrix((data, np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
                             shape=(len(urls), max(1, len(vocabulary))))


def site_class_posterior(features, classes: np.ndarray, fetched: np.ndarray, prior: np.ndarray,
                         smoothing: float = SmartSite.smoothing, rate_smoothing: float | None = None) -> np.ndarray:
    """Nodes x classes: `prior` times a naive Bayes over binary features fitted on the fetched nodes.

    A feature's likelihood in class c is an m-estimate, (fetched nodes of c with it + s × r) / (fetched
    nodes of c + s), where r is its rate over all fetched nodes: a class with few fetched nodes
    falls back on r, so it is neither favoured nor penalised by features it has not been seen
    with yet. Features on no fetched node say nothing; fetched nodes keep their known class.
    With `rate_smoothing` s', every node's class c is also weighed by (fetched nodes of c + s') / (the prior's
    mass of c over the fetched nodes + s'): the site's own rate of c against the prior's.
    """
    known = np.flatnonzero(fetched)
    if len(known) == 0:
        return prior
    onehot = np.zeros((len(known), prior.shape[1]))
    onehot[np.arange(len(known)), classes[known]] = 1.0
    counts = np.asarray(features[known].T @ onehot)          # features x classes
    totals = counts.sum(axis=1, keepdims=True)
    pooled = (totals + 0.5) / (len(known) + 1.0)              # the feature's rate over all fetched nodes
    log_likelihood = np.log((counts + smoothing * pooled) / (onehot.sum(axis=0) + smoothing))
    log_likelihood[totals[:, 0] == 0] = 0.0
    scores = np.log(prior) + np.asarray(features @ log_likelihood)
    if rate_smoothing is not None:
        expected = prior[known].sum(axis=0)
        scores += np.log((onehot.sum(axis=0) + rate_smoothing) / (expected + rate_smoothing))
    scores -= scores.max(axis=1, keepdims=True)
    posterior = np.exp(scores)
    posterior /= posterior.sum(axis=1, keepdims=True)
    posterior[known] = np.eye(prior.shape[1])[classes[known]]
    return posterior


class Strand(Policy):
    """STRAND-guided: once a document in one language is fetched, URLs with its handle jump the queue.

    A URL's handle is the URL with its language-specific substrings removed; a queued (or later
    found) URL sharing the handle of a fetched document in language A gets priority 1 (others 0)
    unless its own URL names a language other than B.
    """

    name = "strand"
    dynamic = True

    def __init__(self, langs: tuple[str, str], handle_function: HandleFunction | None = None):
        self.langs = tuple(langs)
        self.handle_function = handle_function or default_handle_function()

    def prepare(self, graph: SiteGraph, truth: TruthIndex) -> None:
        self._doc_langs = graph.langs[: graph.n_docs]
        handles, self._url_langs = self.handle_function(graph.urls, self.langs)
        buckets: dict[str, list[int]] = {}
        for node, handle in enumerate(handles):
            buckets.setdefault(handle, []).append(node)
        self._bucket = [buckets[handle] if len(buckets[handle]) > 1 else None for handle in handles]
        self._boosted: set[tuple[int, str]] = set()  # (bucket, language fetched): each bucket is walked once per side

    def url_predictions(self, graph: SiteGraph) -> UrlPredictions:
        """The language each URL names, and as its translation the first page of its handle's bucket whose URL
        names another language (or none, when its own names one)."""
        lang = np.array([*self._url_langs, *[None] * (graph.n_nodes - len(self._url_langs))], dtype=object)
        partner = np.full(graph.n_nodes, -1, dtype=np.int64)
        for node, bucket in enumerate(self._bucket):
            if bucket is not None:
                partner[node] = next((other for other in bucket if other != node and lang[other] != lang[node]), -1)
        return UrlPredictions(lang, np.full(graph.n_nodes, np.nan), partner)

    def on_fetch(self, node: int, node_priorities: list[float]) -> list[int]:
        bucket = self._bucket[node]
        if bucket is None:
            return []
        first, second = self.langs
        lang = self._doc_langs[node] if node < len(self._doc_langs) else None
        if lang not in self.langs:
            return []
        if (id(bucket), lang) in self._boosted:
            return []
        self._boosted.add((id(bucket), lang))
        other = second if lang == first else first
        raised = []
        for candidate in bucket:
            if candidate != node and node_priorities[candidate] < 1.0 and self._url_langs[candidate] in (None, other):
                node_priorities[candidate] = 1.0
                raised.append(candidate)
        return raised


class RandomOrder(Policy):
    """Random baseline: every page gets a seeded random priority (a random order within reachability)."""

    name = "random"

    def __init__(self, seed: int = 0):
        self.seed = seed

    def priority(self, graph: SiteGraph, sources: np.ndarray | None, targets: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng([self.seed, zlib.crc32(graph.site.encode())])
        return rng.random(graph.n_nodes)[targets]


class Oracle(Policy):
    """Upper-bound heuristic that knows the truth: parallel documents first among the reachable frontier.

    Priorities: 2 for a parallel document whose partner was fetched (it completes a pair), 1 for
    other parallel documents, 0.5 / (1 + d) for documents d links away from the nearest parallel
    document, 0 for documents that lead to none, -1 for pages missing from the archive. Greedy,
    so an upper bound in practice rather than a proven optimum.
    """

    name = "oracle"
    dynamic = True

    def prepare(self, graph: SiteGraph, truth: TruthIndex) -> None:
        self._partners = truth.partners
        self._n_docs = graph.n_docs

    def priority(self, graph: SiteGraph, sources: np.ndarray | None, targets: np.ndarray) -> np.ndarray:
        distance = _distance_to_parallel(graph, self._partners)
        values = np.where(distance < 0, 0.0, 0.5 / (1.0 + np.maximum(distance, 0)))
        values[: graph.n_docs][[bool(p) for p in self._partners]] = 1.0
        values[graph.n_docs:] = -1.0
        return values[targets]

    def on_fetch(self, node: int, node_priorities: list[float]) -> list[int]:
        if node >= self._n_docs:
            return []
        raised = []
        for partner in self._partners[node]:
            if node_priorities[partner] < 2.0:
                node_priorities[partner] = 2.0
                raised.append(partner)
        return raised


def _distance_to_parallel(graph: SiteGraph, partners: list[tuple[int, ...]]) -> np.ndarray:
    """Links from each page to the nearest parallel document (-1: none reachable), by reverse BFS."""
    incoming: list[list[int]] = [[] for _ in range(graph.n_nodes)]
    for source, targets in enumerate(graph.links):
        for target in targets:
            incoming[target].append(source)
    distance = np.full(graph.n_nodes, -1, dtype=np.int64)
    queue = deque(node for node, found in enumerate(partners) if found)
    for node in queue:
        distance[node] = 0
    while queue:
        node = queue.popleft()
        for source in incoming[node]:
            if distance[source] < 0:
                distance[source] = distance[node] + 1
                queue.append(source)
    return distance


# ---- STRAND handles ------------------------------------------------------------------------
def lss_handles(urls: Sequence[str], langs: tuple[str, str]) -> tuple[list[str], list[str | None]]:
    """STRAND handles from udfs.rank.handles (the full LSS lists), and the language each URL names (None if none/both)."""
    pair, first, second, plain = _strippers(tuple(langs))
    handles, url_langs = [], []
    for url in urls:
        handles.append(pair.handle(url))
        path = _without_host(url)  # a language named by the host (its TLD) says nothing about the page
        unmarked = plain.handle(path)
        names_first, names_second = first.handle(path) != unmarked, second.handle(path) != unmarked
        url_langs.append(langs[0] if names_first and not names_second else
                         langs[1] if names_second and not names_first else None)
    return handles, url_langs


def _without_host(url: str) -> str:
    key = url_key(url)
    path_start = key.find("/", 2)
    return "http://h" + (key[path_start:] if path_start >= 0 else "/")


@functools.lru_cache(maxsize=16)
def _strippers(langs: tuple[str, str]):
    from parascout.udfs.rank.handles import build_stripper, plain_stripper

    return build_stripper(langs), build_stripper(langs[:1]), build_stripper(langs[1:]), plain_stripper(())


def default_handle_function() -> HandleFunction:
    """The STRAND handle function: udfs.rank.handles' LSS stripper (the full LSS lists of both languages)."""
    return lss_handles


def make_policy(name: str, langs: tuple[str, str] | None = None, lang_scorer: LangScorer | None = None,
                pair_scorer: PairScorer | None = None, random_seed: int = 0,
                handle_function: HandleFunction | None = None, config: ReplayConfig | None = None) -> Policy:
    """A policy by its CLI name (one of POLICY_NAMES), its knobs set from `config` (None: the defaults)."""
    policy = _new_policy(name, langs, lang_scorer, pair_scorer, random_seed, handle_function)
    return policy if config is None else policy.configure(config)


def _new_policy(name: str, langs: tuple[str, str] | None, lang_scorer: LangScorer | None,
                pair_scorer: PairScorer | None, random_seed: int, handle_function: HandleFunction | None) -> Policy:
    if (name in MODEL_POLICIES or name in ("bfs+cld2", "ilsp", "strand")) and not langs:
        raise ValueError(f"policy {name!r} needs the language pair (langs=('eng', 'isl'))")
    if name == "bfs":
        return Bfs()
    if name == "bfs+cld2":
        return BfsCld2(langs)
    if name == "ilsp":
        return Ilsp(langs)
    if name in MODEL_POLICIES:
        if lang_scorer is None or pair_scorer is None:
            raise ValueError(f"policy {name!r} needs a lang_scorer and a pair_scorer (the URL models)")
        return {"smart": Smart, "smart+lang": SmartLang, "smart+site": SmartSite}[name](langs, lang_scorer, pair_scorer)
    if name == "strand":
        return Strand(langs, handle_function)
    if name == "random":
        return RandomOrder(random_seed)
    if name == "oracle":
        return Oracle()
    raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICY_NAMES)}")
