"""Throughput of verify-pairs with content features (tsim), against the previous content path in the same run.

Reads a real-text sample archive's `docs`, `texts` and `candidates` (as eval_verify.py leaves them
under ROOT) and times on one core, in CPU-seconds (time.process_time; best of --repeat runs):
(a) udfs.verify.verification.verify_frame with structure only (no texts), (b) verify_frame with structure +
tsim under the lexicons (what verify-pairs runs), and (c) the content features alone, per host as
verify-pairs prepares them, by the package (udfs.verify.tsim: a host's words as integer ids, each page's
candidate links built and sorted once) against the previous path kept here as the baseline
(`previous_content_features`: string Counters per page, every pair's candidate links re-scored and
re-sorted, the lexicon cut by strings, a script test per word in the tokeniser), checking that every
feature of every pair is identical. With a bootstrapped lexicon (train-lexicon --from-archive: held-out lexicons),
(d) verify_frame with random pairs as verify-pairs runs it, with and without the held-out scores of the label rows.
Also times lexicon training on the Bible (eng–fra).

    .venv/bin/python benchmarks/bench_verify.py --root /tmp/eval-verify/seed42/root \\
        --lexicon /tmp/eval-verify/lexicon-bible-fra [--lexicon ...] [--pairs 3000] [--repeat 3] [--no-training]
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parascout.udfs.common import table_layout
from parascout.udfs.common.lexicon import (
    _WORD,
    COGNATE_MIN_CHARS,
    STEM_WEIGHT,
    Lexicon,
    cognate,
    lexicon_for,
    load_lexicon,
    normalised,
    script_tokens,
)
from parascout.udfs.common.lexicon_readers import main_paragraphs, read_aligned_files
from parascout.udfs.common.lexicon_training import train_lexicon
from parascout.udfs.verify.pages import HostPages, as_list
from parascout.udfs.verify.structure import ThresholdRule
from parascout.udfs.verify.tsim import (
    COGNATE_PREFIX,
    COGNATE_WEIGHT,
    DIAGONAL_BAND,
    MAX_WORDS,
    RARE_MAX_DOCS,
    RARE_MAX_SHARE,
    _fold,
    content_features,
    feature_row,
    link_scores,
)
from parascout.udfs.verify.verification import verify_frame

#: random same-site pairs per host and language pair in the held-out timing (verify-pairs' --random-pairs default)
RANDOM_PAIRS = 50
BIBLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "parallel-text" / "bible"
DOC_COLUMNS = ["url", "status", "cld2_lang", "cld2_reliable", "text_chars", "paragraphs", "images", "structure"]


# ---- the previous content path: the baseline (the package has one implementation, udfs.verify.tsim) ----------
def previous_tokenize(text: str | None, lang: str | None = None) -> list[str]:
    """udfs.common.lexicon.tokenize as it was: a Han test per word, whatever the page's script."""
    if not text:
        return []
    text, arabic = normalised(text)
    return script_tokens(_WORD.findall(text), True, arabic)


@dataclass
class PreviousPage:
    counts: Counter
    words: int
    numbers: frozenset[str]
    paragraph_lengths: list[int]
    lang_share: float | None
    prefixes: dict[str, list[tuple[str, str]]]
    positions: dict[str, list[float]]
    images: dict = field(default_factory=dict)


def previous_page_text(paragraphs, lang: str | None, main_text: str | None = None) -> PreviousPage:
    main = main_paragraphs(paragraphs)
    text = "\n".join(p["text"] for p in main) if main else (main_text or "")
    tokens = previous_tokenize(text, lang)[:MAX_WORDS]
    counts = Counter(tokens)
    labelled = [(len(p["text"]), p.get("lang")) for p in main if p.get("lang")]
    total = sum(length for length, _ in labelled)
    share = sum(length for length, code in labelled if code == lang) / total if total and lang else None
    prefixes: dict[str, list[tuple[str, str]]] = {}
    for word in counts:
        if len(word) >= COGNATE_MIN_CHARS and not word.isdigit():
            folded = _fold(word)
            prefixes.setdefault(folded[:COGNATE_PREFIX], []).append((word, folded))
    positions: dict[str, list[float]] = {}
    for index, token in enumerate(tokens):
        positions.setdefault(token, []).append(index / len(tokens))
    return PreviousPage(counts, len(tokens), frozenset(w for w in counts if w.isdigit()),
                        [len(p["text"]) for p in main], share, prefixes, positions)


