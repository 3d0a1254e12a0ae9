"""What a lexicon is learned from, read as (src, trg) text pairs: aligned corpora, dictionaries, page pairs.

- a sentence- or verse-aligned corpus (TSV pairs, or two id-aligned `id<TAB>text` files);
- a bilingual dictionary (FreeDict dictd `.index` + `.dict[.dz]`, FreeDict TEI, Bitextor `.dic`);
- paragraph pairs aligned inside page pairs the archive itself makes confident, plus the two
  pages' whole main texts (`page_pair_texts`; the train-lexicon job picks the pages), so a
  language pair with no resources still gets a lexicon.

Each reader counts what it read and skipped (`counts`: input, kept, reason:...), for the job's report.

Why a module of its own: the readers know file formats and page paragraphs, not the lexicon; they hand
lexicon_training plain text pairs, whatever their source.
"""
from __future__ import annotations

import gzip
import io
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from xml.etree import ElementTree

from parascout.udfs.lexicon.config import DEFAULT, LexiconConfig


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
                    min_length_ratio: float = DEFAULT.paragraph_length_ratio) -> list[tuple[str, str]]:
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


def page_pair_texts(src_paragraphs: list[dict], trg_paragraphs: list[dict], config: LexiconConfig = DEFAULT
                    ) -> list[tuple[str, str]]:
    """What a confident page pair teaches a bootstrapped lexicon: its paragraph pairs and, as one more
    pair, the two pages' whole main texts (their first max_sentence_words words), which still pair the
    words of paragraphs the type sequence could not align (on seed-42/99 sample archives the separation
    of true from false candidates by tsim_idf rose most for ara and eus, AUC 0.90 -> 0.96, 0.94 -> 0.99)."""
    pairs = paragraph_pairs(src_paragraphs, trg_paragraphs, config.paragraph_length_ratio)
    src, trg = main_paragraphs(src_paragraphs), main_paragraphs(trg_paragraphs)
    if src and trg:
        pairs.append(("\n".join(p["text"] for p in src), "\n".join(p["text"] for p in trg)))
    return pairs


def dictd_number(value: int) -> str:
    """dictd's base-64 number (the .index offsets), for writing fixtures."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    digits = ""
    while True:
        digits = alphabet[value % 64] + digits
        value //= 64
        if not value:
            return digits

