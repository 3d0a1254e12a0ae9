"""A host's pages as verify-pairs reads them: each page's prose (the whole page's, code left out), the language of it
as a reader sees it, its own text (list items left out), its near-copies, and the host's navigation links and IDF.

HostPages is built once per host and language pair (udfs.verify.verification.verify_host) and answers every pair of
it from caches: pages are tokenised once per host, not once per pair.
"""
from __future__ import annotations

import math
import random
import re
from collections import Counter
from typing import NamedTuple

import pandas as pd
from rapidfuzz.distance import LCSseq

from parascout.udfs.common.code_text import code_flags
from parascout.udfs.common.language_id import cld2_language, tokenize
from parascout.udfs.lexicon.readers import main_paragraphs
from parascout.udfs.verify.structure import Linearised, linearise
from parascout.udfs.verify.tsim import Vocabulary, inverse_document_frequencies, page_text
from parascout.udfs.verify.verification_config import DEFAULT, VerificationConfig

WORD = re.compile(r"[^\W\d_]{2,}")
#: texts.paragraphs type of a list item (a teaser, a link list): not the page's own text
LIST_ITEM = "list_item"


class Copy(NamedTuple):
    """A paragraph's words and word characters, and those a paragraph of the other page holds in the same order."""

    words: int
    chars: int
    shared: int
    shared_chars: int


def words_in_order(words: list[str], other: list[str]) -> int:
    """The length of a longest common subsequence of two word lists (rapidfuzz, the LCS structure.align_tokens
    aligns pages with)."""
    return LCSseq.similarity(words, other)


