"""fetch-docs end to end on local WARC files: selection, statuses, balanced report, resumable reruns, WAT."""
from __future__ import annotations

import io

import pytest
from warcio.archiveiterator import ArchiveIterator

from parascout.jobs import fetch_docs
from parascout.jobs.errors import ConfigError
from parascout.jobs.fetch_docs import FetchDocsJob
from parascout.udfs.fetch import html_text
from testkit.warc import build_mixed_warc, gzip_members, urls_rows, wat_record_bytes, write_table, write_warc
from tests.conftest import run_job

pytestmark = pytest.mark.slow


def docs_by_url(spark, root) -> dict[str, dict]:
    rows = spark.read.parquet(str(root / "docs")).collect()
    assert len({row["url"] for row in rows}) == len(rows), "a URL has more than one docs row"
    return {row["url"]: row.asDict() for row in rows}


def test_fetch_docs_for_pairs_then_resume(spark, tmp_path):
    archive, root = tmp_path / "archive", tmp_path / "out"
    archive.mkdir()
    rows, expected = build_mixed_warc(archive, good=4)
    stale = {**rows[0], "warc_offset": 999_999_999, "fetch_time": "20200101000000", "status": "404"}
    write_table(root, "urls", urls_rows(rows) + [stale])
    urls = list(expected)
    pairs = [{"host": "site0.example.com", "src_url": a, "trg_url": b, "src_lang": "eng", "trg_lang": "deu"}
             for a, b in zip(urls[0::2], [*urls[1::2], urls[0]])]
    pairs.append({"host": "x.org", "src_url": "http://x.org/en", "trg_url": urls[0], "src_lang": "eng",
                  "trg_lang": "deu"})
    expected["http://x.org/en"] = "not_in_index"
    write_table(root, "candidates", pairs)

    argv = ["--root", str(root), "--warc-prefix", str(archive), "--max-record-bytes", "16384"]
    report = run_job(FetchDocsJob, spark, argv)
    docs = docs_by_url(spark, root)
    assert {url: doc["status"] for url, doc in docs.items()} == expected
    assert report["balanced"] and report["inputs"] == {"requested": len(expected)}
    assert report["kept"] == 4 and report["filtered"] == {"not_html": 1, "too_large": 1}
    assert report["bad"] == {"cut_short": 2, "wrong_offset": 1, "not_in_index": 1}  # cut.html, tail.html
    # 1 GET for the file, plus the 2 cut records read again on their own (--attempts 4 reads in all)
    assert report["metrics"]["get_requests"] == 1 + 2 * 3 and report["metrics"]["get_retries"] == 2 * 3
    assert report["metrics"]["records_fetched"] == 8
    assert report["metrics"]["html_walk"] == html_text.WALK_ENGINE  # compiled (make walk) or why not
    page = docs["http://site0.example.com/page-0.html"]
    assert page["cld2_lang"] == "eng" and page["structure"] and page["warc_offset"] == 0
    assert docs["http://site1.example.com/page-1.html"]["cld2_lang"] == "deu"

    (archive / "mixed.warc.gz").unlink()  # a rerun must not touch what is done
    again = run_job(FetchDocsJob, spark, [*argv, "--force"])
    assert again["balanced"] and again["filtered"]["already_ok"] == 4
    assert again["bad"] == {"missing_file": 4, "not_in_index": 1} and again["filtered"]["too_large"] == 1
    after = docs_by_url(spark, root)
    assert len(after) == len(docs) and after["http://site0.example.com/page-0.html"]["status"] == "ok"


def test_fetch_docs_on_real_commoncrawl_records_and_wat(spark, tmp_path, shared_data):
    root = tmp_path / "out"
    rows = []
    for name in ("CC-MAIN-2020-34-excerpt.warc.gz", "CC-MAIN-2024-22-whirlwind.warc.gz"):
        data = (shared_data / "cc-sample" / name).read_bytes()
        for offset, length in gzip_members(data):
            record = next(iter(ArchiveIterator(io.BytesIO(data[offset:offset + length]))))
            if record.rec_type == "response":
                rows.append({"url": record.rec_headers.get_header("WARC-Target-URI"), "warc_filename": name,
                             "warc_offset": offset, "warc_length": length})
    assert len(rows) == 17
    write_table(root, "urls", urls_rows(rows))
    wat_dir = tmp_path / "wat"
    wat_dir.mkdir()
    write_warc(wat_dir / "extra.wat.gz", [("u", wat_record_bytes(
        "https://an.wikipedia.org/wiki/Aragón", [{"path": "A@/href", "url": "/wiki/Uesca"}], title="Aragón")),
        ("v", wat_record_bytes(  # a URL the WARC files hold too: its WARC row is kept, this one counted a duplicate
            "https://an.wikipedia.org/wiki/Escopete", [{"path": "A@/href", "url": "/wiki/Uesca"}], title="Escopete"))])
    report = run_job(FetchDocsJob, spark, [
        "--root", str(root), "--warc-prefix", str(shared_data / "cc-sample"), "--select", "all",
        "--wat", str(shared_data / "cc-sample" / "CC-MAIN-2024-22-whirlwind.warc.wat.gz"), str(wat_dir)])
    assert report["balanced"] and report["kept"] == 18 and report["inputs"]["requested"] == 19
    assert report["filtered"] == {"duplicate": 1}
    assert report["metrics"]["wat_non_response_records"] == 1 and report["metrics"]["get_requests"] == 2
    docs = docs_by_url(spark, root)
    languages = {url: doc["cld2_lang"] for url, doc in docs.items()}
    assert languages["http://01spb.ru/company/"] == "rus"
    assert languages["http://0900-hovenier.nl/gelderland/oosterbeek/"] == "nld"
    assert languages["http://06.live-radsport.ch/tippspiel/stats_140_petzi.html"] == "deu"
    assert languages["http://0760.jxtdw.com/area/sanxiang/"] == "zho"
    assert docs["http://01spb.ru/company/"]["charset"] == "cp1251"
    assert docs["http://01spb.ru/company/"]["title"].startswith("О компании")
    assert docs["http://0760.jxtdw.com/area/sanxiang/"]["title"].startswith("三乡招聘")
    assert docs["http://0760.jxtdw.com/area/sanxiang/"]["charset"] == "gb18030"
    wiki = docs["https://an.wikipedia.org/wiki/Escopete"]
    assert wiki["source"] == "warc" and "https://an.wikipedia.org/wiki/Portalada" in wiki["outlinks"]
    wat = docs["https://an.wikipedia.org/wiki/Aragón"]
    assert wat["source"] == "wat" and wat["outlinks"] == ["https://an.wikipedia.org/wiki/Uesca"]


