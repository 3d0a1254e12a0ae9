"""Quality of the URL models on the real WMT16 gold pairs, host-disjoint (5 folds by registered domain).

- url2lang: every gold URL labelled by its side (eng / fra); train on 4 folds, test on the 5th.
- pairs: train on the positives of 4 folds + synthetic negatives (default combination),
  then on the held-out hosts (a) pair macro-F1 over their positives + synthetic negatives,
  (b) gold-pool recall: per host, pool = its gold en and fr URLs, every en×fr pair scored
  with predict_parallel, greedy 1-1, recall = correct / gold.
Baselines on the same pools, measured in the same run: the WMT16 shared-task URL
baseline (udfs/rank/wmt16_baseline.py) and STRAND handles (udfs/rank/handles.py), when present.

`--protocol orphan` measures what a user meets: per held-out fold a seeded 30% of the gold pairs
loses one side (src or trg at random), so its other side is an orphan that a system must leave
unaligned. Every system proposes 1-1 pairs at its own threshold: naive strip (en, fr, eng, fra),
the WMT16 baseline, STRAND, STRAND + learned LSS (a candidate is a decision), sort-and-zip (each
host's sorted src and trg URLs zipped: the reference with no model), and the n-gram pair model at
the cut-off its training chose on its own dev hosts (parascout_model.json `decision.min_score`;
also shown at 0.5 and with none, as `align` did before). Precision, recall and F1 of the proposed
pairs, per kind of pair (evaluation.pair_kind: identifier-only / different numeric ids /
translated path), and the gold-pool recall of the same trained models beside it.

    .venv/bin/python benchmarks/eval_url_models_wmt16.py [--backends ngram,transformer] [--folds 5]
        [--transformer-minutes 4] [--transformer-folds 1] [--seeds 3] [--held-out 1]
        [--base-model e5-small-bundled] [--learning-rate 5e-5] [--max-length 96] [--examples 10]
    .venv/bin/python benchmarks/eval_url_models_wmt16.py --protocol orphan [--eval-folds 5 | --held-out 1] [--seeds 1]
        [--orphan-share 0.3] [--examples 10] [--backends transformer --base-model e5-small-bundled]
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

from parascout.udfs.common.langs import language_markers
from parascout.udfs.common.urls import registered_domain
from parascout.udfs.rank import alignment
from parascout.udfs.rank.url_models.calibration import reliability
from parascout.udfs.rank.url_models.evaluation import (
    PAIR_KINDS,
    alignment_quality,
    classification_report,
    orphan_pools,
    pair_kind,
)
from parascout.udfs.rank.url_models.negatives import generate_negatives
from parascout.udfs.rank.url_models.training import TrainingConfig, train_model
from parascout.udfs.rank.url_models.training_data import load_pairs, pair_examples

log = logging.getLogger("parascout.benchmarks")
PAIRS_FILE = os.path.join(REPO, "..", "shared", "data", "wmt16", "train.pairs")
SRC_LANG, TRG_LANG = "eng", "fra"
REAL_SITES = [os.path.join(REPO, "..", "shared", "data", name) for name in ("real-sites", "real-sites-2")]


def greedy_one_to_one(pairs: pd.DataFrame) -> pd.DataFrame:
    """parascout.udfs.rank.alignment's greedy 1-1 when present, else the same rule here: best score first, URLs used once."""
    try:
        from parascout.udfs.rank.alignment import greedy_one_to_one as shared
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


def config_for(backend: str, minutes: float, seed: int, base_model: str | None = None,
               learning_rate: float | None = None, max_length: int = 96, epochs: int = 2,
               train_embeddings: bool = True) -> TrainingConfig:
    if backend == "ngram":
        return TrainingConfig(backend="ngram", buckets=1 << 18, dim=32, max_epochs=12, patience=3, seed=seed)
    if base_model:  # fine-tuning within a CPU time budget; warm-up 10% of `epochs`, so it ends inside the budget
        return TrainingConfig(backend="transformer", base_model=base_model, max_length=max_length, max_epochs=epochs,
                              batch_size=32, learning_rate=learning_rate or 5e-5, patience=2, max_minutes=minutes,
                              seed=seed, train_embeddings=train_embeddings)
    # the compact transformer from scratch, within a CPU time budget (warm-up: 10% of 6 epochs)
    return TrainingConfig(backend="transformer", layers=4, hidden=128, vocab_size=4000, max_length=64,
                          max_epochs=6, batch_size=32, learning_rate=learning_rate or 3e-4, patience=5,
                          max_minutes=minutes, seed=seed)


