"""Replay crawl policies over archived link graphs: how fast would each find the parallel documents?

    from parascout.udfs.replay import build_graph, make_policy, simulate
    graph = build_graph(docs_of_one_site)
    result = simulate(graph, make_policy("smart", langs=("eng", "isl"), lang_scorer=..., pair_scorer=...),
                      truth_pairs, budget=1.0)
    result.summary(), result.curve()
"""
from parascout.udfs.replay.graph import SiteGraph, TruthIndex, build_graph, build_truth
from parascout.udfs.replay.page_policies import lss_handles
from parascout.udfs.replay.policies import POLICY_NAMES, make_policy
from parascout.udfs.replay.policy_base import Policy
from parascout.udfs.replay.simulator import CrawlResult, simulate

__all__ = [
           "POLICY_NAMES",
           "CrawlResult",
           "Policy",
           "SiteGraph",
           "TruthIndex",
           "build_graph",
           "build_truth",
           "lss_handles",
           "make_policy",
           "simulate",
]
