"""shortlist: rank sites by their predicted number of parallel pairs; evaluate against truth or verified pairs.

Reads `rank_hosts` (URLs per language per site) and `alignment` from rank-pairs. A
site's prediction is its number of 1-1 aligned pairs with score >= --min-score (and
the sum of aligned scores as `expected_pairs`); the ratio divides by the smaller
language side. With `verified_pairs` or `--truth truth/pairs.parquet` the ranking is
compared with true pair counts: Spearman's rho and precision@5/10/20 in the report.
When export-bitext ran first, each site also carries its yield: documents, sentence pairs and
words per language exported (`bitext_*`, 0 for a site with none). With --in-domain-only (fetch-docs ran
with --domain-terms), only aligned pairs with a page in the domain count (udfs/rank/domain_focus.py).
Several pairs (--langs en:fr,de) are shortlisted in one pass: each pair's sites ranked apart, in its lang_pair
partition, with its yield and evaluation in the report (metrics.by_pair) and a summary across pairs; a pair
rank-pairs ranked no site of is a counted skip.
"""
from __future__ import annotations

import functools

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.jobs.language_pairs import PairSkipped, language_pairs_option
from parascout.udfs.common.langs import pair_label
from parascout.udfs.common.sites import with_site
from parascout.udfs.common.table_store import PAIR_COLUMN
from parascout.udfs.export.shortlist import (
    BITEXT_YIELD_COLUMNS,
    DEFAULT_PRECISION_KS,
    SHORTLIST_COLUMNS,
    evaluate_shortlist,
)
from parascout.udfs.rank.domain_focus import pairs_in_domain

#: a pair's shortlist yield in the report (metrics.by_pair) and its sum over the pairs (metrics.summary)
SUMMARY_KEYS = ("sites_to_crawl", "predicted_pairs", *BITEXT_YIELD_COLUMNS)


