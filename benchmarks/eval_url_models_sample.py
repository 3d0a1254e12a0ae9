"""Pair-model quality on held-out sample-archive hosts, as a learning curve over training hosts.

Trains the n-gram pair model (default recipe, synthetic negatives) on the truth of cdx-only sample
archives of N hosts (seed --seed + N, so no host is shared), then tests it on the truth of a separate
--test-hosts archive with the default negatives: macro-F1 and, per kind of example, the share right
(positives by URL style: marker-only, translated slugs, unrelated ids; negatives by strategy).

    .venv/bin/python benchmarks/eval_url_models_sample.py [--train-hosts 30,200,1000] [--minutes 12]
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import numpy as np
import pandas as pd

from parascout.udfs.rank.url_models.evaluation import classification_report
from parascout.udfs.rank.url_models.training import TrainingConfig, train_model
from parascout.udfs.rank.url_models.training_data import load_pairs, pair_examples


def archive_truth(work: Path, hosts: int, seed: int) -> Path:
    """truth/pairs.parquet of a cdx-only sample archive (generated once, then reused)."""
    from parascout.udfs.sample_archive import generate

    out = work / f"archive-{hosts}-{seed}"
    if not (out / "truth" / "pairs.parquet").exists():
        generate(str(out), hosts=hosts, seed=seed, cdx_only=True, progress=False, verbose=False, workers=2)
    return out / "truth" / "pairs.parquet"


def test_examples(truth: Path) -> pd.DataFrame:
    """Positives + the default synthetic negatives of the test archive, with the kind of each example."""
    pairs, _ = load_pairs(str(truth))
    styles = pd.read_parquet(truth, columns=["src_url", "trg_url", "convention"])
    examples = pair_examples(pairs, dev_fraction=0.0, test_fraction=0.0, seed=1)
    examples = examples.merge(styles, on=["src_url", "trg_url"], how="left")
    style = [c.split("+")[1] if isinstance(c, str) and "+" in c else "marker-only" for c in examples["convention"]]
    examples["kind"] = np.where(examples["label"] == 1, [f"positive:{s}" for s in style], "negative:" + examples["source"])
    return examples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-hosts", default="30,200,1000", help="training archive sizes (hosts)")
    parser.add_argument("--test-hosts", type=int, default=60)
    parser.add_argument("--seed", type=int, default=42, help="test archive seed; training archives use seed + N")
    parser.add_argument("--minutes", type=float, default=12.0, help="training budget per model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--work", default="/tmp/eval-url-models-sample")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    work = Path(args.work)
    examples = test_examples(archive_truth(work, args.test_hosts, args.seed))
    print(f"test: {args.test_hosts}-host archive, {int(examples['label'].sum())} positives, "
          f"{int((examples['label'] == 0).sum())} negatives")
    rows = []
    for hosts in (int(n) for n in args.train_hosts.split(",")):
        train_pairs, _ = load_pairs(str(archive_truth(work, hosts, args.seed + hosts)))
        frame = pair_examples(train_pairs, dev_fraction=0.1, test_fraction=0.0, seed=0)
        config = TrainingConfig(backend="ngram", max_minutes=args.minutes, threads=args.threads)
        started = time.monotonic()
        model = train_model("pairs", frame, config, {"source": f"sample archive, {hosts} hosts"}).model
        predicted = (model.predict_parallel(examples["src_url"].tolist(), examples["trg_url"].tolist()) >= 0.5)
        report = classification_report(examples["label"].to_numpy(), predicted.astype(int))
        right = pd.Series(predicted.astype(int) == examples["label"].to_numpy()).groupby(examples["kind"].to_numpy())
        rows.append({"train_hosts": hosts, "train_positives": len(train_pairs),
                     "minutes": round((time.monotonic() - started) / 60, 1),
                     "macro_f1": round(report["macro"]["f1"], 4), **right.mean().round(3).to_dict()})
        print(pd.DataFrame(rows).to_string(index=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
