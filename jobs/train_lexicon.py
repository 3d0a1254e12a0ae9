"""train-lexicon: word translation probabilities for a language pair (the lexicon tsim links words with).

    parascout train-lexicon --langs en,fr --out models/lexicon-eng-fra \\
        [--aligned ../shared/data/parallel-text/bible] [--corpus pairs.tsv] \\
        [--dictionary eng-fra.index | eng-fra.tei | en-fr.dic] [--from-archive out/demo]
    parascout train-lexicon --langs en:fr,de --out models/lexicons --from-archive out/demo   # DIR/eng-fra/, DIR/eng-deu/

Any mix of sources: `--aligned DIR` reads `DIR/<lang>.tsv(.gz)` (`id<TAB>text`, joined on id, as the
Bible files), `--corpus` a `src<TAB>trg` file, `--dictionary` a FreeDict dictd index (its `.dict` or
`.dict.dz` beside it), a FreeDict TEI file or a Bitextor `.dic`; `--from-archive ROOT` bootstraps from
the dataset root itself: paragraph pairs and whole main texts of the page pairs a language-switcher link
or a STRAND handle proposed, or whose URLs share a handle (`texts` + `scored_pairs` or `candidates`) and,
with `--with-verified-pairs`, of verify-pairs' parallel pairs instead (a second round: bootstrap, verify,
train again on cleaner pairs) and of the rejected pairs of one host that a lexicon which never saw them still
finds their pages' best on their host (cross-fitted: the rejected pairs that are their pages' best by their own text,
paragraphs agreeing, teach the other folds' lexicons), the only source a language pair with no resources has. A page in more of those
page pairs than a few (a home page every switcher links to, a page other sites link to) is a hub: its pairs are
left out (filtered as hub_page), or a wrong pair would teach its own words and confirm itself. IBM model 1 both
ways (udfs.lexicon.training). With --from-archive it also trains --held-out-folds lexicons, each without one
fold of the archive's page pairs (udfs.lexicon.training.with_held_out), for verify-pairs to calibrate its
decision on scores of pages a lexicon never learned from. Writes a lexicon directory; Spark only for --from-archive. Several pairs
(`--langs en:fr,de`, with --from-archive and --aligned only) are trained in one job, each into `--out DIR/<pair>/`
(the folder of lexicons verify-pairs and export-bitext take): the archive's text pairs of every pair are taken in one
Spark pass (each pair's keyed by lang_pair, in an order of their own, not Spark's), then each pair's lexicon is
learned from its rows; a pair with nothing to learn from is a counted skip.
"""
from __future__ import annotations

import argparse
import functools
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.jobs.language_pairs import PairSkipped, language_pairs_option
from parascout.udfs.common import storage, table_layout
from parascout.udfs.common.langs import pair_label
from parascout.udfs.common.spark_functions import bind
from parascout.udfs.common.table_store import PAIR_COLUMN
from parascout.udfs.lexicon.config import DEFAULT as LEXICON_DEFAULT
from parascout.udfs.lexicon.config import LexiconConfig
from parascout.udfs.lexicon.lexicon import write_lexicon
from parascout.udfs.lexicon.readers import (
    page_pair_texts,
    read_aligned_files,
    read_bitextor_dic,
    read_dictd,
    read_tei,
    read_tsv_pairs,
)
from parascout.udfs.lexicon.training import HELD_OUT_FOLDS, train_lexicon, with_held_out
from parascout.udfs.rank import handles
from parascout.udfs.verify.tsim import cross_fitted_pairs

#: input reasons a source may count (all bad input: unreadable lines or entries)
BAD_REASONS = frozenset({"malformed_line", "no_translation"})
FILTERED_REASONS = frozenset({"unaligned_id", "metadata_entry", "no_paragraph_pairs", "over_max_pairs", "hub_page"})