def gold_pool_recall(score_pairs, gold: pd.DataFrame, seed: int = 0) -> dict:
    """Per host: all en×fr pairs of its gold URLs scored, greedy 1-1, correct / gold (summed over hosts). The
    candidates are in a seeded random order: greedy_one_to_one keeps input order among equal scores, and sorted
    URL lists put a WMT16 page and its translation at the same position (a constant score reached 0.905 on fold 1)."""
    correct = total = 0
    rng = np.random.default_rng(seed)
    for host, group in gold.groupby("host"):
        src = sorted(set(group["src_url"]))
        trg = sorted(set(group["trg_url"]))
        candidates = pd.DataFrame({"src_url": np.repeat(src, len(trg)), "trg_url": np.tile(trg, len(src))})
        candidates = candidates.iloc[rng.permutation(len(candidates))].reset_index(drop=True)
        candidates["score"] = score_pairs(candidates)
        aligned = greedy_one_to_one(candidates[candidates["score"] > -np.inf])
        gold_set = set(zip(group["src_url"], group["trg_url"]))
        correct += len(gold_set & set(zip(aligned["src_url"], aligned["trg_url"])))
        total += len(gold_set)
    return {"correct": correct, "gold": total}


def baseline_scorers() -> dict:
    """Score functions of the baselines that exist in this checkout (-inf = not a candidate), and `chance`: one score
    for every pair, the floor a model's gold-pool recall is read against."""
    scorers = {"chance": lambda candidates: np.zeros(len(candidates))}
    try:
        from parascout.udfs.rank.wmt16_baseline import wmt16_candidates
    except ImportError:
        wmt16_candidates = None
    try:
        from parascout.udfs.rank.handles import build_stripper, strand_candidates
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


