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

walk_page, paragraph_keys, page_paragraphs and language_id.cld2_input are the reference; `make walk` compiles a twin
of each (native/html_walk.pyx, the optional udfs.html_walk extension) that html_features uses only when it is built
for the running selectolax and gives the same results on udfs.fetch.compiled_walk's probes (WALK_ENGINE says which
runs, and why).
"""
from __future__ import annotations

import functools
import re
from hashlib import blake2b
from urllib.parse import urljoin

from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser

from parascout.udfs.common.language_id import cld2_detect, cld2_input, page_cld2_input
from parascout.udfs.common.urls import _image_file_name, _resolve_link, image_file_name, resolve_link, url_host
from parascout.udfs.fetch.compiled_walk import (
    PROBE_CLD2_PAGE,
    PROBE_CLD2_TEXTS,
    PROBE_KEY_TEXT,
    PROBE_PAGES,
    PROBE_PARAGRAPHS,
    load_extension,
)
from parascout.udfs.fetch.language_cues import code_language, link_cue
from parascout.udfs.fetch.meta_tags import METADATA_NAMES, page_metadata
from parascout.udfs.fetch.warc_record import MAX_IMAGES, MAX_OUTLINK_CHARS, LinkBudget, bound_links

MAX_STRUCTURE_TOKENS = 10_000
MAX_TITLE_CHARS = 500
#: anchor text read for a language cue (a switcher label is short; longer text names no language anyway)
MAX_CUE_TEXT_CHARS = 200
MAX_IMAGE_NAME_CHARS = 256
#: paragraphs kept per page stop once their text passes this many characters (text_truncated)
MAX_TEXT_CHARS = 200_000

SKIPPED_CONTENT_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "title"})
VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                       "param", "source", "track", "wbr"})
BLOCK_TAGS = frozenset({"p", "div", "li", "ul", "ol", "dl", "dd", "dt", "h1", "h2", "h3", "h4", "h5", "h6",
                        "td", "th", "tr", "table", "section", "article", "header", "footer", "nav", "aside",
                        "blockquote", "pre", "br", "form", "main", "figure", "figcaption", "body", "caption"})
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
LIST_ITEM_TAGS = frozenset({"li", "dt", "dd"})
LINK_ATTRIBUTES = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}
#: elements whose text is page furniture wherever they appear
BOILERPLATE_TAGS = frozenset({"header", "footer", "nav", "aside", "form"})
#: containers whose class or id is read for a boilerplate hint (others are not, to keep the walk fast)
HINTED_TAGS = frozenset({"div", "section", "ul", "ol", "table", "td"})
BOILERPLATE_HINT = re.compile(r"(?:^|[\W_])(?:nav|navbar|menu|footer|header|sidebar|side-bar|breadcrumbs?|cookies?|"
                              r"consent|gdpr|banner|share|social|related|widget|masthead|topbar|subnav|pager|"
                              r"pagination|copyright|skip-link|toolbar|login|bottom|legal|disclaimer|imprint)(?:$|[\W_])", re.IGNORECASE)
#: what a cookie/copyright notice says, searched in case-folded text (str.find per phrase: ~2x faster than
#: one regex alternation over the page)
NOTICE_PHRASES = ("cookie", "gdpr", "\u00a9", "copyright", "all rights reserved", "privacy policy", "terms of use",
                  "terms of service", "datenschutz", "impressum", "alle rechte vorbehalten",
                  "tous droits r\u00e9serv\u00e9s", "todos los derechos reservados", "版权所有", "隐私")
#: justext's length classes, in characters (CJK and Thai pages count each character as three)
SHORT_CHARS, GOOD_CHARS = 25, 70
#: above this share of characters inside links a block is a link list; a good block has at most the second
#: (higher than justext's 0.2: encyclopaedia-style prose links many of its words)
MAX_LINK_DENSITY, MAX_GOOD_LINK_DENSITY = 0.75, 0.5
#: a block holding a cookie/copyright notice phrase is boilerplate below this length (weighted like SHORT_CHARS)
MAX_NOTICE_CHARS = 400
#: this many short blocks in a row, together GOOD_CHARS or longer and at most MAX_LINK_DENSITY link text, are
#: a table's cells or a list's items (a menu's are mostly links): they read as one medium block, so the text around
#: them decides
MIN_SHORT_RUN = 3
DENSE_SCRIPT_LANGS = frozenset({"zho", "jpn", "kor", "tha", "yue", "lzh"})
WHITESPACE = re.compile(r"\s+")
#: a run of punctuation, spaces or underscores (a paragraph key's word break); newlines separate texts
KEY_BREAKS = re.compile(r"[^\w\n]+")
#: blocks shorter than this get no language of their own (CLD2 cannot tell)
MIN_LANG_CHARS = 20
PARAGRAPH_TYPES = ("title", "heading", "list_item", "text")
#: Spark DDL of a paragraph (the `texts` contract) and of the text columns a fetch task adds to each record
PARAGRAPH_SCHEMA = "struct<text:string,type:string,lang:string,boilerplate:boolean,hash:string>"
TEXT_FIELDS_SCHEMA = (f"page_paragraphs array<{PARAGRAPH_SCHEMA}>, text_truncated boolean, description string, "
                      "keywords array<string>, metadata_truncated boolean")
#: the text fields of a record that has no page (a failed fetch, a WAT record)
EMPTY_TEXT_FIELDS = {"page_paragraphs": None, "text_truncated": None, "description": None, "keywords": None,
                     "metadata_truncated": None}
ATTRIBUTE_TAGS = frozenset({*LINK_ATTRIBUTES, "img", "link", "base", "html", "meta"})
START_TOKENS = {tag: f"[START:{tag}]" for tag in (*BLOCK_TAGS, "a", "span", "img", "b", "i", "strong", "em", "script")}
END_TOKENS = {tag: f"[END:{tag}]" for tag in START_TOKENS}


def paragraph_hash(text: str) -> str:
    """A 64-bit hex hash of a paragraph's whitespace-normalised text (case, punctuation and spacing ignored)."""
    key = paragraph_keys(" ".join(text.split()).casefold())[0]
    return blake2b(key.encode("utf-8", "ignore"), digest_size=8).hexdigest()