class ShortlistJob(Job):
    name = "shortlist"
    description = "rank sites by predicted parallel pairs (1-1 alignment above a score); Spearman / precision@k"
    outputs = ("shortlist",)
    inputs = ("rank_hosts", "alignment")
    input_paths = ("truth",)
    optional_inputs = ("verified_pairs", "bitext_documents", "texts")

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--langs", help="language pair(s) to shortlist: en,fr, en:fr,de or en-fr,de-fr (default: "
                                            "the pair rank-pairs ranked)")
        parser.add_argument("--min-score", type=float, default=0.5, help="score of an aligned pair counted")
        parser.add_argument("--truth", metavar="PARQUET", help="true pairs (host, src_url, trg_url, src_lang, "
                                                                "trg_lang), e.g. ARCHIVE/truth/pairs.parquet")
        parser.add_argument("--relevant-min-pairs", type=int, default=5,
                            help="a site is relevant for precision@k with at least this many true pairs")
        parser.add_argument("--max-eval-hosts", type=int, default=200_000,
                            help="evaluate only when at most this many sites are compared (they go to the driver)")
        parser.add_argument("--in-domain-only", action="store_true",
                            help="count only aligned pairs with a page in the domain (texts.in_domain: fetch-docs "
                                 "--domain-terms)")

    def validate_arguments(self, args) -> None:
        super().validate_arguments(args)
        self.pairs = language_pairs_option(args.langs)
        if not 0 <= args.min_score <= 1 or args.relevant_min_pairs < 1:
            raise ConfigError("--min-score must be in [0, 1] and --relevant-min-pairs >= 1")
        if args.in_domain_only and args.use_texts == "no":
            raise ConfigError("--in-domain-only reads the texts table: drop --use-texts no")
        args.use_texts = "yes" if args.in_domain_only else "no"  # read for --in-domain-only alone

    def process(self) -> None:
        """Every language pair in one pass (the shortlist written once, with lang_pair), then each pair's report."""
        if not self.pairs:
            self.pairs = [self.languages_ranked()]
        hosts = self.read_table("rank_hosts")
        self.read = hosts.count()
        wanted = hosts.withColumn(PAIR_COLUMN, self.run_pair_label(F.concat_ws("-", "src_lang", "trg_lang"))).where(
            F.col(PAIR_COLUMN).isNotNull())
        grouped_by = F.first("grouped_by") if "grouped_by" in hosts.columns else F.lit("site")
        ranked = wanted.groupBy(PAIR_COLUMN).agg(F.count("*").alias("kept"), grouped_by.alias("grouped_by")).collect()
        self.kept = {row[PAIR_COLUMN]: int(row["kept"]) for row in ranked}
        self.grouped_by = {row[PAIR_COLUMN]: row["grouped_by"] for row in ranked}
        labels = [pair_label(pair) for pair in self.pairs if self.kept.get(pair_label(pair)) or len(self.pairs) == 1]
        self.domain_counts: dict[str, dict[str, int]] = {}
        self.found: dict[str, dict] = {label: {} for label in labels}  # what each pair reports, by shortlist()
        if labels:
            self.shortlist(wanted.where(F.col(PAIR_COLUMN).isin(*labels)), labels)
        self.for_each_pair(self.report_pair)
        by_pair = self.report.data["metrics"]["by_pair"]
        done = [label for label in by_pair if label not in self.report.data["metrics"].get("pairs_skipped", {})]
        self.report.metric("summary", {"pairs": done, **{key: sum(by_pair[label][key] for label in done)
                                                         for key in SUMMARY_KEYS}})

    def rows_by_pair(self, frame: DataFrame, labels: list[str]) -> DataFrame:
        """The rows of each pair `labels` names, lang_pair set to its label: by the lang_pair of a table written
        per pair (either direction); a table without one whole for every pair."""
        if PAIR_COLUMN not in frame.columns:
            return frame.withColumn(PAIR_COLUMN, F.explode(F.array(*[F.lit(label) for label in labels])))
        return frame.withColumn(PAIR_COLUMN, self.run_pair_label(F.col(PAIR_COLUMN))).where(
            F.col(PAIR_COLUMN).isin(*labels))

    def shortlist(self, wanted: DataFrame, labels: list[str]) -> None:
        """The shortlist of every pair `labels` names, ranked per pair, written once; its yield and evaluation
        collected per pair (self.found)."""
        aligned = (self.aligned_pairs(labels).groupBy(PAIR_COLUMN, "site").agg(
            F.sum((F.col("score") >= self.args.min_score).cast("long")).alias("predicted_pairs"),
            F.sum("score").alias("expected_pairs")))
        shortlist = (wanted.join(aligned, [PAIR_COLUMN, "site"], "left").fillna(0, ["predicted_pairs", "expected_pairs"])
                     .withColumn("predicted_ratio", F.coalesce(F.col("predicted_pairs") / F.least(
                         "n_urls_src", "n_urls_trg"), F.lit(0.0))))
        shortlist = self.with_bitext_yield(shortlist, labels)
        # one order per pair: the shortlist has one row per site holding both languages, not per URL
        order = Window.partitionBy(PAIR_COLUMN).orderBy(F.desc("predicted_pairs"), F.desc("predicted_ratio"), "site")
        self.write_table(shortlist.withColumn("rank", F.row_number().over(order))
                         .select(*SHORTLIST_COLUMNS, PAIR_COLUMN), "shortlist")
        written = self.read_table("shortlist")
        self.collect_yield(written)
        self.evaluate(written, labels)

    def report_pair(self, pair: tuple[str, str]) -> None:
        """One pair's counts and metrics, from what the one pass collected for it."""
        label = pair_label(pair)
        self.report.input("rank_hosts", self.read)
        kept = self.kept.get(label, 0)
        if not kept and len(self.pairs) > 1:
            raise PairSkipped("no_sites", "rank-pairs ranked no site of the pair")
        self.report.kept(kept)
        self.report.filtered("other_language_pair", self.read - kept)  # this pair's rows (primary_count sums the pairs)
        if self.args.in_domain_only:
            self.report.metric("aligned_pairs_by_domain", self.domain_counts.get(label, {}))
        found = self.found[label]
        self.report.metric("evaluation", found["evaluation"])
        for key in SUMMARY_KEYS:
            self.report.metric(key, found.get("yield_counts", {}).get(key, 0))

    def collect_yield(self, shortlist: DataFrame) -> None:
        """Per pair: its sites (rows), sites to crawl (a predicted pair), predicted pairs and the yield
        export-bitext measured."""
        rows = shortlist.groupBy(PAIR_COLUMN).agg(
            F.count("*").alias("rows"), F.sum((F.col("predicted_pairs") > 0).cast("long")).alias("sites_to_crawl"),
            F.sum("predicted_pairs").alias("predicted_pairs"),
            *[F.sum(column).alias(column) for column in BITEXT_YIELD_COLUMNS]).collect()
        for row in rows:
            self.found[row[PAIR_COLUMN]].update(rows=int(row["rows"]),
                                                yield_counts={key: int(row[key] or 0) for key in SUMMARY_KEYS})

    def result_line(self) -> str:
        top = self.read_table("shortlist").orderBy("rank").limit(3).collect()  # the closing line names the top sites
        return ("top sites: " + ", ".join(f"{row.site} ({row.predicted_pairs:,} predicted pairs)" for row in top)
                if top else "no site holds both languages")

    def aligned_pairs(self, labels: list[str]) -> DataFrame:
        """rank-pairs' 1-1 alignment of each pair; with --in-domain-only the pairs with a page in the domain
        (counts per pair)."""
        alignment = self.rows_by_pair(self.read_table("alignment"), labels)
        if not self.args.in_domain_only:
            return alignment
        kept, self.domain_counts = pairs_in_domain(alignment, self.read_table("texts"), by=PAIR_COLUMN,
                                                   error=ConfigError)
        return kept

    def with_bitext_yield(self, shortlist: DataFrame, labels: list[str]) -> DataFrame:
        """Documents, sentence pairs and words per language export-bitext exported per site (0 where none)."""
        if not self.uses("bitext_documents"):
            return shortlist.select("*", *[F.lit(0).cast("long").alias(c) for c in BITEXT_YIELD_COLUMNS])
        documents = self.rows_by_pair(self.read_table("bitext_documents"), labels).where(F.col("status") == "ok")
        same_side = F.col("src_lang") == F.substring_index(PAIR_COLUMN, "-", 1)
        exported = documents.groupBy(PAIR_COLUMN, "site").agg(
            F.count("*").alias("bitext_documents"), F.sum("sentence_pairs").alias("bitext_sentence_pairs"),
            F.sum(F.when(same_side, F.col("src_words")).otherwise(F.col("trg_words"))).alias("bitext_words_src"),
            F.sum(F.when(same_side, F.col("trg_words")).otherwise(F.col("src_words"))).alias("bitext_words_trg"))
        return shortlist.join(exported, [PAIR_COLUMN, "site"], "left").fillna(0, BITEXT_YIELD_COLUMNS)

    def truth_counts(self, labels: list[str]) -> tuple[DataFrame | None, bool]:
        """True pairs per pair and site from --truth (covers every site) or verified_pairs (only the checked
        sites)."""
        if self.args.truth:
            truth = self.spark.read.parquet(self.args.truth)
            if {"src_lang", "trg_lang"} <= set(truth.columns):
                truth = truth.withColumn(PAIR_COLUMN, self.run_pair_label(F.concat_ws("-", "src_lang", "trg_lang"))).where(
                    F.col(PAIR_COLUMN).isin(*labels))
            else:
                truth = truth.withColumn(PAIR_COLUMN, F.explode(F.array(*[F.lit(label) for label in labels])))
            return self.site_counts(truth), True
        if self.uses("verified_pairs"):
            verified = self.rows_by_pair(self.read_table("verified_pairs"), labels).filter(F.col("parallel"))
            return self.site_counts(verified), False
        return None, False

    def languages_ranked(self) -> tuple[str, str]:
        """The language pair rank-pairs ranked (its first site's): the shortlist's without --langs."""
        first = self.read_table("rank_hosts").select("src_lang", "trg_lang").first()
        return (first["src_lang"], first["trg_lang"]) if first else ("", "")

    def sites(self, frame: DataFrame) -> DataFrame:
        """(lang_pair, host, site) of the frame's hosts, each site named as rank-pairs named its pair's: by its
        --group-by, the pair's language labels left out."""
        hosts = (frame.select(PAIR_COLUMN, "host").distinct()
                 .withColumn("src_lang", F.substring_index(PAIR_COLUMN, "-", 1))
                 .withColumn("trg_lang", F.substring_index(PAIR_COLUMN, "-", -1)))
        groupings: dict[str, list[str]] = {}
        for label in self.found:
            groupings.setdefault(self.grouped_by.get(label, "site"), []).append(label)
        return functools.reduce(DataFrame.unionByName, [
            with_site(hosts.where(F.col(PAIR_COLUMN).isin(*labels)), None, grouped_by).select(PAIR_COLUMN, "host", "site")
            for grouped_by, labels in groupings.items()])

    def site_counts(self, pairs: DataFrame) -> DataFrame:
        """Distinct true pairs per pair and site, sites named the way rank-pairs named them."""
        pairs = pairs.select(PAIR_COLUMN, "host", "src_url", "trg_url").distinct()
        pairs = pairs.join(self.sites(pairs), [PAIR_COLUMN, "host"])
        return pairs.groupBy(PAIR_COLUMN, "site").agg(F.count("*").alias("true_pairs"))

    def evaluate(self, shortlist: DataFrame, labels: list[str]) -> None:
        """Each pair's ranking against its true pairs (self.found[label]['evaluation']): one read of the truth
        and one of the ranked sites for every pair."""
        truth, covers_all = self.truth_counts(labels)
        if truth is None:
            for label in labels:
                self.found[label]["evaluation"] = "no verified_pairs table and no --truth: not evaluated"
            return
        if not covers_all:
            truth = truth.join(shortlist.select(PAIR_COLUMN, "site"), [PAIR_COLUMN, "site"])
        nth = F.row_number().over(Window.partitionBy(PAIR_COLUMN).orderBy("site"))
        truth = truth.withColumn("nth", nth).where(F.col("nth") <= self.args.max_eval_hosts + 1).drop("nth").toPandas()
        truths, evaluated = {}, []
        for label in labels:
            truths[label] = truth[truth[PAIR_COLUMN] == label].drop(columns=PAIR_COLUMN)
            compared = self.found[label].get("rows", 0) + len(truths[label]) if covers_all else len(truths[label])
            if compared > self.args.max_eval_hosts:
                self.found[label]["evaluation"] = f"{compared} sites to compare, over --max-eval-hosts: not evaluated"
            else:
                evaluated.append(label)
        ranked = shortlist.where(F.col(PAIR_COLUMN).isin(*evaluated)).select(PAIR_COLUMN, "site", "predicted_pairs",
                                                                               "rank")
        if not covers_all:  # may be empty
            ranked = ranked.join(self.spark.createDataFrame(truth[[PAIR_COLUMN, "site"]], f"{PAIR_COLUMN} string, "
                                                            "site string"), [PAIR_COLUMN, "site"])
        ranked = ranked.toPandas() if evaluated else None
        for label in evaluated:
            metrics = evaluate_shortlist(ranked[ranked[PAIR_COLUMN] == label].drop(columns=PAIR_COLUMN), truths[label],
                                         self.args.relevant_min_pairs, DEFAULT_PRECISION_KS,
                                         truth_covers_all_hosts=covers_all)
            metrics["truth"] = "truth table" if covers_all else "verified_pairs"
            self.found[label]["evaluation"] = metrics


if __name__ == "__main__":
    ShortlistJob().run()
