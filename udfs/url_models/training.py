"""Training of the URL models: data preparation, the training loop, and the model directory.

Data: url2lang examples come from the `urls` table (label = the CDX CLD2 language,
capped per language by keeping the URLs with the smallest seeded hash, so memory stays
bounded while reading); pair examples are positives plus synthetic negatives
(negatives.py). Both are split train/dev/test by registered domain — hosts of one site
never cross splits — walking domains in seeded-hash order until each split has its share.

Recipe (the paper's, for both backends): AdamW (SparseAdam for the n-gram embedding
table), weight decay 0.01, linear warm-up over the first 10% of the planned steps then
inverse-square-root decay, classifier re-initialised when fine-tuning a checkpoint,
early stopping on dev macro-F1 with patience 5 evaluations (one per epoch). Curriculum
by folds, as we read the paper: the shuffled training set is cut into `folds` parts;
stage j trains on folds 1..j, starting from the best weights so far, with its own
early stopping; the best dev macro-F1 over all stages wins. folds=1 is plain training.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import logging
import math
import os
import platform
import shutil
import time
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from parascout.udfs import storage
from parascout.udfs.url_models import METADATA_FILE, METRICS_FILE
from parascout.udfs.url_models.evaluation import classification_report
from parascout.udfs.url_models.negatives import DEFAULT_STRATEGIES, generate_negatives
from parascout.udfs.urls import registered_domain, url_host

log = logging.getLogger("parascout.url_models")
PAIR_LABELS = ["non-parallel", "parallel"]
FORMAT_VERSION = 1
COMPACTION_ROWS = 2_000_000


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


def add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments shared by train-url2lang and train-pairs."""
    group = parser.add_argument_group("model and training")
    group.add_argument("--out", required=True, help="model directory to write (local path or s3://)")
    group.add_argument("--backend", choices=["ngram", "transformer"], default="ngram",
                       help="ngram: hashed char n-grams (fast, CPU); transformer: Hugging Face sequence classifier")
    group.add_argument("--base-model", default=None, metavar="NAME_OR_DIR",
                       help="transformer checkpoint to fine-tune (local dir or hub id); default: compact from scratch")
    group.add_argument("--max-epochs", type=int, default=10)
    group.add_argument("--batch-size", type=int, default=None, help="default 256 (ngram) / 32 (transformer)")
    group.add_argument("--learning-rate", type=float, default=None,
                       help="default 0.02 (ngram), 1e-5 (fine-tuning, the paper), 5e-4 (compact from scratch)")
    group.add_argument("--weight-decay", type=float, default=0.01)
    group.add_argument("--patience", type=int, default=5, help="early stopping: epochs without better dev macro-F1")
    group.add_argument("--folds", type=int, default=1, help="curriculum: train on folds 1..j for j = 1..folds")
    group.add_argument("--max-steps", type=int, default=None, help="stop after this many optimiser steps")
    group.add_argument("--max-minutes", type=float, default=None, help="stop training after this much time")
    group.add_argument("--seed", type=int, default=0)
    group.add_argument("--balanced-loss", action=argparse.BooleanOptionalAction, default=None,
                       help="weight classes by inverse frequency (default: on for the transformer backend)")
    group.add_argument("--threads", type=int, default=None, help="torch threads for training (default: all cores)")
    group.add_argument("--dev-fraction", type=float, default=0.1)
    group.add_argument("--test-fraction", type=float, default=0.1)
    group.add_argument("--max-length", type=int, default=64, help="transformer: tokens per URL / pair")
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


# ---- splits -------------------------------------------------------------------------
def split_by_host(hosts: pd.Series, dev_fraction: float, test_fraction: float, seed: int = 0) -> pd.Series:
    """'train' / 'dev' / 'test' per row; all hosts of one registered domain land in the same split."""
    domains = hosts.fillna("").map(_split_key)
    sizes = domains.value_counts()
    key = f"{seed % 10**16:016d}"
    order = np.argsort(pd.util.hash_pandas_object(pd.Series(sizes.index), index=False, hash_key=key).to_numpy(),
                       kind="stable")
    ordered = sizes.iloc[order]
    before = np.cumsum(ordered.to_numpy()) - ordered.to_numpy()      # rows in domains earlier in hash order
    test_target, dev_target = test_fraction * len(hosts), dev_fraction * len(hosts)
    is_test = before < test_target
    test_rows = ordered.to_numpy()[is_test].sum()
    is_dev = ~is_test & (before - test_rows < dev_target)
    names = np.where(is_test, "test", np.where(is_dev, "dev", "train"))
    return domains.map(dict(zip(ordered.index, names)))


