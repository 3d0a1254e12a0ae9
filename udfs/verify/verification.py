"""Pair verification from archived content: STRAND structure, what the pages say, and the decision.

Per host and language pair (`verify_host`, the body of a Spark cogroup of a host's pairs with its pages), every
pair gets the structural features of udfs.verify.structure (dp, n, r, p), the Jaccard of distinctive
image names, length and paragraph ratios, the CLD2 check, and — from the `texts` table — the
content features of udfs.verify.tsim (tsim under a lexicon, tsim_idf with the host's IDF, number and
rare-token overlap, paragraph correlations) and each side's share of prose in its language
(HostPages.language_shares). Pages are tokenised once
per host, not once per pair. The same call also scores `random_pairs` random same-host page
pairs in the two languages: the null distribution the unsupervised decision learns from, and as
many `spliced` pairs: a confident pair (switcher link, handle) whose target page keeps only part
of its paragraphs, the others replaced by paragraphs of a random same-site page, each page's in
its order — the comparable page a translation is not (a listing page of the same section in the
other language, a partial translation), with the pair's own structure. Only SPLICED_SHARE of the
confident pairs are spliced: as many spliced as true pairs taught the model that any pair with a
weaker lexicon (Arabic, Basque: lower tsim, fewer links on the diagonal) is a spliced page.

`own_tsim_idf` / `own_coverage_idf` are tsim_idf and the best side's IDF coverage of the pages' own
text, their list items left out: a listing page is its teasers, the text of other pages, which two
language versions share in part and in shifted places, and a section page's teasers may differ from its
translation's while its title and introduction are translated. A side with fewer than MIN_TEXT_WORDS
words is no text to judge, and one whose main paragraphs CLD2 finds mostly in another language (an
untranslated copy inside the other language's template) fails the language check.

The decision over these rows is udfs.verify.decision's; the page-level measures (a page's prose, its language, its
own text, the host's navigation) are udfs.verify.pages' HostPages.

The thresholds and shares are VerificationConfig's fields (udfs.verify.verification_config), passed down as `config`; the
module-level names (NULL_QUANTILE ...) are their defaults.
"""
from __future__ import annotations

import random
import zlib

import numpy as np
import pandas as pd

from parascout.udfs.common import tables
from parascout.udfs.lexicon.lexicon import Lexicon, lexicon_for
from parascout.udfs.verify.pages import HostPages, as_list, is_missing, own_text_of
from parascout.udfs.verify.structure import (
    ThresholdRule,
    TreeRule,
    rule_from_dict,
    strand_features,
)
from parascout.udfs.verify.tsim import content_features, linked, page_text
from parascout.udfs.verify.verification_config import DEFAULT, VerificationConfig

#: the CONTENT_FEATURES a lexicon scores (a lexicon-free model sees them as 0)
LEXICON_FEATURES = ("tsim", "tsim_idf", "short_side_coverage", "diagonal_share", "best_side_coverage_idf",
                    "own_tsim_idf", "own_coverage_idf")
