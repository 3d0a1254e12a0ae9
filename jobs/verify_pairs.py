"""verify-pairs: judge candidate pairs from archived content (STRAND structure + ILSP-FC signals).

Joins each pair to `docs` on both sides, drops from each page the images that
appear on more than 10% of its host's pages, and computes dp, n, r, p, image
Jaccard, length and paragraph ratios and the CLD2 language check. The decision
is Resnik & Smith's dp < --max-dp and p < --max-p, or a small decision tree
learned from --learn-from labelled pairs; the rule used is written into the
report. Pairs whose documents are missing or failed stay in `verified_pairs`
with that reason (counted as bad input).
"""
from __future__ import annotations

import contextlib
import functools

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from parascout.jobs.base import ConfigError, Job
from parascout.udfs.structure import RULE_FEATURES, ThresholdRule, TreeRule, feature_matrix
from parascout.udfs.verification import (
    BOILERPLATE_IMAGE_SHARE,
    DOCUMENT_REASONS,
    MIN_BOILERPLATE_DOCS,
    VERIFIED_SCHEMA,
    verify_batches,
)

ARROW_BATCH_ROWS = 256
DOC_FEATURES = ["status", "cld2_lang", "cld2_reliable", "text_chars", "paragraphs", "images", "structure"]


class VerifyPairsJob(Job):
    name = "verify-pairs"
    description = "verify candidate pairs from archived content: STRAND dp/n/r/p, shared images, lengths, CLD2"
    outputs = ("verified_pairs",)

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--pairs", choices=["scored_pairs", "candidates"],
                            help="pairs table to verify (default: scored_pairs if it exists, else candidates)")
        parser.add_argument("--max-dp", type=float, default=0.2, help="STRAND: largest difference percentage")
        parser.add_argument("--max-p", type=float, default=0.05, help="STRAND: largest p of the length correlation")
        parser.add_argument("--learn-from", metavar="PARQUET",
                            help="labelled pairs (src_url, trg_url, label) to learn a decision tree from")
        parser.add_argument("--max-depth", type=int, default=3, help="depth of the learned tree")
        parser.add_argument("--max-train", type=int, default=100_000, help="most labelled pairs used for learning")

    def validate_arguments(self, args) -> None:
        super().validate_arguments(args)
        if not 0 < args.max_dp <= 1 or not 0 < args.max_p <= 1:
            raise ConfigError("--max-dp and --max-p must be in (0, 1]")
        if args.max_depth < 1:
            raise ConfigError("--max-depth must be at least 1")

    def documents(self) -> DataFrame:
        """docs with `images` reduced to the host-distinctive ones (boilerplate images removed)."""
        docs = self.read_table("docs").dropDuplicates(["url"])
        ok = docs.where("status = 'ok'")
        host_docs = ok.groupBy("host").agg(F.count("*").alias("host_docs"))
        pictures = ok.select("host", "url", F.explode(F.array_distinct("images")).alias("image"))
        boilerplate = (pictures.groupBy("host", "image").agg(F.count("*").alias("doc_freq")).join(host_docs, "host")
                       .where((F.col("doc_freq") > F.col("host_docs") * BOILERPLATE_IMAGE_SHARE)
                              & (F.col("doc_freq") >= MIN_BOILERPLATE_DOCS))
                       .select("host", "image"))
        distinctive = (pictures.join(boilerplate, ["host", "image"], "left_anti")
                       .groupBy("url").agg(F.collect_set("image").alias("distinctive_images")))
        return (docs.join(distinctive, "url", "left")
                .withColumn("images", F.when(F.col("status") == "ok", F.coalesce(
                    "distinctive_images", F.array().cast("array<string>")))).drop("distinctive_images"))

    @staticmethod
    def join_documents(pairs: DataFrame, docs: DataFrame) -> DataFrame:
        """Each pair with the features of both documents (columns src_* / trg_*; null when missing)."""
        for column in ("host", "src_lang", "trg_lang"):
            if column not in pairs.columns:
                pairs = pairs.withColumn(column, F.lit(None).cast("string"))
        joined = pairs.select("host", "src_url", "trg_url", "src_lang", "trg_lang")
        for side in ("src", "trg"):
            renamed = docs.select(F.col("url").alias(f"{side}_url"),
                                  *[F.col(c).alias(f"{side}_{c}") for c in DOC_FEATURES])
            joined = joined.join(renamed, f"{side}_url", "left")
        return joined

    def learn_rule(self, docs: DataFrame) -> TreeRule:
        labelled = self.spark.read.parquet(self.args.learn_from)
        label = "label" if "label" in labelled.columns else "parallel"
        if label not in labelled.columns or not {"src_url", "trg_url"} <= set(labelled.columns):
            raise ConfigError("--learn-from needs columns src_url, trg_url and label (or parallel)")
        threshold = ThresholdRule(self.args.max_dp, self.args.max_p)
        features = (self.join_documents(labelled, docs)
                    .mapInPandas(functools.partial(verify_batches, rule=threshold.to_dict()), VERIFIED_SCHEMA)
                    .where(F.col("reason").isNull() | ~F.col("reason").isin(*DOCUMENT_REASONS))
                    .join(labelled.select("src_url", "trg_url", F.col(label).cast("boolean").alias("label")),
                          ["src_url", "trg_url"]))
        rows = features.limit(self.args.max_train).toPandas()  # bounded by --max-train
        if rows.empty:
            raise ConfigError("--learn-from: none of the labelled pairs has both documents in docs")
        rule = TreeRule.fit(feature_matrix(rows), rows["label"], max_depth=self.args.max_depth)
        learned = [rule.decide(row)[0] and row["lang_ok"] for row in rows.to_dict("records")]
        self.report.metric("learned_from", {"pairs": len(rows), "positives": int(rows["label"].sum()),
                                            "accuracy": round(float((rows["label"] == learned).mean()), 4),
                                            "threshold_rule_accuracy": round(float(
                                                (rows["label"] == rows["parallel"]).mean()), 4),
                                            "features": list(RULE_FEATURES)})
        return rule

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

    def process(self) -> None:
        table = self.args.pairs or ("scored_pairs" if self.table_exists("scored_pairs") else "candidates")
        pairs = self.read_table(table)
        self.report.input(table, pairs.count())
        docs = self.documents()
        with self.arrow_batch_rows(ARROW_BATCH_ROWS):  # two token sequences per row: keep batches small
            rule = self.learn_rule(docs) if self.args.learn_from else ThresholdRule(self.args.max_dp, self.args.max_p)
            self.report.metric("rule", rule.to_dict())
            verified = self.join_documents(pairs, docs).mapInPandas(
                functools.partial(verify_batches, rule=rule.to_dict()), VERIFIED_SCHEMA)
            self.write_table(verified, "verified_pairs")
        written = self.read_table("verified_pairs")
        reasons = written.withColumn("outcome", F.when(F.col("parallel"), F.lit("ok")).otherwise(F.col("reason")))
        self.report.add_counts(self.count_by(reasons, "outcome"), bad_reasons=DOCUMENT_REASONS)


if __name__ == "__main__":
    VerifyPairsJob().run()
