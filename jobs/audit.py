"""audit: a page to judge a sample of what export-bitext exported, and the precision per site from its judgements.

`parascout audit --root R [--langs en,fr] [--per-site 5]` draws, per language pair and site, `--per-site` exported
document pairs (bitext_documents, status ok) and as many exported sentence pairs (bitext_sentences, reason null):
a seeded draw (--random-seed) from the `--max-sites` sites with most exported sentence pairs. It writes under
<root>/audit/, per pair (udfs/export/audit.py renders them):
- audit-<A>-<B>.html: one self-contained page to judge the pairs on (buttons and keys; kept in localStorage;
  the judgements download as a TSV file);
- items-<A>-<B>.tsv: the pairs drawn, which judgements read back are checked against.
Exported pairs read = sampled + filtered (not_sampled; site_not_audited: a site beyond --max-sites).

`parascout audit --root R --judgements FILE [FILE ...]` reads the downloaded judgements back and writes
<root>/audit/precision.md and precision.tsv: per pair, kind and site, the share judged right (and right or
partial) with a 95% Wilson score interval, also in the report (metrics.precision). Judgement lines read =
counted + filtered (not_judged, superseded) + bad (malformed_line, unknown_item, unknown_judgement).
docs/audit.md says how to judge and read the figures.
"""
from __future__ import annotations

import pandas as pd
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.jobs.language_pairs import PairSkipped, language_pairs_option
from parascout.udfs.common import storage
from parascout.udfs.common.langs import pair_label
from parascout.udfs.common.spark_functions import bind
from parascout.udfs.common.table_store import PAIR_COLUMN
from parascout.udfs.export.audit import (
    ALL_SITES,
    BAD_REASONS,
    FILTERED_REASONS,
    KINDS,
    audited_sites,
    items_tsv,
    precision_markdown,
    precision_metrics,
    precision_table,
    precision_tsv,
    read_items,
    read_judgements,
    render_page,
    sample_batches,
    site_draw,
)

AUDIT_FOLDER = "audit"
PAGE_PREFIX, ITEMS_PREFIX = "audit-", "items-"
SAMPLE_FILTERED_REASONS = frozenset({"not_sampled", "site_not_audited"})
#: what both kinds of item show: the pair, its site, both URLs, languages and texts
ITEM_COLUMNS = [PAIR_COLUMN, "site", "src_url", "trg_url", "src_lang", "trg_lang", "src_text", "trg_text"]


