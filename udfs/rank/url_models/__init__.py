"""URL-only models (García-Romero et al.): language from a URL, parallelness from a URL pair.

One interface, two backends:

    model = load_model(path)                      # cached per process
    model.predict_lang(urls) -> pd.DataFrame      # url2lang: ISO 639-3 columns + 'unk', rows sum to 1
    model.predict_parallel(src, trg) -> ndarray   # pairs: P(parallel) per pair

`path` is a model directory written by `parascout train-url2lang` / `train-pairs` (its
parascout_model.json names the backend), a plain Hugging Face directory, an s3:// copy of
either (downloaded once to a local cache with boto3), or a hub id such as
xlm-roberta-base — hub ids and local directories go through the same from_pretrained.
Importing this package is light: torch and transformers load with the first model.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from parascout.udfs.rank.url_models.api import UrlModel

METADATA_FILE = "parascout_model.json"
METRICS_FILE = "metrics.json"
#: the dev and test tables (per class P/R/F1, confusion) as text, beside metrics.json
REPORT_FILE = "report.txt"
CACHE_ENV = "PARASCOUT_MODEL_CACHE"

__all__ = ["METADATA_FILE", "METRICS_FILE", "REPORT_FILE", "UrlModel", "load_model", "model_metadata", "read_metadata"]


def read_metadata(directory: str | Path) -> dict:
    """The parascout_model.json of a model directory ({} for a plain Hugging Face directory)."""
    path = Path(directory) / METADATA_FILE
    return json.loads(path.read_text()) if path.exists() else {}


def model_metadata(path: str) -> dict:
    """The parascout_model.json of a model at a local dir or s3:// prefix (cached copy); {} for a hub id."""
    local = _local_directory(str(path))
    return read_metadata(local) if local is not None else {}


@functools.lru_cache(maxsize=8)
def load_model(path: str, quantize: bool = False, device: str | None = None) -> UrlModel:
    """Load (once per process) the URL model at a local dir, s3:// prefix or hub id.

    quantize: dynamic int8 for transformer Linear layers on CPU; device: 'cpu' / 'cuda' (default: CUDA if present).
    """
    local = _local_directory(str(path))
    if local is None:
        from parascout.udfs.rank.url_models.transformer import TransformerUrlModel

        return TransformerUrlModel.from_pretrained(str(path), quantize=quantize, device=device)
    metadata = read_metadata(local)
    backend = metadata.get("backend") or ("transformer" if (local / "config.json").exists() else None)
    if backend == "ngram":
        from parascout.udfs.rank.url_models.ngram import NgramUrlModel

        return NgramUrlModel.load(local, metadata)
    if backend == "transformer":
        from parascout.udfs.rank.url_models.transformer import TransformerUrlModel

        return TransformerUrlModel.from_pretrained(
            str(local), task=metadata.get("task"), labels=metadata.get("labels"),
            max_length=metadata.get("max_length"), metadata=metadata, quantize=quantize, device=device)
    raise ValueError(f"{path}: not a URL model directory (no {METADATA_FILE} and no config.json); "
                     "train one with `parascout train-url2lang` or `parascout train-pairs`")


def _local_directory(path: str) -> Path | None:
    """A local directory for path: itself, a cached copy of an s3:// prefix, or None for a hub id."""
    if path.startswith(("s3://", "s3a://", "s3n://")):
        return _cached_s3_copy(path)
    local = Path(path.removeprefix("file://"))
    if local.is_dir():
        return local
    if local.exists() or path.startswith(("/", "./", "../")):
        raise ValueError(f"{path}: not a model directory")
    return None


def _cached_s3_copy(path: str) -> Path:
    """Download every object under an s3:// prefix once into the model cache (marked complete at the end)."""
    from parascout.udfs.common import storage

    root = Path(os.environ.get(CACHE_ENV, Path.home() / ".cache" / "parascout" / "models"))
    target = root / hashlib.sha256(path.rstrip("/").encode()).hexdigest()[:16]
    if (target / ".complete").exists():
        return target
    staging = target.with_name(target.name + f".tmp-{os.getpid()}")
    staging.mkdir(parents=True, exist_ok=True)
    if not storage.download_dir(path, staging):
        raise ValueError(f"{path}: no objects under this prefix")
    (staging / ".complete").write_text(path)
    if target.exists():
        import shutil

        shutil.rmtree(target)
    staging.rename(target)
    return target
