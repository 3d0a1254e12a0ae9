"""What a fetch-docs relaunched after a kill -9 costs, against an undisturbed run of the same selection.

    .venv/bin/python benchmarks/bench_fetch_resume.py [--files 40] [--pages 500] [--partitions 20] [--kill-at 0.8]
        [--repeats 3] [--task-cpu]

Generates `--files` WARC files of `--pages` HTML pages each (named so Spark's hash gives every fetch partition the
same number of files), served with HTTP Range by a local server that counts GETs. Then, each job in its own process
(local[2]): the baseline, a full run; a run SIGKILLed (with every process under it) once `--kill-at` of its fetch
tasks are kept in the resume area; the relaunch of that run. CPU seconds are the sum over the job's process tree
(driver, JVM, Python workers), sampled by psutil; with `--task-cpu`, `tasks` is the CPU of Spark's task threads
alone (the stages' executorCpuTime in each job's event log, whose writing adds to the tree's CPU): the JVM's work on
the rows, without Spark's start, the JIT compilers or the Python workers. Prints the relaunch's CPU seconds, wall
seconds and GETs as ratios of the full run's; the target is a relaunch at most 25% of a full run. A fourth run over
one record gives the job's fixed cost (Spark's start, its stages and writes, whatever the size): the share of the
per-record work a relaunch does is (relaunch - fixed) / (full - fixed), the figure a run of hours tends to; most of
it is the steps after the fetch (the per-site pass, the writes), which the killed run never reached. What the kill
cost is killed + relaunch - full, beside a second start of the job (fixed): beyond that start, the tasks in flight
fetched again and the kept rows read back. The four runs are repeated `--repeats` times (this machine's CPU seconds
move by a tenth between runs) and each figure is the median of its rounds'.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.measure import run_job
from parascout.udfs.common import storage
from parascout.udfs.fetch import resume
from testkit.servers import serve
from testkit.warc import ENGLISH, GERMAN, html_page, record_bytes, urls_rows, write_warc

SPARK = ["--spark-conf", "spark.master=local[2]", "--spark-conf", "spark.ui.enabled=false",
         "--spark-conf", "spark.sql.shuffle.partitions=4"]


def event_log(folder: Path) -> list[str]:
    """Spark settings that write a job's event log (uncompressed) under `folder`, read back by task_cpu."""
    folder.mkdir(parents=True, exist_ok=True)
    return ["--spark-conf", "spark.eventLog.enabled=true", "--spark-conf", f"spark.eventLog.dir={folder.as_uri()}",
            "--spark-conf", "spark.eventLog.compress=false"]


def task_cpu(folder: Path) -> float:
    """CPU seconds of the Spark task threads (executorCpuTime of every completed stage) in the event logs under
    `folder`: the job's JVM work on its rows, without the Python workers, Spark's start or the JIT compilers, which
    the process tree's figure also holds."""
    nanoseconds = 0
    for path in folder.rglob("events_*"):
        for line in path.read_text(errors="replace").splitlines():
            if '"SparkListenerStageCompleted"' not in line:
                continue
            for accumulable in json.loads(line)["Stage Info"].get("Accumulables", []):
                if accumulable.get("Name") == "internal.metrics.executorCpuTime":
                    nanoseconds += int(accumulable.get("Value") or 0)
    return nanoseconds / 1e9


