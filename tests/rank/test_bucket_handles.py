"""`parascout bucket-handles` on a small urls table: pairs, caps, learned markers and balanced counts."""
import pytest

from parascout.jobs.bucket_handles import BucketHandlesJob
from parascout.jobs.errors import ConfigError
from parascout.udfs.common.table_layout import table_location
from tests.conftest import run_job

SCHEMA = "url string, host string, lang string, status string"


def _row(url, lang, status="200"):
    host = url.split("/")[2] if "://" in url else None
    return (url, host, lang, status)


def _urls_table(spark, root, rows):
    spark.createDataFrame(rows, SCHEMA).write.mode("overwrite").parquet(str(root / "urls"))


def _pairs(spark, root):
    return {(r["src_url"], r["trg_url"]) for r in spark.read.parquet(str(root / "candidates")).collect()}


ROWS = [
    _row("http://a.com/en/about.html", "eng"), _row("http://a.com/fr/about.html", "fra"),
    _row("http://a.com/page.php?lang=en&id=1", "eng"), _row("http://a.com/page.php?id=1&lang=fr", "fra"),
    _row("http://en.b.org/news", "eng"), _row("http://fr.b.org/news", "fra"),
    _row("http://c.net/english/guide/", "eng"), _row("http://c.net/francais/guide/", "fra"),
    # one bucket with 3 English and 2 French URLs: capped at 2 per language
    _row("http://d.com/en/p", "eng"), _row("http://d.com/english/p", "eng"), _row("http://d.com/p-en", "eng"),
    _row("http://d.com/fr/p", "fra"), _row("http://d.com/francais/p", "fra"),
    _row("http://a.com/en/only-english.html", "eng"),                      # no partner
    _row("http://a.com/de/about.html", "deu"), _row("http://a.com/x", None),  # other / no language
    _row("http://a.com/en/about.html", "eng"),                              # duplicate
    _row("http://a.com/fr/moved.html", "fra", status="301"),                # a redirect
    _row("", "eng"), _row("not a url", "fra"), _row("http://a.com/" + "x" * 9000, "eng"),  # bad
    _row("http://bücher.de/en/start", "eng"), _row("http://bücher.de/fr/start", "fra"),    # IDN, kept
    _row("http://e.com/fran%C3%A7ais/x", "fra"), _row("http://e.com/english/x", "eng"),    # percent-encoded
]


@pytest.mark.slow
def test_bucket_handles_pairs_caps_and_counts(spark, tmp_path):
    _urls_table(spark, tmp_path, ROWS)
    report = run_job(BucketHandlesJob, spark, ["--root", str(tmp_path), "--langs", "en,fr", "--max-bucket", "2"])
    pairs = _pairs(spark, tmp_path)
    assert {("http://a.com/en/about.html", "http://a.com/fr/about.html"),
            ("http://a.com/page.php?lang=en&id=1", "http://a.com/page.php?id=1&lang=fr"),
            ("http://en.b.org/news", "http://fr.b.org/news"),
            ("http://c.net/english/guide/", "http://c.net/francais/guide/"),
            ("http://bücher.de/en/start", "http://bücher.de/fr/start"),
            ("http://e.com/english/x", "http://e.com/fran%C3%A7ais/x")} <= pairs
    d_pairs = {p for p in pairs if "d.com" in p[0]}
    assert len(d_pairs) == 4 and "http://d.com/p-en" not in {s for s, _ in d_pairs}  # ranked by URL, capped at 2
    assert len(pairs) == 10 and report["outputs"]["candidates"] == 10 and report["metrics"]["pairs_emitted"] == 10

    assert report["balanced"] and report["inputs"] == {"urls": len(ROWS)}
    assert report["kept"] == 2 * 6 + 4
    assert report["filtered"] == {"capped": 1, "no_partner": 1, "other_language": 1, "no_language": 1,
                                  "duplicate_url": 1, "redirect": 1}
    assert report["bad"] == {"empty_url": 1, "unparsable_url": 1, "url_too_long": 1}
    metrics = report["metrics"]
    assert metrics["urls_in_wanted_langs"] == len(ROWS) - 2
    assert metrics["url_flags"] == {"idn_host": 2, "percent_encoded": 1}
    assert metrics["buckets"] == 8 and metrics["buckets_with_both_languages"] == 7
    assert metrics["capped_buckets"] == 1 and metrics["largest_bucket"] == 5
    assert metrics["bucket_sizes"] == {"1": 1, "2": 6, "3-5": 1}
    rows = spark.read.parquet(str(tmp_path / "candidates")).collect()
    assert {r["source"] for r in rows} == {"handle"} and {(r["src_lang"], r["trg_lang"]) for r in rows} == {("eng", "fra")}
    assert {r["handle"] for r in rows if r["src_url"] == "http://en.b.org/news"} == {"b.org/news"}
    assert {r["host"] for r in rows if r["src_url"] == "http://en.b.org/news"} == {"en.b.org"}


