"""The obvious sentence-pair filters, each a reason (the pair stays in the Parquet with it).

Checked in this order, the first that fires is the reason: `identical_sides` (the same text after
case and space folding: untranslated), `code` (a side is code, an identifier, a command or numbers, whatever
its markup: udfs.common.code_text; a code line is no bitext), `length_ratio` (character lengths, in the document's own
ratio, more than AlignmentConfig.max_length_ratio apart), `numbers_mismatch` (the digit sequences differ),
`wrong_language` (CLD2 on a sentence of at least AlignmentConfig.min_cld2_chars reliably names another language
than the side's).
"""
from __future__ import annotations

import re

from parascout.udfs.common.code_text import is_code
from parascout.udfs.common.language_id import cld2_language
from parascout.udfs.export.bitext.config import DEFAULT, AlignmentConfig

UNALIGNED = "unaligned"
FILTERED_REASONS = frozenset({"identical_sides", "code", "length_ratio", "numbers_mismatch", "wrong_language", UNALIGNED})
BAD_REASONS: frozenset[str] = frozenset()

_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+")


def sentence_language(text: str, min_chars: int = DEFAULT.min_cld2_chars) -> str | None:
    """ISO 639-3 language of a sentence by CLD2, None when shorter than `min_chars` or unreliable."""
    if len(text) < min_chars:
        return None
    lang, reliable, _ = cld2_language(text)
    return lang if reliable else None


def filter_reason(src: str, trg: str, src_lang: str, trg_lang: str, length_ratio: float = 1.0,
                  config: AlignmentConfig = DEFAULT) -> str | None:
    """Why a sentence pair is filtered out, or None to keep it (`length_ratio`: trg/src chars of the document)."""
    if _SPACE.sub(" ", src).strip().casefold() == _SPACE.sub(" ", trg).strip().casefold():
        return "identical_sides"
    if is_code(src, config.code) or is_code(trg, config.code):
        return "code"
    scaled = len(trg) / max(length_ratio, 1e-6)
    if max(len(src), scaled) > config.max_length_ratio * max(min(len(src), scaled), 1.0):
        return "length_ratio"
    if sorted(_NUMBER.findall(src)) != sorted(_NUMBER.findall(trg)):
        return "numbers_mismatch"
    for text, lang in ((src, src_lang), (trg, trg_lang)):
        found = sentence_language(text, config.min_cld2_chars)
        if found is not None and lang and found != lang:
            return "wrong_language"
    return None
