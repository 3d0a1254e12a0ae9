"""The replay report: Markdown and HTML (same content) plus PNG plots, under <root>/replay/.

Built on the driver from small aggregates: the per host × policy summary rows, the mean
curves (policies × 101 points) and mean deciles (policies × 10). The summary rows are
bounded by hosts × policies; the per-host tables in the report are capped at MAX_HOST_ROWS.
"""
from __future__ import annotations

import html
import math
import os
import uuid

import numpy as np
import pandas as pd

from parascout.udfs import storage
from parascout.udfs.replay import metrics, plots

MAX_HOST_ROWS = 50
STYLE = ("<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
         "table{border-collapse:collapse;font-size:13px;margin:1em 0}"
         "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}"
         "td:first-child,th:first-child{text-align:left}img{max-width:100%}</style></head><body>")


class Report:
    """An ordered list of blocks (heading, paragraph, table, image) rendered as Markdown and HTML."""

    def __init__(self, title: str):
        self.title = title
        self.blocks: list[tuple[str, object]] = []

    def heading(self, text: str) -> None:
        self.blocks.append(("heading", text))

    def paragraph(self, text: str) -> None:
        self.blocks.append(("paragraph", text))

    def bullets(self, items: list[str]) -> None:
        if items:
            self.blocks.append(("bullets", items))

    def table(self, frame: pd.DataFrame) -> None:
        self.blocks.append(("table", frame))

    def image(self, file_name: str, caption: str) -> None:
        self.blocks.append(("image", (file_name, caption)))

    def markdown(self) -> str:
        lines = [f"# {self.title}", ""]
        for kind, content in self.blocks:
            if kind == "heading":
                lines += [f"## {content}", ""]
            elif kind == "paragraph":
                lines += [str(content), ""]
            elif kind == "bullets":
                lines += [f"- {item}" for item in content] + [""]
            elif kind == "table":
                lines += [_markdown_table(content), ""]
            elif kind == "image":
                file_name, caption = content
                lines += [f"![{caption}]({file_name})", ""]
        return "\n".join(lines)

    def html(self) -> str:
        parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(self.title)}</title>",
                 STYLE,
                 f"<h1>{html.escape(self.title)}</h1>"]
        for kind, content in self.blocks:
            if kind == "heading":
                parts.append(f"<h2>{html.escape(str(content))}</h2>")
            elif kind == "paragraph":
                parts.append(f"<p>{html.escape(str(content))}</p>")
            elif kind == "bullets":
                parts.append("<ul>" + "".join(f"<li>{html.escape(item)}</li>" for item in content) + "</ul>")
            elif kind == "table":
                parts.append(_format(content).to_html(index=False, escape=True, border=0))
            elif kind == "image":
                file_name, caption = content
                parts.append(f"<figure><img src='{html.escape(file_name)}' alt='{html.escape(caption)}'>"
                             f"<figcaption>{html.escape(caption)}</figcaption></figure>")
        parts.append("</body></html>")
        return "\n".join(parts)


def _format(frame: pd.DataFrame) -> pd.DataFrame:
    """Numbers as short strings: floats to 3 decimals, missing as '–'."""
    def cell(value) -> str:
        if value is None or isinstance(value, float) and math.isnan(value) or value is pd.NA:
            return "–"
        if isinstance(value, (float, np.floating)):
            return f"{value:.3f}"
        return str(value)
    return frame.astype(object).apply(lambda column: column.map(cell)) if len(frame) else frame.astype(str)


def _markdown_table(frame: pd.DataFrame) -> str:
    shown = _format(frame)
    header = "| " + " | ".join(str(c) for c in shown.columns) + " |"
    rule = "|" + "|".join("---" for _ in shown.columns) + "|"
    rows = ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in shown.itertuples(index=False)]
    return "\n".join([header, rule, *rows])


def write_bytes(path: str, data: bytes) -> None:
    """Write a binary file atomically (local: temporary name then rename; remote: pyarrow's filesystem)."""
    if storage.is_local(path):
        local = storage.local_path(path)
        os.makedirs(os.path.dirname(os.path.abspath(local)), exist_ok=True)
        temporary = f"{local}.tmp-{uuid.uuid4().hex[:8]}"
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.replace(temporary, local)
        return
    from pyarrow import fs

    filesystem, inner = fs.FileSystem.from_uri(path.replace("s3a://", "s3://", 1))
    with filesystem.open_output_stream(inner) as handle:
        handle.write(data)


