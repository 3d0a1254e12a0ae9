"""A text's language by CLD2 (pycld2), as ISO 639-3, and the bytes CLD2 reads of a text.

CLD2 takes UTF-8 and fails on some characters (CLD2_UNSAFE): cld2_input writes them as spaces. The fetch stage's walk
(udfs.fetch.html_text) gives CLD2 a page's text with page_cld2_input; the compiled walk (native/html_walk.pyx) has a
twin of cld2_input that html_text uses only while it gives the same bytes.
"""
from __future__ import annotations

import re

import pycld2

from parascout.udfs.common.langs import cld2_to_iso639_3

#: what CLD2 cannot take: C0 controls but tab, newline and carriage return, DEL and the C1 controls, surrogates,
#: U+FFFE and U+FFFF
CLD2_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def cld2_language(text: str) -> tuple[str | None, bool, int]:
    """CLD2 on plain text: (ISO 639-3 or None, reliable, percent of the text in that language)."""
    return cld2_detect(cld2_input(text))[:3]


def cld2_detect(data: bytes | None) -> tuple[str | None, bool, int, bool]:
    """cld2_language's answer for a text whose CLD2 input (cld2_input) is data, and whether CLD2 found only that
    one language in the text."""
    if data is None:
        return None, False, 0, False
    try:
        reliable, _, details = pycld2.detect(data, isPlainText=True)
    except pycld2.error:
        return None, False, 0, False
    _, code, percent, _ = details[0]
    return cld2_to_iso639_3(code), bool(reliable), int(percent), details[1][1] == "un"


def cld2_input(text: str) -> bytes | None:
    """What CLD2 reads of a text: its UTF-8 with the characters CLD2 cannot take (CLD2_UNSAFE) as spaces; None when
    nothing but whitespace is left."""
    clean = text if text.isprintable() else CLD2_UNSAFE.sub(" ", text)  # every unsafe character is unprintable
    if not clean.strip():
        return None
    return clean.encode("utf-8", "ignore")


def page_cld2_input(chunks: list[str]) -> tuple[bytes | None, int]:
    """(cld2_input of the page text, its length): the page text is the page's text runs joined by spaces."""
    page_text = " ".join(chunks)
    return cld2_input(page_text), len(page_text)
