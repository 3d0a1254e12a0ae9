"""replay-crawl: replay crawl policies over each site's archived link graph and measure their yield.

Per site (docs.groupBy('site').cogroup(truth).applyInPandas) udfs.replay replays every policy
for `--budget` × the site's archived documents. A site is every host of a registered domain (www.x.org,
fra.x.org, x.org -> x.org), so a crawl follows links between a site's hosts as a website-scoped crawler does,
whatever the hosts are called; `--group-by site` groups as rank-pairs does (www and language labels left out,
so fra.x.org stays apart from x.org), `name` joins country domains (x.de, x.fr), `host` keeps hosts apart.
Truth pairs join the site of their src_url's host, whatever their `host` column says. Outputs, keyed by `site` (with
`--group-by host` each host is its own site): replay_summary (site × policy metrics),
replay_curves (yield curve sampled every 1% of the budget), replay_deciles (the paper's Fig. 7
view), replay_frontier (per site, the fetch order of the policy planned for it: udfs/replay/frontier.py; what
export-crawl-plan hands a crawler) and <root>/replay/report.{md,html} with PNG plots. The report is built on the driver from
the summary rows, which are bounded by sites × policies, and from Spark-side means. Several pairs (--langs en:fr,de)
are replayed one after the other in one job, each into its lang_pair partitions, with its own
replay/report-<pair>.{md,html} and <plot>-<pair>.png; a pair without truth pairs is a counted skip.
"""
from __future__ import annotations

import argparse

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError, JobFailed
from parascout.jobs.language_pairs import PairSkipped, language_pairs_option
from parascout.udfs.common import storage
from parascout.udfs.common.langs import pair_label
from parascout.udfs.rank.domain_focus import pairs_in_domain
from parascout.udfs.replay import POLICY_NAMES
from parascout.udfs.replay.batch import RESULT_SCHEMA, SUMMARY_COLUMNS, ReplayRun, replay_host, seed_urls_by_host
from parascout.udfs.replay.config import ReplayConfig
from parascout.udfs.replay.frontier import FRONTIER_FIELDS
from parascout.udfs.replay.metrics import headline, prediction_agreement
from parascout.udfs.replay.policies import MODEL_POLICIES
from parascout.udfs.replay.report import build_report, write_report


def shortlist_site_of(shortlist_sites, langs: tuple[str, str], grouped_by: str = "site"):
    """Replayed site (or host) -> the shortlist's name for it: itself, or its site by `grouped_by` (rank-pairs
    --group-by site: www.x.com, fr.x.com -> x.com; name: x.de, x.fr -> x.*) when the shortlist does not list it."""
    from parascout.udfs.common.langs import language_markers
    from parascout.udfs.common.sites import site_of
    from parascout.udfs.common.urls import registered_domain

    listed, markers = set(shortlist_sites), language_markers(langs)
    return lambda host: host if host in listed else site_of(host, registered_domain(host), markers, grouped_by)


SMART_NEEDS_MODELS = "smart, smart+lang and smart+site skipped: they need the URL models (--lang-model DIR --pair-model DIR)"
DOCS_COLUMNS = ("url", "host", "status", "cld2_lang", "outlinks", "outlinks_same_host", "outlink_cues", "warc_length")
SKIP_REASONS = ("host_without_truth_pairs", "host_too_large")
BAD_REASONS = frozenset({"missing_url_or_host"})
FILTERED_REASONS = frozenset({"duplicate_url", *SKIP_REASONS})
#: scheme://[user@]host of a URL (the host lower-cased by the caller)


