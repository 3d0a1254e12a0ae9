"""Replay a crawl policy over one site's archived link graph: the frontier loop and its bookkeeping.

A `SiteGraph` interns a site's URLs to integer ids once (archived documents first, so
"is an archived document" is `id < n_docs`), with adjacency as lists of ints (and as CSR
arrays). `simulate` pops URLs from a frontier (a FIFO deque, or a heap of int keys with lazy
deletion whose entries are only ever re-pushed upward; a fetched page's links are compared
with their best known priorities in one numpy step), "fetches" them from the archive and
records when truth pairs get completed. Links to pages the archive lacks (absent, or status not 'ok') cost a fetch that
yields no document: a wasted fetch. URLs are identified without their scheme, so
http://h/x and https://h/x are one page. The crawl scope is the hosts of the docs given: one host, or
every host of a site (www.x.com, fr.x.com, x.com), as a crawler scoped to a website follows links
between its language subdomains; links to other hosts are outside it.
"""
from __future__ import annotations

import struct
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush

import numpy as np
import pandas as pd

from parascout.udfs.replay.config import DEFAULT
from parascout.udfs.replay.graph import SiteGraph, TruthIndex, build_truth
from parascout.udfs.replay.policies import make_policy
from parascout.udfs.replay.policy_base import Policy

MAGNITUDE_BITS = 0x7FFF_FFFF_FFFF_FFFF
TOP = 1 << 63                       # heap keys are (TOP - order) << 32 | discovery counter
COUNTER_MASK = (1 << 32) - 1
NEVER_SEEN = -TOP                   # int64 minimum: below the order of every float, -inf included
FETCHED = TOP - 1                   # int64 maximum: above every float order, a fetched page is never queued again
SEED_ORDER = 0x7FF0_0000_0000_0000  # the order of +inf: seeds come first


@dataclass
class CrawlResult:
    """What one replayed crawl fetched, and when each parallel document and pair was found."""

    site: str
    policy: str
    n_docs: int
    n_parallel_docs: int
    n_pairs: int
    budget_fetches: int
    fetched: int
    wasted_fetches: int
    bytes_fetched: int
    stopped: str
    order: list[int]
    priority_orders: list[int]  # per fetch in `order`: the order of the priority it was queued with
    seeds: list[int]
    doc_events: list[int]
    pair_events: list[int]
    samples: list[tuple[int, int, int, int]]
    seconds_prepare: float
    seconds_crawl: float
    cpu_seconds_prepare: float
    cpu_seconds_crawl: float
    graph: SiteGraph = field(repr=False)

    @property
    def docs_found(self) -> int:
        return len(self.doc_events)

    @property
    def pairs_found(self) -> int:
        return len(self.pair_events)

    def fetched_urls(self) -> list[str]:
        """The fetched URLs in crawl order."""
        return [self.graph.urls[node] for node in self.order]

    def fetched_priorities(self) -> np.ndarray:
        """Per fetch in crawl order: the priority the page was queued with (NaN for seeds and FIFO policies)."""
        return priority_values(self.priority_orders)

    def curve(self) -> pd.DataFrame:
        """The sampled yield curve: fetched, pairs_found, docs_found, bytes_fetched."""
        return pd.DataFrame(self.samples, columns=["fetched", "pairs_found", "docs_found", "bytes_fetched"])

    def summary(self) -> dict:
        """Summary metrics (AUC, fetches to 50/80/90% of the parallel documents, recall...)."""
        from parascout.udfs.replay.metrics import summarise

        return summarise(self)


