"""The many-pairs pipeline on a generated sample archive (scan-cdx to shortlist, one run per language pair), as
tests/pipeline/test_many_pairs_pipeline.py checks it and bench_many_pairs times it."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

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
from testkit.jobs import run_job

REPO = Path(__file__).resolve().parents[1]
BIBLE = REPO / "conf" / "parallel-text" / "bible"  # English, French, German and Spanish, bundled
ARCHIVE_LANGS = "eng,fra,deu,spa"


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
