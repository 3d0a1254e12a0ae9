"""What the walk (udfs.fetch.page_walk) does at each tag: its STRAND tokens and the flags of the rules it takes part in
(block, heading, list item, attributes read, skipped content, page furniture, hinted container, anchor, image)."""
from __future__ import annotations

import functools
import re

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
ATTRIBUTE_TAGS = frozenset({*LINK_ATTRIBUTES, "img", "link", "base", "html", "meta"})

# flags of an element's tag: one dict lookup per element instead of a set test per rule
BLOCK, HEADING, LIST_ITEM, ATTRIBUTED, SKIPPED, TITLE, FURNITURE, HINTED, ANCHOR, IMAGE = (1 << i for i in range(10))
#: Lexbor's tag id of a text node, and the ids below which nodes are no elements (comments, doctype, document)
TEXT_NODE, FIRST_ELEMENT_ID = 2, 6
#: Lexbor's fixed tag ids (custom elements get per-document ids above them, looked up by name)
MAX_STATIC_TAG_ID = 1024
#: tag id (TAG_IDS[id], below MAX_STATIC_TAG_ID) / name -> (start token, end token or None for a void element, flags,
#: name), filled as tags are met
TAG_IDS: list[tuple[str, str | None, int, str] | None] = [None] * MAX_STATIC_TAG_ID
TAG_NAMES: dict[str, tuple[str, str | None, int, str]] = {}
MAX_TAG_NAMES = 4096
#: "[Chunk:n]" tokens of the common lengths, made once
CHUNK_TOKENS = tuple(f"[Chunk:{n}]" for n in range(4096))


def tag_entry(node) -> tuple[str, str | None, int, str]:
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



def hinted(node) -> bool:
    """Whether a container's class or id names page furniture (menu, footer, cookie banner...)."""
    return is_boilerplate_hint(node.attrs.get("class"), node.id)


@functools.lru_cache(maxsize=16384)
def is_boilerplate_hint(class_name: str | None, element_id: str | None) -> bool:
    return bool(class_name and BOILERPLATE_HINT.search(class_name) or element_id and BOILERPLATE_HINT.search(element_id))