@pytest.mark.slow
def test_several_pairs_in_one_run_write_lang_pair_partitions_and_skip_a_pair_without_pages(spark, tmp_path):
    _urls_table(spark, tmp_path, ROWS)
    report = run_job(BucketHandlesJob, spark, ["--root", str(tmp_path), "--langs", "en:fr,de,is", "--max-bucket", "2"])
    assert report["balanced"] and report["inputs"] == {"urls": 3 * len(ROWS)}
    by_pair = report["by_pair"]
    assert by_pair["eng-fra"]["kept"] == 2 * 6 + 4 and report["metrics"]["by_pair"]["eng-fra"]["pairs_emitted"] == 10
    assert report["metrics"]["by_pair"]["eng-deu"]["pairs_emitted"] == 1
    assert by_pair["eng-isl"] == {"status": "skipped: no_pages", "inputs": {"urls": len(ROWS)}, "kept": 0,
                                  "filtered": {"pair_no_pages": len(ROWS)}, "bad": {}}
    assert report["metrics"]["pairs_skipped"] == {"eng-isl": "no_pages"}
    rows = spark.read.parquet(str(tmp_path / "candidates")).collect()
    assert {(r["lang_pair"], r["trg_lang"]) for r in rows} == {("eng-fra", "fra"), ("eng-deu", "deu")}
    assert [(r["src_url"], r["trg_url"]) for r in rows if r["lang_pair"] == "eng-deu"] == [
        ("http://a.com/en/about.html", "http://a.com/de/about.html")]


@pytest.mark.slow
def test_learned_lss_pairs_a_host_with_its_own_markers(spark, tmp_path):
    rows = [_row(f"http://shop.example/gb/item-{i}.html", "eng") for i in range(8)]
    rows += [_row(f"http://shop.example/frx/item-{i}.html", "fra") for i in range(6)]
    rows += [_row("http://a.com/en/x", "eng"), _row("http://a.com/fr/x", "fra")]
    _urls_table(spark, tmp_path, rows)
    without = run_job(BucketHandlesJob, spark, ["--root", str(tmp_path), "--langs", "eng,fra"])
    assert without["metrics"]["pairs_emitted"] == 1
    learned = run_job(BucketHandlesJob, spark, ["--root", str(tmp_path), "--langs", "eng,fra", "--learn-lss"])
    assert learned["balanced"] and learned["metrics"]["pairs_emitted"] == 7
    assert learned["kept"] == 2 + 12 and learned["filtered"] == {"no_partner": 2}
    tokens = {(r["host"], r["token"], r["lang"]) for r in spark.read.parquet(str(tmp_path / "learned_lss")).collect()}
    assert tokens == {("shop.example", "gb", "eng"), ("shop.example", "frx", "fra")}
    assert learned["metrics"]["learned_lss"]["tokens"] == 2 and learned["metrics"]["learned_lss"]["hosts"] == 1
    assert ("http://shop.example/gb/item-3.html", "http://shop.example/frx/item-3.html") in _pairs(spark, tmp_path)


def test_bad_configuration_fails_early(tmp_path):
    with pytest.raises(ConfigError, match="two languages"):
        BucketHandlesJob().run(["--root", str(tmp_path), "--langs", "en"])
    with pytest.raises(ConfigError, match="max-bucket"):
        BucketHandlesJob().run(["--root", str(tmp_path), "--langs", "en,fr", "--max-bucket", "0"])
    with pytest.raises(ConfigError, match="no such file"):
        BucketHandlesJob().run(["--root", str(tmp_path), "--langs", "en,fr", "--lss-conf", str(tmp_path / "x.yaml")])
    with pytest.raises(ConfigError, match="run the job that writes it"):
        BucketHandlesJob().run(["--root", str(tmp_path), "--langs", "en,fr"])


def _table_rows(spark, root, table, label):
    """A table's rows of one pair (without lang_pair), sorted."""
    frame = spark.read.parquet(table_location(str(root / table)))
    return sorted(tuple(row) for row in frame.where(frame.lang_pair == label).drop("lang_pair").collect())


@pytest.mark.slow
def test_several_pairs_in_one_pass_equal_each_pair_run_alone(spark, tmp_path):
    rows = ROWS + [_row(f"http://shop.example/gb/item-{i}.html", "eng") for i in range(8)]
    rows += [_row(f"http://shop.example/frx/item-{i}.html", "fra") for i in range(6)]
    # one URL labelled in two languages: kept in eng-fra (its deu row is other_language), a duplicate in eng-deu
    # (its deu row comes first), where it leaves the German page without an English partner
    rows += [_row("http://m.com/en/y", "eng"), _row("http://m.com/en/y", "deu"), _row("http://m.com/fr/y", "fra"),
             _row("http://m.com/de/y", "deu")]
    options = ["--max-bucket", "2", "--learn-lss"]
    _urls_table(spark, tmp_path / "together", rows)
    together = run_job(BucketHandlesJob, spark, ["--root", str(tmp_path / "together"), "--langs", "en:fr,de", *options])
    assert together["balanced"] and together["metrics"]["lang_pairs"] == ["eng-fra", "eng-deu"]
    for langs, label in (("en,fr", "eng-fra"), ("en,de", "eng-deu")):
        _urls_table(spark, tmp_path / label, rows)
        alone = run_job(BucketHandlesJob, spark, ["--root", str(tmp_path / label), "--langs", langs, *options])
        for table in ("candidates", "learned_lss"):
            assert _table_rows(spark, tmp_path / "together", table, label) == \
                _table_rows(spark, tmp_path / label, table, label), (table, label)
        assert together["by_pair"][label] == alone["by_pair"][label]
        assert together["metrics"]["by_pair"][label] == alone["metrics"]["by_pair"][label]
    assert ("http://m.com/en/y", "http://m.com/fr/y") in {pair[1:3] for pair in _table_rows(
        spark, tmp_path / "together", "candidates", "eng-fra")}
    assert together["by_pair"]["eng-deu"]["filtered"]["duplicate_url"] == 2
    assert together["metrics"]["by_pair"]["eng-fra"]["learned_lss"]["tokens"] == 2
    # a pair that learned nothing has its partition all the same, with no row
    assert together["metrics"]["by_pair"]["eng-deu"]["learned_lss"]["tokens"] == 0
    assert list((tmp_path / "together" / "learned_lss").glob("*/lang_pair=eng-deu/*.parquet"))
