"""export-bitext: the parallel text itself, in the formats a corpus builder's tools read.

Reads the verified parallel pairs of one language pair (`verified_pairs`, parallel = true) and both
pages' `texts`; splits each page's main paragraphs into sentences, aligns them (Gale–Church lengths
plus, with --lexicon, the translation lexicon: udfs/export/bitext/align.py) and filters the sentence pairs
(identical sides, length ratio, numbers, CLD2 language: kept in the Parquet with the reason). Writes
- `bitext_documents` (Parquet: urls, site, scores, main texts, paragraph lists, counts, status),
- `bitext_sentences` (Parquet: every bead with score and reason; null reason = exported),
- `bitext_sites` (Parquet: documents, sentence pairs and words per language per site),
- `bitext/<A>-<B>.documents.gz` (Bitextor: src_url, trg_url, src_doc, trg_doc, the texts base64),
  `bitext/<A>-<B>.sent.gz` (Bitextor: src_url, trg_url, src_text, trg_text, aligner_score), each opening with a
  header line naming its columns as Bitextor 8.2+ does (--format bitextor-8.1: none), and
  `bitext/<A>-<B>.tmx.gz` (TMX 1.4b, one unit per unique pair with its count); on a local root also
  `<A>-<B>.documents.tsv.gz` and `<A>-<B>.sent.tsv.gz`, the two TSVs without the header line, as parascout wrote them
  before Bitextor 8.2's names and as the real-sites archives' scorer reads them.
Input document pairs = exported + filtered (no sentence pair kept, other language pair) + bad (a text
missing or empty, too many sentences).
Several pairs (--langs en:fr,de) are exported in one pass, each document pair aligned with its own pair's
lexicon: the tables carry lang_pair (a partition per pair), the files stay `<A>-<B>.*` per pair, and the report
holds each pair's yield (metrics.by_pair) and a summary across pairs; a pair without a lexicon in --lexicon is a
counted skip.
"""
from __future__ import annotations

import contextlib
import itertools
from datetime import datetime

from pyspark import StorageLevel
from pyspark.sql import Window
from pyspark.sql import functions as F

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.jobs.language_pairs import PairSkipped, language_pairs_option
from parascout.udfs.common import storage, table_layout
from parascout.udfs.common.langs import load_languages, pair_label
from parascout.udfs.common.spark_functions import bind
from parascout.udfs.common.table_store import PAIR_COLUMN
from parascout.udfs.common.urls import url_host_column
from parascout.udfs.export.bitext.config import AlignmentConfig
from parascout.udfs.export.bitext.export import (
    BAD_REASONS,
    DOCUMENT_KEYS,
    DOCUMENT_SCHEMA,
    FILTERED_REASONS,
    export_batches,
)
from parascout.udfs.export.bitext.formats import (
    DOCUMENT_COLUMNS,
    DOCUMENTS_SUFFIX,
    EARLIER_NAMES,
    SENTENCE_COLUMNS,
    SENTENCES_SUFFIX,
    TMX_FOOTER,
    TSV_FORMATS,
    document_line,
    sentence_line,
    tmx_header,
    tmx_unit,
    tsv_header,
)
from parascout.udfs.export.bitext.sentences import MAX_SENTENCES
from parascout.udfs.lexicon.lexicon import lexicon_dirs, load_lexicon
from parascout.udfs.rank import domain_focus

TEXT_COLUMNS = ["paragraphs", "main_text"]
EXAMPLES_IN_REPORT = 5
EXAMPLE_MIN_WORDS = 6


