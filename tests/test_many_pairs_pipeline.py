"""Three language pairs in one run of the whole pipeline (scan-cdx to shortlist, --langs en:fr,de,es) on a small
real-text sample archive (the bundled Bible text), in the shared Spark session. The helpers here also drive
benchmarks/bench_many_pairs.py, which compares the run's cost and output with one-pair runs."""
from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from parascout.jobs.base import Job
from parascout.jobs.bucket_handles import BucketHandlesJob
from parascout.jobs.export_bitext import ExportBitextJob
from parascout.jobs.fetch_docs import FetchDocsJob
from parascout.jobs.rank_pairs import RankPairs
from parascout.jobs.scan_cdx import ScanCdx
from parascout.jobs.shortlist import ShortlistJob
from parascout.jobs.train_lexicon import TrainLexiconJob
from parascout.jobs.verify_pairs import VerifyPairsJob
from parascout.udfs.common.table_layout import table_location
from parascout.udfs.sample_archive import generate
from tests.conftest import run_job

REPO = Path(__file__).resolve().parent.parent
BIBLE = REPO / "conf" / "parallel-text" / "bible"  # English, French, German and Spanish, bundled
ARCHIVE_LANGS = "eng,fra,deu,spa"
THREE_PAIRS = "en:fr,de,es"
#: 8 hosts of seed 2 hold each English pair on 3-4 hosts (the smallest archive that does at 30 pages a host)
SMALL_ARCHIVE = {"hosts": 8, "seed": 2, "pages_per_host": 30}


def make_archive(out: Path, hosts: int, seed: int, pages_per_host: int, cdx_only: bool = False) -> Path:
    """A sample archive of Bible-text pages in English, French, German and Spanish (make-sample-archive)."""
    generate(str(out), hosts=hosts, seed=seed, pages_per_host=pages_per_host, langs=ARCHIVE_LANGS,
             text_corpus=str(BIBLE), cdx_only=cdx_only, progress=False, verbose=False, workers=1)
    return out


def train_url_models(training_archive: Path, out: Path) -> dict[str, str]:
    """n-gram url2lang and pair models trained on another archive's truth (its pages and translation pairs)."""
    from parascout.udfs.rank.url_models import model_dir, training, training_data

    pages = pd.read_parquet(training_archive / "truth" / "pages.parquet")[["url", "host", "lang"]]
    pages["split"] = training_data.split_by_host(pages["host"], 0.2, 0.0).to_numpy()
    pairs = pd.read_parquet(training_archive / "truth" / "pairs.parquet").assign(label=1)
    config = training.TrainingConfig(backend="ngram", max_epochs=3, buckets=1 << 14, dim=16, seed=0)
    models = {"lang": str(out / "url2lang"), "pairs": str(out / "pairs")}
    for task, frame, path in (("url2lang", pages, models["lang"]),
                              ("pairs", training_data.pair_examples(pairs, dev_fraction=0.2, test_fraction=0.0),
                               models["pairs"])):
        model_dir.write_model_dir(training.train_model(task, frame, config, {"source": "sample archive truth"}), path)
    return models


def pipeline_steps(root: Path, archive: Path, models: dict[str, str], langs: str) -> list[tuple[type[Job], list[str]]]:
    """The pipeline of docs/many-pairs.md over one root, as (job, arguments)."""
    lexicons = str(root / "lexicons")
    return [
        (ScanCdx, ["--root", str(root), "--cdx", str(archive / "indexes"), "--langs", langs]),
        (BucketHandlesJob, ["--root", str(root), "--langs", langs]),
        # every page of the kept sites: rank-pairs proposes pairs beyond bucket-handles' candidates
        (FetchDocsJob, ["--root", str(root), "--warc-prefix", f"{archive}/", "--select", "all"]),
        (RankPairs, ["--root", str(root), "--langs", langs, "--lang-model", models["lang"],
                     "--pair-model", models["pairs"]]),
        (TrainLexiconJob, ["--langs", langs, "--out", lexicons, "--from-archive", str(root)]),
        (VerifyPairsJob, ["--root", str(root), "--langs", langs, "--lexicon", lexicons]),
        (ExportBitextJob, ["--root", str(root), "--langs", langs, "--lexicon", lexicons]),
        (ShortlistJob, ["--root", str(root), "--langs", langs]),
    ]


def run_pipeline(spark, root: Path, archive: Path, models: dict[str, str], langs: str,
                 progress: Callable[[str], None] | None = None) -> dict[str, dict]:
    """Every step in the one session; the reports by job name."""
    reports = {}
    for job_class, argv in pipeline_steps(root, archive, models, langs):
        if progress:
            progress(f"{job_class.name} --langs {langs}")
        reports[job_class.name] = run_job(job_class, spark, argv + ["--log-level", "WARNING"])
    return reports


