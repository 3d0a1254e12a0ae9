"""Pair verification from archived content: STRAND structure, what the pages say, and the decision.

Per host and language pair (`verify_host`, the body of a Spark cogroup of a host's pairs with its pages), every
pair gets the structural features of udfs.verify.structure (dp, n, r, p), the Jaccard of distinctive
image names, length and paragraph ratios, the CLD2 check, and — from the `texts` table — the
content features of udfs.verify.tsim (tsim under a lexicon, tsim_idf with the host's IDF, number and
rare-token overlap, paragraph correlations, per-paragraph CLD2 shares). Pages are tokenised once
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

Decision (`ContentModel`): a logistic model over CONTENT_FEATURES fitted on pairs the archive
itself labels (`self_labels`): positives are pairs a language-switcher link or a STRAND handle
proposed whose own_tsim_idf is above what nearly every random same-site pair reaches (by tsim_idf a
switcher-linked listing page passed as a translation); negatives are the random same-site pairs and the
spliced pairs; on a host and language pair where no switcher link or handle gave a positive, its candidate pairs
that are each other's best by their own text (`content_mutual_best`) above the random pairs' null are positives too.
One model per language pair (its features sit on the scale of its lexicon: an
English–Arabic translation links fewer words than an English–French one), the model of all pairs for a
language pair with too few labels; features are clipped to the range the labels showed. A self-labelled model
accepts a pair only if its own_tsim_idf also beats its language pair's random pairs' NULL_QUANTILE (all random
pairs' where the language pair has too few): a model fitted on few labels may take a page built on another
page's template, with other text, for its layout alone. `--learn-from`
labels replace the self labels. The URLs are evidence in the same decision (`decide`): a pair whose URLs differ only
in their language markers adds the log-odds its host's own such pairs earn (url_log_odds), so a URL-exact
translation the content model doubts is kept, and a sibling page built on the same template does not displace it;
content still rejects a URL-exact pair that is untranslated or two different documents. `one_to_one` then keeps each
page (near-duplicates counted as one page) in at most one parallel pair per language pair, best p_parallel first;
`residual_pairs` then pairs the pages
it left without a partner whose own texts pick each other (method RESIDUAL_METHOD): a lexicon bootstrapped from the
archive knows the pairs it learned from far better than the rest, and the model it calibrates rejects a host's last
few translations.

The thresholds and shares are VerificationConfig's fields (udfs.verify.verification_config), passed down as `config`; the
module-level names (NULL_QUANTILE ...) are their defaults.
"""
from __future__ import annotations

import dataclasses
import math
import random
import re
import zlib
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from parascout.udfs.common.code_text import code_flags
from parascout.udfs.common.lexicon import Lexicon, lexicon_for, main_paragraphs, tokenize
from parascout.udfs.fetch.html_text import cld2_language
from parascout.udfs.verify.structure import (
    Linearised,
    ThresholdRule,
    TreeRule,
    linearise,
    rule_from_dict,
    strand_features,
)
from parascout.udfs.verify.tsim import Vocabulary, content_features, inverse_document_frequencies, linked, page_text
from parascout.udfs.verify.verification_config import DEFAULT, VerificationConfig

#: the CONTENT_FEATURES a lexicon scores (a lexicon-free model sees them as 0)
LEXICON_FEATURES = ("tsim", "tsim_idf", "short_side_coverage", "diagonal_share", "best_side_coverage_idf",
                    "own_tsim_idf", "own_coverage_idf")
#: the own-text floor of a language pair judged without its lexicon (own_tsim_idf >= 0: no floor)
NO_OWN_TEXT_FLOOR = -1.0
CONFIDENT_SOURCES = ("link", "handle")
#: the source of a pair whose URLs differ only in their language markers (rank-pairs' STRAND handle)
URL_EXACT_SOURCE = "handle"
#: the source of a pair of pages without partners by URL that link each other's counterparts (rank-pairs' neighbours)
NEIGHBOUR_SOURCE = "neighbours"
#: verified_pairs.method of a pair residual_pairs accepted
RESIDUAL_METHOD = "residual-mutual-best"
WORD = re.compile(r"[^\W\d_]{2,}")
#: texts.paragraphs type of a list item (a teaser, a link list): not the page's own text
LIST_ITEM = "list_item"
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

CONTENT_SCHEMA = (
    "tsim double, tsim_idf double, short_side_coverage double, diagonal_share double, "
    "best_side_coverage_idf double, own_tsim_idf double, own_coverage_idf double, number_overlap double, "
    "rare_overlap double, "
    "text_paragraph_ratio double, paragraph_length_r double, src_lang_share double, trg_lang_share double, "
    "src_words int, trg_words int"
)
VERIFIED_SCHEMA = (
    "host string, src_url string, trg_url string, src_lang string, trg_lang string, source string, "
    "src_cld2_lang string, trg_cld2_lang string, dp double, n int, r double, p double, aligned_chunks int, "
    "image_jaccard double, shared_images int, length_ratio double, paragraph_ratio double, lang_ok boolean, "
    f"{CONTENT_SCHEMA}, structure_ok boolean, link_agreement double, p_parallel_content double, url_exact boolean, "
    "url_log_odds double, "
    "p_parallel double, parallel boolean, method string, evidence string, reason string"
)
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


def _document_problem(src: dict | None, trg: dict | None) -> str | None:
    for side, page in (("src", src), ("trg", trg)):
        if page is None or _missing(page.get("status")):
            return f"missing_{side}_doc"
        if page["status"] != "ok":
            return f"failed_{side}_doc"
    return None


