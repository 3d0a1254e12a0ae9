"""A decoded HTML page -> the `docs` features and its paragraphs, in one pass over a Lexbor tree (selectolax).

`html_features(html, url)` walks the parsed tree once and returns the `docs` columns
(title, html_lang, text length, paragraph count, outlinks resolved and normalised with
a same-host flag, image file names, CLD2's page language, the STRAND linearisation
"[START:p]" / "[END:p]" / "[Chunk:123]") plus `page_paragraphs`: the page's blocks of
text (`p`, headings, list items, table cells, `br`-separated runs) with their type
('title', 'heading', 'list_item', 'text'), a CLD2 language each, a hash of the
normalised text, and a boilerplate flag. Boilerplate is marked, never dropped, by
justext-like rules: position (header/nav/footer/aside or a container whose class or
id says menu, footer, cookie...), link density, length with the neighbours' class
deciding short and medium blocks, cookie/copyright notices. Repetition across a
site's pages needs the site's other pages: udfs.near_duplicates marks it later.

Why one module (~450 lines): it is one pass over the Lexbor tree; the features, the paragraphs and the
boilerplate rules read the same node state, and splitting the walk would cost a second traversal per page.
"""
from __future__ import annotations

import functools
import hashlib
import re
from posixpath import basename
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

import pycld2
from selectolax.lexbor import LexborHTMLParser

from parascout.udfs.langs import cld2_to_iso639_3
from parascout.udfs.language_cues import code_language, link_cue
from parascout.udfs.urls import url_host
from parascout.udfs.warc_record import MAX_IMAGES, MAX_OUTLINK_CHARS, LinkBudget, bound_links

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
SKIPPED_LINK_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "about:", "#")
#: elements whose text is page furniture wherever they appear
BOILERPLATE_TAGS = frozenset({"header", "footer", "nav", "aside", "form"})
#: containers whose class or id is read for a boilerplate hint (others are not, to keep the walk fast)
HINTED_TAGS = frozenset({"div", "section", "ul", "ol", "table"})
BOILERPLATE_HINT = re.compile(r"(?:^|[\W_])(?:nav|navbar|menu|footer|header|sidebar|side-bar|breadcrumbs?|cookies?|"
                              r"consent|gdpr|banner|share|social|related|widget|masthead|topbar|subnav|pager|"
                              r"pagination|copyright|skip-link|toolbar|login)(?:$|[\W_])", re.IGNORECASE)
NOTICE = re.compile(r"cookie|gdpr|\u00a9|copyright|all rights reserved|privacy policy|terms of (?:use|service)|"
                    r"datenschutz|impressum|alle rechte vorbehalten|tous droits r\u00e9serv\u00e9s|"
                    r"todos los derechos reservados|版权所有|隐私", re.IGNORECASE)
#: justext's length classes, in characters (CJK and Thai pages count each character as three)
SHORT_CHARS, GOOD_CHARS = 25, 70
#: above this share of characters inside links a block is a link list; a good block has at most the second
#: (higher than justext's 0.2: encyclopaedia-style prose links many of its words)
MAX_LINK_DENSITY, MAX_GOOD_LINK_DENSITY = 0.75, 0.5
DENSE_SCRIPT_LANGS = frozenset({"zho", "jpn", "kor", "tha", "yue", "lzh"})
CLD2_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
WHITESPACE = re.compile(r"\s+")
NOT_WORD = re.compile(r"[\W_]+")
#: blocks shorter than this get no language of their own (CLD2 cannot tell)
MIN_LANG_CHARS = 20
PARAGRAPH_TYPES = ("title", "heading", "list_item", "text")
#: Spark DDL of a paragraph (the `texts` contract) and of the text columns a fetch task adds to each record
PARAGRAPH_SCHEMA = "struct<text:string,type:string,lang:string,boilerplate:boolean,hash:string>"
TEXT_FIELDS_SCHEMA = f"page_paragraphs array<{PARAGRAPH_SCHEMA}>, text_truncated boolean"
ATTRIBUTE_TAGS = frozenset({*LINK_ATTRIBUTES, "img", "link", "base", "html"})
START_TOKENS = {tag: f"[START:{tag}]" for tag in (*BLOCK_TAGS, "a", "span", "img", "b", "i", "strong", "em", "script")}
END_TOKENS = {tag: f"[END:{tag}]" for tag in START_TOKENS}


def normalise_link(base: str | None, href: str | None) -> str | None:
    """Resolve href against base; http(s) only, lower-case scheme/host, no default port or fragment."""
    resolved = resolve_link(base or "", href.strip()) if href else None
    return resolved[0] if resolved else None


