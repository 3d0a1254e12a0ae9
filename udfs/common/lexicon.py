"""Word translation lexicons: tokenisation, readers, an IBM model 1 trainer, the lexicon directory.

STRAND's content score (Resnik & Smith 2003, §3) links the words of two pages under a
translation lexicon. A lexicon here is a table of symmetric association probabilities
prob(src_word, trg_word) = sqrt(p(trg|src) · p(src|trg)), learned from any mix of:

- a sentence- or verse-aligned corpus (TSV pairs, or two id-aligned `id<TAB>text` files):
  IBM model 1 trained by EM in both directions (numpy, a few iterations);
- a bilingual dictionary (FreeDict dictd `.index` + `.dict[.dz]`, FreeDict TEI, Bitextor `.dic`):
  each entry's word pairs counted and normalised both ways;
- paragraph pairs aligned inside page pairs the archive itself makes confident, plus the two
  pages' whole main texts (`page_pair_texts`; the train-lexicon job picks the pages), so a
  language pair with no resources still gets a lexicon.

Identical strings, numbers and cognates are not stored: `cognate` and `tokenize` give tsim
that evidence for any word. Nor are inflected forms: a word the lexicon lacks backs off to the
known words sharing its stem (`Stems`), so tsim links "königs" through "könig" though no training
pair held it. A lexicon directory holds `lexicon.tsv.gz` (src, trg, prob) and
`parascout_lexicon.json` (languages, sources, sizes, version, date) and, for a lexicon bootstrapped from an archive,
`held_out/`: lexicons each trained without one fold of its page pairs and the fold of each page (`with_held_out`).

Why one module: the readers (corpus, dictd, TEI, .dic, archive bootstrap), the tokeniser, the stem
back-off and IBM model 1 meet in one data structure (the sparse translation table) and one directory format.
"""
from __future__ import annotations

import dataclasses
import gzip
import io
import json
import math
import re
import time
import unicodedata
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from xml.etree import ElementTree

import numpy as np

LEXICON_FILE = "lexicon.tsv.gz"
METADATA_FILE = "parascout_lexicon.json"
FORMAT_VERSION = 1
#: train-lexicon --from-archive also trains this many held-out lexicons, each without one fold of the page pairs it
#: learns from (with_held_out): verify-pairs calibrates its decision on the scores they give those pairs, the scores
#: of pages a lexicon never saw (a lexicon bootstrapped from an archive knows the words of the pairs it learned from
#: far better than the words of pages it never saw)
HELD_OUT_FOLDS = 5
HELD_OUT_DIR = "held_out"
PAGE_FOLDS_FILE = "pages.tsv.gz"
#: entries below this symmetric probability are dropped when a lexicon is written
MIN_PROB = 0.01
#: most translations kept per source word
MAX_TRANSLATIONS = 10
#: longer sentences are cut before EM (the link count grows with the product of the lengths)
MAX_SENTENCE_TOKENS = 200
#: paragraph pairs of a confident page pair: the smaller share of its page's text at least this times the larger
PARAGRAPH_LENGTH_RATIO = 0.3
#: cognates: both words at least this long and a normalised Indel similarity at least this high
COGNATE_MIN_CHARS = 5
COGNATE_MIN_SIMILARITY = 0.8
#: a word the lexicon lacks backs off to the known words sharing its longest stem (an inflected form: "königs" ->
#: "könig", "etxean" -> "etxe"): a prefix of at least STEM_MIN_CHARS letters that leaves each word at most
#: STEM_MAX_SUFFIX letters beyond it; their translations count STEM_WEIGHT times their probability
STEM_MIN_CHARS = 4
STEM_MAX_SUFFIX = 3
STEM_WEIGHT = 0.5

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


