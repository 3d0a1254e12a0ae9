"""A decoded HTML page -> the `docs` features and its paragraphs, in one pass over a Lexbor tree (selectolax).

`html_features(html, url)` walks the parsed tree once and returns the `docs` columns
(title, html_lang, text length, paragraph count, outlinks resolved and normalised with
a same-host flag, image file names, CLD2's page language, the STRAND linearisation
"[START:p]" / "[END:p]" / "[Chunk:123]"), the page's metadata (`<meta name="description">`, or og:description
when it has none, and the `<meta name="keywords">` list; bounded, `metadata_truncated` when cut) plus `page_paragraphs`: the page's blocks of
text (`p`, headings, list items, table cells, `br`-separated runs) with their type
('title', 'heading', 'list_item', 'text'), a CLD2 language each, a hash of the
normalised text, and a boilerplate flag. Boilerplate is marked, never dropped, by
justext-like rules: position (header/nav/footer/aside or a container whose class or
id says menu, footer, cookie...), link density, length with the neighbours' class
deciding short and medium blocks, cookie/copyright notices; a headline (a heading that
repeats <title>, or opens good text) is main text and so are the short lines between it
and its article (date, byline); the text under a headline that is all link is a teaser
of another page. Repetition across a site's pages needs the site's other pages:
udfs.fetch.near_duplicates marks it later.

Why one module: it is one pass over the Lexbor tree; the features, the paragraphs and the
boilerplate rules read the same node state, and splitting the walk would cost a second traversal per page.

What the pass uses from elsewhere: link and image-name resolution from udfs.common.urls, CLD2 from
udfs.common.language_id, the <meta> description and keywords from udfs.fetch.meta_tags. Pages the parser must not
see are refused before it (udfs.fetch.markup_guard, called by udfs.fetch.documents).

The walk and the paragraph step are written once, in udfs.fetch.page_walk; `make walk` compiles that module into
the optional udfs.html_walk extension, which html_features uses only when it is built for the running selectolax and
gives the same results as the Python module on udfs.fetch.compiled_walk's probes (WALK_ENGINE says which runs, and
why).
"""
from __future__ import annotations

import re

from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser

from parascout.udfs.common.language_id import cld2_detect, cld2_input
from parascout.udfs.common.urls import url_host
from parascout.udfs.fetch.compiled_walk import (
    PROBE_CLD2_PAGE,
    PROBE_CLD2_TEXTS,
    PROBE_KEY_TEXT,
    PROBE_PAGES,
    PROBE_PARAGRAPHS,
    load_extension,
    page_state,
)
from parascout.udfs.fetch.config import DEFAULT, ExtractionConfig
from parascout.udfs.fetch.meta_tags import page_metadata
from parascout.udfs.fetch.page_walk import (
    MAX_IMAGES,
    LinkBudget,
    Page,
    bound_links,
    page_paragraphs,
    paragraph_key_hashes,
    paragraph_keys,
    walk_page,
)

MAX_STRUCTURE_TOKENS = 10_000
MAX_TITLE_CHARS = 500
MAX_IMAGE_NAME_CHARS = 256

WHITESPACE = re.compile(r"\s+")
PARAGRAPH_TYPES = ("title", "heading", "list_item", "text")
#: Spark DDL of a paragraph (the `texts` contract) and of the text columns a fetch task adds to each record
PARAGRAPH_SCHEMA = "struct<text:string,type:string,lang:string,boilerplate:boolean,hash:string>"
TEXT_FIELDS_SCHEMA = (f"page_paragraphs array<{PARAGRAPH_SCHEMA}>, text_truncated boolean, description string, "
                      "keywords array<string>, metadata_truncated boolean")
#: the text fields of a record that has no page (a failed fetch, a WAT record)
EMPTY_TEXT_FIELDS = {"page_paragraphs": None, "text_truncated": None, "description": None, "keywords": None,
                     "metadata_truncated": None}


def paragraph_hash(text: str) -> str:
    """A 64-bit hex hash of a paragraph's whitespace-normalised text (case, punctuation and spacing ignored)."""
    return paragraph_key_hashes(" ".join(text.split()).casefold())[0]


def parse_tops(html: str) -> list:
    """The top-level nodes of a parsed page: <html> and the comments or doctype around it."""
    first = LexborHTMLParser(html, options=LexborDocumentOptions.WO_EVENTS).root
    while first is not None and first.prev is not None:
        first = first.prev  # a comment or doctype before <html>
    tops = []
    while first is not None:
        tops.append(first)
        first = first.next
    return tops


