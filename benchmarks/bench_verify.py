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
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parascout.udfs.common import table_layout
from parascout.udfs.lexicon.lexicon import (
    load_lexicon,
)
from parascout.udfs.lexicon.readers import read_aligned_files
from parascout.udfs.lexicon.training import train_lexicon
from parascout.udfs.verify.structure import ThresholdRule
from parascout.udfs.verify.verification import verify_frame
from testkit.verify_reference import current_content, previous_content, same_features

#: random same-site pairs per host and language pair in the held-out timing (verify-pairs' --random-pairs default)
RANDOM_PAIRS = 50
BIBLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "parallel-text" / "bible"
DOC_COLUMNS = ["url", "status", "cld2_lang", "cld2_reliable", "text_chars", "paragraphs", "images", "structure"]


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
