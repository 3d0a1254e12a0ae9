"""Throughput of verification with content features, against the structural path in the same run.

Reads a real-text sample archive's `docs`, `texts` and `candidates` (as eval_verify.py leaves them
under ROOT), and times on one core (CPU-seconds) udfs.verification.verify_frame over the candidate
pairs: (a) structure only (no texts, today's features), (b) structure + tsim under a lexicon (pages
tokenised once per host, as the job does). Also times lexicon training on the Bible (eng–fra) and
the structural alignment by rapidfuzz's Indel.opcodes against the bit-parallel LCS in use.

    .venv/bin/python benchmarks/bench_verify.py --root /tmp/eval-verify/seed42/root \\
        --lexicon /tmp/eval-verify/seed42/lexicon-bible-fra [--pairs 3000]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parascout.udfs import tables
from parascout.udfs.lexicon import load_lexicon, read_aligned_files, train_lexicon
from parascout.udfs.structure import ThresholdRule, align_tokens
from parascout.udfs.verification import verify_frame

BIBLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "parallel-text" / "bible"
DOC_COLUMNS = ["url", "status", "cld2_lang", "cld2_reliable", "text_chars", "paragraphs", "images", "structure"]


def load(root: Path, pairs: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    def read(table, columns=None):
        return pd.read_parquet(tables.table_location(str(root / table)), columns=columns)

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


def indel_alignment(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    from rapidfuzz.distance import Indel

    codes: dict[str, int] = {}
    left = "".join(chr(0x100 + codes.setdefault(t, len(codes))) for t in a)
    right = "".join(chr(0x100 + codes.setdefault(t, len(codes))) for t in b)
    return [pair for tag, i1, i2, j1, _ in Indel.opcodes(left, right) if tag == "equal"
            for pair in zip(range(i1, i2), range(j1, i2 - i1 + j1))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--lexicon", required=True, action="append")
    parser.add_argument("--pairs", type=int, default=3000)
    args = parser.parse_args(argv)
    candidates, pages, no_text = load(Path(args.root), args.pairs)
    lexicons = [load_lexicon(path) for path in args.lexicon]
    rule = ThresholdRule()
    structure_s, _ = timed(verify_frame, candidates, no_text, rule, [])
    content_s, verified = timed(verify_frame, candidates, pages, rule, lexicons)
    n = len(candidates)
    print(f"pairs {n}: structure only {n / structure_s:,.0f} pairs/CPU-s; structure + tsim "
          f"{n / content_s:,.0f} pairs/CPU-s ({content_s / structure_s:.2f}x the CPU of structure only); "
          f"with text on both sides: {int(verified.tsim.notna().sum())}")
    structures = dict(zip(pages.url, pages.structure))
    token_pairs = [(list(structures.get(s, []))[:10_000], list(structures.get(t, []))[:10_000])
                   for s, t in zip(candidates.src_url, candidates.trg_url)]
    keyed = [([x if not x.startswith("[Chunk:") else "[Chunk]" for x in a],
              [x if not x.startswith("[Chunk:") else "[Chunk]" for x in b]) for a, b in token_pairs]
    lcs_s, lcs = timed(lambda: [align_tokens(a, b) for a, b in keyed])
    indel_s, indel = timed(lambda: [indel_alignment(a, b) for a, b in keyed])
    same_length = sum(len(x) == len(y) for x, y in zip(lcs, indel))
    same_pairs = sum(x == y for x, y in zip(lcs, indel))
    print(f"structural alignment: bit-parallel LCS {len(keyed) / lcs_s:,.0f}/CPU-s, rapidfuzz Indel.opcodes "
          f"{len(keyed) / indel_s:,.0f}/CPU-s ({lcs_s / indel_s:.2f}x); same LCS length {same_length}/{len(keyed)}, "
          f"same aligned pairs {same_pairs}/{len(keyed)}")
    if (BIBLE / "eng.tsv.gz").exists():
        train_s, lexicon = timed(lambda: train_lexicon("eng", "fra", read_aligned_files(
            BIBLE / "eng.tsv.gz", BIBLE / "fra.tsv.gz")))
        print(f"lexicon training, Bible eng–fra ({lexicon.metadata['sizes']['corpus_pairs']} verses, 5 EM "
              f"iterations both ways): {train_s:.1f} CPU-s, {len(lexicon)} entries")


if __name__ == "__main__":
    main()
