"""shortlist: rank sites by their predicted number of parallel pairs; evaluate against truth or verified pairs.

Reads `rank_hosts` (URLs per language per site) and `alignment` from rank-pairs. A
site's prediction is its number of 1-1 aligned pairs with score >= --min-score (and
the sum of aligned scores as `expected_pairs`); the ratio divides by the smaller
language side. With `verified_pairs` or `--truth truth/pairs.parquet` the ranking is
compared with true pair counts: Spearman's rho and precision@5/10/20 in the report.
When export-bitext ran first, each site also carries its yield: documents, sentence pairs and
words per language exported (`bitext_*`, 0 for a site with none). With --in-domain-only (fetch-docs ran
with --domain-terms), only aligned pairs with a page in the domain count (udfs/rank/domain_focus.py).
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from parascout.jobs.base import ConfigError, Job, PairSkipped, language_pairs_option
from parascout.udfs.common.sites import with_site
from parascout.udfs.rank.shortlist import (
    BITEXT_YIELD_COLUMNS,
    DEFAULT_PRECISION_KS,
    SHORTLIST_COLUMNS,
    evaluate_shortlist,
)

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
        self.languages = None
        if not self.pairs:
            self.pairs = [self.languages_ranked()]
        self.for_each_pair(self.shortlist_pair)
        by_pair = self.report.data["metrics"]["by_pair"]
        done = [label for label in by_pair if label not in self.report.data["metrics"].get("pairs_skipped", {})]
        self.report.metric("summary", {"pairs": done, **{key: sum(by_pair[label][key] for label in done)
                                                         for key in SUMMARY_KEYS}})

    def shortlist_pair(self, languages: tuple[str, str]) -> None:
        """One language pair's shortlist, into its lang_pair partition, with the pair's yield in the report."""
        self.languages, self._ranked = languages, None
        hosts = self.read_table("rank_hosts")
        read = hosts.count()
        self.report.input("rank_hosts", read)
        pair = F.array_sort(F.array("src_lang", "trg_lang"))
        wanted = hosts.filter(pair == F.array_sort(F.array(*[F.lit(code) for code in self.languages])))
        kept = wanted.count()
        if not kept and len(self.pairs) > 1:
            raise PairSkipped("no_sites", "rank-pairs ranked no site of the pair")
        self.report.kept(kept)
        self.report.filtered("other_language_pair", read - kept)  # this pair's rows (primary_count sums the pairs)
        aligned = (self.aligned_pairs().groupBy("host").agg(
            F.sum((F.col("score") >= self.args.min_score).cast("long")).alias("predicted_pairs"),
            F.sum("score").alias("expected_pairs")))
        shortlist = (wanted.join(aligned, "host", "left").fillna(0, ["predicted_pairs", "expected_pairs"])
                     .withColumn("predicted_ratio", F.coalesce(F.col("predicted_pairs") / F.least(
                         "n_urls_src", "n_urls_trg"), F.lit(0.0))))
        shortlist = self.with_bitext_yield(shortlist)
        # one global order: the shortlist has one row per site holding both languages, not per URL
        order = Window.orderBy(F.desc("predicted_pairs"), F.desc("predicted_ratio"), "host")
        rows = self.write_table(shortlist.withColumn("rank", F.row_number().over(order))
                                .select(*SHORTLIST_COLUMNS), "shortlist")
        self.evaluate(self.read_table("shortlist"), rows)
        self.report_yield(self.read_table("shortlist"))

    def report_yield(self, shortlist: DataFrame) -> None:
        """The pair's sites to crawl (a predicted pair), predicted pairs and the yield export-bitext measured."""
        totals = shortlist.agg(F.sum((F.col("predicted_pairs") > 0).cast("long")).alias("sites_to_crawl"),
                               F.sum("predicted_pairs").alias("predicted_pairs"),
                               *[F.sum(column).alias(column) for column in BITEXT_YIELD_COLUMNS]).first()
        for key in SUMMARY_KEYS:
            self.report.metric(key, int(totals[key] or 0))

    def result_line(self) -> str:
        top = self.read_table("shortlist").orderBy("rank").limit(3).collect()  # the closing line names the top sites
        return ("top sites: " + ", ".join(f"{row.host} ({row.predicted_pairs:,} predicted pairs)" for row in top)
                if top else "no site holds both languages")

    def aligned_pairs(self) -> DataFrame:
        """rank-pairs' 1-1 alignment; with --in-domain-only the pairs with a page in the domain (counts reported)."""
        alignment = self.pair_rows(self.read_table("alignment"))
        if not self.args.in_domain_only:
            return alignment
        kept, counts = self.pairs_in_domain(alignment)
        self.report.metric("aligned_pairs_by_domain", counts)
        return kept

    def with_bitext_yield(self, shortlist: DataFrame) -> DataFrame:
        """Documents, sentence pairs and words per language export-bitext exported per site (0 where none)."""
        if not self.uses("bitext_documents"):
            return shortlist.select("*", *[F.lit(0).cast("long").alias(c) for c in BITEXT_YIELD_COLUMNS])
        src_lang = self.languages_ranked()[0]
        documents = with_site(self.pair_rows(self.read_table("bitext_documents")).where(F.col("status") == "ok").drop("site"),
                              self.languages_ranked(), self.ranked["grouped_by"])
        same_side = F.col("src_lang") == src_lang
        exported = documents.groupBy(F.col("site").alias("host")).agg(
            F.count("*").alias("bitext_documents"), F.sum("sentence_pairs").alias("bitext_sentence_pairs"),
            F.sum(F.when(same_side, F.col("src_words")).otherwise(F.col("trg_words"))).alias("bitext_words_src"),
            F.sum(F.when(same_side, F.col("trg_words")).otherwise(F.col("src_words"))).alias("bitext_words_trg"))
        return shortlist.join(exported, "host", "left").fillna(0, BITEXT_YIELD_COLUMNS)

    def truth_counts(self) -> tuple[DataFrame | None, bool]:
        """True pairs per site from --truth (covers every site) or verified_pairs (only the checked sites)."""
        if self.args.truth:
            truth = self.spark.read.parquet(self.args.truth)
            langs = self.languages_ranked()
            if {"src_lang", "trg_lang"} <= set(truth.columns):
                truth = truth.filter(F.col("src_lang").isin(*langs) & F.col("trg_lang").isin(*langs)
                                     & (F.col("src_lang") != F.col("trg_lang")))
            return self.site_counts(truth), True
        if self.uses("verified_pairs"):
            verified = self.pair_rows(self.read_table("verified_pairs")).filter(F.col("parallel"))
            return self.site_counts(verified), False
        return None, False

    @property
    def ranked(self) -> dict:
        """Language pair and site definition ('site' | 'host' | 'domain') of the rank-pairs run (of the pair)."""
        if getattr(self, "_ranked", None) is None:
            first = self.pair_rows(self.read_table("rank_hosts")).select("src_lang", "trg_lang", "grouped_by").first()
            self._ranked = first.asDict() if first else {"src_lang": "", "trg_lang": "", "grouped_by": "site"}
        return self._ranked

    def languages_ranked(self) -> tuple[str, str]:
        return self.languages or (self.ranked["src_lang"], self.ranked["trg_lang"])

    def site_counts(self, pairs: DataFrame) -> DataFrame:
        """Distinct true pairs per site, sites named the way rank-pairs named them."""
        pairs = pairs.select("host", "src_url", "trg_url").distinct()
        grouped_by = self.ranked["grouped_by"]
        if grouped_by != "host":
            sites = with_site(pairs.select("host").distinct(), self.languages_ranked(), grouped_by)
            pairs = pairs.join(sites.select("host", "site"), "host").withColumn("host", F.col("site"))
        return pairs.groupBy("host").agg(F.count("*").alias("true_pairs"))

    def evaluate(self, shortlist: DataFrame, shortlist_rows: int) -> None:
        truth, covers_all = self.truth_counts()
        if truth is None:
            self.report.metric("evaluation", "no verified_pairs table and no --truth: not evaluated")
            return
        if not covers_all:
            truth = truth.join(shortlist.select("host"), "host")
        truth = truth.limit(self.args.max_eval_hosts + 1).toPandas()
        compared = shortlist_rows + len(truth) if covers_all else len(truth)
        if compared > self.args.max_eval_hosts:
            self.report.metric("evaluation", f"{compared} sites to compare, over --max-eval-hosts: not evaluated")
            return
        ranked = shortlist.select("host", "predicted_pairs", "rank")
        if not covers_all:
            ranked = ranked.join(self.spark.createDataFrame(truth[["host"]], "host string"), "host")  # may be empty
        metrics = evaluate_shortlist(ranked.toPandas(), truth, self.args.relevant_min_pairs, DEFAULT_PRECISION_KS,
                                     truth_covers_all_hosts=covers_all)
        metrics["truth"] = "truth table" if covers_all else "verified_pairs"
        self.report.metric("evaluation", metrics)


if __name__ == "__main__":
    ShortlistJob().run()