# flags of an element's tag: one dict lookup per element instead of a set test per rule
BLOCK, HEADING, LIST_ITEM, ATTRIBUTED, SKIPPED, TITLE, FURNITURE, HINTED, ANCHOR, IMAGE = (1 << i for i in range(10))
#: Lexbor's tag id of a text node, and the ids below which nodes are no elements (comments, doctype, document)
TEXT_NODE, FIRST_ELEMENT_ID = 2, 6
#: Lexbor's fixed tag ids (custom elements get per-document ids above them, looked up by name)
MAX_STATIC_TAG_ID = 1024
#: tag id / name -> (start token, end token or None for a void element, flags, name), filled as tags are met
TAG_IDS: dict[int, tuple[str, str | None, int, str]] = {}
TAG_NAMES: dict[str, tuple[str, str | None, int, str]] = {}
MAX_TAG_NAMES = 4096
#: "[Chunk:n]" tokens of the common lengths, made once
CHUNK_TOKENS = tuple(f"[Chunk:{n}]" for n in range(4096))


def _tag_entry(node) -> tuple[str, str | None, int, str]:
    """An element's STRAND tokens, flags and name; lower-case, as the old tokenizer wrote them (svg keeps
    camelCase names)."""
    tag = node.tag
    entry = TAG_NAMES.get(tag)
    if entry is None:
        name = tag.lower()
        flags = ((name in BLOCK_TAGS) * BLOCK | (name in HEADING_TAGS) * HEADING
                 | (name in LIST_ITEM_TAGS) * LIST_ITEM | (name in ATTRIBUTE_TAGS) * ATTRIBUTED
                 | (name in SKIPPED_CONTENT_TAGS) * SKIPPED | (name == "title") * TITLE
                 | (name in BOILERPLATE_TAGS) * FURNITURE | (name in HINTED_TAGS) * HINTED
                 | (name == "a") * ANCHOR | (name == "img") * IMAGE)
        entry = (f"[START:{name}]", None if name in VOID_TAGS else f"[END:{name}]", flags, name)
        if len(TAG_NAMES) < MAX_TAG_NAMES:
            TAG_NAMES[tag] = entry
    if node.tag_id < MAX_STATIC_TAG_ID:
        TAG_IDS[node.tag_id] = entry
    return entry


