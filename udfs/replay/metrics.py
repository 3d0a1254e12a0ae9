"""Yield-curve metrics of replayed crawls: AUC, fetches to X% of the parallel documents, deciles.

A curve is given by its events: the fetch count (1-based) at which each parallel document
was found, in order. Recall after k fetches = (events <= k) / n_parallel_docs; after the
crawl stops (budget spent or frontier exhausted) it stays where it was.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

SHARES = (0.5, 0.8, 0.9)
GRID_POINTS = 101


def recall_at(events: Sequence[int], n_parallel: int, fetch_counts: Sequence[int]) -> np.ndarray:
    """Share of the parallel documents found after each of `fetch_counts` fetches."""
    if n_parallel <= 0:
        return np.full(len(fetch_counts), np.nan)
    found = np.searchsorted(np.asarray(events, dtype=np.int64), np.asarray(fetch_counts, dtype=np.int64), side="right")
    return found / n_parallel


def area_under_curve(events: Sequence[int], n_parallel: int, budget_fetches: int) -> float:
    """Mean recall over fetches 1..budget: 1.0 if every parallel document came with the first fetch."""
    if n_parallel <= 0 or budget_fetches <= 0:
        return float("nan")
    within = np.asarray(events, dtype=np.int64)
    within = within[within <= budget_fetches]
    return float((budget_fetches - within + 1).sum() / (budget_fetches * n_parallel))


def fetches_to_share(events: Sequence[int], n_parallel: int, share: float) -> int | None:
    """Fetches needed to find `share` of the parallel documents (None: not reached)."""
    if n_parallel <= 0:
        return None
    needed = max(1, math.ceil(share * n_parallel - 1e-9))
    return int(events[needed - 1]) if needed <= len(events) else None


def grid_recall(events: Sequence[int], n_parallel: int, budget_fetches: int, points: int = GRID_POINTS) -> list[float]:
    """Recall at 0%, 1%, ..., 100% of the budget: curves of different sites on one x axis."""
    counts = np.ceil(np.linspace(0, 1, points) * budget_fetches).astype(np.int64)
    return recall_at(events, n_parallel, counts).tolist()


def deciles(events: Sequence[int], n_parallel: int, budget_fetches: int) -> pd.DataFrame:
    """The paper's Fig. 7 view: parallel documents found in each tenth of the downloaded documents."""
    upto = np.ceil(np.arange(1, 11) / 10 * budget_fetches).astype(np.int64)
    cumulative = np.searchsorted(np.asarray(events, dtype=np.int64), upto, side="right")
    in_decile = np.diff(cumulative, prepend=0)
    share = in_decile / n_parallel if n_parallel > 0 else np.full(10, np.nan)
    return pd.DataFrame({"decile": np.arange(1, 11), "fetched": upto, "docs_found": cumulative,
                         "docs_found_in_decile": in_decile, "share_of_parallel_docs": share})


def summarise(result) -> dict:
    """One summary row of a CrawlResult (the `replay_summary` columns)."""
    n_parallel = result.n_parallel_docs
    row = {
        "site": result.site, "policy": result.policy, "n_docs": result.n_docs, "n_parallel_docs": n_parallel,
        "n_pairs": result.n_pairs, "budget_fetches": result.budget_fetches, "fetched": result.fetched,
        "wasted_fetches": result.wasted_fetches, "bytes_fetched": result.bytes_fetched,
        "pairs_found": result.pairs_found, "docs_found": result.docs_found,
        "recall": result.docs_found / n_parallel if n_parallel else float("nan"),
        "pair_recall": result.pairs_found / result.n_pairs if result.n_pairs else float("nan"),
        "auc": area_under_curve(result.doc_events, n_parallel, result.budget_fetches),
        "stopped": result.stopped,
    }
    for share in SHARES:
        needed = fetches_to_share(result.doc_events, n_parallel, share)
        percent = round(share * 100)
        row[f"fetches_to_{percent}"] = needed
        row[f"share_fetches_to_{percent}"] = needed / result.n_docs if needed is not None and result.n_docs else None
    return row


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation (NaN with fewer than 3 points or a constant side)."""
    from scipy.stats import spearmanr

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return float(spearmanr(x, y).statistic)


def policy_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per policy across sites: mean AUC and recall, median share of fetches to 50/80/90%, totals."""
    grouped = summary.groupby("policy", sort=False)
    table = pd.DataFrame({
        "sites": grouped["site"].nunique(),
        "mean_auc": grouped["auc"].mean(),
        "mean_recall": grouped["recall"].mean(),
        **{f"median_share_to_{p}": grouped[f"share_fetches_to_{p}"].median() for p in (50, 80, 90)},
        **{f"sites_reaching_{p}": grouped[f"fetches_to_{p}"].count() for p in (50, 80, 90)},
        "wasted_fetches": grouped["wasted_fetches"].sum(),
        "bytes_fetched": grouped["bytes_fetched"].sum(),
    })
    return table.reset_index()