def test_fetch_docs_needs_a_source(tmp_path):
    with pytest.raises(ConfigError, match="--warc-prefix"):
        FetchDocsJob().run(["--root", str(tmp_path)])


def test_selection_modes(spark, tmp_path):
    rows = [{"url": f"http://{host}/p{i}", "warc_filename": "f.warc.gz", "warc_offset": i * 100, "warc_length": 100}
            for host in ("a.com", "b.com", "www.c.com", "fr.c.com") for i in range(3)]
    write_table(tmp_path, "urls", urls_rows(rows))
    write_table(tmp_path, "candidates", [{"host": "a.com", "src_url": "http://a.com/p0", "trg_url": "http://a.com/p1"}])

    def selected(select: str) -> set[str]:
        job = FetchDocsJob().use_spark(spark)
        job.args = job.parse_arguments(["--root", str(tmp_path), "--warc-prefix", "/x", "--select", select])
        job.validate_arguments(job.args)
        job.resolve_inputs()
        return {row["url"] for row in job.selected_urls().collect()}

    assert selected("pairs") == {"http://a.com/p0", "http://a.com/p1"}
    assert len(selected("all")) == 12
    write_table(tmp_path, "shortlist", [{"site": site, "src_lang": "eng", "trg_lang": "fra", "rank": rank}
                                        for rank, site in enumerate(("b.com", "c.com"), 1)])
    assert selected("shortlist") == {f"http://{host}/p{i}" for host in ("b.com", "www.c.com", "fr.c.com")
                                     for i in range(3)}  # a site is all its hosts
    assert len(selected("all")) == 12  # a shortlist beside urls does not narrow --select all


def test_a_url_fetched_more_than_once_keeps_the_same_row_whatever_order_its_rows_come_in(spark):
    """ranked_captures (capture_rank): a doc before a failure, WARC before WAT, this run's before an earlier run's,
    then the status and the capture, so that a task retried after a lost executor (its rows in another order) keeps
    the same row."""
    rows = [  # url, status, source, is_new, warc_filename, warc_offset, title
        ("u1", "ok", "wat", True, "a.wat", 5, "u1 wat"), ("u1", "ok", "warc", False, "a.warc", 9, "u1 earlier"),
        ("u1", "ok", "warc", True, "b.warc", 7, "u1 kept"), ("u1", "http_error", "warc", True, "a.warc", 1, "u1 bad"),
        ("u2", "too_large", "warc", True, "b.warc", 3, "u2 second"),
        ("u2", "cut_short", "warc", True, "c.warc", 0, "u2 kept"),
        ("u2", "cut_short", "warc", True, "d.warc", 0, "u2 third"),
        ("u3", "ok", "warc", True, "a.warc", 0, "u3 only"),
    ]
    schema = "url string, status string, source string, is_new boolean, warc_filename string, warc_offset long, " \
             "title string"
    kept = []
    for order in (rows, rows[::-1], rows[3:] + rows[:3], rows[5:] + rows[:5]):
        frame = spark.createDataFrame(order, schema).repartition(3)
        ranked, shuffled = fetch_docs.ranked_captures(frame)
        assert shuffled
        kept.append(sorted((row["url"], row["title"]) for row in ranked.where("_rank = 1").collect()))
    assert kept[0] == [("u1", "u1 kept"), ("u2", "u2 kept"), ("u3", "u3 only")]
    assert all(found == kept[0] for found in kept)
    # a URL each (a run's own WARC rows): every row first, and the rows are not shuffled by URL to find that out
    single = spark.createDataFrame([rows[0], rows[4], rows[7]], schema).repartition(2)
    ranked, shuffled = fetch_docs.ranked_captures(single)
    assert not shuffled and "Window" not in ranked._jdf.queryExecution().executedPlan().toString()
    assert sorted((row["url"], row["_rank"]) for row in ranked.collect()) == [("u1", 1), ("u2", 1), ("u3", 1)]