def _split_key(host: str) -> str:
    return registered_domain(host) or host


# ---- url2lang data ------------------------------------------------------------------
def _urls_source(path: str) -> str:
    """A Parquet file/folder, or a dataset root holding urls/."""
    candidate = storage.join(path, "urls")
    if storage.exists(storage.join(candidate, "_SUCCESS")) or (storage.is_local(path) and os.path.isdir(candidate)):
        return candidate
    return path


def load_url2lang_examples(path: str, cap_per_language: int = 600_000, unknown_from_null: bool = False,
                           seed: int = 0) -> tuple[pd.DataFrame, Counter]:
    """(url, host, lang) rows from the urls table, at most `cap_per_language` per label, and counts by reason.

    Counts: input, kept, bad:no_url, bad:no_host, filtered:no_language, filtered:duplicate_url,
    filtered:over_language_cap. Null languages become 'unk' when unknown_from_null.
    """
    import pyarrow.dataset as ds

    source = _urls_source(path)
    filesystem, inner = storage._arrow_fs(source)
    dataset = ds.dataset(inner, format="parquet", filesystem=filesystem, exclude_invalid_files=True)
    columns = [c for c in ("url", "host", "lang") if c in dataset.schema.names]
    if "url" not in columns or "lang" not in columns:
        raise ValueError(f"{source}: expected a urls table with columns url and lang, found {dataset.schema.names}")
    counts: Counter = Counter()
    buffered: list[pd.DataFrame] = []
    buffered_rows = 0
    for record_batch in ds.Scanner.from_dataset(dataset, columns=columns, batch_size=262_144).to_batches():
        frame = record_batch.to_pandas()
        counts["input"] += len(frame)
        frame = _clean_url_rows(frame, unknown_from_null, counts)
        frame["rank"] = pd.util.hash_pandas_object(frame["url"], index=False, hash_key=f"{seed % 10**16:016d}").to_numpy()
        buffered.append(frame)
        buffered_rows += len(frame)
        if buffered_rows > COMPACTION_ROWS + cap_per_language:
            buffered = [_compact(pd.concat(buffered, ignore_index=True), cap_per_language, counts)]
            buffered_rows = len(buffered[0])
        log.info("url2lang data: read %d rows, %d buffered", counts["input"], buffered_rows)
    empty = pd.DataFrame({"url": pd.Series(dtype=str), "host": pd.Series(dtype=str), "lang": pd.Series(dtype=str),
                          "rank": pd.Series(dtype=np.uint64)})
    frame = _compact(pd.concat(buffered, ignore_index=True) if buffered else empty, cap_per_language, counts)
    counts["kept"] = len(frame)
    return frame.drop(columns=["rank"]).sort_values("url", ignore_index=True), counts


def _clean_url_rows(frame: pd.DataFrame, unknown_from_null: bool, counts: Counter) -> pd.DataFrame:
    no_url = frame["url"].isna() | (frame["url"].astype(str).str.strip() == "")
    counts["bad:no_url"] += int(no_url.sum())
    frame = frame[~no_url].copy()
    if "host" not in frame:
        frame["host"] = None
    missing_host = frame["host"].isna()
    frame.loc[missing_host, "host"] = frame.loc[missing_host, "url"].map(url_host)
    no_host = frame["host"].isna()
    counts["bad:no_host"] += int(no_host.sum())
    frame = frame[~no_host]
    language = frame["lang"].astype("string").str.strip().str.lower()
    language = language.mask(language == "", pd.NA)
    if unknown_from_null:
        language = language.fillna("unk")
    counts["filtered:no_language"] += int(language.isna().sum())
    frame = frame.assign(lang=language)[language.notna()]
    return frame[["url", "host", "lang"]].astype({"lang": str})


def _compact(frame: pd.DataFrame, cap: int, counts: Counter) -> pd.DataFrame:
    before = len(frame)
    frame = frame.drop_duplicates("url")
    counts["filtered:duplicate_url"] += before - len(frame)
    before = len(frame)
    frame = frame.sort_values("rank").groupby("lang", sort=False).head(cap)
    counts["filtered:over_language_cap"] += before - len(frame)
    return frame.reset_index(drop=True)


