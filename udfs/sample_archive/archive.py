"""`generate`: the whole sample archive (WARC/WAT/CDX/columnar) plus its ground truth.

Hosts are built and written one group (one set of WARC files) at a time, CDX lines
go through an external sort, and truth rows are streamed to Parquet, so the
memory held does not grow with the number of URLs.
"""
from __future__ import annotations

import multiprocessing
import os
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from parascout.udfs.cdx import write_zipnum
from parascout.udfs.langs import to_iso639_3
from parascout.udfs.progress import progress_bar
from parascout.udfs.sample_archive.index import CdxSorter, ColumnarWriter, tee
from parascout.udfs.sample_archive.sites import SiteSpec, build_site, plan_sites
from parascout.udfs.sample_archive.truth import TruthWriter, site_truth
from parascout.udfs.sample_archive.vocabulary import UnsupportedLanguage, sample_conf, supported_languages
from parascout.udfs.sample_archive.writer import SegmentWriter, segment_name

OUTPUT_DIRS = ("warc", "crawldiagnostics", "robotstxt", "wat", "indexes", "cc-index", "truth")
#: captures per planned HTML page (images, redirects, 404s, robots.txt), to size groups before building them
CAPTURES_PER_PAGE = 1.3
CRAWL_EPOCH = datetime(2099, 1, 1, tzinfo=timezone.utc)


def resolve_languages(langs) -> list[str]:
    """ISO 639-3 codes of --langs ('en,is' or a list), checked against the supported vocabularies."""
    if isinstance(langs, str):
        langs = [part for part in langs.replace(" ", "").split(",") if part]
    codes = list(dict.fromkeys(to_iso639_3(code) for code in langs))
    unsupported = [code for code in codes if code not in supported_languages()]
    if unsupported:
        raise UnsupportedLanguage(f"no vocabulary for {','.join(unsupported)}; supported: "
                                  f"{','.join(supported_languages())}")
    return codes


def crawl_start_of(seed: int) -> datetime:
    """The first fetch time: fixed for a seed (a synthetic January 2099)."""
    return CRAWL_EPOCH + timedelta(minutes=(seed * 7919) % 20000)


@dataclass
class GroupTask:
    """One group of hosts, written as one set of WARC files (by a worker process or in-process)."""

    index: int
    specs: list
    conf: dict
    seed: int
    crawl: str
    work: str
    cdx_only: bool
    crawl_start: datetime


@dataclass
class GroupResult:
    index: int
    lines: list
    counts: Counter
    truths: list
    filenames: dict
    written: list


def group_specs(specs: list[SiteSpec], captures_per_warc: int) -> list[list[SiteSpec]]:
    """Consecutive hosts grouped by planned size, so a group's WARC files hold about captures_per_warc captures."""
    groups, current, planned = [], [], 0.0
    for spec in specs:
        current.append(spec)
        planned += spec.n_pages * CAPTURES_PER_PAGE
        if planned >= captures_per_warc:
            groups.append(current)
            current, planned = [], 0.0
    if current:
        groups.append(current)
    return groups


def write_group(task: GroupTask) -> GroupResult:
    """Build a group's hosts and write their captures; returns CDX lines and truth (no shared state)."""
    sites = [build_site(spec, task.conf, task.crawl_start) for spec in task.specs]
    captures = sorted(((c.fetch_time, c.url, i, c) for i, site in enumerate(sites) for c in site.captures),
                      key=lambda item: item[:3])
    writer = SegmentWriter(task.work, task.crawl, task.seed, task.index, captures[0][0], captures[-1][0],
                           task.cdx_only)
    lines, counts = [], Counter()
    for _, _, site_index, capture in captures:
        lines.append(writer.write(sites[site_index], capture))
        counts[f"{capture.subset}:{capture.kind}"] += 1
    written = writer.close()
    return GroupResult(task.index, lines, counts, [site_truth(site) for site in sites], writer.filenames, written)