def pair_counts(spark, root: Path) -> dict[str, dict[str, int]]:
    """Per lang_pair: parallel verified pairs and exported sentence pairs (bitext_sentences rows without a reason)."""
    from pyspark.sql import functions as F

    verified = spark.read.parquet(table_location(str(root / "verified_pairs"))).where(F.col("parallel"))
    sentences = spark.read.parquet(table_location(str(root / "bitext_sentences"))).where(F.col("reason").isNull())
    counts: dict[str, dict[str, int]] = {}
    for name, frame in (("verified_pairs", verified), ("sentence_pairs", sentences)):
        for row in frame.groupBy("lang_pair").count().collect():
            counts.setdefault(row["lang_pair"], {})[name] = int(row["count"])
    return counts


@pytest.fixture(scope="module")
def three_pair_run(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("many-pairs")
    archive = make_archive(base / "archive", **SMALL_ARCHIVE)
    training = make_archive(base / "training", hosts=8, seed=1002, pages_per_host=30, cdx_only=True)
    models = train_url_models(training, base / "models")
    reports = run_pipeline(spark, base / "root", archive, models, THREE_PAIRS)
    return base / "root", reports


@pytest.mark.slow
def test_three_pairs_in_one_run_each_have_verified_pairs_and_bitext(spark, three_pair_run):
    root, reports = three_pair_run
    labels = ["eng-fra", "eng-deu", "eng-spa"]
    for name, report in reports.items():
        assert report["status"] == "ok" and report.get("balanced", True), name
        assert not report["metrics"].get("pairs_skipped"), (name, report["metrics"].get("pairs_skipped"))
    for name in ("bucket-handles", "rank-pairs", "train-lexicon", "export-bitext", "shortlist"):
        assert reports[name]["metrics"]["lang_pairs"] == labels, name
    assert sorted(path.name for path in (root / "lexicons").iterdir() if not path.name.startswith("_")) == sorted(labels)
    counts = pair_counts(spark, root)
    for label in labels:
        assert counts[label]["verified_pairs"] > 0 and counts[label]["sentence_pairs"] > 0, (label, counts)
        assert (root / "bitext" / f"{label}.sent.gz").stat().st_size > 0
    exported = reports["export-bitext"]["metrics"]["by_pair"]
    assert all(exported[label]["sentence_pairs"] == counts[label]["sentence_pairs"] for label in labels)
    shortlist = reports["shortlist"]["metrics"]["by_pair"]
    assert all(shortlist[label]["bitext_sentence_pairs"] > 0 for label in labels)
    scored = pd.read_parquet(table_location(str(root / "scored_pairs")), columns=["src_lang", "trg_lang", "lang_pair"])
    assert set(scored["lang_pair"].astype(str)) == set(labels)
    assert np.all(scored["src_lang"].astype(str) + "-" + scored["trg_lang"].astype(str) == scored["lang_pair"].astype(str))


@pytest.mark.slow
def test_rank_pairs_ranks_each_pair_into_its_partition(spark, three_pair_run):
    root, reports = three_pair_run
    ranking = reports["rank-pairs"]
    by_pair = ranking["by_pair"]
    assert set(by_pair) == {"eng-fra", "eng-deu", "eng-spa"}
    assert all(counts["status"] == "ok" and counts["kept"] > 0 for counts in by_pair.values())
    assert ranking["kept"] == sum(counts["kept"] for counts in by_pair.values())
    hosts = pd.read_parquet(table_location(str(root / "rank_hosts")))
    for label, group in hosts.groupby(hosts["lang_pair"].astype(str)):
        assert set(group["src_lang"].astype(str) + "-" + group["trg_lang"].astype(str)) == {label}


@pytest.mark.slow
def test_rank_pairs_ranks_each_pair_of_the_one_pass_as_a_run_of_that_pair_alone(spark, three_pair_run, tmp_path):
    root, _ = three_pair_run
    alone = tmp_path / "alone"
    shutil.copytree(root, alone, ignore=shutil.ignore_patterns("_locks", "_reports"))
    models = root.parent / "models"
    run_job(RankPairs, spark, ["--root", str(alone), "--langs", "en,de", "--lang-model", str(models / "url2lang"),
                               "--pair-model", str(models / "pairs"), "--log-level", "WARNING"])
    for table in ("scored_pairs", "alignment", "rank_hosts"):
        frames = []
        for where in (root, alone):
            frame = pd.read_parquet(table_location(str(where / table)))
            frame = frame[frame["lang_pair"].astype(str) == "eng-deu"].drop(columns="lang_pair")
            frames.append(frame.sort_values(list(frame.columns[:4])).reset_index(drop=True))
        assert len(frames[0]) > 0, table
        pd.testing.assert_frame_equal(frames[0], frames[1], check_dtype=False)
