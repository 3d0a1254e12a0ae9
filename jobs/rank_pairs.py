"""rank-pairs: candidate URL pairs per site by blocking, scored by a model cascade, aligned 1-1.

Per site (a host without its language subdomain: en.example.is and example.is are one
site), URLs of the two languages are paired by seven blockers — STRAND handle buckets
(the `candidates` table), token-Jaccard top-k (udfs/rank/blocking/), and from the `docs` table
links whose context names the target's language (`cue`: a language switcher, or rare third-language
alternates both pages link to), links both ways (`link`), shared rare image names (ILSP-FC),
nearest paragraph-length profiles (STRAND's length correlation) and, for pages no handle pairs, the handle
counterparts of what they link (`neighbours`) — never by the Cartesian product. Huge sites are split into
bounded groups by language-neutral path prefix, then by handle hash, before any
applyInPandas. The fast pair model scores every candidate, the rescoring model the
top-k per URL; what the links between two pages say (switcher links either way, their language cues,
shared alternates, a shared rare image) adds fitted log-odds to the URL score (udfs.rank.ranking); a greedy 1-1 alignment per group over the pairs scoring at least the pair
model's calibrated cut-off (`--align-min-score` overrides; conflicts across groups resolved per
target) gives `alignment`; the URLs it leaves unaligned are counted in the report. `rank_hosts`
keeps per-site URL counts and splits for `shortlist`.

Several language pairs (`--langs en:fr,de`) are ranked in one pass: a URL takes part once for each pair holding its
language, every grouping is within one pair (`lang_pair`), and each pair's tables, counts and metrics are those a
run of that pair alone gives.
"""
from __future__ import annotations

import functools
import uuid

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.jobs.language_pairs import PairSkipped, language_pairs_option
from parascout.udfs.common import storage
from parascout.udfs.common.langs import pair_label
from parascout.udfs.common.sites import GROUPINGS, with_page_hosts, with_site
from parascout.udfs.common.spark_functions import bind
from parascout.udfs.common.table_store import PAIR_COLUMN
from parascout.udfs.rank import blocking, ranking
from parascout.udfs.rank.blocking import BlockingConfig

URL_BAD = "missing_url_or_host"
BAD_REASONS = frozenset({URL_BAD, *ranking.BAD_REASONS})
FILTERED_REASONS = frozenset({"status_not_2xx", "not_html", "duplicate_url", "site_one_language",
                              *ranking.FILTERED_REASONS})
#: alignment cut-off for a pair model that records no calibrated decision (trained before it existed)
UNCALIBRATED_MIN_SCORE = 0.1
HTML_MIMES = ("text/html", "application/xhtml+xml")
#: --uncued-links: which links without a language cue make candidate pairs
UNCUED_LINKS = ("both_ways", "any", "none")


