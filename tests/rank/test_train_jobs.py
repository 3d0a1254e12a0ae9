"""train-url2lang and train-pairs end to end: inputs, report counts, the model directory, reruns, errors."""
import json

import pandas as pd
import pytest

from parascout.jobs.cli import discover
from parascout.jobs.errors import ConfigError
from parascout.jobs.train_pairs import TrainPairsJob
from parascout.jobs.train_url2lang import TrainUrl2LangJob
from parascout.udfs.rank.url_models import load_model, read_metadata
from tests.support.url_models import synthetic_language_urls

FAST = ["--threads", "1", "--buckets", "4096", "--dim", "16", "--max-epochs", "4", "--batch-size", "64"]


def write_urls_table(root, frame: pd.DataFrame) -> None:
    table = root / "urls"
    table.mkdir(parents=True)
    frame.to_parquet(table / "part-00000.parquet", index=False)
    (table / "_SUCCESS").write_text("")


@pytest.fixture()
def urls_root(tmp_path):
    frame = synthetic_language_urls(hosts=40, per_host=20, seed=1)[["url", "lang"]]
    frame["host"] = frame["url"].str.split("/").str[2]
    extra = pd.DataFrame({
        "url": [None, "", "http://nolang.example/a", "http://nolang.example/b", frame["url"][0], "notaurl"],
        "host": [None, None, "nolang.example", "nolang.example", frame["host"][0], None],
        "lang": ["eng", "eng", None, "", frame["lang"][0], "fra"],
    })
    write_urls_table(tmp_path / "data", pd.concat([frame, extra], ignore_index=True))
    return tmp_path / "data", len(frame)


def test_jobs_are_discovered_by_the_cli():
    registry = discover()
    assert registry["train-url2lang"] is TrainUrl2LangJob and registry["train-pairs"] is TrainPairsJob


def test_train_url2lang_counts_every_row_and_writes_a_model_dir(urls_root, tmp_path, capsys):
    root, good = urls_root
    out = tmp_path / "model"
    report = TrainUrl2LangJob().run(["--urls", str(root), "--out", str(out), "--cap-per-language", "200", *FAST])
    assert report["status"] == "ok" and report["balanced"]
    assert report["inputs"] == {"urls": good + 6}
    assert report["bad"] == {"no_url": 2, "no_host": 1}
    assert report["filtered"]["no_language"] == 2 and report["filtered"]["duplicate_url"] == 1
    assert report["filtered"]["over_language_cap"] == good - 3 * 200
    assert report["kept"] == 600 and report["metrics"]["languages"] == 3
    assert report["metrics"]["test_macro_f1"] > 0.8
    assert json.loads((out / "_reports" / "train-url2lang.json").read_text())["status"] == "ok"
    metadata = read_metadata(out)
    assert metadata["labels"] == ["deu", "eng", "fra"] and metadata["data"]["cap_per_language"] == 200
    assert metadata["training"]["learning_rate"] == 0.02 and metadata["versions"]["torch"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["test"]["per_class"]) == {"deu", "eng", "fra"}
    console = capsys.readouterr().out
    assert "confusion (rows true" not in console and "report.txt" in console   # a line, not the tables
    assert len(console.splitlines()) <= 3
    report_text = (out / "report.txt").read_text()
    assert "url2lang test (held-out hosts)" in report_text and "confusion (rows true" in report_text
    frame = load_model(str(out)).predict_lang(["http://x.org/de/nachrichten/bericht"])
    assert frame.iloc[0].idxmax() == "deu"