#: what the walk reads of an <a> (href in walk_page, the others in Page.close_anchor): all the compiled walk hands on
ANCHOR_ATTRIBUTES = ("href", "hreflang", "lang", "title")


class Page:
    """What one pass over a tree collects."""

    __slots__ = (
        "base_url",
        "block_count",
        "blocks",
        "html_lang",
        "images",
        "kept_chars",
        "link_budget",
        "link_cues",
        "links",
        "metas",
        "structure",
        "text_input",
        "text_truncated",
        "title_parts",
    )

    def __init__(self, base_url: str | None):
        self.base_url = base_url
        self.structure: list[str] = []
        self.links: list[tuple[str, str]] = []  # (url, host)
        self.link_cues: dict[str, str] = {}  # url -> the language the first cue-marked link to it names
        self.link_budget = LinkBudget()
        self.images: list[str] = []
        self.title_parts: list[str] = []
        self.html_lang: str | None = None
        self.blocks: list[tuple[str, str, int, bool]] = []  # (text, type, link characters, in a boilerplate region)
        self.block_count = 0
        self.kept_chars = 0
        self.text_truncated = False
        #: page_cld2_input of every text run, whitespace-normalised (the page text CLD2 reads): (its input, its length)
        self.text_input: tuple[bytes | None, int] = (None, 0)
        self.metas: dict[str, str] = {}  # 'description' / 'og:description' / 'keywords' -> the first content

    def add_block(self, pieces: list[str], kind: str, link_chars: int, region: bool, max_text_chars: int) -> None:
        """Close a text block: counted always, kept while the page's kept text stays within max_text_chars
        (the block that crosses the cap is cut there)."""
        self.block_count += 1
        text = " ".join("".join(pieces).split())
        room = max_text_chars - self.kept_chars
        if len(text) > room:
            self.text_truncated = True
            text = text[:max(room, 0)].rstrip()
            if not text:
                return
        self.kept_chars += len(text) + 1
        self.blocks.append((text, kind, min(link_chars, len(text)), region))

    def link(self, href: str | None, cue: str | None = None) -> str | None:
        """Keep a link (resolved, within the link budget); the URL kept, or None."""
        resolved = resolve_link(self.base_url or "", href.strip()) if href else None
        if resolved and self.link_budget.admit(resolved[0]):
            self.links.append(resolved)
            if cue:
                self.link_cues.setdefault(resolved[0], cue)
            return resolved[0]
        return None

    def image(self, attributes: dict) -> None:
        name = image_file_name(self.base_url, attributes.get("src") or attributes.get("data-src"))
        if name and len(self.images) < MAX_IMAGES:
            self.images.append(name)

    def element_attributes(self, tag: str, attributes: dict) -> None:
        """Links, <base> and <html lang> of the other elements that carry them (anchors and images: the walk)."""
        if tag in LINK_ATTRIBUTES:
            self.link(attributes.get(LINK_ATTRIBUTES[tag]))
        elif tag == "link":
            if "alternate" in (attributes.get("rel") or "").lower():
                self.link(attributes.get("href"), code_language(attributes.get("hreflang")))
        elif tag == "meta":
            name = (attributes.get("name") or attributes.get("property") or "").strip().lower()
            content = attributes.get("content")
            if name in METADATA_NAMES and content and not content.isspace():
                self.metas.setdefault(name, content)
        elif tag == "base":
            href = attributes.get("href")
            if href and self.base_url is not None and len(href) <= MAX_OUTLINK_CHARS:
                self.base_url = urljoin(self.base_url, href.strip())
        elif attributes.get("lang"):
            self.html_lang = attributes["lang"].strip()[:20]

    def close_anchor(self, anchor: list) -> None:
        """An <a> ends: the language its context names (udfs.fetch.language_cues) for the link it made: its text,
        hreflang / lang / title, or the alt text and file name of the first image inside it when it has no text."""
        url, attributes, parts, image = anchor
        if url is None:
            return
        text = "".join(parts)
        image_src = image_alt = None
        if image is not None and not text.strip():
            image_src, image_alt = image
        cue = link_cue(text[:MAX_CUE_TEXT_CHARS], hreflang=attributes.get("hreflang"), lang=attributes.get("lang"),
                       title=attributes.get("title"), image_alt=image_alt, image=image_src)
        if cue:
            self.link_cues.setdefault(url, cue.lang)


