"""index-warcs: a crawl's own WARC / ARC files (wget, Heritrix, Browsertrix) -> a CommonCrawl-style CDX index
and WAT link files, so scan-cdx, fetch-docs and replay-crawl read them as they read CommonCrawl.

One Spark task per file frames its records and parses each with udfs.fetch.warc_record (udfs/index/warc_index.py); a
response becomes a CDX line (and a WAT record with its links under ROOT/wat/), every other record is
counted under its reason. A line's `crawl` key names the crawl: the `isPartOf` field of the WARC's warcinfo
record (CommonCrawl and Heritrix write one), else the WARC's name stem (wget: its --warc-file name). The lines
are sorted by (SURT, timestamp) and written as a ZipNum collection (ROOT/indexes/cdx-NNNNN.gz + cluster.idx, one
file per sorted partition) or as plain sorted .cdx files.
Records read = kept (indexed) + filtered(reason) + bad(reason).
"""
from __future__ import annotations

import argparse
import itertools
import os

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.udfs.common import storage
from parascout.udfs.fetch import warc_record
from parascout.udfs.index import cdx, warc_index


class IndexWarcs(Job):
    name = "index-warcs"
    makes = ("cdx", "wat")  # scan-cdx --cdx, fetch-docs --wat
    description = "WARC/ARC files (local, s3://, https://) -> a CommonCrawl-style CDX index (ZipNum or plain) + WAT links"
    outputs = ("indexes", "wat")
    unversioned_outputs = ("indexes", "wat")
    default_max_bad_fraction = 0.1

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--warc", action="append", default=[], metavar="PATH",
                            help="WARC/ARC file or folder (local, s3://, https://); repeatable. The CDX `filename` "
                                 "is the path relative to the folder given (a file: its name): pass that folder as "
                                 "fetch-docs' --warc-prefix")
        parser.add_argument("--format", choices=["zipnum", "plain"], default="zipnum",
                            help="zipnum: indexes/cdx-NNNNN.gz + cluster.idx (CommonCrawl's layout); plain: sorted "
                                 "indexes/cdx-NNNNN.cdx text files")
        parser.add_argument("--no-wat", action="store_true", help="write no WAT link files")
        parser.add_argument("--recompress-to", metavar="DIR",
                            help="whole-file-gzip WARCs (one gzip stream for all records) cannot be range-read: "
                                 "rewrite them here one gzip member per record and index the copy (else each is "
                                 "counted whole_file_gzip and skipped)")
        parser.add_argument("--block-lines", type=int, default=cdx.ZIPNUM_BLOCK_LINES,
                            help="CDX lines per ZipNum block (CommonCrawl: 3000)")
        parser.add_argument("--partitions", type=int, default=0,
                            help="index files written (sorted partitions; default: Spark's shuffle partitions)")
        parser.add_argument("--max-record-bytes", type=int, default=warc_record.MAX_UNCOMPRESSED_BYTES,
                            help="records above this many bytes are counted too_large and not indexed")
        parser.add_argument("--record-seconds", type=float, default=warc_record.RECORD_SECONDS,
                            help="time limit to parse one record (status timeout); 0: none")
        parser.add_argument("--s3-endpoint", help="S3-compatible endpoint URL for s3:// inputs (else AWS)")

    def validate_arguments(self, args: argparse.Namespace) -> None:
        super().validate_arguments(args)
        if not args.warc:
            raise ConfigError("index-warcs: give --warc PATH (a WARC/ARC file or a folder of them)")
        for path in args.warc:
            if storage.is_local(path) and not os.path.exists(storage.local_path(path)):
                raise ConfigError(f"--warc {path} does not exist")
        for name in ("block_lines", "max_record_bytes"):
            if getattr(args, name) <= 0:
                raise ConfigError(f"--{name.replace('_', '-')} must be positive")
        if args.partitions < 0 or args.record_seconds < 0:
            raise ConfigError("--partitions and --record-seconds must be 0 or positive")

    def archive_files(self) -> list[tuple[str, str]]:
        """(path, CDX filename) of every archive under the --warc arguments."""
        found = []
        for given in self.args.warc:
            files = storage.list_files(given, endpoint=self.args.s3_endpoint)
            prefix = given.rstrip("/") + "/"
            for path in files:
                if path != given and not path.endswith(warc_index.ARCHIVE_SUFFIXES):  # not logs, CDX...
                    continue
                name = path[len(prefix):] if path.startswith(prefix) else path.rsplit("/", 1)[-1]
                found.append((path, name))
        return found

    def settings(self) -> warc_index.IndexSettings:
        return warc_index.IndexSettings(
            max_record_bytes=self.args.max_record_bytes, record_seconds=self.args.record_seconds or None,
            wat_dir=None if self.args.no_wat else self.table_path("wat"), recompress_dir=self.args.recompress_to,
            s3_endpoint=self.args.s3_endpoint)

    def process(self) -> None:
        from pyspark import StorageLevel

        files = self.archive_files()
        self.report.metric("archive_files", len(files))
        for table in self.outputs:  # a rerun replaces both folders whole
            storage.delete_dir(self.table_path(table))
        tasks = self.spark.createDataFrame(files or [("", "")], "path string, filename string")
        tasks = tasks.where("path != ''").repartition(max(len(files), 1))
        rows = tasks.mapInPandas(warc_index.index_files(self.settings()), warc_index.OUTPUT_SCHEMA)
        rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
        counts = self.count_by(rows, "reason")
        self.report.input("archive_records", sum(counts.values()))
        self.report.add_counts(counts, bad_reasons=warc_index.BAD_REASONS,
                               filtered_reasons=warc_index.FILTERED_REASONS)
        if counts.get("whole_file_gzip"):
            self.log.warning("%d whole-file-gzip WARC(s) skipped: their records cannot be range-read; rerun with "
                             "--recompress-to DIR to index a per-record-gzip copy", counts["whole_file_gzip"])
        lines = rows.where("reason = 'ok'").select("surt", "timestamp", "line")
        partitions = self.args.partitions or int(self.spark.conf.get("spark.sql.shuffle.partitions"))
        self.write_index(lines.repartitionByRange(partitions, "surt", "timestamp")
                         .sortWithinPartitions("surt", "timestamp", "line"))
        rows.unpersist()

    def write_index(self, sorted_lines) -> None:
        """One index file per sorted partition (written by its task); cluster.idx from the blocks' first keys."""
        out_dir, zipnum, block_lines = self.table_path("indexes"), self.args.format == "zipnum", self.args.block_lines

        def write(index, rows):
            name = f"cdx-{index:05d}.gz" if zipnum else f"cdx-{index:05d}.cdx"
            lines = (row.line for row in rows)
            first = next(lines, None)
            if first is None:
                return
            with storage.open_output(storage.join(out_dir, name)) as handle:
                if zipnum:
                    blocks = cdx.write_zipnum_blocks(itertools.chain([first], lines), handle, block_lines)
                else:
                    count = 0
                    for line in itertools.chain([first], lines):
                        handle.write((line + "\n").encode("utf-8"))
                        count += 1
                    blocks = [("", 0, 0, count)]
            yield index, name, blocks

        written = sorted(sorted_lines.rdd.mapPartitionsWithIndex(write).collect())
        entries, indexed = [], 0
        for _, name, blocks in written:
            entries += cdx.cluster_lines(blocks, name, len(entries)) if zipnum else []
            indexed += sum(count for *_, count in blocks)
        if zipnum:
            storage.write_text(storage.join(out_dir, "cluster.idx"), "".join(entry + "\n" for entry in entries))
        self.report.output("indexes", indexed)
        self.report.metric("index_files", len(written))
        self.report.metric("zipnum_blocks", len(entries))


if __name__ == "__main__":
    IndexWarcs().run()
