"""URL-only document alignment on the WMT16 gold pairs (gold-pool setting): recall and precision per method.

Per host, the pool is the English and French URLs of its gold pairs; each method aligns the pool
1-1 (greedy, best first) and is scored against the gold pairs. Methods: naive token strips (the
baseline measured in this run), the WMT16 shared-task stripper, STRAND handles with the full LSS
list, and STRAND with learned host markers; `--pair-model DIR [--lang-model DIR]` adds the URL models.

    .venv/bin/python benchmarks/eval_wmt16_baselines.py [--pairs ../shared/data/wmt16/train.pairs] [--per-host]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import pandas as pd

from parascout.udfs.common.urls import url_host
from parascout.udfs.rank import alignment
from parascout.udfs.rank.handles import build_stripper, plain_stripper, strand_candidates
from parascout.udfs.rank.wmt16_baseline import wmt16_candidates

DEFAULT_PAIRS = os.path.join(REPO, "..", "shared", "data", "wmt16", "train.pairs")


def methods(pair_model: str | None, lang_model: str | None) -> dict:
    """name -> function(pool) returning scored candidate pairs."""
    found = {
        "naive strip: en, fr": lambda pool: strand_candidates(pool, plain_stripper(["en", "fr"]), "eng", "fra")[0],
        "naive strip: en, fr, eng, fra": lambda pool: strand_candidates(
            pool, plain_stripper(["en", "fr", "eng", "fra"]), "eng", "fra")[0],
        "WMT16 baseline (Buck & Koehn)": lambda pool: wmt16_candidates(pool, "eng", "fra"),
        "STRAND handles, full LSS": lambda pool: strand_candidates(pool, build_stripper(("en", "fr")), "eng", "fra")[0],
        "STRAND handles + learned LSS": lambda pool: strand_candidates(
            pool, build_stripper(("en", "fr")), "eng", "fra", learn=True)[0],
    }
    if pair_model:
        from parascout.udfs.rank.url_models import load_model

        models = (load_model(pair_model), load_model(lang_model) if lang_model else None)
        found["URL pair model" + (" × language model" if lang_model else "")] = lambda pool: alignment.score_with_models(
            alignment.model_candidates(pool, "eng", "fra")[0], *models, "eng", "fra")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", default=DEFAULT_PAIRS, help="WMT16 gold pairs (en_url fr_url per line)")
    parser.add_argument("--pair-model")
    parser.add_argument("--lang-model")
    parser.add_argument("--per-host", action="store_true", help="also print recall per host for each method")
    args = parser.parse_args()
    gold = alignment.read_gold_pairs(args.pairs)
    pool = alignment.gold_pool(gold, "eng", "fra").assign(host=lambda f: f["url"].map(url_host))
    gold_pairs = list(zip(gold["src_url"], gold["trg_url"]))
    print(f"WMT16 gold pool: {len(gold):,} pairs, {gold['host'].nunique()} hosts, {len(pool):,} URLs\n")
    rows, per_host = [], {}
    for name, candidates in methods(args.pair_model, args.lang_model).items():
        started = time.perf_counter()
        aligned = alignment.greedy_one_to_one(candidates(pool))
        seconds = time.perf_counter() - started
        scores = alignment.evaluate_alignment(zip(aligned["src_url"], aligned["trg_url"]), gold_pairs)
        rows.append({"method": name, **scores, "seconds": round(seconds, 2)})
        predicted = set(zip(aligned["src_url"], aligned["trg_url"]))
        per_host[name] = gold.assign(hit=[pair in predicted for pair in gold_pairs]).groupby("host")["hit"].mean()
    table = pd.DataFrame(rows).set_index("method")
    baseline = table.loc["naive strip: en, fr, eng, fra", "recall"]
    table["recall / naive"] = (table["recall"] / baseline).round(2)
    print(table.to_string())
    if args.per_host:
        print("\nrecall per host\n" + pd.DataFrame(per_host).round(2).to_string())


if __name__ == "__main__":
    main()