class _Tally:
    """Per-fetch bookkeeping shared by both frontier loops: counts, bytes, completed pairs, samples."""

    __slots__ = (
        "bytes",
        "checkpoints",
        "count",
        "count_missing",
        "doc_events",
        "fetched",
        "found",
        "n_docs",
        "next_checkpoint",
        "order",
        "pair_events",
        "partners",
        "priority_orders",
        "samples",
        "sizes",
        "wasted",
    )

    def __init__(self, graph: SiteGraph, truth: TruthIndex, checkpoints: list[int], count_missing: bool):
        self.n_docs, self.sizes, self.partners = graph.n_docs, graph.sizes, truth.partners
        self.count_missing = count_missing
        self.fetched = bytearray(graph.n_nodes)
        self.found = bytearray(graph.n_docs)
        self.count = self.wasted = self.bytes = 0
        self.order: list[int] = []
        self.priority_orders: list[int] = []
        self.doc_events: list[int] = []
        self.pair_events: list[int] = []
        self.samples: list[tuple[int, int, int, int]] = [(0, 0, 0, 0)]
        self.checkpoints = checkpoints
        self.next_checkpoint = checkpoints.pop(0) if checkpoints else 0

    def fetch(self, node: int, order: int = NEVER_SEEN) -> None:
        """Account for one fetch: a document (maybe completing truth pairs) or a wasted one; `order` is the
        priority it was queued with (kept for the frontier a crawler is handed)."""
        self.fetched[node] = 1
        if node < self.n_docs:
            self.count += 1
            self.bytes += self.sizes[node]
            self.order.append(node)
            self.priority_orders.append(order)
            partners = self.partners[node]
            if partners:
                self._complete_pairs(node, partners)
        elif self.count_missing:
            self.count += 1
            self.wasted += 1
            self.bytes += self.sizes[node]
            self.order.append(node)
            self.priority_orders.append(order)
        else:
            return
        if self.count == self.next_checkpoint:
            self.sample()
            self.next_checkpoint = self.checkpoints.pop(0) if self.checkpoints else 0

    def _complete_pairs(self, node: int, partners: tuple[int, ...]) -> None:
        fetched, found = self.fetched, self.found
        for partner in partners:
            if fetched[partner]:
                self.pair_events.append(self.count)
                for document in (partner, node):
                    if not found[document]:
                        found[document] = 1
                        self.doc_events.append(self.count)

    def sample(self) -> None:
        if self.samples[-1][0] != self.count:
            self.samples.append((self.count, len(self.pair_events), len(self.doc_events), self.bytes))


def checkpoints_for(budget_fetches: int, sample_every: float = 0.01) -> list[int]:
    """Fetch counts at which the yield curve is sampled: every `sample_every` of the budget."""
    steps = max(1, round(1 / sample_every))
    return sorted({max(1, int(np.ceil(budget_fetches * k / steps))) for k in range(1, steps + 1)})


def resolve_seeds(graph: SiteGraph, seeds: Iterable[str] | None) -> list[int]:
    """Seed ids: the home page of each host of the site by default (SiteGraph.homes); seed URLs missing from the
    archive become missing pages."""
    if seeds is None or isinstance(seeds, str) and seeds == "home":
        return graph.homes()
    found = list(dict.fromkeys(graph.node(url, add=True) for url in seeds))
    return found or graph.homes()


def reachable(graph: SiteGraph, seeds: list[int], follows: Sequence[bool] | None) -> list[int]:
    """Pages reachable from the seeds through followed links (the only pages any policy can fetch)."""
    seen = bytearray(graph.n_nodes)
    order = []
    queue = deque(seeds)
    for seed in seeds:
        seen[seed] = 1
    links = graph.links
    while queue:
        node = queue.popleft()
        order.append(node)
        if follows is None or follows[node]:
            for target in links[node]:
                if not seen[target]:
                    seen[target] = 1
                    queue.append(target)
    return order


def simulate(graph: SiteGraph, policy: Policy | str, truth_pairs, budget: float = 1.0, seeds: Iterable[str] | None = None,
             count_missing_as_fetch: bool = True, sample_every: float = DEFAULT.sample_every) -> CrawlResult:
    """Replay `policy` on `graph` for budget × (archived documents) fetches; returns the yield record."""

    if isinstance(policy, str):
        policy = make_policy(policy)
    if budget <= 0:
        raise ValueError(f"budget must be > 0 (a fraction of the site's archived documents), got {budget}")
    started, cpu_started = time.perf_counter(), time.process_time()
    seed_ids = resolve_seeds(graph, seeds)
    truth = truth_pairs if isinstance(truth_pairs, TruthIndex) else build_truth(graph, truth_pairs)
    budget_fetches = max(1, round(budget * graph.n_docs))
    policy.prepare(graph, truth)
    follows = policy.follows_links(graph)
    tally = _Tally(graph, truth, checkpoints_for(budget_fetches, sample_every), count_missing_as_fetch)
    if policy.fifo:
        prepared, cpu_prepared = time.perf_counter(), time.process_time()
        _crawl_fifo(graph, seed_ids, follows, tally, budget_fetches)
    else:
        priorities = _priorities(graph, policy, seed_ids, follows)
        prepared, cpu_prepared = time.perf_counter(), time.process_time()
        _crawl_priority(graph, policy, seed_ids, follows, priorities, tally, budget_fetches)
    tally.sample()
    return CrawlResult(
        site=graph.site, policy=policy.name, n_docs=graph.n_docs, n_parallel_docs=truth.n_parallel_docs,
        n_pairs=truth.n_pairs, budget_fetches=budget_fetches, fetched=tally.count, wasted_fetches=tally.wasted,
        bytes_fetched=tally.bytes, stopped="budget" if tally.count >= budget_fetches else "frontier_exhausted",
        order=tally.order, priority_orders=tally.priority_orders, seeds=seed_ids, doc_events=tally.doc_events, pair_events=tally.pair_events, samples=tally.samples,
        seconds_prepare=prepared - started, seconds_crawl=time.perf_counter() - prepared,
        cpu_seconds_prepare=cpu_prepared - cpu_started, cpu_seconds_crawl=time.process_time() - cpu_prepared,
        graph=graph)