def test_unknown_from_null_adds_an_unk_class(urls_root, tmp_path):
    root, _ = urls_root
    nulls = pd.DataFrame({"url": [f"http://misc{i}.example/page/{i}" for i in range(40)],
                          "host": [f"misc{i}.example" for i in range(40)], "lang": None})
    write_urls_table(tmp_path / "more", pd.concat([pd.read_parquet(root / "urls"), nulls], ignore_index=True))
    report = TrainUrl2LangJob().run(["--urls", str(tmp_path / "more" / "urls"), "--out", str(tmp_path / "m"),
                                     "--unknown-from-null", *FAST])
    assert report["balanced"] and "no_language" not in report["filtered"]
    assert "unk" in read_metadata(tmp_path / "m")["labels"]


def test_train_pairs_reads_the_wmt16_pair_file(shared_data, tmp_path):
    out = tmp_path / "pairs"
    argv = ["--positives", str(shared_data / "wmt16" / "train.pairs"), "--out", str(out), *FAST]
    report = TrainPairsJob().run(argv)
    assert report["status"] == "ok" and report["balanced"]
    assert report["inputs"] == {"pairs": 1624} and report["kept"] == 1624
    sources = report["metrics"]["examples_by_source"]["train"]
    assert set(sources) == {"positive", "random-mono", "random-bi", "jaccard-mono", "jaccard-bi", "remove-bi",
                            "neighbour-bi"}
    decided = read_metadata(out)
    assert 0 < decided["decision"]["min_score"] < 1 and decided["calibration"]["positives"] > 0
    assert report["metrics"]["test_macro_f1"] > 0.7
    metadata = read_metadata(out)
    assert metadata["task"] == "pairs" and metadata["labels"] == ["non-parallel", "parallel"]
    assert metadata["model_version"].endswith(metadata["data"]["fingerprint"][:8])
    model = load_model(str(out))
    p = model.predict_parallel(["http://tsb.gc.ca/eng/medias-media/x.asp", "http://tsb.gc.ca/eng/a/1.asp"],
                               ["http://tsb.gc.ca/fra/medias-media/x.asp", "http://tsb.gc.ca/fra/b/2/3.asp"])
    assert p[0] > 0.5 > p[1]
    assert TrainPairsJob().run(argv).get("skipped_rerun") is True          # same arguments: nothing to redo


def test_train_pairs_counts_bad_lines_and_uses_verified_negatives(tmp_path):
    lines = []
    for host in range(8):
        for i in range(6):
            lines.append(f"http://h{host}.com/en/p{i}.html\thttp://h{host}.com/fr/p{i}.html")
    lines += ["", "only-one-field", "http://a.com/x http://a.com/y http://a.com/z", lines[0], "x y",
              "http://same.com/a http://same.com/a"]
    pair_file = tmp_path / "pairs.txt"
    pair_file.write_text("\n".join(lines) + "\n")
    report = TrainPairsJob().run(["--positives", str(pair_file), "--out", str(tmp_path / "m"), "--src-lang", "en",
                                  "--trg-lang", "fr", "--negatives", "random-bi,remove-mono", *FAST])
    assert report["balanced"] and report["inputs"]["pairs"] == len(lines)
    assert report["bad"] == {"malformed_line": 3}
    assert report["filtered"] == {"blank_line": 1, "duplicate_pair": 1, "same_url": 1}
    assert report["args"]["src_lang"] == "eng"
    assert set(report["metrics"]["examples_by_source"]["train"]) == {"positive", "random-bi", "remove-mono"}

    verified = pd.DataFrame({"host": ["h1.com"] * 4 + ["h2.com"] * 4 + ["h3.com"] * 4,
                             "src_url": [f"http://h{h}.com/en/{i}" for h in (1, 2, 3) for i in range(4)],
                             "trg_url": [f"http://h{h}.com/fr/{i if i % 2 else i + 1}" for h in (1, 2, 3)
                                         for i in range(4)],
                             "parallel": [True, True, False, None] * 3})
    (tmp_path / "verified_pairs").mkdir()
    verified.to_parquet(tmp_path / "verified_pairs" / "part-0.parquet")
    report = TrainPairsJob().run(["--positives", str(tmp_path / "verified_pairs"), "--out", str(tmp_path / "v"),
                                  "--dev-fraction", "0.3", "--test-fraction", "0.3", *FAST])
    assert report["balanced"] and report["filtered"] == {"unverified": 3} and report["kept"] == 9
    by_source = pd.DataFrame(report["metrics"]["examples_by_source"]).fillna(0).sum(axis=1)
    assert by_source["verified_negative"] == 3 and by_source["positive"] == 6