class ExportBitextJob(Job):
    name = "export-bitext"
    description = "aligned documents and sentence pairs of verified pairs: Parquet, Bitextor TSV, TMX"
    outputs = ("bitext_documents", "bitext_sentences", "bitext_sites")
    inputs = ("verified_pairs", "texts")
    input_paths = ("lexicon",)
    unversioned_outputs = ("bitext",)  # the TSV and TMX files, complete when bitext/_manifest.json names them
    #: `export-bitext: {alignment: {max_length_ratio: 2.5}}` in a --conf file
    stage_configs = (("alignment", AlignmentConfig),)

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--langs", required=True, help="language pair A,B (A is the source side of the output), "
                                                            "or several: A:B,C or A-B,C-B")
        parser.add_argument("--lexicon", metavar="DIR", help="lexicon directory (train-lexicon), or a folder of one "
                                                             "per pair (DIR/eng-fra/ ...); without it the sentence "
                                                             "aligner uses lengths only")
        parser.add_argument("--in-domain-only", action="store_true",
                            help="export only pairs with a page in the domain (texts.in_domain: fetch-docs "
                                 "--domain-terms); the others are filtered off_domain / no_domain_text")
        parser.add_argument("--max-sentences", type=int, default=MAX_SENTENCES,
                            help="a page with more sentences is bad input (too_many_*_sentences)")
        parser.add_argument("--format", choices=TSV_FORMATS, default="bitextor",
                            help="the TSVs' convention: bitextor (8.2+: a header line naming the columns, what "
                                 "`bifixer --header` reads) or bitextor-8.1 (no header line)")

    def validate_arguments(self, args) -> None:
        super().validate_arguments(args)
        self.pairs = language_pairs_option(args.langs)
        self.lexicons: dict[frozenset, str] = {}
        if args.lexicon:
            try:
                found = lexicon_dirs(args.lexicon)
            except FileNotFoundError as error:
                raise ConfigError(f"--lexicon {args.lexicon}: not a lexicon directory; run train-lexicon first") \
                    from error
            for path in found:
                lexicon = load_lexicon(path)
                self.lexicons[frozenset((lexicon.src_lang, lexicon.trg_lang))] = path
        if args.max_sentences < 1:
            raise ConfigError("--max-sentences must be at least 1")

    @property
    def alignment(self) -> AlignmentConfig:
        """The splitting, alignment and filter knobs of this run (its --conf section's `alignment:`, else the
        defaults)."""
        return getattr(self.args, "alignment", None) or AlignmentConfig()

    def lexicon_path(self, pair: tuple[str, str]) -> str | None:
        """The pair's lexicon directory in --lexicon (None: none there, or no --lexicon)."""
        return self.lexicons.get(frozenset(pair))

    def skipped(self, pair: tuple[str, str]) -> bool:
        """A pair --lexicon holds no lexicon of: counted, then skipped, not exported."""
        return bool(self.args.lexicon) and self.lexicon_path(pair) is None

    def oriented_pairs(self):
        """Verified parallel pairs (all), and those of the run's language pairs with `lang_pair`, src always the
        pair's language A (pairs stored B -> A swapped)."""
        pairs = self.read_table("verified_pairs").where(F.col("parallel"))
        stored = F.concat_ws("-", "src_lang", "trg_lang")
        forward = pairs.where(stored.isin(*[pair_label(pair) for pair in self.pairs]))
        backward = pairs.where(stored.isin(*[pair_label(pair[::-1]) for pair in self.pairs])).select(
            "site", url_host_column(F.col("trg_url")).alias("host"), F.col("trg_url").alias("src_url"),
            F.col("src_url").alias("trg_url"), F.col("trg_lang").alias("src_lang"), F.col("src_lang").alias("trg_lang"),
            "p_parallel_content")
        columns = ["site", "host", "src_url", "trg_url", "src_lang", "trg_lang", "p_parallel_content"]
        oriented = forward.select(*columns).unionByName(backward).withColumn(PAIR_COLUMN, stored)
        return pairs, oriented.dropDuplicates([PAIR_COLUMN, "src_url", "trg_url"])

    def with_texts(self, pairs):
        """Each side's own text, near-duplicates included: verify-pairs already made a page and its copies one
        page for the 1-1 alignment, so a pair it accepted on a copy is exported, not lost between the jobs."""
        texts = self.read_table("texts").dropDuplicates(["url"]).select("url", *TEXT_COLUMNS)
        for side in ("src", "trg"):
            renamed = texts.select(F.col("url").alias(f"{side}_url"),
                                   *[F.col(c).alias(f"{side}_{c}") for c in TEXT_COLUMNS])
            pairs = pairs.join(renamed, f"{side}_url", "left")
        return pairs

    def process(self) -> None:
        """Every language pair in one pass (tables written once, with lang_pair), then each pair's report."""
        all_parallel, pairs = self.oriented_pairs()
        self.parallel = all_parallel.count()
        self.wanted = self.counts_by_pair(pairs)
        exported = [pair_label(pair) for pair in self.pairs if not self.skipped(pair)]
        self.domain_counts: dict[str, dict[str, int]] = {}
        self.found: dict[str, dict] = {label: {} for label in exported}  # what each pair reports, by export()
        if exported:
            self.export(pairs.where(F.col(PAIR_COLUMN).isin(*exported)), exported)
        self.for_each_pair(self.report_pair)
        self.report.metric("summary", self.summary())

    def summary(self) -> dict:
        """The yield summed over the pairs exported (skipped pairs listed apart)."""
        keys = ("documents", "sentence_pairs", "unique_sentence_pairs", "words")
        by_pair = self.report.data["metrics"]["by_pair"]
        done = [label for label in by_pair if label not in self.report.data["metrics"].get("pairs_skipped", {})]
        return {"pairs": done, "pairs_skipped": sorted(self.report.data["metrics"].get("pairs_skipped", {})),
                **{key: sum(by_pair[label].get(key, 0) for label in done) for key in keys}}

    def export(self, pairs, labels: list[str]) -> None:
        """Align the pairs of every language pair `labels` names, write the tables (a lang_pair partition per
        pair) and each pair's bitext files, and collect what each pair reports (self.found)."""
        if self.args.in_domain_only:
            pairs, self.domain_counts = domain_focus.pairs_in_domain(pairs, self.read_table("texts"), by=PAIR_COLUMN,
                                                                      error=ConfigError)
        documents = self.with_texts(pairs).mapInPandas(
            bind(export_batches, lexicon_paths=self.lexicons, max_sentences=self.args.max_sentences,
                 config=self.alignment),
            DOCUMENT_SCHEMA).withColumn(PAIR_COLUMN, F.concat_ws("-", "src_lang", "trg_lang"))
        documents = documents.persist(StorageLevel.MEMORY_AND_DISK)  # aligned once, written as two tables
        self.write_table(documents.drop("sentences"), "bitext_documents")
        keys = list(DOCUMENT_KEYS)
        sentences = documents.select(*keys, PAIR_COLUMN, F.explode("sentences").alias("s")).select(
            *keys, "s.*", PAIR_COLUMN)
        self.write_table(sentences, "bitext_sentences")
        documents.unpersist()
        written = self.read_table("bitext_documents")
        for label, counts in self.counts_by_pair(written, "status").items():
            self.found[label]["statuses"] = counts
        self.collect_sentences(self.read_table("bitext_sentences"))
        self.write_table(self.site_yield(written), "bitext_sites")
        self.collect_top_sites(self.read_table("bitext_sites"))
        self.write_files(written, self.read_table("bitext_sentences"), labels)

    def report_pair(self, pair: tuple[str, str]) -> None:
        """One pair's counts and metrics, from what the one pass collected for it."""
        label = pair_label(pair)
        self.report.input("verified_pairs (parallel)", self.parallel)
        self.report.filtered("other_language_pair", self.parallel - self.wanted.get(label, 0))
        if self.skipped(pair):
            raise PairSkipped("no_lexicon", f"{self.args.lexicon} holds no {label} lexicon")
        if self.args.in_domain_only:
            for reason in domain_focus.FILTERED_REASONS:
                self.report.filtered(reason, self.domain_counts.get(label, {}).get(reason, 0))
        found = self.found[label]
        statuses = found.get("statuses", {})
        self.report.add_counts(statuses, bad_reasons=BAD_REASONS, filtered_reasons=FILTERED_REASONS)
        a, b = pair
        totals = found.get("totals", {})
        self.report.metric("sentence_beads", found.get("beads", {}))
        self.report.metric("sentence_pairs", totals.get("pairs", 0))
        self.report.metric("unique_sentence_pairs", totals.get("unique", 0))
        self.report.metric(f"words_{a}", totals.get("src_words", 0))
        self.report.metric(f"words_{b}", totals.get("trg_words", 0))
        self.report.metric("words", totals.get("src_words", 0) + totals.get("trg_words", 0))
        self.report.metric("examples", found.get("examples", []))
        self.report.metric("documents", statuses.get("ok", 0))
        self.report.metric("sites", {row["site"]: {"documents": row["documents"], "sentence_pairs": row["sentence_pairs"],
                                                   f"words_{a}": row["src_words"], f"words_{b}": row["trg_words"]}
                                     for row in found.get("sites", [])})
        self.report.metric("lexicon", self.lexicon_path(pair) or "none: lengths only (Gale-Church)")

    def collect_sentences(self, sentences) -> None:
        """Per pair: beads by outcome, the exported pairs' totals and a few examples (one action each)."""
        outcome = F.coalesce("reason", F.lit("exported"))
        rows = sentences.groupBy(PAIR_COLUMN, outcome.alias("outcome")).agg(
            F.count("*").alias("pairs"), F.sum("src_words").alias("src_words"),
            F.sum("trg_words").alias("trg_words"), F.countDistinct("src_text", "trg_text").alias("unique")).collect()
        for row in rows:
            found = self.found[row[PAIR_COLUMN]]
            found.setdefault("beads", {})[row["outcome"]] = int(row["pairs"])
            if row["outcome"] == "exported":
                found["totals"] = {key: int(row[key] or 0) for key in ("pairs", "unique", "src_words", "trg_words")}
        kept = sentences.where(F.col("reason").isNull())
        # examples a reader learns from: whole sentences (headings and "Asia (2)" items score highest), each once,
        # from different documents
        sentences_only = kept.where(F.col("src_words") >= EXAMPLE_MIN_WORDS).dropDuplicates([PAIR_COLUMN, "src_text"])
        per_document = Window.partitionBy(PAIR_COLUMN, "src_url").orderBy(F.desc("score"), "bead")
        self.collect_examples(sentences_only.withColumn("nth", F.row_number().over(per_document))
                              .where(F.col("nth") == 1), [F.desc("score"), "src_url"])
        without = [label for label, found in self.found.items()
                   if found.get("totals", {}).get("pairs") and not found.get("examples")]
        if without:  # no whole sentence: the best-scored pairs
            self.collect_examples(kept.where(F.col(PAIR_COLUMN).isin(*without)), [F.desc("score"), "src_url", "bead"])

    def collect_examples(self, sentences, order: list) -> None:
        """Each pair's first EXAMPLES_IN_REPORT sentence pairs in `order`, as [src_text, trg_text, score]."""
        ranked = sentences.withColumn("rank", F.row_number().over(Window.partitionBy(PAIR_COLUMN).orderBy(*order)))
        rows = ranked.where(F.col("rank") <= EXAMPLES_IN_REPORT).select(
            PAIR_COLUMN, "rank", "src_text", "trg_text", "score").collect()
        for row in sorted(rows, key=lambda row: row["rank"]):
            self.found[row[PAIR_COLUMN]].setdefault("examples", []).append(
                [row["src_text"], row["trg_text"], row["score"]])

    @staticmethod
    def site_yield(documents):
        """Per pair and site: exported documents, sentence pairs, words in each language (the shortlist joins
        it)."""
        return (documents.where(F.col("status") == "ok")
                .groupBy(PAIR_COLUMN, "site", "src_lang", "trg_lang")
                .agg(F.count("*").alias("documents"), F.sum("sentence_pairs").alias("sentence_pairs"),
                     F.sum("src_words").alias("src_words"), F.sum("trg_words").alias("trg_words"))
                .select("site", "documents", "sentence_pairs", "src_words", "trg_words", "src_lang", "trg_lang",
                        PAIR_COLUMN))

    def collect_top_sites(self, sites) -> None:
        """Each pair's 20 sites with the most words in language A, most first."""
        ranked = sites.withColumn("rank", F.row_number().over(
            Window.partitionBy(PAIR_COLUMN).orderBy(F.desc("src_words"))))
        for row in sorted(ranked.where(F.col("rank") <= 20).collect(), key=lambda row: row["rank"]):
            self.found[row[PAIR_COLUMN]].setdefault("sites", []).append(row)

    def already_done(self) -> dict | None:
        """The base class's answer, when the bitext files are also the ones the previous run completed."""
        previous = super().already_done()
        problem = previous and table_layout.files_problem(storage.join(self.args.root, "bitext"), previous["run_id"])
        if problem:
            self.log.warning("%s: redoing the work: %s", self.name, problem)
            return None
        return previous

    def data_time(self):
        """When the newest input table was written: the TMX's creation date, the same on every rerun."""
        times = []
        for table in self.inputs:
            manifest = table_layout.read_manifest(self.table_path(table))
            times.append(datetime.fromisoformat(manifest["written_at"]) if manifest and manifest.get("written_at")
                         else storage.modified_at(storage.join(self.table_path(table), "_SUCCESS")))
        return max((time for time in times if time is not None), default=None)

    def write_files(self, documents, sentences, labels: list[str]) -> None:
        """The Bitextor TSVs and the TMX of each pair `labels` names, streamed from the tables in a fixed order
        (each kind read once, for every pair); the folder's manifest goes first and comes back last, so a kill in
        between leaves files a rerun redoes."""
        folder = storage.join(self.args.root, "bitext")
        storage.delete_file(storage.join(folder, table_layout.MANIFEST))
        storage.remove_temporaries(folder)
        languages = load_languages()
        codes = {label: [languages[code].iso639_1 or code for code in label.split("-")] for label in labels}
        created = self.data_time()

        def headerless_copy(label: str, suffix: str) -> str | None:
            """On a local root, where a TSV's header-less copy for the real-sites scorer goes."""
            return storage.join(folder, f"{label}{EARLIER_NAMES[suffix]}") if storage.is_local(folder) else None

        def write_documents(label, rows):
            lines = (document_line(r["src_url"], r["trg_url"], r["src_text"], r["trg_text"]) for r in rows)
            return self.write_gzip(storage.join(folder, f"{label}{DOCUMENTS_SUFFIX}"), lines,
                                   header=tsv_header(DOCUMENT_COLUMNS, self.args.format),
                                   headerless_copy=headerless_copy(label, DOCUMENTS_SUFFIX))

        def write_sentences(label, rows):
            lines = (sentence_line(r["src_url"], r["trg_url"], r["src_text"], r["trg_text"], r["score"]) for r in rows)
            return self.write_gzip(storage.join(folder, f"{label}{SENTENCES_SUFFIX}"), lines,
                                   header=tsv_header(SENTENCE_COLUMNS, self.args.format),
                                   headerless_copy=headerless_copy(label, SENTENCES_SUFFIX))

        def write_tmx(label, rows):
            src_code, trg_code = codes[label]
            units = (tmx_unit(number, src_code, trg_code, r["src_text"], r["trg_text"], r["count"], r["score"],
                              r["first"]["src_url"], r["first"]["trg_url"]) for number, r in enumerate(rows, 1))
            return self.write_gzip(storage.join(folder, f"{label}.tmx.gz"), units,
                                   header=tmx_header(src_code, "0.2.0", created), footer=TMX_FOOTER)

        ok = (documents.where(F.col("status") == "ok").select(PAIR_COLUMN, "src_url", "trg_url", "src_text", "trg_text")
              .orderBy(PAIR_COLUMN, "src_url", "trg_url"))
        kept = sentences.where(F.col("reason").isNull())
        lines = kept.orderBy(PAIR_COLUMN, "src_url", "trg_url", "bead").select(
            PAIR_COLUMN, "src_url", "trg_url", "src_text", "trg_text", "score")
        unique = kept.groupBy(PAIR_COLUMN, "src_text", "trg_text").agg(
            F.count("*").alias("count"), F.max("score").alias("score"),
            F.min(F.struct("src_url", "trg_url")).alias("first")).orderBy(PAIR_COLUMN, F.desc("count"), "src_text",
                                                                          "trg_text")
        written = {kind: self.write_per_pair(frame, labels, write) for kind, frame, write in (
            ("documents", ok, write_documents), ("sent", lines, write_sentences),
            ("tmx (unique pairs)", unique, write_tmx))}
        for label in labels:
            name = "bitext/" if len(self.pairs) == 1 else f"bitext/{label}."
            for kind, counts in written.items():
                self.report.output(f"{name}{kind}", counts[label])
        table_layout.write_files_manifest(folder, self.report.data["run_id"])

    @staticmethod
    def write_per_pair(frame, labels: list[str], write) -> dict[str, int]:
        """Rows ordered by lang_pair, streamed into each pair's file (`write(label, rows)` returns its count); a
        pair without rows gets an empty file."""
        counts = {}
        for label, rows in itertools.groupby(frame.toLocalIterator(), key=lambda row: row[PAIR_COLUMN]):
            counts[label] = write(label, rows)
        for label in labels:
            if label not in counts:
                counts[label] = write(label, iter(()))
        return counts

    @staticmethod
    def write_gzip(path: str, lines, header: str = "", footer: str = "", headerless_copy: str | None = None) -> int:
        """Stream text lines into a gzip file (storage.open_output: temporary name, then moved), and into
        `headerless_copy` too without the header when one is named; the line count."""
        count = 0
        with contextlib.ExitStack() as stack:
            out = stack.enter_context(storage.open_output(path, compression="gzip"))
            copy = stack.enter_context(storage.open_output(headerless_copy, compression="gzip")) \
                if headerless_copy else None
            out.write(header.encode("utf-8"))
            for line in lines:
                data = line.encode("utf-8")
                out.write(data)
                if copy is not None:
                    copy.write(data)
                count += 1
            out.write(footer.encode("utf-8"))
        return count


if __name__ == "__main__":
    ExportBitextJob().run()
