"""verify-pairs: judge candidate pairs by their structure (STRAND) and by what the pages say (tsim).

Each host's pairs are cogrouped with its pages (`docs`, boilerplate images removed, joined with
`texts`; each language pair verified apart, with its own pages): dp, n, r, p, image Jaccard, length and
paragraph ratios, the CLD2 check, and from the texts tsim / tsim_idf under `--lexicon` (train-lexicon; without
one only identical strings, numbers and cognates link), number and rare-token overlap, paragraph correlations (udfs.verify.verification).
The decision needs no labels: a logistic model fitted on pairs the archive itself labels
(switcher-linked and handle-matched pairs whose own text — list items left out — beats nearly all
random same-site pairs' tsim_idf, and on a host and language pair no such pair taught, pairs that are each other's best
by their text; against `--random-pairs` random same-site pairs per host; a pair must also beat its language pair's
random pairs' null; a lexicon with held-out lexicons — train-lexicon --from-archive — also has each label row fitted
as a lexicon that never learned from its pages scores it); `--learn-from` labelled pairs replace
the self labels; `--decision strand` (or no `texts` table) keeps Resnik & Smith's structural rule
dp < --max-dp and p < --max-p. Parallel pairs are then aligned 1-1 per host and language pair.
Pairs whose documents are missing or failed stay in `verified_pairs` with that reason (bad input).
Every language pair of the input is verified in one pass (the model is fitted per language pair) and written to its
lang_pair partition; `--langs en:fr,de` keeps those pairs only and counts a listed pair without candidates as skipped.
"""
from __future__ import annotations

import contextlib

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.jobs.language_pairs import language_pairs_option
from parascout.udfs.common.langs import pair_label
from parascout.udfs.common.sites import with_page_hosts
from parascout.udfs.common.spark_functions import bind
from parascout.udfs.common.table_store import PAIR_COLUMN
from parascout.udfs.lexicon.lexicon import lexicon_dirs, load_lexicon
from parascout.udfs.verify.decision import (
    URL_EXACT_COUNTS_SCHEMA,
    ContentModel,
    decide_host,
    language_pair_nulls,
    self_labels,
    url_exact_counts,
    with_held_out_scores,
)
from parascout.udfs.verify.structure import ThresholdRule
from parascout.udfs.verify.verification import (
    BAD_REASONS,
    CONFIDENT_SOURCES,
    DOCUMENT_REASONS,
    FEATURES_SCHEMA,
    FILTERED_REASONS,
    VERIFIED_SCHEMA,
    verify_host,
)
from parascout.udfs.verify.verification_config import DEFAULT, VerificationConfig

ARROW_BATCH_ROWS = 256
DOC_FEATURES = ["status", "cld2_lang", "cld2_reliable", "text_chars", "paragraphs", "images", "structure", "outlinks"]


def verify_cogroup(pairs, pages, rule: dict, lexicons: list, random_count: int, seed: int,
                   config: VerificationConfig = DEFAULT):
    """cogroup body: one host's pairs and pages -> feature rows."""
    return verify_host(pairs, pages, rule, lexicons, random_count, seed, config)


