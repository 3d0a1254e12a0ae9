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

#: characters HTML forbids in text (C0/C1 controls but tab and line breaks, surrogates, non-characters)
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]")
#: bidirectional controls (a character-class body): in a line read as plain text they reorder what follows them
BIDI_CONTROLS = "\u200e\u200f\u202a-\u202e\u2066-\u2069"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")
#: what Markdown reads as markup inside a line that page text could use: links and images, raw HTML and autolinks,
#: entities, code spans, escapes, table cells (emphasis is left as it is: it opens and runs nothing)
_MARKDOWN_MARKUP = re.compile(r"([\\`\[\]<>&|])")

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
        parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{page_text(self.title)}</title>",
                 STYLE,
                 f"<h1>{page_text(self.title)}</h1>"]
        for kind, content in self.blocks:
            if kind == "heading":
                parts.append(f"<h2>{page_text(content)}</h2>")
            elif kind == "paragraph":
                parts.append(f"<p>{page_text(content)}</p>")
            elif kind == "bullets":
                parts.append("<ul>" + "".join(f"<li>{page_text(item)}</li>" for item in content) + "</ul>")
            elif kind == "table":
                shown = format_cells(content).map(page_text).rename(columns=page_text)
                parts.append(shown.to_html(index=False, escape=False, border=0))
            elif kind == "image":
                file_name, caption = content
                parts.append(f"<figure><img src='{page_text(file_name)}' alt='{page_text(caption)}'>"
                             f"<figcaption>{page_text(caption)}</figcaption></figure>")
            elif kind == "code":
                parts.append("<pre><code>" + page_text("\n".join(content)) + "</code></pre>")
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


def markdown_cell(text: object, code: bool = False) -> str:
    """Text safe inside a Markdown table cell or list item: on one line, its pipes escaped; as text (not inside a
    code span, `code`), also without characters HTML forbids or bidi controls (shown as U+FFFD) and with Markdown's
    markup escaped, so page text shows as itself: it opens no link and adds no HTML."""
    line = " ".join(str(text).split())
    if code:
        return line.replace("|", "\\|")
    return _MARKDOWN_MARKUP.sub(r"\\\1", _BIDI.sub("\ufffd", FORBIDDEN.sub("\ufffd", line)))


def page_text(value) -> str:
    """Text, from the web or not, safe in HTML text and attribute values: escaped (quotes too), characters HTML
    forbids shown as U+FFFD; None and NaN are empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(FORBIDDEN.sub("\ufffd", str(value)), quote=True)


def format_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell of a frame as `cell` writes it."""
    return frame.astype(object).apply(lambda column: column.map(cell)) if len(frame) else frame.astype(str)


#: a cell that reads as a number: 1,234 / 0.25 / 87% / – / 12.5 (reused)
NUMBER_CELL = re.compile(r"^(–|[-+]?[\d,]*\.?\d+%?)( \(.*\))?$")


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub Markdown table, columns of numbers (formatted or not) right-aligned."""
    shown = format_cells(frame)
    header = "| " + " | ".join(markdown_cell(c, code=True) for c in shown.columns) + " |"
    numeric = [len(shown) > 0 and shown[c].map(lambda v: bool(NUMBER_CELL.match(str(v)))).all() for c in shown.columns]
    rule = "|" + "|".join("---:" if right else "---" for right in numeric) + "|"
    rows = ["| " + " | ".join(markdown_cell(v) for v in row) + " |" for row in shown.itertuples(index=False)]
    return "\n".join([header, rule, *rows])
