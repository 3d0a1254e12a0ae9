"""Quality of the URL models on the real WMT16 gold pairs, host-disjoint (5 folds by registered domain).

- url2lang: every gold URL labelled by its side (eng / fra); train on 4 folds, test on the 5th.
- pairs: train on the positives of 4 folds + synthetic negatives (default combination),
  then on the held-out hosts (a) pair macro-F1 over their positives + synthetic negatives,
  (b) gold-pool recall: per host, pool = its gold en and fr URLs, every en×fr pair scored
  with predict_parallel, greedy 1-1, recall = correct / gold.
Baselines on the same pools, measured in the same run: the WMT16 shared-task URL
baseline (udfs/wmt16_baseline.py) and STRAND handles (udfs/handles.py), when present.

    .venv/bin/python benchmarks/eval_url_models_wmt16.py [--backends ngram,transformer] [--folds 5]
        [--transformer-minutes 4] [--transformer-folds 1] [--seeds 3]
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import numpy as np
import pandas as pd

from parascout.udfs.url_models.evaluation import classification_report
from parascout.udfs.url_models.negatives import generate_negatives
from parascout.udfs.url_models.training import TrainingConfig, load_pairs, pair_examples, train_model
from parascout.udfs.urls import registered_domain

log = logging.getLogger("parascout.benchmarks")
PAIRS_FILE = os.path.join(REPO, "..", "shared", "data", "wmt16", "train.pairs")
SRC_LANG, TRG_LANG = "eng", "fra"


def greedy_one_to_one(pairs: pd.DataFrame) -> pd.DataFrame:
    """parascout.udfs.alignment's greedy 1-1 when present, else the same rule here: best score first, URLs used once."""
    try:
        from parascout.udfs.alignment import greedy_one_to_one as shared
    except ImportError:
        shared = None
    if shared is not None:
        return shared(pairs)
    order = np.argsort(-pairs["score"].to_numpy(dtype=float), kind="stable")
    used_src, used_trg, keep = set(), set(), []
    for position in order:
        src, trg = pairs["src_url"].iat[position], pairs["trg_url"].iat[position]
        if src not in used_src and trg not in used_trg:
            used_src.add(src)
            used_trg.add(trg)
            keep.append(position)
    return pairs.iloc[keep]


def domain_folds(hosts: pd.Series, folds: int) -> pd.Series:
    """Fold number per row: registered domains dealt largest first to the fold with the fewest rows."""
    domains = hosts.map(lambda h: registered_domain(h) or h)
    sizes = domains.value_counts()
    load, assignment = [0] * folds, {}
    for domain, size in sizes.items():
        fold = int(np.argmin(load))
        assignment[domain] = fold
        load[fold] += int(size)
    return domains.map(assignment)


def config_for(backend: str, minutes: float, seed: int) -> TrainingConfig:
    if backend == "ngram":
        return TrainingConfig(backend="ngram", buckets=1 << 18, dim=32, max_epochs=12, patience=3, seed=seed)
    # the compact transformer from scratch, within a CPU time budget (warm-up: 10% of 6 epochs)
    return TrainingConfig(backend="transformer", layers=4, hidden=128, vocab_size=4000, max_length=64,
                          max_epochs=6, batch_size=32, learning_rate=3e-4, patience=5, max_minutes=minutes, seed=seed)


def gold_pool_recall(score_pairs, gold: pd.DataFrame) -> dict:
    """Per host: all en×fr pairs of its gold URLs scored, greedy 1-1, correct / gold (summed over hosts)."""
    correct = total = 0
    for host, group in gold.groupby("host"):
        src = sorted(set(group["src_url"]))
        trg = sorted(set(group["trg_url"]))
        candidates = pd.DataFrame({"src_url": np.repeat(src, len(trg)), "trg_url": np.tile(trg, len(src))})
        candidates["score"] = score_pairs(candidates)
        aligned = greedy_one_to_one(candidates[candidates["score"] > -np.inf])
        gold_set = set(zip(group["src_url"], group["trg_url"]))
        correct += len(gold_set & set(zip(aligned["src_url"], aligned["trg_url"])))
        total += len(gold_set)
    return {"correct": correct, "gold": total}