@dataclass
class Stems:
    """One side's known words and the stems an unknown word may share with them: `index` maps each prefix of STEM_MIN_CHARS
    letters or more, at most STEM_MAX_SUFFIX shorter than its word (the word itself included), to the known alphabetic
    words having it; `heads` holds their first STEM_MIN_CHARS letters (most unknown words stop there)."""

    known: set[str]
    index: dict[str, list[str]]
    heads: set[str]

    @classmethod
    def of(cls, words: Iterable[str]) -> Stems:
        known, index = set(words), {}
        for word in sorted(known):  # matches in string order, whatever the set's
            if len(word) >= STEM_MIN_CHARS and word.isalpha():
                for length in range(max(STEM_MIN_CHARS, len(word) - STEM_MAX_SUFFIX), len(word) + 1):
                    index.setdefault(word[:length], []).append(word)
        return cls(known, index, {stem[:STEM_MIN_CHARS] for stem in index})

    def matches(self, word: str) -> list[str]:
        """The known words sharing the longest stem with an unknown alphabetic `word`: its longest prefix, of
        STEM_MIN_CHARS letters or more and at most STEM_MAX_SUFFIX shorter than it, in `index`; none when `word` is
        known, short or holds a digit."""
        if len(word) < STEM_MIN_CHARS or word[:STEM_MIN_CHARS] not in self.heads or word in self.known \
                or not word.isalpha():
            return []
        for length in range(len(word), max(STEM_MIN_CHARS, len(word) - STEM_MAX_SUFFIX) - 1, -1):
            matches = self.index.get(word[:length])
            if matches:
                return matches
        return []


def cognate(a: str, b: str) -> float:
    """Normalised Indel similarity of two long words (0 when either is short or they differ much)."""
    from rapidfuzz.distance import Indel

    if len(a) < COGNATE_MIN_CHARS or len(b) < COGNATE_MIN_CHARS:
        return 0.0
    similarity = Indel.normalized_similarity(a, b)
    return similarity if similarity >= COGNATE_MIN_SIMILARITY else 0.0


@dataclass
class Lexicon:
    """Symmetric word translation probabilities for one language pair (src -> trg lookups)."""

    src_lang: str
    trg_lang: str
    table: dict[str, dict[str, float]]
    metadata: dict = field(default_factory=dict)
    #: lexicons trained each without one fold of the archive page pairs this one learned from, and page url -> fold
    #: (train-lexicon --from-archive; held_out_for)
    held_out: tuple[Lexicon, ...] = ()
    fold_of: dict[str, int] = field(default_factory=dict, repr=False)
    _stems: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # lang -> Stems
    _reversed: list = field(default_factory=list, init=False, repr=False, compare=False)  # [the reversed lexicon]

    def prob(self, src_word: str, trg_word: str) -> float:
        return self.table.get(src_word, {}).get(trg_word, 0.0)

    def translations(self, src_word: str) -> dict[str, float]:
        return self.table.get(src_word, {})

    def stem_matches(self, word: str, side: str = "src") -> list[str]:
        """The known words of a side ('src': the table's source words, 'trg': its translations) that share the longest
        stem with `word`, a word that side lacks (none for a known, short or non-alphabetic word: Stems.matches)."""
        return self.stems(side).matches(word)

    def stems(self, side: str = "src") -> Stems:
        """A side's known words and their stems, built once per language (a reversed lexicon shares them)."""
        lang = self.src_lang if side == "src" else self.trg_lang
        if lang not in self._stems:
            self._stems[lang] = Stems.of(self.table if side == "src" else
                                         {trg for row in self.table.values() for trg in row})
        return self._stems[lang]

    def held_out_for(self, src_url: str, trg_url: str) -> Lexicon | None:
        """The held-out lexicon that never learned from a pair's pages (the fold of its source page, else of its
        target page); None when neither page is one this lexicon learned from (or it has no held-out lexicons)."""
        fold = self.fold_of.get(src_url, self.fold_of.get(trg_url))
        return None if fold is None else self.held_out[fold]

    def reversed(self) -> Lexicon:
        """The same lexicon looked up from the other side (trg -> src), built once."""
        if not self._reversed:
            table: dict[str, dict[str, float]] = defaultdict(dict)
            for src, row in self.table.items():
                for trg, prob in row.items():
                    table[trg][src] = prob
            reversed_lexicon = Lexicon(self.trg_lang, self.src_lang, dict(table), self.metadata,
                                       tuple(fold.reversed() for fold in self.held_out), self.fold_of)
            reversed_lexicon._stems = self._stems  # by language: one index per side, whichever way it is looked up
            reversed_lexicon._reversed.append(self)
            self._reversed.append(reversed_lexicon)
        return self._reversed[0]

    def __len__(self) -> int:
        return sum(len(row) for row in self.table.values())


