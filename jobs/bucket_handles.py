"""STRAND candidate pairs: URLs of the two languages whose handles (URL minus LSS) are equal.

Reads `urls`, computes each URL's handle on the JVM (one regexp_replace with the
LSS alternation of udfs/rank/handles.py, optionally a second one with the host's learned
markers), buckets equal handles with a distributed sort (window over the handle),
caps each bucket at --max-bucket URLs per language, and writes `candidates`
(source='handle'): every src×trg pair inside a bucket.

Each URL ends as: ok (in a pair), capped, no_partner, duplicate_url, no_language,
other_language, redirect (record_type, else a 3xx status; filtered), or empty_url /
url_too_long / unparsable_url (bad). Statuses are scan-cdx's filter (--status).
Several pairs (--langs en:fr,de) are bucketed one after the other, each into its lang_pair partition; the
report then counts each URL once per pair.
"""
from __future__ import annotations

from parascout.jobs.base import ConfigError, Job, PairSkipped, language_pairs_option
from parascout.udfs.rank import handles

#: URLs left out of the buckets (bad ones are handles.BAD_URL_REASONS)
FILTERED_REASONS = frozenset({"no_language", "other_language", "redirect", "duplicate_url", "no_partner", "capped"})
SIZE_CLASSES = ((1, "1"), (2, "2"), (5, "3-5"), (10, "6-10"), (50, "11-50"), (500, "51-500"))


