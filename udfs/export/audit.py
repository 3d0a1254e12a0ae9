"""The audit sheet, as pure functions: a seeded sample of exported pairs per site, the HTML page a reviewer judges
them on, and the precision their judgements give back (pandas in, pandas or text out).

A reviewer opens the page, marks each document pair and sentence pair right, partial or wrong (buttons or keys),
and downloads the judgements as a TSV file (JUDGEMENT_COLUMNS). Read back, they give per site and language pair
the share judged right with a 95% Wilson score interval. Every text on the page comes from the web: it is escaped,
and the page's Content-Security-Policy runs no script but its own.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass

import pandas as pd

from parascout.udfs.common.langs import load_languages
from parascout.udfs.common.report_document import markdown_cell, page_text

KINDS = ("document", "sentence")
JUDGEMENTS = ("right", "partial", "wrong")
#: the keys that judge the selected item on the page (j / k move, n jumps to the next unjudged, u clears)
JUDGEMENT_KEYS = {"right": ("1", "r"), "wrong": ("2", "w"), "partial": ("3", "p")}
#: the columns of the judgements file the page downloads (TSV with this header)
JUDGEMENT_COLUMNS = ("item_id", "kind", "site", "lang_pair", "src_url", "trg_url", "judgement", "judged_at")
#: the columns of the sample's item list (audit/items-<pair>.tsv), which judgements are checked against
ITEM_COLUMNS = ("item_id", "kind", "lang_pair", "site", "src_url", "trg_url", "bead", "site_exported")
#: judgement lines that cannot be counted (bad) and lines left out on purpose (filtered)
BAD_REASONS = frozenset({"malformed_line", "unknown_item", "unknown_judgement"})
FILTERED_REASONS = frozenset({"not_judged", "superseded"})
Z_95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval
ALL_SITES = "(all sites)"
PRECISION_COLUMNS = ("kind", "lang_pair", "site", "exported", "sampled", "judged", "right", "partial", "wrong",
                     "precision", "precision_low", "precision_high", "precision_with_partial",
                     "precision_with_partial_low", "precision_with_partial_high", "weighted_precision")
_WEB_URL = re.compile(r"https?://[^\s\x00-\x1f\x7f]+", re.IGNORECASE)


# ---- the sample ------------------------------------------------------------------------------------------------
def item_id(kind: str, lang_pair: str, src_url: str, trg_url: str, bead: int | None = None) -> str:
    """A stable id of a document pair (kind, pair, URLs) or a sentence pair (and its bead): the same pair has
    the same id in every sample, so a page's judgements survive a new sample that draws it again."""
    key = "\t".join([kind, lang_pair, src_url, trg_url, "" if bead is None else str(int(bead))])
    return f"{kind[0]}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:16]}"


def sample_key(identifier: str, seed: int) -> str:
    """The seeded order items are drawn in: a hash of seed and id, so the draw does not depend on row order."""
    return hashlib.sha256(f"{seed}\t{identifier}".encode()).hexdigest()