def resolve_link(base: str, href: str) -> tuple[str, str] | None:
    """(normalised URL, host) of a stripped href; the cache key keeps only the part of base the href uses,
    so a site's absolute and root-relative links hit the cache on every page of the site."""
    if href.startswith("/") and not href.startswith("//"):
        start = base.find("://")
        end = base.find("/", start + 3) if start > 0 else -1
        if end > 0:
            base = base[:end]
    elif href[:8].lower().startswith(("http://", "https://")):
        base = ""
    return _resolve_link(base, href)


@functools.lru_cache(maxsize=65536)
def _resolve_link(base: str, href: str) -> tuple[str, str] | None:
    """(normalised URL, host) of href on a page at base; cached, since navigation links repeat across a site."""
    if not href or href.lower().startswith(SKIPPED_LINK_SCHEMES):
        return None
    try:
        parts = urlsplit(urljoin(base, href))
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError:
        return None
    if scheme not in ("http", "https") or not host:
        return None
    host = host.rstrip(".")
    netloc = host
    if port and not (scheme == "http" and port == 80 or scheme == "https" and port == 443):
        netloc += f":{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, "")), host


def image_file_name(base: str | None, src: str | None) -> str | None:
    """The lower-cased file name of an image URL ('logo.png'), None for data: URIs and empty paths."""
    if not src or src.strip().lower().startswith("data:"):
        return None
    src = src.strip()
    absolute = src.startswith("/") or src[:8].lower().startswith(("http://", "https://"))
    return _image_file_name("" if absolute else base or "", src)  # the name of such a src needs no base


@functools.lru_cache(maxsize=65536)
def _image_file_name(base: str, src: str) -> str | None:
    try:
        path = urlsplit(urljoin(base, src)).path
    except ValueError:
        return None
    name = unquote(basename(path)).strip().lower()
    return name or None


def cld2_language(text: str) -> tuple[str | None, bool, int]:
    """CLD2 on plain text: (ISO 639-3 or None, reliable, percent of the text in that language)."""
    return _cld2(text)[:3]


def _cld2(text: str) -> tuple[str | None, bool, int, bool]:
    """cld2_language's answer and whether CLD2 found only that one language in the text."""
    clean = CLD2_UNSAFE.sub(" ", text)
    if not clean.strip():
        return None, False, 0, False
    try:
        reliable, _, details = pycld2.detect(clean.encode("utf-8", "ignore"), isPlainText=True)
    except pycld2.error:
        return None, False, 0, False
    _, code, percent, _ = details[0]
    return cld2_to_iso639_3(code), bool(reliable), int(percent), details[1][1] == "un"


def paragraph_hash(text: str) -> str:
    """A 64-bit hex hash of a paragraph's normalised text (case, punctuation and spacing ignored)."""
    normalised = NOT_WORD.sub(" ", text.casefold()).strip()
    return hashlib.blake2b(normalised.encode("utf-8", "ignore"), digest_size=8).hexdigest()