def balanced_files(partitions: int, files: int) -> list[str]:
    """File names, `files // partitions` in each fetch partition by Spark's hash of warc_filename."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    names = [f"bench-{i:05d}.warc.gz" for i in range(40 * files)]
    rows = spark.createDataFrame([(name,) for name in names], "name string").select(
        "name", F.pmod(F.hash("name"), F.lit(partitions)).alias("partition")).collect()
    spark.stop()
    chosen: dict[int, list[str]] = {}
    for row in rows:
        if len(chosen.setdefault(row["partition"], [])) < files // partitions:
            chosen[row["partition"]].append(row["name"])
    return sorted(name for names in chosen.values() for name in names)


def page(rng: random.Random, url: str) -> bytes:
    """One WARC response: an HTML page of shuffled English or German sentences, with links."""
    words = (ENGLISH if rng.random() < 0.5 else GERMAN).split()
    paragraphs = [" ".join(rng.choices(words, k=rng.randint(30, 90))) for _ in range(rng.randint(8, 20))]
    links = tuple(f"/p{rng.randint(0, 9999)}.html" for _ in range(rng.randint(5, 40)))
    return record_bytes(url, html_page(url.rsplit("/", 1)[-1], paragraphs, links=links))


def build_archive(folder: Path, names: list[str], pages: int) -> list[dict]:
    rng, rows = random.Random(7), []
    for number, name in enumerate(names):
        records = []
        for index in range(pages):
            url = f"http://site{number % 7}.example.org/{number}/{index}.html"
            records.append((url, page(rng, url)))
        rows += write_warc(folder / name, records)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--pages", type=int, default=500)  # per-record work above the fixed cost
    parser.add_argument("--partitions", type=int, default=20)
    parser.add_argument("--kill-at", type=float, default=0.8)
    parser.add_argument("--repeats", type=int, default=3, help="rounds of the four runs; figures are their medians")
    parser.add_argument("--task-cpu", action="store_true",
                        help="also the CPU of Spark's task threads, from each job's event log (writing it adds to the "
                             "process tree's CPU)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats: at least one round")
    work = Path(tempfile.mkdtemp(prefix="bench-fetch-resume-"))
    try:  # the archive and four roots: hundreds of MB at 80,000 records
        measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args: argparse.Namespace, work: Path) -> None:
    """Build the archive under `work`, run the four jobs `--repeats` times, print each round and their medians."""
    archive = work / "archive"
    archive.mkdir()
    rows = build_archive(archive, balanced_files(args.partitions, args.files), args.pages)
    prefix, handler, server = serve(archive)
    job = [sys.executable, "-m", "parascout.jobs.fetch_docs", "--warc-prefix", prefix, "--select", "all",
           "--partitions", str(args.partitions), *SPARK]
    print(f"{len(rows):,} records in {args.files} files, {args.partitions} fetch tasks, local[2]")
    rounds = []
    for number in range(1, args.repeats + 1):
        rounds.append(one_round(job, work / f"round-{number}", rows, handler, args))
        print_round(f"round {number}", rounds[-1], args.partitions)
    server.shutdown()
    if len(rounds) > 1:
        print(f"medians of {len(rounds)} rounds:")
        for name in ("fixed", "full", "killed", "relaunch"):
            print(f"{name:9} cpu {statistics.median(r[name]['cpu'] for r in rounds):7.1f}s  "
                  f"wall {statistics.median(r[name]['wall'] for r in rounds):6.1f}s")
    for label, figure in figures(rounds).items():
        print(f"{label}: {figure}")


def one_round(job: list[str], work: Path, rows: list[dict], handler, args: argparse.Namespace) -> dict:
    """The one-record run, the full run, the killed run and its relaunch, each in roots of their own under `work`."""
    results = {}
    for name in ("full", "killed"):
        storage.write_parquet_table(pd.DataFrame(urls_rows(rows)), str(work / name / "urls"))
    storage.write_parquet_table(pd.DataFrame(urls_rows(rows[:1])), str(work / "fixed" / "urls"))
    def run(name: str, root: str, kill_when=None) -> dict:
        handler.gets.clear()
        events = work / f"{name}-events"
        logged = event_log(events) if args.task_cpu else []
        result = run_job([*job, *logged, "--root", str(work / root)], work / f"{name}.log", kill_when)
        return {**result, "gets": sum(handler.gets.values()), "tasks": task_cpu(events) if args.task_cpu else None}

    results["fixed"] = run("fixed", "fixed")
    results["full"] = run("full", "full")
    area = resume.area_path(str(work / "killed"), "fetch-docs")
    wanted = round(args.kill_at * args.partitions)
    results["killed"] = {**run("killed", "killed", lambda: len(resume.finished_parts(area)) >= wanted),
                         "kept": len(resume.finished_parts(area))}
    results["relaunch"] = run("relaunch", "killed")
    report = json.loads((work / "killed" / "_reports" / "fetch-docs.json").read_text())
    results["resumed"] = (report["metrics"]["resumed_partitions"], report["metrics"]["resumed_records"],
                          report["balanced"])
    for name in ("full", "killed", "fixed"):  # the relaunch's root holds the report read above
        shutil.rmtree(work / name, ignore_errors=True)
    return results


def print_round(label: str, results: dict, partitions: int) -> None:
    print(label)
    for name in ("fixed", "full", "killed", "relaunch"):
        result = results[name]
        tasks = f"  tasks {result['tasks']:6.1f}s" if result["tasks"] is not None else ""
        print(f"  {name:9} cpu {result['cpu']:7.1f}s{tasks}  wall {result['wall']:6.1f}s  GETs {result['gets']:5d}"
              + (f"  (killed with {result['kept']}/{partitions} tasks kept)" if name == "killed" else ""))
    tasks, records, balanced = results["resumed"]
    print(f"  resumed {tasks} tasks, {records:,} records; balanced {balanced}")


def figures(rounds: list[dict]) -> dict[str, str]:
    """The relaunch against the full run, the median over the rounds of each round's ratio."""
    def median(value) -> float:
        return statistics.median(value(r) for r in rounds)

    cpu = median(lambda r: r["relaunch"]["cpu"] / r["full"]["cpu"])
    wall = median(lambda r: r["relaunch"]["wall"] / r["full"]["wall"])
    gets = median(lambda r: r["relaunch"]["gets"] / r["full"]["gets"])
    tasks = (f", Spark task threads {median(lambda r: r['relaunch']['tasks'] / r['full']['tasks']):.1%}"
             if all(r["full"].get("tasks") for r in rounds) else "")
    per_record = median(lambda r: (r["relaunch"]["cpu"] - r["fixed"]["cpu"]) / (r["full"]["cpu"] - r["fixed"]["cpu"]))
    # the killed run and its relaunch against one undisturbed run: what the kill cost, to be set beside a second
    # start of the job (the fixed cost): tasks in flight fetched again and kept rows read back come on top of it
    lost = median(lambda r: r["killed"]["cpu"] + r["relaunch"]["cpu"] - r["full"]["cpu"])
    lost_share = median(lambda r: (r["killed"]["cpu"] + r["relaunch"]["cpu"] - r["full"]["cpu"]) / r["full"]["cpu"])
    start = median(lambda r: r["fixed"]["cpu"])
    return {"relaunch / full": f"cpu {cpu:.1%}{tasks}, wall {wall:.1%}, GETs {gets:.1%}",
            "the relaunch's per-record work (cpu less the fixed cost) / the full run's": f"{per_record:.1%}",
            "killed + relaunch - full": f"{lost:.1f} cpu-s, {lost_share:.1%} of a full run "
                                        f"(a second start of the job: {start:.1f} cpu-s)"}


if __name__ == "__main__":
    main()