class HostPages:
    """A host's pages by URL, their texts prepared for tsim once, and the host's IDF."""

    def __init__(self, pages: pd.DataFrame, config: VerificationConfig = DEFAULT):
        self.config = config
        self.pages = {row["url"]: row for row in pages.to_dict("records")} if len(pages) else {}
        self._texts: dict[str, object] = {}
        self._structures: dict[str, Linearised] = {}
        self._codes: dict[str, str] = {}  # one token -> character code for all the host's pages
        self._copies: dict[str, str] | None = None  # a template copy -> the page it copies (key)
        self._navigation: frozenset[str] | None = None  # links on most of the host's pages (navigation_links)
        self.vocabulary = Vocabulary()  # the host's words as integer ids, shared by its pages' texts
        texts = [self.text(url) for url in self.pages]
        self.idf, self.unseen_idf, self.rare = inverse_document_frequencies(t for t in texts if t is not None)

    def navigation_links(self) -> frozenset[str]:
        """Links on more than BOILERPLATE_IMAGE_SHARE of the host's pages (and on MIN_BOILERPLATE_DOCS): the site's
        navigation, as its logos are its boilerplate images."""
        if self._navigation is None:
            counts = Counter(link for row in self.pages.values() for link in set(_as_list(row.get("outlinks"))))
            least = max(self.config.min_boilerplate_docs, self.config.boilerplate_image_share * len(self.pages))
            self._navigation = frozenset(link for link, count in counts.items() if count > least)
        return self._navigation

    def structure(self, url: str) -> Linearised:
        if url not in self._structures:
            self._structures[url] = linearise(_as_list(self.pages[url]["structure"]), self._codes)
        return self._structures[url]

    def key(self, url: str) -> str:
        """The page a near-duplicate stands for (texts.duplicate_of, else the page a template copy copies), else
        the URL itself."""
        if self._copies is None:
            self._copies = self._template_copies()
        if url in self._copies:
            return self._copies[url]
        duplicate_of = (self.pages.get(url) or {}).get("duplicate_of")
        if _missing(duplicate_of) or not duplicate_of or self._copies.get(duplicate_of) == url:
            return url  # (texts may keep a template copy's URL for the page it copies)
        return duplicate_of

    def prose_hashes(self, url: str) -> frozenset[str]:
        """The hashes of a page's prose paragraphs (prose)."""
        key = ("hashes", url)
        if key not in self._texts:
            self._texts[key] = frozenset(p["hash"] for p in self.prose(url) if p.get("hash"))
        return self._texts[key]

    def language_shares(self, url: str, lang: str | None, other: str | None, other_url: str
                        ) -> tuple[float | None, float]:
        """(share of the page's prose in no language but `lang` as far as one can tell, share that is `other`'s) by
        characters of its prose paragraphs (prose). A paragraph is `other`'s when CLD2 finds `other` in it, or when
        the other page holds it or most of its words (is_shared) and CLD2 finds `lang` neither in it nor in the two
        pages' shared paragraphs together (the copy is on the page whose language the shared text is not); another
        language's when CLD2 finds that; else the page's (a short line CLD2 cannot tell is no evidence of an
        untranslated one). (None, 0) when the page has no prose."""
        prose = self.prose(url)
        shared = [self.is_shared(p, other_url) for p in prose]
        shared_lang = self.paragraph_language("\n".join(
            [p["text"] for p, is_shared in zip(prose, shared) if is_shared]
            + [p["text"] for p in self.prose(other_url) if self.is_shared(p, url)]))
        # short lines are judged together, and only as a third language: CLD2 confuses the two pair languages'
        # shared vocabulary in headings and captions ("Figure 17.53. Le menu « Filtres de distorsion »": English)
        short_lang = self.paragraph_language("\n".join(
            p["text"] for p, is_shared in zip(prose, shared)
            if len(p["text"]) < self.config.min_detect_chars and not is_shared))
        third = short_lang if short_lang not in (lang, other) else None
        total = other_chars = foreign_chars = 0
        for paragraph, is_shared in zip(prose, shared):
            size = len(paragraph["text"])
            total += size
            detected = self.paragraph_language(paragraph["text"])
            if detected is None and size < self.config.min_detect_chars and not is_shared:
                detected = third
            if (detected is not None and detected == other) or (
                    detected != lang and shared_lang != lang and is_shared):
                other_chars += size
            elif detected is not None and detected != lang:
                foreign_chars += size
        if not total or not lang:
            return None, 0.0
        return 1.0 - (other_chars + foreign_chars) / total, other_chars / total

    def is_shared(self, paragraph: dict, other_url: str) -> bool:
        """The other page holds the paragraph word for word, or most of its words and MIN_PROSE_WORDS of them at least
        (one cognate is half of a two-word title: `2.4.1 Ausgelassenes Material`)."""
        if paragraph.get("hash") in self.prose_hashes(other_url):
            return True
        words, other_words = WORD.findall(paragraph["text"].lower()), self.prose_words(other_url)
        shared = sum(word in other_words for word in words)
        return shared >= max(self.config.min_prose_words, self.config.min_shared_word_share * len(words))

    def main_prose_words(self, url: str) -> int:
        """How many words the page's main prose holds (prose, boilerplate left out; Han and kana a word per
        character, as tsim counts them): a page whose main text is a table of values or a list of names gives its
        content too little to judge."""
        key = ("main_prose_words", url)
        if key not in self._texts:
            self._texts[key] = sum(len(tokenize(p["text"])) for p in self.prose(url) if not p.get("boilerplate"))
        return self._texts[key]

    def prose_words(self, url: str) -> frozenset[str]:
        """The lower-cased words of the page's prose."""
        key = ("prose_words", url)
        if key not in self._texts:
            self._texts[key] = frozenset(WORD.findall("\n".join(p["text"] for p in self.prose(url)).lower()))
        return self._texts[key]

    def prose(self, url: str) -> list[dict]:
        """The page's paragraphs that are prose, as a reader sees the page: its navigation and table of contents
        too, translated with the page or left as they are, whatever the extractor judged boilerplate (a site's
        template is translated or not with its pages); not code, identifiers, commands or numbers, whatever their
        markup (udfs.common.code_text: their language says nothing of the page's, a French manual quotes English
        code, and a copy of them is no untranslated text); MIN_PROSE_WORDS words or more (a text without spaces,
        as Chinese or Japanese write, when it is longer than a label)."""
        key = ("prose", url)
        if key not in self._texts:
            paragraphs = [p for p in _as_list((self.pages.get(url) or {}).get("text_paragraphs"))
                          if p and (p.get("text") or "").strip()]
            code = code_flags([(p["text"], p.get("type")) for p in paragraphs])
            self._texts[key] = [p for p, is_code in zip(paragraphs, code)
                                if not is_code and _is_prose(p["text"], self.config.min_prose_words)]
        return self._texts[key]

    def paragraph_language(self, text: str) -> str | None:
        """CLD2's language of a text when it is reliable and the text MIN_DETECT_CHARS long, else None (cached per
        host)."""
        key = ("paragraph_lang", text)
        if key not in self._texts:
            lang, reliable, _ = cld2_language(text) if len(text) >= self.config.min_detect_chars else (None, False, 0)
            self._texts[key] = lang if reliable else None
        return self._texts[key]

    def template_lang(self, url: str) -> str | None:
        """CLD2's reliable language of a page's boilerplate (navigation, footer, teasers), None when unsure."""
        key = ("template", url)
        if key not in self._texts:
            boilerplate = [p.get("text") or "" for p in _as_list((self.pages.get(url) or {}).get("text_paragraphs"))
                           if p.get("boilerplate")]
            lang, reliable, _ = cld2_language("\n".join(boilerplate))
            self._texts[key] = lang if reliable else None
        return self._texts[key]

    def _template_copies(self) -> dict[str, str]:
        """url -> the page it copies: an untranslated copy of a page inside another language version's template
        (its main text in the page's language, NEAR_COPY_SHARE of its main paragraphs the page's, its boilerplate
        reliably in another language, the page's in its own): one page for the 1-1 alignment, the page winning."""
        hashes, by_hash = {}, {}
        for url, row in self.pages.items():
            own = {p.get("hash") for p in main_paragraphs(row.get("text_paragraphs")) if p.get("hash")}
            if row.get("status") == "ok" and row.get("cld2_lang") and len(own) >= 2:
                hashes[url] = own
                for value in own:
                    by_hash.setdefault((row["cld2_lang"], value), []).append(url)
        copies = {}
        for url, own in hashes.items():
            lang = self.pages[url]["cld2_lang"]
            shared = Counter(other for value in own if len(by_hash[(lang, value)]) <= self.config.max_copy_hash_pages
                             for other in by_hash[(lang, value)] if other != url)
            for other, count in sorted(shared.items()):
                if count >= self.config.near_copy_share * min(len(own), len(hashes[other])) and self.template_lang(other) == lang \
                        and self.template_lang(url) not in (None, lang):
                    copies[url] = other
                    break
        return copies

    def spliced_paragraphs(self, url: str, other: str, rng: random.Random) -> list[dict] | None:
        """`url`'s main paragraphs with part of them replaced by `other`'s, each page's in its order."""
        own, foreign = (main_paragraphs(self.pages[key].get("text_paragraphs")) for key in (url, other))
        if len(own) < 2 or not foreign:
            return None
        keep = max(1, round(self.config.splice_keep_share * len(own)))
        kept = [own[k] for k in sorted(rng.sample(range(len(own)), keep))]
        added = foreign[:len(own) - keep]
        slots = set(rng.sample(range(len(kept) + len(added)), len(added)))
        kept_iter, added_iter = iter(kept), iter(added)
        return [next(added_iter) if index in slots else next(kept_iter) for index in range(len(kept) + len(added))]

    def text(self, url: str):
        if url not in self._texts:
            row = self.pages.get(url) or {}
            paragraphs = row.get("text_paragraphs")
            self._texts[url] = None if paragraphs is None and not row.get("main_text") else page_text(
                _as_list(paragraphs), row.get("cld2_lang"), row.get("main_text"), self.vocabulary)
        return self._texts[url]

    def own_text(self, url: str):
        """The text of `url` without its list items (None: the page has none, so its own text is all of it)."""
        key = ("own", url)
        if key not in self._texts:
            row = self.pages.get(url) or {}
            self._texts[key] = _own_text(main_paragraphs(row.get("text_paragraphs")), row.get("cld2_lang"),
                                         self.vocabulary)
        return self._texts[key]


