"""Throughput of verification with content features, against the structural path in the same run.

Reads a real-text sample archive's `docs`, `texts` and `candidates` (as eval_verify.py leaves them
under ROOT), and times on one core (CPU-seconds) udfs.verification.verify_frame over the candidate
pairs: (a) structure only (no texts, today's features), (b) structure + tsim under a lexicon (pages
tokenised once per host, as the job does), against the previous structural path (bit-parallel LCS,
numpy/scipy correlation, no texts) in the same run. Also times lexicon training on the Bible (eng–fra).

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
from parascout.udfs.structure import ThresholdRule
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


def bit_parallel_lcs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """The structural alignment verify-pairs used before (bit-parallel LCS on Python integers + backtrack)."""
    masks: dict[str, int] = {}
    for i, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    rows = [full]
    for token in b:
        match = masks.get(token, 0)
        previous = rows[-1]
        rows.append(((previous + (previous & match)) | (previous & ~match)) & full)

    def lcs_length(i: int, j: int) -> int:
        return i - (rows[j] & ((1 << i) - 1)).bit_count()

    pairs, i, j = [], len(a), len(b)
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1]:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif lcs_length(i - 1, j) == lcs_length(i, j):
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def todays_structure(a: list[str], b: list[str]) -> tuple[float, float]:
    """dp and p as the previous verify-pairs computed them (bit-parallel LCS, numpy corrcoef + scipy t.sf)."""
    import math

    import numpy as np
    from scipy import stats

    keys_a = ["[Chunk]" if t.startswith("[Chunk:") else t for t in a]
    keys_b = ["[Chunk]" if t.startswith("[Chunk:") else t for t in b]
    alignment = bit_parallel_lcs(keys_a, keys_b)
    lengths = [(int(a[i][7:-1]), int(b[j][7:-1])) for i, j in alignment if a[i].startswith("[Chunk:")]
    p = 1.0
    if len(lengths) >= 3:
        xs, ys = np.array(lengths, dtype=float).T
        if xs.std() > 0 and ys.std() > 0:
            r = float(np.clip(np.corrcoef(xs, ys)[0, 1], -1, 1))
            if abs(r) < 1:
                p = float(2 * stats.t.sf(abs(r * math.sqrt((len(xs) - 2) / (1 - r * r))), len(xs) - 2))
    total = len(a) + len(b)
    return ((total - 2 * len(alignment)) / total if total else 1.0), p


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
    old_s, old = timed(lambda: [todays_structure(a, b) for a, b in token_pairs])
    same_dp = sum(abs(x[0] - y) < 1e-12 for x, y in zip(old, verified.dp.fillna(1.0)))
    print(f"the previous structural path (bit-parallel LCS, scipy p, a page re-linearised per pair): "
          f"{n / old_s:,.0f} pairs/CPU-s; structure + tsim now = {old_s / content_s:.2f}x its rate; "
          f"structure only now = {old_s / structure_s:.2f}x; same dp on {same_dp}/{n} pairs")
    if (BIBLE / "eng.tsv.gz").exists():
        train_s, lexicon = timed(lambda: train_lexicon("eng", "fra", read_aligned_files(
            BIBLE / "eng.tsv.gz", BIBLE / "fra.tsv.gz")))
        print(f"lexicon training, Bible eng–fra ({lexicon.metadata['sizes']['corpus_pairs']} verses, 5 EM "
              f"iterations both ways): {train_s:.1f} CPU-s, {len(lexicon)} entries")


if __name__ == "__main__":
    main()
