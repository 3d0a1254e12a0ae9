"""A page's real text in each of its languages, and the sentence alignment between two of them.

A logical page holds one passage (`PageText`); its version in a language (`Version`)
renders the passage's sentences (corpus ids) in that language with the differences
real translations have: a sentence dropped, one added (the passage's spare id), two
sentences merged into one (on either side: 2-1 or 1-2 beads), paragraphs split and
merged differently, a translator's note. `beads` recovers the exact alignment of two
versions from the ids their sentences render.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from parascout.udfs.sample_archive.corpus import Passage, TextCorpus
from parascout.udfs.sample_archive.vocabulary import NO_SPACE_LANGUAGES, sample_conf, vocabulary

BEAD_TYPES = ("1-1", "1-2", "2-1", "1-0", "0-1")
#: negative kinds of truth/pages.parquet
NEGATIVE_KINDS = ("same_template", "near_duplicate", "partial_translation", "third_language_source",
                  "boilerplate_only")
_SENTENCE_END = re.compile(r"[.!?。！？؟]+$")
_CLAUSE = re.compile(r"[,;:，；：、،؛]")


class Unit(NamedTuple):
    """One sentence of a version: the corpus ids it renders (two when merged, none for a note) and its text."""

    ids: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class PageText:
    """What every version of a logical page shares: the ids, who wrote the original, its paragraphing."""

    passage: Passage
    ids: tuple[str, ...]
    original: str
    seed: int
    merge_slots: tuple[int, ...] = ()  # positions i where ids i and i+1 may be one sentence
    original_merges: frozenset = frozenset()
    breaks: frozenset = frozenset()  # a paragraph starts at these id positions
    kinds: dict = field(default_factory=dict)  # lang -> negative kind
    negative_of: dict = field(default_factory=dict)  # lang -> (page key, lang) the negative imitates
    source_lang: str | None = None  # third_language_source: the language the original was written in

    def with_structure_of(self, other: PageText) -> PageText:
        """Same length and paragraphing as another page's text (a same-template decoy)."""
        return replace(self, merge_slots=other.merge_slots, original_merges=other.original_merges,
                       breaks=other.breaks)


@dataclass
class Version:
    """A page's text in one language: title, paragraphs of units, their headings, an optional note."""

    lang: str
    body_lang: str
    title: str
    paragraphs: list  # list[list[Unit]]
    headings: dict  # paragraph index -> heading
    note: Unit | None = None

    @property
    def units(self) -> list[Unit]:
        return [unit for paragraph in self.paragraphs for unit in paragraph] + ([self.note] if self.note else [])

    def paragraph_texts(self) -> list[str]:
        joiner = "" if self.body_lang in NO_SPACE_LANGUAGES else " "
        return [joiner.join(unit.text for unit in paragraph) for paragraph in self.paragraphs]