def _is_prose(text: str, min_words: int = DEFAULT.min_prose_words) -> bool:
    """MIN_PROSE_WORDS words, or a text written without spaces (Chinese, Japanese: a word per character as tsim
    counts them, a space or two between numbers or names) longer than a label."""
    words = len(text.split())
    return words >= min_words or (words == 1 and len(text.strip()) >= 4 * min_words) or \
        len(tokenize(text)) >= 4 * min_words


def _own_text(paragraphs: list[dict] | None, lang: str | None, vocabulary: Vocabulary | None = None):
    """page_text of the paragraphs that are not list items; None when there are no list items."""
    if not paragraphs or not any(p.get("type") == LIST_ITEM for p in paragraphs):
        return None
    return page_text([p for p in paragraphs if p.get("type") != LIST_ITEM], lang, None, vocabulary)


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
    lang_ok = found and all(not _missing(page["cld2_reliable"]) and bool(page["cld2_reliable"]) for page in (src, trg))
    features = {**structure.__dict__, "image_jaccard": jaccard, "shared_images": shared,
                "length_ratio": ratio(src["text_chars"], trg["text_chars"]),
                "paragraph_ratio": ratio(src["paragraphs"], trg["paragraphs"]), "lang_ok": lang_ok}
    src_text, trg_text = pages.text(pair["src_url"]), pages.text(pair["trg_url"])
    src_own, trg_own = pages.own_text(pair["src_url"]), pages.own_text(pair["trg_url"])
    if pair.get("spliced_with") and trg_text is not None:
        spliced = pages.spliced_paragraphs(pair["trg_url"], pair["spliced_with"], rng or random.Random(0))
        trg_text = None if spliced is None else page_text(spliced, trg["cld2_lang"], None, pages.vocabulary)
        trg_own = _own_text(spliced, trg["cld2_lang"], pages.vocabulary)
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
        src_links = set(_as_list((pages.pages.get(src) or {}).get("outlinks"))) - navigation
        mappable = [link for link in src_links if link in counterparts]
        if role != "candidate" or len(mappable) < pages.config.min_counterpart_links:
            values.append(np.nan)
            continue
        trg_links = set(_as_list((pages.pages.get(trg) or {}).get("outlinks")))
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