def _hinted(node) -> bool:
    """Whether a container's class or id names page furniture (menu, footer, cookie banner...)."""
    return _is_boilerplate_hint(node.attrs.get("class"), node.id)


@functools.lru_cache(maxsize=16384)
def _is_boilerplate_hint(class_name: str | None, element_id: str | None) -> bool:
    return bool(class_name and BOILERPLATE_HINT.search(class_name) or element_id and BOILERPLATE_HINT.search(element_id))


def walk_page(tops: list, page: Page, max_text_chars: int) -> None:
    """One depth-first pass over the trees in `tops`, as the old tokenizer saw the page: a STRAND token per
    start tag, end tag (void elements have none) and text run; a text block ends at every block tag.

    Written as one loop with local state (iterative: broken pages nest deeply); this is the hot path, so a
    tag's rules are one lookup in TAG_IDS and most elements (inline, no rule) cost a token and a step."""
    chunks: list[str] = []  # every text run, whitespace-normalised
    emit, add_chunk, title_parts = page.structure.append, chunks.append, page.title_parts
    tag_ids = TAG_IDS
    pieces: list[str] = []  # raw text of the open block (rendered text: inline tags add no space)
    piece_links = 0
    piece_type, piece_region = "text", False
    skip = titles = headings = items = regions = 0
    anchors: list[list] = []  # open <a>: [url kept or None, attributes, text parts, first image (src, alt)]
    stack: list[tuple[object, tuple, bool]] = []
    entry, region = None, False
    for top in tops:
        node = top
        while node is not None:
            tag_id = node.tag_id
            if tag_id == TEXT_NODE:
                entry = None
                data = node.text_content
                if titles:
                    title_parts.append(data)
                if anchors:
                    for anchor in anchors:
                        anchor[2].append(data)
                if skip:
                    pass
                elif not data or data.isspace():  # most text nodes: the layout between two tags
                    if pieces:
                        pieces.append(" ")  # the space between two inline elements
                else:
                    text = " ".join(data.split())
                    size = len(text)
                    emit(CHUNK_TOKENS[size] if size < 4096 else f"[Chunk:{size}]")
                    if not pieces:
                        piece_type = "heading" if headings else "list_item" if items else "text"
                        piece_region = regions > 0
                    pieces.append(data)
                    add_chunk(text)
                    if anchors:
                        piece_links += size
            elif tag_id < FIRST_ELEMENT_ID:  # a comment, doctype or document node
                entry = None
            else:
                entry = tag_ids.get(tag_id) or _tag_entry(node)
                emit(entry[0])
                flags = entry[2]
                region = False
                if flags:
                    if flags & BLOCK:
                        if pieces:
                            page.add_block(pieces, piece_type, piece_links, piece_region, max_text_chars)
                            pieces, piece_links = [], 0
                        if flags & HEADING:
                            headings += 1
                        elif flags & LIST_ITEM:
                            items += 1
                    if flags & ATTRIBUTED:
                        attributes = node.attributes
                        if flags & ANCHOR:
                            anchors.append([page.link(attributes.get("href")), attributes, [], None])
                        elif flags & IMAGE:
                            page.image(attributes)
                            for anchor in anchors:
                                if anchor[3] is None:
                                    anchor[3] = (attributes.get("src"), attributes.get("alt"))
                        else:
                            page.element_attributes(entry[3], attributes)
                    if flags & SKIPPED:
                        skip += 1
                        if flags & TITLE:
                            titles += 1
                    if flags & FURNITURE or flags & HINTED and _hinted(node):
                        region = True
                        regions += 1
                child = node.child
                if child is not None:
                    stack.append((node, entry, region))
                    node = child
                    continue
            # leave this node, then every ancestor whose last child it was
            while True:
                if entry is not None:
                    if region:
                        regions -= 1
                    if entry[1] is not None:  # not a void element
                        emit(entry[1])
                        flags = entry[2]
                        if flags:
                            if flags & BLOCK:
                                if pieces:
                                    page.add_block(pieces, piece_type, piece_links, piece_region, max_text_chars)
                                    pieces, piece_links = [], 0
                                if flags & HEADING:
                                    headings -= 1
                                elif flags & LIST_ITEM:
                                    items -= 1
                            elif flags & ANCHOR:
                                page.close_anchor(anchors.pop())
                            if flags & SKIPPED:
                                skip -= 1
                                if flags & TITLE:
                                    titles -= 1
                following = node.next if stack else None
                if following is not None or not stack:
                    node = following
                    break
                node, entry, region = stack.pop()
    if pieces:
        page.add_block(pieces, piece_type, piece_links, piece_region, max_text_chars)
    page.text_input = page_cld2_input(chunks)