def common_in_order(words: list[str], other: list[str]) -> tuple[int, int]:
    """(how many, how many characters) of `words` a longest common subsequence with `other` holds."""
    n, m = len(words), len(other)
    longest = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = longest[i], longest[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if words[i] == other[j] else max(below[j], row[j + 1])
    i = j = count = chars = 0
    while i < n and j < m:
        if words[i] == other[j]:
            count, chars, i, j = count + 1, chars + len(words[i]), i + 1, j + 1
        elif longest[i + 1][j] >= longest[i][j + 1]:
            i += 1
        else:
            j += 1
    return count, chars


def is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def as_list(value) -> list:
    return [] if value is None or (isinstance(value, float) and math.isnan(value)) else list(value)


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
        self.vocabulary = Vocabulary(config)  # the host's words as integer ids, shared by its pages' texts
        texts = [self.text(url) for url in self.pages]
        self.idf, self.unseen_idf, self.rare = inverse_document_frequencies((t for t in texts if t is not None), config)

    def navigation_links(self) -> frozenset[str]:
        """Links on more than BOILERPLATE_IMAGE_SHARE of the host's pages (and on MIN_BOILERPLATE_DOCS): the site's
        navigation, as its logos are its boilerplate images."""
        if self._navigation is None:
            counts = Counter(link for row in self.pages.values() for link in set(as_list(row.get("outlinks"))))
            least = max(self.config.min_boilerplate_docs, self.config.boilerplate_image_share * len(self.pages))
            self._navigation = frozenset(link for link, count in counts.items() if count > least)
        return self._navigation

    def structure(self, url: str) -> Linearised:
        if url not in self._structures:
            self._structures[url] = linearise(as_list(self.pages[url]["structure"]), self._codes)
        return self._structures[url]

    def key(self, url: str) -> str:
        """The page a near-duplicate stands for (texts.duplicate_of, else the page a template copy copies), else
        the URL itself."""
        if self._copies is None:
            self._copies = self._template_copies()
        if url in self._copies:
            return self._copies[url]
        duplicate_of = (self.pages.get(url) or {}).get("duplicate_of")
        if is_missing(duplicate_of) or not duplicate_of or self._copies.get(duplicate_of) == url:
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
        the other page holds it, or most of its words in order in one paragraph (is_shared), and CLD2 finds `lang`
        neither in it nor in the two pages' shared paragraphs together (the copy is on the page whose language the
        shared text is not); of a paragraph the other page holds most of but not word for word, only the words it
        holds are the copy
        (copied_share: `Scilab Help >> Fonctions Elémentaires > Trigonométrie > tand` translates two of its steps);
        another language's when CLD2 finds that; else the page's (a short line CLD2 cannot tell is no evidence of an
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
            if detected is not None and detected == other:
                other_chars += size
            elif detected != lang and shared_lang != lang and is_shared:
                other_chars += size * self.copied_share(paragraph, other_url)
            elif detected is not None and detected != lang:
                foreign_chars += size
        if not total or not lang:
            return None, 0.0
        return 1.0 - (other_chars + foreign_chars) / total, other_chars / total

    def copied_share(self, paragraph: dict, other_url: str) -> float:
        """The share of a paragraph's word characters a paragraph of the other page holds in the same order (the
        most any one holds, copy_in_order): 1 for a paragraph it holds word for word; of one translated in part, its
        untranslated part (the words it translated are no copy)."""
        if paragraph.get("hash") in self.prose_hashes(other_url):
            return 1.0
        copy = self.copy_in_order(paragraph, other_url)
        return copy.shared_chars / copy.chars if copy.chars else 1.0

    def is_shared(self, paragraph: dict, other_url: str) -> bool:
        """The other page holds the paragraph word for word, or a paragraph of it holds most of its words in the same
        order, and MIN_PROSE_WORDS of them at least (one cognate is half of a two-word title: `2.4.1 Ausgelassenes
        Material`)."""
        if paragraph.get("hash") in self.prose_hashes(other_url):
            return True
        copy = self.copy_in_order(paragraph, other_url)
        return copy.shared >= max(self.config.min_prose_words, self.config.min_shared_word_share * copy.words)

    def copy_in_order(self, paragraph: dict, other_url: str) -> Copy:
        """How much of a paragraph's words one paragraph of the other page holds in the same order, the most any one
        holds (their longest common subsequence): text left untranslated is found there in order, while a
        translation's cognates and names are scattered among its own words (`unix_g — exécute des instructions
        Windows, Linux ou MacOS : résultats dans des variables` has six of its twelve words somewhere on the English
        page, five of them in order in its English line). Exact where it reaches the share is_shared asks for; a
        paragraph of the other page whose words could not reach it is not compared."""
        key = ("copy", paragraph["text"], other_url)
        if key not in self._texts:
            words = WORD.findall(paragraph["text"].lower())
            needed = max(self.config.min_prose_words, self.config.min_shared_word_share * len(words))
            best, best_words = 0, None
            # only a paragraph that could hold `needed` words decides is_shared, and so copied_share (asked of shared
            # paragraphs only): the others are not compared (most paragraphs of a translation have no candidate)
            lists, postings = self.prose_postings(other_url)
            bounds: Counter = Counter()
            if sum(word in postings for word in words) >= needed:  # the whole page holds enough of them
                for word, count in Counter(words).items():
                    for number, other_count in postings.get(word, ()):
                        bounds[number] += min(count, other_count)
            for number, bound in bounds.most_common():
                if bound < needed or bound <= best:
                    break
                held = words_in_order(words, lists[number])
                if held > best:
                    best, best_words = held, lists[number]
            best = common_in_order(words, best_words) if best >= needed else (best, 0)
            self._texts[key] = Copy(len(words), sum(len(word) for word in words), *best)
        return self._texts[key]

    def prose_postings(self, url: str) -> tuple[list[list[str]], dict[str, list[tuple[int, int]]]]:
        """The lower-cased words of each prose paragraph of the page, in order, and for each word the paragraphs
        holding it (their number, how often)."""
        key = ("prose_postings", url)
        if key not in self._texts:
            lists = [WORD.findall(p["text"].lower()) for p in self.prose(url)]
            postings: dict[str, list[tuple[int, int]]] = {}
            for number, words in enumerate(lists):
                for word, count in Counter(words).items():
                    postings.setdefault(word, []).append((number, count))
            self._texts[key] = (lists, postings)
        return self._texts[key]

    def main_prose_words(self, url: str) -> int:
        """How many words the page's main prose holds (prose, boilerplate left out; Han and kana a word per
        character, as tsim counts them): a page whose main text is a table of values or a list of names gives its
        content too little to judge."""
        key = ("main_prose_words", url)
        if key not in self._texts:
            self._texts[key] = sum(len(tokenize(p["text"])) for p in self.prose(url) if not p.get("boilerplate"))
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
            paragraphs = [p for p in as_list((self.pages.get(url) or {}).get("text_paragraphs"))
                          if p and (p.get("text") or "").strip()]
            code = code_flags([(p["text"], p.get("type")) for p in paragraphs], self.config.code)
            self._texts[key] = [p for p, is_code in zip(paragraphs, code)
                                if not is_code and is_prose(p["text"], self.config.min_prose_words)]
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
            boilerplate = [p.get("text") or "" for p in as_list((self.pages.get(url) or {}).get("text_paragraphs"))
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
                as_list(paragraphs), row.get("cld2_lang"), row.get("main_text"), self.vocabulary)
        return self._texts[url]

    def own_text(self, url: str):
        """The text of `url` without its list items (None: the page has none, so its own text is all of it)."""
        key = ("own", url)
        if key not in self._texts:
            row = self.pages.get(url) or {}
            self._texts[key] = own_text_of(main_paragraphs(row.get("text_paragraphs")), row.get("cld2_lang"),
                                         self.vocabulary)
        return self._texts[key]


def is_prose(text: str, min_words: int = DEFAULT.min_prose_words) -> bool:
    """MIN_PROSE_WORDS words, or a text written without spaces (Chinese, Japanese: a word per character as tsim
    counts them, a space or two between numbers or names) longer than a label."""
    words = len(text.split())
    return words >= min_words or (words == 1 and len(text.strip()) >= 4 * min_words) or \
        len(tokenize(text)) >= 4 * min_words


def own_text_of(paragraphs: list[dict] | None, lang: str | None, vocabulary: Vocabulary | None = None):
    """page_text of the paragraphs that are not list items; None when there are no list items."""
    if not paragraphs or not any(p.get("type") == LIST_ITEM for p in paragraphs):
        return None
    return page_text([p for p in paragraphs if p.get("type") != LIST_ITEM], lang, None, vocabulary)