#: the own-text floor of a language pair judged without its lexicon (own_tsim_idf >= 0: no floor)
NO_OWN_TEXT_FLOOR = -1.0
#: the coverage floor of a language pair none of whose pairs is judged covered: own_coverage_idf is a share, none
#: exceeds it (finite, so the model's JSON in the report stays JSON)
NO_PAIR_COVERED = 1.0
CONFIDENT_SOURCES = ("link", "handle")
#: the source of a pair whose URLs differ only in their language markers (rank-pairs' STRAND handle)
URL_EXACT_SOURCE = "handle"
#: the source of a pair of pages without partners by URL that link each other's counterparts (rank-pairs' neighbours)
NEIGHBOUR_SOURCE = "neighbours"
#: verified_pairs.method of a pair residual_pairs accepted
RESIDUAL_METHOD = "residual-mutual-best"
#: VerificationConfig's defaults under their module names (the functions read the config passed down to them)
BOILERPLATE_IMAGE_SHARE = DEFAULT.boilerplate_image_share
MIN_BOILERPLATE_DOCS = DEFAULT.min_boilerplate_docs
NULL_QUANTILE = DEFAULT.null_quantile
MIN_NULL_PAIRS = DEFAULT.min_null_pairs
MIN_SELF_LABELS = DEFAULT.min_self_labels
MIN_LEXICON_COVERAGE = DEFAULT.min_lexicon_coverage
MIN_LEXICON_SEPARATION = DEFAULT.min_lexicon_separation
SPLICE_KEEP_SHARE = DEFAULT.splice_keep_share
SPLICED_SHARE = DEFAULT.spliced_share
SELF_LABEL_L2 = DEFAULT.self_label_l2
SELF_LABEL_ACCEPT_P = DEFAULT.self_label_accept_p
RESIDUAL_FLOOR_SHARE = DEFAULT.residual_floor_share
MIN_RESIDUAL_LENGTH_R = DEFAULT.min_residual_length_r
MIN_RESIDUAL_IMAGE_JACCARD = DEFAULT.min_residual_image_jaccard
MIN_TEXT_WORDS = DEFAULT.min_text_words
MIN_PROSE_WORDS = DEFAULT.min_prose_words
MIN_DETECT_CHARS = DEFAULT.min_detect_chars
MIN_SHARED_WORD_SHARE = DEFAULT.min_shared_word_share
NEAR_COPY_SHARE = DEFAULT.near_copy_share
MAX_COPY_HASH_PAGES = DEFAULT.max_copy_hash_pages

#: the columns verify_host and decide write: the verified_pairs table's, less what the job adds (site, lang_pair)
VERIFIED_SCHEMA = tables.ddl("verified_pairs", without=("site", "lang_pair"))
#: the per-host stage adds `role` (candidate | random | spliced | labelled), the pages' near-duplicate keys,
#: `mutual_best` (content_mutual_best) and HELD_OUT_COLUMNS: the LEXICON_FEATURES under the held-out lexicon that never
#: learned from the pair's pages (Lexicon.held_out_for) on the rows self labels come from (held_out_features), what
#: the decision is fitted on besides the lexicon's own scores (with_held_out_scores)
HELD_OUT_COLUMNS = tuple(f"held_out_{name}" for name in LEXICON_FEATURES)
FEATURES_SCHEMA = (VERIFIED_SCHEMA + ", role string, src_key string, trg_key string, mutual_best boolean, "
                   + ", ".join(f"{name} double" for name in HELD_OUT_COLUMNS))
VERIFIED_COLUMNS = [part.strip().split(" ", 1)[0] for part in VERIFIED_SCHEMA.split(", ")]
FEATURE_COLUMNS = [part.strip().split(" ", 1)[0] for part in FEATURES_SCHEMA.split(", ")]
#: reasons that mean the pair could not be judged (bad input), not that it was judged non-parallel
DOCUMENT_REASONS = ("missing_src_doc", "missing_trg_doc", "failed_src_doc", "failed_trg_doc")
BAD_REASONS = frozenset(DOCUMENT_REASONS)
FILTERED_REASONS = frozenset({"lang_mismatch", "untranslated", "content_rejected", "not_one_to_one", "no_text",
                              "dp_too_high", "too_few_chunks", "p_too_high", "rule_rejected"})
#: reasons of the language check: a side not in its pair language, or mostly the other side's language or text
LANGUAGE_REASONS = ("lang_mismatch", "untranslated")
#: the decision's features and the value used when one is missing (no text, no numbers on either page ...)
CONTENT_FEATURES = {"tsim": 0.0, "tsim_idf": 0.0, "short_side_coverage": 0.0, "diagonal_share": 0.0,
                    "best_side_coverage_idf": 0.0, "own_tsim_idf": 0.0, "own_coverage_idf": 0.0,
                    "number_overlap": 0.0, "rare_overlap": 0.0,
                    "text_paragraph_ratio": 0.0, "paragraph_length_r": 0.0, "dp": 1.0, "r": 0.0, "p": 1.0,
                    "image_jaccard": 0.0, "length_ratio": 0.0, "paragraph_ratio": 0.0}


