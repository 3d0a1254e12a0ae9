"""The pipeline's order comes from the jobs' declared inputs and outputs (jobs.pipeline), and every place that lists
the jobs in order (`parascout --help`, the demo's steps, docs/jobs/README.md, README's walk-through) lists that one."""
from __future__ import annotations

import re

import pytest

from parascout.jobs.base import Job
from parascout.jobs.cli import discover, usage
from parascout.jobs.demo import Demo
from parascout.jobs.pipeline import PipelineCycle, job_edges, pipeline_order
from tests.conftest import REPO


@pytest.fixture(scope="module")
def registry():
    return discover()


def test_each_job_comes_after_every_job_that_writes_what_it_reads(registry):
    order = pipeline_order(registry)
    assert sorted(order) == sorted(registry)
    for position, name in enumerate(order):
        for earlier_reader in order[:position]:
            assert not job_edges(registry[name]).writes & job_edges(registry[earlier_reader]).reads, \
                f"{earlier_reader} reads what {name} writes, yet comes first"
    # the order the data gives, not an alphabet: the scan before the handles, the pages before ranking, the models
    # before what uses them, verification before export
    for before, after in [("scan-cdx", "bucket-handles"), ("fetch-docs", "rank-pairs"), ("train-url2lang", "rank-pairs"),
                          ("rank-pairs", "train-lexicon"), ("train-lexicon", "verify-pairs"),
                          ("verify-pairs", "export-bitext"), ("export-bitext", "shortlist"),
                          ("replay-crawl", "export-crawl-plan")]:
        assert order.index(before) < order.index(after)


def test_help_the_demo_the_docs_and_the_readme_list_the_same_order(registry, tmp_path):
    order = pipeline_order(registry)
    listed = [line.split()[0] for line in usage(registry).split("jobs, in the pipeline's order:\n")[1]
              .split("\n\n")[0].splitlines()]
    assert listed == order
    demo = Demo()
    demo.args = demo.parse_arguments(["--out", str(tmp_path / "demo")])
    steps = [step.job for step in demo.steps()]
    assert steps == sorted(steps, key=order.index) and steps.count("make-sample-archive") == 2
    documented = re.findall(r"^\| \[([a-z0-9-]+)\]", (REPO / "docs" / "jobs" / "README.md").read_text(), re.MULTILINE)
    assert documented == order
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    walk = readme[readme.index("**1. Scan the index**"):readme.index("**11. Plan the crawl**") + 400]
    commands = list(dict.fromkeys(re.findall(r"^parascout ([a-z0-9-]+) ", walk, re.MULTILINE)))
    assert len(commands) >= 10 and commands == sorted(commands, key=order.index)


def fake_job(name: str, **declared) -> type[Job]:
    return type(name.title().replace("-", ""), (Job,), {"name": name, **declared})


def test_jobs_that_wait_on_each_other_fail_until_one_declares_a_later_input():
    fetch = fake_job("fetch", inputs=("urls",), optional_inputs=("pairs",), outputs=("docs",))
    rank = fake_job("rank", inputs=("urls",), optional_inputs=("docs",), outputs=("pairs",))
    scan = fake_job("scan", outputs=("urls",))
    with pytest.raises(PipelineCycle, match="fetch reads what rank write.*rank reads what fetch write"):
        pipeline_order({"fetch": fetch, "rank": rank, "scan": scan})
    fetch.later_inputs = ("pairs",)
    assert pipeline_order({"rank": rank, "fetch": fetch, "scan": scan, "idle": fake_job("idle")}) == \
        ["scan", "fetch", "rank", "idle"]
    trainer = fake_job("train", makes=("model",), path_artifacts={"corpus": ("docs",)}, input_paths=("corpus",))
    user = fake_job("use", model_paths=("model",), inputs=("urls",))
    assert pipeline_order({"use": user, "train": trainer, "fetch": fetch, "scan": scan, "rank": rank}) == \
        ["scan", "fetch", "rank", "train", "use"]