#: the pair sources the archive itself makes confident (a language-switcher link, a STRAND handle); a pair
#: whose URLs share a handle is confident whatever its source
CONFIDENT_SOURCES = r"(^|,)(link|handle)(,|$)"
#: the verified_pairs columns the second round's mutual-best pairs are found by
MUTUAL_BEST_COLUMNS = ("lang_ok", "tsim", "own_tsim_idf", "paragraph_length_r", "text_paragraph_ratio")


def archive_paragraph_pairs(batches, config: LexiconConfig):
    """mapInPandas body (bound to the run's config): page pairs (of a language pair) with both sides' paragraphs ->
    their aligned paragraph pairs, each with its place among its page pair's."""
    import pandas as pd

    for batch in batches:
        rows = [(label, a, b, s, t, place) for label, s, t, src, trg in zip(
                    batch[PAIR_COLUMN], batch["src_url"], batch["trg_url"], batch["src_paragraphs"],
                    batch["trg_paragraphs"])
                for place, (a, b) in enumerate(page_pair_texts(src, trg, config))]
        yield pd.DataFrame(rows, columns=[PAIR_COLUMN, "src_text", "trg_text", "src_url", "trg_url", "place"])


@dataclass
class ArchiveShare:
    """A language pair's share of the archive: its text pairs (src_text, trg_text, src_url, trg_url), the sources
    they came from, its input counts ('input', 'kept', 'reason:<why>') and metrics, in the order the report takes them."""

    rows: list[tuple[str, str, str, str]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)