def image_jaccard(source: list | None, target: list | None) -> tuple[float | None, int]:
    """(Jaccard of two image-name sets, shared count); None when neither page has an image."""
    a, b = set(as_list(source)), set(as_list(target))
    if not a and not b:
        return None, 0
    shared = len(a & b)
    return shared / len(a | b), shared


def ratio(a, b) -> float | None:
    """min/max of two non-negative counts (1 = equal); None when both are zero or missing."""
    if is_missing(a) or is_missing(b) or max(a, b) <= 0:
        return None
    return float(min(a, b)) / float(max(a, b))


def language_ok(expected: str | None, detected: str | None, reliable) -> bool:
    """CLD2 found the expected language, reliably (any reliable language when none is expected)."""
    if is_missing(reliable) or not bool(reliable) or not detected:
        return False
    return expected is None or detected == expected


def _document_problem(src: dict | None, trg: dict | None) -> str | None:
    for side, page in (("src", src), ("trg", trg)):
        if page is None or is_missing(page.get("status")):
            return f"missing_{side}_doc"
        if page["status"] != "ok":
            return f"failed_{side}_doc"
    return None


def own_text_features(src_text, trg_text, src_own, trg_own, lexicon: Lexicon | None, pages: HostPages,
                      features: dict) -> dict:
    """tsim_idf and best-side IDF coverage of the pages' own text (list items left out: a listing page's
    teasers are other pages' text, and change between language versions); the whole text's when neither page
    has list items, 0 when a side has list items only."""
    if src_own is None and trg_own is None:
        return {"own_tsim_idf": features.get("tsim_idf"), "own_coverage_idf": features.get("best_side_coverage_idf")}
    result = linked(src_own or src_text, trg_own or trg_text, lexicon, pages.idf, pages.idf, pages.unseen_idf)
    return {"own_tsim_idf": result["tsim_idf"] or 0.0, "own_coverage_idf": result["best_side_coverage_idf"] or 0.0}


def text_features(texts: tuple, lexicon: Lexicon | None, pages: HostPages) -> dict:
    """content_features and own_text_features of a pair's texts (source, target and their own texts) under a
    lexicon."""
    src_text, trg_text, src_own, trg_own = texts
    features = content_features(src_text, trg_text, lexicon, pages.idf, pages.idf, pages.unseen_idf, pages.rare)
    features.update(own_text_features(src_text, trg_text, src_own, trg_own, lexicon, pages, features))
    return features


def verify_pair(pair: dict, pages: HostPages, rule: ThresholdRule | TreeRule, lexicon: Lexicon | None,
                rng: random.Random | None = None) -> dict:
    """Structural and content features of one pair, the structural rule's verdict, and lang_ok
    (a pair with `spliced_with`: its target text spliced with that page's, drawn by `rng`)."""
    return _judged_pair(pair, pages, rule, lexicon, rng)[0]