def plan_text(passage: Passage, n_ids: int, original: str, seed: int) -> PageText:
    """A page's shared text plan: its ids, the sentences that may merge, the original's paragraphs."""
    rng = random.Random(f"text:{seed}")
    ids = passage.ids[:n_ids]
    slots = tuple(sorted(rng.sample(range(0, len(ids) - 1, 2), min(2, len(ids) // 2))))
    merges = frozenset(slot for slot in slots if rng.random() < 0.5)
    inside = {slot + 1 for slot in slots}
    breaks, position = set(), 0
    while True:
        position += rng.randint(2, 4)
        if position >= len(ids) - 1:
            break
        if position not in inside:
            breaks.add(position)
    return PageText(passage, ids, original, seed, slots, merges, frozenset(breaks))


def build_version(text: PageText, lang: str, corpus: TextCorpus) -> Version:
    """The page's text in a language: the original as planned, a translation with its differences."""
    kind = text.kinds.get(lang)
    body_lang, rng, merges = _body_language_and_merges(text, lang)
    breaks, ids = set(text.breaks), list(text.ids)
    spare, note_lang = None, text.source_lang
    if body_lang != text.original:
        inside = {p for slot in text.merge_slots for p in (slot, slot + 1)}
        breaks = _regroup(rng, breaks, len(ids), {slot + 1 for slot in text.merge_slots})
        droppable = [p for p in range(1, len(ids)) if p not in inside]
        if droppable and rng.random() < 0.3:
            ids[rng.choice(droppable)] = None
        if text.passage.spare and kind != "partial_translation" and rng.random() < 0.25:
            spare = text.passage.spare
        note_lang = text.original if rng.random() < 0.2 else None
        if kind == "partial_translation":
            cut = partial_cut(text)
            ids[cut:] = [None] * (len(ids) - cut)
    texts = corpus.texts(body_lang)
    units = _units(ids, merges, texts, body_lang)
    if spare and spare in texts:
        units.append((len(ids), Unit((spare,), texts[spare])))
    paragraphs = []
    for position, unit in units:
        if not paragraphs or position in breaks:
            paragraphs.append([])
        paragraphs[-1].append(unit)
    headings = {k: heading(paragraph[0].text, body_lang) for k, paragraph in enumerate(paragraphs)
                if k and len(paragraphs) > 2 and rng.random() < 0.5}
    title = heading(paragraphs[0][0].text, body_lang, words=10) if paragraphs else ""
    note = Unit((), translator_note(lang, note_lang)) if note_lang and note_lang != lang else None
    return Version(lang, body_lang, title, paragraphs, headings, note)


def _body_language_and_merges(text: PageText, lang: str) -> tuple[str, random.Random, set]:
    """The language a version's body is written in, its random stream, and which sentences it merges."""
    body_lang = text.original if text.kinds.get(lang) == "boilerplate_only" else lang
    rng = random.Random(f"text:{text.seed}:{lang}")
    merges = set(text.original_merges)
    if body_lang != text.original:
        merges ^= {slot for slot in text.merge_slots if rng.random() < 0.4}
    return body_lang, rng, merges


def lead_and_title(text: PageText, lang: str, corpus: TextCorpus) -> tuple[str, str]:
    """A version's first sentence and title without building the whole version (the first id is never dropped)."""
    body_lang, _, merges = _body_language_and_merges(text, lang)
    texts = corpus.texts(body_lang)
    if not text.ids or text.ids[0] not in texts:
        version = build_version(text, lang, corpus)
        return (version.paragraphs[0][0].text if version.paragraphs else ""), version.title
    first = _units(list(text.ids[:2]), merges, texts, body_lang)[0][1].text
    return first, heading(first, body_lang, words=10)


def partial_cut(text: PageText) -> int:
    """Where a partial translation stops: a paragraph start within the first 70%, else about half-way."""
    inside = {slot + 1 for slot in text.merge_slots}
    early = [b for b in text.breaks if b <= 0.7 * len(text.ids)]
    if early:
        return max(early)
    return next(p for p in range(max(2, len(text.ids) // 2), len(text.ids) + 1) if p not in inside)


def _regroup(rng: random.Random, breaks: set, n_ids: int, forbidden: set) -> set:
    """A translator's paragraphs: one merged with the next, or one split in two."""
    breaks = set(breaks)
    if breaks and rng.random() < 0.35:
        breaks.discard(rng.choice(sorted(breaks)))
    if rng.random() < 0.35:
        free = [p for p in range(1, n_ids) if p not in breaks and p not in forbidden]
        if free:
            breaks.add(rng.choice(free))
    return breaks


def _units(ids: list, merges: set, texts: dict, lang: str) -> list[tuple[int, Unit]]:
    """(position, unit) of each sentence; a merged slot renders two ids as one sentence."""
    units, position = [], 0
    while position < len(ids):
        key = ids[position]
        following = ids[position + 1] if position + 1 < len(ids) else None
        if key in texts and position in merges and following in texts:
            units.append((position, Unit((key, following), merge_sentences(texts[key], texts[following], lang))))
            position += 2
            continue
        if key in texts:
            units.append((position, Unit((key,), texts[key])))
        position += 1
    return units


def merge_sentences(first: str, second: str, lang: str) -> str:
    """Two sentences written as one, as a translator joins them."""
    joiner = {"zho": "；", "ara": "؛ "}.get(lang, "; ")
    return _SENTENCE_END.sub("", first) + joiner + second


def heading(text: str, lang: str, words: int = 6) -> str:
    """A heading taken from a sentence: its first clause, at most `words` words (2·words characters in Chinese)."""
    clause = _CLAUSE.split(text, 1)[0].strip()
    if lang in NO_SPACE_LANGUAGES:
        return _SENTENCE_END.sub("", (clause if len(clause) >= 4 else text)[: words * 2])
    tokens = (clause if len(clause.split()) >= 3 else text).replace("(", "").replace(")", "").split()
    words_kept = _SENTENCE_END.sub("", " ".join(tokens[:words])).strip(" \"'«»“”‘’,;:")
    return words_kept[:1].upper() + words_kept[1:]


def phrases(lang: str) -> dict:
    """Boilerplate phrases of a language (conf/sample_archive.yaml), English where a language has none."""
    table = sample_conf()["boilerplate"]
    return table.get(lang) or table["eng"]


def translator_note(lang: str, source_lang: str) -> str:
    return phrases(lang)["note"].format(language=vocabulary(lang).language_names[source_lang])


def beads(text: PageText, src: Version, trg: Version) -> list[tuple[list[Unit], list[Unit]]]:
    """The sentence alignment of two versions of one page: groups of units rendering the same ids."""
    left, right = [u for u in src.units if u.ids], [u for u in trg.units if u.ids]
    order = {key: k for k, key in enumerate(text.passage.ids + (text.passage.spare,))}
    result, i, j = [], 0, 0
    while i < len(left) or j < len(right):
        if i < len(left) and j < len(right) and set(left[i].ids) & set(right[j].ids):
            group_src, group_trg = [left[i]], [right[j]]
            i, j = i + 1, j + 1
            while _ids(group_src) != _ids(group_trg):
                if i < len(left) and set(left[i].ids) & _ids(group_trg):
                    group_src.append(left[i])
                    i += 1
                elif j < len(right) and set(right[j].ids) & _ids(group_src):
                    group_trg.append(right[j])
                    j += 1
                else:
                    break
            result.append((group_src, group_trg))
        elif j >= len(right) or (i < len(left) and order[left[i].ids[0]] < order[right[j].ids[0]]):
            result.append(([left[i]], []))
            i += 1
        else:
            result.append(([], [right[j]]))
            j += 1
    result += [([src.note], [])] if src.note else []
    result += [([], [trg.note])] if trg.note else []
    return result


def _ids(units: list[Unit]) -> set:
    return {key for unit in units for key in unit.ids}