def priority_order(values) -> np.ndarray:
    """An int64 per float that sorts exactly as the floats do (IEEE-754 bits, negatives mirrored).

    Heap keys are then plain ints, (TOP - order) << 32 | discovery counter, which compare about
    twice as fast as (priority, counter, id) tuples.
    """
    bits = np.ascontiguousarray(np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0)).view(np.int64)
    return np.where(bits < 0, -(bits & MAGNITUDE_BITS), bits)


def priority_values(orders) -> np.ndarray:
    """The floats back from `priority_order`'s ints; NaN for NEVER_SEEN and SEED_ORDER (no priority)."""
    orders = np.asarray(orders, dtype=np.int64)
    unset = (orders == NEVER_SEEN) | (orders == SEED_ORDER)
    safe = np.where(unset, 0, orders)
    bits = np.where(safe < 0, (-safe) | np.int64(-TOP), safe)
    values = np.ascontiguousarray(bits).view(np.float64).copy()
    values[unset] = np.nan
    return values


def replay_order(graph: SiteGraph, urls: Iterable[str], truth_pairs, budget: int | None = None,
                 count_missing_as_fetch: bool = True) -> CrawlResult:
    """Fetch `urls` in the order given (a crawl plan's ranked list), as a crawler fed the list does: the yield of
    that order on the archived graph. URLs the graph lacks are pages missing from the archive."""
    truth = truth_pairs if isinstance(truth_pairs, TruthIndex) else build_truth(graph, truth_pairs)
    nodes = [graph.node(url, add=True) for url in urls]
    budget_fetches = budget or max(1, len(nodes))
    tally = _Tally(graph, truth, checkpoints_for(budget_fetches), count_missing_as_fetch)
    for node in nodes:
        if tally.count >= budget_fetches:
            break
        if not tally.fetched[node]:
            tally.fetch(node)
    tally.sample()
    return CrawlResult(
        site=graph.site, policy="plan", n_docs=graph.n_docs, n_parallel_docs=truth.n_parallel_docs,
        n_pairs=truth.n_pairs, budget_fetches=budget_fetches, fetched=tally.count, wasted_fetches=tally.wasted,
        bytes_fetched=tally.bytes, stopped="budget" if tally.count >= budget_fetches else "list_exhausted",
        order=tally.order, priority_orders=tally.priority_orders, seeds=[], doc_events=tally.doc_events,
        pair_events=tally.pair_events, samples=tally.samples, seconds_prepare=0.0, seconds_crawl=0.0,
        cpu_seconds_prepare=0.0, cpu_seconds_crawl=0.0, graph=graph)


def _order_of(value: float) -> int:
    bits = struct.unpack("<q", struct.pack("<d", value))[0]
    return -(bits & MAGNITUDE_BITS) if bits < 0 else bits