# ---- sources -------------------------------------------------------------------------------
def _open_text(path: str | Path) -> io.TextIOBase:
    path = str(path)
    if path.endswith((".gz", ".dz")):
        return io.TextIOWrapper(gzip.open(path), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_tsv_pairs(path: str | Path, counts: dict | None = None) -> Iterator[tuple[str, str]]:
    """(src, trg) texts of a `src<TAB>trg` file; other lines counted as reason:malformed_line."""
    counts = counts if counts is not None else {}
    with _open_text(path) as handle:
        yield from _tsv_pairs(handle, counts)


def _tsv_pairs(lines: Iterable[str], counts: dict) -> Iterator[tuple[str, str]]:
    for line in lines:
        counts["input"] = counts.get("input", 0) + 1
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 2 or not parts[0].strip() or not parts[1].strip():
            counts["reason:malformed_line"] = counts.get("reason:malformed_line", 0) + 1
            continue
        counts["kept"] = counts.get("kept", 0) + 1
        yield parts[0], parts[1]


def read_aligned_files(src_path: str | Path, trg_path: str | Path, counts: dict | None = None
                       ) -> Iterator[tuple[str, str]]:
    """(src, trg) texts of two `id<TAB>text` files joined on id (verses missing on one side skipped)."""
    counts = counts if counts is not None else {}

    def by_id(path):
        rows = {}
        with _open_text(path) as handle:
            for line in handle:
                parts = line.rstrip("\n").split("\t", 1)
                if len(parts) == 2 and parts[1].strip():
                    rows[parts[0]] = parts[1]
        return rows

    src, trg = by_id(src_path), by_id(trg_path)
    counts["input"] = counts.get("input", 0) + len(src)
    for key, text in src.items():
        if key in trg:
            counts["kept"] = counts.get("kept", 0) + 1
            yield text, trg[key]
        else:
            counts["reason:unaligned_id"] = counts.get("reason:unaligned_id", 0) + 1


_DICTD_DIGITS = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}
_DICT_NOISE = re.compile(r"<[^>]*>|/[^/]*/|\([^)]*\)|\[[^\]]*\]|^\s*\d+\.\s*")


def _dictd_number(text: str) -> int:
    value = 0
    for char in text:
        value = value * 64 + _DICTD_DIGITS[char]
    return value


def _translation_phrases(lines: Iterable[str]) -> list[str]:
    phrases = []
    for line in lines:
        cleaned = _DICT_NOISE.sub(" ", line)
        phrases += [part.strip() for part in re.split(r"[,;]", cleaned) if part.strip()]
    return phrases


def read_dictd(index_path: str | Path, dict_path: str | Path, counts: dict | None = None
               ) -> Iterator[tuple[str, str]]:
    """(headword, translation) pairs of a dictd dictionary (FreeDict: `.index` + `.dict` or `.dict.dz`)."""
    counts = counts if counts is not None else {}
    opener = gzip.open if str(dict_path).endswith((".dz", ".gz")) else open
    with opener(dict_path, "rb") as handle:
        body = handle.read()
    with _open_text(index_path) as handle:
        for line in handle:
            counts["input"] = counts.get("input", 0) + 1
            parts = line.rstrip("\n").split("\t")
            try:
                headword, offset, length = parts[0], _dictd_number(parts[1]), _dictd_number(parts[2])
            except (IndexError, KeyError):
                counts["reason:malformed_line"] = counts.get("reason:malformed_line", 0) + 1
                continue
            if headword.startswith(("00database", "00-database")):
                counts["reason:metadata_entry"] = counts.get("reason:metadata_entry", 0) + 1
                continue
            lines = body[offset:offset + length].decode("utf-8", "replace").splitlines()
            phrases = _translation_phrases(lines[1:])
            if not phrases:
                counts["reason:no_translation"] = counts.get("reason:no_translation", 0) + 1
                continue
            counts["kept"] = counts.get("kept", 0) + 1
            for phrase in phrases:
                yield headword, phrase


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def read_tei(path: str | Path, counts: dict | None = None) -> Iterator[tuple[str, str]]:
    """(headword, translation) pairs of a FreeDict TEI file (`entry/form/orth` and `cit[@type=trans]/quote`
    or the older `trans/tr`)."""
    counts = counts if counts is not None else {}
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as handle:
        for _, element in ElementTree.iterparse(handle, events=("end",)):
            if _local(element.tag) != "entry":
                continue
            counts["input"] = counts.get("input", 0) + 1
            orths = [e.text.strip() for e in element.iter() if _local(e.tag) == "orth" and e.text and e.text.strip()]
            translations = []
            for e in element.iter():
                if _local(e.tag) == "cit" and e.get("type") in ("trans", "translation"):
                    translations += [q.text.strip() for q in e if _local(q.tag) == "quote" and q.text and q.text.strip()]
                elif _local(e.tag) == "tr" and e.text and e.text.strip():
                    translations.append(e.text.strip())
            element.clear()
            if not orths or not translations:
                counts["reason:no_translation"] = counts.get("reason:no_translation", 0) + 1
                continue
            counts["kept"] = counts.get("kept", 0) + 1
            for orth in orths:
                for translation in translations:
                    yield orth, translation