def speedup_versus(summary: pd.DataFrame, policy: str = "smart", baseline: str = "bfs",
                   percent: int = 80) -> pd.DataFrame:
    """Per site: fetches `policy` needs to reach `percent`% of the parallel documents over `baseline`'s."""
    column = f"fetches_to_{percent}"
    wide = summary.pivot(index="site", columns="policy", values=column)
    if policy not in wide or baseline not in wide:
        return pd.DataFrame(columns=["site", policy, baseline, "ratio"])
    out = wide[[policy, baseline]].astype(float).reset_index()
    out["ratio"] = out[policy] / out[baseline]
    return out


def prediction_agreement(shortlist: pd.DataFrame, summary: pd.DataFrame, policy: str,
                         site_of: Callable[[str], str] | None = None) -> tuple[pd.DataFrame, dict]:
    """Shortlist's model-only prediction vs the replay of `policy`, per site, and Spearman's rho over sites.

    The replay side is pairs_found (vs predicted_pairs) and replay_ratio = parallel documents
    found per fetched document (vs predicted_ratio). The shortlist names sites as rank-pairs grouped
    hosts (www.x.com and fr.x.com -> x.com), which may differ from the replay's sites (replay-crawl
    --group-by): `site_of` maps a replayed site to the shortlist's name, and the replays mapped to one
    name are summed. Shortlist sites that were not replayed are left out and counted. One row per
    compared site.
    """
    replayed = summary[(summary["policy"] == policy) & (summary["status"] == "ok")]
    replayed = replayed[["site", "n_docs", "n_pairs", "pairs_found", "docs_found", "fetched"]]
    if site_of is not None:
        replayed = (replayed.assign(site=replayed["site"].map(site_of))
                    .groupby("site", as_index=False, sort=False).sum())
    merged = shortlist[["site", "predicted_pairs", "predicted_ratio"]].merge(replayed, on="site", how="inner")
    merged["replay_ratio"] = merged["docs_found"] / merged["fetched"].where(merged["fetched"] > 0)
    merged = merged.sort_values("predicted_pairs", ascending=False, kind="stable").reset_index(drop=True)
    stats = {
        "policy": policy,
        "hosts_compared": len(merged),
        "shortlist_hosts_not_replayed": int(shortlist["site"].nunique() - merged["site"].nunique()),
        "spearman_pairs": spearman(merged["predicted_pairs"], merged["pairs_found"]),
        "spearman_ratio": spearman(merged["predicted_ratio"], merged["replay_ratio"]),
    }
    return merged, stats


def headline(summary: pd.DataFrame) -> dict:
    """Job-report metrics of the replayed sites: mean AUC and median share to 80% per policy, smart vs bfs."""
    ok = summary[summary["status"] == "ok"]
    if ok.empty:
        return {}
    table = policy_table(ok).set_index("policy")
    found = {"mean_auc": table["mean_auc"].round(4).to_dict(),
             "median_share_fetches_to_80": table["median_share_to_80"].round(4).to_dict()}
    speed = speedup_versus(ok, "smart", "bfs", 80)
    if not speed.empty:
        ratio = speed["ratio"].dropna()
        found["smart_vs_bfs_fetches_to_80"] = {
            "hosts_both_reached": len(ratio),
            "median_ratio": round(float(ratio.median()), 4) if len(ratio) else None,
            "hosts_ratio_at_most_half": int((ratio <= 0.5).sum()),
            "hosts_only_smart_reached": int((speed["smart"].notna() & speed["bfs"].isna()).sum()),
            "hosts_only_bfs_reached": int((speed["smart"].isna() & speed["bfs"].notna()).sum()),
        }
    return found