def page_state(page: Page) -> tuple:
    """Everything a walk leaves in a Page: what the compiled walk must reproduce exactly."""
    budget = page.link_budget
    return (*(getattr(page, name) for name in Page.__slots__ if name != "link_budget"),
            budget.kept, budget.chars, budget.cut)


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
    """(the udfs.html_walk module, a description) when that optional extension (`make walk`) loads for the running
    selectolax (compiled_walk.load_extension) and agrees with walk_page, paragraph_keys, page_paragraphs and cld2_input
    on compiled_walk's probes; else (None, why not)."""
    html_walk, why = load_extension()
    if html_walk is None:
        return None, why
    flags = {"BLOCK": BLOCK, "HEADING": HEADING, "LIST_ITEM": LIST_ITEM, "ATTRIBUTED": ATTRIBUTED, "SKIPPED": SKIPPED,
             "TITLE": TITLE, "FURNITURE": FURNITURE, "HINTED": HINTED, "ANCHOR": ANCHOR, "IMAGE": IMAGE,
             "TEXT_NODE": TEXT_NODE, "FIRST_ELEMENT_ID": FIRST_ELEMENT_ID, "MAX_STATIC_TAG_ID": MAX_STATIC_TAG_ID}
    rules = {"SHORT_CHARS": SHORT_CHARS, "GOOD_CHARS": GOOD_CHARS, "MAX_NOTICE_CHARS": MAX_NOTICE_CHARS,
             "MIN_SHORT_RUN": MIN_SHORT_RUN,
             "MIN_LANG_CHARS": MIN_LANG_CHARS, "MAX_LINK_DENSITY": MAX_LINK_DENSITY,
             "MAX_GOOD_LINK_DENSITY": MAX_GOOD_LINK_DENSITY}
    try:
        html_walk.configure(_tag_entry, _hinted, _is_boilerplate_hint, CHUNK_TOKENS, flags, ANCHOR_ATTRIBUTES,
                            _resolve_link, link_cue, MAX_CUE_TEXT_CHARS, _image_file_name, code_language, MAX_IMAGES)
        html_walk.configure_paragraphs(NOTICE_PHRASES, _block_language, DENSE_SCRIPT_LANGS, rules)
        texts = [PROBE_KEY_TEXT]
        for html, url in (*PROBE_PAGES, (PROBE_CLD2_PAGE, None)):
            python_page, compiled_page = Page(url), Page(url)
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


