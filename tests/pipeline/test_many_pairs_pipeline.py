"""Three language pairs in one run of the whole pipeline (scan-cdx to shortlist, --langs en:fr,de,es) on a small
real-text sample archive (the bundled Bible text), in the shared Spark session. The helpers here also drive
benchmarks/bench_many_pairs.py, which compares the run's cost and output with one-pair runs."""
from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from parascout.jobs.rank_pairs import RankPairs
from parascout.udfs.common.table_layout import table_location
from testkit.pipeline import make_archive, pair_counts, run_pipeline, train_url_models
from tests.conftest import run_job

THREE_PAIRS = "en:fr,de,es"
#: 8 hosts of seed 2 hold each English pair on 3-4 hosts (the smallest archive that does at 30 pages a host)
SMALL_ARCHIVE = {"hosts": 8, "seed": 2, "pages_per_host": 30}


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