def generate(out_dir: str, hosts: int | None = None, seed: int | None = None, langs=None, cdx_only: bool = False,
             pages_per_host: int | None = None, crawl: str | None = None, overrides: dict | None = None,
             progress: bool = True, verbose: bool = True, workers: int | None = 1) -> dict:
    """Write the sample archive and its truth under out_dir; returns a summary (counts, mix, timing).

    The bytes depend only on the arguments, never on `workers` (None: one process per CPU).
    """
    started = time.monotonic()
    conf = {**sample_conf(), **(overrides or {})}
    hosts = int(hosts if hosts is not None else conf["hosts"])
    seed = int(seed if seed is not None else conf["seed"])
    pages_per_host = int(pages_per_host if pages_per_host is not None else conf["pages_per_host"])
    crawl = crawl or conf["crawl"]
    languages = resolve_languages(langs if langs else conf["languages"])
    if hosts < 1 or pages_per_host < 1:
        raise ValueError("hosts and pages_per_host must be at least 1")
    work = os.path.join(out_dir, "_tmp-make-sample-archive")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    crawl_start = crawl_start_of(seed)
    specs = plan_sites(hosts, seed, languages, conf, pages_per_host)
    tasks = [GroupTask(index, group, conf, seed, crawl, work, cdx_only, crawl_start)
             for index, group in enumerate(group_specs(specs, int(conf["captures_per_warc"])))]
    sorter = CdxSorter(os.path.join(work, "_sort"))
    truth = TruthWriter(os.path.join(work, "truth"))
    counts, warc_files, segments = Counter(), [], {}
    bar = progress_bar(total=len(specs), enabled=progress, desc="hosts", unit="host", mininterval=1.0)
    workers = max(1, min(workers or min(os.cpu_count() or 1, 8), len(tasks)))
    pool = multiprocessing.get_context("spawn").Pool(workers) if workers > 1 else None
    try:
        for result in (pool.imap(write_group, tasks) if pool else map(write_group, tasks)):
            for line in result.lines:
                sorter.add(line)
            for site in result.truths:
                truth.add(site)
            counts.update(result.counts)
            warc_files.extend(result.written)
            segments.update({name: segment_name(crawl_start, result.index) for name in result.filenames.values()})
            bar.update(len(result.truths))
            bar.set_postfix(urls=sorter.count)
    finally:
        if pool:
            pool.close()
            pool.join()
    bar.close()
    truth.close()
    columnar = ColumnarWriter(work, crawl, segments, "part-00000.c000.gz.parquet")
    lines = progress_bar(sorter.sorted_lines(), enabled=progress, total=sorter.count, desc="index", unit="line",
                         mininterval=1.0)
    zipnum = write_zipnum(tee(lines, columnar.add_cdx_line), os.path.join(work, "indexes"))
    columnar_counts = columnar.close()
    _move_into_place(work, out_dir)
    summary = _summary(out_dir, crawl, seed, specs, languages, cdx_only, counts, truth, zipnum, columnar_counts,
                       warc_files, time.monotonic() - started)
    summary["workers"] = workers
    if verbose:
        print(format_summary(summary))
    return summary


def _move_into_place(work: str, out_dir: str) -> None:
    for name in OUTPUT_DIRS:
        target = os.path.join(out_dir, name)
        shutil.rmtree(target, ignore_errors=True)
        if os.path.exists(os.path.join(work, name)):
            os.replace(os.path.join(work, name), target)
    shutil.rmtree(work, ignore_errors=True)
    with open(os.path.join(out_dir, "truth", "_SUCCESS"), "w"):
        pass


def _summary(out_dir, crawl, seed, specs, languages, cdx_only, counts, truth, zipnum, columnar_counts, warc_files,
             seconds) -> dict:
    html_pages = sum(n for key, n in counts.items() if key == "warc:page")
    return {
        "out": out_dir, "crawl": crawl, "seed": seed, "cdx_only": cdx_only, "languages": languages,
        "hosts": len(specs), "multilingual_hosts": sum(len(s.languages) > 1 for s in specs),
        "html_pages": html_pages, "captures": sum(counts.values()), "captures_by_kind": dict(sorted(counts.items())),
        "pairs": truth.n_pairs, **truth.convention_mix(),
        "cdx_lines": zipnum["lines"], "zipnum_blocks": zipnum["blocks"], "columnar_rows": columnar_counts,
        "warc_files": sorted(warc_files) if not cdx_only else [],
        "wat_files": len([f for f in warc_files if f.startswith("warc/")]) if not cdx_only else 0,
        "seconds": round(seconds, 2),
    }


def format_summary(summary: dict) -> str:
    """The convention mix and the code-strip-recoverable share, as printed after generation."""
    lines = [(f"sample archive {summary['crawl']} (seed {summary['seed']}): {summary['hosts']} hosts "
             f"({summary['multilingual_hosts']} multilingual), {summary['html_pages']} HTML pages, "
             f"{summary['captures']} captures, {summary['pairs']} true pairs, {summary['seconds']}s"),
             f"{'convention':<24}{'pairs':>8}{'share':>8}{'code-strip recoverable':>24}"]
    for label, row in summary["conventions"].items():
        lines.append(f"{label:<24}{row['pairs']:>8}{row['share']:>8.1%}{row['recoverable_share']:>24.1%}")
    lines.append(f"code-strip recoverable share of true pairs: {summary['code_strip_recoverable_share']:.1%}")
    return "\n".join(lines)