def archive_urls(archives: list[str]) -> pd.DataFrame:
    """(archive, host, url, lang) of the English and French pages of real-sites archives (truth/pages.tsv): URLs of
    sites the WMT16 hosts never show, labelled by the page's real language."""
    frames = []
    for archive in archives:
        pages = pd.read_csv(os.path.join(archive, "truth", "pages.tsv"), sep="\t", dtype=str, keep_default_na=False,
                            quoting=3)
        pages = pages[pages["lang"].isin(["en", "fr"])]
        frames.append(pd.DataFrame({"archive": os.path.basename(os.path.normpath(archive)), "host": pages["host"],
                                    "url": pages["url"], "lang": pages["lang"].map({"en": SRC_LANG, "fr": TRG_LANG})}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["archive", "host", "url", "lang"])


def evaluate_url2lang(gold: pd.DataFrame, folds: pd.Series, fold_ids: list[int], config: TrainingConfig,
                      real_urls: pd.DataFrame | None = None) -> dict:
    """Host-disjoint url2lang on WMT16; with `real_urls` (archive_urls), each fold's model also labels the real
    sites' URLs (every URL once per fold)."""
    real: dict[str, tuple[list, list]] = {}
    urls = pd.concat([pd.DataFrame({"url": gold["src_url"], "host": gold["host"], "lang": SRC_LANG, "fold": folds}),
                      pd.DataFrame({"url": gold["trg_url"], "host": gold["host"], "lang": TRG_LANG, "fold": folds})])
    urls = urls.drop_duplicates("url")
    truth, predicted, tested, cpu_seconds = [], [], [], 0.0
    for fold in fold_ids:
        from parascout.udfs.rank.url_models.training_data import split_by_host

        train = urls[urls["fold"] != fold].copy()
        train["split"] = split_by_host(train["host"], 0.15, 0.0, config.seed).to_numpy()
        test = urls[urls["fold"] == fold].assign(split="test")
        result = train_model("url2lang", pd.concat([train, test]), config, {"source": "wmt16"})
        model = deployed(result.model)
        began = time.process_time()
        frame = model.predict_lang(test["url"].tolist())
        cpu_seconds += time.process_time() - began
        truth += test["lang"].tolist()
        tested += test["url"].tolist()
        predicted += frame[[SRC_LANG, TRG_LANG]].idxmax(axis=1).tolist()
        for name, pages in ([] if real_urls is None else real_urls.groupby(["archive", "host"])):
            labels = model.predict_lang(pages["url"].tolist())[[SRC_LANG, TRG_LANG]].idxmax(axis=1).tolist()
            found = real.setdefault(" ".join(name), ([], []))
            found[0].extend(pages["lang"].tolist())
            found[1].extend(labels)
    report = classification_report(truth, predicted, labels=[SRC_LANG, TRG_LANG])
    report["urls_per_cpu_second"] = len(tested) / max(cpu_seconds, 1e-9)
    report["errors"] = [f"{url} (truth {t})" for url, t, p in zip(tested, truth, predicted) if t != p]
    report["real_sites"] = {name: classification_report(t, p, labels=[SRC_LANG, TRG_LANG])
                            for name, (t, p) in sorted(real.items())}
    return report


def deployed(model):
    """The model as it scores on this device: int8 dynamic quantisation for a transformer on CPU."""
    if model.backend == "transformer" and model.device == "cpu":
        from parascout.udfs.rank.url_models.transformer import quantize_dynamic_int8

        model.model = quantize_dynamic_int8(model.model)
    return model


def evaluate_pairs(gold: pd.DataFrame, folds: pd.Series, fold_ids: list[int], config: TrainingConfig,
                   scorers: dict) -> dict:
    truth, predicted, errors = [], [], {}
    markers = language_markers((SRC_LANG, TRG_LANG))
    seed, backend = config.seed, config.backend
    recalls = {name: {"correct": 0, "gold": 0} for name in ["model", *scorers]}
    seconds = {"train": 0.0, "score": 0.0, "scored_pairs": 0}
    for fold in fold_ids:
        train_gold, test_gold = gold[folds != fold], gold[folds == fold]
        train = pair_examples(train_gold, dev_fraction=0.15, test_fraction=0.0, seed=fold + 100 * seed)
        started = time.monotonic()
        result = train_model("pairs", train, config, {"source": "wmt16"})
        seconds["train"] += time.monotonic() - started
        model = deployed(result.model)
        negatives = generate_negatives(test_gold, seed=fold)
        test_src = test_gold["src_url"].tolist() + negatives["src_url"].tolist()
        test_trg = test_gold["trg_url"].tolist() + negatives["trg_url"].tolist()
        probabilities = model.predict_parallel(test_src, test_trg)
        truth += [1] * len(test_gold) + [0] * len(negatives)
        predicted += (probabilities >= 0.5).astype(int).tolist()
        kinds = [pair_kind(s, t, markers) for s, t in zip(test_gold["src_url"], test_gold["trg_url"])]
        for kind, src, trg, p in zip(kinds + negatives["strategy"].map("negative {}".format).tolist(),
                                     test_src, test_trg, probabilities):
            errors.setdefault(kind, [0, []])
            errors[kind][0] += 1
            if (p >= 0.5) != (not kind.startswith("negative ")):
                errors[kind][1].append(f"{p:.3f} {src}  {trg}")

        def model_scores(candidates: pd.DataFrame, model=model) -> np.ndarray:
            began = time.process_time()
            scores = model.predict_parallel(candidates["src_url"].tolist(), candidates["trg_url"].tolist())
            seconds["score"] += time.process_time() - began
            seconds["scored_pairs"] += len(candidates)
            return scores

        for name, scorer in [("model", model_scores), *scorers.items()]:
            found = gold_pool_recall(scorer, test_gold)
            for key in found:
                recalls[name][key] += found[key]
        log.info("fold %d (%s): recall so far %s", fold, backend,
                     {k: round(v["correct"] / max(v["gold"], 1), 4) for k, v in recalls.items()})
    report = classification_report(truth, predicted, labels=[0, 1])
    return {"pair_report": report, "recalls": recalls, "seconds": seconds, "errors": errors}


def report_run(lang: dict, result: dict | None, summary: dict, threads: int, examples: int) -> None:
    """Print one run's figures (and up to `examples` errors of each kind) and append them to `summary`; `lang` or
    `result` is empty where --tasks left its task out."""
    figures: dict[str, float] = {}
    if lang:
        print(f"url2lang held-out hosts: accuracy {lang['accuracy']:.4f}, macro-F1 {lang['macro']['f1']:.4f} "
              f"({lang['examples']} URLs, {lang['urls_per_cpu_second']:.0f} URLs/CPU-s)")
        figures.update({"url2lang macro-F1": lang["macro"]["f1"], "url2lang URLs per CPU-s": lang["urls_per_cpu_second"]})
        for name, site in lang["real_sites"].items():
            print(f"url2lang on real site {name}: accuracy {site['accuracy']:.4f}, macro-F1 "
                  f"{site['macro']['f1']:.4f} ({site['examples']} URLs)")
            figures[f"url2lang accuracy {name}"] = site["accuracy"]
        print(f"url2lang errors: {len(lang['errors'])}")
        for line in lang["errors"][:examples]:
            print("  " + line)
    if result is not None:
        figures.update(report_pairs(result, threads, examples))
    for name, value in figures.items():
        summary.setdefault(name, []).append(value)


def report_pairs(result: dict, threads: int, examples: int) -> dict[str, float]:
    """Print the pair model's figures of one run; return them."""
    report = result["pair_report"]
    print(f"pairs held-out hosts: macro-F1 {report['macro']['f1']:.4f} (parallel F1 "
          f"{report['per_class']['1']['f1']:.4f}, non-parallel F1 {report['per_class']['0']['f1']:.4f}, "
          f"{report['examples']} pairs)")
    figures = {"pair macro-F1": report["macro"]["f1"]}
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
          f"{seconds['scored_pairs'] / max(seconds['score'], 1e-9):.0f} pairs/CPU-s ({threads} thread(s))")
    figures["pool pairs per CPU-s"] = seconds["scored_pairs"] / max(seconds["score"], 1e-9)
    for kind, (total, wrong) in sorted(result["errors"].items()):
        print(f"pair test errors, {kind}: {len(wrong)}/{total}")
        for line in wrong[:examples]:
            print("  " + line)
    return figures


