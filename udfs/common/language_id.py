"""A text's language by CLD2 (pycld2), as ISO 639-3, the bytes CLD2 reads of a text, and a text's words (`tokenize`:
the one word notion of lexicons, tsim, domain terms and sentence alignment; language markers of URLs are in
udfs.common.langs).

CLD2 takes UTF-8 and fails on some characters (CLD2_UNSAFE): cld2_input writes them as spaces. The fetch stage's walk
(udfs.fetch.page_walk) gives CLD2 a page's text with page_cld2_input; compiled (`make walk`), its C forms
(udfs/fetch/walk_text.pxd, paragraph_text.pxd) write the same bytes, which html_text checks before using them.
"""
from __future__ import annotations

import re
import unicodedata

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


# ---- words: the one tokenizer of page text (lexicons, tsim, domain terms, sentence alignment) ----
_WORD = re.compile(r"[^\W_]+")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]")
_ARABIC_MARKS = re.compile(r"[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_ARABIC_LETTERS = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه"})
_ARABIC_SCRIPT = re.compile(r"[\u0600-\u06ff]")
_ARABIC_PREFIXES = ("وال", "بال", "كال", "فال", "لل", "ال")


def tokenize(text: str | None, lang: str | None = None) -> list[str]:
    """Lower-cased words of a text; Han and kana one token per character, Arabic script normalised.

    Arabic: diacritics and tatweel removed, alef/yeh/teh-marbuta forms unified and the article
    (with a leading w-/b-/k-/f-/l-) stripped from words longer than it, so `والكتاب` -> `كتاب`.
    `lang` is accepted for callers that know it; the script decides (mixed pages work).
    """
    if not text:
        return []
    text, arabic = normalised(text)
    han = _HAN.search(text) is not None
    if not han and not arabic:  # most pages: the words as they are (a script test per word cost a third)
        return _WORD.findall(text)
    return script_tokens(_WORD.findall(text), han, arabic)


def normalised(text: str) -> tuple[str, bool]:
    """(the text NFKC-normalised and case-folded, Arabic script normalised; whether it holds Arabic script)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    arabic = _ARABIC_SCRIPT.search(text) is not None
    if arabic:
        text = _ARABIC_MARKS.sub("", text).translate(_ARABIC_LETTERS)
    return text, arabic


def script_tokens(words: list[str], han: bool, arabic: bool) -> list[str]:
    """The tokens of normalised words: Han/kana words split per character (`han`: the text holds some), Arabic
    words without their article (`arabic`: the text holds Arabic script)."""
    tokens: list[str] = []
    for word in words:
        if han and _HAN.search(word):
            tokens.extend(_split_han(word))
        elif arabic and _ARABIC_SCRIPT.match(word):
            tokens.append(_strip_arabic_article(word))
        else:
            tokens.append(word)
    return tokens


def _split_han(word: str) -> list[str]:
    """Han/kana characters one by one; runs of other letters or digits stay whole."""
    parts, run = [], ""
    for char in word:
        if _HAN.match(char):
            if run:
                parts.append(run)
                run = ""
            parts.append(char)
        else:
            run += char
    if run:
        parts.append(run)
    return parts


def _strip_arabic_article(word: str) -> str:
    for prefix in _ARABIC_PREFIXES:
        if word.startswith(prefix) and len(word) > len(prefix) + 1:
            return word[len(prefix):]
    return word