# ---- pair data ----------------------------------------------------------------------
def load_pairs(path: str, src_lang: str | None = None, trg_lang: str | None = None) -> tuple[pd.DataFrame, Counter]:
    """Labelled URL pairs from a pair file (`src trg` per line, WMT16 style), the sample archive's
    truth/pairs.parquet, or a verified_pairs table (parallel=False rows become real negatives).

    Returns host, src_url, trg_url, src_lang, trg_lang, label and counts by reason
    (input, kept, bad:malformed_line, bad:missing_url, filtered:blank_line, filtered:unverified,
    filtered:same_url, filtered:duplicate_pair).
    """
    source = _pairs_source(path)
    counts: Counter = Counter()
    if _is_parquet(source):
        frame = _read_parquet(source)
        counts["input"] += len(frame)
        if "src_url" not in frame or "trg_url" not in frame:
            raise ValueError(f"{source}: expected columns src_url and trg_url, found {list(frame.columns)}")
        missing = frame["src_url"].isna() | frame["trg_url"].isna()
        counts["bad:missing_url"] += int(missing.sum())
        frame = frame[~missing].copy()
        if "parallel" in frame:
            unverified = frame["parallel"].isna()
            counts["filtered:unverified"] += int(unverified.sum())
            frame = frame[~unverified].copy()
            frame["label"] = frame["parallel"].astype(bool).astype(int)
        else:
            frame["label"] = 1
    else:
        frame = _read_pair_file(source, counts)
    for column, given in (("src_lang", src_lang), ("trg_lang", trg_lang)):
        if column not in frame or given:
            frame[column] = given
    if "host" not in frame:
        frame["host"] = None
    frame["host"] = frame["host"].where(frame["host"].notna(), frame["src_url"].map(url_host))
    same = frame["src_url"] == frame["trg_url"]
    counts["filtered:same_url"] += int(same.sum())
    frame = frame[~same]
    before = len(frame)
    frame = frame.drop_duplicates(["src_url", "trg_url"])
    counts["filtered:duplicate_pair"] += before - len(frame)
    counts["kept"] = len(frame)
    columns = ["host", "src_url", "trg_url", "src_lang", "trg_lang", "label"]
    return frame[columns].reset_index(drop=True), counts


def _pairs_source(path: str) -> str:
    for inner in ("truth/pairs.parquet", "verified_pairs"):
        candidate = storage.join(path, inner)
        if storage.is_local(path) and os.path.isdir(path) and os.path.exists(candidate):
            return candidate
    return path


def _is_parquet(path: str) -> bool:
    """A Parquet file or folder (anything else is read as a `src trg` pair file)."""
    if path.endswith(".parquet"):
        return True
    if storage.is_local(path):
        return os.path.isdir(storage.local_path(path))
    return "." not in path.rstrip("/").rsplit("/", 1)[-1]


def _read_parquet(path: str) -> pd.DataFrame:
    import pyarrow.dataset as ds

    filesystem, inner = storage._arrow_fs(path)
    return ds.dataset(inner, format="parquet", filesystem=filesystem, exclude_invalid_files=True).to_table().to_pandas()


def _read_pair_file(path: str, counts: Counter) -> pd.DataFrame:
    rows = []
    for line in storage.read_text(path).splitlines():
        counts["input"] += 1
        fields = line.split()
        if not fields:
            counts["filtered:blank_line"] += 1
        elif len(fields) != 2 or not all(url_host(f) for f in fields):
            counts["bad:malformed_line"] += 1
        else:
            rows.append(fields)
    frame = pd.DataFrame(rows, columns=["src_url", "trg_url"])
    frame["label"] = 1
    return frame


