"""Pair verification from archived content: STRAND structure plus ILSP-FC's signals.

A pair row carries both documents' features (prefixes `src_` / `trg_`, from the
`docs` table): fetch status, CLD2 language and reliability, text length,
paragraph count, distinctive image file names (images on more than 10% of a
host's pages removed by the job) and the STRAND token sequence. `verify_frame`
adds dp, n, r, p (udfs.structure), the Jaccard of image names, length and
paragraph ratios and the language check, then the decision of a rule, with the
reason for every rejection. Pairs whose documents are missing or failed are
kept, with a reason, so they are counted rather than dropped.
"""
from __future__ import annotations

import math
from collections.abc import Iterator

import pandas as pd

from parascout.udfs.structure import ThresholdRule, TreeRule, rule_from_dict, strand_features

#: an image on more than this share of a host's fetched pages is boilerplate (logos, icons)
BOILERPLATE_IMAGE_SHARE = 0.10
#: ... and on at least this many pages: an image shared by a pair alone never counts as boilerplate
MIN_BOILERPLATE_DOCS = 3

VERIFIED_SCHEMA = (
    "host string, src_url string, trg_url string, src_lang string, trg_lang string, "
    "src_cld2_lang string, trg_cld2_lang string, dp double, n int, r double, p double, aligned_chunks int, "
    "image_jaccard double, shared_images int, length_ratio double, paragraph_ratio double, lang_ok boolean, "
    "parallel boolean, method string, reason string"
)
VERIFIED_COLUMNS = [part.strip().split(" ", 1)[0] for part in VERIFIED_SCHEMA.split(", ")]
#: reasons that mean the pair could not be judged (bad input), not that it was judged non-parallel
DOCUMENT_REASONS = ("missing_src_doc", "missing_trg_doc", "failed_src_doc", "failed_trg_doc")


def image_jaccard(source: list | None, target: list | None) -> tuple[float | None, int]:
    """(Jaccard of two image-name sets, shared count); None when neither page has an image."""
    a, b = set(_as_list(source)), set(_as_list(target))
    if not a and not b:
        return None, 0
    shared = len(a & b)
    return shared / len(a | b), shared


def ratio(a, b) -> float | None:
    """min/max of two non-negative counts (1 = equal); None when both are zero or missing."""
    if _missing(a) or _missing(b) or max(a, b) <= 0:
        return None
    return float(min(a, b)) / float(max(a, b))


def language_ok(expected: str | None, detected: str | None, reliable) -> bool:
    """CLD2 found the expected language, reliably (any reliable language when none is expected)."""
    if _missing(reliable) or not bool(reliable) or not detected:
        return False
    return expected is None or detected == expected


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _as_list(value) -> list:
    return [] if value is None or (isinstance(value, float) and math.isnan(value)) else list(value)


def _document_problem(row) -> str | None:
    for side in ("src", "trg"):
        status = row[f"{side}_status"]
        if _missing(status):
            return f"missing_{side}_doc"
        if status != "ok":
            return f"failed_{side}_doc"
    return None


def verify_row(row, rule: ThresholdRule | TreeRule) -> dict:
    """Features and decision for one joined pair row (a dict or pandas row)."""
    out = {name: row.get(name) for name in ("host", "src_url", "trg_url", "src_lang", "trg_lang",
                                             "src_cld2_lang", "trg_cld2_lang")}
    problem = _document_problem(row)
    if problem:
        return {**out, "lang_ok": False, "parallel": False, "method": rule.method, "reason": problem}
    structure = strand_features(_as_list(row["src_structure"]), _as_list(row["trg_structure"]))
    jaccard, shared = image_jaccard(row["src_images"], row["trg_images"])
    lang_ok = (language_ok(row["src_lang"], row["src_cld2_lang"], row["src_cld2_reliable"])
               and language_ok(row["trg_lang"], row["trg_cld2_lang"], row["trg_cld2_reliable"])
               and row["src_cld2_lang"] != row["trg_cld2_lang"])
    features = {**structure.__dict__, "image_jaccard": jaccard, "shared_images": shared,
                "length_ratio": ratio(row["src_text_chars"], row["trg_text_chars"]),
                "paragraph_ratio": ratio(row["src_paragraphs"], row["trg_paragraphs"]), "lang_ok": lang_ok}
    parallel, reason = rule.decide(features)
    if not lang_ok:
        parallel, reason = False, "lang_mismatch"
    return {**out, **features, "parallel": parallel, "method": rule.method, "reason": reason}


def verify_frame(frame: pd.DataFrame, rule: ThresholdRule | TreeRule) -> pd.DataFrame:
    """verified_pairs rows for a frame of joined pairs."""
    rows = [verify_row(row, rule) for row in frame.to_dict("records")]
    result = pd.DataFrame(rows, columns=VERIFIED_COLUMNS)
    for column in ("n", "aligned_chunks", "shared_images"):
        result[column] = result[column].astype("Int64")
    return result


def verify_batches(batches: Iterator[pd.DataFrame], rule: dict) -> Iterator[pd.DataFrame]:
    """mapInPandas body: joined pair rows -> verified_pairs rows under the rule given as a dict."""
    decision = rule_from_dict(rule)
    for batch in batches:
        yield verify_frame(batch, decision)
