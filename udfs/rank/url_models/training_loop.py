"""The training loop of the URL models, the same for both backends (the model supplies its parameters and
logits): AdamW (a row-wise Adam for the n-gram embedding table), weight decay, linear warm-up then inverse-square-root
decay, early stopping on dev macro-F1, and the fold curriculum (stage j trains on folds 1..j from the best weights)."""
from __future__ import annotations

import copy
import logging
import math
import time
from typing import TYPE_CHECKING

import numpy as np

from parascout.udfs.rank.url_models.evaluation import classification_report

if TYPE_CHECKING:  # annotations only: training.py imports this module
    from parascout.udfs.rank.url_models.training import TrainingConfig

log = logging.getLogger("parascout.url_models")


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
    """[RowAdam for the n-gram table,] AdamW (no decay on biases and LayerNorm) for the rest; a transformer's word
    embedding table is left as it is without config.train_embeddings (a pretrained encoder's 250k rows are most of
    its weights: their dense gradient and Adam state cost two thirds of a CPU step on URLs)."""
    import torch

    module = _module(model)
    optimizers = []
    if model.backend == "ngram":
        optimizers.append(RowAdam(module.embedding.weight, config.learning_rate))
    else:
        module.get_input_embeddings().weight.requires_grad_(config.train_embeddings)
    decay, no_decay = [], []
    for name, parameter in module.named_parameters():
        if model.backend == "ngram" and name.startswith("embedding.") or not parameter.requires_grad:
            continue  # the n-gram table has its RowAdam; a frozen table has no optimiser state
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
        unique, inverse = torch.unique(torch.cat([bag[0] for bag in bags]), return_inverse=True)
        sizes = [len(bag[0]) for bag in bags]
        remapped = [(part, *bag[1:]) for part, bag in zip(torch.split(inverse, sizes), bags)]
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
                    stop = "max_steps" if config.max_steps and step >= config.max_steps else "max_minutes"
                    break
            dev_f1 = _macro_f1(model, dev, dev_encoded)
            improved = dev_f1 > best_f1
            if improved:
                best_f1, best_state, waited = dev_f1, copy.deepcopy(module.state_dict()), 0
            else:
                waited += 1
            history.append({"stage": stage, "epoch": epoch, "step": step, "train_loss": round(float(np.mean(losses)), 5)
                            if losses else None, "dev_macro_f1": round(dev_f1, 4), "best": improved,
                            **({"stopped_by": stop} if stop else {})})
            if stop == "max_minutes":
                log.warning("training stopped by the --max-minutes safety cap at step %d: the model depends on "
                            "machine speed; raise the cap or lower --max-epochs for a reproducible run", step)
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

