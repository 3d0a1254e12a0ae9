"""Fast URL models: hashed n-gram bags fed to an EmbeddingBag and a small head, in torch.

The features (ngram_features: hashed tokens and character 2..4-grams of a URL; ngram_pairs:
the bags and dense similarity features of a URL pair) feed an EmbeddingBag (mean) and a linear
head (url2lang, as fastText) or a small MLP (pairs). NgramUrlModel is the backend load_model()
returns for an `ngram` model directory: ngram_config.json (the NgramSpec, task and labels) and
the weights as safetensors; no file records a module path.

Why the network apart from its features: the featurisers are numpy only and large; this module
is what needs torch, and what the training loop and load_model() see of the backend.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from parascout.udfs.rank.url_models.api import UrlModelApi
from parascout.udfs.rank.url_models.ngram_features import NgramSpec, _normalised, featurize
from parascout.udfs.rank.url_models.ngram_pairs import (
    PAIR_BAGS,
    PAIR_COGNATE_DENSE,
    PAIR_DENSE,
    PAIR_EXTRA_DENSE,
    _unique_positions,
    indexed_pair_features,
)

CONFIG_FILE = "ngram_config.json"
WEIGHTS_FILE = "model.safetensors"


class NgramUrlModel(UrlModelApi):
    """The fast backend behind load_model(): predict_lang / predict_parallel over hashed n-gram bags."""

    backend = "ngram"

    def __init__(self, net, spec: NgramSpec, task: str, labels: list[str], metadata: dict | None = None,
                 batch_size: int = 4096):
        self.net = net.eval()
        self.spec = spec
        self.task = task
        self.labels = list(labels)
        self.metadata = metadata or {}
        self.batch_size = batch_size

    # ---- construction ----------------------------------------------------------------
    @classmethod
    def create(cls, task: str, labels: list[str], spec: NgramSpec, seed: int = 0) -> NgramUrlModel:
        """A freshly initialised model for `task` ('url2lang' or 'pairs')."""
        torch.manual_seed(seed)
        if task == "pairs":
            bags = len(PAIR_BAGS) - (0 if spec.side_bags else 2) + int(spec.cross_bag)
            dense = len(PAIR_DENSE) + (len(PAIR_EXTRA_DENSE) if spec.pair_extras else 0) \
                + (len(PAIR_COGNATE_DENSE) if spec.cognates else 0)
            net = HashedNgramNet(spec.buckets, spec.dim, bags, dense, spec.hidden or 64, 2)
        else:
            net = HashedNgramNet(spec.buckets, spec.dim, 1, 0, spec.hidden, len(labels))
        return cls(net, spec, task, labels)

    def save(self, directory: str | Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / CONFIG_FILE).write_text(json.dumps({**asdict(self.spec), "task": self.task,
                                                         "labels": self.labels}, indent=2))
        save_file({k: v.contiguous() for k, v in self.net.state_dict().items()}, str(directory / WEIGHTS_FILE))

    @classmethod
    def load(cls, directory: str | Path, metadata: dict | None = None) -> NgramUrlModel:
        directory = Path(directory)
        config = json.loads((directory / CONFIG_FILE).read_text())
        task, labels = config.pop("task"), config.pop("labels")
        model = cls.create(task, labels, NgramSpec(**config))
        model.net.load_state_dict(load_file(str(directory / WEIGHTS_FILE)))
        model.net.eval()
        model.metadata = metadata or {}
        return model

    # ---- inputs ----------------------------------------------------------------------
    def url_inputs(self, urls: list[str]):
        """Network inputs for a batch of raw URLs (url2lang)."""
        batch = featurize(_normalised(urls, self.spec), self.spec)
        return [(torch.from_numpy(batch.buckets), torch.from_numpy(batch.offsets))], None

    def pair_inputs(self, src_urls: list[str], trg_urls: list[str]):
        """Network inputs for a batch of raw URL pairs."""
        (src_unique, src_index), (trg_unique, trg_index) = _unique_positions(src_urls), _unique_positions(trg_urls)
        bags, dense = indexed_pair_features(_normalised(src_unique, self.spec), _normalised(trg_unique, self.spec),
                                            src_index, trg_index, self.spec)
        return [tuple(torch.from_numpy(part) for part in bag) for bag in bags], torch.from_numpy(dense)

    def inputs(self, examples: dict, indices: np.ndarray):
        """Network inputs for the rows `indices` of a training frame (columns url or src_url, trg_url)."""
        if self.task == "pairs":
            return self.pair_inputs([examples["src_url"][i] for i in indices], [examples["trg_url"][i] for i in indices])
        return self.url_inputs([examples["url"][i] for i in indices])

    # ---- prediction ------------------------------------------------------------------
    def _probabilities(self, make_inputs, total: int) -> np.ndarray:
        outputs = []
        with torch.inference_mode():
            for start in range(0, total, self.batch_size):
                bags, dense = make_inputs(start, min(start + self.batch_size, total))
                outputs.append(torch.softmax(self.net(bags, dense).double(), dim=-1).numpy())
        width = 2 if self.task == "pairs" else len(self.labels)
        return np.concatenate(outputs) if outputs else np.zeros((0, width), dtype=np.float32)

    def _lang_probabilities(self, urls: list[str]) -> np.ndarray:
        return self._probabilities(lambda a, b: self.url_inputs(urls[a:b]), len(urls))

    def _pair_probabilities(self, src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
        return self._probabilities(lambda a, b: self.pair_inputs(src_urls[a:b], trg_urls[a:b]), len(src_urls))


class HashedNgramNet(nn.Module):
    """EmbeddingBag(mean) over each bag, concatenated with dense features, then [ReLU hidden] + linear."""

    def __init__(self, buckets: int, dim: int, bags: int, dense: int, hidden: int, outputs: int,
                 dropout: float = 0.1):
        super().__init__()
        self.embedding = nn.EmbeddingBag(buckets, dim, mode="mean")
        nn.init.uniform_(self.embedding.weight, -1.0 / dim, 1.0 / dim)
        width = bags * dim + dense
        self.dropout = nn.Dropout(dropout)
        self.hidden = nn.Linear(width, hidden) if hidden else None
        self.output = nn.Linear(hidden or width, outputs)
        self.dense = dense

    def forward(self, bags: list[tuple[torch.Tensor, ...]], dense: torch.Tensor | None = None,
                rows: torch.Tensor | None = None) -> torch.Tensor:
        """Logits; `rows` (training) replaces the embedding table by a gathered subset the indices point into."""
        if rows is None:
            parts = [self.embedding(bag[0], bag[1]) for bag in bags]
        else:
            parts = [nn.functional.embedding_bag(bag[0], rows, bag[1], mode="mean") for bag in bags]
        # a bag of distinct URLs carries a third element: the URL of each example
        parts = [part[bag[2]] if len(bag) > 2 else part for part, bag in zip(parts, bags)]
        if self.dense:
            parts.append(dense)
        features = self.dropout(torch.cat(parts, dim=1) if len(parts) > 1 else parts[0])
        if self.hidden is not None:
            features = torch.relu(self.hidden(features))
        return self.output(features)
