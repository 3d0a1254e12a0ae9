"""Content similarity of two pages: STRAND's tsim (Resnik & Smith 2003, §3, eq. 4) and its companions.

tsim links the words of two texts (the first 500 words of each) one to one by competitive
linking (Melamed 2000): candidate links are scored — identical strings (numbers, names, codes)
1.0, a lexicon entry its probability (a word the lexicon lacks through the known words sharing its
stem, stem_weight times: Vocabulary.cut), a cognate (udfs.lexicon.lexicon.cognate) its similarity times
cognate_weight — and taken best first (ties by the words, descending) while both words are still
free. Every word left over is a one-word link, so

    tsim = two-word links / all links = L / (N_src + N_trg - L).

`tsim_idf` weighs every word by its inverse document frequency within the host (a two-word
link by the mean of its words'), so shared template words count little and names much.
`short_side_coverage` is the share of the shorter text's words linked: tsim's denominator
grows with the length difference, which a terse translation (Arabic, Basque) has for real.
`diagonal_share` is the (IDF-weighted) share of linked word occurrences whose relative positions
in the two texts differ by at most diagonal_band (a type's k-th free occurrence links the other's
k-th): a translation says the same things in the same order, while two listing pages of one
section in two languages share translated teasers at shifted places between items that differ.
Companions: overlap of numbers and of identical rare tokens, paragraph-count ratio and the
correlation of paragraph lengths. (Which language a page's prose is in is verification's question, answered
once: udfs.verify.pages.HostPages.language_shares.)

Speed: a host's pages share one `Vocabulary` (words as integer ids, every word tokenised and folded
once). The lexicon is cut to the host's words once per host, every word's cognates are found once
per host, and each page's candidate links (identical word, lexicon entries, cognates — its
"image") are built and sorted once per page; a pair then only keeps the image entries whose other
word is on the other page, in that order, and runs the greedy linking over them.
"""
from __future__ import annotations

import functools
import math
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from parascout.udfs.common.language_id import tokenize
from parascout.udfs.lexicon.config import DEFAULT as LEXICON_DEFAULT
from parascout.udfs.lexicon.config import LexiconConfig
from parascout.udfs.lexicon.lexicon import (
    Lexicon,
    cognate,
)
from parascout.udfs.lexicon.readers import main_paragraphs
from parascout.udfs.verify.structure import pearson_significance
from parascout.udfs.verify.verification_config import DEFAULT, VerificationConfig

NO_WORDS: frozenset[str] = frozenset()


@functools.lru_cache(maxsize=1 << 16)
def _fold(word: str) -> str:
    """The word without diacritics (cognates compare folded words); cached: a host's pages repeat their words."""
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