class VerifyPairsJob(Job):
    name = "verify-pairs"
    description = "verify candidate pairs by structure (STRAND) and content (tsim under a lexicon), 1-1 aligned"
    outputs = ("verified_pairs",)
    inputs = ("docs",)
    input_paths = ("learn_from", "lexicon")
    optional_inputs = ("texts", "scored_pairs", "candidates")
    #: `verify-pairs: {verification: {min_lang_share: 0.6}}` in a --conf file
    stage_configs = (("verification", VerificationConfig),)

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--pairs", choices=["scored_pairs", "candidates"],
                            help="pairs table to verify (default: scored_pairs if it exists, else candidates)")
        parser.add_argument("--lexicon", action="append", default=[], metavar="DIR",
                            help="lexicon directory from train-lexicon (repeatable, one per language pair), or a "
                                 "folder of them (train-lexicon with several pairs: DIR/eng-fra/ ...)")
        parser.add_argument("--langs", help="verify these pairs only: en,fr, en:fr,de or en-fr,de-fr "
                                            "(default: every pair of the input)")
        parser.add_argument("--decision", choices=["content", "strand"], default="content",
                            help="content: the self-labelled model over structure + tsim (needs texts); "
                                 "strand: the structural rule alone")
        parser.add_argument("--random-pairs", type=int, default=50,
                            help="random same-site page pairs per host and language pair (the negatives)")
        parser.add_argument("--seed", type=int, default=13, help="seed of the random same-site pairs")
        parser.add_argument("--max-dp", type=float, default=0.2, help="STRAND: largest difference percentage")
        parser.add_argument("--max-p", type=float, default=0.05, help="STRAND: largest p of the length correlation")
        parser.add_argument("--learn-from", metavar="PARQUET",
                            help="labelled pairs (src_url, trg_url, label) to fit the decision on, not self labels")
        parser.add_argument("--max-train", type=int, default=100_000, help="most labelled pairs used for fitting")

    def validate_arguments(self, args) -> None:
        super().validate_arguments(args)
        if args.pairs:  # the pairs table is named: scored_pairs / candidates are not looked for
            args.use_scored_pairs = args.use_candidates = "no"
        if not 0 < args.max_dp <= 1 or not 0 < args.max_p <= 1:
            raise ConfigError("--max-dp and --max-p must be in (0, 1]")
        if args.random_pairs < 0 or args.max_train < 1:
            raise ConfigError("--random-pairs must be >= 0 and --max-train >= 1")
        self.pairs = language_pairs_option(args.langs)
        try:
            self.lexicon_paths = [found for path in args.lexicon for found in lexicon_dirs(path)]
            for path in self.lexicon_paths:
                load_lexicon(path)
        except FileNotFoundError as error:
            raise ConfigError(f"--lexicon: {error}") from error

    @property
    def verification(self) -> VerificationConfig:
        """The verification knobs of this run (its --conf section's `verification:`, else the defaults)."""
        return getattr(self.args, "verification", None) or VerificationConfig()

    def documents(self) -> DataFrame:
        """docs with `images` reduced to the host-distinctive ones (boilerplate images removed)."""
        docs = self.read_table("docs").dropDuplicates(["url"])
        ok = docs.where("status = 'ok'")
        host_docs = ok.groupBy("host").agg(F.count("*").alias("host_docs"))
        pictures = ok.select("host", "url", F.explode(F.array_distinct("images")).alias("image"))
        boilerplate = (pictures.groupBy("host", "image").agg(F.count("*").alias("doc_freq")).join(host_docs, "host")
                       .where((F.col("doc_freq") > F.col("host_docs") * self.verification.boilerplate_image_share)
                              & (F.col("doc_freq") >= self.verification.min_boilerplate_docs))
                       .select("host", "image"))
        distinctive = (pictures.join(boilerplate, ["host", "image"], "left_anti")
                       .groupBy("url").agg(F.collect_set("image").alias("distinctive_images")))
        return (docs.join(distinctive, "url", "left")
                .withColumn("images", F.when(F.col("status") == "ok", F.coalesce(
                    "distinctive_images", F.array().cast("array<string>")))).drop("distinctive_images"))

    def pages(self, pairs: DataFrame, docs: DataFrame) -> DataFrame:
        """The pages of each pair's host (`pair_host`): doc features and, where present, texts."""
        keys = (pairs.select(F.col("host").alias("pair_host"), F.col("src_url").alias("url"))
                .unionByName(pairs.select(F.col("host").alias("pair_host"), F.col("trg_url").alias("url")))
                .distinct())
        pages = keys.join(docs.select("url", *DOC_FEATURES), "url")
        if self.uses("texts"):
            texts = self.read_table("texts").dropDuplicates(["url"]).select(
                "url", F.col("paragraphs").alias("text_paragraphs"), "main_text", "duplicate_of")
            return pages.join(texts, "url", "left")
        return (pages.withColumn("text_paragraphs", F.lit(None))
                .withColumn("main_text", F.lit(None).cast("string"))
                .withColumn("duplicate_of", F.lit(None).cast("string")))

    def features(self, pairs: DataFrame, docs: DataFrame, random_count: int) -> DataFrame:
        """FEATURES_SCHEMA rows: every pair, plus random same-site pairs (role 'random')."""
        for column in ("host", "src_lang", "trg_lang", "source", "role"):
            if column not in pairs.columns:
                pairs = pairs.withColumn(column, F.lit("candidate" if column == "role" else None).cast("string"))
        pairs = pairs.select("host", "src_url", "trg_url", "src_lang", "trg_lang", "source", "role")
        lexicons = [load_lexicon(path) for path in self.lexicon_paths]
        body = bind(verify_cogroup, rule=ThresholdRule(self.args.max_dp, self.args.max_p).to_dict(),
                    lexicons=lexicons, random_count=random_count, seed=self.args.seed, config=self.verification)
        return (pairs.groupBy("host").cogroup(self.pages(pairs, docs).groupBy("pair_host"))
                .applyInPandas(body, FEATURES_SCHEMA))

    def labelled_pairs(self, docs: DataFrame) -> DataFrame:
        """--learn-from pairs with their host and languages (from the source page's doc)."""
        labelled = self.spark.read.parquet(self.args.learn_from)
        label = "label" if "label" in labelled.columns else "parallel"
        if label not in labelled.columns or not {"src_url", "trg_url"} <= set(labelled.columns):
            raise ConfigError("--learn-from needs columns src_url, trg_url and label (or parallel)")
        sides = [docs.select(F.col("url").alias(f"{side}_url"), F.col("cld2_lang").alias(f"{side}_lang"),
                             *([F.col("host")] if side == "src" else [])) for side in ("src", "trg")]
        return (labelled.select("src_url", "trg_url", F.col(label).cast("boolean").alias("label"))
                .join(sides[0], "src_url").join(sides[1], "trg_url")
                .withColumn("source", F.lit("labelled")).withColumn("role", F.lit("labelled")))

    def fit_model(self, features: DataFrame, docs: DataFrame) -> ContentModel:
        """The decision: fitted on --learn-from labels, else on the archive's own labels."""
        if self.args.learn_from:
            labelled = self.labelled_pairs(docs)
            rows = (self.features(labelled.drop("label"), docs, 0).join(
                labelled.select("src_url", "trg_url", "label"), ["src_url", "trg_url"])
                .where(F.col("reason").isNull() | ~F.col("reason").isin(*DOCUMENT_REASONS)).limit(self.args.max_train).toPandas())  # bounded by --max-train
            if rows.empty:
                raise ConfigError("--learn-from: none of the labelled pairs has both documents in docs")
            model = ContentModel.fit(rows, rows["label"], method="learned-logistic", min_labels=1)
            stats = {"pairs": len(rows), "positives": int(rows["label"].sum())}
        else:
            candidates = features.where(F.col("role").isin("candidate", "random", "spliced")
                                        & F.col("tsim").isNotNull())
            # the rows self labels come from (verify_host gives them held-out scores: held_out_features)
            sample = candidates.where(F.col("role").isin("random", "spliced")
                                      | F.col("source").rlike("|".join(CONFIDENT_SOURCES)) | F.col("mutual_best"))
            rows, stats = self_labels(sample.limit(self.args.max_train).toPandas(), self.verification)  # bounded by --max-train
            fitted = with_held_out_scores(rows)
            stats["held_out_label_rows"] = len(fitted) - len(rows)
            model = ContentModel.fit_per_language_pair(
                fitted, fitted["label"], stats["null_tsim_idf_quantile"],
                floors=language_pair_nulls(rows[rows["role"] == "random"], self.verification),
                default_floor=stats["null_own_tsim_idf_quantile"],
                coverage_floors=language_pair_nulls(rows[rows["role"] == "random"], self.verification,
                                                    "own_coverage_idf"),
                default_coverage_floor=stats["null_own_coverage_idf_quantile"],
                lexicon_free=tuple(stats["lexicon_free_language_pairs"]), config=self.verification) \
                if len(rows) else ContentModel(None, 0.0, (), (), 1.0, "null-threshold")
        predicted = model.predict(rows) >= model.accept_p_under(self.verification) if len(rows) else []
        stats["training_accuracy"] = round(float((predicted == rows["label"]).mean()), 4) if len(rows) else None
        self.report.metric("learned_from" if self.args.learn_from else "self_labels", stats)
        return model

    def with_archive_url_odds(self, model: ContentModel, features: DataFrame) -> ContentModel:
        """The model with what each language pair's URL-exact pairs earn over every host (url_exact_counts): the URL
        evidence of a site with no such pair of its own to judge, which is then not taken as one whose URLs say
        nothing."""
        columns = ["host", "src_lang", "trg_lang", "source", "reason", "tsim", "own_tsim_idf"]
        counts = (features.where(F.col("role") == "candidate").select(*columns)
                  .groupBy("host", "src_lang", "trg_lang")
                  .applyInPandas(bind(url_exact_counts, model=model.to_dict()), URL_EXACT_COUNTS_SCHEMA).toPandas())
        model = model.with_archive_url_odds(counts)
        self.report.metric("archive_url_log_odds", dict(model.archive_url_odds))
        return model

    @contextlib.contextmanager
    def arrow_batch_rows(self, rows: int):
        """Set spark.sql.execution.arrow.maxRecordsPerBatch while a block runs, then restore it."""
        key = "spark.sql.execution.arrow.maxRecordsPerBatch"
        before = self.spark.conf.get(key, None)
        self.spark.conf.set(key, str(rows))
        try:
            yield
        finally:
            if before is None:
                self.spark.conf.unset(key)
            else:
                self.spark.conf.set(key, before)

    def selected_pairs(self, pairs: DataFrame) -> DataFrame:
        """The input pairs of the --langs pairs (either direction; all without --langs), with `lang_pair`."""
        label = F.concat_ws("-", "src_lang", "trg_lang")
        if self.pairs:
            wanted = [pair_label(pair) for pair in self.pairs] + [pair_label(pair[::-1]) for pair in self.pairs]
            pairs = pairs.where(label.isin(*wanted))
        return pairs.withColumn(PAIR_COLUMN, label)

    def process(self) -> None:
        table = self.args.pairs or ("scored_pairs" if self.uses("scored_pairs") else "candidates")
        pairs = judged_by_site(self.selected_pairs(self.read_table(table)).drop(PAIR_COLUMN))
        self.report.input(table, pairs.count())
        docs = self.documents()
        content = self.args.decision == "content" and (self.uses("texts") or bool(self.args.learn_from))
        if self.args.decision == "content" and not content:
            self.log.warning("no texts table under --root: deciding by the structural rule alone")
        self.report.metric("lexicons", [load_lexicon(path).metadata.get("version") for path in self.lexicon_paths])
        with self.arrow_batch_rows(ARROW_BATCH_ROWS):  # two token sequences per row: keep batches small
            features = self.features(pairs, docs, self.args.random_pairs if content else 0).persist()
            model = self.with_archive_url_odds(self.fit_model(features, docs), features) if content else None
            self.report.metric("rule", model.to_dict() if model else ThresholdRule(
                self.args.max_dp, self.args.max_p).to_dict())
            verified = (features.where(F.col("role") == "candidate")
                        .groupBy("host", "src_lang", "trg_lang")
                        .applyInPandas(bind(decide_host, model=model.to_dict() if model else None,
                                            config=self.verification), VERIFIED_SCHEMA))
            self.write_table(with_page_hosts(verified).withColumn(PAIR_COLUMN, F.concat_ws("-", "src_lang", "trg_lang")),
                             "verified_pairs")
            features.unpersist()
        self.count_outcomes(self.read_table("verified_pairs"))

    def count_outcomes(self, written: DataFrame) -> None:
        """Outcomes counted per language pair (report.by_pair) and in all; a --langs pair with no input pair is
        a skip."""
        outcome = F.when(F.col("parallel"), F.lit("ok")).otherwise(F.col("reason"))
        rows = written.groupBy(PAIR_COLUMN, outcome.alias("outcome")).count().collect()
        by_pair: dict[str, dict[str, int]] = {}
        for row in rows:
            by_pair.setdefault(row[PAIR_COLUMN], {})[str(row["outcome"])] = int(row["count"])
        labels = {pair_label(pair) for pair in self.pairs}
        present = sorted(by_pair) + sorted(label for label in labels if label not in by_pair
                                           and pair_label(tuple(label.split("-"))[::-1]) not in by_pair)
        for label in present:
            with self.report.pair_scope(label, single_pair=len(present) == 1):
                counts = by_pair.get(label, {})
                if not counts:
                    self.report.skip_pair("no_candidates")
                    continue
                self.report.add_counts(counts, bad_reasons=BAD_REASONS, filtered_reasons=FILTERED_REASONS)
                self.report.metric("parallel_pairs", counts.get("ok", 0))


def judged_by_site(pairs: DataFrame) -> DataFrame:
    """Input pairs keyed as verification groups them: inside verify-pairs a pair's `host` is the site its pages are
    judged in (the input's `site`; a table without one, such as bucket-handles' candidates, is per host)."""
    if "site" not in pairs.columns:
        return pairs
    return pairs.drop("host").withColumnRenamed("site", "host")


if __name__ == "__main__":
    VerifyPairsJob().run()