# ---- the decision --------------------------------------------------------------------------
def feature_matrix(frame: pd.DataFrame) -> np.ndarray:
    """CONTENT_FEATURES of a frame as floats, missing values filled."""
    columns = [pd.to_numeric(frame[name], errors="coerce").fillna(missing).to_numpy(dtype=float)
               if name in frame else np.full(len(frame), missing) for name, missing in CONTENT_FEATURES.items()]
    return np.column_stack(columns)


def self_labels(frame: pd.DataFrame, config: VerificationConfig = DEFAULT) -> tuple[pd.DataFrame, dict]:
    """(rows with a `label`, stats): confident pairs whose own text (list items left out) beats their language
    pair's random pairs' NULL_QUANTILE of own_tsim_idf (all random pairs' where it has too few) as positives — a listing page's shared teasers do not make it a translation, a
    section page's differing teasers do not make it none; random same-site pairs and spliced confident pairs as
    negatives. stats' lexicon_free_language_pairs: lexicon_free_pairs of the candidates."""
    judged = frame[frame["reason"].isna() | ~frame["reason"].isin(DOCUMENT_REASONS)]
    randoms = judged[judged["role"] == "random"]
    spliced = judged[(judged["role"] == "spliced") & judged["tsim"].notna()]
    nulls = {}
    for column in ("tsim_idf", "own_tsim_idf"):
        null = pd.to_numeric(randoms[column], errors="coerce").dropna()
        nulls[column] = float(null.quantile(config.null_quantile)) if len(null) else 1.0
    candidates = judged[(judged["role"] == "candidate") & judged["lang_ok"].astype(bool)]
    own = pd.to_numeric(candidates["own_tsim_idf"], errors="coerce").fillna(0)
    confident = candidates["source"].fillna("").str.contains("|".join(CONFIDENT_SOURCES))
    pair_nulls = language_pair_nulls(randoms, config)
    # each language pair against its own random pairs (all of them where it has too few): a pair's labels do not
    # depend on the other pairs verified in the same run
    keys = candidates["src_lang"].astype(str) + "-" + candidates["trg_lang"].astype(str)
    own_null = keys.map(pair_nulls).astype(float).fillna(nulls["own_tsim_idf"]).to_numpy()
    by_link = confident & (own > own_null)
    by_text = _mutual_best_positives(candidates, own, pair_nulls, own_null) & ~_taught(candidates, by_link)
    positives = candidates[by_link | by_text]
    labelled = pd.concat([positives.assign(label=True), randoms.assign(label=False), spliced.assign(label=False)],
                         ignore_index=True)
    return labelled, {"positives": len(positives), "confident_pairs": int(confident.sum()),
                      "mutual_best_positives": int(by_text.sum()),
                      "negatives": len(randoms) + len(spliced), "spliced_negatives": len(spliced),
                      "null_tsim_idf_quantile": round(nulls["tsim_idf"], 4),
                      "null_own_tsim_idf_quantile": round(nulls["own_tsim_idf"], 4),
                      "null_own_tsim_idf_by_language_pair": {key: round(value, 4) for key, value in pair_nulls.items()},
                      "lexicon_free_language_pairs": lexicon_free_pairs(candidates, pair_nulls, config)}


def with_held_out_scores(rows: pd.DataFrame) -> pd.DataFrame:
    """Self labels (self_labels' rows) and, in a language pair whose lexicon has held-out lexicons (HELD_OUT_COLUMNS
    scored), each row's twin as a lexicon that never learned from its pages scores it: its held-out scores as its
    LEXICON_FEATURES, or its own scores where the lexicon never learned from its pages either. A lexicon bootstrapped
    from the archive learned from most of its confident pairs and scores them far above the translations it never
    saw; fitted on both, the decision knows a translation's scores from pages the lexicon learned from and from pages
    it did not."""
    if HELD_OUT_COLUMNS[0] not in rows or rows.empty:
        return rows
    scored = pd.to_numeric(rows["held_out_tsim"], errors="coerce").notna()
    calibrated = scored.groupby([rows["src_lang"], rows["trg_lang"]]).transform("any").astype(bool)
    if not calibrated.any():
        return rows
    twins = rows[calibrated]
    held_out = scored[calibrated]
    twins = twins.assign(**{name: twins[f"held_out_{name}"].where(held_out, twins[name]) for name in LEXICON_FEATURES})
    return pd.concat([rows, twins], ignore_index=True)