def baseline_scorers() -> dict:
    """Score functions of the baselines that exist in this checkout (-inf = not a candidate)."""
    scorers = {}
    try:
        from parascout.udfs.wmt16_baseline import wmt16_candidates
    except ImportError:
        wmt16_candidates = None
    try:
        from parascout.udfs.handles import build_stripper, strand_candidates
    except ImportError:
        strand_candidates = None

    def from_candidates(make):
        def score(candidates: pd.DataFrame) -> np.ndarray:
            pool = pd.concat([pd.DataFrame({"url": candidates["src_url"].unique(), "lang": SRC_LANG}),
                              pd.DataFrame({"url": candidates["trg_url"].unique(), "lang": TRG_LANG})])
            pool["host"] = "h"
            found = make(pool)
            scores = dict(zip(zip(found["src_url"], found["trg_url"]), found["score"]))
            return np.array([scores.get(k, -np.inf) for k in zip(candidates["src_url"], candidates["trg_url"])])
        return score

    if wmt16_candidates is not None:
        scorers["wmt16_baseline"] = from_candidates(lambda pool: wmt16_candidates(pool, SRC_LANG, TRG_LANG))
    if strand_candidates is not None:
        stripper = build_stripper((SRC_LANG, TRG_LANG))
        scorers["strand"] = from_candidates(
            lambda pool: strand_candidates(pool, stripper, SRC_LANG, TRG_LANG)[0])
    return scorers


def evaluate_url2lang(gold: pd.DataFrame, folds: pd.Series, backend: str, fold_ids: list[int], minutes: float,
                      seed: int):
    urls = pd.concat([pd.DataFrame({"url": gold["src_url"], "host": gold["host"], "lang": SRC_LANG, "fold": folds}),
                      pd.DataFrame({"url": gold["trg_url"], "host": gold["host"], "lang": TRG_LANG, "fold": folds})])
    urls = urls.drop_duplicates("url")
    truth, predicted = [], []
    for fold in fold_ids:
        from parascout.udfs.url_models.training import split_by_host

        train = urls[urls["fold"] != fold].copy()
        train["split"] = split_by_host(train["host"], 0.15, 0.0, seed).to_numpy()
        test = urls[urls["fold"] == fold].assign(split="test")
        result = train_model("url2lang", pd.concat([train, test]), config_for(backend, minutes, seed),
                             {"source": "wmt16"})
        frame = result.model.predict_lang(test["url"].tolist())
        truth += test["lang"].tolist()
        predicted += frame[[SRC_LANG, TRG_LANG]].idxmax(axis=1).tolist()
    return classification_report(truth, predicted, labels=[SRC_LANG, TRG_LANG])


def evaluate_pairs(gold: pd.DataFrame, folds: pd.Series, backend: str, fold_ids: list[int], minutes: float,
                   scorers: dict, seed: int) -> dict:
    truth, predicted = [], []
    recalls = {name: {"correct": 0, "gold": 0} for name in ["model", *scorers]}
    seconds = {"train": 0.0, "score": 0.0, "scored_pairs": 0}
    for fold in fold_ids:
        train_gold, test_gold = gold[folds != fold], gold[folds == fold]
        train = pair_examples(train_gold, dev_fraction=0.15, test_fraction=0.0, seed=fold + 100 * seed)
        started = time.monotonic()
        result = train_model("pairs", train, config_for(backend, minutes, seed), {"source": "wmt16"})
        seconds["train"] += time.monotonic() - started
        model = result.model
        if backend == "transformer":            # score as deployed on CPU: int8 dynamic quantisation
            from parascout.udfs.url_models.transformer import quantize_dynamic_int8

            model.model = quantize_dynamic_int8(model.model)
        negatives = generate_negatives(test_gold, seed=fold)
        test_src = test_gold["src_url"].tolist() + negatives["src_url"].tolist()
        test_trg = test_gold["trg_url"].tolist() + negatives["trg_url"].tolist()
        probabilities = model.predict_parallel(test_src, test_trg)
        truth += [1] * len(test_gold) + [0] * len(negatives)
        predicted += (probabilities >= 0.5).astype(int).tolist()

        def model_scores(candidates: pd.DataFrame, model=model) -> np.ndarray:
            began = time.monotonic()
            scores = model.predict_parallel(candidates["src_url"].tolist(), candidates["trg_url"].tolist())
            seconds["score"] += time.monotonic() - began
            seconds["scored_pairs"] += len(candidates)
            return scores

        for name, scorer in [("model", model_scores), *scorers.items()]:
            found = gold_pool_recall(scorer, test_gold)
            for key in found:
                recalls[name][key] += found[key]
        log.info("fold %d (%s): recall so far %s", fold, backend,
                     {k: round(v["correct"] / max(v["gold"], 1), 4) for k, v in recalls.items()})
    report = classification_report(truth, predicted, labels=[0, 1])
    return {"pair_report": report, "recalls": recalls, "seconds": seconds}


