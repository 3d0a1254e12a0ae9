"""PNG plots of replayed crawls (matplotlib, Agg backend): mean yield curves, Fig.-7-style decile panels,
the shortlist's prediction vs the replay per site."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd

POLICY_COLOURS = {"bfs": "#1f77b4", "bfs+cld2": "#17becf", "smart": "#d62728", "smart+lang": "#ff7f0e",
                  "smart+site": "#8c564b", "strand": "#2ca02c", "random": "#7f7f7f", "oracle": "#9467bd", "ilsp": "#bcbd22"}


def _figure(width: float = 7.0, height: float = 4.5):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt, *plt.subplots(figsize=(width, height), dpi=110)


def _png(plt, figure, layout: bool = True) -> bytes:
    buffer = io.BytesIO()
    if layout:
        figure.tight_layout()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()


def mean_yield_curves(curves: pd.DataFrame, budget: float = 1.0) -> bytes:
    """Mean share of parallel documents found vs share of the budget spent, one line per policy.

    curves: policy, percent (0..100 of the budget), mean_recall, sites.
    """
    plt, figure, axes = _figure(8.5, 4.5)
    sites = curves.groupby("policy", sort=False)["sites"].max()
    same_sites = sites.nunique() == 1
    for policy, group in curves.groupby("policy", sort=False):
        group = group.sort_values("percent")
        label = policy if same_sites else f"{policy} ({int(sites[policy])} sites)"
        axes.plot(group["percent"] * budget, group["mean_recall"] * 100, label=label,
                  color=POLICY_COLOURS.get(policy), linewidth=2.2 if policy.startswith("smart") else 1.4,
                  linestyle="--" if policy in ("oracle", "random") else "-")
    axes.set_xlabel("documents fetched (% of the site's archived documents)")
    axes.set_ylabel("parallel documents found (% of the site's)")
    over = f" over {int(sites.iloc[0])} sites" if same_sites and len(sites) else ""
    axes.set_title(f"Mean yield curve per policy{over} (higher and further left is better)", fontsize=10)
    axes.set_ylim(0, 100)
    axes.grid(alpha=0.3)
    axes.legend(title="policy", loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title_fontsize=8)
    return _png(plt, figure)


def decile_bars(deciles: pd.DataFrame) -> bytes:
    """The paper's Fig. 7 view as small multiples: one panel per policy, the mean % of a site's parallel
    documents found in each decile of its fetches, against the even spread (10% per decile).

    deciles: policy, decile (1..10), mean_share.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    policies = list(dict.fromkeys(deciles["policy"]))
    columns = min(3, max(1, len(policies)))
    rows = -(-len(policies) // columns)
    figure, grid = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.4 * rows + 0.8), dpi=110,
                                sharex=True, sharey=True, squeeze=False)
    top = max(10.0, float(deciles["mean_share"].max()) * 100 * 1.1)
    for axes, policy in zip(grid.flat, policies):
        group = deciles[deciles["policy"] == policy].sort_values("decile")
        axes.bar(group["decile"], group["mean_share"] * 100, width=0.8, color=POLICY_COLOURS.get(policy, "#555"),
                 label="found in the decile")
        axes.axhline(10, color="black", linestyle="--", linewidth=0.8, label="even spread (10% per decile)")
        axes.set_title(policy, fontsize=10)
        axes.set_ylim(0, top)
        axes.set_xticks(range(1, 11))
        axes.tick_params(labelsize=8)
        axes.grid(axis="y", alpha=0.3)
    for axes in grid.flat[len(policies):]:
        axes.set_visible(False)
    for axes in grid[-1]:
        axes.set_xlabel("decile of the fetches (1 = first 10%)", fontsize=8)
    for axes in grid[:, 0]:
        axes.set_ylabel("% of parallel docs found", fontsize=8)
    handles, labels = grid.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="upper right", fontsize=8, ncol=2)
    figure.suptitle("Where in the crawl each policy finds the parallel documents (mean over sites)",
                    fontsize=10, x=0.02, ha="left")
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.3 / figure.get_figheight()))  # 0.3 inch for the title and legend
    return _png(plt, figure, layout=False)


#: sites named on the prediction scatter (the rest are points only): above this, the top ones by prediction
MAX_LABELLED_SITES = 25


def prediction_scatter(comparison: pd.DataFrame, policy: str, spearman: float | None = None) -> bytes:
    """Shortlist's predicted pairs vs pairs the replay found per site (log-log), sites named, y = x for reference."""
    from matplotlib.ticker import FuncFormatter

    plt, figure, axes = _figure(6.5, 5.5)
    axes.set_xscale("log")
    axes.set_yscale("log")
    x, y = comparison["predicted_pairs"] + 1, comparison["pairs_found"] + 1
    rho = "Spearman ρ undefined" if spearman is None or np.isnan(spearman) else f"Spearman ρ = {spearman:.2f}"
    axes.scatter(x, y, s=22, alpha=0.8, color="#d62728", label=f"a site ({len(comparison)} compared)", zorder=3)
    labelled = comparison.nlargest(MAX_LABELLED_SITES, "predicted_pairs") if len(comparison) > MAX_LABELLED_SITES \
        else comparison
    placed: list[tuple[float, float]] = []
    for row in labelled.sort_values(["pairs_found", "predicted_pairs"]).itertuples(index=False):
        point = (np.log10(row.predicted_pairs + 1), np.log10(row.pairs_found + 1))
        crowded = sum(abs(point[0] - x) < 0.25 and abs(point[1] - y) < 0.08 for x, y in placed)
        placed.append(point)
        axes.annotate(row.site, (row.predicted_pairs + 1, row.pairs_found + 1), textcoords="offset points",
                      xytext=(-4, -9) if crowded else (4, 3), ha="right" if crowded else "left", fontsize=7,
                      color="#333")  # a point close to one already named: its label below left
    low, high = 1, max(float(x.max()), float(y.max())) * 1.5
    axes.plot([low, high], [low, high], color="black", linestyle="--", linewidth=0.8,
              label="prediction = found (y = x)")
    for axis in (axes.xaxis, axes.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.set_xlim(0.4, high)  # room for a label left of a point at 1
    axes.set_ylim(0.8, high)
    axes.set_xlabel("shortlist (URLs only): predicted pairs + 1")
    axes.set_ylabel(f"replay ({policy}): true pairs found + 1")
    axes.set_title(f"Prediction before fetching vs replay, per site ({rho})", fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left", fontsize=8)
    return _png(plt, figure)