def previous_candidate_links(src: PreviousPage, trg: PreviousPage, lexicon: Lexicon | None) -> list:
    trg_counts = trg.counts
    links = [(1.0, word, word) for word in src.counts if word in trg_counts]
    if id(lexicon) not in src.images:
        table = lexicon.table if lexicon is not None else {}
        src.images[id(lexicon)] = [(prob, word, translation) for word in src.counts
                                   for translation, prob in (table.get(word) or {}).items()]
    links += [entry for entry in src.images[id(lexicon)] if entry[2] in trg_counts]
    for prefix, words in src.prefixes.items():
        for other, other_folded in trg.prefixes.get(prefix) or ():
            for word, folded in words:
                if word != other:
                    similarity = cognate(folded, other_folded)
                    if similarity:
                        links.append((COGNATE_WEIGHT * similarity, word, other))
    links.sort(reverse=True)
    return links


def _previous_weight(page: PreviousPage, idf: dict, default_idf: float) -> float:
    key = ("idf", id(idf))
    if key not in page.images:
        page.images[key] = sum(n * idf.get(w, default_idf) for w, n in page.counts.items())
    return page.images[key]


def previous_linked(src: PreviousPage, trg: PreviousPage, lexicon: Lexicon | None, idf: dict | None,
                    default_idf: float) -> dict:
    if not src.words or not trg.words:
        return {"tsim": None, "tsim_idf": None, "links": 0, "diagonal_share": None, "best_side_coverage_idf": None}
    src_free, trg_free = dict(src.counts), dict(trg.counts)
    links = 0
    src_linked_weight = trg_linked_weight = diagonal = linked_mass = 0.0
    for _, s, t in previous_candidate_links(src, trg, lexicon):
        n = min(src_free[s], trg_free[t])
        if n:
            src_used, trg_used = src.counts[s] - src_free[s], trg.counts[t] - trg_free[t]
            src_free[s] -= n
            trg_free[t] -= n
            links += n
            weight = 1.0
            if idf is not None:
                s_weight, t_weight = idf.get(s, default_idf), idf.get(t, default_idf)
                src_linked_weight += n * s_weight
                trg_linked_weight += n * t_weight
                weight = (s_weight + t_weight) / 2
            if n == 1:
                on_diagonal = abs(src.positions[s][src_used] - trg.positions[t][trg_used]) <= DIAGONAL_BAND
            else:
                on_diagonal = sum(abs(a - b) <= DIAGONAL_BAND for a, b in zip(
                    src.positions[s][src_used:src_used + n], trg.positions[t][trg_used:trg_used + n]))
            diagonal += weight * on_diagonal
            linked_mass += weight * n
    masses = None if idf is None else (_previous_weight(src, idf, default_idf), _previous_weight(trg, idf, default_idf))
    return link_scores(links, src.words + trg.words, diagonal, linked_mass, (src_linked_weight, trg_linked_weight),
                       masses)


def previous_idf(pages) -> tuple[dict, float, set]:
    frequencies: Counter = Counter()
    documents = 0
    for page in pages:
        documents += 1
        frequencies.update(page.counts.keys())
    idf = {word: math.log((documents + 1) / (df + 0.5)) for word, df in frequencies.items()}
    rare_limit = max(2, min(RARE_MAX_DOCS, int(RARE_MAX_SHARE * documents)))
    return idf, math.log((documents + 1) / 0.5), {word for word, df in frequencies.items() if df <= rare_limit}


