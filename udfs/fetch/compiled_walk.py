"""The optional compiled udfs.fetch.page_walk (udfs.html_walk, built by `make walk`): whether it loads for the running
selectolax, and the probes it must agree on with page_walk run as plain Python.

html_text.compiled_extension compares a loaded build with the Python module on these probes at import (the walk, the
paragraph keys, the paragraph step and the CLD2 input: the C pieces of the build); html_features uses it only when
every probe gives the same results.
"""
from __future__ import annotations

import importlib
import os

import selectolax

from parascout.udfs.fetch.config import ExtractionConfig
from parascout.udfs.fetch.page_walk import PAGE_FIELDS


def page_state(page) -> tuple:
    """Everything a walk leaves in a Page (udfs.fetch.page_walk): what the compiled walk must reproduce exactly."""
    budget = page.link_budget
    return (*(getattr(page, name) for name in PAGE_FIELDS if name not in ("link_budget", "text_cues")),
            budget.kept, budget.chars, budget.cut)


#: pages exercising every rule of the walk: a compiled walk is used only when it leaves the same Page state
PROBE_PAGES = (
    (("<!doctype html><!-- c --><html lang='de'><head><title>T &amp; x</title><base href='/sub/'>"
     "<meta name='description' content=' A  page '><meta property='og:description' content='og'>"
     "<meta name='keywords' content='a, b;c'><link rel='alternate' hreflang='fr' href='/fr/'>"
     "<style>p{}</style><script>var x = '<p>';</script></head><body><header><a href='/'>Home</a></header>"
     "<nav class='menu'><ul><li><a href='/de/' hreflang='de'>Deutsch</a></li><li><a href='/en/' title='English'>"
     "<img src='/flags/en.png' alt='English'></a></li></ul></nav><div id='main'><h1>T &amp; x</h1>"
     "<p>Ein <b>langer</b> Absatz mit <a href='page?q=1#f'>einem Link</a> und Text.<br>Zweite Zeile</p>"
     "<div CLASS='Footer'>\u00a9 2024 Copyright</div><my-widget x:y='1' class='share'>custom</my-widget>"
     "<svg viewBox='0 0 1 1'><foreignObject>svg text</foreignObject></svg><iframe src='//other.org/f'></iframe>"
     "<table><tr><td class=''>cell</td><td id>x</td></tr></table><img data-src='lazy.jpg'>\u2003\u00a0"
     "<noscript>n</noscript><template><p>t</p></template></div></body></html><!-- after -->"),
     "https://example.com/de/index.html"),
    ("<p>no html element \udcff <a href='mailto:x@y'>mail</a><dl><dt>term<dd>definition", None),
    ("", "https://example.com/"),
)


#: texts a compiled paragraph_keys must split and key as the Python one does (word characters of several scripts,
#: digits that are not decimal, '_', combining marks, separators other than the newline)
PROBE_KEY_TEXT = "a_b--c\u0663\u00b2\u2167 x\n\u3000\u4e2d\u6587\u0300\u00a0\n\n \u0915\u093f\u200d\r\u2028z \u00bd"


#: page_paragraphs' arguments that exercise every rule (title, notice, link density, classes and their context,
#: dense scripts, one language or a language per block): a compiled page_paragraphs must give the same paragraphs
PROBE_PARAGRAPHS = (
    ([("Die Seite", "heading", 0, False), ("Am 1. Mai", "text", 0, False),
      ("Ein langer Absatz mit genug Text, um als guter Text zu gelten, und noch etwas mehr davon.", "text", 9, False),
      ("Alles Links hier", "heading", 16, False), ("Ein Anriss mit genug Text für einen guten Absatz, aber verlinkt",
                                                   "text", 0, False),
      ("\u00a9 2024 Copyright", "text", 0, False), ("Menü", "list_item", 4, True), ("kurz", "text", 0, False),
      ("mittellang, doch nicht ganz gut genug x", "text", 30, False), ("Überschrift", "heading", 0, False),
      ("Ein weiterer langer Absatz mit genug Text, um als guter Text zu gelten, Ende.", "text", 0, False),
      ("A_b \u00e9t\u00e9 \u4e2d", "text", 0, False)], " Die  Seite ", "deu", False),
    ([("\u4e2d\u6587\u6bb5\u843d" * 6, "text", 0, False), ("\u4e2d" * 10, "text", 0, False)], None, "zho", True),
    ([], "t", None, False),
    ([("Kopf", "heading", 0, True), ("Zelle eins", "text", 0, False), ("Zelle zwei", "text", 10, False),
      ("Zelle drei x", "text", 12, False), ("Zelle vier hier", "text", 0, False), ("Zelle fünf da", "text", 0, False),
      ("Menü", "list_item", 4, False), ("Ein langer Absatz mit genug Text, um als guter Text zu gelten, Ende.", "text",
                                         0, False)], "Kopf", "deu", True),
    ([("Kurzer Kopf", "heading", 0, False), ("Zwei Zeilen", "text", 2, False), ("Noch eine", "text", 0, False),
      ("\u00a9 2024 Copyright der Seite", "text", 0, False), ("Mittel, halb verlinkt hier", "text", 12, False),
      ("Ein Absatz, der mit diesen Regeln gut ist.", "text", 0, False)], None, "deu", False,
     ExtractionConfig(short_chars=10, good_chars=40, max_link_density=0.6, max_good_link_density=0.3,
                      max_notice_chars=10, min_short_run=2, min_lang_chars=8)),
)


#: texts a compiled cld2_input must give CLD2 as the Python one does (unsafe characters of each kind, whitespace only)
PROBE_CLD2_TEXTS = ("", " \t\n", "\x0b\x1c\x7f", "plain ASCII", "a\x00b\x1fc\x7fd\te\r\n", "caf\u00e9\x85\u00a0",
                    "\u4e2d\ud800\ufffe\uffff\u3000", "\U0001f600\x08", "\u2028\x9f")
#: a page whose text runs are those texts (the page's CLD2 input the walk writes)
PROBE_CLD2_PAGE = "".join(f"<p>{text}<i> {text}</i>{text}" for text in PROBE_CLD2_TEXTS)


def load_extension() -> tuple[object | None, str]:
    """(the udfs.html_walk module, "") when that optional extension is built and loads for the running selectolax;
    else (None, why not). PARASCOUT_HTML_WALK=python keeps the Python functions."""
    if os.environ.get("PARASCOUT_HTML_WALK", "").lower() == "python":
        return None, "PARASCOUT_HTML_WALK=python"
    try:
        html_walk = importlib.import_module("parascout.udfs.html_walk")
    except Exception as error:  # noqa: BLE001 - ImportError when not built; another ABI fails in other ways
        return None, f"udfs/html_walk is not built or does not load ({error}): `make walk` builds it"
    if html_walk.SELECTOLAX_VERSION != selectolax.__version__:
        return None, (f"udfs/html_walk was built for selectolax {html_walk.SELECTOLAX_VERSION}, "
                      f"selectolax {selectolax.__version__} runs: rebuild it with `make walk`")
    return html_walk, ""
