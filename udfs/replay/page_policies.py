"""Crawl policies that order pages, not links: bfs, bfs+cld2, strand, random and oracle.

None of them reads the URL models. bfs is Heritrix's queue and bfs+cld2 the paper's Heritrix+CLD2
(links followed only from pages in the pair's languages); strand raises the pages that share a
fetched document's STRAND handle (its URL without language markers: the LSS lists of
udfs.rank.handles); random is the floor and oracle, which knows the truth, the ceiling that the
model policies are measured between.

Why together: each scores pages (`per_edge = False`), so each is a page priority plus, for
strand and oracle, a raise after each fetch; the STRAND handles live here because only strand
and the synthetic sites' scorers use them.
"""
from __future__ import annotations

import functools
import zlib
from collections import deque
from collections.abc import Sequence

import numpy as np

from parascout.udfs.replay.graph import SiteGraph, TruthIndex, url_key
from parascout.udfs.replay.policy_base import HandleFunction, Policy, UrlPredictions


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
