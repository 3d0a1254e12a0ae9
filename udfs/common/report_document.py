"""A report as an ordered list of blocks (heading, paragraph, bullets, table, image, code), written as Markdown
and HTML with the same content: the demo's report.md and the replay report use it.

Tables are pandas frames; numbers are shown short (integers with thousands separators, floats to
3 decimals, missing as '–'), so a report never prints a raw float such as 0.38089384995783726.
"""
from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd

from parascout.udfs.common import storage

STYLE = ("<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
         "table{border-collapse:collapse;font-size:13px;margin:1em 0}"
         "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}"
         "td:first-child,th:first-child{text-align:left}img{max-width:100%}</style></head><body>")


class Report:
    """An ordered list of blocks rendered as Markdown and HTML."""

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

    def code(self, lines: list[str]) -> None:
        """Shell commands shown as they are typed."""
        self.blocks.append(("code", lines))

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
                lines += [markdown_table(content), ""]
            elif kind == "image":
                file_name, caption = content
                lines += [f"![{caption}]({file_name})", ""]
            elif kind == "code":
                lines += ["```bash", *content, "```", ""]
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
                parts.append(format_cells(content).to_html(index=False, escape=True, border=0))
            elif kind == "image":
                file_name, caption = content
                parts.append(f"<figure><img src='{html.escape(file_name)}' alt='{html.escape(caption)}'>"
                             f"<figcaption>{html.escape(caption)}</figcaption></figure>")
            elif kind == "code":
                parts.append("<pre><code>" + html.escape("\n".join(content)) + "</code></pre>")
        parts.append("</body></html>")
        return "\n".join(parts)

    def write(self, out_dir: str, name: str = "report", images: dict[str, bytes] | None = None) -> list[str]:
        """Write <name>.md, <name>.html and the PNGs under out_dir; returns the paths written."""
        written = []
        for file_name, data in (images or {}).items():
            path = storage.join(out_dir, file_name)
            with storage.open_output(path) as handle:
                handle.write(data)
            written.append(path)
        for file_name, text in ((f"{name}.md", self.markdown()), (f"{name}.html", self.html())):
            path = storage.join(out_dir, file_name)
            storage.write_text(path, text)
            written.append(path)
        return written


def cell(value) -> str:
    """A number as a short string: integers with thousands separators, floats to 3 decimals, missing as '–'."""
    if value is None or value is pd.NA or isinstance(value, (float, np.floating)) and math.isnan(value):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{value:.3f}"
    return str(value)


def markdown_cell(text: object) -> str:
    """Text safe inside a Markdown table cell: on one line, its pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def format_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell of a frame as `cell` writes it."""
    return frame.astype(object).apply(lambda column: column.map(cell)) if len(frame) else frame.astype(str)


#: a cell that reads as a number: 1,234 / 0.25 / 87% / – / 12.5 (reused)
NUMBER_CELL = re.compile(r"^(–|[-+]?[\d,]*\.?\d+%?)( \(.*\))?$")


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub Markdown table, columns of numbers (formatted or not) right-aligned."""
    shown = format_cells(frame)
    header = "| " + " | ".join(str(c) for c in shown.columns) + " |"
    numeric = [len(shown) > 0 and shown[c].map(lambda v: bool(NUMBER_CELL.match(str(v)))).all() for c in shown.columns]
    rule = "|" + "|".join("---:" if right else "---" for right in numeric) + "|"
    rows = ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in shown.itertuples(index=False)]
    return "\n".join([header, rule, *rows])
