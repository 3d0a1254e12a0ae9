"""`generate`: the whole sample archive (WARC/WAT/CDX/columnar) plus its ground truth.

Hosts are built and written one group (one set of WARC files) at a time, CDX lines
go through an external sort, and truth rows are streamed to Parquet, so the
memory held does not grow with the number of URLs.
"""
from __future__ import annotations

import functools
import multiprocessing
import os
import shutil
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from parascout.udfs.common.langs import to_iso639_3
from parascout.udfs.common.progress import progress_bar
from parascout.udfs.index.cdx import write_zipnum
from parascout.udfs.sample_archive.corpus import MIN_PASSAGE, TextCorpus, TextCorpusError, corpus_languages
from parascout.udfs.sample_archive.index import CdxSorter, ColumnarWriter, tee
from parascout.udfs.sample_archive.sites import SiteSpec, build_site, plan_sites
from parascout.udfs.sample_archive.topics import choose_topical_sites, write_topic_truth
from parascout.udfs.sample_archive.topics import truth_rows as topic_truth_rows
from parascout.udfs.sample_archive.truth import TruthWriter, site_truth
from parascout.udfs.sample_archive.vocabulary import UnsupportedLanguage, sample_conf, supported_languages
from parascout.udfs.sample_archive.writer import SegmentWriter, segment_name

OUTPUT_DIRS = ("warc", "crawldiagnostics", "robotstxt", "wat", "indexes", "cc-index", "truth")
#: captures per planned HTML page (images, redirects, 404s, robots.txt), to size groups before building them
CAPTURES_PER_PAGE = 1.3
CRAWL_EPOCH = datetime(2099, 1, 1, tzinfo=timezone.utc)
BUILT_IN_TEXT = "built-in concept-aligned word lists (no --text-corpus)"


def resolve_languages(langs, text_corpus: str | None = None, default=None) -> list[str]:
    """ISO 639-3 codes of --langs ('en,is' or a list), checked against the supported vocabularies.

    Empty langs means `default` (else the configured languages); with a text corpus, those the corpus has,
    and languages named explicitly must all have a corpus file.
    """
    explicit = bool(langs)
    if not explicit:
        langs = default or sample_conf()["languages"]
    if isinstance(langs, str):
        langs = [part for part in langs.replace(" ", "").split(",") if part]
    codes = list(dict.fromkeys(to_iso639_3(code) for code in langs))
    unsupported = [code for code in codes if code not in supported_languages()]
    if unsupported:
        raise UnsupportedLanguage(f"no vocabulary for {','.join(unsupported)}; supported: "
                                  f"{','.join(supported_languages())}")
    if text_corpus:
        available = corpus_languages(text_corpus)
        absent = [code for code in codes if code not in available]
        if absent and explicit:
            raise TextCorpusError(f"--text-corpus {text_corpus} has no text for {','.join(absent)}; "
                                  f"hosts can draw from {','.join(available)}")
        codes = [code for code in codes if code in available]
        if not codes:
            raise TextCorpusError(f"--text-corpus {text_corpus}: none of the languages is in the corpus")
    return codes


@functools.lru_cache(maxsize=2)
def open_corpus(directory: str, languages: tuple[str, ...]) -> TextCorpus:
    """The corpus of a run, loaded once per process (worker processes load their own)."""
    return TextCorpus(directory, languages)


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
    text_corpus: str | None = None
    languages: tuple = ()