def report_run(lang: dict, result: dict, summary: dict, threads: int) -> None:
    """Print one run's figures and append them to `summary` (name -> values over seeds)."""
    print(f"url2lang held-out hosts: accuracy {lang['accuracy']:.4f}, macro-F1 {lang['macro']['f1']:.4f} "
          f"({lang['examples']} URLs)")
    report = result["pair_report"]
    print(f"pairs held-out hosts: macro-F1 {report['macro']['f1']:.4f} (parallel F1 "
          f"{report['per_class']['1']['f1']:.4f}, non-parallel F1 {report['per_class']['0']['f1']:.4f}, "
          f"{report['examples']} pairs)")
    figures = {"url2lang macro-F1": lang["macro"]["f1"], "pair macro-F1": report["macro"]["f1"]}
    best_baseline = 0.0
    for name, found in result["recalls"].items():
        recall = found["correct"] / max(found["gold"], 1)
        figures[f"gold-pool recall {name}"] = recall
        if name != "model":
            best_baseline = max(best_baseline, recall)
        print(f"gold-pool recall {name:>15}: {recall:.4f} ({found['correct']}/{found['gold']})")
    if best_baseline:
        figures["model - best baseline (points)"] = 100 * (figures["gold-pool recall model"] - best_baseline)
        print(f"model - best baseline: {figures['model - best baseline (points)']:+.1f} points "
              f"(ratio {figures['gold-pool recall model'] / best_baseline:.2f}x)")
    seconds = result["seconds"]
    print(f"training {seconds['train']:.0f}s; scoring {seconds['scored_pairs']} pool pairs at "
          f"{seconds['scored_pairs'] / max(seconds['score'], 1e-9):.0f} pairs/s ({threads} thread(s))")
    for name, value in figures.items():
        summary.setdefault(name, []).append(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", default=PAIRS_FILE)
    parser.add_argument("--backends", default="ngram,transformer")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--transformer-folds", type=int, default=1, help="folds evaluated with the transformer")
    parser.add_argument("--transformer-minutes", type=float, default=4.0, help="training budget per fold")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=3, help="n-gram runs with different seeds (dev split, init)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("parascout.url_models").setLevel(logging.WARNING)
    import torch

    torch.set_num_threads(args.threads)
    pairs, _ = load_pairs(args.pairs)
    gold = pairs[["host", "src_url", "trg_url"]].assign(src_lang=SRC_LANG, trg_lang=TRG_LANG, label=1)
    folds = domain_folds(gold["host"], args.folds)
    scorers = baseline_scorers()
    print(f"WMT16 train.pairs: {len(gold)} gold pairs, {gold['host'].nunique()} hosts, {args.folds} domain folds; "
          f"baselines: {sorted(scorers) or 'none found'}")
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        fold_ids = list(range(args.folds if backend == "ngram" else min(args.transformer_folds, args.folds)))
        seeds = range(args.seeds if backend == "ngram" else 1)
        summary: dict[str, list[float]] = {}
        for seed in seeds:
            started = time.monotonic()
            lang = evaluate_url2lang(gold, folds, backend, fold_ids, args.transformer_minutes, seed)
            result = evaluate_pairs(gold, folds, backend, fold_ids, args.transformer_minutes, scorers, seed)
            print(f"\n== {backend}, seed {seed} ({len(fold_ids)} held-out fold(s), "
                  f"{time.monotonic() - started:.0f}s) ==")
            report_run(lang, result, summary, args.threads)
        if len(seeds) > 1:
            print(f"\n== {backend}: {len(seeds)} seeds (mean [min, max]) ==")
            for name, values in summary.items():
                print(f"{name:>32}: {np.mean(values):.4f} [{min(values):.4f}, {max(values):.4f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