# ---- the orphan protocol ------------------------------------------------------------------
def string_systems() -> dict:
    """name -> function(pool: host, url, lang) -> candidate pairs; every candidate is a decision."""
    from parascout.udfs.rank.handles import build_stripper, plain_stripper, strand_candidates
    from parascout.udfs.rank.wmt16_baseline import wmt16_candidates

    naive, strand = plain_stripper(["en", "fr", "eng", "fra"]), build_stripper(("en", "fr"))
    return {
        "naive strip": lambda pool: strand_candidates(pool, naive, SRC_LANG, TRG_LANG)[0],
        "wmt16 baseline": lambda pool: wmt16_candidates(pool, SRC_LANG, TRG_LANG),
        "strand": lambda pool: strand_candidates(pool, strand, SRC_LANG, TRG_LANG)[0],
        "strand + learned LSS": lambda pool: strand_candidates(pool, strand, SRC_LANG, TRG_LANG, learn=True)[0],
        "sort-and-zip": sort_and_zip,
    }


def sort_and_zip(pool: pd.DataFrame) -> pd.DataFrame:
    """Each host's sorted src URLs zipped with its sorted trg URLs (the reference without a model)."""
    frames = []
    for host, group in pool.groupby("host", sort=True):
        src = sorted(group.loc[group["lang"] == SRC_LANG, "url"])
        trg = sorted(group.loc[group["lang"] == TRG_LANG, "url"])
        size = min(len(src), len(trg))
        frames.append(pd.DataFrame({"host": host, "src_url": src[:size], "trg_url": trg[:size], "score": 1.0}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=alignment.PAIR_COLUMNS)


def model_scored(model, pool: pd.DataFrame, lang_model=None) -> pd.DataFrame:
    """Every src×trg pair of each host scored as `align --method model` scores them (pool context included)."""
    pairs, _ = alignment.model_candidates(pool, SRC_LANG, TRG_LANG)
    return alignment.score_with_models(pairs, model, lang_model, SRC_LANG, TRG_LANG)


def evaluate_orphans(gold: pd.DataFrame, folds: pd.Series, fold_ids: list[int], seed: int, orphan_share: float,
                     with_lang_model: bool, config: TrainingConfig | None = None) -> dict:
    """Per held-out fold: train on the others (the pair model as `config` says: the n-gram model by default),
    orphan the test hosts' pools, align with every system."""
    systems = string_systems()
    aligned: dict[str, list[pd.DataFrame]] = {}
    kept_gold, gold_pool, reliability_data = [], {}, {}
    for fold in fold_ids:
        train_gold, test_gold = gold[folds != fold], gold[folds == fold]
        train = pair_examples(train_gold, dev_fraction=0.2, test_fraction=0.0, seed=fold + 100 * seed)
        result = train_model("pairs", train, config or config_for("ngram", 0, seed), {"source": "wmt16"})
        model = deployed(result.model)
        decision = model.metadata.get("decision", {})
        pool, kept = orphan_pools(test_gold.assign(src_lang=SRC_LANG, trg_lang=TRG_LANG), orphan_share, seed=fold)
        kept_gold.append(kept)
        for name, system in systems.items():
            aligned.setdefault(name, []).append(alignment.greedy_one_to_one(system(pool)))
        scored = model_scored(model, pool)
        gold_set = set(zip(kept["src_url"], kept["trg_url"]))
        labels = np.array([pair in gold_set for pair in zip(scored["src_url"], scored["trg_url"])])
        for column in ("p_parallel", "score"):
            reliability_data.setdefault(column, []).append((scored[column].to_numpy(), labels))
        cut_offs = {"model (own threshold)": decision.get("min_score", 0.5), "model @ 0.5": 0.5,
                    "model, no threshold": float("-inf")}
        if with_lang_model:
            lang_model = train_url2lang(train_gold, seed)
            with_lang = model_scored(model, pool, lang_model)
            aligned.setdefault("model × language model (own threshold)", []).append(
                alignment.greedy_one_to_one(with_lang[with_lang["score"] >= cut_offs["model (own threshold)"]]))
        for name, cut_off in cut_offs.items():
            aligned.setdefault(name, []).append(alignment.greedy_one_to_one(scored[scored["score"] >= cut_off]))
        found = gold_pool_recall(lambda c, m=model: m.predict_parallel(c["src_url"].tolist(), c["trg_url"].tolist()),
                                 test_gold)
        for key, value in found.items():
            gold_pool[key] = gold_pool.get(key, 0) + value
        log.info("fold %d: model threshold %.3f (dev P %.3f R %.3f)", fold, decision.get("min_score", 0.5),
                 decision.get("precision", 0), decision.get("recall", 0))
    return {"aligned": {name: pd.concat(frames, ignore_index=True) for name, frames in aligned.items()},
            "gold": pd.concat(kept_gold, ignore_index=True), "gold_pool": gold_pool,
            "reliability": {column: reliability(np.concatenate([s for s, _ in parts]), np.concatenate([y for _, y in parts]))
                            for column, parts in reliability_data.items()}}


def train_url2lang(train_gold: pd.DataFrame, seed: int):
    from parascout.udfs.rank.url_models.training_data import split_by_host

    urls = pd.concat([pd.DataFrame({"url": train_gold["src_url"], "host": train_gold["host"], "lang": SRC_LANG}),
                      pd.DataFrame({"url": train_gold["trg_url"], "host": train_gold["host"], "lang": TRG_LANG})])
    urls = urls.drop_duplicates("url")
    urls["split"] = split_by_host(urls["host"], 0.15, 0.0, seed).to_numpy()
    return train_model("url2lang", urls, config_for("ngram", 0, seed), {"source": "wmt16"}).model


def report_orphans(result: dict, examples: int, summary: dict) -> None:
    markers = language_markers((SRC_LANG, TRG_LANG))
    gold = result["gold"]
    kinds = gold.apply(lambda r: pair_kind(r["src_url"], r["trg_url"], markers), axis=1).value_counts()
    print(f"orphan protocol: {len(gold)} gold pairs with both sides in the pools "
          f"({', '.join(f'{k} {kinds.get(k, 0)}' for k in PAIR_KINDS)})")
    header = f"{'system':>40} {'P':>6} {'R':>6} {'F1':>6} " + " ".join(f"{'R ' + k[:10]:>13} {'P':>5}" for k in PAIR_KINDS)
    print(header)
    best_string = 0.0
    for name, aligned in result["aligned"].items():
        quality = alignment_quality(aligned, gold, markers)
        overall = quality["all"]
        if not name.startswith("model") and name != "sort-and-zip":
            best_string = max(best_string, overall["f1"])
        cells = " ".join(f"{quality[k]['recall']:13.3f} {quality[k]['precision']:5.2f}" for k in PAIR_KINDS)
        print(f"{name:>40} {overall['precision']:6.3f} {overall['recall']:6.3f} {overall['f1']:6.3f} {cells}")
        for key in ("precision", "recall", "f1"):
            summary.setdefault(f"{name} {key}", []).append(overall[key])
        for kind in PAIR_KINDS:
            summary.setdefault(f"{name} recall {kind}", []).append(quality[kind]["recall"])
    model_f1 = alignment_quality(result["aligned"]["model (own threshold)"], gold, markers)["all"]["f1"]
    print(f"model (own threshold) F1 - best string baseline F1: {100 * (model_f1 - best_string):+.1f} points")
    found = result["gold_pool"]
    print(f"gold-pool recall of the same models: {found['correct'] / max(found['gold'], 1):.4f} "
          f"({found['correct']}/{found['gold']})")
    summary.setdefault("model F1 - best string F1 (points)", []).append(100 * (model_f1 - best_string))
    summary.setdefault("gold-pool recall model", []).append(found["correct"] / max(found["gold"], 1))
    for column, check in result["reliability"].items():
        table = ", ".join(f"{b['mean_score']:.2f}->{b['observed']:.2f} ({b['pairs']})" for b in check["bins"])
        print(f"reliability of {column} on the held-out pools (every src×trg pair): ECE {check['ece']:.4f}; "
              f"bins mean score->observed (pairs): {table}")
        summary.setdefault(f"ECE {column}", []).append(check["ece"])
    if examples:
        print_errors(result["aligned"]["model (own threshold)"], gold, markers, examples)


def print_errors(aligned: pd.DataFrame, gold: pd.DataFrame, markers: frozenset, examples: int) -> None:
    """Up to `examples` misses per kind (the gold pair, and what the model proposed instead) and wrong pairs."""
    proposed = dict(zip(aligned["src_url"], zip(aligned["trg_url"], aligned["score"])))
    gold_set = set(zip(gold["src_url"], gold["trg_url"]))
    gold_trg = dict(zip(gold["src_url"], gold["trg_url"]))
    misses: dict[str, list[str]] = {}
    for src, trg in sorted(gold_set):
        got = proposed.get(src)
        if got and got[0] == trg:
            continue
        instead = f"proposed {got[0]} ({got[1]:.3f})" if got else "left unaligned"
        misses.setdefault(pair_kind(src, trg, markers), []).append(f"{src}  {trg}  -> {instead}")
    for kind in PAIR_KINDS:
        print(f"\nmissed {kind} pairs ({len(misses.get(kind, []))}):")
        for line in misses.get(kind, [])[:examples]:
            print("  " + line)
    wrong = [(s, t, p) for s, (t, p) in proposed.items() if (s, t) not in gold_set]
    print(f"\nwrong proposals ({len(wrong)}; gold partner of the src if any):")
    for src, trg, score in sorted(wrong, key=lambda w: -w[2])[:examples]:
        print(f"  {score:.3f} {src}  {trg}  (gold: {gold_trg.get(src, 'orphan or dropped')})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", default=PAIRS_FILE)
    parser.add_argument("--backends", default="ngram,transformer")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--transformer-folds", type=int, default=1, help="folds evaluated with the transformer")
    parser.add_argument("--transformer-minutes", type=float, default=4.0, help="training budget per fold and task")
    parser.add_argument("--base-model", default=None, metavar="NAME_OR_DIR",
                        help="transformer: checkpoint to fine-tune (e5-small-bundled: offline); default: compact "
                             "from scratch")
    parser.add_argument("--learning-rate", type=float, default=None,
                        help="transformer: default 5e-5 fine-tuning, 3e-4 from scratch")
    parser.add_argument("--max-length", type=int, default=96,
                        help="fine-tuning: tokens per URL / pair (WMT16 pairs: 58 mean, 85 at p95 with e5's vocabulary)")
    parser.add_argument("--transformer-epochs", type=int, default=2, help="fine-tuning: epochs the schedule plans")
    parser.add_argument("--train-embeddings", action=argparse.BooleanOptionalAction, default=True,
                        help="fine-tuning: train the word embedding table too (as train-pairs does by default)")
    parser.add_argument("--held-out", default=None, metavar="FOLDS",
                        help="held-out folds every backend evaluates, e.g. 1 or 1,3 (default: all for n-gram, "
                             "the first --transformer-folds for the transformer)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=3, help="n-gram runs with different seeds (dev split, init)")
    parser.add_argument("--protocol", choices=("gold", "orphan"), default="gold")
    parser.add_argument("--eval-folds", type=int, default=None, help="orphan: held-out folds evaluated (default all)")
    parser.add_argument("--orphan-share", type=float, default=0.3)
    parser.add_argument("--with-lang-model", action="store_true", help="orphan: also score × a url2lang model")
    parser.add_argument("--examples", type=int, default=10, help="errors printed per kind")
    parser.add_argument("--tasks", default="url2lang,pairs", help="gold protocol: the models trained and evaluated")
    parser.add_argument("--real-sites", nargs="*", default=[path for path in REAL_SITES if os.path.isdir(path)],
                        metavar="DIR", help="url2lang: also label these archives' English and French page URLs "
                                            "(default: ../shared/data/real-sites and real-sites-2 where present)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("parascout.url_models").setLevel(logging.WARNING)
    import torch

    torch.set_num_threads(args.threads)
    pairs, _ = load_pairs(args.pairs)
    gold = pairs[["host", "src_url", "trg_url"]].assign(src_lang=SRC_LANG, trg_lang=TRG_LANG, label=1)
    folds = domain_folds(gold["host"], args.folds)
    if args.protocol == "orphan":
        return main_orphans(gold, folds, args)
    scorers = baseline_scorers()
    print(f"WMT16 train.pairs: {len(gold)} gold pairs, {gold['host'].nunique()} hosts, {args.folds} domain folds; "
          f"baselines: {sorted(scorers) or 'none found'}")
    for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
        fold_ids = list(range(args.folds if backend == "ngram" else min(args.transformer_folds, args.folds)))
        if args.held_out:
            fold_ids = [int(fold) for fold in args.held_out.split(",")]
        seeds = range(args.seeds if backend == "ngram" else 1)
        summary: dict[str, list[float]] = {}
        for seed in seeds:
            started = time.monotonic()
            config = config_for(backend, args.transformer_minutes, seed, args.base_model, args.learning_rate,
                                args.max_length, args.transformer_epochs, args.train_embeddings)
            tasks = args.tasks.split(",")
            lang = evaluate_url2lang(gold, folds, fold_ids, config, archive_urls(args.real_sites)) \
                if "url2lang" in tasks else {}
            result = evaluate_pairs(gold, folds, fold_ids, config, scorers) if "pairs" in tasks else None
            print(f"\n== {backend}{' from ' + args.base_model if backend != 'ngram' and args.base_model else ''}, "
                  f"seed {seed} (held-out fold(s) {fold_ids}, {time.monotonic() - started:.0f}s) ==")
            report_run(lang, result, summary, args.threads, args.examples)
        if len(seeds) > 1:
            print(f"\n== {backend}: {len(seeds)} seeds (mean [min, max]) ==")
            for name, values in summary.items():
                print(f"{name:>32}: {np.mean(values):.4f} [{min(values):.4f}, {max(values):.4f}]")
    return 0


def main_orphans(gold: pd.DataFrame, folds: pd.Series, args) -> int:
    fold_ids = list(range(min(args.eval_folds or args.folds, args.folds)))
    if args.held_out:
        fold_ids = [int(fold) for fold in args.held_out.split(",")]
    backend = args.backends.split(",")[0].strip()  # the pair model: the first of --backends
    print(f"WMT16 train.pairs: {len(gold)} gold pairs, {gold['host'].nunique()} hosts, {args.folds} domain folds "
          f"({len(fold_ids)} held out in turn), orphan share {args.orphan_share}")
    summary: dict[str, list[float]] = {}
    for seed in range(args.seeds):
        started, cpu = time.monotonic(), time.process_time()
        config = config_for(backend, args.transformer_minutes, seed, args.base_model, args.learning_rate,
                            args.max_length, args.transformer_epochs, args.train_embeddings)
        result = evaluate_orphans(gold, folds, fold_ids, seed, args.orphan_share, args.with_lang_model, config)
        print(f"\n== orphan protocol, {backend} pair model, seed {seed} ({time.monotonic() - started:.0f}s, "
              f"{time.process_time() - cpu:.0f} CPU-s) ==")
        report_orphans(result, args.examples if seed == 0 else 0, summary)
    if args.seeds > 1:
        print(f"\n== {args.seeds} seeds (mean [min, max]) ==")
        for name, values in summary.items():
            print(f"{name:>50}: {np.mean(values):.4f} [{min(values):.4f}, {max(values):.4f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