def pair_examples(pairs: pd.DataFrame, strategies: tuple[str, ...] = DEFAULT_STRATEGIES, per_positive: int = 1,
                  dev_fraction: float = 0.1, test_fraction: float = 0.1, seed: int = 0) -> pd.DataFrame:
    """Positives, real negatives and same-host synthetic negatives, split by host (columns + split, source)."""
    pairs = pairs.copy()
    pairs["split"] = split_by_host(pairs["host"], dev_fraction, test_fraction, seed).to_numpy()
    pairs["source"] = np.where(pairs["label"] == 1, "positive", "verified_negative")
    positives = pairs[pairs["label"] == 1]
    known = set(zip(positives["src_url"], positives["trg_url"])) | set(zip(positives["trg_url"], positives["src_url"]))
    parts = [pairs]
    for split_name, group in positives.groupby("split"):
        negatives = generate_negatives(group, strategies, per_positive=per_positive, seed=seed)
        negatives = negatives[[(s, t) not in known for s, t in zip(negatives["src_url"], negatives["trg_url"])]]
        parts.append(negatives.rename(columns={"strategy": "source"}).assign(label=0, split=split_name))
    columns = ["host", "src_url", "trg_url", "src_lang", "trg_lang", "label", "split", "source"]
    return pd.concat([p[columns] for p in parts], ignore_index=True)


# ---- the training loop --------------------------------------------------------------
def _examples(frame: pd.DataFrame, task: str, label_index: dict) -> dict:
    if task == "pairs":
        data = {"src_url": frame["src_url"].tolist(), "trg_url": frame["trg_url"].tolist()}
        data["label"] = frame["label"].to_numpy(dtype=np.int64)
    else:
        data = {"url": frame["url"].tolist()}
        data["label"] = np.array([label_index[v] for v in frame["lang"]], dtype=np.int64)
    return data


def _module(model):
    return model.net if model.backend == "ngram" else model.model


class RowAdam:
    """Lazy Adam for an embedding table: only the rows a batch uses are updated (SparseAdam without coalescing)."""

    def __init__(self, weight, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        import torch

        self.weight = weight
        self.param_groups = [{"lr": lr}]
        self.betas, self.eps, self.steps = betas, eps, 0
        self.first = torch.zeros_like(weight.data)
        self.second = torch.zeros_like(weight.data)

    def step(self, rows, gradient) -> None:
        import torch

        self.steps += 1
        beta1, beta2 = self.betas
        with torch.no_grad():
            first = self.first[rows].mul_(beta1).add_(gradient, alpha=1 - beta1)
            second = self.second[rows].mul_(beta2).addcmul_(gradient, gradient, value=1 - beta2)
            self.first[rows], self.second[rows] = first, second
            corrected = math.sqrt(1 - beta2 ** self.steps) / (1 - beta1 ** self.steps)
            update = first / (second.sqrt() + self.eps) * (self.param_groups[0]["lr"] * corrected)
            self.weight.data.index_add_(0, rows, -update)


def _optimizers(model, config: TrainingConfig) -> list:
    """[RowAdam for the n-gram table,] AdamW (no decay on biases and LayerNorm) for the rest."""
    import torch

    module = _module(model)
    optimizers = []
    if model.backend == "ngram":
        optimizers.append(RowAdam(module.embedding.weight, config.learning_rate))
    decay, no_decay = [], []
    for name, parameter in module.named_parameters():
        if model.backend == "ngram" and name.startswith("embedding."):
            continue
        (no_decay if name.endswith("bias") or "LayerNorm" in name or "layer_norm" in name else decay).append(parameter)
    optimizers.append(torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                         {"params": no_decay, "weight_decay": 0.0}], lr=config.learning_rate))
    return optimizers


def warmup_inverse_sqrt(step: int, warmup_steps: int) -> float:
    """Learning-rate factor: linear warm-up to 1 over warmup_steps, then sqrt(warmup_steps / step)."""
    step = max(step, 1)
    return step / warmup_steps if step < warmup_steps else math.sqrt(warmup_steps / step)


def _logits(model, data: dict, rows: np.ndarray, encoded: list | None):
    if model.backend == "ngram":
        bags, dense = model.inputs(data, rows)
        return model.net(bags, dense)
    return model.model(**model.collate([encoded[i] for i in rows])).logits


