"""A page's <meta> description and keywords, as the `texts` table keeps them: whitespace-normalised and bounded.

udfs.fetch.html_text's walk keeps the first content of each METADATA_NAMES tag; html_features reads them with
page_metadata (`description`, `keywords`, `metadata_truncated` when either was cut).
"""
from __future__ import annotations

import re

#: a meta description and a meta keywords list are read up to this many characters each, the list up to
#: MAX_KEYWORDS keywords (metadata_truncated when either is cut)
MAX_METADATA_CHARS = 2_000
MAX_KEYWORDS = 50
#: what separates meta keywords: commas and semicolons (Latin, Arabic, CJK full-width, ideographic)
KEYWORD_SEPARATORS = re.compile("[,;\u060c\u061b\u3001\uff0c\uff1b]")
#: the <meta> names (or properties) kept
METADATA_NAMES = frozenset({"description", "og:description", "keywords"})


def page_metadata(metas: dict[str, str]) -> tuple[str | None, list[str] | None, bool]:
    """(description, keywords, cut) of a page's <meta> contents: the description whitespace-normalised (og:description
    when there is none); keywords split at separators, normalised, repeats dropped; each bounded."""
    cut = False
    description = metas.get("description") or metas.get("og:description")
    if description is not None:
        description = " ".join(description.split())
        if len(description) > MAX_METADATA_CHARS:
            description, cut = description[:MAX_METADATA_CHARS].rstrip(), True
    keywords = None
    if "keywords" in metas:
        content = metas["keywords"]
        pieces = KEYWORD_SEPARATORS.split(content[:MAX_METADATA_CHARS])
        if len(content) > MAX_METADATA_CHARS:
            cut = True
            pieces = pieces[:-1] or pieces  # the last keyword is likely cut mid-word
        keywords = list(dict.fromkeys(word for word in (" ".join(piece.split()) for piece in pieces) if word))
        if len(keywords) > MAX_KEYWORDS:
            keywords, cut = keywords[:MAX_KEYWORDS], True
    return description or None, keywords or None, cut