def html_features(html: str, url: str | None, max_text_chars: int = MAX_TEXT_CHARS) -> dict:
    """The docs features of a decoded HTML page, and its text blocks (`page_paragraphs`, `text_truncated`)."""
    page = Page(url)
    WALK(parse_tops(html), page, max_text_chars)
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
        "page_paragraphs": PAGE_PARAGRAPHS(page.blocks, title, lang, single), "text_truncated": page.text_truncated,
        "description": description, "keywords": keywords, "metadata_truncated": metadata_cut,
    }


def page_paragraphs(blocks: list[tuple], title: str | None, page_lang: str | None,
                    single_language: bool = False) -> list[dict]:
    """Paragraph structs (text, type, lang, boilerplate, hash) of a page's text blocks.

    Language: a block of MIN_LANG_CHARS or more gets the page's language when CLD2 found no other language on
    the whole page; otherwise a main-text block gets CLD2's language of its own text and a boilerplate block
    none (CLD2 runs where the text is used: on the main text)."""
    if not blocks:
        return []
    texts = [block[0] for block in blocks]
    folded = "\n".join(texts).casefold()  # one pass for every block: newlines separate them, none holds one
    keys = PARAGRAPH_KEYS(folded)
    notices = notice_lines(folded)
    title_key = PARAGRAPH_KEYS(WHITESPACE.sub(" ", title).casefold())[0] if title else ""
    weight = 3 if page_lang in DENSE_SCRIPT_LANGS else 1
    kinds, classes = [], []
    linked_headline = False  # the block before is a heading that is all link: this one is a teaser
    for index, (text, kind, link_chars, region) in enumerate(blocks):
        if kind == "heading" and title_key and keys[index] in title_key:
            kind = "title"
            region = region and keys[index] != title_key  # the page's headline, though its template calls it header
        kinds.append(kind)
        size = len(text)
        length, density = size * weight, link_chars / size
        if region or length < MAX_NOTICE_CHARS and index in notices or linked_headline:
            classes.append("bad")
        elif density > MAX_LINK_DENSITY:
            classes.append("bad" if length >= SHORT_CHARS else "short_link")
        elif length < SHORT_CHARS:
            classes.append("short")
        elif length >= GOOD_CHARS and density <= MAX_GOOD_LINK_DENSITY:
            classes.append("good")
        else:
            classes.append("near_good")
        linked_headline = kind == "heading" and density > MAX_LINK_DENSITY
    _merge_short_runs(classes, blocks, weight)
    boilerplate = [label != "good" for label in _resolve_classes(classes, kinds)]
    if single_language:
        langs = [page_lang if len(text) >= MIN_LANG_CHARS else None for text in texts]
    else:
        langs = [None if bad else _block_language(text) for text, bad in zip(texts, boilerplate)]
    return [{"text": text, "type": kind, "lang": lang, "boilerplate": bad,
             "hash": blake2b(key.encode("utf-8", "ignore"), digest_size=8).hexdigest()}
            for text, kind, lang, bad, key in zip(texts, kinds, langs, boilerplate, keys)]


def notice_lines(folded: str) -> set[int]:
    """Indexes of the newline-separated texts that hold a notice phrase (NOTICE_PHRASES)."""
    lines = set()
    for phrase in NOTICE_PHRASES:
        found = folded.find(phrase)
        while found >= 0:
            lines.add(folded.count("\n", 0, found))
            end = folded.find("\n", found)  # the next search starts on the next text
            found = folded.find(phrase, end + 1) if end >= 0 else -1
    return lines