@dataclass
class GroupResult:
    index: int
    lines: list
    counts: Counter
    truths: list
    filenames: dict
    written: list
    cld2: Counter  # (intended lang, CLD2 agrees, negative kind or None) -> HTML pages
    corpus_facts: dict  # --text-corpus: passages available, corpus lines skipped
    topics: list  # --topical-sites: truth/topics.parquet rows per host


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
    corpus = open_corpus(task.text_corpus, task.languages) if task.text_corpus else None
    corpus_facts = {}
    if corpus:
        corpus_facts = {"passages_available": len(corpus.passages(task.seed)),
                        "corpus_lines_skipped": corpus.skipped_lines()}
        if not corpus_facts["passages_available"]:
            raise TextCorpusError(f"--text-corpus {task.text_corpus}: no passage of {MIN_PASSAGE} aligned ids")
    sites = [build_site(spec, task.conf, task.crawl_start, corpus, task.seed) for spec in task.specs]
    captures = sorted(((c.fetch_time, c.url, i, c) for i, site in enumerate(sites) for c in site.captures),
                      key=lambda item: item[:3])
    writer = SegmentWriter(task.work, task.crawl, task.seed, task.index, captures[0][0], captures[-1][0],
                           task.cdx_only)
    lines, counts, cld2 = [], Counter(), Counter()
    for _, _, site_index, capture in captures:
        lines.append(writer.write(sites[site_index], capture))
        counts[f"{capture.subset}:{capture.kind}"] += 1
        if capture.kind in ("page", "duplicate"):
            cld2[_cld2_key(sites[site_index], capture, writer.last_languages)] += 1
    written = writer.close()
    truths = [site_truth(site, with_text=not task.cdx_only) for site in sites]
    topics = [topic_truth_rows(site) for site in sites] if int(task.conf.get("topical_sites") or 0) else []
    return GroupResult(task.index, lines, counts, truths, writer.filenames, written, cld2, corpus_facts, topics)


def _cld2_key(site, capture, languages: str | None) -> tuple:
    """(intended language, whether CLD2's first language is it, the page's negative kind)."""
    page = site.pages[capture.page]
    kind = "near_duplicate" if capture.kind == "duplicate" and site.corpus else \
        page.text.kinds.get(capture.lang) if page.text else None
    return capture.lang, (languages or "").split(",")[0] == capture.lang, kind


def generate(out_dir: str, hosts: int | None = None, seed: int | None = None, langs=None, cdx_only: bool = False,
             pages_per_host: int | None = None, crawl: str | None = None, overrides: dict | None = None,
             progress: bool = True, verbose: bool = True, workers: int | None = 1,
             text_corpus: str | None = None) -> dict:
    """Write the sample archive and its truth under out_dir; returns a summary (counts, mix, timing).

    The bytes depend only on the arguments, never on `workers` (None: one process per CPU). With
    `text_corpus` (a directory of aligned `<iso639-3>.tsv.gz`), pages carry real translations and hard
    negatives, and truth/sentences.parquet aligns their sentences; hosts draw only the corpus's languages.
    """
    started = time.monotonic()
    conf = {**sample_conf(), **(overrides or {})}
    hosts = int(hosts if hosts is not None else conf["hosts"])
    seed = int(seed if seed is not None else conf["seed"])
    pages_per_host = int(pages_per_host if pages_per_host is not None else conf["pages_per_host"])
    crawl = crawl or conf["crawl"]
    languages = resolve_languages(langs, text_corpus, conf["languages"])
    if hosts < 1 or pages_per_host < 1:
        raise ValueError("hosts and pages_per_host must be at least 1")
    if text_corpus:
        text_corpus = os.path.abspath(text_corpus)
        TextCorpus(text_corpus, tuple(languages))  # checks the files; each process loads the text it uses
    work = os.path.join(out_dir, "_tmp-make-sample-archive")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    crawl_start = crawl_start_of(seed)
    specs = plan_sites(hosts, seed, languages, conf, pages_per_host)
    choose_topical_sites(specs, int(conf.get("topical_sites") or 0), seed)
    tasks = [GroupTask(index, group, conf, seed, crawl, work, cdx_only, crawl_start, text_corpus, tuple(languages))
             for index, group in enumerate(group_specs(specs, int(conf["captures_per_warc"])))]
    sorter = CdxSorter(os.path.join(work, "_sort"))
    truth = TruthWriter(os.path.join(work, "truth"), sentences=bool(text_corpus) and not cdx_only)
    counts, warc_files, segments, cld2, corpus_facts = Counter(), [], {}, Counter(), {}
    topic_rows: list[dict] = []
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
            cld2.update(result.cld2)
            corpus_facts.update(result.corpus_facts)
            topic_rows.extend(result.topics)
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
    if topic_rows:
        write_topic_truth(topic_rows, os.path.join(work, "truth", "topics.parquet"))
    columnar = ColumnarWriter(work, crawl, segments, "part-00000.c000.gz.parquet")
    lines = progress_bar(sorter.sorted_lines(), enabled=progress, total=sorter.count, desc="index", unit="line",
                         mininterval=1.0)
    zipnum = write_zipnum(tee(lines, columnar.add_cdx_line), os.path.join(work, "indexes"))
    columnar_counts = columnar.close()
    _move_into_place(work, out_dir)
    summary = _summary(out_dir, crawl, seed, specs, languages, cdx_only, counts, truth, zipnum, columnar_counts,
                       warc_files, time.monotonic() - started)
    summary["workers"] = workers
    summary["text_source"] = text_corpus or BUILT_IN_TEXT
    summary.update(cld2_agreement(cld2))
    if text_corpus:
        summary.update(truth.text_summary(), **corpus_facts)
    if topic_rows:
        summary["topical_hosts"] = sum(spec.topic is not None for spec in specs)
        summary["on_topic_pages"] = sum(topic is not None for rows in topic_rows for topic in rows["topic"])
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


