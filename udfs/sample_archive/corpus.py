"""Real parallel text for the sample archive (`--text-corpus DIR`).

DIR holds `<iso639-3>.tsv.gz` files of `id<TAB>text` lines whose ids align across
languages (../shared/data/parallel-text/bible: verse ids). A document is an id's
prefix before its last dot (`b.GEN.1.7` -> chapter `b.GEN.1`); a passage is a run of
consecutive ids of one document, cut and ordered by the generator's seed. Each host
takes passages from its own share of that order and never takes one twice, so no
two page pairs share a passage while the corpus lasts (what is reused is counted).
"""
from __future__ import annotations

import functools
import gzip
import os
import random
import re
from dataclasses import dataclass
from importlib import resources

#: a passage holds this many ids (plus one spare id, kept for a sentence added on one side)
PASSAGE_LENGTHS = (4, 12)
MIN_PASSAGE = 3
IDS_PER_DOCUMENT_WITHOUT_DOTS = 20
_CORPUS_FILE = re.compile(r"^([a-z]{3})\.tsv\.gz$")
#: the verse-aligned Bible subset packaged in parascout.conf (English, French, German, Spanish; public domain)
BUNDLED_CORPUS = ("parallel-text", "bible")


class TextCorpusError(ValueError):
    """A --text-corpus directory that cannot be used (missing, no files, languages absent)."""


@dataclass(frozen=True)
class Passage:
    """Consecutive ids of one document, the languages holding all of them, and the id that follows."""

    index: int
    ids: tuple[str, ...]
    spare: str | None
    languages: frozenset

    @property
    def label(self) -> str:
        return f"{self.ids[0]}..{self.ids[-1]}"


def corpus_languages(directory: str) -> tuple[str, ...]:
    """The ISO 639-3 codes a corpus directory has a file for."""
    if not os.path.isdir(directory):
        raise TextCorpusError(f"--text-corpus: {directory} is not a directory")
    codes = tuple(sorted(m.group(1) for name in os.listdir(directory) if (m := _CORPUS_FILE.match(name))))
    if not codes:
        raise TextCorpusError(f"--text-corpus: no <iso639-3>.tsv.gz files in {directory}")
    return codes


def bundled_corpus() -> str:
    """The packaged corpus directory, so the demo has real translations without ../shared."""
    return str(resources.files("parascout.conf").joinpath(*BUNDLED_CORPUS))  # a folder on disk in every install


def describe_corpus(directory: str, languages: tuple[str, ...] = ()) -> str:
    """'Bible translations: English (American Standard Version (1901)), ...', from the corpus's MANIFEST.tsv
    (iso639_3, language, translation columns) where it has one, else its languages."""
    manifest = os.path.join(directory, "MANIFEST.tsv")
    codes = [code for code in corpus_languages(directory) if not languages or code in languages]
    if not os.path.isfile(manifest):
        return f"aligned text in {', '.join(codes)}"
    with open(manifest, encoding="utf-8") as handle:
        header, *rows = [line.rstrip("\n").split("\t") for line in handle if line.strip()]
    named = {row[header.index("iso639_3")]: row for row in rows if len(row) == len(header)}
    parts = [f"{named[code][header.index('language')]} ({named[code][header.index('translation')].split(' — ')[0]})"
             if code in named else code for code in codes]
    return "real translations: " + ", ".join(parts)


@functools.lru_cache(maxsize=32)
def load_texts(directory: str, lang: str) -> tuple[dict, int]:
    """{id: text} of one language, in file order, and the number of unusable lines skipped (no tab, no text)."""
    texts, skipped = {}, 0
    with gzip.open(os.path.join(directory, f"{lang}.tsv.gz"), "rb") as handle:
        lines = handle.read().decode("utf-8", errors="replace").split("\n")
    for line in lines:
        key, _, text = line.partition("\t")
        text = text.strip()
        if key and text:
            texts[key] = text
        elif line.strip():
            skipped += 1
    return texts, skipped