@dataclass
class Rows:
    """Scored (id -> other id) entries of a host's words, grouped by id (compressed sparse rows)."""

    offsets: np.ndarray  # id i's entries are [offsets[i], offsets[i + 1])
    targets: np.ndarray
    scores: np.ndarray

    @classmethod
    def of(cls, size: int, sources: list[int], targets: list[int], scores: list[float]) -> Rows:
        order = np.argsort(np.array(sources, dtype=np.int64), kind="stable")
        offsets = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.bincount(np.array(sources, dtype=np.int64), minlength=size), out=offsets[1:])
        return cls(offsets, np.array(targets, dtype=np.int64)[order], np.array(scores, dtype=np.float64)[order])

    def of_types(self, types: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(index into `types`, other id, score) of the entries of the ids `types`."""
        starts, counts = self.offsets[types], self.offsets[types + 1] - self.offsets[types]
        total = int(counts.sum())
        within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        entries = np.repeat(starts, counts) + within
        return np.repeat(np.arange(len(types)), counts), self.targets[entries], self.scores[entries]


class Vocabulary:
    """A host's words as integer ids, shared by its pages, and what tsim derives from them once per host:
    the words' string order (ties in competitive linking), cognates, lexicon cuts and IDF arrays.

    Derived tables carry the vocabulary size they were built at and are rebuilt if words were added since. The
    verification config it carries sets how its pages' words are read and linked (tsim_max_words, cognates, the
    diagonal band)."""

    def __init__(self, config: VerificationConfig = DEFAULT) -> None:
        self.config = config
        self.ids: dict[str, int] = {}
        self._derived: dict[tuple, tuple] = {}  # key -> (size, the keyed object kept alive, value)
        self._scratch = np.zeros(0, dtype=np.int64)

    @property
    def size(self) -> int:
        return len(self.ids)

    def index(self, tokens: list[str]) -> np.ndarray:
        """Ids of the tokens (new words get the next ids)."""
        ids = self.ids
        setdefault = ids.setdefault
        return np.array([setdefault(word, len(ids)) for word in tokens], dtype=np.int64)

    def _cached(self, key: tuple, keep: object, build):
        entry = self._derived.get(key)
        if entry is None or entry[0] != self.size or entry[1] is not keep:
            entry = self._derived[key] = (self.size, keep, build())
        return entry[2]

    def words(self) -> list[str]:
        """Words by id."""
        return self._cached(("words",), None, lambda: list(self.ids))

    def ranks(self) -> np.ndarray:
        """Each id's rank in the words' string order."""
        def build():
            words = self.words()
            ranks = np.empty(len(words), dtype=np.int64)
            ranks[sorted(range(len(words)), key=words.__getitem__)] = np.arange(len(words))
            return ranks
        return self._cached(("ranks",), None, build)

    def cognates(self) -> Rows:
        """cognate_weight × similarity to each other host word it is a cognate of (folded words of at least
        matching.cognate_min_chars sharing a cognate_prefix-letter prefix, udfs.lexicon.lexicon.cognate), per id."""
        prefix, weight, matching = self.config.cognate_prefix, self.config.cognate_weight, self.config.matching

        def build():
            groups: dict[str, list[tuple[int, str]]] = {}
            for word, word_id in self.ids.items():
                if len(word) >= matching.cognate_min_chars and not word.isdigit():
                    folded = _fold(word)
                    groups.setdefault(folded[:prefix], []).append((word_id, folded))
            sources, targets, scores = [], [], []
            for group in groups.values():
                for index, (word_id, folded) in enumerate(group):
                    for other_id, other_folded in group[index + 1:]:
                        similarity = cognate(folded, other_folded, matching)  # symmetric: one call for both directions
                        if similarity:
                            sources += (word_id, other_id)
                            targets += (other_id, word_id)
                            scores += (weight * similarity,) * 2
            return Rows.of(self.size, sources, targets, scores)
        return self._cached(("cognates",), None, build)

    def cut(self, lexicon: Lexicon) -> Rows:
        """The lexicon restricted to the host's words, on ids: each src id's (trg id, prob) entries. A host word neither
        side of the lexicon knows stands in for the known words sharing its stem (Lexicon.stem_matches), at stem_weight
        (squared when both words stand in): an inflected form learned nowhere still links to its stem's translations."""
        matching = self.config.matching
        stem_weight, head = matching.stem_weight, matching.stem_min_chars

        def build():
            ids, table = self.ids, lexicon.table
            src_stems, trg_stems = lexicon.stems("src", matching), lexicon.stems("trg", matching)
            # the host words neither side knows (a word one side knows is in that side's language) that may have a stem
            unknown = [(word, ids[word]) for word in ids.keys() - src_stems.known - trg_stems.known
                       if word[:head] in src_stems.heads or word[:head] in trg_stems.heads]
            stand_ins: dict[str, list[int]] = {}  # a known translation -> ids of the host words sharing its stem
            for word, word_id in unknown:
                for known in trg_stems.matches(word):
                    stand_ins.setdefault(known, []).append(word_id)
            # a pair may get two entries (two translations share a stand-in): competitive linking takes the first
            sources, targets, probs = [], [], []
            rows = [(word_id, table[word], 1.0) for word, word_id in ids.items() if word in table]
            rows += [(word_id, table[known], stem_weight) for word, word_id in unknown
                     for known in src_stems.matches(word)]
            for word_id, translations, weight in rows:
                for translation, prob in translations.items():
                    other_id = ids.get(translation)
                    if other_id is not None:
                        sources.append(word_id)
                        targets.append(other_id)
                        probs.append(prob * weight)
                    others = stand_ins.get(translation)
                    if others:
                        sources += [word_id] * len(others)
                        targets += others
                        probs += [prob * weight * stem_weight] * len(others)
            return Rows.of(self.size, sources, targets, probs)
        return self._cached(("cut", id(lexicon)), lexicon, build)

    def weights(self, idf: dict[str, float], default_idf: float) -> np.ndarray:
        """Each id's IDF (default_idf for words the table lacks)."""
        return self._cached(("idf", id(idf), default_idf), idf, lambda: np.array(
            [idf.get(word, default_idf) for word in self.ids], dtype=np.float64))

    def rare_mask(self, rare: set[str]) -> np.ndarray:
        """Per id: a rare word that is not a number and has more than 2 characters."""
        return self._cached(("rare", id(rare)), rare, lambda: np.array(
            [word in rare and not word.isdigit() and len(word) > 2 for word in self.ids], dtype=bool))

    def scratch(self) -> np.ndarray:
        """A zeroed int array with a slot per id (callers leave it zeroed)."""
        if len(self._scratch) < self.size:
            self._scratch = np.zeros(max(self.size, 2 * len(self._scratch)), dtype=np.int64)
        return self._scratch