class AuditJob(Job):
    name = "audit"
    description = "a page to judge exported pairs sampled per site; precision per site from its judgements"
    inputs = ("bitext_documents", "bitext_sentences")
    unversioned_outputs = (AUDIT_FOLDER,)  # the pages, item lists and precision files
    source_arguments = ("judgements",)  # an edited judgements file is a new run, not a finished one

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--langs", help="language pair(s) to sample: en,fr, en:fr,de or en-fr,de-fr (default: "
                                            "every pair export-bitext exported)")
        parser.add_argument("--per-site", type=int, default=5,
                            help="document pairs, and as many sentence pairs, drawn per site and language pair")
        parser.add_argument("--max-sites", type=int, default=50,
                            help="sample the N sites with most exported sentence pairs per language pair (0: all)")
        parser.add_argument("--random-seed", type=int, default=1,
                            help="seed of the draw: the same seed on the same tables draws the same pairs")
        parser.add_argument("--judgements", nargs="+", metavar="TSV",
                            help="judgements downloaded from audit pages: write the precision per site instead "
                                 "of sampling")

    def validate_arguments(self, args) -> None:
        super().validate_arguments(args)
        self.pairs = language_pairs_option(args.langs)
        if args.per_site < 1 or args.max_sites < 0:
            raise ConfigError("--per-site must be at least 1 and --max-sites at least 0")
        if args.judgements and args.langs:
            raise ConfigError("--judgements reads back the pairs the judgements name: drop --langs")
        missing = [path for path in args.judgements or [] if not storage.exists(path)]
        if missing:
            raise ConfigError(f"--judgements: no such file: {', '.join(missing)}")
        self.uses_spark = not args.judgements  # reading judgements back needs only the sample's item lists

    def resolve_inputs(self) -> None:
        """The bitext tables when sampling; reading judgements back reads the item lists under audit/ alone."""
        if not self.args.judgements:
            super().resolve_inputs()

    def process(self) -> None:
        if self.args.judgements:
            self.read_back()
        else:
            self.sample()

    # ---- the sample ------------------------------------------------------------------------------------------
    def sample(self) -> None:
        """Every pair's draw in one pass (Spark), then each pair's page, item list and counts."""
        if not self.pairs:
            labels = self.read_table("bitext_documents").select(PAIR_COLUMN).distinct().toPandas()[PAIR_COLUMN]
            self.pairs = [tuple(str(label).split("-", 1)) for label in sorted(labels)]
        documents, sentences = self.exported()
        self.site_counts = self.count_per_site(documents, sentences)
        self.audited = audited_sites(self.site_counts, self.args.max_sites)
        chosen = F.broadcast(self.spark.createDataFrame(self.audited, f"{PAIR_COLUMN} string, site string"))
        drawn = pd.concat([self.draw(frame.join(chosen, [PAIR_COLUMN, "site"]), kind)
                           for kind, frame in zip(KINDS, (documents, sentences))], ignore_index=True)
        exported = self.site_counts.melt(id_vars=[PAIR_COLUMN, "site"], value_vars=list(KINDS), var_name="kind",
                                         value_name="site_exported")
        self.drawn = drawn.merge(exported, on=[PAIR_COLUMN, "site", "kind"], how="left")
        self.for_each_pair(self.write_pair)

    def exported(self):
        """Exported document pairs and sentence pairs of the run's pairs (lang_pair: the run's label), each with
        its site."""
        documents = self.of_run_pairs(self.read_table("bitext_documents"))
        sentences = self.of_run_pairs(self.read_table("bitext_sentences")).where(F.col("reason").isNull())
        return (documents.where(F.col("status") == "ok").select(*ITEM_COLUMNS, "sentence_pairs"),
                sentences.select(*ITEM_COLUMNS, "bead", "score"))

    def of_run_pairs(self, frame):
        """The rows of the run's pairs (stored in either direction), lang_pair set to the run's label."""
        return frame.withColumn(PAIR_COLUMN, self.run_pair_label(F.col(PAIR_COLUMN))).where(
            F.col(PAIR_COLUMN).isNotNull())

    @staticmethod
    def count_per_site(documents, sentences) -> pd.DataFrame:
        """Exported pairs of each kind (a column per KINDS) per language pair and site: a row per site."""
        per_site = [frame.groupBy(PAIR_COLUMN, "site").agg(F.count("*").alias(kind))
                    for kind, frame in zip(KINDS, (documents, sentences))]
        return per_site[0].join(per_site[1], [PAIR_COLUMN, "site"], "full").fillna(0).toPandas()

    def draw(self, frame, kind: str) -> pd.DataFrame:
        """The seeded draw of `--per-site` items per pair and site: each batch's own draw, then the draw of
        those per site (the same items whatever the partitioning)."""
        schema = StructType([*frame.schema.fields, StructField("item_id", StringType()),
                             StructField("kind", StringType())])
        per_site, seed = self.args.per_site, self.args.random_seed
        batches = frame.mapInPandas(bind(sample_batches, kind=kind, per_site=per_site, seed=seed), schema)
        return batches.groupBy(PAIR_COLUMN, "site").applyInPandas(site_draw(per_site, seed), schema).toPandas()

    def write_pair(self, pair: tuple[str, str]) -> None:
        """One pair's counts, page and item list (a pair without an exported pair is a counted skip)."""
        label = pair_label(pair)
        counts = self.site_counts[self.site_counts[PAIR_COLUMN] == label]
        audited = counts.merge(self.audited, on=[PAIR_COLUMN, "site"])
        items = self.drawn[self.drawn[PAIR_COLUMN] == label].sort_values(
            ["kind", "site", "src_url", "trg_url", "bead"], na_position="first")
        exported, in_audited = int(counts[list(KINDS)].to_numpy().sum()), int(audited[list(KINDS)].to_numpy().sum())
        self.report.input("exported pairs (documents and sentences)", exported)
        if not exported:
            raise PairSkipped("nothing_exported", "export-bitext exported no pair of it")
        self.report.add_counts({"ok": len(items), "not_sampled": in_audited - len(items),
                                "site_not_audited": exported - in_audited},
                               bad_reasons=frozenset(), filtered_reasons=SAMPLE_FILTERED_REASONS)
        by_kind = items["kind"].value_counts()
        facts = (f"{by_kind.get('document', 0)} document pairs and {by_kind.get('sentence', 0)} sentence pairs of "
                 f"{label}: up to {self.args.per_site} of each drawn per site (seed {self.args.random_seed}) from "
                 f"{len(audited)} of the {len(counts)} sites that exported any.")
        page = f"{AUDIT_FOLDER}/{PAGE_PREFIX}{label}.html"
        storage.write_text(storage.join(self.args.root, page), render_page(items, label, facts))
        storage.write_text(storage.join(self.args.root, AUDIT_FOLDER, f"{ITEMS_PREFIX}{label}.tsv"), items_tsv(items))
        self.report.output(page, len(items))
        self.report.metric("page", storage.join(self.args.root, page))
        self.report.metric("sampled_documents", int(by_kind.get("document", 0)))
        self.report.metric("sampled_sentence_pairs", int(by_kind.get("sentence", 0)))
        self.report.metric("sites_sampled", len(audited))
        self.report.metric("sites_exported", len(counts))

    # ---- judgements read back --------------------------------------------------------------------------------
    def read_back(self) -> None:
        """The judgements files, checked against the sample's items, as precision per pair, kind and site."""
        items = self.sample_items()
        files = {path: storage.read_text(path) for path in self.args.judgements}
        try:
            read = read_judgements(files, set(items["item_id"]))
        except ValueError as error:
            raise ConfigError(f"--judgements {error}") from error
        self.report.input("judgement lines", sum(read.counts.values()))
        self.report.add_counts(read.counts, bad_reasons=BAD_REASONS, filtered_reasons=FILTERED_REASONS)
        if read.problems:
            self.log.warning("%s: judgement lines not counted, e.g.:\n  %s", self.name, "\n  ".join(read.problems))
        table = precision_table(items, read.judged)
        folder = storage.join(self.args.root, AUDIT_FOLDER)
        storage.write_text(storage.join(folder, "precision.md"),
                           precision_markdown(table, read.counts, read.problems))
        storage.write_text(storage.join(folder, "precision.tsv"), precision_tsv(table))
        self.report.output(f"{AUDIT_FOLDER}/precision.tsv", len(table))
        self.report.metric("precision", precision_metrics(table))
        self.report.metric("lines_not_counted", read.problems)
        self.overall = table[table["site"] == ALL_SITES]

    def sample_items(self) -> pd.DataFrame:
        """Every pair's item list under <root>/audit/ (what the pages show)."""
        folder = storage.join(self.args.root, AUDIT_FOLDER)
        names = sorted(name for name in storage.file_sizes(folder)
                       if name.startswith(ITEMS_PREFIX) and name.endswith(".tsv"))
        if not names:
            raise ConfigError(f"{self.name}: no sample under {folder} ({ITEMS_PREFIX}*.tsv) to check judgements "
                              f"against: run `parascout audit --root {self.args.root}` first")
        return pd.concat([read_items(storage.read_text(storage.join(folder, name))) for name in names],
                         ignore_index=True)

    def result_line(self) -> str:
        if not self.args.judgements:
            return f"judge the pages in {storage.join(self.args.root, AUDIT_FOLDER)}/{PAGE_PREFIX}*.html"
        return "; ".join(f"{row.lang_pair} {row.kind} pairs: precision {row.precision:.2f} [{row.precision_low:.2f}, "
                         f"{row.precision_high:.2f}] of {row.judged} judged" for row in self.overall.itertuples())


if __name__ == "__main__":
    AuditJob().run()