def _judged_pair(pair: dict, pages: HostPages, rule: ThresholdRule | TreeRule, lexicon: Lexicon | None,
                 rng: random.Random | None = None) -> tuple[dict, tuple | None]:
    """(verify_pair's row, the texts its content features came from: source, target and their own texts; None when
    it has none)."""
    out = {name: pair.get(name) for name in ("host", "src_url", "trg_url", "src_lang", "trg_lang", "source")}
    src, trg = pages.pages.get(pair["src_url"]), pages.pages.get(pair["trg_url"])
    out["src_cld2_lang"] = src.get("cld2_lang") if src else None
    out["trg_cld2_lang"] = trg.get("cld2_lang") if trg else None
    problem = _document_problem(src, trg)
    if problem:
        return {**out, "lang_ok": False, "structure_ok": False, "parallel": False, "reason": problem}, None
    structure = strand_features(pages.structure(pair["src_url"]), pages.structure(pair["trg_url"]))
    jaccard, shared = image_jaccard(src["images"], trg["images"])
    found = (language_ok(pair.get("src_lang"), src["cld2_lang"], True)
             and language_ok(pair.get("trg_lang"), trg["cld2_lang"], True) and src["cld2_lang"] != trg["cld2_lang"])
    lang_ok = found and all(not is_missing(page["cld2_reliable"]) and bool(page["cld2_reliable"]) for page in (src, trg))
    features = {**structure.__dict__, "image_jaccard": jaccard, "shared_images": shared,
                "length_ratio": ratio(src["text_chars"], trg["text_chars"]),
                "paragraph_ratio": ratio(src["paragraphs"], trg["paragraphs"]), "lang_ok": lang_ok}
    src_text, trg_text = pages.text(pair["src_url"]), pages.text(pair["trg_url"])
    src_own, trg_own = pages.own_text(pair["src_url"]), pages.own_text(pair["trg_url"])
    if pair.get("spliced_with") and trg_text is not None:
        spliced = pages.spliced_paragraphs(pair["trg_url"], pair["spliced_with"], rng or random.Random(0))
        trg_text = None if spliced is None else page_text(spliced, trg["cld2_lang"], None, pages.vocabulary)
        trg_own = own_text_of(spliced, trg["cld2_lang"], pages.vocabulary)
    texts = None
    if src_text is not None and trg_text is not None and min(
            src_text.words, trg_text.words, pages.main_prose_words(pair["src_url"]),
            pages.main_prose_words(pair["trg_url"])) >= pages.config.min_text_words:
        texts = (src_text, trg_text, src_own, trg_own)
        features.update(text_features(texts, lexicon, pages))
    language_reason = None
    if texts is not None or is_url_exact(pair.get("source")) or is_neighbour_pair(pair.get("source")):
        # without main prose to judge (a table of contents, a table of paper sizes) the language check still reads
        # the whole page's prose; a URL-exact pair may then pass on its languages, structure and links (decide)
        language_reason = _page_language(pair, pages, features, found)
        lang_ok = features["lang_ok"] = language_reason is None
    structure_ok, reason = rule.decide(features)
    return {**out, **features, "structure_ok": structure_ok, "parallel": structure_ok and lang_ok,
            "reason": (language_reason or "lang_mismatch") if not lang_ok else reason}, texts


def _page_language(pair: dict, pages: HostPages, features: dict, found: bool) -> str | None:
    """None when each side's prose (HostPages.prose: the whole page's, code left out) is mostly in its pair language,
    else the reason it is not: untranslated (a side mostly the other side's paragraphs word for word or prose CLD2
    reliably finds in the other pair language) or lang_mismatch (mostly prose reliably in a third language). Sets
    src/trg_lang_share: the share of a side's prose that is neither. A page without prose falls back on CLD2's
    language of the whole page (`found`)."""
    src_url, trg_url = pair["src_url"], pair["trg_url"]
    src_share, src_other = pages.language_shares(src_url, pair.get("src_lang"), pair.get("trg_lang"), trg_url)
    trg_share, trg_other = pages.language_shares(trg_url, pair.get("trg_lang"), pair.get("src_lang"), src_url)
    features["src_lang_share"], features["trg_lang_share"] = src_share, trg_share
    if src_share is None or trg_share is None:
        return None if found else "lang_mismatch"
    if src_share > pages.config.min_lang_share and trg_share > pages.config.min_lang_share:
        return None
    return "untranslated" if max(src_other, trg_other) >= pages.config.min_lang_share else "lang_mismatch"


