"""The whole pipeline (`parascout demo`) on a tiny sample archive in Spark's local-cluster
mode — separate executor JVMs, no shared driver state — then every notebook executed on
its output."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from parascout.jobs.demo import VERIFIED
from parascout.udfs.common.demo_report import produced
from parascout.udfs.common.table_layout import table_location

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
STEPS = ["make-sample-archive", "scan-cdx", "bucket-handles", "train-url2lang", "train-pairs", "fetch-docs",
         "rank-pairs", "verify-pairs", "export-bitext", "shortlist", "replay-crawl", "export-crawl-plan"]

MODEL_DIRS = {"train-url2lang": "models/url2lang", "train-pairs": "models/pairs"}  # their reports live there

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    command = [sys.executable, "-m", "parascout.jobs.cli", "demo", "--out", str(root), "--hosts", "8", "--seed", "3",
               "--pages-per-host", "40", "--train-hosts", "16", "--train-minutes", "0.3",
               "--spark-conf", "spark.master=local-cluster[2,1,1024]",
               "--spark-conf", "spark.sql.shuffle.partitions=4"]
    completed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False)
    assert completed.returncode == 0, completed.stderr[-4000:]
    (root / "demo.log").write_text(completed.stderr)
    return root


def test_every_step_ran_and_balanced(demo_root):
    report = json.loads((demo_root / "_reports" / "demo.json").read_text())
    assert report["status"] == "ok"
    ran = [step["job"] for step in report["metrics"]["steps"]]
    assert all(step in ran for step in STEPS)
    for name in STEPS[1:]:
        folder = demo_root / MODEL_DIRS.get(name, "")
        step_report = json.loads((folder / "_reports" / f"{name}.json").read_text())
        assert step_report["status"] == "ok", name
        assert step_report.get("balanced", True), (name, step_report)
    for table in ("urls", "hosts", "candidates", "scored_pairs", "alignment", "docs", "verified_pairs",
                  "shortlist", "replay_summary", "replay_curves"):
        assert (demo_root / table / "_manifest.json").exists(), table
    ranking = json.loads((demo_root / "_reports" / "rank-pairs.json").read_text())["metrics"]
    assert ranking["candidates_per_source"].get("link", 0) > 0  # docs were there: switcher links took part


def test_every_planned_site_replays_and_its_plan_covers_its_hosts_and_languages(demo_root):
    """A site is every host of its domain: the replay finds its pairs (the oracle above 0%) even where its languages
    live on sibling hosts, and its crawl plan names every host holding a true pair and an entry point in each
    language."""
    summary = pd.read_parquet(table_location(str(demo_root / "replay_summary")))
    plan = pd.read_parquet(table_location(str(demo_root / "crawl_plan")))
    truth = pd.read_parquet(demo_root / "archive" / "truth" / "pairs.parquet")
    docs = pd.read_parquet(table_location(str(demo_root / "docs")), columns=["url", "cld2_lang"])
    language = dict(zip(docs["url"], docs["cld2_lang"]))
    oracle = summary[summary["policy"] == "oracle"].set_index("site")["recall"]
    assert len(plan) and (oracle[plan["replay_site"]] > 0).all()
    multi_host = 0
    for row in plan.itertuples():
        hosts = set((demo_root / row.folder / "hosts.txt").read_text().split())
        seeds = (demo_root / row.folder / "seeds.txt").read_text().split()
        site_truth = truth[truth["src_url"].str.contains(f"[/.]{re.escape(row.replay_site)}/", regex=True)]
        truth_hosts = {url.split("/")[2] for url in [*site_truth["src_url"], *site_truth["trg_url"]]}
        assert truth_hosts <= hosts, row.site
        assert truth_hosts <= {url.split("/")[2] for url in seeds}, row.site  # an entry point on every host
        assert {"eng", "fra"} <= {language.get(url) for url in seeds}, row.site  # and in each language
        multi_host += len(truth_hosts) > 1
    assert multi_host  # the sample archive puts some sites' languages on subdomains


def test_executors_were_separate_jvms(demo_root):
    scan = json.loads((demo_root / "_reports" / "scan-cdx.json").read_text())
    assert scan["metrics"].get("spark_master", "").startswith("local-cluster")


def test_demo_report_and_plots(demo_root):
    text = (demo_root / "report.md").read_text()
    sections = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert sections[0] == "Which sites to crawl first" and sections[-2:] == ["Steps", "Next: your own data"], sections
    shortlist = pd.read_parquet(table_location(str(demo_root / "shortlist")))
    assert len(shortlist) > 0 and shortlist["bitext_sentence_pairs"].sum() > 0
    first = shortlist.sort_values("rank").iloc[0]
    assert (f"| 1 | {first.site} | {first.n_urls_src:,} | {first.n_urls_trg:,} | {first.predicted_pairs:,} | "
            f"{first.bitext_documents:,} | {first.bitext_sentence_pairs:,} | {first.bitext_words_src:,} | "
            f"{first.bitext_words_trg:,} |") in text
    demo = json.loads((demo_root / "_reports" / "demo.json").read_text())["metrics"]
    quality = demo["quality"]
    assert quality[VERIFIED]["gold"] > 0 and all(0 <= scores["precision"] <= 1 for scores in quality.values())
    verified = quality[VERIFIED]
    assert (f"{verified['correct']:,} of its {verified['predicted']:,} pairs are true (precision "
            f"{verified['precision']:.0%}), {verified['recall']:.0%} of the true pairs found") in text
    assert "| 2 | make-sample-archive | the training archive: 16 other hosts" in text
    for step in demo["steps"]:  # the report's seconds are the job's own, the 'done in' of its log line
        assert step["seconds"] >= 0 and f"| {step['job']} |" in text
    assert "nan" not in text.lower() and not re.search(r"\d\.\d{4,}", text), "unrounded or nan numbers"
    # the demo's closing line sums what the pipeline produced (not the demo's own step counts)
    closing = [line for line in (demo_root / "demo.log").read_text().splitlines() if "parascout.demo:" in line][-1]
    assert re.search(r"demo done in [\d.]+s: \d+ steps ran or were reused; ", closing), closing
    assert closing.endswith(f"; {produced(demo['steps'])}; report: {demo_root / 'report.md'}"), closing
    assert "replay/yield_curves.png" in text and (demo_root / "report.html").stat().st_size > 1000
    for plot in ("yield_curves.png", "deciles.png", "prediction.png"):
        assert (demo_root / "replay" / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", plot


def test_rerun_reuses_finished_steps(demo_root):
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    command = [sys.executable, "-m", "parascout.jobs.cli", "demo", "--out", str(demo_root), "--hosts", "8", "--seed", "3",
               "--pages-per-host", "40", "--train-hosts", "16", "--train-minutes", "0.3",
               "--spark-conf", "spark.sql.shuffle.partitions=4"]  # the demo reruns, every step it finished is reused
    completed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert completed.returncode == 0, completed.stderr[-4000:]
    report = json.loads((demo_root / "_reports" / "demo.json").read_text())
    assert all(step["reused"] for step in report["metrics"]["steps"])


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.name for n in NOTEBOOKS])
def test_notebook_runs(demo_root, notebook, tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("PARASCOUT_ROOT", str(demo_root))
    monkeypatch.setenv("PARASCOUT_FIGURES", str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()
    assert list(tmp_path.glob("*.png")), "the notebook saved no figure"
