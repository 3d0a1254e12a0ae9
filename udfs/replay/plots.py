"""PNG plots of replayed crawls (matplotlib, Agg backend): mean yield curves, Fig.-7-style decile bars."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd

POLICY_COLOURS = {"bfs": "#1f77b4", "bfs+cld2": "#17becf", "smart": "#d62728", "smart+lang": "#ff7f0e",
                  "smart+site": "#8c564b", "strand": "#2ca02c", "random": "#7f7f7f", "oracle": "#9467bd"}


def _figure(width: float = 7.0, height: float = 4.5):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt, *plt.subplots(figsize=(width, height), dpi=110)


def _png(plt, figure) -> bytes:
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()


def mean_yield_curves(curves: pd.DataFrame, budget: float = 1.0) -> bytes:
    """Mean share of parallel documents found vs share of the budget spent, one line per policy.

    curves: policy, percent (0..100 of the budget), mean_recall, hosts.
    """
    plt, figure, axes = _figure()
    for policy, group in curves.groupby("policy", sort=False):
        group = group.sort_values("percent")
        hosts = int(group["hosts"].max())
        axes.plot(group["percent"] * budget, group["mean_recall"] * 100, label=f"{policy} ({hosts} hosts)",
                  color=POLICY_COLOURS.get(policy), linewidth=2.2 if policy == "smart" else 1.4,
                  linestyle="--" if policy == "oracle" else "-")
    axes.set_xlabel("documents fetched (% of the host's archived documents)")
    axes.set_ylabel("parallel documents found (%)")
    axes.set_title("Mean yield curve per policy")
    axes.set_ylim(0, 100)
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right", fontsize=8)
    return _png(plt, figure)


def decile_bars(deciles: pd.DataFrame) -> bytes:
    """The paper's Fig. 7 view: mean % of a host's parallel documents found in each decile of the fetches.

    deciles: policy, decile (1..10), mean_share.
    """
    plt, figure, axes = _figure(8.0, 4.5)
    policies = list(dict.fromkeys(deciles["policy"]))
    width = 0.8 / max(1, len(policies))
    for position, policy in enumerate(policies):
        group = deciles[deciles["policy"] == policy].sort_values("decile")
        axes.bar(group["decile"] - 0.4 + width * (position + 0.5), group["mean_share"] * 100, width=width,
                 label=policy, color=POLICY_COLOURS.get(policy))
    axes.set_xticks(np.arange(1, 11), [f"{10 * (d - 1)}-{10 * d}%" for d in range(1, 11)], fontsize=8)
    axes.set_xlabel("decile of the downloaded documents")
    axes.set_ylabel("parallel documents found in the decile (% of the host's)")
    axes.set_title("Where in the crawl the parallel documents were found")
    axes.grid(axis="y", alpha=0.3)
    axes.legend(fontsize=8)
    return _png(plt, figure)


def prediction_scatter(comparison: pd.DataFrame, policy: str) -> bytes:
    """Shortlist's predicted pairs vs pairs the replay found per host (log-log)."""
    plt, figure, axes = _figure(5.5, 5.0)
    axes.scatter(comparison["predicted_pairs"] + 1, comparison["pairs_found"] + 1, s=14, alpha=0.7)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("shortlist: predicted pairs + 1")
    axes.set_ylabel(f"replay ({policy}): pairs found + 1")
    axes.set_title("Model-only prediction vs replay, per host")
    axes.grid(alpha=0.3)
    return _png(plt, figure)
