"""Word translation lexicons: the Lexicon table with its stem back-off and cognates, the lexicon directory.

STRAND's content score (Resnik & Smith 2003, §3) links the words of two pages under a
translation lexicon. A lexicon here is a table of symmetric association probabilities
prob(src_word, trg_word) = sqrt(p(trg|src) · p(src|trg)); `udfs.lexicon.readers` reads what one is
learned from (aligned corpora, dictionaries, page pairs of an archive) and `udfs.lexicon.training`
learns it (IBM model 1, dictionary counts, held-out lexicons).

Identical strings, numbers and cognates are not stored: `cognate` and the words of
`udfs.common.language_id.tokenize` give tsim that evidence for any word. Nor are inflected forms: a word the lexicon lacks backs off to the
known words sharing its stem (`Stems`), so tsim links "königs" through "könig" though no training
pair held it. A lexicon directory holds `lexicon.tsv.gz` (src, trg, prob) and
`parascout_lexicon.json` (languages, sources, sizes, version, date) and, for a lexicon bootstrapped from an archive,
`held_out/`: lexicons each trained without one fold of its page pairs and the fold of each page.

Why one module: it is what every user of a lexicon needs (verify-pairs, fetch-docs, export-bitext, rank-pairs'
domain focus) and nothing more: the tokens it is keyed by, the table and its lookups, and the directory format
that stores it. The readers and the trainer, needed only where a lexicon is trained, live beside it.
"""
from __future__ import annotations

import gzip
import io
import json
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from parascout.udfs.common.stage_config import StageConfig, knob

LEXICON_FILE = "lexicon.tsv.gz"
METADATA_FILE = "parascout_lexicon.json"
FORMAT_VERSION = 1
HELD_OUT_DIR = "held_out"
PAGE_FOLDS_FILE = "pages.tsv.gz"


@dataclass(frozen=True)
class WordMatching(StageConfig):
    """How words a lexicon lacks still link: as cognates (similar spelling), or through the known words sharing their
    stem (an inflected form: "königs" -> "könig", "etxean" -> "etxe"). verify-pairs' `verification.matching`."""

    cognate_min_chars: int = knob(5, "cognates: both words at least this long", low=1)
    cognate_min_similarity: float = knob(0.8, "... and a normalised Indel similarity at least this high", low=0, high=1)
    stem_min_chars: int = knob(
        4, "a word the lexicon lacks backs off to the known words sharing its longest stem: a prefix of at least this "
           "many letters", low=1)
    stem_max_suffix: int = knob(3, "... that leaves each word at most this many letters beyond it", low=0)
    stem_weight: float = knob(0.5, "... and their translations count this many times their probability", low=0)


MATCHING = WordMatching()

@dataclass
class Stems:
    """One side's known words and the stems an unknown word may share with them: `index` maps each prefix of
    stem_min_chars letters or more, at most stem_max_suffix shorter than its word (the word itself included), to the
    known alphabetic words having it; `heads` holds their first stem_min_chars letters (most unknown words stop
    there)."""

    known: set[str]
    index: dict[str, list[str]]
    heads: set[str]
    min_chars: int
    max_suffix: int

    @classmethod
    def of(cls, words: Iterable[str], matching: WordMatching = MATCHING) -> Stems:
        known, index = set(words), {}
        shortest, suffix = matching.stem_min_chars, matching.stem_max_suffix
        for word in sorted(known):  # matches in string order, whatever the set's
            if len(word) >= shortest and word.isalpha():
                for length in range(max(shortest, len(word) - suffix), len(word) + 1):
                    index.setdefault(word[:length], []).append(word)
        return cls(known, index, {stem[:shortest] for stem in index}, shortest, suffix)

    def matches(self, word: str) -> list[str]:
        """The known words sharing the longest stem with an unknown alphabetic `word`: its longest prefix, of
        min_chars letters or more and at most max_suffix shorter than it, in `index`; none when `word` is
        known, short or holds a digit."""
        shortest = self.min_chars
        if len(word) < shortest or word[:shortest] not in self.heads or word in self.known or not word.isalpha():
            return []
        for length in range(len(word), max(shortest, len(word) - self.max_suffix) - 1, -1):
            matches = self.index.get(word[:length])
            if matches:
                return matches
        return []


def cognate(a: str, b: str, matching: WordMatching = MATCHING) -> float:
    """Normalised Indel similarity of two long words (0 when either is short or they differ much)."""
    from rapidfuzz.distance import Indel

    if len(a) < matching.cognate_min_chars or len(b) < matching.cognate_min_chars:
        return 0.0
    similarity = Indel.normalized_similarity(a, b)
    return similarity if similarity >= matching.cognate_min_similarity else 0.0


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
    _stems: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # (lang, stem rule) -> Stems
    _reversed: list = field(default_factory=list, init=False, repr=False, compare=False)  # [the reversed lexicon]

    def prob(self, src_word: str, trg_word: str) -> float:
        return self.table.get(src_word, {}).get(trg_word, 0.0)

    def translations(self, src_word: str) -> dict[str, float]:
        return self.table.get(src_word, {})

    def stem_matches(self, word: str, side: str = "src", matching: WordMatching = MATCHING) -> list[str]:
        """The known words of a side ('src': the table's source words, 'trg': its translations) that share the longest
        stem with `word`, a word that side lacks (none for a known, short or non-alphabetic word: Stems.matches)."""
        return self.stems(side, matching).matches(word)

    def stems(self, side: str = "src", matching: WordMatching = MATCHING) -> Stems:
        """A side's known words and their stems, built once per language and stem rule (a reversed lexicon shares
        them)."""
        key = (self.src_lang if side == "src" else self.trg_lang, matching.stem_min_chars, matching.stem_max_suffix)
        if key not in self._stems:
            self._stems[key] = Stems.of(self.table if side == "src" else
                                        {trg for row in self.table.values() for trg in row}, matching)
        return self._stems[key]

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
