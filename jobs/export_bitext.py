"""export-bitext: the parallel text itself, in the formats a corpus builder's tools read.

Reads the verified parallel pairs of one language pair (`verified_pairs`, parallel = true) and both
pages' `texts`; splits each page's main paragraphs into sentences, aligns them (Gale–Church lengths
plus, with --lexicon, the translation lexicon: udfs/export/bitext/align.py) and filters the sentence pairs
(identical sides, length ratio, numbers, CLD2 language: kept in the Parquet with the reason). Writes
- `bitext_documents` (Parquet: urls, site, scores, main texts, paragraph lists, counts, status),
- `bitext_sentences` (Parquet: every bead with score and reason; null reason = exported),
- `bitext_sites` (Parquet: documents, sentence pairs and words per language per site),
- `bitext/<A>-<B>.documents.tsv.gz` (Bitextor: url1, url2, base64 text1, base64 text2),
  `bitext/<A>-<B>.sent.tsv.gz` (Bitextor: src_url, trg_url, src_text, trg_text, score) and
  `bitext/<A>-<B>.tmx.gz` (TMX 1.4b, one unit per unique pair with its count).
Input document pairs = exported + filtered (no sentence pair kept, other language pair) + bad (a text
missing or empty, too many sentences).
Several pairs (--langs en:fr,de) are exported one after the other: the tables get a lang_pair partition per
pair, the files stay `<A>-<B>.*` per pair, and the report holds each pair's yield (metrics.by_pair) and a
summary across pairs; a pair without a lexicon in --lexicon is a counted skip.
"""
from __future__ import annotations

import functools
from datetime import datetime

from pyspark import StorageLevel
from pyspark.sql import Window
from pyspark.sql import functions as F