def _train_step(model, optimizers: list, data: dict, rows: np.ndarray, encoded: list | None, factor: float,
                class_weights=None) -> float:
    """One optimiser step at learning-rate factor `factor`; returns the batch loss."""
    import torch

    for optimizer in optimizers:
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
            group["lr"] = group["initial_lr"] * factor
        if not isinstance(optimizer, RowAdam):
            optimizer.zero_grad()
    if model.backend == "ngram":
        bags, dense = model.inputs(data, rows)
        unique, inverse = torch.unique(torch.cat([indices for indices, _ in bags]), return_inverse=True)
        sizes = [len(indices) for indices, _ in bags]
        remapped = [(part, offsets) for part, (_, offsets) in zip(torch.split(inverse, sizes), bags)]
        gathered = model.net.embedding.weight.detach()[unique].requires_grad_()
        logits = model.net(remapped, dense, rows=gathered)
    else:
        logits = model.model(**model.collate([encoded[i] for i in rows])).logits
    target = torch.from_numpy(data["label"][rows]).to(logits.device)
    weights = class_weights.to(logits.device) if class_weights is not None else None
    loss = torch.nn.functional.cross_entropy(logits, target, weight=weights)
    loss.backward()
    for optimizer in optimizers:
        if isinstance(optimizer, RowAdam):
            optimizer.step(unique, gathered.grad)
        else:
            optimizer.step()
    return loss.item()


def predict_classes(model, data: dict, encoded: list | None = None, batch_size: int = 1024) -> np.ndarray:
    """Predicted class index per example (pairs: P(parallel) >= 0.5)."""
    import torch

    module = _module(model)
    module.eval()
    total = len(data["label"])
    order = np.argsort([len(e) for e in encoded], kind="stable") if encoded is not None else np.arange(total)
    predictions = np.zeros(total, dtype=np.int64)
    with torch.inference_mode():
        for start in range(0, total, batch_size):
            rows = order[start: start + batch_size]
            predictions[rows] = _logits(model, data, rows, encoded).argmax(dim=-1).cpu().numpy()
    return predictions


def _macro_f1(model, data: dict, encoded: list | None) -> float:
    if not len(data["label"]):
        return 0.0
    return classification_report(data["label"], predict_classes(model, data, encoded), top=0)["macro"]["f1"]


def fit(model, train: dict, dev: dict, config: TrainingConfig) -> list[dict]:
    """Train in place with the recipe above; restores the best dev weights; returns per-epoch history."""
    import torch
    from tqdm.auto import tqdm

    torch.manual_seed(config.seed)
    if config.threads:
        torch.set_num_threads(config.threads)
    rng = np.random.default_rng(config.seed)
    module = _module(model)
    train_encoded = model.encode_examples(train) if model.backend == "transformer" else None
    dev_encoded = model.encode_examples(dev) if model.backend == "transformer" else None
    if not len(dev["label"]):
        log.warning("no dev examples (too few hosts?): early stopping watches training macro-F1 instead")
        dev, dev_encoded = train, train_encoded
    folds = np.array_split(rng.permutation(len(train["label"])), config.folds)
    planned = sum(config.max_epochs * math.ceil(sum(len(f) for f in folds[:j + 1]) / config.batch_size)
                  for j in range(config.folds))
    if config.max_steps:
        planned = min(planned, config.max_steps)
    warmup = max(1, int(config.warmup_fraction * planned))
    optimizers = _optimizers(model, config)
    class_weights = None
    if config.balanced_loss:
        frequency = np.bincount(train["label"], minlength=int(train["label"].max()) + 1).astype(np.float64)
        inverse = np.where(frequency > 0, len(train["label"]) / np.maximum(frequency, 1) / len(frequency), 0.0)
        class_weights = torch.tensor(inverse, dtype=torch.float32)
    best_f1, best_state, history, step = -1.0, copy.deepcopy(module.state_dict()), [], 0
    deadline = time.monotonic() + 60 * config.max_minutes if config.max_minutes else None
    stop = False
    for stage in range(1, config.folds + 1):
        indices = np.concatenate(folds[:stage])
        waited = 0
        for epoch in range(1, config.max_epochs + 1):
            module.train()
            permutation = rng.permutation(indices)
            batches = range(0, len(permutation), config.batch_size)
            losses = []
            for start in tqdm(batches, desc=f"stage {stage}/{config.folds} epoch {epoch}", leave=False,
                              mininterval=10, disable=None):
                rows = permutation[start: start + config.batch_size]
                losses.append(_train_step(model, optimizers, train, rows, train_encoded,
                                          warmup_inverse_sqrt(step + 1, warmup), class_weights))
                step += 1
                if (config.max_steps and step >= config.max_steps) or (deadline and time.monotonic() > deadline):
                    stop = True
                    break
            dev_f1 = _macro_f1(model, dev, dev_encoded)
            improved = dev_f1 > best_f1
            if improved:
                best_f1, best_state, waited = dev_f1, copy.deepcopy(module.state_dict()), 0
            else:
                waited += 1
            history.append({"stage": stage, "epoch": epoch, "step": step, "train_loss": round(float(np.mean(losses)), 5)
                            if losses else None, "dev_macro_f1": round(dev_f1, 4), "best": improved})
            log.info("stage %d/%d epoch %d: step %d, train loss %.4f, dev macro-F1 %.4f%s", stage, config.folds,
                     epoch, step, history[-1]["train_loss"] or 0.0, dev_f1, " (best)" if improved else "")
            if stop or waited >= config.patience:
                break
        module.load_state_dict(best_state)
        if stop:
            break
    module.load_state_dict(best_state)
    module.eval()
    return history


