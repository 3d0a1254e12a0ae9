"""jobs/index_warcs.py: a sample archive's WARC files indexed give the urls table its own CDX gives."""
from __future__ import annotations

import gzip
import shutil

import pytest

from parascout.jobs.errors import ConfigError
from parascout.jobs.index_warcs import IndexWarcs
from parascout.jobs.scan_cdx import ScanCdx
from parascout.udfs.common import table_layout
from parascout.udfs.index.cdx_records import RECORD_TYPES
from parascout.udfs.sample_archive import generate
from tests.conftest import run_job
from tests.support.own_crawl import HERITRIX_WARCINFO, WGET_WARCINFO, write_own_warc

COMPARED = ("url", "surt", "host", "domain", "status", "mime", "digest", "fetch_time", "warc_filename",
            "warc_offset", "warc_length", "record_type", "redirect")


def urls_rows(spark, root) -> list[tuple]:
    urls = spark.read.parquet(table_layout.table_location(str(root / "urls")))
    return sorted(tuple(row) for row in urls.select(*COMPARED, "lang").collect())


@pytest.mark.slow
def test_index_warcs_gives_the_urls_table_of_the_archive_cdx(spark, tmp_path):
    archive = tmp_path / "archive"
    generate(str(archive), hosts=3, seed=7, pages_per_host=25, progress=False, verbose=False)
    report = run_job(IndexWarcs, spark, ["--root", str(tmp_path / "own"), "--warc", str(archive),
                                         "--block-lines", "20", "--partitions", "3"])
    with gzip.open(archive / "indexes" / "cdx-00000.gz", "rt") as handle:
        archive_lines = sum(1 for _ in handle)
    assert report["balanced"] and report["kept"] == archive_lines == report["outputs"]["indexes"]
    assert not report["bad"] and report["filtered"]["request_record"] >= report["kept"] - 10
    index_dir = tmp_path / "own" / "indexes"
    assert (index_dir / "cluster.idx").read_text().count("\n") == report["metrics"]["zipnum_blocks"] > 3
    assert sorted(p.name for p in (tmp_path / "own" / "wat").iterdir())

    for root, cdx in ((tmp_path / "theirs", archive / "indexes"), (tmp_path / "own", index_dir)):
        run_job(ScanCdx, spark, ["--root", str(root), "--cdx", str(cdx), "--keep-redirects"])
    ours, theirs = urls_rows(spark, tmp_path / "own"), urls_rows(spark, tmp_path / "theirs")
    assert [row[:-1] for row in ours] == [row[:-1] for row in theirs] and len(ours) > 50
    assert {row[COMPARED.index("record_type")] for row in ours} == set(RECORD_TYPES) - {"revisit"}  # not indexed
    same_language = sum(a[-1] == b[-1] for a, b in zip(ours, theirs))
    assert same_language >= 0.9 * len(ours)

    plain = run_job(IndexWarcs, spark, ["--root", str(tmp_path / "plain"), "--warc", str(archive / "warc"),
                                        "--format", "plain", "--no-wat"])
    lines = [line for path in sorted((tmp_path / "plain" / "indexes").glob("cdx-*.cdx"))
             for line in path.read_text().splitlines()]
    assert len(lines) == plain["kept"] and lines == sorted(lines, key=lambda line: line.split(" ", 2)[:2])
    assert all('"filename": "CC-MAIN-' in line for line in lines)  # relative to the folder given


@pytest.mark.slow
def test_urls_name_the_crawl_of_each_warc_s_warcinfo_else_its_name(spark, shared_data, tmp_path):
    crawls = tmp_path / "crawls"
    (crawls / "wget").mkdir(parents=True)
    shutil.copy(shared_data / "cc-sample" / "CC-MAIN-2020-34-excerpt.warc.gz", crawls)  # isPartOf: CC-MAIN-2020-34
    write_own_warc(crawls / "heritrix-20240805-00001.warc.gz", HERITRIX_WARCINFO, pages=3)  # isPartOf: weekly-news
    write_own_warc(crawls / "wget" / "library.warc.gz", WGET_WARCINFO, pages=2)  # wget names no crawl
    indexed = run_job(IndexWarcs, spark, ["--root", str(tmp_path / "root"), "--warc", str(crawls), "--no-wat"])
    assert indexed["balanced"] and indexed["kept"] == 16 + 3 + 2 and indexed["filtered"]["warcinfo_record"] == 3
    scanned = run_job(ScanCdx, spark, ["--root", str(tmp_path / "root"), "--cdx", str(tmp_path / "root" / "indexes"),
                                       "--crawl", "CC-MAIN-2020-34,weekly-news,library"])
    assert scanned["balanced"] and scanned["kept"] == 21 and "crawl_not_selected" not in scanned["filtered"]
    urls = spark.read.parquet(table_layout.table_location(str(tmp_path / "root" / "urls"))).toPandas()
    assert urls.groupby("warc_filename")["crawl"].unique().map(list).to_dict() == {
        "CC-MAIN-2020-34-excerpt.warc.gz": ["CC-MAIN-2020-34"], "heritrix-20240805-00001.warc.gz": ["weekly-news"],
        "wget/library.warc.gz": ["library"]}
    assert set(urls["record_type"]) == {"response"}


def test_index_warcs_needs_an_existing_input(tmp_path):
    with pytest.raises(ConfigError, match="--warc"):
        IndexWarcs().run(["--root", str(tmp_path), "--warc", str(tmp_path / "nothing")])
    with pytest.raises(ConfigError, match="--warc PATH"):
        IndexWarcs().run(["--root", str(tmp_path)])
