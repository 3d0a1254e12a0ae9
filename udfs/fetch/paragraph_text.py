"""The string steps of udfs.fetch.page_walk's paragraph step: case folding, whitespace collapse, paragraph keys, a
key's hash and a text's CLD2 input.

Run as plain Python these are the str methods, a regular expression, hashlib and language_id.cld2_input; compiled
(`make walk`), page_walk cimports paragraph_text.pxd instead: the same functions as C loops over the str's code points.
The rules that use them (which text is a paragraph's key, what is boilerplate) are page_walk's.
"""
from __future__ import annotations

import re
from hashlib import blake2b

from parascout.udfs.common.language_id import cld2_input as cld2_bytes  # noqa: F401 - a piece of page_walk

#: a run of punctuation, spaces or underscores (a paragraph key's word break); newlines separate texts
KEY_BREAKS = re.compile(r"[^\w\n]+")


def fold_case(text: str) -> str:
    """str.casefold()."""
    return text.casefold()


def collapse_spaces(text: str) -> str:
    """Runs of whitespace as one space, none at the ends: " ".join(text.split())."""
    return " ".join(text.split())


def split_keys(folded: str) -> list[str]:
    """Each newline-separated text with every run of characters that are not word characters (re's \\w, '_' being a
    break here) as one space, stripped: what a paragraph's hash is of."""
    return [key.strip() for key in KEY_BREAKS.sub(" ", folded.replace("_", " ")).split("\n")]


def key_hash(key: str) -> str:
    """The 16 hex characters of blake2b(key's UTF-8, digest_size=8); a key holds no surrogate (split_keys)."""
    return blake2b(key.encode("utf-8", "ignore"), digest_size=8).hexdigest()
