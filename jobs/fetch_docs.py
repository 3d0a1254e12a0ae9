"""fetch-docs: read the selected URLs' WARC records (local, s3://, https://) and WAT links into `docs` and `texts`.

Selection: the URLs of `scored_pairs` (else `candidates`), or every URL of the
shortlisted hosts, of the sites discover-sites ranked, or of `urls`. Records are located by (warc_filename,
warc_offset, warc_length) under --warc-prefix; the selection is repartitioned by
file and sorted by offset so neighbouring records share one coalesced GET. With
--wat, CommonCrawl WAT files add link-graph rows for URLs not fetched from WARC.
Every requested URL ends in `docs` once, with status 'ok' or a reason; a rerun
(--force) fetches only URLs without an 'ok' row and merges. Each finished fetch task keeps its rows under
ROOT/_staging/_resume/ (udfs.fetch.resume) until the run commits, so a run killed halfway is relaunched with the
same command and fetches only the tasks that had not finished. Each HTML page fetched
from WARC also gets a `texts` row: its paragraphs (type, language, hash, boilerplate
flag), main text, status and its metadata (meta description, keywords); after the per-record pass, a per-site pass over the
paragraph hashes marks the site's repeated paragraphs as boilerplate and points each
near-duplicate page to the one kept for its group (`duplicate_of`).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable

import pandas as pd
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.udfs.common import range_reads, storage, tables
from parascout.udfs.common.sites import with_site
from parascout.udfs.common.spark_functions import bind
from parascout.udfs.fetch import documents, resume, warc_fetch, warc_record
from parascout.udfs.fetch.config import ExtractionConfig
from parascout.udfs.fetch.documents import DOC_COLUMNS, RECORD_SCHEMA, parse_record
from parascout.udfs.fetch.html_text import WALK_ENGINE
from parascout.udfs.fetch.near_duplicates import SITE_PASS_SCHEMA, SiteTextSettings, site_text_pass
from parascout.udfs.fetch.warc_fetch import KIB, MIB, FetchSettings, fetch_documents
from parascout.udfs.index.wat import read_wat_files
from parascout.udfs.lexicon.lexicon import load_lexicon
from parascout.udfs.rank import domain_focus

SELECTION_COLUMNS = ["url", "host", "warc_filename", "warc_offset", "warc_length", "in_index"]
#: the `texts` columns less the domain focus ones, which only --domain-terms adds
TEXT_COLUMNS = tables.columns("texts", without=tuple(domain_focus.FOCUS_COLUMNS))
#: the page's meta description, keywords and whether either was cut (a texts table written before them lacks them)
METADATA_SCHEMA = {column.name: column.type for column in tables.fields("texts")
                   if column.name in ("description", "keywords", "metadata_truncated")}


def capture_rank() -> Column:
    """Each row's rank among its URL's rows: a doc before a failure, a WARC record's before a WAT record's, this
    run's before an earlier run's, then by status and capture (a record's file and offset are its own), so that every
    run, and every task retried after a lost executor, keeps the same row of a URL fetched more than once."""
    order = ((F.col("status") == "ok").desc(), (F.col("source") == "warc").desc(), F.col("is_new").desc(),
             "status", "warc_filename", "warc_offset")
    return F.row_number().over(Window.partitionBy("url").orderBy(*order))


def ranked_captures(rows: DataFrame) -> tuple[DataFrame, bool]:
    """(rows with `_rank`, capture_rank's; whether the rows went through its window). A run's own WARC rows hold each
    URL once (the selection is distinct URLs), so unless WAT rows, resolved revisits or an earlier docs table add a
    second row to some URL, every row is first: a count of the URLs alone, not a shuffle of the whole rows by URL,
    finds that out."""
    if rows.groupBy("url").count().where("count > 1").isEmpty():
        return rows.withColumn("_rank", F.lit(1)), False
    return rows.withColumn("_rank", capture_rank()), True


class FetchDocsJob(Job):
    name = "fetch-docs"
    description = "fetch selected URLs' WARC records (local/S3/HTTPS) and WAT links into the docs and texts tables"
    outputs = ("docs", "texts")
    inputs = ("urls",)
    optional_inputs = ("scored_pairs", "candidates", "shortlist", "discovered_sites")
    later_inputs = ("scored_pairs", "shortlist")  # a second pass: fetch the pairs or sites they name
    input_paths = ("wat", "domain_terms", "domain_lexicon")
    input_prefixes = ("warc_prefix",)
    stage_configs = (("extraction", ExtractionConfig),)
    BAD_REASONS = ("truncated", "bad_gzip", "not_warc", "not_http", "bad_payload", "parse_error", "fetch_failed",
                   "missing_file", "not_in_index", "no_warc_location", "bad_warc_location", "bad_wat_json",
                   "bad_wat_file", "bad_location", "bad_url")
    FILTERED_REASONS = (*warc_fetch.FILTERED_REASONS, *warc_record.FILTERED_REASONS, *documents.FILTERED_REASONS,
                        "duplicate")

    def __init__(self) -> None:
        super().__init__()
        self.cached: list[DataFrame] = []
        self.plan: dict | None = None  # the resume plan: this run's, or the interrupted run's it carries on
        self.finished: set[str] = set()  # fetch tasks an interrupted run finished (read back, not fetched)
        self.resumed = {"partitions": 0, "records": 0}
        self.resumed_rows: list[DataFrame] = []  # the kept parts' rows, read back from the resume area

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--warc-prefix", help="folder or URL prefix of warc_filename: a local dir, "
                                                  "s3://commoncrawl/ or https://data.commoncrawl.org/")
        parser.add_argument("--select", choices=["pairs", "shortlist", "sites", "all"], default="pairs",
                            help="pairs: URLs of scored_pairs (else candidates); shortlist: every URL of shortlisted "
                                 "hosts; sites: every URL of the sites discover-sites ranked (--max-sites); all: "
                                 "every URL of `urls`")
        parser.add_argument("--max-sites", type=int, default=0,
                            help="--select sites: only the first N sites of discovered_sites (0: all of them)")
        parser.add_argument("--wat", nargs="+", default=[], metavar="PATH", help="WAT files or folders (link graph)")
        parser.add_argument("--max-record-bytes", type=int, default=5 * MIB,
                            help="compressed records above this are not fetched (status too_large)")
        parser.add_argument("--concurrency", type=int, default=8, help="parallel range GETs per task")
        parser.add_argument("--attempts", type=int, default=4,
                            help="GETs per range at most (first try + retries; the only retry layer) before "
                                 "fetch_failed")
        parser.add_argument("--no-coalesce", action="store_true", help="one GET per record")
        parser.add_argument("--coalesce-gap", type=int, default=64 * KIB, help="max bytes between coalesced records")
        parser.add_argument("--coalesce-span", type=int, default=8 * MIB, help="max bytes of one coalesced GET")
        parser.add_argument("--s3-endpoint", help="S3-compatible endpoint URL, passed to every task")
        parser.add_argument("--read-timeout", type=float, default=60.0, help="seconds before a GET is retried")
        parser.add_argument("--partitions", type=int, default=0,
                            help="fetch tasks (default: about --records-per-task URLs each, at least Spark "
                                 "parallelism)")
        parser.add_argument("--records-per-task", type=int, default=1000,
                            help="without --partitions: URLs per fetch task; each finished task is kept, so a "
                                 "killed run's relaunch fetches only the unfinished ones")
        parser.add_argument("--record-seconds", type=float, default=warc_record.RECORD_SECONDS,
                            help="time limit to parse one record (status timeout); 0: none")
        parser.add_argument("--site-boilerplate-share", type=float, default=SiteTextSettings.min_share,
                            help="a paragraph on this share of its site's pages (and on --site-boilerplate-pages "
                                 "pages or more) is boilerplate")
        parser.add_argument("--site-boilerplate-pages", type=int, default=SiteTextSettings.min_pages,
                            help="... and on at least this many pages (see --site-boilerplate-share)")
        parser.add_argument("--near-duplicate-overlap", type=float, default=SiteTextSettings.min_overlap,
                            help="pages sharing this share of the smaller one's main paragraphs are near-duplicates "
                                 "(ILSP-FC: 0.8); above 1: none")
        parser.add_argument("--max-site-pages", type=int, default=50_000,
                            help="bigger sites are split into groups of about this many pages for the site pass")
        parser.add_argument("--domain-terms", metavar="FILE",
                            help="domain focus (ILSP-FC): weight<TAB>term<TAB>subtopic[<TAB>lang] lines; texts gain "
                                 "relevance, distinct_terms, subtopic and in_domain")
        parser.add_argument("--domain-lexicon", nargs="+", default=[], metavar="DIR",
                            help="lexicon directories (train-lexicon) that carry the terms of their source language "
                                 "into their target language, word by word")
        parser.add_argument("--min-relevance", type=float, default=domain_focus.DEFAULT_MIN_SCORE,
                            help="in_domain needs this relevance score (per mention x term weight: title 10, "
                                 "description 4, keywords 2, main text 1)")
        parser.add_argument("--min-domain-terms", type=int, default=domain_focus.DEFAULT_MIN_TERMS,
                            help="in_domain needs this many distinct terms")

    def validate_arguments(self, args) -> None:
        super().validate_arguments(args)
        if args.select == "shortlist" and args.use_shortlist == "no":
            raise ConfigError("--select shortlist reads the shortlist table: drop --use-shortlist no")
        args.use_shortlist = "yes" if args.select == "shortlist" else "no"  # read by --select shortlist alone
        args.use_discovered_sites = "yes" if args.select == "sites" else "no"
        if args.max_sites < 0:
            raise ConfigError("--max-sites must be 0 (all) or positive")
        if args.select != "pairs":
            args.use_scored_pairs = args.use_candidates = "no"
        if not args.warc_prefix and not args.wat:
            raise ConfigError("fetch-docs: give --warc-prefix (where the WARC files are) and/or --wat PATH...")
        for name in ("max_record_bytes", "concurrency", "attempts", "coalesce_span", "records_per_task"):
            if getattr(args, name) <= 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be positive")
        if args.record_seconds < 0:
            raise ConfigError("--record-seconds must be 0 (no limit) or positive")
        for name in ("site_boilerplate_pages", "max_site_pages"):
            if getattr(args, name) <= 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be positive")
        if not 0 < args.site_boilerplate_share <= 1 or args.near_duplicate_overlap <= 0:
            raise ConfigError("--site-boilerplate-share must be in (0, 1] and --near-duplicate-overlap positive")
        self.domain_terms = self.load_domain_terms(args)

    def load_domain_terms(self, args) -> list[domain_focus.DomainTerm]:
        """The --domain-terms list (and its lexicon translations); unusable lines are counted, none usable fails."""
        if not args.domain_terms:
            if args.domain_lexicon:
                raise ConfigError("--domain-lexicon translates --domain-terms: give --domain-terms FILE")
            return []
        try:
            terms, bad_lines = domain_focus.load_domain_terms(args.domain_terms)
            lexicons = [load_lexicon(path) for path in args.domain_lexicon]
        except OSError as error:
            raise ConfigError(f"--domain-terms/--domain-lexicon: {error}") from error
        if not terms:
            raise ConfigError(f"--domain-terms {args.domain_terms}: no usable term line ({bad_lines} unusable)")
        if args.min_domain_terms < 1:
            raise ConfigError("--min-domain-terms must be at least 1")
        untranslated = 0
        for lexicon in lexicons:
            translated, missing = domain_focus.translate_terms(terms, lexicon)
            terms, untranslated = terms + translated, untranslated + missing
        self.domain_facts = {"terms": len(terms), "unusable_lines": bad_lines, "untranslated_terms": untranslated,
                             "min_relevance": args.min_relevance, "min_domain_terms": args.min_domain_terms}
        return terms

    def settings(self) -> FetchSettings:
        a = self.args
        return FetchSettings(warc_prefix=a.warc_prefix or "", concurrency=a.concurrency, attempts=a.attempts,
                             coalesce=not a.no_coalesce, max_gap_bytes=a.coalesce_gap, max_span_bytes=a.coalesce_span,
                             max_record_bytes=a.max_record_bytes, s3_endpoint=a.s3_endpoint,
                             read_timeout=a.read_timeout)

    def selected_urls(self) -> DataFrame:
        """Distinct URLs to fetch, joined to their best capture in `urls` (in_index false when absent)."""
        urls = self.read_table("urls")
        if self.args.select == "pairs":
            table = "scored_pairs" if self.uses("scored_pairs") else "candidates"
            pairs = self.read_table(table)
            wanted = pairs.select(F.col("src_url").alias("url")).union(pairs.select(F.col("trg_url").alias("url")))
        else:
            wanted = urls.select("url")
            if self.args.select == "shortlist":  # `all` is every URL, whatever tables lie beside urls
                wanted = self.urls_of_shortlisted_sites(urls)
            elif self.args.select == "sites":
                wanted = self.urls_of_discovered_sites(urls)
        order = [F.col("warc_filename").isNull().asc()]
        if "status" in urls.columns:
            order.append((F.col("status").cast("string") == "200").desc())
        if "fetch_time" in urls.columns:
            order.append(F.col("fetch_time").desc_nulls_last())
        best = (urls.withColumn("_rank", F.row_number().over(Window.partitionBy("url").orderBy(*order)))
                .where("_rank = 1").select("url", "host", "warc_filename", F.col("warc_offset").cast("long"),
                                           F.col("warc_length").cast("long"), F.lit(True).alias("in_index")))
        return (wanted.where(F.col("url").isNotNull()).distinct().join(best, "url", "left")
                .withColumn("in_index", F.coalesce("in_index", F.lit(False))).select(*SELECTION_COLUMNS))

    def urls_of_discovered_sites(self, urls: DataFrame) -> DataFrame:
        """Every URL of the sites discover-sites ranked (the first --max-sites), hosts grouped as it grouped them."""
        sites = self.read_table("discovered_sites")
        if self.args.max_sites:
            sites = sites.where(F.col("rank") <= self.args.max_sites)
        return self.urls_of_sites(urls, sites, sites.select("grouped_by").first())

    def urls_of_shortlisted_sites(self, urls: DataFrame) -> DataFrame:
        """Every URL of the shortlist's sites, hosts grouped as rank-pairs grouped them (rank_hosts.grouped_by)."""
        shortlist = self.read_table("shortlist")
        if "site" not in shortlist.columns:
            raise ConfigError("fetch-docs: the shortlist table has no `site` column (rerun shortlist)")
        grouped = self.read_table("rank_hosts").select("grouped_by").first() if self.store.table_exists("rank_hosts") \
            else None
        return self.urls_of_sites(urls, shortlist, grouped)

    @staticmethod
    def urls_of_sites(urls: DataFrame, sites: DataFrame, grouped) -> DataFrame:
        """The URLs of `sites` (site, src_lang, trg_lang rows): each URL's host grouped into its site by
        `grouped` (a row with grouped_by; None: the default grouping) and the first row's language labels."""
        first = sites.select("src_lang", "trg_lang").first()
        if first is None:
            return urls.select("url").limit(0)
        grouped_by = grouped["grouped_by"] if grouped is not None and grouped["grouped_by"] else "site"
        keys = ["host", "domain"] if "domain" in urls.columns else ["host"]
        hosts = with_site(urls.select(*keys).distinct(), (first["src_lang"], first["trg_lang"]), grouped_by)
        chosen = hosts.join(sites.select("site"), "site", "left_semi").select("host")
        return urls.join(chosen, "host", "left_semi").select("url")

    def fetch_warc(self, selection: DataFrame, partitions: int = 0, keep: bool = False) -> DataFrame:
        """The selection's records, fetched by `partitions` tasks (hashed by file); with `keep`, each finished
        task's rows also go to the resume area."""
        partitions = partitions or self.args.partitions or self.spark.sparkContext.defaultParallelism
        fetch = bind(fetch_documents, settings=self.settings(), parse=functools.partial(
            parse_record, record_seconds=self.args.record_seconds or None, config=self.args.extraction))
        if keep:
            fetch = self.kept(fetch, resume.task_warc_part)
        return (selection.repartition(partitions, "warc_filename")
                .sortWithinPartitions("warc_filename", "warc_offset").mapInPandas(fetch, RECORD_SCHEMA))

    def kept(self, work, name_of) -> Callable:
        """A mapInPandas body that keeps each finished task's rows in the resume area before handing them on."""
        arrow_schema = to_arrow_schema(self.spark.createDataFrame([], RECORD_SCHEMA).schema)
        return bind(resume.kept_task, work=work, area=self.resume_area(), name_of=name_of, arrow_schema=arrow_schema)

    def resume_area(self) -> str:
        return resume.area_path(self.args.root, self.name)

    def load_resume_plan(self) -> None:
        """Carry on an interrupted run with the same arguments, inputs and docs version: its finished tasks."""
        identity = {"fingerprint": self.report.data["fingerprint"],
                    "docs_version": self.store.current_version("docs")}  # the URLs already ok
        self.plan = resume.load_plan(self.resume_area(), identity) or identity
        self.finished = resume.finished_parts(self.resume_area()) if "partitions" in self.plan else set()

    def save_resume_plan(self, selected: int) -> int:
        """The number of WARC fetch partitions: the interrupted run's, else --partitions, else about
        --records-per-task URLs per task (at least Spark's parallelism); saved before any task runs."""
        if "partitions" not in self.plan:
            wanted = math.ceil(selected / self.args.records_per_task)
            partitions = self.args.partitions or max(self.spark.sparkContext.defaultParallelism, wanted)
            self.plan = {**self.plan, "partitions": partitions}
            resume.save_plan(self.resume_area(), self.plan)
        self.report.metric("fetch_partitions", self.plan["partitions"])
        return self.plan["partitions"]

    def fetch_selection(self, selection: DataFrame, partitions: int) -> DataFrame:
        """The selection's records still to fetch; an interrupted run's finished partitions are read back."""
        done = resume.warc_partitions(self.finished)
        if done:  # the partition repartition(partitions, "warc_filename") puts each row in
            selection = selection.where(~F.pmod(F.hash("warc_filename"), F.lit(partitions)).isin(done))
        self.read_resumed([resume.warc_part(partition) for partition in done])
        return self.fetch_warc(selection, partitions, keep=True)

    def read_resumed(self, parts: list[str]) -> None:
        """The rows of the kept parts named, counted as resumed; fresh_rows reads them from their Parquet files
        (only the columns each step needs) rather than caching them again."""
        if parts:
            kept = self.spark.read.schema(RECORD_SCHEMA).parquet(
                *[resume.part_path(self.resume_area(), name) for name in parts])
            self.resumed["partitions"] += len(parts)
            self.resumed["records"] += kept.count()
            self.resumed_rows.append(kept)

    def commit_outputs(self) -> None:
        """Switch the tables in, then drop the kept fetch tasks: they served this run only."""
        super().commit_outputs()
        try:
            resume.remove_area(self.resume_area())
        except OSError as error:  # the next run with other inputs or docs removes it
            self.log.warning("%s: could not remove %s: %s", self.name, self.resume_area(), error)

    def resolve_revisits(self, fresh: DataFrame) -> DataFrame:
        """Each revisit row replaced by its original's doc where `urls` holds the original capture (same URL and
        time as WARC-Refers-To-Target-URI / -Date); the rest stay `revisit_unresolved`."""
        revisits = fresh.where("source = 'warc' AND status = 'revisit_unresolved' AND refers_to_url IS NOT NULL")
        urls = self.read_table("urls")
        if "fetch_time" not in urls.columns or revisits.isEmpty():
            return fresh
        when = (F.date_format("fetch_time", "yyyyMMddHHmmss") if dict(urls.dtypes)["fetch_time"] == "timestamp"
                else F.substring(F.regexp_replace(F.col("fetch_time").cast("string"), "[^0-9]", ""), 1, 14))
        captures = urls.select(F.col("url").alias("refers_to_url"), when.alias("when"),
                               F.col("warc_filename").alias("file"), F.col("warc_offset").cast("long").alias("offset"),
                               F.col("warc_length").cast("long").alias("length"))
        wanted = revisits.select("url", "host", "refers_to_url", "refers_to_date", "warc_filename", "warc_offset",
                                 F.substring(F.regexp_replace("refers_to_date", "[^0-9]", ""), 1, 14).alias("when"))
        matched = (wanted.join(captures, ["refers_to_url", "when"])
                   .where((F.col("file") != F.col("warc_filename")) | (F.col("offset") != F.col("warc_offset")))
                   .withColumn("_rank", F.row_number().over(Window.partitionBy("url").orderBy("file", "offset")))
                   .where("_rank = 1"))
        selection = matched.select("url", "host", F.col("file").alias("warc_filename"),
                                   F.col("offset").alias("warc_offset"), F.col("length").alias("warc_length"),
                                   F.lit(True).alias("in_index"))
        originals = self.fetch_warc(selection).drop("refers_to_url", "refers_to_date").join(
            matched.select("url", "refers_to_url", "refers_to_date"), "url").withColumn("is_new", F.lit(True))
        replaced = originals.select("url", F.lit("warc").alias("source"))
        resolved = fresh.join(replaced, ["url", "source"], "left_anti").unionByName(originals)
        return self.persist(resolved, StorageLevel.DISK_ONLY)

    def read_wat(self) -> DataFrame:
        """WAT rows, one task per file; files an interrupted run finished are read back from the resume area."""
        files = [f for path in self.args.wat for f in storage.list_files(path, endpoint=self.args.s3_endpoint)]
        if not files:
            raise ConfigError(f"fetch-docs: no WAT files found under {self.args.wat}")
        done = [path for path in files if resume.wat_part(path) in self.finished]
        todo = [path for path in files if path not in done]
        paths = self.spark.createDataFrame(pd.DataFrame({"path": todo}, dtype=object), "path string")
        read = self.kept(bind(read_wat_files, s3_endpoint=self.args.s3_endpoint,
                              max_label_words=self.args.extraction.max_label_words), resume.task_wat_part)
        self.read_resumed([resume.wat_part(path) for path in done])
        return paths.repartition(max(len(todo), 1)).mapInPandas(read, RECORD_SCHEMA)

    def pending_selection(self, previous: DataFrame | None) -> tuple[DataFrame, int]:
        """(selected URLs without an 'ok' doc yet, number selected); the skipped ones are counted already_ok."""
        selection = self.selected_urls()
        if previous is None:
            selection = self.persist(selection, StorageLevel.MEMORY_AND_DISK)
            return selection, selection.count()
        done = previous.where("status = 'ok'").select("url", F.lit(True).alias("done")).distinct()
        selection = self.persist(selection.join(done, "url", "left"), StorageLevel.MEMORY_AND_DISK)
        tally = {row["done"]: row["count"] for row in selection.groupBy("done").count().collect()}
        self.report.filtered("already_ok", tally.get(True, 0))
        return selection.where("done IS NULL").drop("done"), sum(tally.values())

    def process(self) -> None:
        try:
            self.fetch_and_write()
        finally:  # a failed run's cached frames would otherwise serve a rerun in the same session
            for frame in self.cached:
                frame.unpersist()

    def fetch_and_write(self) -> None:
        """Fetch the pending selection (and WAT files), count every record, write docs and texts."""
        previous = (self.read_table("docs").withColumn("is_new", F.lit(False)) if self.store.table_exists("docs")
                    else None)
        fresh, selected = self.fresh_rows(previous)
        wat_records = self.summarise_fresh(fresh)
        self.report.input("requested", selected + wat_records + self.report.data["bad"].get("bad_wat_file", 0))
        self.report.metric("selected_urls", selected)
        self.report.metric("html_walk", WALK_ENGINE)  # the driver's; workers with the same install run the same
        candidates = fresh.where("url IS NOT NULL AND status != 'not_response'")
        if previous is not None:
            kept_columns = [c for c in DOC_COLUMNS if c in previous.columns]
            candidates = candidates.unionByName(previous.select(*kept_columns, "is_new"), allowMissingColumns=True)
        ranked, shuffled = ranked_captures(candidates)
        if shuffled:  # ranked once, for the counts, docs and texts
            ranked = self.persist(ranked, StorageLevel.DISK_ONLY)
        counts, carried_over = {}, 0
        for row in ranked.groupBy("is_new", (F.col("_rank") == 1).alias("first"), "status").count().collect():
            if not row["is_new"]:
                carried_over += row["count"] if row["first"] else 0
                continue
            reason = row["status"] if row["first"] else "duplicate"
            counts[reason] = counts.get(reason, 0) + row["count"]
        self.report.add_counts(counts, bad_reasons=(*self.BAD_REASONS, *warc_fetch.BAD_REASONS,
                                                    *warc_record.BAD_REASONS, *documents.BAD_REASONS),
                               filtered_reasons=self.FILTERED_REASONS)
        self.report.metric("carried_over", carried_over)
        self.write_table(ranked.where("_rank = 1").select(*DOC_COLUMNS), "docs")
        self.write_texts(ranked.where("_rank = 1 AND is_new AND source = 'warc' AND status = 'ok'"))

    def fresh_rows(self, previous: DataFrame | None) -> tuple[DataFrame, int]:
        """(this run's rows, fetched or read back from an interrupted run's finished tasks, revisits resolved;
        the number of URLs selected)."""
        new_rows, selected = [], 0
        self.load_resume_plan()
        if self.args.warc_prefix:
            selection, selected = self.pending_selection(previous)
            new_rows.append(self.fetch_selection(selection, self.save_resume_plan(selected)))
        else:
            self.save_resume_plan(0)
        if self.args.wat:
            new_rows.append(self.read_wat())
        self.report.metric("resumed_partitions", self.resumed["partitions"])
        self.report.metric("resumed_records", self.resumed["records"])
        fetched = self.persist(functools.reduce(DataFrame.unionByName, new_rows),
                               StorageLevel.DISK_ONLY)  # fetched once, counted and written from disk
        fresh = functools.reduce(DataFrame.unionByName, self.resumed_rows, fetched).withColumn("is_new", F.lit(True))
        return (self.resolve_revisits(fresh) if self.args.warc_prefix else fresh), selected

    def site_settings(self) -> SiteTextSettings:
        a = self.args
        return SiteTextSettings(min_share=a.site_boilerplate_share, min_pages=a.site_boilerplate_pages,
                                min_overlap=a.near_duplicate_overlap)

    def write_texts(self, fetched: DataFrame) -> None:
        """`texts` for the pages fetched now (and those of an earlier run not fetched again), site pass applied."""
        pages = fetched.select("url", "host", F.col("cld2_lang").alias("lang"), "title",
                               F.col("page_paragraphs").alias("paragraphs"), "text_truncated", *METADATA_SCHEMA)
        if self.store.table_exists("texts"):
            earlier = self.read_table("texts")
            for name, kind in METADATA_SCHEMA.items():  # a texts table written before the metadata columns
                if name not in earlier.columns:
                    earlier = earlier.withColumn(name, F.lit(None).cast(kind))
            earlier = earlier.select(*pages.columns)
            pages = pages.unionByName(earlier.join(pages.select("url"), "url", "left_anti"))
        texts = self.with_domain_focus(self.site_pass(pages))
        self.write_table(texts.select(*TEXT_COLUMNS, *(domain_focus.FOCUS_COLUMNS if self.domain_terms else ())),
                         "texts")
        self.summarise_texts(self.read_table("texts"))

    def with_domain_focus(self, texts: DataFrame) -> DataFrame:
        """--domain-terms: each page's ILSP-FC relevance (title, description, keywords, main text) and in-domain
        flag."""
        if not self.domain_terms:
            return texts
        scored = texts.select("url", "lang", "title", "description", "keywords", "main_text").mapInPandas(bind(
            domain_focus.score_texts, terms=self.domain_terms, min_score=self.args.min_relevance,
            min_terms=self.args.min_domain_terms), f"url string, {domain_focus.FOCUS_SCHEMA}")
        texts = self.persist(texts, StorageLevel.DISK_ONLY)  # the site pass once, for both sides of the join
        return texts.join(scored, "url", "left")

    def site_pass(self, pages: DataFrame) -> DataFrame:
        """Per site (groupBy + applyInPandas, big sites split): repeated paragraphs marked, near-duplicates found."""
        size = F.count("*").over(Window.partitionBy("host"))
        per_page = pages.select(
            "host", "url", F.col("paragraphs.hash").alias("hashes"), F.col("paragraphs.boilerplate").alias("boilerplate"),
            F.transform("paragraphs", lambda p: F.length(p["text"])).alias("chars"),
            F.when(size > self.args.max_site_pages,
                   F.pmod(F.xxhash64("url"), F.ceil(size / self.args.max_site_pages))).otherwise(0).alias("part"))
        site = per_page.groupBy("host", "part").applyInPandas(
            bind(site_text_pass, settings=self.site_settings()), SITE_PASS_SCHEMA)
        repeated = F.coalesce(F.col("repeated_hashes"), F.array().cast("array<string>"))
        marked = F.transform("paragraphs", lambda p: p.withField(
            "boilerplate", p["boilerplate"] | F.array_contains(repeated, p["hash"])))
        texts = pages.join(site, "url", "left").withColumn("paragraphs", marked)
        main = F.filter("paragraphs", lambda p: ~p["boilerplate"])
        status = (F.when(F.coalesce(F.size("paragraphs"), F.lit(0)) <= 0, "no_text")
                  .when(F.size(main) == 0, "boilerplate_only").otherwise("ok"))
        return (texts.withColumn("main_text", F.concat_ws("\n", F.transform(main, lambda p: p["text"])))
                .withColumn("status", status))

    def summarise_texts(self, texts: DataFrame) -> None:
        """Report: texts by status, truncated pages, near-duplicates, boilerplate paragraphs."""
        row = texts.agg(
            F.count("*").alias("rows"), F.sum(F.col("text_truncated").cast("int")).alias("truncated"),
            F.sum(F.col("metadata_truncated").cast("int")).alias("metadata_truncated"),
            F.count("description").alias("with_description"), F.count("keywords").alias("with_keywords"),
            F.count("duplicate_of").alias("near_duplicates"),
            F.sum(F.size("paragraphs")).alias("paragraphs"),
            F.sum(F.size(F.filter("paragraphs", lambda p: p["boilerplate"]))).alias("boilerplate"),
        ).first()
        by_status = {r["status"]: r["count"] for r in texts.groupBy("status").count().collect()}
        self.report.metric("texts", int(row["rows"]))
        self.report.metric("texts_by_status", by_status)
        self.report.metric("texts_truncated", int(row["truncated"] or 0))
        self.report.metric("texts_metadata_truncated", int(row["metadata_truncated"] or 0))
        self.report.metric("texts_with_description", int(row["with_description"]))
        self.report.metric("texts_with_keywords", int(row["with_keywords"]))
        self.report.metric("near_duplicates", int(row["near_duplicates"]))
        self.report.metric("paragraphs", int(row["paragraphs"] or 0))
        self.report.metric("boilerplate_paragraphs", int(row["boilerplate"] or 0))
        self.report.metric("site_pass", {**self.site_settings().__dict__, "max_site_pages": self.args.max_site_pages})
        if self.domain_terms:
            in_domain = {bool(r["in_domain"]): r["count"] for r in texts.groupBy("in_domain").count().collect()}
            self.report.metric("domain_focus", {**self.domain_facts, "in_domain_pages": in_domain.get(True, 0),
                                                "off_domain_pages": in_domain.get(False, 0)})

    def persist(self, frame: DataFrame, level: StorageLevel) -> DataFrame:
        """Persist a frame and remember it, so process() can release it at the end."""
        self.cached.append(frame.persist(level))
        return frame

    @staticmethod
    def transport_error(fresh: DataFrame) -> str | None:
        """The error of one record lost to the store (None when none was): what the report shows of the cause."""
        lost = fresh.where(F.col("status").isin(*range_reads.TRANSPORT_FAILURES)).select("error").first()
        return lost["error"] if lost else None

    def summarise_fresh(self, fresh: DataFrame) -> int:
        """One pass over the new rows: GETs, bytes, WAT records; returns the WAT records that are documents."""
        fetched = F.col("range_records") > 0
        rows = fresh.groupBy("source", F.col("url").isNull().alias("unkeyed"),
                             (F.col("status") == "not_response").alias("other")).agg(
            F.count("*").alias("rows"), F.sum(F.when(fetched, 1).otherwise(0)).alias("records"),
            F.sum(F.when(fetched, F.col("fetch_attempts") / F.col("range_records"))).alias("requests"),
            F.sum(F.when(fetched, (F.col("fetch_attempts") - 1) / F.col("range_records"))).alias("retries"),
            F.sum(F.when(fetched, F.col("warc_length"))).alias("bytes"),
            F.sum("outlinks_cut").alias("outlinks_cut"), F.sum("images_cut").alias("images_cut"),
            F.sum(F.when((F.col("outlinks_cut") > 0) | (F.col("images_cut") > 0), 1)).alias("cut_docs")).collect()
        wat_records = wat_other = 0
        for row in rows:
            if row["unkeyed"]:
                self.report.bad("bad_wat_file", row["rows"])
            elif row["source"] == "wat":
                wat_other += row["rows"] if row["other"] else 0
                wat_records += 0 if row["other"] else row["rows"]
        self.report.metric("records_fetched", sum(int(row["records"] or 0) for row in rows))
        self.report.store_reads(self.report.data["metrics"]["records_fetched"], self.transport_error(fresh))
        self.report.metric("get_requests", round(sum(float(row["requests"] or 0) for row in rows)))
        self.report.metric("get_retries", round(sum(float(row["retries"] or 0) for row in rows)))
        self.report.metric("record_bytes", sum(int(row["bytes"] or 0) for row in rows))
        self.report.metric("wat_records", wat_records)
        self.report.metric("wat_non_response_records", wat_other)
        for name in ("outlinks_cut", "images_cut", "cut_docs"):  # links over the per-record caps (warc_record)
            self.report.metric(name, sum(int(row[name] or 0) for row in rows))
        return wat_records


if __name__ == "__main__":
    FetchDocsJob().run()