def language_pair_nulls(randoms: pd.DataFrame, config: VerificationConfig = DEFAULT) -> dict[str, float]:
    """"src-trg" -> the NULL_QUANTILE of that language pair's random same-site pairs' own_tsim_idf (language pairs
    with MIN_NULL_PAIRS random pairs with text)."""
    scores = pd.to_numeric(randoms["own_tsim_idf"], errors="coerce").dropna()
    if scores.empty:
        return {}
    groups = scores.groupby([randoms["src_lang"][scores.index], randoms["trg_lang"][scores.index]])
    return {f"{src}-{trg}": float(group.quantile(config.null_quantile)) for (src, trg), group in groups
            if len(group) >= config.min_null_pairs}


def lexicon_free_pairs(candidates: pd.DataFrame, pair_nulls: dict[str, float],
                       config: VerificationConfig = DEFAULT) -> list[str]:
    """"src-trg" of the language pairs with MIN_SELF_LABELS candidates (with text) whose median best_side_coverage_idf
    is below MIN_LEXICON_COVERAGE and whose mutual-best candidates' median own_tsim_idf is below
    MIN_LEXICON_SEPARATION times their null (`pair_nulls`, language_pair_nulls): own-text scores that do not tell
    translations from random pairs."""
    if not {"best_side_coverage_idf", "own_tsim_idf", "mutual_best", "src_lang", "trg_lang"} <= set(candidates.columns):
        return []
    weak = []
    for (src, trg), group in candidates.groupby(["src_lang", "trg_lang"]):
        coverage = pd.to_numeric(group["best_side_coverage_idf"], errors="coerce").dropna()
        best = pd.to_numeric(group["own_tsim_idf"][group["mutual_best"].fillna(False).astype(bool)], errors="coerce")
        null = pair_nulls.get(f"{src}-{trg}")
        if (len(coverage) >= config.min_self_labels and coverage.median() < config.min_lexicon_coverage
                and null is not None and best.notna().any() and best.median() < config.min_lexicon_separation * null):
            weak.append(f"{src}-{trg}")
    return sorted(weak)