def previous_cut(lexicon: Lexicon | None, vocabulary: dict) -> Lexicon | None:
    """The lexicon cut to a host's words by strings (verify-pairs' HostPages.restricted before), with the stem
    back-off written out on strings: a word neither side knows takes its stem's known words' rows (source side) or
    stands in for them as a translation (target side), STEM_WEIGHT times; the best entry of a pair is kept."""
    if lexicon is None:
        return None
    src_stems, trg_stems = lexicon.stems("src"), lexicon.stems("trg")
    unknown = [word for word in vocabulary if word not in src_stems.known and word not in trg_stems.known]
    stand_ins: dict[str, list[str]] = {}
    for word in unknown:
        for known in trg_stems.matches(word):
            stand_ins.setdefault(known, []).append(word)
    rows = [(word, lexicon.table[word], 1.0) for word in vocabulary.keys() & lexicon.table.keys()]
    rows += [(word, lexicon.table[known], STEM_WEIGHT) for word in unknown for known in src_stems.matches(word)]
    table: dict[str, dict[str, float]] = {}
    for word, translations, weight in rows:
        row = table.setdefault(word, {})
        for translation, prob in translations.items():
            entries = [(translation, prob * weight)] if translation in vocabulary else []
            entries += [(other, prob * weight * STEM_WEIGHT) for other in stand_ins.get(translation, ())]
            for other, score in entries:
                row[other] = max(row.get(other, 0.0), score)
    return Lexicon(lexicon.src_lang, lexicon.trg_lang, {word: row for word, row in table.items() if row},
                   lexicon.metadata)


def previous_content_features(src: PreviousPage, trg: PreviousPage, lexicon: Lexicon | None, idf: dict | None = None,
                              default_idf: float = 1.0, rare: set | None = None) -> dict:
    rare = rare or set()
    src_rare = {w for w in src.counts if w in rare and not w.isdigit() and len(w) > 2}
    trg_rare = {w for w in trg.counts if w in rare and not w.isdigit() and len(w) > 2}
    return feature_row(previous_linked(src, trg, lexicon, idf, default_idf), src, trg, src_rare, trg_rare)


# ---- the content features of every candidate, per host as verify-pairs prepares them ---------------------
def previous_content(candidates: pd.DataFrame, pages: pd.DataFrame, lexicons: list[Lexicon]) -> list[dict | None]:
    out = []
    for _, group in candidates.groupby("host"):
        rows = pages[pages["url"].isin(set(group["src_url"]) | set(group["trg_url"]))].to_dict("records")
        texts = {row["url"]: None if row["text_paragraphs"] is None and not row.get("main_text") else
                 previous_page_text(as_list(row["text_paragraphs"]), row["cld2_lang"], row["main_text"])
                 for row in rows}
        idf, unseen, rare = previous_idf(t for t in texts.values() if t is not None)
        cuts: dict[tuple, Lexicon | None] = {}
        for pair in group.to_dict("records"):
            key = (pair["src_lang"], pair["trg_lang"])
            if key not in cuts:
                cuts[key] = previous_cut(lexicon_for(lexicons, *key), idf)
            src, trg = texts.get(pair["src_url"]), texts.get(pair["trg_url"])
            out.append(None if src is None or trg is None else
                       previous_content_features(src, trg, cuts[key], idf, unseen, rare))
    return out


def current_content(candidates: pd.DataFrame, pages: pd.DataFrame, lexicons: list[Lexicon]) -> list[dict | None]:
    out = []
    for _, group in candidates.groupby("host"):
        host = HostPages(pages[pages["url"].isin(set(group["src_url"]) | set(group["trg_url"]))])
        chosen: dict[tuple, Lexicon | None] = {}
        for pair in group.to_dict("records"):
            key = (pair["src_lang"], pair["trg_lang"])
            if key not in chosen:
                chosen[key] = lexicon_for(lexicons, *key)
            src, trg = host.text(pair["src_url"]), host.text(pair["trg_url"])
            out.append(None if src is None or trg is None else
                       content_features(src, trg, chosen[key], host.idf, host.idf, host.unseen_idf, host.rare))
    return out


def same_features(a: dict | None, b: dict | None) -> bool:
    """Every feature equal (floats exactly), or both pairs without text."""
    if a is None or b is None:
        return a is b
    return a.keys() == b.keys() and all((a[k] is None and b[k] is None) or
                                        (a[k] is not None and b[k] is not None and a[k] == b[k]) for k in a)