# ---- calibration and the alignment cut-off (pairs) -----------------------------------
#: share of dev gold pairs that lose one side when the cut-off is chosen (the orphan protocol's share)
CALIBRATION_ORPHAN_SHARE = 0.3
#: the cut-off is the highest-F1 one among those whose dev precision reaches this
DECISION_MIN_PRECISION = 0.95
#: gold pairs of one (host, language pair) pool when calibrating (larger pools are sampled)
CALIBRATION_MAX_PAIRS = 300


def calibration_pools(positives: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every src×trg pair of each dev host's orphaned pool (host, src_url, trg_url, label) and the kept gold."""
    from parascout.udfs.url_models.evaluation import orphan_pools
    from parascout.udfs.url_models.negatives import with_languages_and_hosts

    gold = with_languages_and_hosts(positives)
    frames, kept_gold = [], []
    for (host, _, _), group in gold.groupby(["host", "src_lang", "trg_lang"], sort=True):
        if len(group) > CALIBRATION_MAX_PAIRS:
            group = group.sample(CALIBRATION_MAX_PAIRS, random_state=seed)
        pool, kept = orphan_pools(group.assign(src_lang="src", trg_lang="trg"), CALIBRATION_ORPHAN_SHARE, seed)
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


def calibrate_pairs(model, positives: pd.DataFrame, seed: int) -> tuple[dict | None, dict | None]:
    """The calibration and decision records (calibration.py), fitted on the dev hosts' pools with
    CALIBRATION_ORPHAN_SHARE of their pairs orphaned: every src×trg pair of a pool is an example, as
    `align` meets them. None, None when the dev hosts hold no pool with both true and false pairs."""
    from parascout.udfs.alignment import greedy_one_to_one
    from parascout.udfs.url_models.calibration import alignment_scores, calibrated, fit_decision, fit_platt
    from parascout.udfs.url_models.evaluation import best_threshold

    if not hasattr(model, "pair_logits"):
        return None, None
    pairs, kept = calibration_pools(positives, seed)
    labels = pairs["label"].to_numpy(dtype=bool)
    if not labels.any() or labels.all():
        log.warning("no dev pool with both true and false pairs: the pair model stays uncalibrated")
        return None, None
    logits = model.pair_logits(pairs["src_url"].tolist(), pairs["trg_url"].tolist())
    fitted_on = {"fitted_on": f"dev hosts, every src×trg pair, {CALIBRATION_ORPHAN_SHARE:.0%} of gold pairs orphaned",
                 "pairs": len(pairs), "positives": int(labels.sum()), "hosts": int(pairs["host"].nunique())}
    calibration = {**fit_platt(logits, labels), **fitted_on}
    pairs["p_parallel"] = calibrated(logits, calibration)
    decision = fit_decision(pairs, labels)
    pairs["score"] = alignment_scores(pairs, {"decision": decision})
    cut_off = best_threshold(greedy_one_to_one(pairs), kept, DECISION_MIN_PRECISION)
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
        from parascout.udfs.url_models.ngram import NgramSpec, NgramUrlModel

        spec = NgramSpec(buckets=config.buckets, dim=config.dim, hidden=config.ngram_hidden, side_bags=config.side_bags,
                         cross_bag=True, symmetric_cross=True, pair_extras=True, fold_accents=True)
        return NgramUrlModel.create(task, labels, spec, seed=config.seed)
    from parascout.udfs.url_models.preprocess import preprocess_url
    from parascout.udfs.url_models.transformer import TransformerUrlModel

    return TransformerUrlModel.for_training(
        task, labels, config.base_model, [preprocess_url(t) for t in texts], max_length=config.max_length,
        layers=config.layers, hidden=config.hidden, vocab_size=config.vocab_size, seed=config.seed)


def _evaluate(model, frame: pd.DataFrame, task: str, labels: list[str], label_index: dict) -> dict:
    data = _examples(frame, task, label_index)
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
    history = fit(model, _examples(parts["train"], task, label_index), _examples(parts["dev"], task, label_index),
                  config)
    seconds = round(time.monotonic() - started, 1)
    metrics = {"task": task, "backend": config.backend, "training_seconds": seconds, "history": history,
               "rows": {name: len(part) for name, part in parts.items()},
               "dev": _evaluate(model, parts["dev"], task, labels, label_index),
               "test": _evaluate(model, parts["test"], task, labels, label_index)}
    calibration = decision = None
    if task == "pairs":
        metrics["sources"] = {name: {str(k): int(v) for k, v in part["source"].value_counts().items()}
                              for name, part in parts.items()}
        calibration, decision = calibrate_pairs(model, parts["dev"][parts["dev"]["label"] == 1], config.seed)
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


def data_fingerprint(frame: pd.DataFrame) -> str:
    """A stable digest of the training rows (order-independent)."""
    columns = [c for c in ("url", "lang", "src_url", "trg_url", "label", "split") if c in frame]
    hashes = np.sort(pd.util.hash_pandas_object(frame[columns], index=False).to_numpy())
    return hashlib.sha256(hashes.tobytes()).hexdigest()[:16]


def _versions() -> dict:
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for package in ("parascout", "torch", "transformers", "tokenizers", "numpy", "pandas"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def model_metadata(task: str, config: TrainingConfig, labels: list[str], frame: pd.DataFrame,
                   data_description: dict, metrics: dict) -> dict:
    created = datetime.now(timezone.utc)
    fingerprint = data_fingerprint(frame)
    return {
        "format": "parascout-url-model", "format_version": FORMAT_VERSION,
        "model_version": f"{created:%Y%m%dT%H%M%SZ}-{fingerprint[:8]}",
        "created_at": created.isoformat(timespec="seconds"),
        "task": task, "backend": config.backend, "labels": labels,
        "max_length": config.max_length if config.backend == "transformer" else None,
        "preprocessing": {"name": "garcia-romero-2024-url-tokens", "version": 1},
        "training": {k: v for k, v in asdict(config).items() if k != "extra"},
        "data": {**data_description, "fingerprint": fingerprint, "rows": metrics["rows"]},
        "metrics": {name: {"macro_f1": metrics[name]["macro"]["f1"], "accuracy": metrics[name]["accuracy"],
                           "examples": metrics[name]["examples"]} for name in ("dev", "test")},
        "versions": _versions(),
    }


def write_model_dir(result: TrainingResult, out: str) -> str:
    """Save model + metadata + metrics into `out` atomically (a sibling temporary folder, then a rename)."""
    local_out = storage.local_path(out) if storage.is_local(out) else None
    parent = Path(local_out).resolve().parent if local_out else Path(os.environ.get("TMPDIR", "/tmp"))
    parent.mkdir(parents=True, exist_ok=True)
    staging = parent / f".{Path(out.rstrip('/')).name}.tmp-{uuid.uuid4().hex[:8]}"
    result.model.save(staging)
    (staging / METADATA_FILE).write_text(json.dumps(result.metadata, indent=2, default=str))
    (staging / METRICS_FILE).write_text(json.dumps(result.metrics, indent=2, default=str))
    for path in staging.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    if local_out is None:
        storage.upload_dir(staging, out)
        shutil.rmtree(staging)
        return out
    target = Path(local_out)
    if target.exists():
        if any(target.iterdir()) and not (target / METADATA_FILE).exists():
            shutil.rmtree(staging)
            raise ValueError(f"--out {out} exists and is not a parascout model directory; choose another path")
        retired = parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
        target.rename(retired)
        staging.rename(target)
        shutil.rmtree(retired)
    else:
        staging.rename(target)
    return str(target)