def _without_lexicon(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its LEXICON_FEATURES at 0 (a model fitted on it ignores them: its ranges clip them to 0)."""
    return frame.assign(**{name: 0.0 for name in LEXICON_FEATURES})


def _taught(candidates: pd.DataFrame, positives: pd.Series) -> pd.Series:
    """Candidates of a host and language pair that has a positive among `positives`."""
    keys = [candidates["host"], candidates["src_lang"], candidates["trg_lang"]]
    return positives.groupby(keys).transform("any").fillna(False).astype(bool)


def _mutual_best_positives(candidates: pd.DataFrame, own: pd.Series, pair_nulls: dict[str, float],
                           null: np.ndarray) -> pd.Series:
    """Candidates that are their pages' content_mutual_best with an own_tsim_idf above both the random pairs' null
    (`null`, per candidate) and their language pair's own random pairs' NULL_QUANTILE (`pair_nulls`, language_pair_nulls; self_labels takes
    them on a host and language pair that no switcher link or handle taught anything: its translations still label
    the model's scale)."""
    if "mutual_best" not in candidates or candidates.empty:
        return pd.Series(False, index=candidates.index)
    thresholds = np.maximum(null, [pair_nulls.get(f"{src}-{trg}", 1.0)
                                   for src, trg in zip(candidates["src_lang"], candidates["trg_lang"])])
    return candidates["mutual_best"].fillna(False).astype(bool) & (own > thresholds)


@dataclass(frozen=True)
class ContentModel:
    """Logistic regression over CONTENT_FEATURES (standardised); a null-threshold rule when labels are few.
    `language_pairs`: ("src-trg", model) of the language pairs with their own model (fit_per_language_pair);
    the other pairs get this one."""

    weights: tuple[float, ...] | None
    bias: float
    means: tuple[float, ...]
    scales: tuple[float, ...]
    null_threshold: float | None = None
    method: str = "self-labelled-logistic"
    language_pairs: tuple[tuple[str, ContentModel], ...] = ()
    #: (lowest, highest) value of each feature in the training rows: a feature is clipped to them before scoring,
    #: so a value the labels never showed (a p-value far above a language pair's tiny spread) cannot decide alone
    ranges: tuple[tuple[float, float], ...] = ()
    #: ("src-trg", own_tsim_idf) a pair of that language pair must exceed to be parallel: its random same-site pairs'
    #: NULL_QUANTILE (language_pair_nulls). A model fitted on a few dozen self labels may score a pair high by its
    #: layout alone (a same-template page with other text: paragraph lengths correlated, tsim_idf at the null)
    own_text_floors: tuple[tuple[str, float], ...] = ()
    #: ... and the floor of a language pair without its own null (too few random pairs): all random pairs' quantile
    default_own_text_floor: float | None = None

    @classmethod
    def fit_per_language_pair(cls, frame: pd.DataFrame, labels, null_threshold: float | None = None,
                              l2: float | None = None, floors: dict[str, float] | None = None,
                              default_floor: float | None = None, lexicon_free: tuple[str, ...] = (),
                              config: VerificationConfig = DEFAULT) -> ContentModel:
        """One model over all rows, and one per (src_lang, trg_lang) with MIN_SELF_LABELS of each class; `floors`
        and `default_floor`: own_text_floors and default_own_text_floor. `lexicon_free` ("src-trg", self_labels'
        lexicon_free_language_pairs): language pairs judged by one model over all rows without the LEXICON_FEATURES,
        with no own-text floor."""
        l2 = config.self_label_l2 if l2 is None else l2
        least = config.min_self_labels
        labels = pd.Series(np.asarray(labels, dtype=bool), index=frame.index)
        model = cls.fit(frame, labels, null_threshold=null_threshold, l2=l2, min_labels=least)
        pairs = []
        if "src_lang" in frame and "trg_lang" in frame:
            for (src_lang, trg_lang), group in frame.groupby(["src_lang", "trg_lang"], sort=True):
                own = labels[group.index]
                if own.sum() >= least and (~own).sum() >= least:
                    pairs.append((f"{src_lang}-{trg_lang}", cls.fit(group, own, model.method, null_threshold, l2, least)))
        floors = dict(floors or {})
        if lexicon_free:
            free = cls.fit(_without_lexicon(frame), labels, model.method, null_threshold, l2, least)
            pairs = [(key, pair_model) for key, pair_model in pairs if key not in lexicon_free]
            pairs += [(key, free) for key in lexicon_free]
            floors.update({key: NO_OWN_TEXT_FLOOR for key in lexicon_free})
        return dataclasses.replace(model, language_pairs=tuple(pairs), own_text_floors=tuple(sorted(floors.items())),
                                   default_own_text_floor=default_floor)

    @classmethod
    def fit(cls, frame: pd.DataFrame, labels, method: str = "self-labelled-logistic",
            null_threshold: float | None = None, l2: float = 1.0, min_labels: int = MIN_SELF_LABELS) -> ContentModel:
        """Class-balanced, L2-regularised logistic regression (scipy L-BFGS)."""
        from scipy.optimize import minimize

        y = np.asarray(labels, dtype=float)
        x = feature_matrix(frame)
        if y.sum() < min_labels or (1 - y).sum() < min_labels:
            return cls(None, 0.0, (), (), 1.0 if null_threshold is None else null_threshold, "null-threshold")
        means, scales = x.mean(axis=0), x.std(axis=0) + 1e-6
        z = (x - means) / scales
        weight = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))

        def loss(theta):
            logits = z @ theta[:-1] + theta[-1]
            p = 1 / (1 + np.exp(-logits))
            value = np.sum(weight * (np.logaddexp(0, logits) - y * logits)) + l2 * theta[:-1] @ theta[:-1] / 2
            gradient = np.append(z.T @ (weight * (p - y)) + l2 * theta[:-1], np.sum(weight * (p - y)))
            return value, gradient

        theta = minimize(loss, np.zeros(z.shape[1] + 1), jac=True, method="L-BFGS-B").x
        return cls(tuple(map(float, theta[:-1])), float(theta[-1]), tuple(map(float, means)),
                   tuple(map(float, scales)), null_threshold, method,
                   ranges=tuple(zip(map(float, x.min(axis=0)), map(float, x.max(axis=0)))))

    @property
    def accept_p(self) -> float:
        """The p from which a pair is parallel under the default config (accept_p_under)."""
        return self.accept_p_under(DEFAULT)

    def accept_p_under(self, config: VerificationConfig) -> float:
        """The p from which a pair is parallel: config.self_label_accept_p for a self-labelled model, else 0.5."""
        return config.self_label_accept_p if self.method == "self-labelled-logistic" else 0.5

    def own_text_floor(self, frame: pd.DataFrame) -> np.ndarray:
        """The own_tsim_idf each row must exceed (its language pair's floor, else the default; -inf without)."""
        default = -np.inf if self.default_own_text_floor is None else self.default_own_text_floor
        if not self.own_text_floors or "src_lang" not in frame or "trg_lang" not in frame:
            return np.full(len(frame), default)
        keys = frame["src_lang"].astype(str) + "-" + frame["trg_lang"].astype(str)
        return keys.map(dict(self.own_text_floors)).fillna(default).to_numpy(dtype=float)

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """P(parallel) of each row (by its language pair's model where it has one)."""
        if self.language_pairs and "src_lang" in frame and "trg_lang" in frame:
            keys = (frame["src_lang"].astype(str) + "-" + frame["trg_lang"].astype(str)).to_numpy()
            own = dict(self.language_pairs)
            p = dataclasses.replace(self, language_pairs=()).predict(frame)
            for key in set(keys) & own.keys():
                rows = keys == key
                p[rows] = own[key].predict(frame[rows])
            return p
        if self.weights is None:
            tsim_idf = pd.to_numeric(frame["tsim_idf"], errors="coerce").fillna(0).to_numpy(dtype=float)
            return (tsim_idf > self.null_threshold).astype(float)
        x = feature_matrix(frame)
        if self.ranges:
            x = np.clip(x, *np.asarray(self.ranges).T)
        z = (x - np.asarray(self.means)) / np.asarray(self.scales)
        return 1 / (1 + np.exp(-(z @ np.asarray(self.weights) + self.bias)))

    def to_dict(self) -> dict:
        return {"method": self.method, "features": list(CONTENT_FEATURES), "weights": self.weights,
                "bias": self.bias, "means": self.means, "scales": self.scales, "null_threshold": self.null_threshold,
                "language_pairs": {key: model.to_dict() for key, model in self.language_pairs},
                "ranges": self.ranges, "own_text_floors": dict(self.own_text_floors),
                "default_own_text_floor": self.default_own_text_floor}

    @classmethod
    def from_dict(cls, data: dict) -> ContentModel:
        pairs = tuple((key, cls.from_dict(model)) for key, model in (data.get("language_pairs") or {}).items())
        return cls(None if data["weights"] is None else tuple(data["weights"]), data["bias"], tuple(data["means"]),
                   tuple(data["scales"]), data["null_threshold"], data["method"], pairs,
                   tuple(map(tuple, data.get("ranges") or ())), tuple(sorted((data.get("own_text_floors") or {}).items())),
                   data.get("default_own_text_floor"))


