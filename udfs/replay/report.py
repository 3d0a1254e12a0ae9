"""The replay report: Markdown and HTML (same content) plus PNG plots, under <root>/replay/.

Built on the driver from small aggregates: the per site × policy summary rows, the mean
curves (policies × 101 points) and mean deciles (policies × 10). The summary rows are
bounded by sites × policies; the per-site tables in the report are capped at MAX_SITE_ROWS.
"""
from __future__ import annotations

import math

import pandas as pd

from parascout.udfs.common.report_document import Report
from parascout.udfs.replay import metrics, plots

MAX_SITE_ROWS = 50


def build_report(summary: pd.DataFrame, mean_curves: pd.DataFrame, mean_deciles: pd.DataFrame,
                 parameters: dict, notes: list[str], comparison: tuple[pd.DataFrame, dict] | None = None,
                 comparison_note: str | None = None, suffix: str = "") -> tuple[Report, dict[str, bytes]]:
    """The report blocks and the PNGs they show (file name -> bytes); `suffix` ends each PNG's name (`-eng-fra`:
    the pair's plots when one run replays several pairs)."""
    langs = "–".join(parameters.get("langs", ()))
    report = Report(f"Crawl replay: how fast each policy finds {langs} parallel documents")
    images: dict[str, bytes] = {}
    ok = summary[summary["status"] == "ok"]
    report.paragraph("Crawl policies replayed offline over the link graph of archived pages; a parallel "
                     "document counts as found once it and its truth partner have both been fetched.")
    report.bullets([f"{key}: {_parameter(value)}" for key, value in parameters.items()])
    report.heading("Notes")
    collected = (f"{ok['site'].nunique()} sites replayed; the driver collected {len(summary)} summary rows "
                 "(sites × policies) to write this report.")
    report.bullets([*notes, collected])
    if ok.empty:
        report.paragraph("No site was replayed: nothing to compare.")
        return report, images
    report.heading("Policies across sites")
    report.paragraph("mean_auc: mean area under the yield curve (share of parallel documents found, averaged "
                     "over the fetch budget; 1 = all found with the first fetch). median_share_to_N: median "
                     "share of the site's archived documents fetched before N% of its parallel documents were "
                     "found (sites that never got there are left out and sites_reaching_N says how many did).")
    report.table(metrics.policy_table(ok))
    _speedup_section(report, ok)
    rank = {policy: position for position, policy in enumerate(dict.fromkeys(ok["policy"]))}
    mean_curves = mean_curves.sort_values(["policy", "percent"], key=lambda c: c.map(rank) if c.name == "policy" else c)
    mean_deciles = mean_deciles.sort_values(["policy", "decile"], key=lambda c: c.map(rank) if c.name == "policy" else c)
    if not mean_curves.empty:
        images[f"yield_curves{suffix}.png"] = plots.mean_yield_curves(mean_curves, float(parameters.get("budget", 1.0)))
        report.image(f"yield_curves{suffix}.png", "Mean yield curve per policy")
    if not mean_deciles.empty:
        images[f"deciles{suffix}.png"] = plots.decile_bars(mean_deciles)
        report.image(f"deciles{suffix}.png", "Parallel documents found per decile of the downloaded documents (Fig. 7)")
        table = mean_deciles.pivot(index="decile", columns="policy", values="mean_share")
        table = table[sorted(table.columns, key=rank.get)].reset_index()
        report.paragraph("Mean share of a site's parallel documents found in each decile of the fetches:")
        report.table(table)
    _prediction_section(report, images, comparison, comparison_note, suffix)
    _sites_section(report, ok)
    return report, images


def _parameter(value) -> str:
    """A run parameter as a reader writes it: lists and tuples comma-separated."""
    return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _speedup_section(report: Report, ok: pd.DataFrame) -> None:
    policies = [p for p in ("smart", "smart+lang", "smart+site") if p in set(ok["policy"])]
    if policies and "bfs" in set(ok["policy"]):
        report.heading("Target: smart reaches 80% with at most half of bfs's fetches")
    for policy in policies:
        speed = metrics.speedup_versus(ok, policy, "bfs", 80)
        if speed.empty:
            continue
        compared = speed.dropna(subset=["ratio"])
        if compared.empty:
            report.paragraph(f"{policy}: no site where both {policy} and bfs reached 80% of the parallel documents.")
            continue
        within = int((compared["ratio"] <= 0.5).sum())
        report.paragraph(f"{policy}: sites where both reached 80%: {len(compared)}; median fetch ratio {policy}/bfs "
                         f"{compared['ratio'].median():.3f}; sites at or below 0.5: {within} "
                         f"({within / len(compared):.0%}). Sites where only bfs got there: "
                         f"{int((speed[policy].isna() & speed['bfs'].notna()).sum())}; only {policy}: "
                         f"{int((speed[policy].notna() & speed['bfs'].isna()).sum())}.")


def _prediction_section(report: Report, images: dict, comparison, note: str | None, suffix: str = "") -> None:
    report.heading("Before fetching: the shortlist's prediction vs the replay")
    if comparison is None:
        report.paragraph(note or "No shortlist table: comparison skipped.")
        return
    frame, stats = comparison
    report.paragraph(f"Replay policy: {stats['policy']}. Sites compared: {stats['hosts_compared']} "
                     f"(shortlist sites not replayed: {stats['shortlist_hosts_not_replayed']}). "
                     + prediction_agreement_sentence(stats))
    if not frame.empty:
        images[f"prediction{suffix}.png"] = plots.prediction_scatter(frame, stats["policy"], stats["spearman_pairs"])
        report.image(f"prediction{suffix}.png", "Predicted pairs vs pairs found by the replay")
        report.table(frame.head(MAX_SITE_ROWS))


def prediction_agreement_sentence(stats: dict) -> str:
    """Spearman's rho of the shortlist's prediction vs the replay in words; why a rho is missing, only when it is."""
    parts, missing = [], []
    for key, what in (("spearman_pairs", "predicted pairs vs pairs found"),
                      ("spearman_ratio", "predicted ratio vs parallel documents per fetch")):
        value = stats.get(key)
        if value is None or math.isnan(value):
            missing.append(what)
        else:
            parts.append(f"{what} ρ = {value:.2f}")
    text = f"Spearman's rank correlation over sites: {'; '.join(parts)}." if parts else ""
    if missing:
        text += (f" No ρ for {' and '.join(missing)}: fewer than 3 sites to compare, or one side has the "
                 "same value on every site.")
    return (text + " The closer ρ is to 1, the more the model-only ranking can be trusted before fetching.").strip()


def _sites_section(report: Report, ok: pd.DataFrame) -> None:
    report.heading("Per site: area under the yield curve")
    sites = ok.groupby("site").agg(n_docs=("n_docs", "first"), n_parallel_docs=("n_parallel_docs", "first"))
    auc = ok.pivot(index="site", columns="policy", values="auc")
    table = sites.join(auc).sort_values("n_parallel_docs", ascending=False).reset_index()
    if len(table) > MAX_SITE_ROWS:
        report.paragraph(f"The {MAX_SITE_ROWS} sites with the most parallel documents of {len(table)}; "
                         "all of them are in the replay_summary table.")
    report.table(table.head(MAX_SITE_ROWS))


def write_report(out_dir: str, report: Report, images: dict[str, bytes], name: str = "report") -> list[str]:
    """Write <name>.md, <name>.html and the PNGs under out_dir; returns the paths written."""
    return report.write(out_dir, name, images)
