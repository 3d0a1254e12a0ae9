"""Replay crawl policies over archived link graphs: how fast would each find the parallel documents?

    from parascout.udfs.replay import build_graph, make_policy, simulate
    graph = build_graph(docs_of_one_site)
    result = simulate(graph, make_policy("smart", langs=("eng", "isl"), lang_scorer=..., pair_scorer=...),
                      truth_pairs, budget=1.0)
    result.summary(), result.curve()
"""
import importlib

#: the names this package hands on -> the module defining them, imported on first use (PEP 562): the table registry
#: imports `parascout.udfs.replay.schemas`, and a fetch worker that reads a table must not load the simulator's
#: pandas/scipy with it
EXPORTS = {
    "SiteGraph": "graph", "TruthIndex": "graph", "build_graph": "graph", "build_truth": "graph",
    "lss_handles": "page_policies", "POLICY_NAMES": "policies", "make_policy": "policies", "Policy": "policy_base",
    "CrawlResult": "simulator", "simulate": "simulator",
}
__all__ = ["POLICY_NAMES", "CrawlResult", "Policy", "SiteGraph", "TruthIndex", "build_graph", "build_truth",
           "lss_handles", "make_policy", "simulate"]


def __getattr__(name: str):
    if name not in EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{EXPORTS[name]}"), name)
