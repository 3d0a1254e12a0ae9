"""`parascout make-sample-archive`: a deterministic multilingual web archive in CommonCrawl's formats.

Writes WARC (warc/, crawldiagnostics/, robotstxt/), WAT, ZipNum CDX (indexes/) and
the columnar index (cc-index/...) of synthetic hosts, plus truth/ (the translations
they contain), under --out. No Spark: the generator streams host groups.
"""
from __future__ import annotations

import argparse

from parascout.jobs.base import ConfigError, Job
from parascout.udfs.langs import UnknownLanguage
from parascout.udfs.sample_archive import generate, resolve_languages
from parascout.udfs.sample_archive.vocabulary import UnsupportedLanguage, sample_conf


class MakeSampleArchiveJob(Job):
    name = "make-sample-archive"
    description = "write a deterministic multilingual sample archive (WARC/WAT/CDX/columnar) with ground truth"
    uses_spark = False
    root_required = False
    outputs = ("truth",)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        super().add_arguments(parser)
        defaults = sample_conf()
        parser.add_argument("--out", help="archive root to write (local directory)")
        parser.add_argument("--hosts", type=int, default=defaults["hosts"], help="number of hosts")
        parser.add_argument("--seed", type=int, default=defaults["seed"], help="random seed: same seed, same bytes")
        parser.add_argument("--langs", default=",".join(defaults["languages"]),
                            help="languages hosts draw from, ISO 639-1 or 639-3 (e.g. eng,fra,isl)")
        parser.add_argument("--pages-per-host", type=int, default=defaults["pages_per_host"],
                            help="mean number of HTML pages per host (host sizes are skewed)")
        parser.add_argument("--cdx-only", action="store_true",
                            help="write only CDX/ZipNum, columnar index and truth (no WARC/WAT payloads)")
        parser.add_argument("--crawl", default=defaults["crawl"], help="crawl name written into the archive")
        parser.add_argument("--workers", type=int, default=None,
                            help="worker processes (default: one per CPU); the output does not depend on it")
        parser.add_argument("--no-progress", action="store_true", help="no progress bars")

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
        try:
            args.langs = ",".join(resolve_languages(args.langs))
        except (UnknownLanguage, UnsupportedLanguage) as error:
            raise ConfigError(f"--langs: {error}") from error

    def process(self) -> None:
        args = self.args
        summary = generate(args.out, hosts=args.hosts, seed=args.seed, langs=args.langs, cdx_only=args.cdx_only,
                           pages_per_host=args.pages_per_host, crawl=args.crawl, workers=args.workers,
                           progress=not args.no_progress)
        self.report.input("captures", summary["captures"])
        self.report.kept(summary["captures"])
        self.report.output("indexes", summary["cdx_lines"])
        self.report.output("truth/pairs", summary["pairs"])
        for key in ("hosts", "multilingual_hosts", "html_pages", "captures_by_kind", "pairs", "conventions",
                    "code_strip_recoverable_share", "zipnum_blocks", "columnar_rows", "warc_files", "seconds",
                    "workers"):
            self.report.metric(key, summary[key])


if __name__ == "__main__":
    MakeSampleArchiveJob().run()
