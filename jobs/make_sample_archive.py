"""`parascout make-sample-archive`: a deterministic multilingual web archive in CommonCrawl's formats.

Writes WARC (warc/, crawldiagnostics/, robotstxt/), WAT, ZipNum CDX (indexes/) and
the columnar index (cc-index/...) of synthetic hosts, plus truth/ (the translations
they contain), under --out. No Spark: the generator streams host groups. With
--text-corpus, pages carry real translations, boilerplate and hard negatives, and
truth/sentences.parquet aligns their sentences.
"""
from __future__ import annotations

import argparse

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.udfs.common.langs import UnknownLanguage
from parascout.udfs.sample_archive import generate, resolve_languages
from parascout.udfs.sample_archive.corpus import TextCorpusError
from parascout.udfs.sample_archive.vocabulary import UnsupportedLanguage, sample_conf


class MakeSampleArchiveJob(Job):
    name = "make-sample-archive"
    makes = ("cdx", "warc_prefix", "truth")
    description = "write a deterministic multilingual sample archive (WARC/WAT/CDX/columnar) with ground truth"
    uses_spark = False
    root_required = False
    outputs = ("truth",)
    unversioned_outputs = ("truth",)  # the archive's own layout (truth/*.parquet files), not a versioned table

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        super().add_arguments(parser)
        defaults = sample_conf()
        parser.add_argument("--out", help="archive root to write (local directory)")
        parser.add_argument("--hosts", type=int, default=defaults["hosts"], help="number of hosts")
        parser.add_argument("--seed", type=int, default=defaults["seed"], help="random seed: same seed, same bytes")
        parser.add_argument("--langs", default=None,
                            help="languages hosts draw from, ISO 639-1 or 639-3 (e.g. eng,fra,isl); default "
                                 f"{','.join(defaults['languages'])}, with --text-corpus only those the corpus has")
        parser.add_argument("--text-corpus", default=None, metavar="DIR",
                            help="real parallel text: a directory of <iso639-3>.tsv.gz files (id<TAB>text, ids "
                                 "aligned across languages, e.g. ../shared/data/parallel-text/bible). Pages then hold "
                                 "real translations (passages of consecutive ids), boilerplate and hard negatives, "
                                 "and truth/sentences.parquet aligns their sentences (not with --cdx-only). Hosts "
                                 "draw only languages the corpus has (the Bible set has no Icelandic or Maltese; "
                                 "its Basque is the New Testament only). Default: built-in word lists")
        parser.add_argument("--pages-per-host", type=int, default=defaults["pages_per_host"],
                            help="mean number of HTML pages per host (host sizes are skewed)")
        parser.add_argument("--cdx-only", action="store_true",
                            help="write only CDX/ZipNum, columnar index and truth (no WARC/WAT payloads)")
        parser.add_argument("--crawl", default=defaults["crawl"], help="crawl name written into the archive")
        parser.add_argument("--workers", type=int, default=None,
                            help="worker processes (default: one per CPU); the output does not depend on it")
        parser.add_argument("--topical-sites", type=int, default=0, metavar="N",
                            help="N hosts write most articles about one topic (money: CLDR currency names), other "
                                 "articles name a currency now and then; truth/topics.parquet says which page is on "
                                 "the topic (domain focus: fetch-docs --domain-terms). Default 0: the archive is "
                                 "the same as without the option")
        parser.add_argument("--no-progress", action="store_true", help="no progress bars")
        parser.add_argument("--quiet", action="store_true",
                            help="no progress bars and no printed summary (the convention mix, CLD2 agreement, "
                                 "beads): the same numbers are in the job report")

    def validate_arguments(self, args: argparse.Namespace) -> None:
        if not args.out:
            raise ConfigError("make-sample-archive: --out DIR is required")
        if args.out.startswith(("s3://", "gs://")):
            raise ConfigError("make-sample-archive: --out must be a local directory; copy the archive afterwards")
        args.root = args.out
        super().validate_arguments(args)
        if args.hosts < 1 or args.pages_per_host < 1:
            raise ConfigError("--hosts and --pages-per-host must be at least 1")
        if args.workers is not None and args.workers < 1:
            raise ConfigError("--workers must be at least 1")
        if not 0 <= args.topical_sites <= args.hosts:
            raise ConfigError("--topical-sites must be between 0 and --hosts")
        try:
            args.langs = ",".join(resolve_languages(args.langs, args.text_corpus))
        except (UnknownLanguage, UnsupportedLanguage) as error:
            raise ConfigError(f"--langs: {error}") from error
        except TextCorpusError as error:
            raise ConfigError(str(error)) from error

    def process(self) -> None:
        args = self.args
        summary = generate(args.out, hosts=args.hosts, seed=args.seed, langs=args.langs, cdx_only=args.cdx_only,
                           pages_per_host=args.pages_per_host, crawl=args.crawl, workers=args.workers,
                           progress=not (args.no_progress or args.quiet), verbose=not args.quiet,
                           text_corpus=args.text_corpus,
                           overrides={"topical_sites": args.topical_sites} if args.topical_sites else None)
        self.report.input("captures", summary["captures"])
        self.report.kept(summary["captures"])
        self.report.output("indexes", summary["cdx_lines"])
        self.report.output("truth/pairs", summary["pairs"])
        if "beads" in summary and not args.cdx_only:
            self.report.output("truth/sentences", sum(summary["beads"].values()))
        for key in ("hosts", "multilingual_hosts", "html_pages", "captures_by_kind", "pairs", "conventions",
                    "code_strip_recoverable_share", "zipnum_blocks", "columnar_rows", "warc_files", "seconds",
                    "workers", "text_source", "cld2_agree_share", "cld2_agreement", "cld2_disagreements_by_kind",
                    "negatives", "beads", "passages_available", "passages_used",
                    "pages_with_a_passage_of_another_host", "passages_reused_within_host", "corpus_lines_skipped",
                    "topical_hosts", "on_topic_pages"):
            if key in summary:
                self.report.metric(key, summary[key])


if __name__ == "__main__":
    MakeSampleArchiveJob().run()