def test_configuration_errors_say_what_to_fix(tmp_path):
    with pytest.raises(ConfigError, match="--base-model needs --backend transformer"):
        TrainPairsJob().run(["--positives", "x", "--out", str(tmp_path / "a"), "--base-model", "xlm-roberta-base"])
    with pytest.raises(ConfigError, match="unknown negative strategies"):
        TrainPairsJob().run(["--positives", "x", "--out", str(tmp_path / "b"), "--negatives", "random-x"])
    with pytest.raises(ConfigError, match="--src-lang"):
        TrainPairsJob().run(["--positives", "x", "--out", str(tmp_path / "c"), "--src-lang", "klingon"])
    with pytest.raises(ConfigError, match="--cap-per-language"):
        TrainUrl2LangJob().run(["--urls", "x", "--out", str(tmp_path / "d"), "--cap-per-language", "0"])
    with pytest.raises(ConfigError, match="--dev-fraction"):
        TrainUrl2LangJob().run(["--urls", "x", "--out", str(tmp_path / "e"), "--dev-fraction", "0.7",
                                "--test-fraction", "0.5"])


def test_out_must_be_a_model_directory_to_be_replaced(urls_root, tmp_path):
    root, _ = urls_root
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "precious.txt").write_text("keep me")
    with pytest.raises(ValueError, match="not a parascout model directory"):
        TrainUrl2LangJob().run(["--urls", str(root), "--out", str(taken), *FAST])
    assert (taken / "precious.txt").read_text() == "keep me"


@pytest.fixture()
def s3_endpoint(monkeypatch, tmp_path):
    """A real S3-compatible server (moto) on 127.0.0.1, with boto3 and pyarrow pointed at it."""
    from moto.server import ThreadedMotoServer

    from parascout.udfs.common import storage

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    endpoint = "http://{}:{}".format(*server.get_host_and_port())
    for key, value in {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                       "AWS_DEFAULT_REGION": "us-east-1", "PARASCOUT_MODEL_CACHE": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(key, value)
    storage.s3_client.cache_clear()
    storage.s3_client().create_bucket(Bucket="models")
    yield endpoint
    storage.s3_client.cache_clear()
    server.stop()


def test_model_dir_on_s3_is_written_and_loaded_through_a_local_cache(s3_endpoint, tmp_path):
    lines = [f"http://h{h}.com/en/p{i}.html http://h{h}.com/fr/p{i}.html" for h in range(8) for i in range(6)]
    (tmp_path / "pairs.txt").write_text("\n".join(lines))
    report = TrainPairsJob().run(["--positives", str(tmp_path / "pairs.txt"), "--out", "s3://models/pairs/v1", *FAST])
    assert report["status"] == "ok" and report["balanced"]
    from parascout.udfs.common import storage

    keys = {o["Key"] for o in storage.s3_client().list_objects_v2(Bucket="models")["Contents"]}
    assert {"pairs/v1/parascout_model.json", "pairs/v1/model.safetensors", "pairs/v1/metrics.json",
            "pairs/v1/_reports/train-pairs.json"} <= keys
    model = load_model("s3://models/pairs/v1")
    assert model is load_model("s3://models/pairs/v1") and model.task == "pairs"
    assert (tmp_path / "cache").is_dir() and any((tmp_path / "cache").iterdir())
    p = model.predict_parallel(["http://h1.com/en/p1.html"], ["http://h1.com/fr/p1.html"])
    assert 0.0 <= p[0] <= 1.0