class BucketHandlesJob(Job):
    name = "bucket-handles"
    description = "STRAND: pair URLs of two languages whose handles (URL minus language substrings) are equal"
    outputs = ("candidates",)
    inputs = ("urls",)
    input_paths = ("lss_conf",)

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--langs", required=True, help="the language pair, e.g. en,is (ISO 639-1 or 639-3), or "
                                                            "several: en:fr,de or en-fr,de-fr")
        parser.add_argument("--max-bucket", type=int, default=50, help="at most this many URLs per language per bucket")
        parser.add_argument("--lss-conf", action="append", default=[], metavar="YAML",
                            help="extra LSS YAML merged over conf/lss.yaml (repeatable)")
        parser.add_argument("--learn-lss", action="store_true",
                            help="also strip host-specific markers learned from the language labels")
        parser.add_argument("--learn-min-frac", type=float, default=0.9)
        parser.add_argument("--learn-max-other-frac", type=float, default=0.05)
        parser.add_argument("--learn-min-support", type=int, default=5)

    def validate_arguments(self, args):
        super().validate_arguments(args)
        self.pairs = language_pairs_option(args.langs)
        try:
            self.strippers = {pair: handles.build_stripper(pair, tuple(args.lss_conf)) for pair in self.pairs}
        except (ValueError, FileNotFoundError) as error:
            raise ConfigError(f"{self.name}: {error}") from error
        if args.max_bucket < 1:
            raise ConfigError("--max-bucket must be at least 1")
        if not (0 < args.learn_min_frac <= 1 and 0 <= args.learn_max_other_frac < 1 and args.learn_min_support >= 1):
            raise ConfigError("--learn-min-frac in (0, 1], --learn-max-other-frac in [0, 1), --learn-min-support >= 1")

    def process(self):
        self.for_each_pair(self.bucket_pair)

    def bucket_pair(self, pair):
        """One language pair: classify, bucket and pair the URLs, into the pair's partition of candidates."""
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        src, trg = pair
        self.stripper = self.strippers[pair]
        urls = self.read_table("urls")
        self.report.input("urls", urls.count())
        self.report.metric("langs", [src, trg])
        self.report.metric("lss_substrings", len(self.stripper.substrings))
        classified = self.classify(urls, src, trg).persist(StorageLevel.MEMORY_AND_DISK)
        self.report_flags(classified, src, trg)
        valid = classified.where(F.col("reason").isNull()).select("url", "host", "lang")
        learned_patterns = self.learn(valid, src, trg) if self.args.learn_lss else None
        if learned_patterns is not None:
            valid = valid.join(learned_patterns, "host", "left")
        pattern = F.col("learned_pattern") if learned_patterns is not None else None
        valid = valid.withColumn("handle", handles.handle_column(F.col("url"), self.stripper, pattern))
        bucketed = self.bucket(valid, src, trg).persist(StorageLevel.MEMORY_AND_DISK)

        side = {lang: bucketed.where((F.col("reason") == "ok") & (F.col("lang") == lang)) for lang in (src, trg)}
        pairs = side[src].alias("s").join(side[trg].alias("t"), "handle").select(
            F.col("s.host").alias("host"), F.col("s.url").alias("src_url"), F.col("t.url").alias("trg_url"),
            F.lit(src).alias("src_lang"), F.lit(trg).alias("trg_lang"), F.lit("handle").alias("source"), "handle")
        self.report.metric("pairs_emitted", self.write_table(pairs, "candidates"))

        counts = self.count_by(classified.where(F.col("reason").isNotNull()), "reason")
        for reason, count in self.count_by(bucketed, "reason").items():
            counts[reason] = counts.get(reason, 0) + count
        self.report.add_counts(counts, bad_reasons=handles.BAD_URL_REASONS, filtered_reasons=FILTERED_REASONS)
        self.report_buckets(bucketed, src, trg)
        bucketed.unpersist()
        classified.unpersist()

    def classify(self, urls, src, trg):
        """url, host, lang and the reason a URL is left out before bucketing (null: kept)."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        url = F.col("url")
        host = F.col("host") if "host" in urls.columns else F.regexp_extract(
            F.lower(url), r"^[a-z][a-z0-9+.\-]*://(?:[^/?#]*@)?([^/?#:]*)", 1)
        if "record_type" in urls.columns:
            redirect = F.coalesce(F.col("record_type") == "redirect", F.lit(False))
        elif "status" in urls.columns:
            redirect = F.coalesce(F.col("status").try_cast("int").between(300, 399), F.lit(False))
        else:
            redirect = F.lit(False)
        flags = handles.url_flags_columns(url)
        frame = urls.select(url, host.alias("host"), F.col("lang"), redirect.alias("redirect"),
                            flags["idn_host"].alias("idn_host"), flags["percent_encoded"].alias("percent_encoded"))
        reason = (F.when(handles.url_problem_column(url).isNotNull(), handles.url_problem_column(url))
                  .when(F.col("lang").isNull(), F.lit("no_language"))
                  .when(~F.col("lang").isin(src, trg), F.lit("other_language"))
                  .when(F.col("redirect"), F.lit("redirect")))
        frame = frame.withColumn("reason", reason)
        first = Window.partitionBy("url").orderBy(F.col("reason").isNotNull(), "lang")
        frame = frame.withColumn("reason", F.when(F.col("reason").isNull() & (F.row_number().over(first) > 1),
                                                  F.lit("duplicate_url")).otherwise(F.col("reason")))
        return frame

    def report_flags(self, classified, src, trg):
        """URLs in the wanted languages, and harmless peculiarities counted (IDN hosts, %-encoding)."""
        from pyspark.sql import functions as F

        totals = classified.agg(F.sum(F.col("lang").isin(src, trg).cast("long")).alias("wanted"),
                                *[F.sum((F.col("lang") == lang).cast("long")).alias(lang) for lang in (src, trg)],
                                F.sum(F.col("idn_host").cast("long")).alias("idn_host"),
                                F.sum(F.col("percent_encoded").cast("long")).alias("percent_encoded")).first()
        self.report.metric("urls_in_wanted_langs", int(totals["wanted"] or 0))
        self.report.metric("url_flags", {"idn_host": int(totals["idn_host"] or 0),
                                         "percent_encoded": int(totals["percent_encoded"] or 0)})
        missing = [lang for lang in (src, trg) if not totals[lang]]
        if missing and len(self.pairs) > 1:
            raise PairSkipped("no_pages", f"no URL in {', '.join(missing)}")

    def bucket(self, valid, src, trg):
        """Per URL: bucket sizes by language, rank inside its side of the bucket, and its reason."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        bucket = Window.partitionBy("handle")
        n_src = F.sum((F.col("lang") == src).cast("int")).over(bucket)
        n_trg = F.sum((F.col("lang") == trg).cast("int")).over(bucket)
        rank = F.row_number().over(Window.partitionBy("handle", "lang").orderBy("url"))
        framed = valid.select("url", "host", "lang", "handle", n_src.alias("n_src"), n_trg.alias("n_trg"),
                              rank.alias("rank"))
        reason = (F.when((F.col("n_src") == 0) | (F.col("n_trg") == 0), F.lit("no_partner"))
                  .when(F.col("rank") > self.args.max_bucket, F.lit("capped")).otherwise(F.lit("ok")))
        return framed.withColumn("reason", reason)

    def learn(self, valid, src, trg):
        """Host-specific LSS (udfs.rank.handles.learn_lss on the JVM); writes `learned_lss`, returns host patterns."""
        from pyspark.sql import functions as F

        args = self.args
        tokens = valid.select("host", "lang", F.explode(handles.learnable_tokens_column(
            F.col("url"), self.stripper.known, self.stripper.language_keys))
                              .alias("token"))
        per_lang = [(name, F.col("lang") == lang) for name, lang in (("a", src), ("b", trg))]
        support = tokens.groupBy("host", "token").agg(*[F.sum(is_lang.cast("long")).alias(f"s_{name}")
                                                        for name, is_lang in per_lang])
        totals = valid.groupBy("host").agg(*[F.sum(is_lang.cast("long")).alias(f"t_{name}") for name, is_lang in per_lang])
        joined = support.join(totals.where((F.col("t_a") >= args.learn_min_support)
                                           & (F.col("t_b") >= args.learn_min_support)), "host")
        sides = []
        for mine, other, lang in (("a", "b", src), ("b", "a", trg)):
            frac, frac_other = F.col(f"s_{mine}") / F.col(f"t_{mine}"), F.col(f"s_{other}") / F.col(f"t_{other}")
            sides.append(joined.where((F.col(f"s_{mine}") >= args.learn_min_support) & (frac >= args.learn_min_frac)
                                      & (frac_other <= args.learn_max_other_frac))
                         .select("host", "token", F.lit(lang).alias("lang"), F.col(f"s_{mine}").alias("support"),
                                 F.round(frac, 4).alias("frac_lang"), F.round(frac_other, 4).alias("frac_other")))
        n_learned = self.write_table(sides[0].unionByName(sides[1]), "learned_lss")
        learned = self.read_table("learned_lss")
        top = learned.orderBy(F.desc("support"), "host", "token").limit(25).collect()
        self.report.metric("learned_lss", {
            "tokens": n_learned, "hosts": learned.select("host").distinct().count(),
            "top": [f"{r['host']} {r['lang']} {r['token']} (support {r['support']}, {r['frac_lang']} vs "
                    f"{r['frac_other']})" for r in top]})
        return learned.groupBy("host").agg(handles.learned_pattern_column(F.col("token")).alias("learned_pattern"))

    def report_buckets(self, bucketed, src, trg):
        """Bucket counts, size classes, capped buckets: aggregated on the cluster, a few numbers back."""
        from pyspark.sql import functions as F

        buckets = bucketed.groupBy("handle").agg(F.first("n_src").alias("n_src"), F.first("n_trg").alias("n_trg"))
        size = F.col("n_src") + F.col("n_trg")
        paired = (F.col("n_src") > 0) & (F.col("n_trg") > 0)
        capped = paired & ((F.col("n_src") > self.args.max_bucket) | (F.col("n_trg") > self.args.max_bucket))
        row = buckets.agg(F.count("*").alias("buckets"), F.sum(paired.cast("long")).alias("paired"),
                          F.sum(capped.cast("long")).alias("capped"), F.max(size).alias("largest")).first()
        size_class = F.lit(">500")
        for limit, label in reversed(SIZE_CLASSES):
            size_class = F.when(size <= limit, F.lit(label)).otherwise(size_class)
        classes = self.count_by(buckets.select(size_class.alias("size")), "size")
        self.report.metric("buckets", int(row["buckets"] or 0))
        self.report.metric("buckets_with_both_languages", int(row["paired"] or 0))
        self.report.metric("capped_buckets", int(row["capped"] or 0))
        self.report.metric("largest_bucket", int(row["largest"] or 0))
        self.report.metric("bucket_sizes", dict(sorted(classes.items(), key=lambda kv: _size_order(kv[0]))))


def _size_order(label: str) -> int:
    labels = [label for _, label in SIZE_CLASSES] + [">500"]
    return labels.index(label) if label in labels else len(labels)


if __name__ == "__main__":
    BucketHandlesJob().run()