class ReplayCrawlJob(Job):
    name = "replay-crawl"
    description = ("replay crawl policies (" + ", ".join(POLICY_NAMES) + ") over archived link graphs")
    outputs = ("replay_summary", "replay_curves", "replay_deciles", "replay_frontier")
    inputs = ("docs",)
    input_paths = ("seeds", "truth")
    model_paths = ("lang_model", "pair_model")
    path_keywords = frozenset({"home", "verified_pairs"})
    optional_inputs = ("verified_pairs", "shortlist", "texts")
    #: `replay-crawl: {replay: {site_partner_weight: 1.0}}` in a --conf file
    stage_configs = (("replay", ReplayConfig),)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--langs", required=True, help="the language pair, e.g. en,is, or several: en:fr,de or "
                                                            "en-fr,de-fr")
        parser.add_argument("--policies", default=",".join(POLICY_NAMES), help="comma-separated policies")
        parser.add_argument("--budget", type=float, default=1.0, help="fetches per host, × its archived documents")
        parser.add_argument("--seeds", default="home", help="'home' (each host's root URL, else its shortest URL) or a file of URLs")
        parser.add_argument("--lang-model", help="language-from-URL model directory (needed by smart)")
        parser.add_argument("--pair-model", help="parallel-URL-pair model directory (needed by smart)")
        parser.add_argument("--truth", default="verified_pairs",
                            help="'verified_pairs' (rows with parallel=true) or a truth pairs Parquet path")
        parser.add_argument("--count-missing-as-fetch", action=argparse.BooleanOptionalAction, default=True,
                            help="a link to a page missing from the archive costs a (wasted) fetch")
        parser.add_argument("--random-seed", type=int, default=0, help="seed of the random crawl policy")
        parser.add_argument("--max-host-docs", type=int, default=200_000,
                            help="skip (and count) hosts with more docs rows: one host is replayed in one task")
        parser.add_argument("--compare-policy", default="smart", help="policy compared with the shortlist")
        parser.add_argument("--max-failed-share", type=float, default=0.0,
                            help="fail the job when a larger share of the replayed sites failed (default 0: any)")
        parser.add_argument("--in-domain-only", action="store_true",
                            help="yield counts only truth pairs with a page in the domain (texts.in_domain: "
                                 "fetch-docs --domain-terms)")
        parser.add_argument("--group-by", choices=["domain", "site", "name", "host"], default="domain",
                            help="crawl scope: a registered domain's hosts together (www.x.org, fra.x.org, x.org: "
                                 "what a website-scoped crawler follows), a site as rank-pairs groups by default "
                                 "(www and language labels left out only), a name (x.de, x.fr and their hosts: "
                                 "rank-pairs --group-by name) or each host alone")

    def validate_arguments(self, args: argparse.Namespace) -> None:
        super().validate_arguments(args)
        self.pairs = language_pairs_option(args.langs)
        policies = [p.strip() for p in args.policies.split(",") if p.strip()]
        unknown = sorted(set(policies) - set(POLICY_NAMES))
        if unknown or not policies:
            raise ConfigError(f"--policies: unknown {unknown}; choose from {', '.join(POLICY_NAMES)}")
        if args.truth != "verified_pairs":
            args.use_verified_pairs = "no"  # the truth is a file
        args.use_texts = "yes" if args.in_domain_only else "no"  # read for --in-domain-only alone
        if not 0 <= args.max_failed_share <= 1:
            raise ConfigError("--max-failed-share must be between 0 and 1")
        if args.budget <= 0:
            raise ConfigError("--budget must be > 0 (a fraction of each host's archived documents, e.g. 1.0)")
        if bool(args.lang_model) != bool(args.pair_model):
            raise ConfigError("give both --lang-model and --pair-model (smart needs both), or neither")
        for path in (args.lang_model, args.pair_model, None if args.seeds == "home" else args.seeds,
                     None if args.truth == "verified_pairs" else args.truth):
            if path and not storage.exists(path):
                raise ConfigError(f"{path}: no such file or directory")

    def process(self) -> None:
        from pyspark import StorageLevel

        # read once for every pair: each pair's replay selects its sites' rows from the same docs
        self.docs = self._docs().persist(StorageLevel.MEMORY_AND_DISK)
        self.docs_rows = self.docs.count()
        self.for_each_pair(self.replay_pair)
        self.docs.unpersist()

    def replay_pair(self, langs: tuple[str, str]) -> None:
        """One language pair: label, replay and write its tables (its lang_pair partitions) and its report files."""
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        args = self.args
        policies, notes = self._policies()
        truth = self._truth(langs)
        if len(self.pairs) > 1 and not self.report.data["by_pair"][pair_label(langs)]["inputs"]["truth_pairs"]:
            self.report.input("docs", self.docs_rows)  # the pair's docs rows, counted filtered by the skip
            raise PairSkipped("no_truth_pairs", "no truth pair of the pair to replay towards")
        docs, truth = self._with_sites(self.docs, truth, langs)
        labelled = self._label(docs, truth, args.max_host_docs)
        reasons = {r["reason"]: (r["rows"], r["sites"]) for r in labelled.groupBy("reason").agg(
            F.count("*").alias("rows"), F.countDistinct("site").alias("sites")).collect()}
        self.report.input("docs", sum(rows for rows, _ in reasons.values()))
        self.report.add_counts({r: n for r, (n, _) in reasons.items() if r != "ok"}, bad_reasons=BAD_REASONS,
                               filtered_reasons=FILTERED_REASONS)
        notes += [f"{self.unit()} skipped ({reason}): {reasons[reason][1]}"
                  for reason in SKIP_REASONS if reason in reasons]
        config = ReplayRun(langs=langs, policies=tuple(policies), budget=args.budget,
                           count_missing_as_fetch=args.count_missing_as_fetch, random_seed=args.random_seed,
                           seeds=self._seeds(), lang_model=args.lang_model, pair_model=args.pair_model,
                           config=getattr(args, "replay", None) or ReplayConfig())
        docs = labelled.where(F.col("reason") == "ok").select("site", *[c for c in DOCS_COLUMNS if c in labelled.columns])
        results = (docs.groupBy("site").cogroup(truth.groupBy("site"))
                   .applyInPandas(lambda site_docs, site_truth: replay_host(site_docs, site_truth, config),
                                  RESULT_SCHEMA)
                   .persist(StorageLevel.MEMORY_AND_DISK))
        self.write_table(results.select(*SUMMARY_COLUMNS), "replay_summary")
        self.write_table(_exploded(results, "curve_", ["fetched", "pairs_found", "docs_found", "bytes_fetched"])
                         .drop("position"), "replay_curves")
        self.write_table(_exploded(results, "decile_", ["fetched", "docs_found", "docs_in_decile", "share"])
                         .select("site", "policy", (F.col("position") + 1).alias("decile"), "fetched", "docs_found",
                                 "docs_in_decile", F.col("share").alias("share_of_parallel_docs")), "replay_deciles")
        self.write_table(_exploded(results.where(F.col("planned")), "frontier_", list(FRONTIER_FIELDS))
                         .select("site", "policy", (F.col("position") + 1).alias("rank"), *FRONTIER_FIELDS),
                         "replay_frontier")
        summary = self.read_table("replay_summary").toPandas()  # sites × policies rows
        means = _means(results.where(F.col("status") == "ok")).toPandas()  # policies × 111 rows
        results.unpersist()
        self._account(summary, reasons.get("ok", (0, 0))[0])
        self._write_replay_report(summary, means, langs, policies, notes)

    def unit(self) -> str:
        """What the replay calls the thing it replays, in messages: hosts, or sites (of every other grouping)."""
        return "hosts" if self.args.group_by == "host" else "sites"

    def _policies(self) -> tuple[list[str], list[str]]:
        """The policies to replay, and notes on the ones skipped (smart without the URL models)."""
        policies, notes = [p.strip() for p in self.args.policies.split(",") if p.strip()], []
        skipped = [p for p in policies if p in MODEL_POLICIES] if not self.args.lang_model else []
        if skipped:
            policies = [p for p in policies if p not in skipped]
            notes.append(SMART_NEEDS_MODELS)
            self.report.metric("skipped_policies", dict.fromkeys(skipped, SMART_NEEDS_MODELS))
            self.log.warning(SMART_NEEDS_MODELS)
        if not policies:
            raise ConfigError("no policy left to replay: " + "; ".join(notes))
        return policies, notes

    def _docs(self):
        """The docs columns a replay reads (the optional ones when the table has them)."""
        docs = self.read_table("docs")
        missing = set(DOCS_COLUMNS[:5]) - set(docs.columns)
        if missing:
            raise ConfigError(f"docs table lacks columns {sorted(missing)}; rerun fetch-docs")
        return docs.select(*[c for c in DOCS_COLUMNS if c in docs.columns])

    def _truth(self, langs: tuple[str, str]):
        """Truth pairs (host, src_url, trg_url): verified_pairs with parallel=true, or a truth Parquet file."""
        from pyspark.sql import functions as F

        if self.args.truth == "verified_pairs":
            frame = self.read_table("verified_pairs").where(F.col("parallel"))
        else:
            frame = self.spark.read.parquet(self.args.truth)
        missing = {"host", "src_url", "trg_url"} - set(frame.columns)
        if missing:
            raise ConfigError(f"--truth {self.args.truth}: missing columns {sorted(missing)}")
        if {"src_lang", "trg_lang"} <= set(frame.columns):
            frame = frame.where(F.col("src_lang").isin(*langs) & F.col("trg_lang").isin(*langs)
                                & (F.col("src_lang") != F.col("trg_lang")))
        frame = frame.select("host", "src_url", "trg_url").where(F.col("host").isNotNull())
        self.report.input("truth_pairs", frame.count(), primary=False)
        if self.args.in_domain_only:
            frame, counts = pairs_in_domain(frame, self.read_table("texts"), error=ConfigError)
            self.report.metric("truth_pairs_by_domain", counts)
        return frame

    @staticmethod
    def _label(docs, truth, max_host_docs: int):
        """Every docs row with the reason it is replayed ('ok') or not."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        ok_first = F.when(F.col("status") == "ok", 0).otherwise(1)
        truth_sites = truth.groupBy("site").agg(F.count("*").alias("n_truth_pairs"))
        rows = (docs.withColumn("site_rows", F.count("*").over(Window.partitionBy("site")))
                .withColumn("copy", F.row_number().over(Window.partitionBy("site", "url").orderBy(ok_first)))
                .join(truth_sites, "site", "left"))
        reason = (F.when(F.col("url").isNull() | F.col("host").isNull(), "missing_url_or_host")
                  .when(F.col("copy") > 1, "duplicate_url")
                  .when(F.col("n_truth_pairs").isNull(), "host_without_truth_pairs")
                  .when(F.col("site_rows") > max_host_docs, "host_too_large").otherwise("ok"))
        return rows.withColumn("reason", reason)

    def _with_sites(self, docs, truth, langs: tuple[str, str]):
        """docs and truth with `site`, the replay's unit: the host, or its language-neutral site (--group-by)."""
        from pyspark.sql import functions as F

        from parascout.udfs.common.sites import with_site
        from parascout.udfs.common.urls import url_host_column

        url_host = url_host_column(F.col("src_url"))
        truth = truth.withColumn("src_host", F.when(url_host != "", url_host).otherwise(F.col("host")))
        if self.args.group_by == "host":
            return docs.withColumn("site", F.col("host")), truth.withColumn("site", F.col("src_host"))
        hosts = (docs.select("host").unionByName(truth.select(F.col("src_host").alias("host")))
                 .where(F.col("host").isNotNull()).distinct())
        sites = with_site(hosts, langs, self.args.group_by).select("host", "site")
        docs = docs.join(sites, "host", "left").withColumn("site", F.coalesce("site", "host"))
        truth = (truth.join(sites.withColumnRenamed("host", "src_host"), "src_host", "left")
                 .withColumn("site", F.coalesce("site", "src_host")))
        return docs, truth

    def _seeds(self) -> dict[str, list[str]]:
        if self.args.seeds == "home":
            return {}
        seeds, unusable = seed_urls_by_host(storage.read_text(self.args.seeds))
        self.report.metric("seed_urls", sum(len(urls) for urls in seeds.values()))
        self.report.metric("seed_lines_unusable", unusable)
        return seeds

    def _account(self, summary, ok_rows: int) -> None:
        """Rows of sites whose replay failed are bad, the others kept; headline metrics per policy."""
        per_site = summary.groupby("site").agg(rows=("n_rows", "first"), failed=("status", lambda s: (s != "ok").any()))
        failed_rows = int(per_site.loc[per_site["failed"], "rows"].sum())
        self.report.kept(ok_rows - failed_rows)
        self.report.bad("replay_failed", failed_rows)
        self.report.metric("hosts_replayed", len(per_site))
        self.report.metric("hosts_failed", int(per_site["failed"].sum()))
        for key, value in headline(summary).items():
            self.report.metric(key, value)
        failed = int(per_site["failed"].sum())
        if failed > self.args.max_failed_share * len(per_site):
            errors = sorted(set(summary.loc[summary["status"] != "ok", "status"].astype(str)))[:3]
            raise JobFailed(f"the replay failed on {failed} of {len(per_site)} {self.unit()}, over "
                            f"--max-failed-share {self.args.max_failed_share:.0%}: {errors}")

    def _write_replay_report(self, summary, means, langs: tuple[str, str], policies: list[str], notes: list[str]):
        """report.md, report.html and the PNGs under <root>/replay/."""
        args = self.args
        curves = means[means["kind"] == "curve"].rename(columns={"position": "percent", "mean": "mean_recall"})
        deciles = means[means["kind"] == "decile"].assign(decile=means["position"] + 1, mean_share=means["mean"])
        comparison, comparison_note = self._shortlist_comparison(summary, langs)
        parameters = {"langs": langs, "policies": ", ".join(policies), "budget": args.budget, "seeds": args.seeds,
                      "truth": args.truth, "count_missing_as_fetch": args.count_missing_as_fetch,
                      "lang_model": args.lang_model, "pair_model": args.pair_model, "random_seed": args.random_seed}
        # one pair: report.md and yield_curves.png as ever; several: each pair's files named for it
        suffix = "" if len(self.pairs) == 1 else f"-{pair_label(langs)}"
        report, images = build_report(summary, curves, deciles, parameters, notes, comparison, comparison_note, suffix)
        self.report.metric("report_files", write_report(storage.join(args.root, "replay"), report, images,
                                                        f"report{suffix}"))

    def _shortlist_comparison(self, summary, langs):
        from pyspark.sql import functions as F

        if not self.uses("shortlist"):
            return None, "No shortlist table under --root: the prediction-vs-replay comparison was skipped."
        if summary.empty:
            return None, "No site was replayed: the prediction-vs-replay comparison was skipped."
        shortlist = self.read_table("shortlist")
        if {"src_lang", "trg_lang"} <= set(shortlist.columns):
            shortlist = shortlist.where(F.col("src_lang").isin(*langs) & F.col("trg_lang").isin(*langs))
        replayed = [p for p in (self.args.compare_policy, "smart", "strand", "bfs", *POLICY_NAMES)
                    if p in set(summary["policy"])]
        frame = shortlist.select("site", "predicted_pairs", "predicted_ratio").toPandas()  # a shortlist: bounded
        if self.args.group_by != "host":  # a shortlist of rank-pairs --group-by host: its hosts summed by site
            site_of = shortlist_site_of((), langs, self.args.group_by)
            frame = (frame.assign(site=frame["site"].map(site_of)).groupby("site", as_index=False, sort=False)
                     .agg(predicted_pairs=("predicted_pairs", "sum"), predicted_ratio=("predicted_ratio", "mean")))
        comparison = prediction_agreement(frame, summary, replayed[0],
                                          site_of=shortlist_site_of(frame["site"], langs, self.args.group_by))
        self.report.metric("shortlist_comparison", comparison[1])
        return comparison, None


def _exploded(results, prefix: str, names: list[str]):
    """One row per array position of the `prefix`+name array columns (replayed sites only)."""
    from pyspark.sql import functions as F

    zipped = F.arrays_zip(*[F.col(prefix + name) for name in names])
    rows = results.where(F.col("status") == "ok").select("site", "policy", F.posexplode(zipped).alias("position", "point"))
    return rows.select("site", "policy", "position", *[F.col(f"point.{prefix}{n}").alias(n) for n in names])


def _means(ok_results):
    """Mean recall on the 0..100% budget grid and mean decile shares, per policy, over sites (one Spark pass)."""
    from pyspark.sql import functions as F

    def long(column: str, kind: str):
        return ok_results.select("policy", F.lit(kind).alias("kind"), F.posexplode(column).alias("position", "value"))
    return (long("grid_recall", "curve").unionByName(long("decile_share", "decile"))
            .groupBy("kind", "policy", "position").agg(F.avg("value").alias("mean"), F.count("value").alias("sites")))


if __name__ == "__main__":
    ReplayCrawlJob().run()