def cld2_agreement(cld2: Counter) -> dict:
    """Per intended language: HTML pages and the share whose CLD2 first language agrees; disagreements by kind."""
    per_language, disagreements = {}, Counter()
    for (lang, agrees, kind), n in cld2.items():
        row = per_language.setdefault(lang, {"pages": 0, "agree": 0})
        row["pages"] += n
        row["agree"] += n if agrees else 0
        if not agrees:
            disagreements[kind or "none"] += n
    for row in per_language.values():
        row["share"] = round(row["agree"] / row["pages"], 4)
    pages = sum(row["pages"] for row in per_language.values())
    return {"cld2_agreement": dict(sorted(per_language.items())),
            "cld2_agree_share": round(sum(row["agree"] for row in per_language.values()) / max(1, pages), 4),
            "cld2_disagreements_by_kind": dict(sorted(disagreements.items()))}


def format_summary(summary: dict) -> str:
    """The convention mix and the code-strip-recoverable share, as printed after generation."""
    lines = [(f"sample archive {summary['crawl']} (seed {summary['seed']}): {summary['hosts']} hosts "
             f"({summary['multilingual_hosts']} multilingual), {summary['html_pages']} HTML pages, "
             f"{summary['captures']} captures, {summary['pairs']} true pairs, {summary['seconds']}s"),
             f"{'convention':<24}{'pairs':>8}{'share':>8}{'code-strip recoverable':>24}"]
    for label, row in summary["conventions"].items():
        lines.append(f"{label:<24}{row['pairs']:>8}{row['share']:>8.1%}{row['recoverable_share']:>24.1%}")
    lines.append(f"code-strip recoverable share of true pairs: {summary['code_strip_recoverable_share']:.1%}")
    lines.append(f"text: {summary['text_source']}")
    agreement = summary["cld2_agreement"]
    lines.append(f"CLD2 agrees with the intended language on {summary['cld2_agree_share']:.1%} of HTML pages: " +
                 ", ".join(f"{lang} {row['agree']}/{row['pages']}" for lang, row in agreement.items()))
    if summary["cld2_disagreements_by_kind"]:
        lines.append("CLD2 disagreements by negative kind: " +
                     ", ".join(f"{kind} {n}" for kind, n in summary["cld2_disagreements_by_kind"].items()))
    if "negatives" in summary:
        lines.append("hard negatives: " + ", ".join(f"{kind} {n}" for kind, n in summary["negatives"].items()))
        lines.append("sentence beads: " + ", ".join(f"{kind} {n}" for kind, n in summary["beads"].items()))
        lines.append(f"passages: {summary['passages_used']} of {summary['passages_available']} used; "
                     f"{summary['pages_with_a_passage_of_another_host']} of {summary['text_pages']} pages hold a "
                     f"passage another host also holds (the corpus is smaller than the archive), "
                     f"{summary['passages_reused_within_host']} reused within a host")
    return "\n".join(lines)