def compiled_extension() -> tuple[object | None, str]:
    """(the udfs.html_walk module, a description) when that optional extension (`make walk`: udfs.fetch.page_walk
    compiled) loads for the running selectolax (compiled_walk.load_extension) and agrees with the Python page_walk's
    walk_page, paragraph_keys, page_paragraphs and cld2_input on compiled_walk's probes; else (None, why not)."""
    html_walk, why = load_extension()
    if html_walk is None:
        return None, why
    try:
        texts = [PROBE_KEY_TEXT]
        for html, url in (*PROBE_PAGES, (PROBE_CLD2_PAGE, None)):
            python_page, compiled_page = Page(url), html_walk.Page(url)
            walk_page(parse_tops(html), python_page, 60)
            html_walk.walk_page(parse_tops(html), compiled_page, 60)
            if page_state(python_page) != page_state(compiled_page):
                return None, "udfs/html_walk disagrees with the Python walk on a probe page: rebuild it with `make walk`"
            texts.append("\n".join(block[0] for block in python_page.blocks).casefold())
        if any(html_walk.paragraph_keys(text) != paragraph_keys(text) for text in texts):
            return None, "udfs/html_walk's paragraph keys disagree with paragraph_keys: rebuild it with `make walk`"
        if any(html_walk.page_paragraphs(*case) != page_paragraphs(*case) for case in PROBE_PARAGRAPHS):
            return None, "udfs/html_walk's paragraphs disagree with page_paragraphs: rebuild it with `make walk`"
        if any(html_walk.cld2_input(text) != cld2_input(text) for text in PROBE_CLD2_TEXTS):
            return None, "udfs/html_walk's CLD2 input disagrees with cld2_input: rebuild it with `make walk`"
    except Exception as error:  # noqa: BLE001 - a broken build falls back, and says why
        return None, f"udfs/html_walk failed on a probe page ({error!r}): rebuild it with `make walk`"
    return html_walk, f"compiled (selectolax {html_walk.SELECTOLAX_VERSION}, Lexbor {html_walk.LEXBOR_VERSION})"


def html_features(html: str, url: str | None, config: ExtractionConfig = DEFAULT) -> dict:
    """The docs features of a decoded HTML page, and its text blocks (`page_paragraphs`, `text_truncated`), read
    by `config`'s rules (udfs.fetch.config)."""
    page = PAGE(url, config.max_label_words)
    WALK(parse_tops(html), page, config.max_text_chars)
    cld2_text, text_chars = page.text_input
    title = " ".join("".join(page.title_parts).split())[:MAX_TITLE_CHARS] or None  # str.split's spaces are re's \s
    host = url_host(url) if url else None
    links = dict(page.links)  # first occurrence order, one host per URL
    outlinks = list(links)
    structure = page.structure
    images, images_cut = bound_links(dict.fromkeys(page.images), LinkBudget(MAX_IMAGES, MAX_IMAGE_NAME_CHARS))
    lang, reliable, percent, single = cld2_detect(cld2_text)
    description, keywords, metadata_cut = page_metadata(page.metas)
    return {
        "status": "ok", "cld2_lang": lang, "cld2_reliable": reliable, "cld2_percent": percent,
        "html_lang": page.html_lang, "text_chars": text_chars, "paragraphs": page.block_count,
        "outlinks": outlinks, "outlinks_same_host": [link_host == host for link_host in links.values()],
        "outlink_cues": list(map(page.link_cues.get, outlinks)),
        "images": images, "structure": structure[:MAX_STRUCTURE_TOKENS] if len(structure) > MAX_STRUCTURE_TOKENS else structure,
        "outlinks_cut": page.link_budget.cut, "images_cut": images_cut,
        "title": title, "error": "structure_truncated" if len(structure) > MAX_STRUCTURE_TOKENS else None,
        "page_paragraphs": PAGE_PARAGRAPHS(page.blocks, title, lang, single, config), "text_truncated": page.text_truncated,
        "description": description, "keywords": keywords, "metadata_truncated": metadata_cut,
    }


#: the optional compiled walk and paragraph step (udfs.html_walk) when built and in agreement, and what runs;
#: html_features calls WALK and PAGE_PARAGRAPHS: the compiled functions, else page_walk's (the reference)
COMPILED, WALK_ENGINE = compiled_extension()
WALK, PAGE = (COMPILED.walk_page, COMPILED.Page) if COMPILED else (walk_page, Page)
PAGE_PARAGRAPHS = COMPILED.page_paragraphs if COMPILED else page_paragraphs