def is_url_exact(source: str | None) -> bool:
    """A pair whose URLs differ only in their language markers: a STRAND handle is among what proposed it (`source`,
    rank-pairs' comma-joined sources)."""
    return isinstance(source, str) and URL_EXACT_SOURCE in source.split(",")


def is_neighbour_pair(source: str | None) -> bool:
    """A pair of pages without partners by URL that link the counterparts of what the other links: rank-pairs'
    neighbours are among what proposed it (`source`)."""
    return isinstance(source, str) and NEIGHBOUR_SOURCE in source.split(",")


def url_exact(frame: pd.DataFrame) -> pd.Series:
    """is_url_exact of each row's source."""
    if "source" not in frame:
        return pd.Series(False, index=frame.index)
    return frame["source"].map(is_url_exact).astype(bool)


def linked_same_node(frame: pd.DataFrame, config: VerificationConfig = DEFAULT) -> pd.Series:
    """Neighbour pairs (is_neighbour_pair) whose own links agree (link_agreement >= min_link_agreement): the same
    node of the site's link graph in two languages, as a URL-exact pair is the same slot of its URL layout."""
    if "source" not in frame or "link_agreement" not in frame:
        return pd.Series(False, index=frame.index)
    agreement = pd.to_numeric(frame["link_agreement"], errors="coerce")
    return frame["source"].map(is_neighbour_pair).astype(bool) & (agreement >= config.min_link_agreement)


def url_log_odds(exact: pd.Series, same_document: pd.Series) -> float:
    """The log-odds a URL-exact pair of one host and language pair adds to its content's: how often the host's own
    URL-exact pairs (with text, in their languages) are the same document by their text (`same_document`: above the
    random pairs' null), with one pseudo-count each way, log((k + 1) / (n - k + 1)). A site whose URLs pair its
    translations exactly earns a strong prior; one whose language slots pair unrelated pages earns none."""
    n, k = int(exact.sum()), int((exact & same_document).sum())
    return math.log((k + 1) / (n - k + 1)) if n else 0.0


def _logit(p: np.ndarray) -> np.ndarray:
    clipped = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(clipped / (1 - clipped))


def decide(frame: pd.DataFrame, model: ContentModel | None, config: VerificationConfig = DEFAULT) -> pd.DataFrame:
    """Add the verdict from all the evidence of one host and language pair: p_parallel_content (the content model),
    url_log_odds (url_log_odds, on URL-exact pairs) and p_parallel = sigmoid(logit(p_parallel_content) +
    url_log_odds). A judged pair (both sides in their languages) is parallel when p_parallel >= the model's accept_p
    and its own text beats the random pairs' null (content may reject a URL-exact pair: two different documents); a
    URL-exact pair without text to judge when its whole pages are in their languages, the structural rule holds and
    its own links (link_agreements: besides the site's navigation) are none or go to the counterparts of the other
    page's: a section's menu is the template in two languages, a table of contents links the translations of what
    its original links, a paginated listing of other pages lists other items in each language. A page
    whose URL-exact pair is the same document by its text, translated or not, is in no other pair (not_one_to_one):
    a sibling of its template is no translation of it. `evidence` says what carried the verdict.
    With no model (no texts table) the structural rule's verdict stands."""
    frame = frame.copy()
    judged = frame["reason"].isna() | ~frame["reason"].isin(DOCUMENT_REASONS + LANGUAGE_REASONS)
    frame["url_exact"] = exact = url_exact(frame)
    frame["evidence"] = np.where(frame["reason"].isin(DOCUMENT_REASONS), "document",
                                 np.where(frame["reason"].isin(LANGUAGE_REASONS), "language", "structure"))
    if model is None:
        frame["p_parallel_content"] = frame["url_log_odds"] = frame["p_parallel"] = np.nan
        return frame
    has_text = frame["tsim"].notna() | (model.method == "learned-logistic")  # labels may come without texts
    p = model.predict(frame)
    frame["p_parallel_content"] = np.where(has_text, p, np.nan)
    frame["method"] = model.method
    own = pd.to_numeric(frame["own_tsim_idf"], errors="coerce").fillna(0).to_numpy(dtype=float) \
        if "own_tsim_idf" in frame else np.zeros(len(frame))
    same_document = pd.Series(own > model.own_text_floor(frame), index=frame.index)
    odds = url_log_odds(exact & judged & has_text, same_document)
    frame["url_log_odds"] = np.where(exact, odds, 0.0)
    combined = 1 / (1 + np.exp(-(np.where(has_text, _logit(p), 0.0) + frame["url_log_odds"].to_numpy())))
    frame["p_parallel"] = combined
    # a neighbour pair whose links agree is one node of the site's graph: its links say what the own text says of
    # other pairs (a section page is its entries' titles, none of them its own)
    linked = linked_same_node(frame, config)
    by_text = has_text & (combined >= model.accept_p_under(config)) & (same_document | linked)
    structure_ok = frame["structure_ok"].fillna(False).astype(bool) if "structure_ok" in frame else False
    # no text, and no links of its own (a section's menu: the site's template in the two languages) or links that
    # go where the other page's go (a table of contents links the translations of what its original links); a
    # listing of other pages links other items in each language, and is no translation (self_labels)
    agreement = pd.to_numeric(frame["link_agreement"], errors="coerce") if "link_agreement" in frame \
        else pd.Series(np.nan, index=frame.index)
    links_agree = agreement.isna() | (agreement >= config.min_link_agreement)
    by_structure = ~has_text & (exact & (odds > 0) & links_agree | linked) & structure_ok
    accepted = judged & (by_text | by_structure)
    # a page whose URL-exact partner is its same document (translated or left untranslated) has that partner: a
    # sibling page of the same template is not its translation, however alike their texts
    holds = exact & same_document & (odds > 0)
    displaced = accepted & ~exact & pd.concat(
        [frame[column].isin(set(frame[column][holds])) for column in ("src_url", "trg_url") if column in frame]
        + [pd.Series(False, index=frame.index)], axis=1).any(axis=1)
    accepted &= ~displaced
    frame.loc[judged, "parallel"] = accepted[judged]
    frame.loc[judged, "reason"] = np.where(accepted[judged], None, np.where(
        displaced[judged], "not_one_to_one", np.where(has_text[judged], "content_rejected", "no_text")))
    url_carried = exact & (odds > 0) | displaced
    frame.loc[judged, "evidence"] = np.where(
        by_structure[judged], np.where(linked[judged], "links+structure", "url+structure"),
        np.where(has_text[judged], np.where(url_carried[judged], "url+content",
                                            np.where(linked[judged], "links+content", "content")), "structure"))
    return frame