def build_report(summary: pd.DataFrame, mean_curves: pd.DataFrame, mean_deciles: pd.DataFrame,
                 parameters: dict, notes: list[str], comparison: tuple[pd.DataFrame, dict] | None = None,
                 comparison_note: str | None = None) -> tuple[Report, dict[str, bytes]]:
    """The report blocks and the PNGs they show (file name -> bytes)."""
    langs = "–".join(parameters.get("langs", ()))
    report = Report(f"Crawl replay: how fast each policy finds {langs} parallel documents")
    images: dict[str, bytes] = {}
    ok = summary[summary["status"] == "ok"]
    report.paragraph("Crawl policies replayed offline over the link graph of archived pages; a parallel "
                     "document counts as found once it and its truth partner have both been fetched.")
    report.bullets([f"{key}: {value}" for key, value in parameters.items()])
    report.heading("Notes")
    collected = (f"{ok['host'].nunique()} hosts replayed; the driver collected {len(summary)} summary rows "
                 "(hosts × policies) to write this report.")
    report.bullets([*notes, collected])
    if ok.empty:
        report.paragraph("No host was replayed: nothing to compare.")
        return report, images
    report.heading("Policies across hosts")
    report.paragraph("mean_auc: mean area under the yield curve (share of parallel documents found, averaged "
                     "over the fetch budget; 1 = all found with the first fetch). median_share_to_N: median "
                     "share of the host's archived documents fetched before N% of its parallel documents were "
                     "found (hosts that never got there are left out and hosts_reaching_N says how many did).")
    report.table(metrics.policy_table(ok))
    _speedup_section(report, ok)
    rank = {policy: position for position, policy in enumerate(dict.fromkeys(ok["policy"]))}
    mean_curves = mean_curves.sort_values(["policy", "percent"], key=lambda c: c.map(rank) if c.name == "policy" else c)
    mean_deciles = mean_deciles.sort_values(["policy", "decile"], key=lambda c: c.map(rank) if c.name == "policy" else c)
    if not mean_curves.empty:
        images["yield_curves.png"] = plots.mean_yield_curves(mean_curves, float(parameters.get("budget", 1.0)))
        report.image("yield_curves.png", "Mean yield curve per policy")
    if not mean_deciles.empty:
        images["deciles.png"] = plots.decile_bars(mean_deciles)
        report.image("deciles.png", "Parallel documents found per decile of the downloaded documents (Fig. 7)")
        table = mean_deciles.pivot(index="decile", columns="policy", values="mean_share")
        table = table[sorted(table.columns, key=rank.get)].reset_index()
        report.paragraph("Mean share of a host's parallel documents found in each decile of the fetches:")
        report.table(table)
    _prediction_section(report, images, comparison, comparison_note)
    _hosts_section(report, ok)
    return report, images


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
            report.paragraph(f"{policy}: no host where both {policy} and bfs reached 80% of the parallel documents.")
            continue
        within = int((compared["ratio"] <= 0.5).sum())
        report.paragraph(f"{policy}: hosts where both reached 80%: {len(compared)}; median fetch ratio {policy}/bfs "
                         f"{compared['ratio'].median():.3f}; hosts at or below 0.5: {within} "
                         f"({within / len(compared):.0%}). Hosts where only bfs got there: "
                         f"{int((speed[policy].isna() & speed['bfs'].notna()).sum())}; only {policy}: "
                         f"{int((speed[policy].notna() & speed['bfs'].isna()).sum())}.")


def _prediction_section(report: Report, images: dict, comparison, note: str | None) -> None:
    report.heading("Before fetching: the shortlist's prediction vs the replay")
    if comparison is None:
        report.paragraph(note or "No shortlist table: comparison skipped.")
        return
    frame, stats = comparison
    report.paragraph(f"Replay policy: {stats['policy']}. Hosts compared: {stats['hosts_compared']} "
                     f"(shortlist hosts not replayed: {stats['shortlist_hosts_not_replayed']}). Spearman's rho, "
                     f"predicted_pairs vs pairs found: {stats['spearman_pairs']:.3f}; predicted_ratio vs "
                     f"parallel documents per fetch: {stats['spearman_ratio']:.3f} (nan: fewer than 3 hosts or "
                     "a constant side). The closer to 1, the more the model-only ranking can be trusted.")
    if not frame.empty:
        images["prediction.png"] = plots.prediction_scatter(frame, stats["policy"])
        report.image("prediction.png", "Predicted pairs vs pairs found by the replay")
        report.table(frame.head(MAX_HOST_ROWS))


def _hosts_section(report: Report, ok: pd.DataFrame) -> None:
    report.heading("Per host: area under the yield curve")
    hosts = ok.groupby("host").agg(n_docs=("n_docs", "first"), n_parallel_docs=("n_parallel_docs", "first"))
    auc = ok.pivot(index="host", columns="policy", values="auc")
    table = hosts.join(auc).sort_values("n_parallel_docs", ascending=False).reset_index()
    if len(table) > MAX_HOST_ROWS:
        report.paragraph(f"The {MAX_HOST_ROWS} hosts with the most parallel documents of {len(table)}; "
                         "all of them are in the replay_summary table.")
    report.table(table.head(MAX_HOST_ROWS))


def write_report(out_dir: str, report: Report, images: dict[str, bytes]) -> list[str]:
    """Write report.md, report.html and the PNGs under out_dir; returns the paths written."""
    written = []
    for name, data in images.items():
        path = storage.join(out_dir, name)
        write_bytes(path, data)
        written.append(path)
    for name, text in (("report.md", report.markdown()), ("report.html", report.html())):
        path = storage.join(out_dir, name)
        storage.write_text(path, text)
        written.append(path)
    return written
