"""The cost of many language pairs in one run: the pipeline for en-fr alone, for en:fr,de,es in one run, and for the
three pairs one run after the other, on one Bible-text sample archive, in one Spark session.

    .venv/bin/python benchmarks/bench_many_pairs.py [--hosts 8] [--seed 2] [--pages-per-host 30]
        [--work /tmp/bench-many-pairs] [--no-warmup]

The pipeline is docs/many-pairs.md's: scan-cdx, bucket-handles, fetch-docs, rank-pairs, train-lexicon --from-archive,
verify-pairs, export-bitext, shortlist (tests/pipeline/test_many_pairs_pipeline.py drives it), each run into a fresh root.
CPU seconds are this process's plus the Spark JVM's and its Python workers' (bench_scan_cdx.cpu_seconds), steadier
than wall time on a shared machine. Prints the ratios b/a (three pairs in one run / en-fr alone; the target is at
most 1.6) and c/a (three one-pair runs / en-fr alone), each job's CPU in each run, and per pair the parallel verified
pairs and exported sentence pairs of its one-pair run beside the three-pair run's (they should be equal). The URL
models are trained once, before any timing, on a second archive (other hosts); an untimed en-fr run warms the JVM up,
and (a) is the mean of the en-fr run and (c)'s en-fr run.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_scan_cdx import cpu_seconds
from testkit.pipeline import make_archive, pair_counts, run_pipeline, train_url_models

PIVOT, TARGETS = "en", ("fr", "de", "es")
LABELS = {"fr": "eng-fra", "de": "eng-deu", "es": "eng-spa"}


def total_cpu() -> float:
    """CPU seconds of this process (the driver's Python) and of its children (the JVM, the Python workers)."""
    return time.process_time() + cpu_seconds()


class Timer:
    """Runs pipelines into fresh roots under `work` and measures each one's CPU seconds, job by job."""

    def __init__(self, spark, work: Path, archive: Path, models: dict[str, str]):
        self.spark, self.work, self.archive, self.models = spark, work, archive, models
        self.started = time.monotonic()

    def progress(self, line: str) -> None:
        print(f"  [{time.monotonic() - self.started:6.0f}s] {line}", flush=True)

    def run(self, name: str, langs: str) -> tuple[float, dict[str, float], Path]:
        """(CPU seconds of the pipeline, CPU seconds per job, its root)."""
        root = self.work / "roots" / name
        shutil.rmtree(root, ignore_errors=True)
        per_job: dict[str, float] = {}
        last = [total_cpu(), None]

        def step(line: str) -> None:
            now = total_cpu()
            if last[1]:
                per_job[last[1]] = now - last[0]
            last[0], last[1] = now, line.split(" ", 1)[0]
            self.progress(f"{name}: {line}")
        begun = total_cpu()
        run_pipeline(self.spark, root, self.archive, self.models, langs, progress=step)
        ended = total_cpu()
        per_job[last[1]] = ended - last[0]
        self.progress(f"{name}: {ended - begun:.1f} CPU s")
        return ended - begun, per_job, root


def build_session(master: str):
    import os

    from pyspark.sql import SparkSession

    from parascout.jobs.spark_session import local_spark_defaults

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder
    for key, value in local_spark_defaults().items():  # what a local job runs with
        builder = builder.config(key, value)
    spark = (builder.master(master).appName("bench-many-pairs").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--pages-per-host", type=int, default=30)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--work", default="/tmp/bench-many-pairs")
    parser.add_argument("--no-warmup", action="store_true", help="no untimed en-fr run first")
    args = parser.parse_args(argv)

    work = Path(args.work)
    print(f"archive: {args.hosts} hosts, seed {args.seed}, {args.pages_per_host} pages a host (Bible text, en/fr/de/es)",
          flush=True)
    archive = make_archive(work / "archive", args.hosts, args.seed, args.pages_per_host)
    training = make_archive(work / "training", args.hosts, args.seed + 1000, args.pages_per_host, cdx_only=True)
    models = train_url_models(training, work / "models")
    spark = build_session(args.master)
    timer = Timer(spark, work, archive, models)
    if not args.no_warmup:
        timer.run("warmup", f"{PIVOT},fr")
    single, single_jobs, single_root = timer.run("a-en-fr", f"{PIVOT},fr")
    many, many_jobs, many_root = timer.run("b-three", f"{PIVOT}:{','.join(TARGETS)}")
    one_by_one, roots, alone = 0.0, {}, {}
    for target in TARGETS:
        alone[target], _, roots[target] = timer.run(f"c-{PIVOT}-{target}", f"{PIVOT},{target}")
        one_by_one += alone[target]
    counts = {"many": pair_counts(spark, many_root)}
    counts.update({target: pair_counts(spark, root) for target, root in roots.items()})
    spark.stop()

    # (a) is the mean of its own run and (c)'s en-fr run, the same pipeline: a later run pays less JVM warm-up
    first = single
    single = (first + alone["fr"]) / 2
    print(f"\nCPU seconds (driver + JVM + Python workers), {args.master}:")
    print(f"  (a) en-fr alone            {single:8.1f}   (mean of {first:.1f} and {alone['fr']:.1f}, the en-fr run of c)")
    print(f"  (b) en:fr,de,es in one run {many:8.1f}   b/a = {many / single:.2f} (target <= 1.6)")
    print(f"  (c) the three one by one   {one_by_one:8.1f}   c/a = {one_by_one / single:.2f}   "
          f"({', '.join(f'en-{target} {seconds:.1f}' for target, seconds in alone.items())})")
    print("\nCPU seconds per job:   (a) en-fr, its first run   (b) three   b/a")
    for job, seconds in single_jobs.items():
        print(f"  {job:16s} {seconds:10.1f} {many_jobs.get(job, 0.0):10.1f} {many_jobs.get(job, 0.0) / seconds:6.2f}")
    print("\nper pair: one-pair run vs three-pair run   verified pairs   sentence pairs")
    equal = True
    for target in TARGETS:
        label = LABELS[target]
        alone = next(iter(counts[target].values()), {})
        together = counts["many"].get(label, {})
        same = alone == together
        equal &= same
        print(f"  {label}   {alone.get('verified_pairs', 0):6d} vs {together.get('verified_pairs', 0):6d}"
              f"   {alone.get('sentence_pairs', 0):6d} vs {together.get('sentence_pairs', 0):6d}"
              f"   {'equal' if same else 'DIFFERENT'}")
    print(f"\nsingle-pair (a) root: {single_root}; every pair's output {'equal' if equal else 'NOT equal'}")


if __name__ == "__main__":
    main()