def with_item_ids(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Rows of exported pairs (lang_pair, src_url, trg_url, and bead for sentences) with their item_id and kind."""
    beads = frame["bead"] if kind == "sentence" else [None] * len(frame)
    ids = [item_id(kind, pair, src, trg, bead)
           for pair, src, trg, bead in zip(frame["lang_pair"], frame["src_url"], frame["trg_url"], beads)]
    return frame.assign(item_id=ids, kind=kind)


def sample_per_site(frame: pd.DataFrame, per_site: int, seed: int) -> pd.DataFrame:
    """The `per_site` items of each language pair and site with the smallest seeded keys. The draw of a union
    equals the draw of the parts' draws, so Spark takes it per batch, then per site."""
    if frame.empty:
        return frame
    keys = [sample_key(identifier, seed) for identifier in frame["item_id"]]
    ordered = frame.assign(_key=keys).sort_values(["lang_pair", "site", "_key"], kind="stable")
    return ordered.groupby(["lang_pair", "site"], sort=False, dropna=False).head(per_site).drop(columns="_key")


def sample_batches(batches: Iterator[pd.DataFrame], kind: str, per_site: int, seed: int) -> Iterator[pd.DataFrame]:
    """mapInPandas: each batch's exported pairs with their ids, reduced to its own draw per site."""
    for batch in batches:
        yield sample_per_site(with_item_ids(batch, kind), per_site, seed)


def site_draw(per_site: int, seed: int) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """applyInPandas: the draw of one language pair and site, from its batches' draws."""

    def draw(frame: pd.DataFrame) -> pd.DataFrame:
        return sample_per_site(frame, per_site, seed)

    return draw


def audited_sites(site_counts: pd.DataFrame, max_sites: int) -> pd.DataFrame:
    """(lang_pair, site) of the sites audited: per pair the `max_sites` with most exported sentence pairs, then
    document pairs (0: every site). `site_counts`: lang_pair, site, and the exported pairs of each kind (KINDS)."""
    ordered = site_counts.sort_values(["lang_pair", "sentence", "document", "site"],
                                      ascending=[True, False, False, True])
    chosen = ordered.groupby("lang_pair", sort=False).head(max_sites) if max_sites else ordered
    return chosen[["lang_pair", "site"]].reset_index(drop=True)


def items_tsv(items: pd.DataFrame) -> str:
    """The sample's item list (ITEM_COLUMNS), what judgements read back are checked against."""
    rows = items.reindex(columns=list(ITEM_COLUMNS)).assign(bead=items["bead"].astype("Int64"))
    return rows.to_csv(sep="\t", index=False)


def read_items(text: str) -> pd.DataFrame:
    """An item list written by items_tsv."""
    items = pd.read_csv(io.StringIO(text), sep="\t", dtype=str, keep_default_na=False)
    return items.assign(site_exported=pd.to_numeric(items["site_exported"]).astype("int64"))


# ---- the page --------------------------------------------------------------------------------------------------
def url_link(url) -> str:
    """A URL as a link that opens in a new tab without telling the site where from; anything but a plain http(s)
    URL (javascript:, data:, whitespace inside) is shown as text, never linked."""
    shown = page_text(url)
    if isinstance(url, str) and _WEB_URL.fullmatch(url):
        return f'<a href="{shown}" target="_blank" rel="noopener noreferrer nofollow">{shown}</a>'
    return f"<span>{shown}</span>"


def language_name(code: str) -> tuple[str, str]:
    """(English name, the code for HTML's lang attribute) of an ISO 639-3 code."""
    language = load_languages().get(code)
    return (language.name, language.iso639_1 or code) if language else (code, code)


def render_side(item: Mapping, side: str) -> str:
    """One side of an item: its language, its URL as a link, and its text (text direction left to the browser)."""
    name, lang = language_name(str(item[f"{side}_lang"]))
    return (f'<div class="side"><div class="url">{page_text(name)}: {url_link(item[f"{side}_url"])}</div>'
            f'<div class="text" dir="auto" lang="{page_text(lang)}">{page_text(item[f"{side}_text"])}</div></div>')


def render_item(number: int, total: int, item: Mapping) -> str:
    """One item: its number, kind, site, judgement buttons, and both sides with their URLs."""
    data = {"id": item["item_id"], "kind": item["kind"], "site": item["site"], "pair": item["lang_pair"],
            "src-url": item["src_url"], "trg-url": item["trg_url"]}
    attributes = " ".join(f'data-{name}="{page_text(value)}"' for name, value in data.items())
    buttons = "".join(f'<button type="button" data-judgement="{judgement}" aria-pressed="false">{judgement} '
                      f'<kbd>{"</kbd>/<kbd>".join(keys)}</kbd></button>'
                      for judgement, keys in JUDGEMENT_KEYS.items())
    detail = (f"{int(item['sentence_pairs'])} sentence pairs kept" if item["kind"] == "document"
              else f"alignment score {float(item['score']):.2f}")
    return (f'<section class="item {item["kind"]}" {attributes}><div class="meta"><span>{number} of {total}</span>'
            f'<span>{item["kind"]} pair</span><span class="site">{page_text(item["site"])}</span><span>{detail}</span>'
            f'<span class="buttons">{buttons}</span><span class="mark"></span></div><div class="pair">'
            f'{render_side(item, "src")}{render_side(item, "trg")}</div></section>')


def render_page(items: pd.DataFrame, lang_pair: str, facts: str) -> str:
    """The self-contained audit page of one language pair (no external CSS, script or font): document pairs,
    then sentence pairs, each with judgement buttons; progress, keys and judgements kept in localStorage."""
    records = items.to_dict("records")
    sections = []
    number = 0
    for kind in KINDS:
        chosen = [record for record in records if record["kind"] == kind]
        sections.append(f"<h2>{kind.capitalize()} pairs ({len(chosen)})</h2>")
        for record in chosen:
            number += 1
            sections.append(render_item(number, len(records), record))
    script = PAGE_SCRIPT.replace("__COLUMNS__", json.dumps(list(JUDGEMENT_COLUMNS))).replace(
        "__KEYS__", json.dumps({key: judgement for judgement, keys in JUDGEMENT_KEYS.items() for key in keys}))
    script_hash = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    policy = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'"
    keys = " ".join(f"<kbd>{'</kbd>/<kbd>'.join(k)}</kbd> {judgement}" for judgement, k in JUDGEMENT_KEYS.items())
    label = page_text(lang_pair)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
            f'<meta name="referrer" content="no-referrer">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>parascout audit: {label}</title>\n<style>{PAGE_STYLE}</style>\n</head>\n"
            f'<body data-audit="{label}" data-pair="{label}">\n<header class="bar">'
            f"<strong>parascout audit: {label}</strong>"
            f'<span id="progress" role="status">0 of {number} judged</span>'
            '<button type="button" id="next-unjudged">next unjudged <kbd>n</kbd></button>'
            '<button type="button" id="download">download judgements (TSV)</button></header>\n<main>\n'
            f'<p class="help">{page_text(facts)}<br>Judge each pair: {keys}; <kbd>j</kbd>/<kbd>k</kbd> next / '
            "previous, <kbd>u</kbd> clears. Right: a faithful translation; partial: partly translated, or one side "
            "holds more; wrong: not a translation, wrong language, or not text. Judgements stay in this browser "
            "(localStorage); download them to keep them and read them back with <code>parascout audit --root ROOT "
            "--judgements FILE</code>.</p>\n"
            + "\n".join(sections) + f"\n</main>\n<script>{script}</script>\n</body>\n</html>\n")