def held_out_features(result: pd.DataFrame, records: list[dict], texts: list[tuple | None],
                      lexicons: dict[tuple, Lexicon | None], pages: HostPages) -> pd.DataFrame:
    """HELD_OUT_COLUMNS of verify_host's rows the self labels may come from (random and spliced pairs, switcher or
    handle pairs, mutual-best pairs; self_labels), scored with texts the rows were scored with under the held-out
    lexicon of the pair's pages (Lexicon.held_out_for; none: NaN)."""
    eligible = (result["role"].isin(("random", "spliced"))
                | result["source"].fillna("").str.contains("|".join(CONFIDENT_SOURCES))
                | result["mutual_best"].fillna(False).astype(bool))
    scores = {name: [np.nan] * len(result) for name in HELD_OUT_COLUMNS}
    for row in np.flatnonzero(eligible.to_numpy()):
        pair, pair_texts = records[row], texts[row]
        lexicon = lexicons.get((pair.get("src_lang"), pair.get("trg_lang")))
        held_out = lexicon.held_out_for(pair["src_url"], pair["trg_url"]) if lexicon is not None else None
        if held_out is None or pair_texts is None:
            continue
        features = text_features(pair_texts, held_out, pages)
        for name in LEXICON_FEATURES:
            scores[f"held_out_{name}"][row] = features[name]
    return result.assign(**scores)


def random_pairs(pairs: pd.DataFrame, pages: HostPages, count: int, seed: int) -> list[dict]:
    """Up to `count` random same-host page pairs per language pair of `pairs`, none of them a candidate."""
    by_lang: dict[str, list[str]] = {}
    for url, row in sorted(pages.pages.items()):
        if row.get("status") == "ok" and row.get("cld2_lang"):
            by_lang.setdefault(row["cld2_lang"], []).append(url)
    taken = set(zip(pairs["src_url"], pairs["trg_url"]))
    host = pairs["host"].iloc[0]
    rng = random.Random(seed ^ zlib.crc32(str(host).encode()))
    rows = []
    for src_lang, trg_lang in sorted(set(zip(pairs["src_lang"], pairs["trg_lang"]))):
        sources, targets = by_lang.get(src_lang, []), by_lang.get(trg_lang, [])
        if not sources or not targets:
            continue
        for _ in range(min(count, len(sources) * len(targets))):
            src, trg = rng.choice(sources), rng.choice(targets)
            if (src, trg) not in taken:
                taken.add((src, trg))
                rows.append({"host": host, "src_url": src, "trg_url": trg, "src_lang": src_lang,
                             "trg_lang": trg_lang, "source": "random"})
    return rows


def spliced_pairs(pairs: pd.DataFrame, pages: HostPages, count: int, seed: int) -> list[dict]:
    """SPLICED_SHARE of the confident pairs per language pair (at most `count`), each with a random other
    target page to splice in."""
    host = pairs["host"].iloc[0]
    rng = random.Random(seed ^ zlib.crc32(f"splice:{host}".encode()))
    confident = pairs[pairs["source"].fillna("").str.contains("|".join(CONFIDENT_SOURCES))
                      & pairs["src_url"].isin(pages.pages.keys()) & pairs["trg_url"].isin(pages.pages.keys())]
    rows = []
    for (src_lang, trg_lang), group in confident.groupby(["src_lang", "trg_lang"], sort=True):
        targets = sorted(url for url, row in pages.pages.items() if row.get("status") == "ok"
                         and row.get("cld2_lang") == trg_lang and row.get("text_paragraphs") is not None)
        records = group.sort_values(["src_url", "trg_url"]).to_dict("records")
        for pair in rng.sample(records, min(count, round(pages.config.spliced_share * len(records)))) if len(targets) > 1 else []:
            other = rng.choice([url for url in targets if url != pair["trg_url"]])
            rows.append({**{key: pair[key] for key in ("host", "src_url", "trg_url", "src_lang", "trg_lang")},
                         "source": "spliced", "spliced_with": other})
    return rows


