"""The crawl policy interface of the replay simulator: the Policy base class and what a policy predicts.

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

Why a module of its own: the simulator and the frontier export need only this interface, and
every family of policies (page_policies, link_policies, site_policy) builds on it without
importing the others.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

import numpy as np

from parascout.udfs.replay.config import ReplayConfig
from parascout.udfs.replay.graph import SiteGraph, TruthIndex

LangScorer = Callable[[list[str]], "object"]
PairScorer = Callable[[list[str], list[str]], np.ndarray]
HandleFunction = Callable[[list[str], tuple[str, str]], tuple[list[str], list["str | None"]]]


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
