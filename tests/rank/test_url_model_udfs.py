"""The URL models as pandas UDFs (Iterator form) in the shared local Spark session."""
import numpy as np
import pandas as pd
import pytest
import torch

from parascout.udfs.rank.url_models import load_model
from parascout.udfs.rank.url_models.model_dir import write_model_dir
from parascout.udfs.rank.url_models.spark_udfs import (
    lang_probabilities,
    lang_probability_udf,
    parallel_probabilities,
    parallel_probability_udf,
    task_cpus,
    url_language_udf,
    url_languages,
)
from parascout.udfs.rank.url_models.training import train_model
from parascout.udfs.rank.url_models.training_data import split_by_host
from tests.support.url_models import synthetic_language_urls, tiny_ngram_config, tiny_transformer_config

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    """An n-gram url2lang, a transformer url2lang and an n-gram pairs model, trained small and saved."""
    root = tmp_path_factory.mktemp("url-models")
    frame = synthetic_language_urls(hosts=30, per_host=20)
    frame["split"] = split_by_host(frame["host"], 0.2, 0.2).to_numpy()
    dirs = {}
    for name, config in (("ngram", tiny_ngram_config()), ("transformer", tiny_transformer_config(max_epochs=1))):
        dirs[name] = write_model_dir(train_model("url2lang", frame, config, {}), str(root / name))
    english = frame[frame["lang"] == "eng"]["url"].tolist()
    french = frame[frame["lang"] == "fra"]["url"].tolist()
    pairs = pd.DataFrame({"src_url": english[:100], "trg_url": [u.replace("o", "0") for u in english[:100]],
                          "label": 1, "split": "train"})
    pairs = pd.concat([pairs, pd.DataFrame({"src_url": english[:100], "trg_url": french[:100], "label": 0,
                                            "split": "train"})], ignore_index=True)
    pairs = pd.concat([pairs, pairs.assign(split="dev")], ignore_index=True).assign(source="synthetic")
    dirs["pairs"] = write_model_dir(train_model("pairs", pairs, tiny_ngram_config(), {}), str(root / "pairs"))
    return dirs


@pytest.fixture(scope="module")
def url_frame() -> pd.DataFrame:
    urls = ["http://new.org/fr/produits/histoire", "https://de.example.com/nachrichten/bericht", None,
            "http://www.site.com/news/report.php?lang=en"] * 25
    return pd.DataFrame({"id": range(len(urls)), "url": urls})


def test_batch_functions_keep_nulls_and_order(model_dirs, url_frame):
    model = load_model(model_dirs["ngram"])
    p_french = lang_probabilities(model, url_frame["url"], "fra")
    assert p_french.isna().sum() == 25 and p_french.index.equals(url_frame.index)
    assert lang_probabilities(model, url_frame["url"], "isl").dropna().eq(0).all()   # a label the model lacks
    labels = url_languages(model, url_frame["url"])
    assert labels[:4].tolist() == ["fra", "deu", None, "eng"]


@pytest.mark.slow
def test_language_udfs_match_direct_predictions(spark, model_dirs, url_frame):
    df = spark.createDataFrame(url_frame).repartition(2)
    rows = (df.select("id", "url",
                      lang_probability_udf(model_dirs["ngram"], "fr")("url").alias("p_fra"),
                      lang_probability_udf(model_dirs["ngram"], "unk")("url").alias("p_unk"),
                      url_language_udf(model_dirs["ngram"])("url").alias("language"),
                      lang_probability_udf(model_dirs["transformer"], "fra", quantize=True)("url").alias("t_fra"))
            .toPandas().sort_values("id", ignore_index=True))
    present = url_frame["url"].notna().to_numpy()
    for column, backend, tolerance in (("p_fra", "ngram", 1e-9), ("t_fra", "transformer", 0.15)):
        direct = load_model(model_dirs[backend]).predict_lang(url_frame["url"].dropna().tolist())
        assert np.allclose(rows.loc[present, column].to_numpy(), direct["fra"].to_numpy(), atol=tolerance)
        assert rows.loc[~present, column].isna().all()
    assert (rows.loc[present, "p_unk"] == 0).all()
    assert rows["language"][:4].tolist() == ["fra", "deu", None, "eng"]


@pytest.mark.slow
def test_parallel_udf_scores_pairs(spark, model_dirs):
    frame = pd.DataFrame({"src_url": ["http://site1.com/en/news/report", "http://site1.com/en/news/report", None],
                          "trg_url": ["http://site1.c0m/en/news/rep0rt", "http://site1.com/fr/actualites", "http://x"]})
    rows = spark.createDataFrame(frame).select(
        parallel_probability_udf(model_dirs["pairs"])("src_url", "trg_url").alias("p")).toPandas()
    direct = parallel_probabilities(load_model(model_dirs["pairs"]), frame["src_url"], frame["trg_url"])
    assert np.allclose(rows["p"][:2], direct[:2]) and np.isnan(rows["p"][2])
    assert rows["p"][0] > 0.5 > rows["p"][1]


def test_udfs_pickle_small_and_import_light(model_dirs):
    from pyspark import cloudpickle

    for column_function in (lang_probability_udf(model_dirs["ngram"], "en"), url_language_udf(model_dirs["ngram"]),
                            parallel_probability_udf(model_dirs["pairs"])):
        payload = cloudpickle.dumps(column_function.func)
        assert len(payload) < 20_000                      # closes over a path and flags, never a model
    import subprocess
    import sys

    code = "import sys, udfs.rank.url_models.spark_udfs, udfs.rank.url_models; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False).stdout.strip() == "False"


def test_task_cpus_outside_spark_is_one(monkeypatch):
    monkeypatch.delenv("PARASCOUT_TASK_CPUS", raising=False)
    assert task_cpus() == 1
    monkeypatch.setenv("PARASCOUT_TASK_CPUS", "3")
    assert task_cpus() == 3