def verify_host(pairs: pd.DataFrame, pages: pd.DataFrame, rule: dict, lexicons: list[Lexicon],
                random_count: int = 0, seed: int = 0, config: VerificationConfig = DEFAULT) -> pd.DataFrame:
    """FEATURE_COLUMNS rows of a host's pairs (role = pairs' `role` column or 'candidate') and, per language
    pair, of `random_count` random page pairs (role 'random') and spliced confident pairs (role 'spliced').

    A host's language pairs are verified apart, each with the pages its pairs name: its word IDF, near-copies,
    random pairs and mutual best pairs are those of a run of that pair alone, whatever other pairs it is given."""
    if pairs.empty:
        return pd.DataFrame(columns=FEATURE_COLUMNS)
    language_pairs = (pairs.groupby([pairs["src_lang"].fillna(""), pairs["trg_lang"].fillna("")], sort=True)
                      if {"src_lang", "trg_lang"} <= set(pairs.columns) else None)
    if language_pairs is not None and language_pairs.ngroups > 1:
        return pd.concat([verify_host(group, pages[pages["url"].isin(set(group["src_url"]) | set(group["trg_url"]))],
                                      rule, lexicons, random_count, seed, config) for _, group in language_pairs],
                         ignore_index=True)
    decision = rule_from_dict(rule)
    host_pages = HostPages(pages, config)
    roles = pairs["role"] if "role" in pairs else pd.Series("candidate", index=pairs.index)
    rows, texts = [], []
    chosen: dict[tuple, Lexicon | None] = {}
    records = [{**pair, "role": role} for pair, role in zip(pairs.to_dict("records"), roles)]
    if random_count:
        records += [{**pair, "role": "random"} for pair in random_pairs(pairs, host_pages, random_count, seed)]
        records += [{**pair, "role": "spliced"} for pair in spliced_pairs(pairs, host_pages, random_count, seed)]
    rng = random.Random(seed)
    for pair in records:
        key = (pair.get("src_lang"), pair.get("trg_lang"))
        if key not in chosen:
            chosen[key] = lexicon_for(lexicons, *key)  # tsim cuts it to the host's words once
        row, pair_texts = _judged_pair(pair, host_pages, decision, chosen[key], rng)
        rows.append({**row, "role": pair["role"], "method": decision.method,
                     "src_key": host_pages.key(pair["src_url"]), "trg_key": host_pages.key(pair["trg_url"])})
        texts.append(pair_texts)
    result = pd.DataFrame(rows, columns=FEATURE_COLUMNS)
    result["url_exact"] = url_exact(result)
    result["link_agreement"] = link_agreements(result, host_pages)
    result["url_log_odds"] = result["p_parallel"] = np.nan  # the decision's (decide)
    result["evidence"] = pd.Series(None, index=result.index, dtype=object)
    result["mutual_best"] = content_mutual_best(result)
    result = held_out_features(result, records, texts, chosen, host_pages)
    for column in ("n", "aligned_chunks", "shared_images", "src_words", "trg_words"):
        result[column] = result[column].astype("Int64")
    return result


def link_agreements(frame: pd.DataFrame, pages: HostPages) -> pd.Series:
    """Per candidate pair: the share of its source page's links, among those whose target has a URL-exact partner in
    the frame's candidates, that go to a page whose partner the target page links (None below the config's
    min_counterpart_links such links: the page has no links of its own). The site's navigation
    (HostPages.navigation_links) is left out: two language versions of one template link each other's counterparts
    whatever the page, and a table of contents that every page of a manual carries is navigation. A page's own links
    agree when it translates the other (a manual's table of contents), and mostly not when it lists other items in
    each language (a blog's second page of posts)."""
    exact = frame[(frame["role"] == "candidate") & frame["url_exact"]]
    counterparts: dict[str, set[str]] = {}
    for src, trg in zip(exact["src_url"], exact["trg_url"]):
        counterparts.setdefault(src, set()).add(trg)
    navigation = pages.navigation_links()
    values = []
    for role, src, trg in zip(frame["role"], frame["src_url"], frame["trg_url"]):
        src_links = set(as_list((pages.pages.get(src) or {}).get("outlinks"))) - navigation
        mappable = [link for link in src_links if link in counterparts]
        if role != "candidate" or len(mappable) < pages.config.min_counterpart_links:
            values.append(np.nan)
            continue
        trg_links = set(as_list((pages.pages.get(trg) or {}).get("outlinks")))
        values.append(sum(bool(counterparts[link] & trg_links) for link in mappable) / len(mappable))
    return pd.Series(values, index=frame.index, dtype=float)