def _priorities(graph: SiteGraph, policy, seeds: list[int], follows) -> tuple:
    """Score once, vectorised, before the loop: every reachable link (per-edge policies) or every page.

    Returns (link orders aligned with graph.csr() targets | None, page orders | None, page
    priorities as a list for dynamic policies to raise | None, positions in graph.csr() of the
    links scored, in the order `priority` got them | None).
    """
    if not policy.per_edge:
        values = np.nan_to_num(np.asarray(policy.priority(graph, None, np.arange(graph.n_nodes)), dtype=float))
        return None, priority_order(values), values.tolist() if policy.dynamic else None, None
    sources = np.array([u for u in reachable(graph, seeds, follows) if follows is None or follows[u]], dtype=np.int64)
    offsets, targets = graph.csr()
    counts = offsets[sources + 1] - offsets[sources]
    positions = np.repeat(offsets[sources] - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
    target_ids = targets[positions]
    values = np.asarray(policy.priority(graph, np.repeat(sources, counts), target_ids), dtype=float)
    if values.shape != target_ids.shape:
        raise ValueError(f"policy {policy.name} returned {values.shape} priorities for {target_ids.shape} links")
    edge_orders = np.full(len(targets), NEVER_SEEN, dtype=np.int64)  # links of unreachable pages: never used
    edge_orders[positions] = priority_order(values)
    return edge_orders, None, None, positions


def _crawl_fifo(graph: SiteGraph, seeds: list[int], follows, tally: _Tally, budget: int) -> None:
    """Breadth-first: fetch in discovery order."""
    links, fetch = graph.links, tally.fetch
    seen = bytearray(graph.n_nodes)
    queue = deque()
    for seed in seeds:
        seen[seed] = 1
        queue.append(seed)
    while queue and tally.count < budget:
        node = queue.popleft()
        fetch(node)
        if follows is not None and not follows[node]:
            continue
        for target in links[node]:
            if not seen[target]:
                seen[target] = 1
                queue.append(target)


def _crawl_priority(graph: SiteGraph, policy, seeds: list[int], follows, priorities: tuple,
                    tally: _Tally, budget: int) -> None:
    """Best-first over a heap of int keys (priority order, then discovery); stale keys are skipped when popped.

    best[v] is the order v is queued with (NEVER_SEEN, or FETCHED once fetched): a link only
    pushes v again when it offers a strictly higher priority, so priorities only go up. A
    fetched page's links are compared in one numpy step (fast for pages with many links).
    A per-edge policy with `rescores = True` is asked for new link priorities at the fetch counts
    its `next_rescore` names; the queue is then re-keyed with them (there, priorities may go down).
    """
    offsets, targets = graph.csr()
    offsets = offsets.tolist()  # scalar reads from a list are several times cheaper than from numpy
    edge_orders, node_orders, node_priorities, positions = priorities
    fetch, pushed = tally.fetch, []
    on_fetch = policy.on_fetch if policy.dynamic else None
    rescores = policy.rescores and positions is not None
    next_rescore = policy.next_rescore(0) if rescores else budget + 1
    edge_sources = np.repeat(np.arange(graph.n_nodes), np.diff(graph.csr()[0]))[positions] if rescores else None
    best = np.full(graph.n_nodes, NEVER_SEEN, dtype=np.int64)
    heap: list[int] = []
    for seed in seeds:
        best[seed] = SEED_ORDER
        heap.append(((TOP - SEED_ORDER) << 32) | len(pushed))
        pushed.append(seed)
    while heap and tally.count < budget:
        if tally.count >= next_rescore:
            heap = _rescore(graph, policy, positions, edge_sources, edge_orders, best, heap, pushed)
            next_rescore = max(policy.next_rescore(tally.count), tally.count + 1)
            continue  # the rebuilt heap drops stale entries: it may be empty now
        key = heappop(heap)
        node = pushed[key & COUNTER_MASK]
        if best[node] != TOP - (key >> 32):
            continue
        best[node] = FETCHED
        fetch(node, TOP - (key >> 32))
        if on_fetch is not None:
            for raised in on_fetch(node, node_priorities):
                order = _order_of(node_priorities[raised])
                node_orders[raised] = order
                if NEVER_SEEN < best[raised] < order:
                    best[raised] = order
                    heappush(heap, ((TOP - order) << 32) | len(pushed))
                    pushed.append(raised)
        start, end = offsets[node], offsets[node + 1]
        if start == end or follows is not None and not follows[node]:
            continue
        linked = targets[start:end]
        orders = edge_orders[start:end] if edge_orders is not None else node_orders[linked]
        better = (orders > best[linked]).nonzero()[0]  # not np.flatnonzero: its wrappers cost more than the work
        if len(better):
            linked, orders = linked[better], orders[better]
            best[linked] = orders
            for target, order in zip(linked.tolist(), orders.tolist()):
                heappush(heap, ((TOP - order) << 32) | len(pushed))
                pushed.append(target)


def _rescore(graph: SiteGraph, policy, positions: np.ndarray, sources: np.ndarray, edge_orders: np.ndarray,
             best: np.ndarray, heap: list[int], pushed: list[int]) -> list[int]:
    """New link priorities from the policy, applied to every scored link (edge_orders, in place) and the queue;
    `sources` are the scored links' source pages.

    A queued page's priority becomes the best new priority among the links already found to it
    (the links of fetched pages); its entry keeps its discovery counter, so ties stay in discovery
    order. Returns the rebuilt heap; `best` is updated in place.
    """
    fetched = best == FETCHED
    values = np.asarray(policy.rescore(graph, fetched, best > NEVER_SEEN), dtype=float)
    if values.shape != positions.shape:
        raise ValueError(f"policy {policy.name} rescored {values.shape} links, expected {positions.shape}")
    orders = priority_order(values)
    edge_orders[positions] = orders
    found = fetched[sources]
    found_targets, found_orders = graph.csr()[1][positions][found], orders[found]
    renewed = np.full(graph.n_nodes, NEVER_SEEN, dtype=np.int64)
    np.maximum.at(renewed, found_targets, found_orders)
    rebuilt = []
    for key in heap:
        counter = key & COUNTER_MASK
        node = pushed[counter]
        order = TOP - (key >> 32)
        if best[node] != order:
            continue  # a stale entry
        if order != SEED_ORDER and renewed[node] > NEVER_SEEN:
            order = int(renewed[node])
            best[node] = order
        rebuilt.append(((TOP - order) << 32) | counter)
    heapify(rebuilt)
    return rebuilt
