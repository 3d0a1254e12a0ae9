"""discover-sites: a cheap first list of sites likely to hold a language pair, before any pair is ranked.

Reads `urls` (the index: page languages and URLs) and, when there, `docs` (fetched pages' language-switcher
links; fetch-docs --wat alone is enough: a page's language is then the index's). Per site (hosts grouped as rank-pairs groups them): URLs per language, URLs whose markers name each
language, fetched pages of one language linking with a language cue to the other, and whether a home page
does. One point per kind of evidence showing both languages plus the balance of the two sides ranks the sites
(udfs/index/site_discovery.py). With --truth ARCHIVE/truth/hosts.parquet, precision and recall at top-k against
the sites that truly hold both languages go into the report.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.jobs.language_pairs import language_pair_option
from parascout.udfs.common.sites import GROUPINGS, with_site
from parascout.udfs.index import site_discovery
from parascout.udfs.index.site_discovery import EVIDENCE_KINDS, SITE_COLUMNS, bind_url_markers, precision_recall_at

PRECISION_KS = (5, 10, 20, 50)


def count_if(condition):
    """Rows where a condition holds (0 for none; a null condition counts as false)."""
    return F.sum(F.when(condition, 1).otherwise(0)).cast("long")


def switcher_shows_both():
    """Links show both languages: one direction where the index knows a page language of the pair (a page in A
    linking to B), both directions where it knows neither (pages of unknown language linking to A and to B)."""
    to_trg, to_src = F.col("switcher_pages_src") > 0, F.col("switcher_pages_trg") > 0
    return (to_trg & to_src) | ((to_trg | to_src) & (F.col("urls_src") + F.col("urls_trg") > 0))


class DiscoverSitesJob(Job):
    name = "discover-sites"
    description = "rank sites likely to hold a language pair from index languages, URL markers and switcher links"
    outputs = ("discovered_sites",)
    inputs = ("urls",)
    optional_inputs = ("docs",)
    later_inputs = ("docs",)  # a second pass scores sites by their fetched pages too
    input_paths = ("truth",)
    BAD_REASONS = site_discovery.BAD_REASONS
    FILTERED_REASONS = site_discovery.FILTERED_REASONS

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--langs", help="the language pair, e.g. en,fr (ISO 639-1 or 639-3)")
        parser.add_argument("--group-by", choices=GROUPINGS, default="site",
                            help="site: a host without www and language labels (en.example.com = example.com); domain: the "
                                 "registered domain; name: its name on every suffix (example.de + example.fr); host")
        parser.add_argument("--truth", metavar="PARQUET",
                            help="sites' true languages (host, languages), e.g. ARCHIVE/truth/hosts.parquet: "
                                 "precision/recall at top-k in the report")

    def validate_arguments(self, args) -> None:
        super().validate_arguments(args)
        self.languages = language_pair_option(args.langs)
        if not self.languages:
            raise ConfigError("discover-sites: --langs A,B is required (e.g. --langs en,fr)")

    def process(self) -> None:
        src, trg = self.languages
        urls = self.read_table("urls")
        urls = urls.select("url", "host", *(["domain"] if "domain" in urls.columns else []), "lang")
        total = urls.count()
        self.report.input("urls", total)
        urls = urls.where(F.col("host").isNotNull())
        self.report.bad("no_host", total - urls.count())
        sites = with_site(urls, self.languages, self.args.group_by)
        markers = sites.select("site", "url", "lang").mapInPandas(bind_url_markers(src, trg),
                                                                  site_discovery.MARKER_SCHEMA)
        per_site = markers.groupBy("site").agg(
            F.count("*").alias("n_urls"), count_if(F.col("lang") == src).alias("urls_src"),
            count_if(F.col("lang") == trg).alias("urls_trg"), count_if(F.col("marker") == src).alias("marked_src"),
            count_if(F.col("marker") == trg).alias("marked_trg"))
        n_hosts = sites.groupBy("site").agg(F.countDistinct("host").alias("n_hosts"))
        evidence = per_site.join(n_hosts, "site").join(self.switcher_evidence(), "site", "left").fillna(
            0, ["pages_fetched", "switcher_pages_src", "switcher_pages_trg"]).fillna(False, ["home_switcher"])
        scored = self.score(evidence)
        candidates = scored.where(F.col("evidence") > 0)
        kept_urls = int(candidates.agg(F.sum("n_urls")).first()[0] or 0)
        self.report.kept(kept_urls)
        self.report.filtered("one_language_site", total - self.report.total_bad - kept_urls)
        order = Window.orderBy(F.desc("score"), F.desc(F.least("urls_src", "urls_trg")), "site")
        rows = self.write_table(candidates.withColumn("rank", F.row_number().over(order))
                                .select(*SITE_COLUMNS), "discovered_sites")
        self.report.metric("sites_by_evidence", {str(k): v for k, v in sorted(
            self.count_by(scored, "evidence").items())})
        kinds = candidates.agg(*[count_if(F.col(kind)).alias(kind) for kind in EVIDENCE_KINDS]).first()
        self.report.metric("candidate_sites_by_evidence_kind", kinds.asDict())
        self.evaluate(rows)

    def score(self, evidence: DataFrame) -> DataFrame:
        src, trg = self.languages
        side_src, side_trg = F.greatest("urls_src", "marked_src"), F.greatest("urls_trg", "marked_trg")
        both_sides = (side_src > 0) & (side_trg > 0)
        shown = dict(zip(EVIDENCE_KINDS, (
            (F.col("urls_src") > 0) & (F.col("urls_trg") > 0),
            ((F.col("marked_src") > 0) | (F.col("marked_trg") > 0)) & both_sides,
            switcher_shows_both())))
        for kind, condition in shown.items():
            evidence = evidence.withColumn(kind, condition)
        points = sum(F.col(kind).cast("int") for kind in EVIDENCE_KINDS)
        balance = F.when(F.greatest(side_src, side_trg) > 0,
                         F.least(side_src, side_trg) / F.greatest(side_src, side_trg)).otherwise(0.0)
        return (evidence.withColumn("evidence", points).withColumn("balance", balance)
                .withColumn("score", F.col("evidence") + F.col("balance"))
                .withColumn("src_lang", F.lit(src)).withColumn("trg_lang", F.lit(trg))
                .withColumn("grouped_by", F.lit(self.args.group_by)))

    def switcher_evidence(self) -> DataFrame:
        """Per site: fetched pages, pages of one language whose links carry a cue for the other, home switcher."""
        src, trg = self.languages
        schema = "site string, pages_fetched long, switcher_pages_src long, switcher_pages_trg long, " \
                 "home_switcher boolean"
        if not self.uses("docs"):
            return self.spark.createDataFrame([], schema)
        docs = self.read_table("docs").where((F.col("status") == "ok") & F.col("host").isNotNull())
        cues = F.coalesce(F.col("outlink_cues"), F.array().cast("array<string>"))
        index_lang = self.read_table("urls").select("url", F.col("lang").alias("index_lang")).dropDuplicates(["url"])
        page = docs.join(index_lang, "url", "left").select(  # WAT rows have no CLD2 language: the index's then
            "host", "url", F.coalesce("cld2_lang", "index_lang").alias("lang"), cues.alias("cues"))
        unknown = F.col("lang").isNull()  # no CLD2 and no index language (crawls before 2018 have none)
        to_trg = ((F.col("lang") == src) | unknown) & F.array_contains("cues", trg)
        to_src = ((F.col("lang") == trg) | unknown) & F.array_contains("cues", src)
        home = F.regexp_extract("url", r"^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]+(/[^?#]*)?", 1).isin("", "/")
        sited = with_site(page, self.languages, self.args.group_by)
        return sited.groupBy("site").agg(
            F.count("*").alias("pages_fetched"), count_if(to_trg).alias("switcher_pages_src"),
            count_if(to_src).alias("switcher_pages_trg"), F.max(F.coalesce(home & (to_trg | to_src), F.lit(False)))
            .alias("home_switcher"))

    def evaluate(self, rows: int) -> None:
        """--truth: precision/recall at top-k of the ranking against the sites holding both languages."""
        if not self.args.truth:
            self.report.metric("evaluation", "no --truth: not evaluated")
            return
        truth = self.spark.read.parquet(self.args.truth)
        if not {"host", "languages"} <= set(truth.columns):
            raise ConfigError("discover-sites: --truth needs host and languages columns (truth/hosts.parquet)")
        src, trg = self.languages
        bilingual = truth.where(F.array_contains("languages", src) & F.array_contains("languages", trg))
        relevant = {row["site"] for row in with_site(bilingual.select("host"), self.languages, self.args.group_by)
                    .select("site").collect()}
        ranked = [row["site"] for row in self.read_table("discovered_sites").orderBy("rank").select("site").collect()]
        self.report.metric("evaluation", precision_recall_at(ranked, relevant, PRECISION_KS))


if __name__ == "__main__":
    DiscoverSitesJob().run()
