"""STRAND candidate pairs: URLs of the two languages whose handles (URL minus LSS) are equal.

Reads `urls`, computes each URL's handle on the JVM (one regexp_replace with the
LSS alternation of udfs/rank/handles.py, optionally a second one with the host's learned
markers), buckets equal handles with a distributed sort (window over the handle),
caps each bucket at --max-bucket URLs per language, and writes `candidates`
(source='handle'): every src×trg pair inside a bucket.

Each URL ends as: ok (in a pair), capped, no_partner, duplicate_url, no_language,
other_language, redirect (record_type, else a 3xx status; filtered), or empty_url /
url_too_long / unparsable_url (bad). Statuses are scan-cdx's filter (--status).
Several pairs (--langs en:fr,de) are bucketed in one pass: a URL joins each pair its language belongs to, every
window and join is keyed by lang_pair too, each table is written once into lang_pair partitions, and the report
counts each URL once per pair.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.jobs.language_pairs import PairSkipped, language_pairs_option
from parascout.udfs.common.langs import pair_label
from parascout.udfs.common.table_store import PAIR_COLUMN
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
        handles.add_learned_lss_arguments(parser)

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
        from pyspark import StorageLevel

        classified = self.classify(self.read_table("urls")).persist(StorageLevel.MEMORY_AND_DISK)
        self.url_groups = self.count_url_groups(classified)
        self.missing = {pair_label(pair): [lang for lang in pair if not self.url_groups.by_lang.get(lang)]
                        for pair in self.pairs}
        # a pair without a URL in one of its languages is skipped, unless it is the run's only pair
        active = [pair for pair in self.pairs if len(self.pairs) == 1 or not self.missing[pair_label(pair)]]
        self.outcomes: dict[str, dict[str, int]] = {}
        self.bucket_stats: dict[str, dict] = {}
        self.learned_stats: dict[str, dict] = {}
        if active:
            self.bucket_pairs(classified, active)
        classified.unpersist()
        self.for_each_pair(self.report_pair)

    def bucket_pairs(self, classified, pairs):
        """Every pair at once: bucket and pair the URLs of its two languages, into its partition of candidates."""
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        expanded = self.by_pair(classified, pairs)
        valid = expanded.where(F.col("reason").isNull()).select(PAIR_COLUMN, "src_lang", "trg_lang", "url", "host",
                                                                "lang")
        learned_patterns = self.learn(valid, pairs) if self.args.learn_lss else None
        if learned_patterns is not None:
            valid = valid.join(learned_patterns, [PAIR_COLUMN, "host"], "left")
        pattern = F.col("learned_pattern") if learned_patterns is not None else None
        valid = valid.withColumn("handle", self.per_stripper(
            pairs, lambda stripper: handles.handle_column(F.col("url"), stripper, pattern)))
        bucketed = self.bucket(valid).persist(StorageLevel.MEMORY_AND_DISK)
        self.outcomes = self.count_outcomes(expanded.where(F.col("reason").isNotNull()), bucketed)
        self.bucket_stats = self.count_buckets(bucketed)

        side = {name: bucketed.where((F.col("reason") == "ok") & (F.col("lang") == F.col(f"{name}_lang")))
                for name in ("src", "trg")}
        candidates = side["src"].alias("s").join(side["trg"].alias("t"), [PAIR_COLUMN, "handle"]).select(
            F.col("s.host").alias("host"), F.col("s.url").alias("src_url"), F.col("t.url").alias("trg_url"),
            F.col("s.src_lang").alias("src_lang"), F.col("s.trg_lang").alias("trg_lang"),
            F.lit("handle").alias("source"), "handle", PAIR_COLUMN)
        self.write_by_pair(candidates, "candidates", pairs,
                           {label: stats["pairs"] for label, stats in self.bucket_stats.items()})
        bucketed.unpersist()

    def classify(self, urls):
        """url, host, lang, redirect, URL flags and the reason a URL is left out whatever the pair (null: none)."""
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
        reason = (F.when(handles.url_problem_column(url).isNotNull(), handles.url_problem_column(url))
                  .when(F.col("lang").isNull(), F.lit("no_language")))
        return urls.select(url, host.alias("host"), F.col("lang"), redirect.alias("redirect"),
                           flags["idn_host"].alias("idn_host"), flags["percent_encoded"].alias("percent_encoded"),
                           reason.alias("reason"))

    def count_url_groups(self, classified) -> UrlGroups:
        """The URLs counted by (reason, language, redirect), and their flags: what each pair's report takes."""
        from pyspark.sql import functions as F

        rows = classified.groupBy("reason", "lang", "redirect").agg(
            F.count("*").alias("urls"), F.sum(F.col("idn_host").cast("long")).alias("idn_host"),
            F.sum(F.col("percent_encoded").cast("long")).alias("percent_encoded")).collect()
        groups = UrlGroups()
        for row in rows:
            groups.rows.append((row["reason"], row["lang"], bool(row["redirect"]), int(row["urls"])))
            groups.total += int(row["urls"])
            groups.flags["idn_host"] += int(row["idn_host"] or 0)
            groups.flags["percent_encoded"] += int(row["percent_encoded"] or 0)
            if row["lang"] is not None:
                groups.by_lang[row["lang"]] = groups.by_lang.get(row["lang"], 0) + int(row["urls"])
        return groups

    def by_pair(self, classified, pairs):
        """The URLs each pair buckets (language in the pair, not redirected), once per such pair with its lang_pair,
        src_lang and trg_lang; reason duplicate_url for all but the first row of a URL in the pair (by language)."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        kept = classified.where(F.col("reason").isNull() & ~F.col("redirect")).select("url", "host", "lang")
        expanded = kept.join(F.broadcast(self.pair_languages(pairs)), "lang")
        first = Window.partitionBy(PAIR_COLUMN, "url").orderBy("lang")
        return expanded.withColumn("reason", F.when(F.row_number().over(first) > 1, F.lit("duplicate_url")))

    def per_stripper(self, pairs, column_of):
        """A column computed with each row's pair's stripper (`column_of(stripper)`)."""
        return handles.column_by_pair(PAIR_COLUMN, {pair_label(pair): self.strippers[pair] for pair in pairs},
                                      column_of)

    def bucket(self, valid):
        """Per URL: bucket sizes by language, rank inside its side of the bucket, and its reason."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        bucket = Window.partitionBy(PAIR_COLUMN, "handle")
        n_src = F.sum((F.col("lang") == F.col("src_lang")).cast("int")).over(bucket)
        n_trg = F.sum((F.col("lang") == F.col("trg_lang")).cast("int")).over(bucket)
        rank = F.row_number().over(Window.partitionBy(PAIR_COLUMN, "handle", "lang").orderBy("url"))
        framed = valid.select(PAIR_COLUMN, "src_lang", "trg_lang", "url", "host", "lang", "handle",
                              n_src.alias("n_src"), n_trg.alias("n_trg"), rank.alias("rank"))
        reason = (F.when((F.col("n_src") == 0) | (F.col("n_trg") == 0), F.lit("no_partner"))
                  .when(F.col("rank") > self.args.max_bucket, F.lit("capped")).otherwise(F.lit("ok")))
        return framed.withColumn("reason", reason)

    def learn(self, valid, pairs):
        """Host-specific LSS per pair (udfs.rank.handles.learn_lss on the JVM); writes `learned_lss`, returns the
        (lang_pair, host) patterns."""
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        args = self.args
        tokens = valid.select(PAIR_COLUMN, "src_lang", "trg_lang", "host", "lang", F.explode(self.per_stripper(
            pairs, lambda stripper: handles.learnable_tokens_column(F.col("url"), stripper.known,
                                                                    stripper.language_keys))).alias("token"))
        per_lang = [(name, F.col("lang") == F.col(f"{side}_lang")) for name, side in (("a", "src"), ("b", "trg"))]
        support = tokens.groupBy(PAIR_COLUMN, "src_lang", "trg_lang", "host", "token").agg(
            *[F.sum(is_lang.cast("long")).alias(f"s_{name}") for name, is_lang in per_lang])
        totals = valid.groupBy(PAIR_COLUMN, "host").agg(*[F.sum(is_lang.cast("long")).alias(f"t_{name}")
                                                          for name, is_lang in per_lang])
        joined = support.join(totals.where((F.col("t_a") >= args.learn_min_support)
                                           & (F.col("t_b") >= args.learn_min_support)), [PAIR_COLUMN, "host"])
        sides = []
        for mine, other, side in (("a", "b", "src"), ("b", "a", "trg")):
            frac, frac_other = F.col(f"s_{mine}") / F.col(f"t_{mine}"), F.col(f"s_{other}") / F.col(f"t_{other}")
            sides.append(joined.where((F.col(f"s_{mine}") >= args.learn_min_support) & (frac >= args.learn_min_frac)
                                      & (frac_other <= args.learn_max_other_frac))
                         .select("host", "token", F.col(f"{side}_lang").alias("lang"),
                                 F.col(f"s_{mine}").alias("support"), F.round(frac, 4).alias("frac_lang"),
                                 F.round(frac_other, 4).alias("frac_other"), PAIR_COLUMN))
        learned = sides[0].unionByName(sides[1]).persist(StorageLevel.MEMORY_AND_DISK)
        self.learned_stats = self.count_learned(learned)
        self.write_by_pair(learned, "learned_lss", pairs,
                           {label: stats["tokens"] for label, stats in self.learned_stats.items()})
        patterns = learned.groupBy(PAIR_COLUMN, "host").agg(
            handles.learned_pattern_column(F.col("token")).alias("learned_pattern"))
        return patterns

    def count_learned(self, learned) -> dict[str, dict]:
        """Per pair: learned tokens, their hosts and the 25 best supported (one action for every pair)."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        pair = Window.partitionBy(PAIR_COLUMN)
        best = Window.partitionBy(PAIR_COLUMN).orderBy(F.desc("support"), "host", "token", "lang")
        rows = (learned.withColumn("tokens", F.count("*").over(pair))
                .withColumn("hosts", F.size(F.collect_set("host").over(pair)))
                .withColumn("rank", F.row_number().over(best)).where(F.col("rank") <= 25).collect())
        stats: dict[str, dict] = {}
        for row in sorted(rows, key=lambda row: (row[PAIR_COLUMN], row["rank"])):
            entry = stats.setdefault(row[PAIR_COLUMN], {"tokens": int(row["tokens"]), "hosts": int(row["hosts"]),
                                                        "top": []})
            entry["top"].append(f"{row['host']} {row['lang']} {row['token']} (support {row['support']}, "
                                f"{row['frac_lang']} vs {row['frac_other']})")
        return stats

    def count_outcomes(self, duplicates, bucketed) -> dict[str, dict[str, int]]:
        """Per pair: its URLs by what bucketing made of them (duplicate_url, ok, no_partner, capped)."""
        return self.counts_by_pair(duplicates.select(PAIR_COLUMN, "reason").unionByName(
            bucketed.select(PAIR_COLUMN, "reason")), "reason")

    def count_buckets(self, bucketed) -> dict[str, dict]:
        """Per pair: bucket counts, size classes, capped buckets and the URL pairs the buckets make (one action)."""
        from pyspark.sql import functions as F

        def ok_on(side):
            return F.sum(((F.col("reason") == "ok") & (F.col("lang") == F.col(f"{side}_lang"))).cast("long"))

        buckets = bucketed.groupBy(PAIR_COLUMN, "handle").agg(
            F.first("n_src").alias("n_src"), F.first("n_trg").alias("n_trg"),
            ok_on("src").alias("ok_src"), ok_on("trg").alias("ok_trg"))
        size = F.col("n_src") + F.col("n_trg")
        paired = (F.col("n_src") > 0) & (F.col("n_trg") > 0)
        capped = paired & ((F.col("n_src") > self.args.max_bucket) | (F.col("n_trg") > self.args.max_bucket))
        size_class = F.lit(">500")
        for limit, label in reversed(SIZE_CLASSES):
            size_class = F.when(size <= limit, F.lit(label)).otherwise(size_class)
        rows = buckets.groupBy(PAIR_COLUMN, size_class.alias("size")).agg(
            F.count("*").alias("buckets"), F.sum(paired.cast("long")).alias("paired"),
            F.sum(capped.cast("long")).alias("capped"), F.max(size).alias("largest"),
            F.sum(F.col("ok_src") * F.col("ok_trg")).alias("pairs")).collect()
        stats: dict[str, dict] = {}
        for row in rows:
            entry = stats.setdefault(row[PAIR_COLUMN], {"buckets": 0, "paired": 0, "capped": 0, "largest": 0,
                                                        "pairs": 0, "sizes": {}})
            for key in ("buckets", "paired", "capped", "pairs"):
                entry[key] += int(row[key] or 0)
            entry["largest"] = max(entry["largest"], int(row["largest"] or 0))
            entry["sizes"][row["size"]] = int(row["buckets"])
        return stats

    def write_by_pair(self, frame, table: str, pairs, rows: dict[str, int]) -> None:
        """Write `frame` (with lang_pair) once, into lang_pair partitions; a pair without rows gets its partition
        with none, as a pass of its own writes it (a partitioned write makes no folder, and no file with the
        schema when no pair has a row)."""
        if any(rows.values()):
            self.write_table(frame, table)
        for pair in pairs:
            if not rows.get(pair_label(pair)):
                self.pair = pair
                try:
                    self.write_table(frame.limit(0), table)
                finally:
                    self.pair = None

    def report_pair(self, pair):
        """One pair's counts and metrics, from what the one pass collected."""
        src, trg = pair
        label = pair_label(pair)
        groups = self.url_groups
        self.report.input("urls", groups.total)
        self.report.metric("langs", [src, trg])
        self.report.metric("lss_substrings", len(self.strippers[pair].substrings))
        self.report.metric("urls_in_wanted_langs", groups.by_lang.get(src, 0) + groups.by_lang.get(trg, 0))
        self.report.metric("url_flags", dict(groups.flags))
        if self.missing[label] and len(self.pairs) > 1:
            raise PairSkipped("no_pages", f"no URL in {', '.join(self.missing[label])}")
        if self.args.learn_lss:
            self.report.metric("learned_lss", self.learned_stats.get(label, {"tokens": 0, "hosts": 0, "top": []}))
        stats = self.bucket_stats.get(label, {"buckets": 0, "paired": 0, "capped": 0, "largest": 0, "pairs": 0,
                                              "sizes": {}})
        self.report.metric("pairs_emitted", stats["pairs"])
        counts = groups.reasons(pair)
        for reason, count in self.outcomes.get(label, {}).items():
            counts[reason] = counts.get(reason, 0) + count
        self.report.add_counts(counts, bad_reasons=handles.BAD_URL_REASONS, filtered_reasons=FILTERED_REASONS)
        self.report.metric("buckets", stats["buckets"])
        self.report.metric("buckets_with_both_languages", stats["paired"])
        self.report.metric("capped_buckets", stats["capped"])
        self.report.metric("largest_bucket", stats["largest"])
        self.report.metric("bucket_sizes", dict(sorted(stats["sizes"].items(), key=lambda kv: _size_order(kv[0]))))


@dataclass
class UrlGroups:
    """The `urls` table counted by (reason whatever the pair, language, redirect), and its URL flags."""

    rows: list[tuple[str | None, str | None, bool, int]] = field(default_factory=list)
    total: int = 0
    by_lang: dict[str, int] = field(default_factory=dict)
    flags: dict[str, int] = field(default_factory=lambda: {"idn_host": 0, "percent_encoded": 0})

    def reasons(self, pair) -> dict[str, int]:
        """The pair's URLs left out before bucketing, by reason: bad, no_language, other_language, redirect."""
        counts: dict[str, int] = {}
        for reason, lang, redirect, urls in self.rows:
            reason = reason or ("other_language" if lang not in pair else "redirect" if redirect else None)
            if reason:
                counts[reason] = counts.get(reason, 0) + urls
        return counts


def _size_order(label: str) -> int:
    labels = [label for _, label in SIZE_CLASSES] + [">500"]
    return labels.index(label) if label in labels else len(labels)


if __name__ == "__main__":
    BucketHandlesJob().run()