# ---- the run ------------------------------------------------------------------------------------------------
def load(root: Path, pairs: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    def read(table, columns=None):
        return pd.read_parquet(table_layout.table_location(str(root / table)), columns=columns)

    candidates = read("candidates").head(pairs)
    docs = read("docs", DOC_COLUMNS)
    texts = read("texts", columns=["url", "paragraphs", "main_text", "duplicate_of"]).rename(
        columns={"paragraphs": "text_paragraphs"})
    pages = docs.merge(texts, on="url", how="left")
    no_text = pages.assign(text_paragraphs=None, main_text=None)
    return candidates, pages, no_text


def timed(function, *args) -> tuple[float, object]:
    started = time.process_time()
    result = function(*args)
    return time.process_time() - started, result


def best_of(repeat: int, function, *args) -> tuple[float, object]:
    runs = [timed(function, *args) for _ in range(repeat)]
    return min(seconds for seconds, _ in runs), runs[-1][1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--lexicon", required=True, action="append")
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each timing; the fastest counts")
    parser.add_argument("--no-training", action="store_true", help="skip timing lexicon training on the Bible")
    args = parser.parse_args(argv)
    candidates, pages, no_text = load(Path(args.root), args.pairs)
    lexicons = [load_lexicon(path) for path in args.lexicon]
    rule = ThresholdRule()
    n = len(candidates)
    structure_s, _ = best_of(args.repeat, verify_frame, candidates, no_text, rule, [])
    verify_s, verified = best_of(args.repeat, verify_frame, candidates, pages, rule, lexicons)
    previous_s, previous = best_of(args.repeat, previous_content, candidates, pages, lexicons)
    current_s, current = best_of(args.repeat, current_content, candidates, pages, lexicons)
    same = sum(same_features(a, b) for a, b in zip(previous, current))
    print(f"pairs {n} on {candidates.host.nunique()} hosts ({int(verified.tsim.notna().sum())} with text on both "
          f"sides), best of {args.repeat}, CPU-seconds:")
    print(f"  verify_frame structure + tsim: {n / verify_s:,.0f} pairs/CPU-s; structure only {n / structure_s:,.0f} "
          f"(tsim costs {verify_s / structure_s:.2f}x the CPU of structure only)")
    print(f"  content features alone: {n / current_s:,.0f} pairs/CPU-s, the previous path {n / previous_s:,.0f}: "
          f"{previous_s / current_s:.2f}x faster; identical features on {same}/{n} pairs")
    print(f"  structure + the previous content path: {n / (structure_s + previous_s):,.0f} pairs/CPU-s; "
          f"verify_frame now {(structure_s + previous_s) / verify_s:.2f}x that rate")
    if any(lexicon.held_out for lexicon in lexicons):  # bootstrapped: label rows scored by the held-out lexicons too
        plain = [dataclasses.replace(lexicon, held_out=(), fold_of={}) for lexicon in lexicons]
        held_s, _ = best_of(args.repeat, verify_frame, candidates, pages, rule, lexicons, RANDOM_PAIRS)
        plain_s, _ = best_of(args.repeat, verify_frame, candidates, pages, rule, plain, RANDOM_PAIRS)
        alone_s, _ = best_of(args.repeat, verify_frame, candidates, pages, rule, plain)
        print(f"  held-out lexicons, verify_frame with {RANDOM_PAIRS} random pairs per host and language pair (as "
              f"verify-pairs): {n / held_s:,.0f} candidate pairs/CPU-s, without the held-out lexicons "
              f"{n / plain_s:,.0f} ({held_s / plain_s:.2f}x the CPU); no random pairs: {n / verify_s:,.0f} with them "
              f"(the first line), {n / alone_s:,.0f} without ({verify_s / alone_s:.2f}x)")
    if not args.no_training and (BIBLE / "eng.tsv.gz").exists():
        train_s, lexicon = timed(lambda: train_lexicon("eng", "fra", read_aligned_files(
            BIBLE / "eng.tsv.gz", BIBLE / "fra.tsv.gz")))
        print(f"lexicon training, Bible eng–fra ({lexicon.metadata['sizes']['corpus_pairs']} verses, 5 EM "
              f"iterations both ways): {train_s:.1f} CPU-s, {len(lexicon)} entries")


if __name__ == "__main__":
    main()