@dataclass(eq=False)
class PageText:
    """What tsim needs of one page, computed once per page (not once per pair): its first tsim_max_words words as
    ids of a Vocabulary (pages compared share one; a page from another is re-indexed once), grouped by word
    type (`types` sorted ids, their counts, and each type's relative positions in text order), its numbers and
    paragraph lengths."""

    vocabulary: Vocabulary
    ids: np.ndarray
    numbers: frozenset[str]
    paragraph_lengths: list[int]
    types: np.ndarray = field(init=False)
    counts: list[int] = field(init=False)
    starts: list[int] = field(init=False)  # a type's first entry in `positions`
    positions: list[float] = field(init=False)  # relative positions (index / words), grouped by type
    first_seen: np.ndarray = field(init=False)  # type indices in order of first occurrence
    cache: dict = field(default_factory=dict, repr=False)  # per page and vocabulary object: images, weights

    def __post_init__(self) -> None:
        order = np.argsort(self.ids, kind="stable")  # occurrences grouped by type, each type's in text order
        grouped = self.ids[order]
        starts = np.flatnonzero(np.concatenate(([True], grouped[1:] != grouped[:-1]))) if len(order) else order
        counts = np.diff(np.append(starts, len(order)))
        self.types, self.counts, self.starts = grouped[starts], counts.tolist(), starts.tolist()
        self.positions = (order / max(len(order), 1)).tolist()
        self.first_seen = np.argsort(order[starts], kind="stable")

    @property
    def words(self) -> int:
        return len(self.ids)

    def _cached(self, key: tuple, keep: object, build):
        entry = self.cache.get(key)
        if entry is None or entry[0] != self.vocabulary.size or entry[1] is not keep:
            entry = self.cache[key] = (self.vocabulary.size, keep, build())
        return entry[2]

    def in_vocabulary(self, vocabulary: Vocabulary) -> PageText:
        """This page with ids of `vocabulary` (itself when it already has them)."""
        if vocabulary is self.vocabulary:
            return self
        key = ("in", id(vocabulary))
        entry = self.cache.get(key)
        if entry is None or entry[0] is not vocabulary:
            words = self.vocabulary.words()
            page = PageText(vocabulary, vocabulary.index([words[i] for i in self.ids.tolist()]), self.numbers,
                            self.paragraph_lengths)
            entry = self.cache[key] = (vocabulary, page)
        return entry[1]

    def word_types(self) -> list[str]:
        """The page's distinct words in order of first occurrence."""
        words = self.vocabulary.words()
        return [words[i] for i in self.types[self.first_seen].tolist()]

    def image(self, lexicon: Lexicon | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(type index on this page, other word's id, score) of every link this page's words may take —
        identical word, lexicon entry, cognate — sorted best first (score, then the words, descending)."""
        def build():
            vocabulary = self.vocabulary
            parts = [(np.arange(len(self.types)), self.types, np.ones(len(self.types)))]  # identical words
            parts.append(vocabulary.cognates().of_types(self.types))
            if lexicon is not None:
                parts.append(vocabulary.cut(lexicon).of_types(self.types))
            sources, targets, scores = (np.concatenate(column) for column in zip(*parts))
            ranks = vocabulary.ranks()
            order = np.lexsort((ranks[targets], ranks[self.types[sources]], scores))[::-1]
            return sources[order], targets[order], scores[order]
        return self._cached(("image", id(lexicon)), lexicon, build)

    def weights(self, idf: dict[str, float], default_idf: float) -> tuple[list[float], float]:
        """(IDF per type, the page's IDF mass: every word occurrence's IDF summed in order of first occurrence)."""
        def build():
            per_type = self.vocabulary.weights(idf, default_idf)[self.types]
            mass = sum((np.asarray(self.counts)[self.first_seen] * per_type[self.first_seen]).tolist())
            return per_type.tolist(), mass
        return self._cached(("idf", id(idf), default_idf), idf, build)

    def rare_types(self, rare: set[str]) -> frozenset[int]:
        """Ids of the page's rare words (not numbers, more than 2 characters)."""
        return self._cached(("rare", id(rare)), rare, lambda: frozenset(
            self.types[self.vocabulary.rare_mask(rare)[self.types]].tolist()))


def page_text(paragraphs: Iterable[dict] | None, lang: str | None, main_text: str | None = None,
              vocabulary: Vocabulary | None = None) -> PageText:
    """Tokens (first tsim_max_words of the non-boilerplate text) as ids of `vocabulary` (the host's; a new one when
    None), numbers, paragraph lengths. Every word of the text joins the vocabulary, so a page made
    later of the host's paragraphs (spliced, part of a page) adds none."""
    main = main_paragraphs(paragraphs)
    text = "\n".join(p["text"] for p in main) if main else (main_text or "")
    vocabulary = Vocabulary() if vocabulary is None else vocabulary
    tokens = tokenize(text, lang)
    ids = vocabulary.index(tokens)[:vocabulary.config.tsim_max_words]
    numbers = frozenset(word for word in set(tokens[:vocabulary.config.tsim_max_words]) if word.isdigit())
    return PageText(vocabulary, ids, numbers, [len(p["text"]) for p in main])


def _shared(src: PageText, trg: PageText) -> tuple[PageText, PageText]:
    """Both pages on one vocabulary: the larger one's (the host's, when a page was made without it)."""
    vocabulary = src.vocabulary if src.vocabulary.size >= trg.vocabulary.size else trg.vocabulary
    return src.in_vocabulary(vocabulary), trg.in_vocabulary(vocabulary)


def _links(src: PageText, trg: PageText, lexicon: Lexicon | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(src type index, trg type index, score) of every candidate link of the pair, best first: the src page's
    image entries whose other word is on the trg page."""
    sources, targets, scores = src.image(lexicon)
    slots = src.vocabulary.scratch()
    slots[trg.types] = np.arange(1, len(trg.types) + 1)
    found = slots[targets]
    slots[trg.types] = 0
    kept = np.flatnonzero(found)
    return sources[kept], found[kept] - 1, scores[kept]


def candidate_links(src: PageText, trg: PageText, lexicon: Lexicon | None) -> list[tuple[float, str, str]]:
    """(score, src_word, trg_word) for every pair of word types that may link, best first (a pair may appear
    twice, e.g. identical and in the lexicon: competitive linking uses the first)."""
    src, trg = _shared(src, trg)
    words = src.vocabulary.words()
    src_types, trg_types = src.types.tolist(), trg.types.tolist()
    sources, targets, scores = _links(src, trg, lexicon)
    return [(score, words[src_types[s]], words[trg_types[t]])
            for s, t, score in zip(sources.tolist(), targets.tolist(), scores.tolist())]


def tsim(src: PageText, trg: PageText, lexicon: Lexicon | None, src_idf: dict[str, float] | None = None,
         trg_idf: dict[str, float] | None = None, default_idf: float = 1.0) -> tuple[float | None, float | None]:
    """(tsim, tsim_idf) of two pages by competitive linking; (None, None) when a side has no words."""
    result = linked(src, trg, lexicon, src_idf, trg_idf, default_idf)
    return result["tsim"], result["tsim_idf"]


def linked(src: PageText, trg: PageText, lexicon: Lexicon | None, src_idf: dict[str, float] | None = None,
           trg_idf: dict[str, float] | None = None, default_idf: float = 1.0) -> dict:
    """tsim, tsim_idf, two-word `links`, diagonal_share and best_side_coverage_idf (the IDF mass linked on the
    better-covered side: high for a translation, and for a partial one, low when both sides say other things)."""
    if not src.words or not trg.words:
        return {"tsim": None, "tsim_idf": None, "links": 0, "diagonal_share": None, "best_side_coverage_idf": None}
    src, trg = _shared(src, trg)
    src_counts, trg_counts = src.counts, trg.counts
    src_free, trg_free = list(src_counts), list(trg_counts)
    src_starts, trg_starts, src_positions, trg_positions = src.starts, trg.starts, src.positions, trg.positions
    weighted = src_idf is not None
    src_weights = src.weights(src_idf, default_idf)[0] if weighted else None
    trg_weights = trg.weights(trg_idf, default_idf)[0] if weighted else None
    links = 0
    src_linked_weight = trg_linked_weight = 0.0
    diagonal = linked_mass = 0.0
    band = src.vocabulary.config.diagonal_band
    sources, targets, _ = _links(src, trg, lexicon)
    for s, t in zip(sources.tolist(), targets.tolist()):
        s_free = src_free[s]
        if not s_free:
            continue
        t_free = trg_free[t]
        if not t_free:
            continue
        n = min(s_free, t_free)
        src_first, trg_first = src_starts[s] + src_counts[s] - s_free, trg_starts[t] + trg_counts[t] - t_free
        src_free[s], trg_free[t] = s_free - n, t_free - n
        links += n
        weight = 1.0
        if weighted:
            s_weight, t_weight = src_weights[s], trg_weights[t]
            src_linked_weight += n * s_weight
            trg_linked_weight += n * t_weight
            weight = (s_weight + t_weight) / 2
        if n == 1:
            on_diagonal = abs(src_positions[src_first] - trg_positions[trg_first]) <= band
        else:
            on_diagonal = sum([abs(a - b) <= band for a, b in zip(
                src_positions[src_first:src_first + n], trg_positions[trg_first:trg_first + n])])
        diagonal += weight * on_diagonal
        linked_mass += weight * n
    masses = (src.weights(src_idf, default_idf)[1], trg.weights(trg_idf, default_idf)[1]) if weighted else None
    return link_scores(links, src.words + trg.words, diagonal, linked_mass, (src_linked_weight, trg_linked_weight),
                       masses)


def link_scores(links: int, words: int, diagonal: float, linked_mass: float, linked_weights: tuple[float, float],
                masses: tuple[float, float] | None) -> dict:
    """`linked`'s result from competitive linking's sums: two-word links, both pages' words, the (weighted) linked
    occurrences on the diagonal and in all, the IDF mass linked per side and, when weighted, each page's IDF mass
    (None: no IDF, so no tsim_idf or coverage)."""
    result = {"tsim": links / (words - links), "tsim_idf": None, "links": links,
              "diagonal_share": diagonal / linked_mass if linked_mass > 0 else None, "best_side_coverage_idf": None}
    if masses is None:
        return result
    (src_linked, trg_linked), (src_weight, trg_weight) = linked_weights, masses
    linked_weight = (src_linked + trg_linked) / 2
    total = linked_weight + src_weight - src_linked + trg_weight - trg_linked
    result["tsim_idf"] = linked_weight / total if total > 0 else None
    if src_weight > 0 and trg_weight > 0:
        result["best_side_coverage_idf"] = max(src_linked / src_weight, trg_linked / trg_weight)
    return result


def inverse_document_frequencies(pages: Iterable[PageText], config: VerificationConfig = DEFAULT
                                 ) -> tuple[dict[str, float], float, set[str]]:
    """(idf per word, the idf of an unseen word, the rare words: rare_max_share, rare_max_docs) over one host's
    pages."""
    frequencies: Counter = Counter()
    documents = 0
    for page in pages:
        documents += 1
        frequencies.update(page.word_types())
    idf = {word: math.log((documents + 1) / (df + 0.5)) for word, df in frequencies.items()}
    rare_limit = max(2, min(config.rare_max_docs, int(config.rare_max_share * documents)))  # a pair's shared name: df 2
    rare = {word for word, df in frequencies.items() if df <= rare_limit}
    return idf, math.log((documents + 1) / 0.5), rare


def overlap(a: frozenset | set, b: frozenset | set) -> float | None:
    """Dice coefficient of two sets; None when both are empty."""
    if not a and not b:
        return None
    return 2 * len(a & b) / (len(a) + len(b))


def content_features(src: PageText, trg: PageText, lexicon: Lexicon | None, src_idf: dict | None = None,
                     trg_idf: dict | None = None, default_idf: float = 1.0, rare: set[str] | None = None) -> dict:
    """tsim, tsim_idf, diagonal share, number and rare-token overlap, paragraph ratio and length correlation."""
    src, trg = _shared(src, trg)
    rare = rare if rare is not None else NO_WORDS
    return feature_row(linked(src, trg, lexicon, src_idf, trg_idf, default_idf), src, trg,
                       src.rare_types(rare), trg.rare_types(rare))


def feature_row(result: dict, src, trg, src_rare: set, trg_rare: set) -> dict:
    """The content feature row from a pair's links (`linked`) and its two pages' counts."""
    count = min(len(src.paragraph_lengths), len(trg.paragraph_lengths))
    r, _ = pearson_significance(src.paragraph_lengths[:count], trg.paragraph_lengths[:count])
    paragraphs = max(len(src.paragraph_lengths), len(trg.paragraph_lengths))
    shorter = min(src.words, trg.words)
    return {"tsim": result["tsim"], "tsim_idf": result["tsim_idf"],
            "short_side_coverage": result["links"] / shorter if shorter else None,
            "diagonal_share": result["diagonal_share"], "best_side_coverage_idf": result["best_side_coverage_idf"],
            "number_overlap": overlap(src.numbers, trg.numbers), "rare_overlap": overlap(src_rare, trg_rare),
            "text_paragraph_ratio": count / paragraphs if paragraphs else None, "paragraph_length_r": r,
            "src_words": src.words, "trg_words": trg.words}


def cross_fitted_pairs(src_lang: str, trg_lang: str, learned: list[tuple[str, str]], proposed: list[tuple[str, str]],
                       rivals: Iterable[tuple[str, str]], paragraphs: dict, folds: int = 2, iterations: int = 5,
                       judged: list[tuple[str, str]] | None = None, config: LexiconConfig = LEXICON_DEFAULT
                       ) -> list[tuple[str, str]]:
    """The `judged` page pairs (src_url, trg_url; by default the `proposed` ones) that a lexicon which never saw them
    still finds their pages' best: judged pairs split into folds by their source page, each fold scored (tsim) with a
    lexicon trained on the `learned` text pairs plus the OTHER folds' proposed pairs, and kept only when it beats,
    alone, every `rivals` pair of its source page and of its target page (e.g. each of them with every page of its host
    in the other language). A wrong pair learned from would teach its own words and confirm itself; scored by a
    lexicon without it, it must win on words other pages taught. `paragraphs`: url -> texts.paragraphs of every page
    named. `config`: how the fold lexicons are trained and which paragraphs teach them."""
    from zlib import crc32

    from parascout.udfs.lexicon.readers import page_pair_texts
    from parascout.udfs.lexicon.training import train_lexicon

    judged = proposed if judged is None else judged
    fold_of = {pair: crc32(pair[0].encode()) % folds for pair in {*proposed, *judged}}
    rivals_of: dict[str, set] = {}
    for pair in set(rivals) | set(judged):
        for url in pair:
            rivals_of.setdefault(url, set()).add(pair)
    pages: dict[str, PageText] = {}
    vocabulary = Vocabulary()

    def page(url: str, lang: str) -> PageText:
        if url not in pages:
            pages[url] = page_text(paragraphs.get(url), lang, vocabulary=vocabulary)
        return pages[url]

    kept = []
    for fold in range(folds):
        scored = [pair for pair in judged if fold_of[pair] == fold]
        if not scored:
            continue
        others = [text for pair in proposed if fold_of[pair] != fold
                  for text in page_pair_texts(paragraphs.get(pair[0]), paragraphs.get(pair[1]), config)]
        lexicon = train_lexicon(src_lang, trg_lang, learned + others, iterations=iterations, config=config)
        scores: dict[tuple[str, str], float] = {}
        for src, trg in [*scored, *(rival for pair in scored for url in pair for rival in rivals_of[url])]:
            if (src, trg) not in scores:
                scores[src, trg] = tsim(page(src, src_lang), page(trg, trg_lang), lexicon)[0] or 0.0
        kept += [pair for pair in scored if scores[pair] > 0
                 and all(scores[rival] < scores[pair] for url in pair for rival in rivals_of[url] if rival != pair)]
    return kept