class RankPairs(Job):
    name = "rank-pairs"
    description = ("candidate URL pairs per site (handles, token similarity, links, images, structure) scored by "
                   "a model cascade")
    outputs = ("scored_pairs", "alignment", "rank_hosts")
    inputs = ("urls",)
    model_paths = ("lang_model", "pair_model", "rescore_model")
    optional_inputs = ("candidates", "docs")
    #: `rank-pairs: {blocking: {lsh_bands: 32}}` in a --conf file
    stage_configs = (("blocking", BlockingConfig),)

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--langs", required=True, help="language pair, e.g. en,is (src first), or several: "
                                                            "en:fr,de or en-fr,de-fr (ranked together in one pass)")
        parser.add_argument("--lang-model", help="url2lang model dir, for URLs without a CDX language")
        parser.add_argument("--pair-model", required=True, help="fast pair model dir: scores every candidate")
        parser.add_argument("--rescore-model", help="slow pair model dir: rescores the top-k per URL")
        parser.add_argument("--top-k", type=int, default=5, help="similar URLs kept per URL, and rescored per URL")
        parser.add_argument("--rescore-top-k", type=int, help="pairs per URL the rescoring model rescores "
                            "(default: --top-k)")
        parser.add_argument("--max-group-urls", type=int, default=5000, help="URLs per blocking group")
        parser.add_argument("--lsh-min-pairs", type=int, default=2_000_000,
                            help="groups whose src x trg product reaches this use MinHash/LSH, not exact Jaccard")
        parser.add_argument("--exhaustive-max-pairs", type=int, default=10_000,
                            help="groups whose src x trg product is at most this get every pair as a candidate "
                                 "(the fast model then keeps the top-k per URL); 0 disables")
        parser.add_argument("--structure-top-k", type=int, default=5,
                            help="fetched pages of the other language kept per page by nearest paragraph-length "
                                 "profile (docs.structure); 0 disables")
        parser.add_argument("--uncued-links", choices=UNCUED_LINKS, default="both_ways",
                            help="which links without a language cue make candidates: pages linking to each other "
                                 "(default), any link between pages of the two languages, or none (cue-marked links "
                                 "always do; docs without outlink_cues: any)")
        parser.add_argument("--no-link-evidence", dest="link_evidence", action="store_false",
                            help="score by the URL models alone (links then only make candidates)")
        parser.add_argument("--split-depth", type=int, default=3, help="path prefix levels tried when splitting")
        parser.add_argument("--lang-threshold", type=float, default=0.5, help="min url2lang probability")
        parser.add_argument("--align-min-score", "--min-score", dest="align_min_score", type=float, default=None,
                            help="min score of an aligned pair (default: the pair model's calibrated cut-off, "
                                 f"{UNCALIBRATED_MIN_SCORE} for a model without one)")
        parser.add_argument("--group-by", choices=GROUPINGS, default="site",
                            help="what a site is: language-neutral host (default), exact host, registered domain, or the "
                                 "registered domain's name on every suffix (example.de + example.fr = example.*)")

    def validate_arguments(self, args) -> None:
        super().validate_arguments(args)
        self.pairs = language_pairs_option(args.langs)
        if args.top_k < 1 or args.max_group_urls < 2 or args.split_depth < 0:
            raise ConfigError("--top-k must be >= 1, --max-group-urls >= 2, --split-depth >= 0")
        if not 0 <= args.lang_threshold <= 1:
            raise ConfigError("--lang-threshold must be between 0 and 1")
        if args.structure_top_k < 0:  # the blocking knobs' ranges are BlockingConfig's
            raise ConfigError("--structure-top-k must be >= 0")

    @property
    def blocking(self) -> BlockingConfig:
        """The blocking knobs of this run (its --conf section's `blocking:`, else the defaults)."""
        return getattr(self.args, "blocking", None) or BlockingConfig()

    def process(self) -> None:
        self.staged: dict[str, str] = {}
        self.pair_metrics: dict[str, dict] = {pair_label(pair): {} for pair in self.pairs}
        self.run_metrics: dict = {}
        try:
            self.rank(self.read_table("urls"))
        finally:
            for path in self.staged.values():
                storage.delete_dir(path)
        self.for_each_pair(self.report_pair)

    @property
    def languages(self) -> tuple[str, ...]:
        """Every language of the run's pairs, in the order --langs names them."""
        return tuple(dict.fromkeys(language for pair in self.pairs for language in pair))

    def rank(self, urls: DataFrame) -> None:
        """Every language pair in one pass: a URL takes part once for each pair holding its language, and every
        grouping below is within one pair (lang_pair), so each pair is ranked as a run of it alone would."""
        labelled = self.stage(self.label_urls(urls), "urls")
        by_pair = self.stage(self.with_sites(self.urls_by_pair(labelled)), "pair-urls")
        self.count_urls(labelled, by_pair)
        kept = self.stage(blocking.bounded_groups(by_pair.filter(F.col("url_status") == "ok"),
                                                  self.args.max_group_urls, self.args.split_depth), "groups")
        pairs = self.stage(self.candidate_pairs(kept), "pairs")
        for label, combinations in self.pair_counts(pairs, "source").items():
            self.pair_metric(label, "pairs_after_dedup", sum(combinations.values()))
            self.pair_metric(label, "candidates_per_source", {
                source: sum(n for combination, n in combinations.items() if source in combination.split(","))
                for source in sorted({s for combination in combinations for s in combination.split(",")})})
        scored = pairs.groupBy(PAIR_COLUMN, "host", "group_key").applyInPandas(
            bind(ranking.score_group_with_models, fast_model=self.args.pair_model,
                 rescore_model=self.args.rescore_model, rescore_top_k=self.args.rescore_top_k or self.args.top_k,
                 keep_top_k=self.args.top_k, link_weights=None if self.args.link_evidence else {}),
            ranking.SCORED_SCHEMA)
        self.write_table(with_page_hosts(scored).withColumn(PAIR_COLUMN, F.concat_ws("-", "src_lang", "trg_lang")),
                         "scored_pairs")
        self.write_alignment(self.read_table("scored_pairs"))
        self.write_table(ranking.site_summary(kept, self.args.max_group_urls)
                         .withColumn("grouped_by", F.lit(self.args.group_by)), "rank_hosts")
        self.pair_report_metrics(kept, self.read_table("scored_pairs"))

    def report_pair(self, pair: tuple[str, str]) -> None:
        """One pair's counts and metrics, collected by the one pass, into its section of the report."""
        label = pair_label(pair)
        statuses = self.url_statuses[label]
        self.report.input("urls", sum(statuses.values()))
        self.report.add_counts(statuses, bad_reasons=BAD_REASONS, filtered_reasons=FILTERED_REASONS)
        if len(self.pairs) > 1 and not statuses.get("ok"):
            raise PairSkipped("no_bilingual_site", "no site holds URLs of both languages")
        for key, value in self.run_metrics.items():
            self.report.metric(key, value)
        for key, value in self.pair_metrics[label].items():
            self.report.metric(key, value)

    def pair_metric(self, label: str, key: str, value) -> None:
        self.pair_metrics.setdefault(label, {})[key] = value

    def pair_counts(self, frame: DataFrame, column: str) -> dict[str, dict[str, int]]:
        """{lang_pair: {value of `column`: count}}, every pair of the run there (empty without rows)."""
        return self.counts_by_pair(frame, column, every_pair=[pair_label(pair) for pair in self.pairs])

    def stage(self, frame: DataFrame, name: str) -> DataFrame:
        """Materialise an intermediate table under <root>/_tmp and read it back: a short plan, no recomputation."""
        path = storage.join(self.args.root, "_tmp", f"rank-pairs-{name}-{uuid.uuid4().hex[:8]}")
        frame.write.mode("overwrite").parquet(storage.to_hadoop(path))
        self.staged[name] = path
        return self.spark.read.parquet(storage.to_hadoop(path))

    # ---- URLs: status, language, site ----------------------------------------------------
    def label_urls(self, urls: DataFrame) -> DataFrame:
        """Every URL once with url_status 'ok' (in a language of the run) or the reason it is left out; lang, p_lang."""
        columns = set(urls.columns)
        status = F.when(F.col("url").isNull() | F.col("host").isNull(), F.lit(URL_BAD))
        if "status" in columns:
            status = status.when(~F.col("status").cast("string").startswith("2"), "status_not_2xx")
        if "mime" in columns:
            status = status.when(~F.lower(F.col("mime")).isin(*HTML_MIMES), "not_html")
        first = Window.partitionBy("url").orderBy(F.col("lang").isNull(), F.col("lang"))
        frame = (urls.select("url", "host", F.col("domain") if "domain" in columns else F.lit(None).alias("domain"),
                             "lang", "surt" if "surt" in columns else F.lit(None).cast("string").alias("surt"),
                             status.alias("url_status"))
                 .withColumn("url_status", F.when(F.col("url_status").isNull() & (F.row_number().over(first) > 1),
                                                  "duplicate_url").otherwise(F.col("url_status"))))
        return self.with_languages(frame)

    def with_languages(self, frame: DataFrame) -> DataFrame:
        pending = F.col("url_status").isNull()
        needs_model = frame.filter(pending & F.col("lang").isNull())
        predicted = needs_model.mapInPandas(
            bind(ranking.assign_languages_with_model, languages=self.languages, lang_model=self.args.lang_model,
                 threshold=self.args.lang_threshold),
            ranking.LANGUAGE_SCHEMA)
        known = (frame.filter(~(pending & F.col("lang").isNull()))
                 .withColumn("p_lang", F.lit(1.0)).withColumn("lang_source", F.lit("cdx"))
                 .withColumn("url_status", F.coalesce("url_status", F.when(F.col("lang").isin(*self.languages), "ok")
                                                      .otherwise(ranking.LANGUAGE_OTHER))))
        return known.unionByName(predicted)

    def urls_by_pair(self, labelled: DataFrame) -> DataFrame:
        """The URLs in a language of the run, once for each of its pairs holding that language (blocking.with_pair's
        columns)."""
        return labelled.filter(F.col("url_status") == "ok").join(F.broadcast(self.pair_languages()), "lang")

    def with_sites(self, frame: DataFrame) -> DataFrame:
        """Add `site` (the output `site`, by each pair's language labels); URLs of a pair's sites lacking one of its
        languages are filtered."""
        frame = with_site(frame, None, self.args.group_by)
        ok = F.col("url_status") == "ok"
        both = (frame.filter(ok).groupBy(PAIR_COLUMN, "site").agg(F.countDistinct("lang").alias("n_langs"))
                .filter(F.col("n_langs") == 2).select(PAIR_COLUMN, "site", F.lit(True).alias("bilingual")))
        return (frame.join(both, [PAIR_COLUMN, "site"], "left")
                .withColumn("url_status", F.when(ok & F.col("bilingual").isNull(), "site_one_language")
                            .otherwise(F.col("url_status"))).drop("bilingual"))

    def count_urls(self, labelled: DataFrame, by_pair: DataFrame) -> None:
        """Each pair's URL statuses: every URL counts once per pair, one in another language of the run as
        lang_other, one of the pair's languages as ok or site_one_language."""
        outcome = F.when(F.col("url_status") == "ok", F.concat(F.lit("ok:"), F.col("lang"))).otherwise(
            F.col("url_status"))
        run = self.count_by(labelled.withColumn("outcome", outcome), "outcome")
        in_pair = self.pair_counts(by_pair, "url_status")
        self.url_statuses = {}
        for pair in self.pairs:
            counts = {reason: n for reason, n in run.items() if not reason.startswith("ok:")}
            other = sum(n for reason, n in run.items() if reason.startswith("ok:") and reason[3:] not in pair)
            if other:
                counts[ranking.LANGUAGE_OTHER] = counts.get(ranking.LANGUAGE_OTHER, 0) + other
            for reason, n in in_pair[pair_label(pair)].items():
                counts[reason] = counts.get(reason, 0) + n
            self.url_statuses[pair_label(pair)] = counts

    # ---- candidates from the blockers ----------------------------------------------------
    def candidate_pairs(self, kept: DataFrame) -> DataFrame:
        """Distinct (lang_pair, site, src_url, trg_url) with their sources joined ('handle,similar') and URL
        attributes."""
        similar = kept.select(PAIR_COLUMN, "src_lang", "trg_lang", F.col("site").alias("host"), "group_key", "url",
                              "lang", "domain").groupBy(PAIR_COLUMN, "host", "group_key").applyInPandas(
            bind(blocking.similar_pairs_for_group_frame, k=self.args.top_k,
                 max_urls=self.args.max_group_urls, lsh_min_pairs=self.args.lsh_min_pairs,
                 strip_to="domain" if self.args.group_by in ("domain", "name") else "host",
                 exhaustive_max_pairs=self.args.exhaustive_max_pairs, config=self.blocking), blocking.SIMILAR_SCHEMA)
        columns = [PAIR_COLUMN, "host", "src_url", "trg_url"]
        sources = [similar.select(*columns, F.when(F.col("top_k"), "similar").otherwise(
            ranking.EXHAUSTIVE_SOURCE).alias("source"), F.lit(None).cast("string").alias("handle"))]
        handles = None
        if self.uses("candidates"):
            handles = self.orient(self.run_pairs_of(self.read_table("candidates")), kept, "handle")
            sources.append(handles)
        evidence = None
        if self.uses("docs"):
            docs = self.read_table("docs")
            pages = self.stage(blocking.page_links(docs), "page-links")
            evidence = self.link_evidence(pages, kept)
            if handles is not None:
                sources.append(self.neighbour_candidates(pages, kept, handles))
            sources += self.link_candidates(evidence, self.args.uncued_links if "outlink_cues" in docs.columns
                                            else "any")
            if "images" in docs.columns and self.blocking.image_max_pages > 0:
                sources.append(self.image_candidates(docs, kept))
            if "structure" in docs.columns and self.args.structure_top_k > 0:
                sources.append(blocking.structure_pairs(docs, kept, self.args.structure_top_k,
                                                        self.args.max_group_urls, self.blocking).select(
                    *columns, F.lit("structure").alias("source"), F.lit(None).cast("string").alias("handle")))
        union = functools.reduce(DataFrame.unionByName, sources)
        src = kept.select(PAIR_COLUMN, "src_lang", F.col("url").alias("src_url"), F.col("p_lang").alias("p_src_lang"),
                          "group_key")
        trg = kept.select(PAIR_COLUMN, "trg_lang", F.col("url").alias("trg_url"), F.col("p_lang").alias("p_trg_lang"))
        pairs = (union.groupBy(*columns)
                 .agg(F.array_join(F.array_sort(F.collect_set("source")), ",").alias("source"),
                      F.max("handle").alias("handle"))
                 .join(src, [PAIR_COLUMN, "src_url"]).join(trg, [PAIR_COLUMN, "trg_url"]))
        if evidence is not None:
            pairs = pairs.join(evidence, columns, "left")
        none = {"link_src_to_trg": F.lit(False), "link_trg_to_src": F.lit(False), "cue_links": F.lit(0),
                "cue_exclusive": F.lit(False), "shared_alternates": F.lit(0)}
        return pairs.select(*[c for c in pairs.columns if c not in none], *[
            (F.coalesce(F.col(c), value) if c in pairs.columns else value).alias(c) for c, value in none.items()])

    def run_pairs_of(self, candidates: DataFrame) -> DataFrame:
        """Candidate pairs of the run's language pairs (either direction) with the run's lang_pair label."""
        label = F.col(PAIR_COLUMN) if PAIR_COLUMN in candidates.columns else F.concat_ws("-", "src_lang", "trg_lang")
        return candidates.withColumn(PAIR_COLUMN, self.run_pair_label(label)).where(F.col(PAIR_COLUMN).isNotNull())

    def link_evidence(self, pages: DataFrame, kept: DataFrame) -> DataFrame:
        """Per linked pair of kept pages, what the links say (blocking.link_evidence; `pages`: blocking.page_links
        rows); links that hit a kept URL but join no pair of the two languages on one site counted as
        link_candidates_<reason>."""
        checked = blocking.orient_pairs(blocking.link_pairs(pages, kept), kept)
        for label, reasons in self.pair_counts(checked, "reason").items():
            for why, count in reasons.items():
                self.pair_metric(label, f"link_candidates_{why}", count)
        return self.stage(blocking.link_evidence(pages, kept, self.blocking), "link-evidence")

    def link_candidates(self, evidence: DataFrame, uncued: str) -> list[DataFrame]:
        """Source `cue` (a link either way whose context names its target's language, or shared rare cue-marked
        alternates) and `link` (uncued links as `uncued` says: --uncued-links, or 'any' for docs without
        outlink_cues); linked pairs neither takes are counted."""
        cued = (F.col("cue_links") > 0) | (F.col("shared_alternates") > 0)
        both, either = F.col("link_src_to_trg") & F.col("link_trg_to_src"), F.col("link_src_to_trg") | F.col(
            "link_trg_to_src")
        linked = {"both_ways": both, "any": either, "none": F.lit(False)}[uncued]
        self.run_metrics["uncued_links"] = uncued
        taken = F.when(cued | linked, "taken").otherwise("not_candidates")
        for label, counts in self.pair_counts(evidence.withColumn("taken", taken), "taken").items():
            self.pair_metric(label, "link_pairs_not_candidates", counts.get("not_candidates", 0))
        columns = [PAIR_COLUMN, "host", "src_url", "trg_url"]
        return [evidence.filter(condition).select(*columns, F.lit(source).alias("source"),
                                                  F.lit(None).cast("string").alias("handle"))
                for source, condition in (("cue", cued), ("link", linked))]

    def neighbour_candidates(self, pages: DataFrame, kept: DataFrame, handles: DataFrame) -> DataFrame:
        """Source `neighbours`: pages no handle pairs, paired by the counterparts of the pages they link (`pages`:
        blocking.page_links rows)."""
        pairs = self.stage(blocking.neighbour_pairs(pages, kept, handles, self.blocking), "neighbours")
        return pairs.select(PAIR_COLUMN, "host", "src_url", "trg_url", F.lit("neighbours").alias("source"),
                            F.lit(None).cast("string").alias("handle"))

    def orient(self, pairs: DataFrame, kept: DataFrame, source: str) -> DataFrame:
        """Pairs of kept URLs of one site in their pair's two languages (src first); the rest counted by reason."""
        checked = blocking.orient_pairs(pairs, kept)
        for label, reasons in self.pair_counts(checked, "reason").items():
            for why, count in reasons.items():
                self.pair_metric(label, f"{source}_candidates_{why}", count)
        return checked.filter(F.col("reason") == "ok").select(PAIR_COLUMN, "host", "src_url", "trg_url",
                                                               F.lit(source).alias("source"), "handle")

    def image_candidates(self, docs: DataFrame, kept: DataFrame) -> DataFrame:
        """Pages sharing a rare image name; image names counted by status, pairs of capped names counted."""
        pairs, names = blocking.image_pairs(docs, kept, self.args.blocking)
        rows = names.groupBy(PAIR_COLUMN, "image_status").agg(
            F.count("*").alias("names"), F.sum(F.col("n_src") * F.col("n_trg")).alias("pairs")).collect()
        for pair in self.pairs:
            by_status = {row["image_status"]: row for row in rows if row[PAIR_COLUMN] == pair_label(pair)}
            for status in blocking.IMAGE_STATUSES:
                self.pair_metric(pair_label(pair), f"image_names_{status}",
                                 int(by_status[status]["names"]) if status in by_status else 0)
            capped = by_status.get(blocking.IMAGE_STATUSES[-1])
            self.pair_metric(pair_label(pair), "image_pairs_capped", int(capped["pairs"]) if capped else 0)
        return pairs.select(PAIR_COLUMN, "host", "src_url", "trg_url", F.lit("image").alias("source"),
                            F.lit(None).cast("string").alias("handle"))

    # ---- outputs -------------------------------------------------------------------------
    def write_alignment(self, scored: DataFrame) -> None:
        from parascout.udfs.rank.url_models import model_metadata

        metadata = model_metadata(self.args.pair_model)
        decision = metadata.get("decision") or {}
        if self.args.align_min_score is not None:
            min_score, source = self.args.align_min_score, "--align-min-score"
        elif "min_score" in decision:
            min_score, source = decision["min_score"], f"pair model decision ({decision.get('chosen_on')})"
        else:
            min_score, source = UNCALIBRATED_MIN_SCORE, "default for a pair model without a calibrated decision"
        self.run_metrics["align_min_score"] = {"value": min_score, "source": source}
        aligned = scored.groupBy(PAIR_COLUMN, "site", "group_key").applyInPandas(
            bind(ranking.align_group, min_score=min_score, metadata=metadata), scored.schema)
        best_for_target = Window.partitionBy(PAIR_COLUMN, "trg_url").orderBy(F.desc("score"), "src_url")
        aligned = self.stage(aligned.withColumn("target_rank", F.row_number().over(best_for_target)), "alignment")
        conflicts = F.when(F.col("target_rank") > 1, "conflict").otherwise("first")
        for label, counts in self.pair_counts(aligned.withColumn("conflict", conflicts), "conflict").items():
            self.pair_metric(label, "alignment_cross_group_conflicts", counts.get("conflict", 0))
        self.write_table(aligned.filter(F.col("target_rank") == 1).drop("target_rank"), "alignment")
        unaligned = self.pair_urls(scored).subtract(self.pair_urls(self.read_table("alignment")))
        for label, counts in self.pair_counts(unaligned.withColumn("side", F.lit("url")), "side").items():
            self.pair_metric(label, "alignment_urls_left_unaligned", counts.get("url", 0))

    @staticmethod
    def pair_urls(pairs: DataFrame) -> DataFrame:
        """The distinct (lang_pair, URL) on either side of a pair table."""
        return (pairs.select(PAIR_COLUMN, F.col("src_url").alias("url"))
                .union(pairs.select(PAIR_COLUMN, "trg_url")).distinct())

    def pair_report_metrics(self, kept: DataFrame, scored: DataFrame) -> None:
        """URLs by language and its source, pairs by source and scoring stage, and the sites' grouping, per pair."""
        by_language = kept.groupBy(PAIR_COLUMN, "lang", "lang_source").count().collect()
        by_stage = scored.groupBy(PAIR_COLUMN, "source", "scored_by").count().collect()
        sites = {row[PAIR_COLUMN]: row.asDict() for row in self.read_table("rank_hosts").groupBy(PAIR_COLUMN).agg(
            F.count("*").alias("sites"), F.sum((F.col("n_groups") > 1).cast("int")).alias("sites_split"),
            F.sum("n_groups").alias("groups"), F.sum("n_groups_chunked").alias("groups_chunked"),
            F.sum("n_urls_capped").alias("urls_capped"),
            F.sum(F.col("n_urls_src") * F.col("n_urls_trg")).alias("cartesian_pairs")).collect()}
        for pair in self.pairs:
            label = pair_label(pair)
            metrics = self.pair_metrics[label]
            languages = [row for row in by_language if row[PAIR_COLUMN] == label]
            stages = [row for row in by_stage if row[PAIR_COLUMN] == label]
            metrics["urls_per_language"] = self.sum_by(languages, "lang")
            metrics["urls_language_source"] = self.sum_by(languages, "lang_source")
            kept_pairs = sum(row["count"] for row in stages)
            after_dedup = metrics.setdefault("pairs_after_dedup", 0)
            metrics["pairs_by_source_combination"] = self.sum_by(stages, "source")
            metrics["pairs_scored_fast"] = after_dedup
            metrics["pairs_pruned_after_fast"] = after_dedup - kept_pairs
            metrics["pairs_rescored"] = self.sum_by(stages, "scored_by").get("rescore", 0)
            totals = {key: value for key, value in sites.get(label, {}).items() if key != PAIR_COLUMN}
            for key in ("sites", "sites_split", "groups", "groups_chunked", "urls_capped", "cartesian_pairs"):
                metrics[key] = int(totals.get(key) or 0)
            cartesian = metrics["cartesian_pairs"]
            metrics["candidates_vs_cartesian"] = after_dedup / cartesian if cartesian else None
            metrics["scored_vs_cartesian"] = kept_pairs / cartesian if cartesian else None

    @staticmethod
    def sum_by(rows: list, key: str) -> dict[str, int]:
        """{value of `key`: total count} over collected (key..., count) rows of a small aggregation."""
        totals: dict[str, int] = {}
        for row in rows:
            totals[str(row[key])] = totals.get(str(row[key]), 0) + int(row["count"])
        return totals


if __name__ == "__main__":
    RankPairs().run()