class TrainLexiconJob(Job):
    name = "train-lexicon"
    makes = ("lexicon",)
    path_artifacts = MappingProxyType({"from_archive": ("texts", "scored_pairs", "candidates")})
    description = "train a word translation lexicon (IBM model 1) from corpora, dictionaries or the archive"
    input_paths = ("aligned", "corpus", "dictionary", "from_archive")
    #: `train-lexicon: {training: {min_prob: 0.02}}` in a --conf file
    stage_configs = (("training", LexiconConfig),)
    root_required = False

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--langs", required=True, help="language pair, e.g. en,fr (src,trg), or several with "
                                                            "--from-archive / --aligned: en:fr,de or en-fr,de-fr")
        parser.add_argument("--out", required=True, help="lexicon directory to write (several pairs: a folder of "
                                                          "one per pair, OUT/eng-fra/ ...)")
        parser.add_argument("--aligned", action="append", default=[], metavar="DIR",
                            help="folder of id-aligned <lang>.tsv(.gz) files (id<TAB>text), e.g. the Bible")
        parser.add_argument("--corpus", action="append", default=[], metavar="TSV",
                            help="sentence-aligned src<TAB>trg file (.gz read too)")
        parser.add_argument("--dictionary", action="append", default=[], metavar="FILE",
                            help="FreeDict dictd .index, FreeDict TEI (.tei/.xml) or Bitextor .dic")
        parser.add_argument("--from-archive", metavar="ROOT",
                            help="dataset root: bootstrap from paragraph pairs of switcher-linked / handle pairs")
        parser.add_argument("--with-verified-pairs", action="store_true",
                            help="--from-archive: learn from the parallel pairs of verified_pairs instead (a second "
                                 "round, after verify-pairs ran with the first round's lexicon)")
        parser.add_argument("--iterations", type=int, default=5, help="EM iterations of IBM model 1")
        parser.add_argument("--max-pairs", type=int, default=200_000, help="most text pairs used from the archive")
        parser.add_argument("--held-out-folds", type=int, default=HELD_OUT_FOLDS,
                            help="--from-archive: also train this many lexicons each without one fold of the archive's "
                                 "page pairs, for verify-pairs to calibrate on (0: none)")

    def validate_arguments(self, args: argparse.Namespace) -> None:
        if not args.root:
            args.root = args.out
        super().validate_arguments(args)
        self.pairs = language_pairs_option(args.langs)
        args.src_lang, args.trg_lang = self.pairs[0]
        if not (args.aligned or args.corpus or args.dictionary or args.from_archive):
            raise ConfigError("give at least one source: --aligned, --corpus, --dictionary or --from-archive")
        if len(self.pairs) > 1 and (args.corpus or args.dictionary):
            raise ConfigError(f"--langs {args.langs}: --corpus and --dictionary hold one language pair; train several "
                              "pairs from --from-archive or --aligned, or one pair per run")
        for folder in args.aligned:
            for lang in sorted({lang for pair in self.pairs for lang in pair}):
                if not self.aligned_file(folder, lang):
                    raise ConfigError(f"--aligned {folder}: no {lang}.tsv or {lang}.tsv.gz there")
        for path in args.corpus + args.dictionary:
            if not Path(path).exists():
                raise ConfigError(f"{path}: no such file")
        if args.iterations < 1 or args.max_pairs < 1:
            raise ConfigError("--iterations and --max-pairs must be at least 1")
        if args.held_out_folds < 0 or args.held_out_folds == 1:
            raise ConfigError("--held-out-folds must be 0 (none) or at least 2")

    @staticmethod
    def aligned_file(folder: str, lang: str) -> str | None:
        for name in (f"{lang}.tsv.gz", f"{lang}.tsv"):
            if (Path(folder) / name).exists():
                return str(Path(folder) / name)
        return None

    def dictionary_entries(self, path: str, counts: dict) -> list[tuple[str, str]]:
        args = self.args
        if path.endswith(".index"):
            stem = path[: -len(".index")]
            dict_path = next((p for p in (stem + ".dict.dz", stem + ".dict") if Path(p).exists()), None)
            if dict_path is None:
                raise ConfigError(f"--dictionary {path}: no {stem}.dict or .dict.dz beside it")
            return list(read_dictd(path, dict_path, counts))
        if path.endswith(".dic"):
            return list(read_bitextor_dic(path, args.src_lang, args.trg_lang, counts))
        return list(read_tei(path, counts))

    def oriented(self, pairs, *columns: str):
        """The rows of the run's language pairs (either direction) as (lang_pair, src_url, trg_url, *columns), src on
        the pair's src side: a row stored the other way round is turned (a table's own lang_pair is set aside)."""
        from pyspark.sql import functions as F

        directions = self.spark.createDataFrame(
            [(src, trg, pair_label((src, trg)), False) for src, trg in self.pairs]
            + [(trg, src, pair_label((src, trg)), True) for src, trg in self.pairs],
            f"src_lang string, trg_lang string, {PAIR_COLUMN} string, turned boolean")
        turned = F.col("turned")
        return pairs.drop(PAIR_COLUMN).join(F.broadcast(directions), ["src_lang", "trg_lang"]).select(
            PAIR_COLUMN, F.when(turned, F.col("trg_url")).otherwise(F.col("src_url")).alias("src_url"),
            F.when(turned, F.col("src_url")).otherwise(F.col("trg_url")).alias("trg_url"), *columns)

    def archive_pairs(self) -> dict[str, ArchiveShare]:
        """Each language pair's share of the archive (pair label -> ArchiveShare): the paragraph pairs of its confident
        page pairs and the page pair each came from (at most --max-pairs), taken for every pair in one Spark pass."""
        from pyspark import StorageLevel
        from pyspark.sql import functions as F

        args, root = self.args, self.args.from_archive
        locations = {name: table_layout.table_location(storage.join(root, name))
                     for name in ("scored_pairs", "candidates", "texts")}
        table = "scored_pairs" if locations["scored_pairs"] else "candidates"
        for needed in (table, "texts"):
            if not locations[needed]:
                raise ConfigError(f"--from-archive {root}: no {needed} table; run fetch-docs and rank-pairs first")
        verified = table_layout.table_location(storage.join(root, "verified_pairs")) if args.with_verified_pairs else None
        if args.with_verified_pairs and not verified:
            raise ConfigError(f"--with-verified-pairs: no verified_pairs table under {root}; run verify-pairs first")
        shares = {pair_label(pair): ArchiveShare() for pair in self.pairs}
        # confident: a switcher link or STRAND handle proposed the pair, or its two URLs share a handle (URL minus
        # the pair's language substrings) whatever source proposed it
        proposed = self.oriented(self.spark.read.parquet(locations[table]), "source")
        strippers = {pair_label(pair): handles.build_stripper(pair) for pair in self.pairs}
        same_handle = (handles.column_by_pair(PAIR_COLUMN, strippers, lambda s: handles.handle_column(F.col("src_url"), s))
                       == handles.column_by_pair(PAIR_COLUMN, strippers, lambda s: handles.handle_column(F.col("trg_url"), s)))
        pairs = (proposed.where(F.col("source").rlike(CONFIDENT_SOURCES) | same_handle)
                 .select(PAIR_COLUMN, "src_url", "trg_url").distinct())
        max_page_pairs = dict.fromkeys(shares, self.args.training.max_confident_page_pairs)
        for share in shares.values():
            share.sources = [table]
        texts = self.spark.read.parquet(locations["texts"]).where(F.col("duplicate_of").isNull())
        if verified:
            # the second round learns from the pairs verify-pairs accepted INSTEAD of the confident ones: a
            # switcher menu also links each page to pages that are not its translation (synthetic seed 42:
            # 134 of 383 eng-fra link pairs are translations), and that noise is what the first round could
            # not avoid; a language pair verify-pairs accepted nothing for keeps the confident pairs
            judged = self.spark.read.parquet(verified)
            accepted = self.oriented(judged.where(F.col("parallel"))).distinct().persist(StorageLevel.MEMORY_AND_DISK)
            pairs = self.with_accepted(pairs, accepted, judged, texts, shares)
            for label, share in shares.items():
                if share.sources == ["verified_pairs"]:
                    max_page_pairs[label] = self.args.training.max_page_pairs
        rows, tallies = self.paragraph_rows(pairs, texts, max_page_pairs)
        if verified:
            accepted.unpersist()
        for label, share in shares.items():
            tally = tallies[label]
            share.rows = rows.get(label, [])
            used = len({(src, trg) for _, _, src, trg in share.rows})
            share.counts = {"reason:hub_page": tally["hub_pairs"], "input": tally["page_pairs"], "kept": used,
                            "reason:no_paragraph_pairs": tally["page_pairs"] - tally["hub_pairs"] - used}
            share.metrics.update(archive_sources=share.sources, hub_filter=tally["hub_filter"],
                                 archive_paragraph_pairs=len(share.rows))
        return shares

    def with_accepted(self, confident, accepted, judged, texts, shares: dict[str, ArchiveShare]):
        """The second round's page pairs: of a pair verify-pairs accepted some for, those and the rejected ones the
        cross-fit keeps (its share's sources then verified_pairs); of the others, the confident ones."""
        from pyspark.sql import functions as F

        accepting = sorted(row[PAIR_COLUMN] for row in accepted.select(PAIR_COLUMN).distinct().collect())
        if not accepting:
            return confident
        proposed, rejected = ({label: [] for label in accepting} for _ in range(2))
        mutual_best = functools.partial(self.agreeing_mutual_best, config=self.args.training)
        for found, pairs_of in ((proposed, mutual_best), (rejected, self.one_host_judged)):
            not_accepted = (self.oriented(pairs_of(judged)).distinct()
                            .join(accepted, [PAIR_COLUMN, "src_url", "trg_url"], "left_anti")
                            .where(F.col(PAIR_COLUMN).isin(*accepting)))
            for row in not_accepted.collect():
                found[row[PAIR_COLUMN]].append((row.src_url, row.trg_url))
            for urls in found.values():
                urls.sort()  # the cross-fit's lexicons learn in this order, not Spark's
        cross_fitted = []
        for pair in self.pairs:
            label = pair_label(pair)
            if label not in accepting:
                continue
            kept = self.cross_fitted(pair, proposed[label], rejected[label], texts,
                                     accepted.where(F.col(PAIR_COLUMN) == label)) if rejected[label] else []
            shares[label].metrics["cross_fitted_pairs"] = {"proposed": len(proposed[label]),
                                                           "judged": len(rejected[label]), "kept": len(kept or []),
                                                           "skipped": kept is None}
            shares[label].sources = ["verified_pairs"]
            cross_fitted += [(label, src, trg) for src, trg in kept or []]
        chosen = confident.where(~F.col(PAIR_COLUMN).isin(*accepting)).unionByName(
            accepted.where(F.col(PAIR_COLUMN).isin(*accepting)))
        if cross_fitted:
            chosen = chosen.unionByName(self.spark.createDataFrame(
                cross_fitted, f"{PAIR_COLUMN} string, src_url string, trg_url string"))
        return chosen

    def paragraph_rows(self, pairs, texts, max_page_pairs: dict[str, int]):
        """({pair label: its distinct paragraph pairs as (src_text, trg_text, src_url, trg_url), at most --max-pairs}
        of the page pairs (lang_pair, src_url, trg_url) without hubs, {pair label: its tallies}: page pairs with both
        texts, those dropped as hub pairs, the hub filter's metric). A paragraph pair several page pairs hold is
        taken from the first by (src_url, trg_url, its place there), and each pair's rows come in that order: the
        lexicon does not depend on how Spark ordered them."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        limits = F.create_map(*[F.lit(value) for item in max_page_pairs.items() for value in item])
        pairs = pairs.withColumn("max_page_pairs", limits[F.col(PAIR_COLUMN)])
        for side in ("src", "trg"):
            pairs = pairs.join(texts.select(F.col("url").alias(f"{side}_url"),
                                            F.col("paragraphs").alias(f"{side}_paragraphs")), f"{side}_url")
        joined = pairs.persist()  # counted, searched for hubs and filtered: the texts joins run once
        hubs = self.hub_pages(joined).persist()  # few: joined to every page pair, and counted
        kept, tallies = self.without_hubs(joined, hubs, max_page_pairs)
        text_pairs = kept.mapInPandas(bind(archive_paragraph_pairs, config=self.args.training), f"{PAIR_COLUMN} string, src_text string, "
                                                               "trg_text string, src_url string, trg_url string, place long")
        # a site's template repeats on every page: each distinct paragraph pair is learned from once
        first = text_pairs.groupBy(PAIR_COLUMN, "src_text", "trg_text").agg(
            F.min(F.struct("src_url", "trg_url", "place")).alias("first"))
        # --max-pairs takes a window over each pair's rows, run only when a pair's page pairs may hold more
        if any(tally["text_pairs_at_most"] > self.args.max_pairs for tally in tallies.values()):
            order = Window.partitionBy(PAIR_COLUMN).orderBy("first")
            first = first.withColumn("rank", F.row_number().over(order)).where(F.col("rank") <= self.args.max_pairs)
        rows = (first.select(PAIR_COLUMN, "src_text", "trg_text", "first.src_url", "first.trg_url", "first.place")
                .toPandas().sort_values([PAIR_COLUMN, "src_url", "trg_url", "place"]))
        hubs.unpersist()
        joined.unpersist()
        return ({label: list(zip(group["src_text"], group["trg_text"], group["src_url"], group["trg_url"]))
                 for label, group in rows.groupby(PAIR_COLUMN, sort=False)}, tallies)

    def cross_fitted(self, pair, proposed: list[tuple[str, str]], judged: list[tuple[str, str]], texts,
                     accepted) -> list[tuple[str, str]] | None:
        """The judged (rejected, one-host) page pairs that lexicons trained without them, on the accepted pairs and
        the other folds' proposed pairs, still find their pages' best against every page of their host in the other
        language (udfs.verify.tsim.cross_fitted_pairs); None (skipped, logged) above
        the config's max_cross_fit_pairs judged pairs, max_cross_fit_pages pages on their hosts or max_cross_fit_rivals
        rivals."""
        from pyspark.sql import functions as F

        knobs = self.args.training

        src_lang, trg_lang = pair
        urls = {url for pair in judged for url in pair}
        hosts = {row.host for row in texts.where(F.col("url").isin(list(urls))).select("host").distinct().collect()}
        host_pages = texts.where(F.col("host").isin(list(hosts)) & F.col("lang").isin(src_lang, trg_lang)).select(
            "url", "host", "lang", "paragraphs")
        page_count = host_pages.count() if len(judged) <= knobs.max_cross_fit_pairs else 0
        # nothing is collected to the driver once a cap is passed (too many judged pairs: no count taken either)
        within = len(judged) <= knobs.max_cross_fit_pairs and page_count <= knobs.max_cross_fit_pages
        pages = host_pages.collect() if within else []
        host_of = {page.url: page.host for page in pages}
        by_host: dict[tuple, list[str]] = {}
        for page in pages:
            by_host.setdefault((page.host, page.lang), []).append(page.url)
        sources, targets = {src for src, _ in judged}, {trg for _, trg in judged}
        rival_count = (sum(len(by_host.get((host_of.get(src), trg_lang), ())) for src in sources)
                       + sum(len(by_host.get((host_of.get(trg), src_lang), ())) for trg in targets))  # counted first
        if not within or rival_count > knobs.max_cross_fit_rivals:
            self.log.warning("cross-fit skipped: %d judged pairs (at most %d), %d pages on their hosts (at most %d), "
                             "%d rivals (at most %d)", len(judged), knobs.max_cross_fit_pairs, page_count,
                             knobs.max_cross_fit_pages, rival_count, knobs.max_cross_fit_rivals)
            return None
        rivals = {(src, url) for src in sources for url in by_host.get((host_of.get(src), trg_lang), [])}
        rivals |= {(url, trg) for trg in targets for url in by_host.get((host_of.get(trg), src_lang), [])}
        learned = self.paragraph_rows(accepted, texts, {pair_label(pair): knobs.max_page_pairs})[0].get(
            pair_label(pair), [])
        paragraphs = {page.url: [row.asDict(recursive=True) for row in page.paragraphs or []] for page in pages}
        return cross_fitted_pairs(src_lang, trg_lang, [(a, b) for a, b, _, _ in learned], proposed,
                                  rivals, paragraphs, iterations=self.args.iterations, judged=judged, config=knobs)

    @staticmethod
    def judged_with_text(judged):
        """The judged pairs in their languages, with text; None when verified_pairs lacks MUTUAL_BEST_COLUMNS (a table
        written before them)."""
        from pyspark.sql import functions as F

        if not set(MUTUAL_BEST_COLUMNS) <= set(judged.columns):
            return None
        return judged.where(F.col("lang_ok") & F.col("tsim").isNotNull())

    @staticmethod
    def on_one_host():
        """A pair's two pages are on one host (a column)."""
        from pyspark.sql import functions as F

        return F.expr("parse_url(src_url, 'HOST')") == F.expr("parse_url(trg_url, 'HOST')")

    @classmethod
    def one_host_judged(cls, judged):
        """The judged pairs (in their languages, with text) whose two pages are on one host, what the cross-fit judges
        (the caller leaves the accepted ones out); none without MUTUAL_BEST_COLUMNS."""
        rows = cls.judged_with_text(judged)
        return judged.limit(0) if rows is None else rows.where(cls.on_one_host())

    @classmethod
    def agreeing_mutual_best(cls, judged, config: LexiconConfig = LEXICON_DEFAULT):
        """The judged pairs (in their languages, with text) that are, alone, the best by own_tsim_idf of every pair of
        their source page and of their target page (per language pair, rivals on other hosts included), both pages on
        one host, paragraphs agreeing (min_paragraph_length_r); none without MUTUAL_BEST_COLUMNS."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        rows = cls.judged_with_text(judged)
        if rows is None:
            return judged.limit(0)
        rows = rows.withColumn("score", F.round(F.coalesce(F.col("own_tsim_idf"), F.lit(0.0)), 9))  # equal texts tie
        best = F.lit(True)
        for side in ("src_url", "trg_url"):
            page = Window.partitionBy("src_lang", "trg_lang", side)
            rows = rows.withColumn(f"{side}_top", F.max("score").over(page))
            rows = rows.withColumn(f"{side}_ties", F.sum((F.col("score") == F.col(f"{side}_top")).cast("int")).over(page))
            best = best & (F.col("score") == F.col(f"{side}_top")) & (F.col(f"{side}_ties") == 1)
        length_r = F.col("paragraph_length_r")
        uncorrelated = length_r.isNull() | F.isnan(length_r)  # (NaN compares above every number in Spark)
        agreeing = F.when(uncorrelated, F.col("text_paragraph_ratio") >= 1.0).otherwise(
            length_r >= config.min_paragraph_length_r)
        return rows.where(best & (F.col("score") > 0) & agreeing & cls.on_one_host())

    @staticmethod
    def hub_pages(pairs):
        """(lang_pair, url) of the pages in more than their language pair's `max_page_pairs` of its page pairs."""
        from pyspark.sql import functions as F

        pages = pairs.select(PAIR_COLUMN, F.col("src_url").alias("url"), "max_page_pairs").unionByName(
            pairs.select(PAIR_COLUMN, F.col("trg_url").alias("url"), "max_page_pairs"))
        return (pages.groupBy(PAIR_COLUMN, "url").agg(F.count("*").alias("count"), F.first("max_page_pairs").alias("most"))
                .where(F.col("count") > F.col("most")).select(PAIR_COLUMN, "url"))

    @staticmethod
    def without_hubs(pairs, hubs, max_page_pairs: dict[str, int]):
        """(the page pairs with no `hubs` page, {pair label: page_pairs, hub_pairs dropped, the hub_filter metric,
        text_pairs_at_most of the page pairs kept}); of a language pair every page pair of which has a hub page, all
        of them (a tiny site: better a noisy lexicon than none). One Spark action for every pair."""
        from pyspark.sql import functions as F

        for side in ("src", "trg"):
            pairs = pairs.join(F.broadcast(hubs.select(PAIR_COLUMN, F.col("url").alias(f"{side}_url"),
                                                       F.lit(True).alias(f"{side}_hub"))), [PAIR_COLUMN, f"{side}_url"], "left")
        hub_pair = F.coalesce(F.col("src_hub"), F.lit(False)) | F.coalesce(F.col("trg_hub"), F.lit(False))
        # a page pair teaches at most one paragraph pair per paragraph of its shorter page, and its whole texts
        text_pairs = F.least(*[F.coalesce(F.size(f"{side}_paragraphs"), F.lit(0)) for side in ("src", "trg")]) + 1
        none = F.lit(0).cast("long")
        counts = (pairs.groupBy(PAIR_COLUMN).agg(
            F.count("*").alias("page_pairs"), F.sum((~hub_pair).cast("long")).alias("kept"), none.alias("hub_pages"),
            F.sum(text_pairs).alias("text_pairs"), F.sum(F.when(~hub_pair, text_pairs)).alias("kept_text_pairs"))
            .unionByName(hubs.groupBy(PAIR_COLUMN).agg(none.alias("page_pairs"), none.alias("kept"),
                                                       F.count("*").alias("hub_pages"), none.alias("text_pairs"),
                                                       none.alias("kept_text_pairs"))))
        counted: dict[str, dict[str, int]] = {label: {} for label in max_page_pairs}
        for row in counts.collect():
            for kind, value in row.asDict().items():
                if kind != PAIR_COLUMN:
                    counted[row[PAIR_COLUMN]][kind] = counted[row[PAIR_COLUMN]].get(kind, 0) + int(value or 0)
        tallies, everything_hub = {}, []
        for label, most in max_page_pairs.items():
            count = counted[label]
            total, remaining = count.get("page_pairs", 0), count.get("kept", 0)
            skipped = bool(total and not remaining)
            tallies[label] = {"page_pairs": total, "hub_pairs": 0 if skipped else total - remaining,
                              "hub_filter": {"max_page_pairs": most, "hub_pages": count.get("hub_pages", 0),
                                             "skipped": skipped},
                              "text_pairs_at_most": count.get("text_pairs" if skipped else "kept_text_pairs", 0)}
            if skipped:
                everything_hub.append(label)
        return pairs.where(~hub_pair | F.col(PAIR_COLUMN).isin(*everything_hub)).drop("src_hub", "trg_hub"), tallies

    def process(self) -> None:
        self.shares = self.archive_pairs() if self.args.from_archive else {}
        self.for_each_pair(self.train_pair)

    def pair_out(self, pair) -> str:
        """Where a pair's lexicon goes: --out itself for one pair, --out/<pair>/ for several."""
        return self.args.out if len(self.pairs) == 1 else str(Path(self.args.out) / pair_label(pair))

    def remove_earlier_lexicon(self, folder: str) -> None:
        """A skipped pair's lexicon from an earlier run is removed: verify-pairs and export-bitext would take it for
        this run's."""
        if storage.exists(storage.join(folder, "parascout_lexicon.json")):
            storage.delete_dir(folder)
            self.log.warning("removed %s: a lexicon of an earlier run for a pair this run skipped", folder)

    def train_pair(self, pair) -> None:
        """One language pair's lexicon from every source given, into pair_out(pair)."""
        args = self.args
        args.src_lang, args.trg_lang = pair  # what the readers and the archive queries orient by
        counts: dict[str, int] = {}
        corpus, dictionary, sources = [], [], []
        for folder in args.aligned:
            corpus += read_aligned_files(self.aligned_file(folder, args.src_lang),
                                         self.aligned_file(folder, args.trg_lang), counts)
            sources.append({"aligned": folder})
        for path in args.corpus:
            corpus += read_tsv_pairs(path, counts)
            sources.append({"corpus": path})
        for path in args.dictionary:
            dictionary += self.dictionary_entries(path, counts)
            sources.append({"dictionary": path})
        archive_rows = []
        if args.from_archive:
            share = self.shares[pair_label(pair)]
            for key, value in share.metrics.items():
                self.report.metric(key, value)
            for key, value in share.counts.items():
                counts[key] = counts.get(key, 0) + value
            archive_rows = share.rows
            sources.append({"archive": args.from_archive})
        self.report.input("source_records", counts.pop("input", 0))
        self.report.add_counts({key.split(":", 1)[1]: value for key, value in counts.items() if ":" in key},
                               bad_reasons=BAD_REASONS, filtered_reasons=FILTERED_REASONS)
        self.report.kept(counts.get("kept", 0))
        if not corpus and not archive_rows and not dictionary:
            if len(self.pairs) > 1:  # one pair without confident page pairs must not cost the others theirs
                self.remove_earlier_lexicon(self.pair_out(pair))
                raise PairSkipped("no_text_pairs", "the sources gave no text pairs to learn from")
            raise ConfigError("the sources gave no text pairs or dictionary entries to learn from")
        started = time.process_time()
        lexicon = train_lexicon(args.src_lang, args.trg_lang, corpus + [row[:2] for row in archive_rows], dictionary,
                                args.iterations, sources, args.training)
        if archive_rows and args.held_out_folds > 1:
            lexicon = with_held_out(lexicon, archive_rows, corpus, dictionary, args.held_out_folds, args.iterations,
                                    args.training)
            self.report.metric("held_out", {"folds": len(lexicon.held_out), "pages": len(lexicon.fold_of)})
        path = write_lexicon(lexicon, self.pair_out(pair))
        self.report.metric("lexicon_dir", path)
        self.report.metric("lexicon", {key: lexicon.metadata[key] for key in ("sizes", "version", "sources")})
        self.report.metric("training_cpu_seconds", round(time.process_time() - started, 3))

if __name__ == "__main__":
    TrainLexiconJob().run()