def read_bitextor_dic(path: str | Path, src_lang: str, trg_lang: str, counts: dict | None = None
                      ) -> Iterator[tuple[str, str]]:
    """(src, trg) word pairs of a Bitextor `.dic` file (header `LANG1<TAB>LANG2`, either order)."""
    from parascout.udfs.common.langs import UnknownLanguage, to_iso639_3

    counts = counts if counts is not None else {}
    with _open_text(path) as handle:
        header = handle.readline().rstrip("\n").split("\t")
        try:
            first = to_iso639_3(header[0].strip())
        except (UnknownLanguage, IndexError):
            first = src_lang
        swap = first == trg_lang
        for src, trg in _tsv_pairs(handle, counts):
            yield (trg, src) if swap else (src, trg)


def main_paragraphs(paragraphs) -> list[dict]:
    """A page's main text as `texts.paragraphs` hold it: the paragraphs neither boilerplate nor blank (none for a
    missing value: None, or pandas' NaN; a null entry is skipped)."""
    if paragraphs is None or isinstance(paragraphs, float):
        return []
    return [p for p in paragraphs if p and not p.get("boilerplate") and (p.get("text") or "").strip()]


def paragraph_pairs(src_paragraphs: list[dict], trg_paragraphs: list[dict],
                    min_length_ratio: float = PARAGRAPH_LENGTH_RATIO) -> list[tuple[str, str]]:
    """Paragraph pairs of a confident page pair: non-boilerplate paragraphs aligned by their type
    sequence (a minimal diff, as STRAND aligns markup), kept when their shares of their page's text
    are within a ratio (shares, not characters: a Chinese or Basque paragraph is shorter in characters)."""
    from rapidfuzz.distance import Indel

    src, trg = main_paragraphs(src_paragraphs), main_paragraphs(trg_paragraphs)
    src_total, trg_total = sum(len(p["text"]) for p in src) or 1, sum(len(p["text"]) for p in trg) or 1
    pairs = []
    for tag, i1, i2, j1, _ in Indel.opcodes([p.get("type") or "text" for p in src],
                                            [p.get("type") or "text" for p in trg]):
        if tag != "equal":
            continue
        for offset in range(i2 - i1):
            a, b = src[i1 + offset]["text"], trg[j1 + offset]["text"]
            a_share, b_share = len(a) / src_total, len(b) / trg_total
            if min(a_share, b_share) >= min_length_ratio * max(a_share, b_share):
                pairs.append((a, b))
    return pairs


def page_pair_texts(src_paragraphs: list[dict], trg_paragraphs: list[dict]) -> list[tuple[str, str]]:
    """What a confident page pair teaches a bootstrapped lexicon: its paragraph pairs and, as one more
    pair, the two pages' whole main texts (their first MAX_SENTENCE_TOKENS words), which still pair the
    words of paragraphs the type sequence could not align (on seed-42/99 sample archives the separation
    of true from false candidates by tsim_idf rose most for ara and eus, AUC 0.90 -> 0.96, 0.94 -> 0.99)."""
    pairs = paragraph_pairs(src_paragraphs, trg_paragraphs)
    src, trg = main_paragraphs(src_paragraphs), main_paragraphs(trg_paragraphs)
    if src and trg:
        pairs.append(("\n".join(p["text"] for p in src), "\n".join(p["text"] for p in trg)))
    return pairs