class Page:
    """What one pass over a tree collects."""

    __slots__ = (
        "base_url",
        "block_count",
        "blocks",
        "chunks",
        "html_lang",
        "images",
        "kept_chars",
        "link_budget",
        "link_cues",
        "links",
        "structure",
        "text_chars",
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
        self.text_chars = 0
        self.text_truncated = False
        self.chunks: list[str] = []  # every text run, whitespace-normalised (the page text CLD2 reads)

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

    def link(self, href: str | None, cue: str | None = None) -> None:
        resolved = resolve_link(self.base_url or "", href.strip()) if href else None
        if resolved and self.link_budget.admit(resolved[0]):
            self.links.append(resolved)
            if cue:
                self.link_cues.setdefault(resolved[0], cue)

    def element_attributes(self, tag: str, node) -> None:
        """Links, images, <base> and <html lang> of the elements that carry them."""
        attributes = node.attributes
        if tag in LINK_ATTRIBUTES:
            self.link(attributes.get(LINK_ATTRIBUTES[tag]), anchor_cue(node) if tag == "a" else None)
        elif tag == "img":
            name = image_file_name(self.base_url, attributes.get("src") or attributes.get("data-src"))
            if name and len(self.images) < MAX_IMAGES:
                self.images.append(name)
        elif tag == "link":
            if "alternate" in (attributes.get("rel") or "").lower():
                self.link(attributes.get("href"), code_language(attributes.get("hreflang")))
        elif tag == "base":
            href = attributes.get("href")
            if href and self.base_url is not None and len(href) <= MAX_OUTLINK_CHARS:
                self.base_url = urljoin(self.base_url, href.strip())
        elif attributes.get("lang"):
            self.html_lang = attributes["lang"].strip()[:20]


def anchor_cue(node) -> str | None:
    """The language an <a>'s context names (udfs.language_cues): its text, hreflang / lang / title, or the alt
    text and file name of the image it wraps when it has no text."""
    attributes = node.attributes
    text = node.text(deep=True) if node.child is not None else ""
    image = image_alt = None
    if not text.strip() and node.child is not None:
        wrapped = node.css_first("img")
        if wrapped is not None:
            image, image_alt = wrapped.attributes.get("src"), wrapped.attributes.get("alt")
    cue = link_cue(text[:MAX_CUE_TEXT_CHARS], hreflang=attributes.get("hreflang"), lang=attributes.get("lang"),
                   title=attributes.get("title"), image_alt=image_alt, image=image)
    return cue.lang if cue else None


def _hinted(node) -> bool:
    """Whether a container's class or id names page furniture (menu, footer, cookie banner...)."""
    attributes = node.attributes
    return _is_boilerplate_hint(attributes.get("class"), attributes.get("id"))


@functools.lru_cache(maxsize=16384)
def _is_boilerplate_hint(class_name: str | None, element_id: str | None) -> bool:
    return bool(class_name and BOILERPLATE_HINT.search(class_name) or element_id and BOILERPLATE_HINT.search(element_id))


def walk_page(tops: list, page: Page, max_text_chars: int) -> None:
    """One depth-first pass over the trees in `tops`, as the old tokenizer saw the page: a STRAND token per
    start tag, end tag (void elements have none) and text run; a text block ends at every block tag.

    Written as one loop with local state (iterative: broken pages nest deeply); this is the hot path."""
    structure, chunks = page.structure, page.chunks
    pieces: list[str] = []  # raw text of the open block (rendered text: inline tags add no space)
    piece_links = text_chars = 0
    piece_type, piece_region = "text", False
    skip = titles = anchors = headings = items = regions = 0
    stack: list[tuple[object, str, bool]] = []
    for top in tops:
        node = top
        while node is not None:
            tag = node.tag
            tag_to_end = None
            if tag == "-text":
                data = node.text_content
                if titles:
                    page.title_parts.append(data)
                if not skip:
                    text = " ".join(data.split())
                    if text:
                        structure.append(f"[Chunk:{len(text)}]")
                        if not pieces:
                            piece_type = "heading" if headings else "list_item" if items else "text"
                            piece_region = regions > 0
                        pieces.append(data)
                        chunks.append(text)
                        text_chars += len(text) + 1
                        if anchors:
                            piece_links += len(text)
                    elif pieces:
                        pieces.append(" ")  # the space between two inline elements
            elif tag[0] not in "-_":  # not a comment, doctype or document node
                if skip:
                    tag = tag.lower()  # svg keeps camelCase names; the old tokenizer lower-cased every tag
                structure.append(START_TOKENS.get(tag) or f"[START:{tag}]")
                if tag in BLOCK_TAGS:
                    if pieces:
                        page.add_block(pieces, piece_type, piece_links, piece_region, max_text_chars)
                        pieces, piece_links = [], 0
                    if tag in HEADING_TAGS:
                        headings += 1
                    elif tag in LIST_ITEM_TAGS:
                        items += 1
                if tag in ATTRIBUTE_TAGS:
                    anchors += tag == "a"
                    page.element_attributes(tag, node)
                if tag in SKIPPED_CONTENT_TAGS:
                    skip += 1
                    titles += tag == "title"
                region = tag in BOILERPLATE_TAGS or tag in HINTED_TAGS and _hinted(node)
                regions += region
                child = node.child
                if child is not None:
                    stack.append((node, tag, region))
                    node = child
                    continue
                tag_to_end = tag
            # leave this node, then every ancestor whose last child it was
            while True:
                if tag_to_end is not None:
                    regions -= region
                    if tag_to_end not in VOID_TAGS:
                        structure.append(END_TOKENS.get(tag_to_end) or f"[END:{tag_to_end}]")
                        if tag_to_end in BLOCK_TAGS:
                            if pieces:
                                page.add_block(pieces, piece_type, piece_links, piece_region, max_text_chars)
                                pieces, piece_links = [], 0
                            if tag_to_end in HEADING_TAGS:
                                headings -= 1
                            elif tag_to_end in LIST_ITEM_TAGS:
                                items -= 1
                        elif tag_to_end == "a":
                            anchors -= 1
                        if tag_to_end in SKIPPED_CONTENT_TAGS:
                            skip -= 1
                            titles -= tag_to_end == "title"
                following = node.next if stack else None
                if following is not None or not stack:
                    node = following
                    break
                node, tag_to_end, region = stack.pop()
    if pieces:
        page.add_block(pieces, piece_type, piece_links, piece_region, max_text_chars)
    page.text_chars = max(text_chars - 1, 0)


def html_features(html: str, url: str | None, max_text_chars: int = MAX_TEXT_CHARS) -> dict:
    """The docs features of a decoded HTML page, and its text blocks (`page_paragraphs`, `text_truncated`)."""
    first = LexborHTMLParser(html).root
    while first is not None and first.prev is not None:
        first = first.prev  # a comment or doctype before <html>
    tops = []
    while first is not None:
        tops.append(first)
        first = first.next
    page = Page(url)
    walk_page(tops, page, max_text_chars)
    title = WHITESPACE.sub(" ", "".join(page.title_parts)).strip()[:MAX_TITLE_CHARS] or None
    host = url_host(url) if url else None
    links = dict(page.links)  # first occurrence order, one host per URL
    outlinks = list(links)
    images, images_cut = bound_links(dict.fromkeys(page.images), LinkBudget(MAX_IMAGES, MAX_IMAGE_NAME_CHARS))
    lang, reliable, percent, single = _cld2(" ".join(page.chunks))
    return {
        "status": "ok", "cld2_lang": lang, "cld2_reliable": reliable, "cld2_percent": percent,
        "html_lang": page.html_lang, "text_chars": page.text_chars, "paragraphs": page.block_count,
        "outlinks": outlinks, "outlinks_same_host": [links[link] == host for link in outlinks],
        "outlink_cues": [page.link_cues.get(link) for link in outlinks],
        "images": images, "structure": page.structure[:MAX_STRUCTURE_TOKENS],
        "outlinks_cut": page.link_budget.cut, "images_cut": images_cut,
        "title": title, "error": "structure_truncated" if len(page.structure) > MAX_STRUCTURE_TOKENS else None,
        "page_paragraphs": page_paragraphs(page.blocks, title, lang, single), "text_truncated": page.text_truncated,
    }


def page_paragraphs(blocks: list[tuple], title: str | None, page_lang: str | None,
                    single_language: bool = False) -> list[dict]:
    """Paragraph structs (text, type, lang, boilerplate, hash) of a page's text blocks.

    A block of MIN_LANG_CHARS or more gets CLD2's language of its own text, or the page's language
    when CLD2 found no other language on the whole page (one call saved per block)."""
    if not blocks:
        return []
    if single_language:
        langs = [page_lang if len(block[0]) >= MIN_LANG_CHARS else None for block in blocks]
    else:
        langs = [_block_language(block[0]) for block in blocks]
    title_key = NOT_WORD.sub(" ", title.casefold()).strip() if title else ""
    weight = 3 if page_lang in DENSE_SCRIPT_LANGS else 1
    paragraphs, classes = [], []
    for (text, kind, link_chars, region), lang in zip(blocks, langs):
        if kind == "heading" and title_key and NOT_WORD.sub(" ", text.casefold()).strip() in title_key:
            kind = "title"
        paragraphs.append({"text": text, "type": kind, "lang": lang, "boilerplate": False,
                           "hash": paragraph_hash(text)})
        classes.append(_initial_class(text, link_chars, region, weight))
    for paragraph, label in zip(paragraphs, _resolve_classes(classes, [p["type"] for p in paragraphs])):
        paragraph["boilerplate"] = label != "good"
    return paragraphs


def _initial_class(text: str, link_chars: int, region: bool, weight: int) -> str:
    """justext's context-free class: 'bad', 'short', 'near_good' or 'good'."""
    length = len(text) * weight
    density = link_chars / len(text)
    if region or density > MAX_LINK_DENSITY or length < 400 and NOTICE.search(text):
        return "bad"
    if length < SHORT_CHARS:
        return "short"
    if length >= GOOD_CHARS and density <= MAX_GOOD_LINK_DENSITY:
        return "good"
    return "near_good"


def _resolve_classes(classes: list[str], kinds: list[str]) -> list[str]:
    """justext's context pass: short and near-good blocks take their class from the nearest good/bad ones."""
    final = list(classes)
    before = _nearest_decided(classes, range(len(classes)))
    after = _nearest_decided(classes, range(len(classes) - 1, -1, -1))
    for i, label in enumerate(classes):
        if label == "short":
            final[i] = "good" if before[i] == after[i] == "good" else "bad"
        elif label == "near_good":
            final[i] = "bad" if before[i] == after[i] == "bad" else "good"
    for i, kind in enumerate(kinds):  # a heading or title opening good text is kept
        if kind in ("heading", "title") and classes[i] != "bad" and after[i] == "good":
            final[i] = "good"
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
    """CLD2's language of one block (ISO 639-3), None when it is too short to tell."""
    if len(text) < MIN_LANG_CHARS:
        return None
    lang, _, _ = cld2_language(text)
    return lang