def paragraph_keys(folded: str) -> list[str]:
    """What the hashes of case-folded, newline-separated texts are of: each text with punctuation, underscores
    and spacing as one space."""
    return [key.strip() for key in KEY_BREAKS.sub(" ", folded.replace("_", " ")).split("\n")]


def _merge_short_runs(classes: list[str], blocks: list[tuple], weight: int) -> None:
    """Runs of MIN_SHORT_RUN or more short blocks, GOOD_CHARS together and at most MAX_LINK_DENSITY link text,
    become near-good; the other short blocks that are mostly link (short_link) are bad."""
    start = 0
    for end in range(len(classes) + 1):
        if end < len(classes) and classes[end] in ("short", "short_link"):
            continue
        chars = sum(len(blocks[i][0]) for i in range(start, end))
        if end - start >= MIN_SHORT_RUN and chars * weight >= GOOD_CHARS and \
                sum(blocks[i][2] for i in range(start, end)) <= MAX_LINK_DENSITY * chars:
            classes[start:end] = ["near_good"] * (end - start)
        else:
            classes[start:end] = ["bad" if label == "short_link" else label for label in classes[start:end]]
        start = end + 1


def _resolve_classes(classes: list[str], kinds: list[str]) -> list[str]:
    """justext's context pass (short and near-good blocks take their class from the nearest good/bad ones),
    after the headline rules: a heading repeating the page's <title> is good, and so is a heading opening
    good text, so the short lines between a headline and its article (date, byline) read as the article's."""
    classes = list(classes)
    after = _nearest_decided(classes, range(len(classes) - 1, -1, -1))
    for i, kind in enumerate(kinds):
        if classes[i] != "bad" and (kind == "title" or kind == "heading" and after[i] == "good"):
            classes[i] = "good"
    final = list(classes)
    before = _nearest_decided(classes, range(len(classes)))
    after = _nearest_decided(classes, range(len(classes) - 1, -1, -1))
    for i, label in enumerate(classes):
        if label == "short":
            final[i] = "good" if before[i] == after[i] == "good" else "bad"
        elif label == "near_good":
            final[i] = "bad" if before[i] == after[i] == "bad" else "good"
    return final


def _nearest_decided(classes: list[str], order: range) -> list[str]:
    """For each block, the class of the nearest good/bad block before it in `order` ('bad' at the edge)."""
    nearest, seen = [""] * len(classes), "bad"
    for i in order:
        nearest[i] = seen
        if classes[i] in ("good", "bad"):
            seen = classes[i]
    return nearest


def _block_language(text: str) -> str | None:
    """CLD2's language of one block (ISO 639-3, as language_id.cld2_language with CLD2_INPUT's engine), None when it
    is too short to tell."""
    if len(text) < MIN_LANG_CHARS:
        return None
    return cld2_detect(CLD2_INPUT(text))[0]


#: the optional compiled walk and paragraph keys (udfs.html_walk) when built and in agreement, and what runs;
#: html_features calls WALK, PARAGRAPH_KEYS, PAGE_PARAGRAPHS and CLD2_INPUT (through page_paragraphs and
#: _block_language): the compiled functions, else the Python ones (the reference)
WALK, PARAGRAPH_KEYS, PAGE_PARAGRAPHS, CLD2_INPUT = walk_page, paragraph_keys, page_paragraphs, cld2_input  # probing
COMPILED, WALK_ENGINE = compiled_extension()
WALK = COMPILED.walk_page if COMPILED else walk_page
PARAGRAPH_KEYS = COMPILED.paragraph_keys if COMPILED else paragraph_keys
PAGE_PARAGRAPHS = COMPILED.page_paragraphs if COMPILED else page_paragraphs
CLD2_INPUT = COMPILED.cld2_input if COMPILED else cld2_input