# ---- training ------------------------------------------------------------------------------
def _type_counts(tokens: list[str], vocab: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    ids: dict[int, int] = {}
    for token in tokens[:MAX_SENTENCE_TOKENS]:
        index = vocab.setdefault(token, len(vocab))
        ids[index] = ids.get(index, 0) + 1
    return np.fromiter(ids.keys(), dtype=np.int64, count=len(ids)), np.fromiter(ids.values(), dtype=np.float64,
                                                                               count=len(ids))


def train_ibm1(pairs: list[tuple[list[str], list[str]]], iterations: int = 5) -> dict[tuple[str, str], float]:
    """p(trg_word | src_word) of IBM model 1 (with a NULL source word) after `iterations` EM steps.

    Sentences are bags of word types with counts, every (source type, target type) link of a
    sentence pair one array entry, so an EM step is a few numpy bincounts over all links.
    """
    src_vocab, trg_vocab = {"<null>": 0}, {}
    link_pair, link_group, link_src_count, group_trg_count = [], [], [], []
    groups = 0
    for src_tokens, trg_tokens in pairs:
        if not src_tokens or not trg_tokens:
            continue
        src_ids, src_counts = _type_counts(src_tokens, src_vocab)
        src_ids, src_counts = np.append(src_ids, 0), np.append(src_counts, 1.0)
        trg_ids, trg_counts = _type_counts(trg_tokens, trg_vocab)
        link_pair.append((src_ids[:, None] << 32 | trg_ids[None, :]).ravel())
        link_src_count.append(np.repeat(src_counts, len(trg_ids)))
        link_group.append(np.tile(np.arange(groups, groups + len(trg_ids)), len(src_ids)))
        group_trg_count.append(trg_counts)
        groups += len(trg_ids)
    if not link_pair:
        return {}
    keys, pair_index = np.unique(np.concatenate(link_pair), return_inverse=True)
    link_group_all = np.concatenate(link_group)
    src_weight = np.concatenate(link_src_count)
    trg_weight = np.concatenate(group_trg_count)
    pair_src = (keys >> 32).astype(np.int64)
    prob = np.ones(len(keys))
    for _ in range(iterations):
        weighted = src_weight * prob[pair_index]
        totals = np.bincount(link_group_all, weighted, minlength=groups)
        posterior = weighted / totals[link_group_all] * trg_weight[link_group_all]
        expected = np.bincount(pair_index, posterior, minlength=len(keys))
        prob = expected / np.bincount(pair_src, expected)[pair_src]
    src_words = _inverse(src_vocab)
    trg_words = _inverse(trg_vocab)
    keep = (prob >= MIN_PROB) & (pair_src != 0)
    return {(src_words[s], trg_words[t]): float(p)
            for s, t, p in zip(pair_src[keep], (keys[keep] & 0xFFFFFFFF), prob[keep])}


def _inverse(vocab: dict[str, int]) -> list[str]:
    words = [""] * len(vocab)
    for word, index in vocab.items():
        words[index] = word
    return words


def dictionary_probabilities(entries: list[tuple[list[str], list[str]]]) -> tuple[dict, dict]:
    """(p(trg|src), p(src|trg)) from dictionary entries: every word pair of an entry counted once."""
    forward: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    backward: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for src_tokens, trg_tokens in entries:
        for s in set(src_tokens):
            for t in set(trg_tokens):
                forward[s][t] += 1.0
                backward[t][s] += 1.0

    def normalise(table):
        return {(a, b): count / sum(row.values()) for a, row in table.items() for b, count in row.items()}

    return normalise(forward), {(s, t): p for (t, s), p in normalise(backward).items()}


def symmetric_table(forward: dict[tuple[str, str], float], backward: dict[tuple[str, str], float],
                    min_prob: float = MIN_PROB, max_translations: int = MAX_TRANSLATIONS
                    ) -> dict[str, dict[str, float]]:
    """sqrt(p(t|s) · p(s|t)) for pairs both directions know, pruned to the best per source word."""
    rows: dict[str, dict[str, float]] = defaultdict(dict)
    for key, p_forward in forward.items():
        p_backward = backward.get(key)
        if p_backward:
            prob = math.sqrt(p_forward * p_backward)
            if prob >= min_prob:
                rows[key[0]][key[1]] = prob
    return {src: dict(sorted(row.items(), key=lambda kv: -kv[1])[:max_translations]) for src, row in rows.items()}


def merge_tables(*tables: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The highest probability any source gives each pair."""
    merged: dict[str, dict[str, float]] = defaultdict(dict)
    for table in tables:
        for src, row in table.items():
            for trg, prob in row.items():
                if prob > merged[src].get(trg, 0.0):
                    merged[src][trg] = prob
    return dict(merged)


def train_lexicon(src_lang: str, trg_lang: str, corpus: Iterable[tuple[str, str]] = (),
                  dictionary: Iterable[tuple[str, str]] = (), iterations: int = 5,
                  sources: list[str] | None = None) -> Lexicon:
    """A lexicon from aligned text pairs (IBM model 1 both ways) and/or dictionary entries."""
    started = time.process_time()
    corpus_tokens = [(tokenize(a, src_lang), tokenize(b, trg_lang)) for a, b in corpus]
    dictionary_tokens = [(tokenize(a, src_lang), tokenize(b, trg_lang)) for a, b in dictionary]
    tables = []
    if corpus_tokens:
        forward = train_ibm1(corpus_tokens, iterations)
        backward = {(s, t): p for (t, s), p in train_ibm1([(b, a) for a, b in corpus_tokens], iterations).items()}
        tables.append(symmetric_table(forward, backward))
    if dictionary_tokens:
        tables.append(symmetric_table(*dictionary_probabilities(dictionary_tokens)))
    table = merge_tables(*tables)
    metadata = {"src_lang": src_lang, "trg_lang": trg_lang, "sources": sources or [],
                "sizes": {"entries": sum(len(row) for row in table.values()), "src_words": len(table),
                          "corpus_pairs": len(corpus_tokens), "dictionary_entries": len(dictionary_tokens)},
                "iterations": iterations, "training_cpu_seconds": round(time.process_time() - started, 3)}
    return Lexicon(src_lang, trg_lang, table, metadata)


def page_folds(page_pairs: Iterable[tuple[str, str]], folds: int) -> dict[str, int]:
    """Page url -> fold: the connected components of the page pairs (a page, its partners, their partners ...: one
    fold, so no fold's lexicon learned from a page another fold holds), dealt out in the order of their first url."""
    parent: dict[str, str] = {}

    def root(url: str) -> str:
        while parent.setdefault(url, url) != url:
            parent[url] = parent[parent[url]]
            url = parent[url]
        return url

    for src, trg in page_pairs:
        parent[root(src)] = root(trg)
    first: dict[str, str] = {}
    for url in sorted(parent):
        first.setdefault(root(url), url)
    order = {component: index % folds for index, component in enumerate(sorted(first, key=first.get))}
    return {url: order[root(url)] for url in parent}


def with_held_out(lexicon: Lexicon, archive_rows: list[tuple[str, str, str, str]],
                  corpus: list[tuple[str, str]] = (), dictionary: list[tuple[str, str]] = (),
                  folds: int = HELD_OUT_FOLDS, iterations: int = 5) -> Lexicon:
    """`lexicon` (trained on `corpus`, `dictionary` and the text pairs of `archive_rows`: src_text, trg_text,
    src_url, trg_url) with its held-out lexicons: the page pairs split into `folds` (page_folds; fewer when they have
    fewer components), each held-out lexicon trained the same way without one fold's text pairs."""
    fold_of = page_folds(((src, trg) for _, _, src, trg in archive_rows), folds)
    count = min(folds, len(set(fold_of.values())))
    if count < 2:
        return lexicon
    held_out = tuple(train_lexicon(lexicon.src_lang, lexicon.trg_lang, list(corpus) + [
        (a, b) for a, b, src, _ in archive_rows if fold_of[src] != fold], dictionary, iterations)
        for fold in range(count))
    return dataclasses.replace(lexicon, held_out=held_out, fold_of=fold_of,
                               metadata={**lexicon.metadata, "held_out_folds": count})


# ---- the lexicon directory -----------------------------------------------------------------
def _write_table(rows: Iterable[str], path: Path) -> None:
    """Gzipped lines, written under a temporary name and moved into place (storage.open_output)."""
    from parascout.udfs.common import storage

    with storage.open_output(str(path), compression="gzip") as handle, \
            io.TextIOWrapper(handle, encoding="utf-8") as text:
        text.writelines(rows)


def _table_lines(table: dict[str, dict[str, float]]) -> Iterator[str]:
    for src in sorted(table):
        for trg, prob in sorted(table[src].items(), key=lambda kv: -kv[1]):
            yield f"{src}\t{trg}\t{prob:.6g}\n"


def _read_table(path: Path) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = defaultdict(dict)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3:
                table[parts[0]][parts[1]] = float(parts[2])
    return dict(table)


def write_lexicon(lexicon: Lexicon, path: str | Path) -> str:
    """Write `lexicon.tsv.gz` and `parascout_lexicon.json` into a local directory, each file replaced
    atomically (other files there, such as a job's `_reports/`, are left alone); held-out lexicons go to
    `held_out/` (`<fold>.tsv.gz` and `pages.tsv.gz`: url, fold), the metadata (written last) counting them."""
    from parascout.udfs.common import storage

    target = Path(path)
    target.mkdir(parents=True, exist_ok=True)
    if any(p.is_file() for p in target.iterdir()) and not (target / METADATA_FILE).exists():
        raise ValueError(f"{path} holds files and is not a lexicon directory; choose another path")
    _write_table(_table_lines(lexicon.table), target / LEXICON_FILE)
    held_out = target / HELD_OUT_DIR
    if lexicon.held_out:
        held_out.mkdir(exist_ok=True)
        for fold, fold_lexicon in enumerate(lexicon.held_out):
            _write_table(_table_lines(fold_lexicon.table), held_out / f"{fold}.tsv.gz")
        _write_table((f"{url}\t{fold}\n" for url, fold in sorted(lexicon.fold_of.items())),
                     held_out / PAGE_FOLDS_FILE)
    now = datetime.now(timezone.utc)
    lexicon.metadata = {**lexicon.metadata, "src_lang": lexicon.src_lang, "trg_lang": lexicon.trg_lang,
                        "format_version": FORMAT_VERSION, "held_out_folds": len(lexicon.held_out),
                        "version": now.strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6],
                        "date": now.isoformat(timespec="seconds")}
    storage.write_text(str(target / METADATA_FILE), json.dumps(lexicon.metadata, indent=2, default=str))
    return str(target)


def load_lexicon(path: str | Path) -> Lexicon:
    """Read a lexicon directory written by `write_lexicon` (or the train-lexicon job)."""
    folder = Path(path)
    if not (folder / METADATA_FILE).exists():
        raise FileNotFoundError(f"{path}: not a lexicon directory (no {METADATA_FILE}); run train-lexicon")
    metadata = json.loads((folder / METADATA_FILE).read_text())
    src_lang, trg_lang = metadata["src_lang"], metadata["trg_lang"]
    folds = int(metadata.get("held_out_folds") or 0)
    held_out = tuple(Lexicon(src_lang, trg_lang, _read_table(folder / HELD_OUT_DIR / f"{fold}.tsv.gz"))
                     for fold in range(folds))
    fold_of = {}
    if folds:
        with gzip.open(folder / HELD_OUT_DIR / PAGE_FOLDS_FILE, "rt", encoding="utf-8") as handle:
            fold_of = {url: int(fold) for url, fold in (line.rstrip("\n").rsplit("\t", 1) for line in handle)}
    return Lexicon(src_lang, trg_lang, _read_table(folder / LEXICON_FILE), metadata, held_out, fold_of)


def lexicon_dirs(path: str | Path) -> list[str]:
    """The lexicon directories a --lexicon DIR names: DIR itself, or its per-pair subfolders (train-lexicon with
    several pairs writes DIR/eng-fra/, DIR/eng-deu/ ...); a FileNotFoundError when it holds none."""
    folder = Path(path)
    if (folder / METADATA_FILE).exists():
        return [str(folder)]
    found = sorted(str(child) for child in folder.iterdir() if (child / METADATA_FILE).exists()) \
        if folder.is_dir() else []
    if not found:
        raise FileNotFoundError(f"{path}: not a lexicon directory nor a folder of them (no {METADATA_FILE}); "
                                "run train-lexicon")
    return found


def lexicon_for(lexicons: Iterable[Lexicon], src_lang: str, trg_lang: str) -> Lexicon | None:
    """The lexicon of a language pair from a collection, reversed when stored the other way round."""
    for lexicon in lexicons:
        if (lexicon.src_lang, lexicon.trg_lang) == (src_lang, trg_lang):
            return lexicon
        if (lexicon.src_lang, lexicon.trg_lang) == (trg_lang, src_lang):
            return lexicon.reversed()
    return None


def dictd_number(value: int) -> str:
    """dictd's base-64 number (the .index offsets), for writing fixtures."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    digits = ""
    while True:
        digits = alphabet[value % 64] + digits
        value //= 64
        if not value:
            return digits

