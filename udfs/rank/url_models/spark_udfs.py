"""pandas UDFs over the URL models, in the Iterator[pd.Series] form so a model loads once per worker.

    from parascout.udfs.rank.url_models.spark_udfs import lang_probability_udf, parallel_probability_udf
    df.withColumn("p_trg_lang", lang_probability_udf(model_dir, "is")("trg_url"))
      .withColumn("p_parallel", parallel_probability_udf(pairs_dir)("src_url", "trg_url"))

Each Python worker loads the model through load_model's per-process cache (a reused
worker pays once), sets torch threads to the task's cores (spark.task.cpus, default 1),
optionally quantises a transformer to int8 on CPU, and uses CUDA when present. Null URLs
give null results. This module imports neither torch nor the models until a UDF runs, and
the UDFs close over plain strings and flags only, so they pickle to any executor.
"""
# No `from __future__ import annotations`: pandas_udf reads these type hints at definition time.
import os
from collections.abc import Iterator

import numpy as np
import pandas as pd


def task_cpus() -> int:
    """Cores of the running Spark task (spark.task.cpus), 1 outside a task."""
    try:
        from pyspark import TaskContext

        context = TaskContext.get()
        if context is not None:
            return max(1, int(context.cpus()))
    except (ImportError, AttributeError, TypeError, ValueError):
        pass
    return max(1, int(os.environ.get("PARASCOUT_TASK_CPUS", "1")))


def worker_model(model_dir: str, quantize: bool = False):
    """The model for this worker: threads bounded by the task's cores, loaded once (load_model's cache)."""
    import torch

    from parascout.udfs.rank.url_models import load_model

    torch.set_num_threads(task_cpus())
    return load_model(model_dir, quantize=quantize)


def _language_label(lang: str) -> str:
    from parascout.udfs.common.langs import to_iso639_3

    return "unk" if lang == "unk" else to_iso639_3(lang)


# ---- pure batch functions (pandas in, pandas out) -------------------------------------------
def lang_probabilities(model, urls: pd.Series, label: str) -> pd.Series:
    """P(url is in `label`) per URL; null where the URL is null; 0 for a label the model lacks."""
    result = pd.Series(np.nan, index=urls.index, dtype="float64")
    present = urls.notna().to_numpy()
    if present.any():
        frame = model.predict_lang(urls[present].astype(str).tolist())
        result[present] = frame[label].to_numpy() if label in frame else 0.0
    return result


def url_languages(model, urls: pd.Series) -> pd.Series:
    """The most probable label per URL (an ISO 639-3 code or 'unk'); null where the URL is null."""
    result = pd.Series([None] * len(urls), index=urls.index, dtype="object")
    present = urls.notna().to_numpy()
    if present.any():
        frame = model.predict_lang(urls[present].astype(str).tolist())
        result[present] = frame.idxmax(axis=1).to_numpy()
    return result


def parallel_probabilities(model, src_urls: pd.Series, trg_urls: pd.Series) -> pd.Series:
    """P(parallel) per URL pair; null where either URL is null."""
    result = pd.Series(np.nan, index=src_urls.index, dtype="float64")
    present = (src_urls.notna() & trg_urls.notna()).to_numpy()
    if present.any():
        result[present] = model.predict_parallel(src_urls[present].astype(str).tolist(),
                                                 trg_urls[present].astype(str).tolist())
    return result


# ---- the UDF factories ------------------------------------------------------------------------
def lang_probability_udf(model_dir: str, lang: str, quantize: bool = False):
    """Column function url -> P(url's document is in `lang`) (ISO 639-1/3 code or 'unk')."""
    from pyspark.sql.functions import pandas_udf

    label = _language_label(lang)

    @pandas_udf("double")
    def p_lang(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        model = worker_model(model_dir, quantize)
        for urls in batches:
            yield lang_probabilities(model, urls, label)

    return p_lang


def url_language_udf(model_dir: str, quantize: bool = False):
    """Column function url -> the most probable language label."""
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("string")
    def url_language(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        model = worker_model(model_dir, quantize)
        for urls in batches:
            yield url_languages(model, urls)

    return url_language


def parallel_probability_udf(model_dir: str, quantize: bool = False):
    """Column function (src_url, trg_url) -> P(the two URLs are translations of each other)."""
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("double")
    def p_parallel(batches: Iterator[tuple[pd.Series, pd.Series]]) -> Iterator[pd.Series]:
        model = worker_model(model_dir, quantize)
        for src_urls, trg_urls in batches:
            yield parallel_probabilities(model, src_urls, trg_urls)

    return p_parallel