from parascout.jobs.base import ConfigError, Job, PairSkipped, language_pairs_option
from parascout.udfs.common import storage, tables
from parascout.udfs.common.langs import load_languages, pair_label
from parascout.udfs.common.lexicon import lexicon_dirs, load_lexicon
from parascout.udfs.common.sites import with_site
from parascout.udfs.export.bitext.config import AlignmentConfig
from parascout.udfs.export.bitext.export import BAD_REASONS, DOCUMENT_SCHEMA, FILTERED_REASONS, export_batches
from parascout.udfs.export.bitext.formats import TMX_FOOTER, document_line, sentence_line, tmx_header, tmx_unit
from parascout.udfs.export.bitext.sentences import MAX_SENTENCES
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

    def oriented_pairs(self):
        """Verified parallel pairs of the language pair, src always language A (pairs stored B -> A swapped)."""
        a, b = self.languages
        pairs = self.read_table("verified_pairs").where(F.col("parallel"))
        forward = pairs.where((F.col("src_lang") == a) & (F.col("trg_lang") == b))
        backward = pairs.where((F.col("src_lang") == b) & (F.col("trg_lang") == a)).select(
            "host", F.col("trg_url").alias("src_url"), F.col("src_url").alias("trg_url"),
            F.col("trg_lang").alias("src_lang"), F.col("src_lang").alias("trg_lang"), "p_parallel_content")
        columns = ["host", "src_url", "trg_url", "src_lang", "trg_lang", "p_parallel_content"]
        return pairs, forward.select(*columns).unionByName(backward).dropDuplicates(["src_url", "trg_url"])

    def in_domain(self, pairs):
        """--in-domain-only: the pairs with a page in the domain; the rest counted by reason."""
        pairs, counts = self.pairs_in_domain(pairs)
        for reason in domain_focus.FILTERED_REASONS:
            self.report.filtered(reason, counts.get(reason, 0))
        return pairs

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
        self.for_each_pair(self.export_pair)
        self.report.metric("summary", self.summary())

    def summary(self) -> dict:
        """The yield summed over the pairs exported (skipped pairs listed apart)."""
        keys = ("documents", "sentence_pairs", "unique_sentence_pairs", "words")
        by_pair = self.report.data["metrics"]["by_pair"]
        done = [label for label in by_pair if label not in self.report.data["metrics"].get("pairs_skipped", {})]
        return {"pairs": done, "pairs_skipped": sorted(self.report.data["metrics"].get("pairs_skipped", {})),
                **{key: sum(by_pair[label].get(key, 0) for label in done) for key in keys}}

    def export_pair(self, pair: tuple[str, str]) -> None:
        """One language pair: align, write its partitions of the tables and its bitext files."""
        self.languages = pair
        self.lexicon_path = self.lexicons.get(frozenset(pair)) if self.args.lexicon else None
        all_parallel, pairs = self.oriented_pairs()
        parallel = all_parallel.count()
        self.report.input("verified_pairs (parallel)", parallel)
        wanted = pairs.count()
        self.report.filtered("other_language_pair", parallel - wanted)
        if self.args.lexicon and self.lexicon_path is None:
            raise PairSkipped("no_lexicon", f"{self.args.lexicon} holds no {pair_label(pair)} lexicon")
        if self.args.in_domain_only:
            pairs = self.in_domain(pairs)
        documents = self.with_texts(pairs).mapInPandas(
            functools.partial(export_batches, lexicon_path=self.lexicon_path, max_sentences=self.args.max_sentences,
                              config=self.alignment),
            DOCUMENT_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)  # aligned once, written as two tables
        self.write_table(with_site(documents.drop("sentences"), self.languages), "bitext_documents")
        sentences = documents.select("host", "src_url", "trg_url", "src_lang", "trg_lang",
                                     F.explode("sentences").alias("s")).select("host", "src_url", "trg_url",
                                                                                 "src_lang", "trg_lang", "s.*")
        self.write_table(sentences, "bitext_sentences")
        documents.unpersist()
        written = self.read_table("bitext_documents")
        self.report.add_counts(self.count_by(written, "status"), bad_reasons=BAD_REASONS,
                               filtered_reasons=FILTERED_REASONS)
        self.report_sentences(self.read_table("bitext_sentences"))
        self.write_table(self.site_yield(written), "bitext_sites")
        self.write_files(written, self.read_table("bitext_sentences"))
        self.report.metric("lexicon", self.lexicon_path or "none: lengths only (Gale-Church)")

    def report_sentences(self, sentences) -> None:
        outcome = sentences.withColumn("outcome", F.coalesce("reason", F.lit("exported")))
        counts = self.count_by(outcome, "outcome")
        self.report.metric("sentence_beads", counts)
        kept = sentences.where(F.col("reason").isNull())
        totals = kept.agg(F.count("*").alias("pairs"), F.sum("src_words").alias("src_words"),
                          F.sum("trg_words").alias("trg_words"),
                          F.countDistinct("src_text", "trg_text").alias("unique")).first()
        a, b = self.languages
        self.report.metric("sentence_pairs", int(totals["pairs"]))
        self.report.metric("unique_sentence_pairs", int(totals["unique"]))
        self.report.metric(f"words_{a}", int(totals["src_words"] or 0))
        self.report.metric(f"words_{b}", int(totals["trg_words"] or 0))
        self.report.metric("words", int(totals["src_words"] or 0) + int(totals["trg_words"] or 0))
        # examples a reader learns from: whole sentences (headings and "Asia (2)" items score highest), each once,
        # from different documents
        sentences_only = kept.where(F.col("src_words") >= EXAMPLE_MIN_WORDS).dropDuplicates(["src_text"])
        per_document = Window.partitionBy("src_url").orderBy(F.desc("score"), "bead")
        examples = (sentences_only.withColumn("nth", F.row_number().over(per_document)).where(F.col("nth") == 1)
                    .orderBy(F.desc("score"), "src_url").limit(EXAMPLES_IN_REPORT).collect())
        if not examples:
            examples = kept.orderBy(F.desc("score"), "src_url", "bead").limit(EXAMPLES_IN_REPORT).collect()
        self.report.metric("examples", [[row["src_text"], row["trg_text"], row["score"]] for row in examples])

    def site_yield(self, documents):
        """Per site: exported documents, sentence pairs, words in each language (the shortlist joins it)."""
        ok = documents.where(F.col("status") == "ok")
        self.report.metric("documents", ok.count())
        sites = ok.groupBy("site").agg(F.count("*").alias("documents"),
                                       F.sum("sentence_pairs").alias("sentence_pairs"),
                                       F.sum("src_words").alias("src_words"), F.sum("trg_words").alias("trg_words"))
        a, b = self.languages
        top = sites.orderBy(F.desc("src_words")).limit(20).collect()
        self.report.metric("sites", {row["site"]: {"documents": row["documents"], "sentence_pairs": row["sentence_pairs"],
                                                   f"words_{a}": row["src_words"], f"words_{b}": row["trg_words"]}
                                     for row in top})
        return sites.withColumn("src_lang", F.lit(a)).withColumn("trg_lang", F.lit(b))

    def already_done(self) -> dict | None:
        """The base class's answer, when the bitext files are also the ones the previous run completed."""
        previous = super().already_done()
        problem = previous and tables.files_problem(storage.join(self.args.root, "bitext"), previous["run_id"])
        if problem:
            self.log.warning("%s: redoing the work: %s", self.name, problem)
            return None
        return previous

    def data_time(self):
        """When the newest input table was written: the TMX's creation date, the same on every rerun."""
        times = []
        for table in self.inputs:
            manifest = tables.read_manifest(self.table_path(table))
            times.append(datetime.fromisoformat(manifest["written_at"]) if manifest and manifest.get("written_at")
                         else storage.modified_at(storage.join(self.table_path(table), "_SUCCESS")))
        return max((time for time in times if time is not None), default=None)

    def write_files(self, documents, sentences) -> None:
        """The Bitextor TSVs and the TMX, streamed from the tables partition by partition in a fixed order; the
        folder's manifest goes first and comes back last, so a kill in between leaves files a rerun redoes."""
        a, b = self.languages
        folder = storage.join(self.args.root, "bitext")
        storage.delete_file(storage.join(folder, tables.MANIFEST))
        storage.remove_temporaries(folder)
        languages = load_languages()
        src_code, trg_code = (languages[code].iso639_1 or code for code in (a, b))
        ok = (documents.where(F.col("status") == "ok").select("src_url", "trg_url", "src_text", "trg_text")
              .orderBy("src_url", "trg_url"))
        lines = (document_line(*row) for row in ok.toLocalIterator())
        name = "bitext/" if len(self.pairs) == 1 else f"bitext/{a}-{b}."
        self.report.output(f"{name}documents.tsv", self.write_gzip(storage.join(folder, f"{a}-{b}.documents.tsv.gz"), lines))
        kept = sentences.where(F.col("reason").isNull())
        lines = (sentence_line(r["src_url"], r["trg_url"], r["src_text"], r["trg_text"], r["score"])
                 for r in kept.orderBy("src_url", "trg_url", "bead")
                 .select("src_url", "trg_url", "src_text", "trg_text", "score").toLocalIterator())
        self.report.output(f"{name}sent.tsv", self.write_gzip(storage.join(folder, f"{a}-{b}.sent.tsv.gz"), lines))
        unique = kept.groupBy("src_text", "trg_text").agg(
            F.count("*").alias("count"), F.max("score").alias("score"),
            F.min(F.struct("src_url", "trg_url")).alias("first")).orderBy(F.desc("count"), "src_text", "trg_text")
        units = (tmx_unit(number, src_code, trg_code, r["src_text"], r["trg_text"], r["count"], r["score"],
                          r["first"]["src_url"], r["first"]["trg_url"])
                 for number, r in enumerate(unique.toLocalIterator(), 1))
        written = self.write_gzip(storage.join(folder, f"{a}-{b}.tmx.gz"), units,
                                  header=tmx_header(src_code, "0.2.0", self.data_time()), footer=TMX_FOOTER)
        self.report.output(f"{name}tmx (unique pairs)", written)
        tables.write_files_manifest(folder, self.report.data["run_id"])

    @staticmethod
    def write_gzip(path: str, lines, header: str = "", footer: str = "") -> int:
        """Stream text lines into a gzip file (storage.open_output: temporary name, then moved); the line count."""
        count = 0
        with storage.open_output(path, compression="gzip") as out:
            out.write(header.encode("utf-8"))
            for line in lines:
                out.write(line.encode("utf-8"))
                count += 1
            out.write(footer.encode("utf-8"))
        return count

if __name__ == "__main__":
    ExportBitextJob().run()