def document_of(key: str, position: int) -> str:
    """The document an id belongs to: its prefix before the last dot, else a block of consecutive ids."""
    return key.rsplit(".", 1)[0] if "." in key else f"#{position // IDS_PER_DOCUMENT_WITHOUT_DOTS}"


class TextCorpus:
    """The corpus restricted to an archive's languages; passages are cut per seed (cached)."""

    def __init__(self, directory: str, languages: tuple[str, ...]):
        available = corpus_languages(directory)
        missing = [lang for lang in languages if lang not in available]
        if missing:
            raise TextCorpusError(f"--text-corpus {directory} has no text for {','.join(missing)}; "
                                  f"it has {','.join(available)}")
        self.directory, self.languages = directory, tuple(languages)
        self._passages: dict[int, tuple[Passage, ...]] = {}

    def texts(self, lang: str) -> dict:
        return load_texts(self.directory, lang)[0]

    def skipped_lines(self) -> int:
        return sum(load_texts(self.directory, lang)[1] for lang in self.languages)

    @functools.cached_property
    def reference_ids(self) -> tuple[str, ...]:
        """Ids in the order of the archive language with the most of them."""
        return tuple(max((self.texts(lang) for lang in self.languages), key=len))

    def passages(self, seed: int) -> tuple[Passage, ...]:
        """Every passage of the corpus, cut and shuffled by the seed (cut once per process and seed)."""
        if seed not in self._passages:
            self._passages[seed] = self._cut(seed)
        return self._passages[seed]

    def _cut(self, seed: int) -> tuple[Passage, ...]:
        rng = random.Random(f"passages:{seed}")
        documents: dict[str, list[str]] = {}
        for position, key in enumerate(self.reference_ids):
            documents.setdefault(document_of(key, position), []).append(key)
        cuts = []
        for ids in documents.values():
            start = 0
            while len(ids) - start >= MIN_PASSAGE:
                length = min(rng.randint(*PASSAGE_LENGTHS), len(ids) - start)
                end = start + length
                cuts.append((tuple(ids[start:end]), ids[end] if end < len(ids) else None))
                start = end + 1  # the spare id belongs to this passage
        rng.shuffle(cuts)
        holders = {lang: self.texts(lang) for lang in self.languages}
        return tuple(Passage(index, ids, spare, frozenset(lang for lang, texts in holders.items()
                                                         if all(map(texts.__contains__, ids))))
                     for index, (ids, spare) in enumerate(cuts))

    def stream(self, seed: int, share: float) -> PassageStream:
        """A host's passages, starting at its share of the seed's passage order."""
        passages = self.passages(seed)
        return PassageStream(passages, int(share * len(passages)) % max(1, len(passages)))


class PassageStream:
    """Hands a host passages that hold all of a page's languages, each at most once while any is left."""

    def __init__(self, passages: tuple[Passage, ...], start: int):
        self.passages, self.start = passages, start
        self.cursors: dict = {}
        self.used: set[int] = set()
        self.reused = 0
        self.exhausted: dict = {}  # (languages, min_length) -> the passages to cycle through once none is left

    def take(self, languages: frozenset, min_length: int = MIN_PASSAGE) -> Passage:
        """The next unused passage with every language and at least min_length ids (reused and counted when none)."""
        key, total = (languages, min_length), len(self.passages)
        if key not in self.exhausted:
            position = self.cursors.get(key, self.start)
            for step in range(total):
                passage = self.passages[(position + step) % total]
                if passage.index not in self.used and languages <= passage.languages and len(passage.ids) >= min_length:
                    self.cursors[key] = position + step + 1
                    self.used.add(passage.index)
                    return passage
            self.exhausted[key] = [p for p in self.passages if languages <= p.languages and len(p.ids) >= min_length] \
                or [p for p in self.passages if len(p.ids) >= min_length] or list(self.passages)
        self.reused += 1
        fitting = self.exhausted[key]
        return fitting[(self.start + self.reused) % len(fitting)]
