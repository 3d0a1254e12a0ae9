"""Pages Lexbor must not parse: one tag with too many attributes, or elements nested too deep.

udfs.fetch.documents scans a decoded page's tags with markup_problem before udfs.fetch.html_text parses it, and gives
a page past the bounds the status `html_too_complex` (ExtractionConfig's max_tag_attributes and max_nesting_depth,
fetch-docs' --max-tag-attributes and --max-nesting-depth).
"""
from __future__ import annotations

import re

from parascout.udfs.fetch.config import DEFAULT

MARKUP_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9:-]*)([^<>]*)")
MARKUP_ATTRIBUTE = re.compile(r"""[^\s"'=<>/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?""")
#: elements that never nest (void) or that the parser closes by itself when a sibling opens
UNNESTED_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                           "track", "wbr", "param", "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th",
                           "thead", "tbody", "tfoot", "rb", "rt", "rp", "!doctype"})


def markup_problem(html: str, max_attributes: int = DEFAULT.max_tag_attributes,
                   max_depth: int = DEFAULT.max_nesting_depth) -> str | None:
    """Why the page must not reach the parser (one tag with too many attributes, elements nested too deep), from
    a scan of its tags; None when it is within the bounds. Pages with fewer `<` and `=` than the bounds skip it."""
    if html.count("<") <= max_depth and html.count("=") + html.count(" ") <= max_attributes:
        return None
    depth = deepest = 0
    for match in MARKUP_TAG.finditer(html):
        closing, name, attributes = match.groups()
        if not closing and len(attributes) > max_attributes and \
                len(MARKUP_ATTRIBUTE.findall(attributes)) > max_attributes:
            return f"<{name[:40]}> has over {max_attributes} attributes"
        if name.lower() in UNNESTED_TAGS or attributes.rstrip().endswith("/"):
            continue
        depth = max(depth - 1, 0) if closing else depth + 1
        deepest = max(deepest, depth)
        if deepest > max_depth:
            return f"elements nest deeper than {max_depth}"
    return None