def page_keys(frame: pd.DataFrame) -> dict[str, pd.Series]:
    """{"src": ..., "trg": ...}: each side's page as one page with its near-duplicates (its src_key / trg_key, else
    its URL)."""
    return {side: frame[f"{side}_key"].fillna(frame[f"{side}_url"]) for side in ("src", "trg")}


def content_mutual_best(frame: pd.DataFrame) -> pd.Series:
    """Candidate pairs whose own_tsim_idf is, alone, the best of every candidate pair of its source page and of its
    target page (near-duplicates as one page, per language pair, both sides in their languages): a host's pairs
    that the pages' text alone makes confident, whatever proposed them."""
    judged = (frame["role"] == "candidate") & frame["lang_ok"].fillna(False).astype(bool) & frame["tsim"].notna()
    rows = frame[judged]
    if rows.empty:
        return pd.Series(False, index=frame.index)
    score = pd.to_numeric(rows["own_tsim_idf"], errors="coerce").fillna(0.0).round(9)  # equal texts tie
    pages = page_keys(rows)
    best = pd.Series(True, index=rows.index)
    for side, other in (("src", "trg"), ("trg", "src")):
        keys = [rows["src_lang"], rows["trg_lang"], pages[side]]
        top = score == score.groupby(keys).transform("max")
        partners = pages[other].where(top).groupby(keys).transform("nunique")  # a page and its copy tie as one
        best &= top & (partners == 1)
    copy = (pages["src"] != rows["src_url"]) | (pages["trg"] != rows["trg_url"])
    order = copy.sort_values(kind="stable").index  # of a page's pair and its copy's, the page's
    once = ~pd.concat([rows["src_lang"], rows["trg_lang"], pages["src"], pages["trg"]], axis=1).loc[order].duplicated()
    return (best & once.reindex(rows.index)).reindex(frame.index, fill_value=False)


def verify_frame(pairs: pd.DataFrame, pages: pd.DataFrame, rule: ThresholdRule | TreeRule,
                 lexicons: list[Lexicon] = (), random_count: int = 0, seed: int = 0,
                 config: VerificationConfig = DEFAULT) -> pd.DataFrame:
    """Feature rows of pairs of any hosts (pandas, no Spark): verify_host per host."""
    frames = [verify_host(group, pages[pages["url"].isin(set(group["src_url"]) | set(group["trg_url"]))],
                          rule.to_dict(), list(lexicons), random_count, seed, config) for _, group in pairs.groupby("host")]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=FEATURE_COLUMNS)


def is_url_exact(source: str | None) -> bool:
    """A pair whose URLs differ only in their language markers: a STRAND handle is among what proposed it (`source`,
    rank-pairs' comma-joined sources)."""
    return names_source(source, URL_EXACT_SOURCE)


def is_neighbour_pair(source: str | None) -> bool:
    """A pair of pages without partners by URL that link the counterparts of what the other links: rank-pairs'
    neighbours are among what proposed it (`source`)."""
    return names_source(source, NEIGHBOUR_SOURCE)


def names_source(sources: str | None, source: str) -> bool:
    """rank-pairs' comma-joined `sources` of a pair name `source`."""
    return isinstance(sources, str) and source in sources.split(",")


def proposed_by(frame: pd.DataFrame, source: str) -> pd.Series:
    """Rows whose sources name `source` (names_source)."""
    if "source" not in frame:
        return pd.Series(False, index=frame.index)
    return frame["source"].map(lambda sources: names_source(sources, source)).astype(bool)


def url_exact(frame: pd.DataFrame) -> pd.Series:
    """is_url_exact of each row's source."""
    return proposed_by(frame, URL_EXACT_SOURCE)
