"""A crawl plan from a replay: the policy a site's crawl should follow and the frontier it fetched, in order.

Per site, `plan_policy` picks the replayed policy that reached 80% of the parallel documents in the
fewest fetches (then the highest AUC); `frontier_columns` turns that policy's crawl into the ranked
URLs a crawler is handed: the fetch order, each page's queue priority, the language and translation
the policy predicted for it, and whether the archive had it. Oracle knows the truth pairs, so no
crawler can follow it: it is never planned.
"""
from __future__ import annotations

import math

import numpy as np

from parascout.udfs.replay.policy_base import Policy
from parascout.udfs.replay.simulator import CrawlResult

#: policies a crawler cannot follow (they read the truth)
UNPLANNABLE_POLICIES = frozenset({"oracle"})
FRONTIER_FIELDS = ("url", "priority", "seed", "archived", "cld2_lang", "predicted_lang", "p_lang", "partner_url")


def plan_policy(rows: list[dict]) -> str | None:
    """The policy to plan a site's crawl with: fewest fetches to 80% (not reached: last), then highest AUC, then
    name; None when no plannable policy was replayed."""
    candidates = [row for row in rows if row.get("status") == "ok" and row["policy"] not in UNPLANNABLE_POLICIES]
    if not candidates:
        return None

    def key(row: dict) -> tuple:
        fetches, auc = row.get("fetches_to_80"), row.get("auc")
        return (math.inf if fetches is None else fetches, -(0.0 if auc is None or math.isnan(auc) else auc),
                row["policy"])
    return min(candidates, key=key)["policy"]


def frontier_columns(result: CrawlResult, policy: Policy) -> dict[str, list]:
    """The crawl's fetches in order as the `frontier_*` columns: url, priority (None for seeds and FIFO),
    seed, archived, cld2_lang, and the policy's predicted language, its probability and partner URL."""
    graph, nodes = result.graph, np.asarray(result.order, dtype=np.int64)
    predictions = policy.url_predictions(graph)
    seeds = set(result.seeds)
    columns = {
        "url": result.fetched_urls(),
        "priority": _nullable(result.fetched_priorities()),
        "seed": [node in seeds for node in result.order],
        "archived": (nodes < graph.n_docs).tolist(),
        "cld2_lang": [graph.langs[node] for node in result.order],
        "predicted_lang": [None] * len(nodes), "p_lang": [None] * len(nodes), "partner_url": [None] * len(nodes),
    }
    if predictions is not None and len(nodes):
        columns["predicted_lang"] = [lang if isinstance(lang, str) else None for lang in predictions.lang[nodes]]
        columns["p_lang"] = _nullable(predictions.p_lang[nodes])
        columns["partner_url"] = [graph.urls[p] if p >= 0 else None for p in predictions.partner[nodes].tolist()]
    return {f"frontier_{name}": values for name, values in columns.items()}


def _nullable(values: np.ndarray) -> list[float | None]:
    return [None if math.isnan(value) else value for value in np.asarray(values, dtype=float).tolist()]