def one_to_one(frame: pd.DataFrame) -> pd.DataFrame:
    """Keep each page (URL) in at most one parallel pair, best p_parallel first (content and URL evidence: a sibling
    page whose text scores a little higher does not displace a URL-exact partner); a near-duplicate's pair
    (src_key / trg_key: a copy of another page) loses to its kept page's pair with the same partner whatever their
    p. Two pairs of four different URLs both stay, near-duplicates or not: a site's alias or print version and
    its translation are a pair of their own (export-bitext counts their repeated sentences once). The other
    parallel pairs become reason not_one_to_one."""
    from parascout.udfs.rank.alignment import greedy_one_to_one

    frame = frame.copy()
    parallel = frame[frame["parallel"].fillna(False).astype(bool)]
    if parallel.empty:
        return frame
    copies = (parallel["src_key"].notna() & (parallel["src_key"] != parallel["src_url"])) | (
        parallel["trg_key"].notna() & (parallel["trg_key"] != parallel["trg_url"]))
    pages = page_keys(parallel)
    keys = list(zip(pages["src"], pages["trg"]))
    by_key: dict[tuple, list[tuple[str, str]]] = {}
    for key, src, trg, copy in zip(keys, parallel["src_url"], parallel["trg_url"], copies):
        if not copy:
            by_key.setdefault(key, []).append((src, trg))
    # a copy's pair that shares a URL with its original's pair of the same pages
    beaten = copies & pd.Series([any(src == kept_src or trg == kept_trg for kept_src, kept_trg in by_key.get(key, ()))
                                 for key, src, trg in zip(keys, parallel["src_url"], parallel["trg_url"])],
                                index=parallel.index)
    urls = pd.DataFrame({"src_url": parallel["src_url"], "trg_url": parallel["trg_url"],
                         "score": parallel["p_parallel"].fillna(parallel["p_parallel_content"]).fillna(1.0),
                         "row": parallel.index})
    urls = pd.concat([urls[~copies], urls[copies & ~beaten]])  # a tie goes to the kept page, not its copy
    kept = set(greedy_one_to_one(urls)["row"])
    losers = [index for index in parallel.index if index not in kept]
    frame.loc[losers, "parallel"] = False
    frame.loc[losers, "reason"] = "not_one_to_one"
    return frame


def residual_pairs(frame: pd.DataFrame, model: ContentModel | None,
                   config: VerificationConfig = DEFAULT) -> pd.DataFrame:
    """After one_to_one: the content-rejected pairs that are their pages' content_mutual_best, on pages no parallel
    pair holds, that pass RESIDUAL_FLOOR_SHARE of their own-text floor (a floor above 0 only: none without a
    self-labelled model, none for a lexicon-free language pair), MIN_RESIDUAL_LENGTH_R and
    MIN_RESIDUAL_IMAGE_JACCARD, become parallel."""
    if model is None or "mutual_best" not in frame or frame.empty:
        return frame
    rejected_best = (frame["reason"] == "content_rejected") & frame["mutual_best"].fillna(False).astype(bool)
    if not rejected_best.any():
        return frame
    frame = frame.copy()
    parallel = frame["parallel"].fillna(False).astype(bool)
    pages = page_keys(frame)
    free = ~pages["src"].isin(pages["src"][parallel]) & ~pages["trg"].isin(pages["trg"][parallel])
    floor = model.own_text_floor(frame)
    own = pd.to_numeric(frame["own_tsim_idf"], errors="coerce").fillna(0).to_numpy(dtype=float)
    agreeing = pd.to_numeric(frame["paragraph_length_r"], errors="coerce").fillna(-1) >= config.min_residual_length_r
    images = pd.to_numeric(frame["image_jaccard"], errors="coerce")
    residual = (rejected_best & free & (floor > 0) & (own > config.residual_floor_share * floor) & agreeing
                & (images.isna() | (images >= config.min_residual_image_jaccard)))
    frame.loc[residual, "parallel"] = True
    frame.loc[residual, "reason"] = None
    frame.loc[residual, "method"] = RESIDUAL_METHOD
    frame.loc[residual, "evidence"] = "content"
    return frame


def decide_host(frame: pd.DataFrame, model: dict | None, config: VerificationConfig = DEFAULT) -> pd.DataFrame:
    """applyInPandas body (one host and language pair): the decision, the 1-1 alignment, then the residual pairs."""
    content = ContentModel.from_dict(model) if model else None
    return residual_pairs(one_to_one(decide(frame, content, config)), content, config)[VERIFIED_COLUMNS]