PAGE_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;background:#f4f4f2}
.bar{position:sticky;top:0;z-index:1;display:flex;flex-wrap:wrap;gap:1em;align-items:center;padding:.5em 1em;
background:#fff;border-bottom:1px solid #ccc}
main{padding:0 1em 4em}
.help{color:#444}
.item{background:#fff;border:1px solid #ddd;border-left:6px solid #ddd;border-radius:4px;margin:.6em 0;
padding:.5em .8em}
.item{scroll-margin-top:4em}
.item.current{outline:3px solid #4a7bd0}
.item[data-judgement=right]{border-left-color:#2e8b57}
.item[data-judgement=partial]{border-left-color:#d4a017}
.item[data-judgement=wrong]{border-left-color:#c0392b}
.meta{display:flex;flex-wrap:wrap;gap:.8em;align-items:center;font-size:.9em;color:#555}
.mark{font-weight:bold;text-transform:uppercase}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}
.side{min-width:0}
.url{font-size:.85em;overflow-wrap:anywhere;color:#555}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3em 0}
.document .text{max-height:22em;overflow:auto;border:1px solid #eee;padding:.4em;background:#fafafa}
button{font:inherit;padding:.15em .6em;cursor:pointer}
button[aria-pressed=true]{font-weight:bold;background:#333;color:#fff}
kbd{border:1px solid #bbb;border-radius:3px;padding:0 .3em;font-size:.85em;background:#f3f3f3;color:#333}
"""

PAGE_SCRIPT = """
(() => {
  "use strict";
  const COLUMNS = __COLUMNS__;
  const KEYS = __KEYS__;
  const body = document.body;
  const storeKey = "parascout-audit:" + body.dataset.audit;
  const items = Array.from(document.querySelectorAll("section.item"));
  const progress = document.getElementById("progress");
  let judged = {};
  let current = 0;
  try {
    judged = JSON.parse(localStorage.getItem(storeKey) || "{}") || {};
  } catch (error) {
    judged = {};
  }

  function save() {
    try {
      localStorage.setItem(storeKey, JSON.stringify(judged));
    } catch (error) {
      progress.textContent += " (not kept in this browser: " + error + "; download the judgements)";
    }
  }

  function show(item) {
    const entry = judged[item.dataset.id];
    const judgement = entry ? entry.judgement : "";
    item.dataset.judgement = judgement;
    item.querySelector(".mark").textContent = judgement;
    item.querySelectorAll("button[data-judgement]").forEach((button) => {
      button.setAttribute("aria-pressed", String(button.dataset.judgement === judgement));
    });
  }

  function count() {
    const counts = {right: 0, partial: 0, wrong: 0};
    let done = 0;
    items.forEach((item) => {
      const entry = judged[item.dataset.id];
      if (entry) {
        done += 1;
        counts[entry.judgement] = (counts[entry.judgement] || 0) + 1;
      }
    });
    progress.textContent = done + " of " + items.length + " judged (right " + counts.right + ", partial " +
      counts.partial + ", wrong " + counts.wrong + ")";
  }

  function select(index) {
    if (!items.length) {
      return;
    }
    items[current].classList.remove("current");
    current = Math.max(0, Math.min(items.length - 1, index));
    items[current].classList.add("current");
    items[current].scrollIntoView({block: "nearest"});
  }

  function judge(index, judgement) {
    const item = items[index];
    if (!item) {
      return;
    }
    if (judgement) {
      judged[item.dataset.id] = {judgement: judgement, judged_at: new Date().toISOString()};
    } else {
      delete judged[item.dataset.id];
    }
    save();
    show(item);
    count();
  }

  function nextUnjudged() {
    for (let step = 1; step <= items.length; step += 1) {
      const index = (current + step) % items.length;
      if (!judged[items[index].dataset.id]) {
        select(index);
        return;
      }
    }
  }

  function cell(value) {
    return String(value === undefined || value === null ? "" : value).replace(/[\\t\\r\\n]+/g, " ");
  }

  function judgementsTsv() {
    const lines = [COLUMNS.join("\\t")];
    items.forEach((item) => {
      const entry = judged[item.dataset.id];
      if (!entry) {
        return;
      }
      const row = {item_id: item.dataset.id, kind: item.dataset.kind, site: item.dataset.site,
        lang_pair: item.dataset.pair, src_url: item.dataset.srcUrl, trg_url: item.dataset.trgUrl,
        judgement: entry.judgement, judged_at: entry.judged_at};
      lines.push(COLUMNS.map((column) => cell(row[column])).join("\\t"));
    });
    return lines.join("\\n") + "\\n";
  }

  function download() {
    const blob = new Blob([judgementsTsv()], {type: "text/tab-separated-values;charset=utf-8"});
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "judgements-" + body.dataset.pair + ".tsv";
    body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  }

  document.addEventListener("keydown", (event) => {
    const tag = (event.target && event.target.tagName) || "";
    if (event.ctrlKey || event.metaKey || event.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(tag)) {
      return;
    }
    const key = String(event.key || "").toLowerCase();
    if (key === "j") {
      select(current + 1);
    } else if (key === "k") {
      select(current - 1);
    } else if (key === "n") {
      nextUnjudged();
    } else if (key === "u" || key === "0") {
      judge(current, null);
    } else if (Object.prototype.hasOwnProperty.call(KEYS, key)) {
      judge(current, KEYS[key]);
      select(current + 1);
    } else {
      return;
    }
    event.preventDefault();
  });

  items.forEach((item, index) => {
    item.addEventListener("click", () => select(index));
    item.querySelectorAll("button[data-judgement]").forEach((button) => {
      button.addEventListener("click", (event) => {
        event.stopPropagation();
        select(index);
        judge(index, button.dataset.judgement);
      });
    });
    show(item);
  });
  document.getElementById("download").addEventListener("click", download);
  document.getElementById("next-unjudged").addEventListener("click", nextUnjudged);
  count();
  select(0);
})();
"""


# ---- judgements read back --------------------------------------------------------------------------------------
@dataclass
class JudgementsRead:
    """What a judgements file holds: the counted judgements (item_id, judgement; the last of an item's lines),
    every line's outcome ("ok" or a reason) and the first skipped lines, in words."""

    judged: pd.DataFrame
    counts: dict[str, int]
    problems: list[str]


def judgement_columns(first_line: str, name: str) -> list[str]:
    """The columns a judgements file's header names; ValueError when it is not one."""
    columns = [column.strip().lower() for column in first_line.lstrip("\ufeff").split("\t")]
    if not {"item_id", "judgement"} <= set(columns):
        raise ValueError(f"{name}: not a judgements file: its first line must name the tab-separated columns "
                         f"{', '.join(JUDGEMENT_COLUMNS)} (as the audit page downloads them)")
    return columns


def line_outcome(fields: list[str], columns: list[str], known_ids: Collection[str]) -> tuple[str, str]:
    """(outcome, judgement) of one judgements line: outcome "ok" or why the line is not counted."""
    if len(fields) > len(columns):
        return "malformed_line", ""
    record = dict(zip(columns, [*fields, *[""] * (len(columns) - len(fields))]))  # spreadsheets drop empty cells
    judgement = record["judgement"].strip().lower()
    if not judgement:
        return "not_judged", ""
    if judgement not in JUDGEMENTS:
        return "unknown_judgement", judgement
    return ("ok" if record["item_id"].strip() in known_ids else "unknown_item"), judgement


def read_judgements(files: Mapping[str, str], known_ids: Collection[str], examples: int = 10) -> JudgementsRead:
    """Judgements files (name -> text) read in order; every non-blank line after a header is counted once: ok,
    superseded (a later line judges the same item), or skipped for a reason (BAD_REASONS, FILTERED_REASONS)."""
    outcomes: Counter = Counter()
    rows, problems = [], []
    for name, text in files.items():
        lines = text.splitlines()
        columns = judgement_columns(lines[0] if lines else "", name)
        for number, line in enumerate(lines[1:], 2):
            if not line.strip():
                continue
            fields = line.split("\t")
            outcome, judgement = line_outcome(fields, columns, known_ids)
            if outcome == "ok":
                rows.append({"item_id": fields[columns.index("item_id")].strip(), "judgement": judgement})
            else:
                outcomes[outcome] += 1
                if len(problems) < examples:
                    problems.append(f"{name}:{number}: {outcome.replace('_', ' ')}: {line[:200]!r}")
    judged = pd.DataFrame(rows, columns=["item_id", "judgement"])
    latest = judged.drop_duplicates("item_id", keep="last").reset_index(drop=True)
    outcomes["superseded"] += len(judged) - len(latest)
    outcomes["ok"] = len(latest)
    return JudgementsRead(latest, {outcome: count for outcome, count in outcomes.items() if count or outcome == "ok"},
                          problems)


# ---- precision -------------------------------------------------------------------------------------------------
def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion: it stays inside [0, 1] and keeps its coverage at the small
    counts and extreme shares of an audit, where p ± z·sqrt(p(1-p)/n) does not. (nan, nan) without trials."""
    if trials <= 0:
        return math.nan, math.nan
    share = successes / trials
    spread = z * z / trials
    centre = (share + spread / 2) / (1 + spread)
    half = z * math.sqrt(share * (1 - share) / trials + spread / (4 * trials)) / (1 + spread)
    return max(0.0, centre - half), min(1.0, centre + half)


def precision_row(kind: str, lang_pair: str, site: str, group: pd.DataFrame, z: float) -> dict:
    """One row of the precision table: the counts of `group` (items, their judgement or NaN) and both precisions."""
    counts = group["judgement"].value_counts()
    right, partial, wrong = (int(counts.get(judgement, 0)) for judgement in JUDGEMENTS)
    judged = right + partial + wrong
    low, high = wilson_interval(right, judged, z)
    low_with_partial, high_with_partial = wilson_interval(right + partial, judged, z)
    return {"kind": kind, "lang_pair": lang_pair, "site": site,
            "exported": int(group.drop_duplicates("site")["site_exported"].sum()), "sampled": len(group),
            "judged": judged, "right": right, "partial": partial, "wrong": wrong,
            "precision": right / judged if judged else math.nan, "precision_low": low, "precision_high": high,
            "precision_with_partial": (right + partial) / judged if judged else math.nan,
            "precision_with_partial_low": low_with_partial, "precision_with_partial_high": high_with_partial,
            "weighted_precision": math.nan}


def weighted_precision(group: pd.DataFrame) -> float:
    """The share judged right with each judged site weighted by the pairs it exported (the sample gives every
    site the same number of items, so the pooled share weighs a small site as much as a large one)."""
    judged = group[group["judgement"].notna()]
    by_site = judged.groupby("site").agg(right=("judgement", lambda values: (values == "right").mean()),
                                         exported=("site_exported", "first"))
    total = by_site["exported"].sum()
    return float((by_site["right"] * by_site["exported"]).sum() / total) if total else math.nan


def precision_table(items: pd.DataFrame, judged: pd.DataFrame, z: float = Z_95) -> pd.DataFrame:
    """PRECISION_COLUMNS per kind, language pair and site, and over all sites (first), for every kind and pair
    with a judgement; a sampled site without one has its row with nothing judged."""
    merged = items.merge(judged, on="item_id", how="left")
    rows = []
    for (kind, lang_pair), group in merged.groupby(["kind", "lang_pair"], sort=True):
        if group["judgement"].notna().any():
            rows.append({**precision_row(kind, lang_pair, ALL_SITES, group, z),
                         "weighted_precision": weighted_precision(group)})
            rows += [precision_row(kind, lang_pair, site, site_group, z)
                     for site, site_group in group.groupby("site", sort=True)]
    return pd.DataFrame(rows, columns=list(PRECISION_COLUMNS))


def precision_metrics(table: pd.DataFrame) -> dict:
    """The precision table as {lang_pair: {kind: {site: {column: value}}}} for the job report (NaN as None)."""
    metrics: dict = {}
    for row in table.to_dict("records"):
        values = {column: _plain(row[column]) for column in PRECISION_COLUMNS[3:]}
        metrics.setdefault(row["lang_pair"], {}).setdefault(row["kind"], {})[row["site"]] = values
    return metrics


def _plain(value):
    """A table cell as JSON takes it: NaN as None, numpy numbers as Python's."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def _share(value: float, low: float, high: float) -> str:
    return "–" if math.isnan(value) else f"{value:.2f} [{low:.2f}, {high:.2f}]"


def precision_markdown(table: pd.DataFrame, counts: Mapping[str, int], problems: list[str]) -> str:
    """precision.md: what was read, then per language pair and kind the table of sites."""
    skipped = ", ".join(f"{reason} {count}" for reason, count in sorted(counts.items()) if reason != "ok")
    read = f"Judgement lines: {sum(counts.values())} read, {counts.get('ok', 0)} counted"
    lines = ["# Audit precision", "", f"{read}; not counted: {skipped}." if skipped else f"{read}.", ""]
    lines += [f"- {markdown_cell(problem)}" for problem in problems] + ([""] if problems else [])
    lines += [PRECISION_LEGEND, ""]
    for (lang_pair, kind), group in table.groupby(["lang_pair", "kind"], sort=True):
        lines += [f"## {lang_pair}: {kind} pairs", "",
                  "| site | exported | sampled | judged | right | partial | wrong | precision | with partial |",
                  "|---|---|---|---|---|---|---|---|---|"]
        lines += [precision_line(row) for row in group.to_dict("records")]
        weighted = group["weighted_precision"].iloc[0]
        if not math.isnan(weighted):
            lines += ["", f"Weighted by each site's exported pairs: {weighted:.2f}."]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


PRECISION_LEGEND = ("Precision = right / judged; with partial = (right + partial) / judged; in brackets the 95% Wilson "
                    "score interval. The all-sites row pools the sample (every site sampled alike); weighted: each "
                    "site's share right weighted by the pairs it exported.")


def precision_line(row: Mapping) -> str:
    """One site's row of a precision.md table."""
    strict = _share(row["precision"], row["precision_low"], row["precision_high"])
    lenient = _share(row["precision_with_partial"], row["precision_with_partial_low"],
                     row["precision_with_partial_high"])
    counts = " | ".join(str(row[column]) for column in ("exported", "sampled", "judged", "right", "partial", "wrong"))
    return f"| {markdown_cell(row['site'])} | {counts} | {strict} | {lenient} |"


def precision_tsv(table: pd.DataFrame) -> str:
    return table.to_csv(sep="\t", index=False, float_format="%.4f")
