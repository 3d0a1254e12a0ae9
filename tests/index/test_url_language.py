"""The language a URL declares (udfs.index.url_language) and how scan-cdx uses it for a page's language."""
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from parascout.jobs.scan_cdx import ScanCdx
from parascout.udfs.common.sites import site_of
from parascout.udfs.common.urls import surt
from parascout.udfs.index.cdx import format_cdx_line
from parascout.udfs.index.url_language import url_marker
from tests.conftest import run_job

REAL_SITES = Path(__file__).resolve().parents[3] / "shared" / "data" / "real-sites"
URLS = [
    "https://docs.gimp.org/2.10/fr/gimp-tool-warp.html",  # a language directory
    "https://www.debian.org/releases/stable/amd64/apbs04.fr.html",  # content negotiation's file names
    "http://example.com/index.html.de",
    "https://docs.kicad.org/6.0/es/eeschema/eeschema.html",
    "https://fr.example.com/actualites/",  # a language host
    "http://example.com/page?lang=pt_BR&id=3",
    "http://example.com/about_es.htm",
    "http://example.com/fr-ca/a/b.html",
    "http://example.com/2024/01/news.html",  # no code anywhere
    "http://example.com/it/services.html",  # a code: whether it is a language is the host's slot's question
    "http://example.com/aa/bb/cc.html",  # two letters that name no language in the table
    "not a url",
]


def test_url_marker_finds_the_code_and_its_slot():
    assert url_marker(URLS[0]) == ("dir2", "fra")
    assert url_marker(URLS[1]) == ("suffix", "fra")
    assert url_marker(URLS[2]) == ("suffix", "deu")
    assert url_marker(URLS[3]) == ("dir2", "spa")
    assert url_marker(URLS[4]) == ("host", "fra")
    assert url_marker(URLS[5]) == ("query", "por")
    assert url_marker(URLS[6]) == ("tail", "spa")
    assert url_marker(URLS[7]) == ("dir1", "fra")
    assert url_marker(URLS[8]) is None and url_marker(URLS[11]) is None
    assert url_marker(URLS[9]) == ("dir1", "ita")


#: URLs where a slot's pattern almost matches: a code after '#', two query keys, dots and separators in odd places
TRICKY_URLS = [
    "http://example.com/a#x?lang=fr", "http://example.com/?hl=english&lang=de", "http://example.com/?language=fra#top",
    "http://example.com/.fr.html", "http://example.com/a.b.fr.html", "http://example.com/a.html.fr",
    "http://example.com/a.html.fr.x", "http://example.com/page_ab_cd.html", "http://example.com/my-page-en-us.htm",
    "http://fr.example", "http://fr.a..b", "https://user@fr.example.com:8080/x", "http://example.com//fr//x.html",
    "http://example.com/fr", "HTTP://Example.COM/FR/Page.HTML", "http://example.com/pt_br/", "http://en-us.a.b/",
    "ftp://example.com/de/x", "example.com/fr/x", "http://example.com/fr-ca/www.en.html?x=1&lc=es-mx",
]


def random_urls(count: int, seed: int = 3) -> list[str]:
    """URLs made of code-like pieces and separators: every slot's edge cases, reproducibly."""
    import random

    rng = random.Random(seed)
    pieces = ["fr", "en-us", "pt_br", "de", "zh-hant", "fra", "lang=", "language=", "hl=", "?", "&", "#", "/", ".",
              "-", "_", "html", "htm", "www", "index", "x1", "abcd", "..", "//", "@", ":8080", "sv", "it"]
    return [rng.choice(["http://", "https://fr.", "http://en.a."]) + "".join(
        rng.choice(pieces) for _ in range(rng.randrange(1, 12))) for _ in range(count)]


@pytest.mark.slow
def test_the_three_engines_agree_on_markers_and_sibling_keys(spark):
    """url_marker (Python), the Java UDF and the Spark expressions give every URL the same slot, language and
    sibling key: the scan may run on either engine."""
    from pyspark.sql import functions as F

    from parascout.udfs.common.jvm import jvm_jar_path
    from parascout.udfs.index.url_language import url_language_struct

    urls = [*URLS, *TRICKY_URLS, *random_urls(3000)]
    if REAL_SITES.exists():
        pages = pd.read_csv(REAL_SITES / "truth" / "pages.tsv", sep="\t", dtype=str, keep_default_na=False, quoting=3)
        urls += list(pages["url"])
    frame = spark.createDataFrame(pd.DataFrame({"url": urls}))
    engines = {jvm: frame.select("url", url_language_struct(F.col("url"), use_jvm_udf=jvm).alias("m"))
               .select("url", "m.*").toPandas() for jvm in (True, False)}
    for java, expressions in zip(engines[True].itertuples(), engines[False].itertuples()):
        expected = url_marker(java.url)
        for row in (java, expressions):
            assert (None if row.url_marker_lang is None else (row.url_marker_slot, row.url_marker_lang)) == expected, \
                row.url
        assert java.sibling_key == expressions.sibling_key, java.url
    assert engines[True]["sibling_key"].iloc[0] == "https://docs.gimp.*/2.10/*/gimp-tool-warp.html"
    if jvm_jar_path() is not None:
        assert spark.catalog.functionExists("parascout_url_marker")  # the Java engine was the one compared


def cdx_lines(pages: list[tuple[str, str]]) -> list[str]:
    return sorted(format_cdx_line(surt(url), "20240805101000", {
        "url": url, "mime": "text/html", "status": "200", "length": "900", "offset": str(index * 900),
        "filename": "crawl-data/CC-MAIN-2024-33/segments/1/warc/a.warc.gz", "languages": languages})
        for index, (url, languages) in enumerate(pages))


@pytest.mark.slow
def test_scan_takes_the_language_a_site_declares_in_its_urls(spark, tmp_path):
    pages = [
        # a documentation site: CLD2 calls two French pages English (English code, menus, leftovers)
        *[(f"https://docs.example.org/en/page{k}.html", "eng") for k in range(4)],
        ("https://docs.example.org/fr/page0.html", "fra,eng"), ("https://docs.example.org/fr/page1.html", "fra"),
        ("https://docs.example.org/fr/page2.html", "eng"), ("https://docs.example.org/fr/page3.html", "eng,fra"),
        # an English site whose /it/ is its IT department: the slot holds one code, CLD2 never agrees
        *[(f"https://www.shop.com/it/support{k}.html", "eng") for k in range(3)],
        *[(f"https://www.shop.com/help{k}.html", "eng") for k in range(3)],
        ("https://www.shop.com/fr/aide.html", "fra"),
        # languages on two hosts of one site
        ("https://www.news.net/story.html", "eng"), ("https://fr.news.net/histoire.html", "fra"),
        ("https://fr.news.net/autre.html", "fra"),
        # a site with English only
        ("https://www.english.co.uk/a.html", "eng"),
    ]
    cdx = tmp_path / "index.cdx"
    cdx.write_text("\n".join(cdx_lines(pages)) + "\n")
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path / "out"), "--cdx", str(cdx), "--langs", "en,fr"])
    assert report["balanced"] and report["filtered"] == {"host_not_bilingual": 1}
    urls = spark.read.parquet(str(tmp_path / "out" / "urls")).toPandas().set_index("url")
    french = urls.loc[[f"https://docs.example.org/fr/page{k}.html" for k in range(4)]]
    assert set(french["lang"]) == {"fra"} and set(french["lang_source"]) == {"url"}
    assert urls.loc["https://docs.example.org/fr/page2.html", "cdx_lang"] == "eng"
    shop = urls[urls["host"] == "www.shop.com"]
    assert set(shop.loc[shop.index.str.contains("/it/"), "lang"]) == {"eng"}
    assert set(shop.loc[shop.index.str.contains("/it/"), "lang_source"]) == {"cdx"}
    assert urls.loc["https://www.shop.com/fr/aide.html", "lang"] == "fra"
    assert {"www.news.net", "fr.news.net"} <= set(urls["host"])
    assert urls.loc["https://fr.news.net/histoire.html", "lang_source"] == "url"
    assert "www.english.co.uk" not in set(urls["host"])

    cdx_only = run_job(ScanCdx, spark, ["--root", str(tmp_path / "cdx"), "--cdx", str(cdx), "--langs", "en,fr",
                                        "--lang-from", "cdx"])
    assert cdx_only["balanced"]
    by_cld2 = spark.read.parquet(str(tmp_path / "cdx" / "urls")).toPandas().set_index("url")
    assert by_cld2.loc["https://docs.example.org/fr/page2.html", "lang"] == "eng"
    assert set(by_cld2["lang_source"]) == {"cdx"}


@pytest.mark.slow
@pytest.mark.skipif(not REAL_SITES.exists(), reason="the real-sites archive (../shared/data/real-sites) is absent")
def test_real_documentation_sites_get_the_language_of_their_urls(spark, tmp_path):
    report = run_job(ScanCdx, spark, ["--root", str(tmp_path), "--cdx", str(REAL_SITES / "indexes"),
                                      "--langs", "en,fr"])
    assert report["balanced"] and "host_not_bilingual" not in report["filtered"]  # KiCad's French is kept
    urls = spark.read.parquet(str(tmp_path / "urls")).toPandas()
    truth = pd.read_csv(REAL_SITES / "truth" / "pages.tsv", sep="\t", dtype=str, keep_default_na=False, quoting=3)
    merged = urls.merge(truth[["url", "lang"]].rename(columns={"lang": "true_lang"}), on="url")
    iso3 = {"en": "eng", "fr": "fra", "de": "deu", "es": "spa", "ru": "rus"}
    agree = (merged["lang"] == merged["true_lang"].map(lambda code: iso3.get(code, code))).mean()
    cdx_agree = (merged["cdx_lang"] == merged["true_lang"].map(lambda code: iso3.get(code, code))).mean()
    assert agree > 0.99 and cdx_agree < agree - 0.05


def url_language_cdx_lines(count: int, seed: int = 7) -> list[str]:
    """CDX lines whose hosts mark languages in every slot, with sibling pages, CLD2 languages that agree or not,
    several captures of one URL (http and https, the same second, the same WARC file), and German sites without
    codes."""
    import random

    rng = random.Random(seed)
    codes = ["en", "fr", "de", "is", "it", "pt-br", "zz"]
    layouts = ["https://{host}/{code}/docs/page{n}.html", "https://{host}/docs/page{n}.{code}.html",
               "https://{host}/docs/page{n}.html?lang={code}", "https://{code}.{host}/docs/page{n}.html",
               "https://{host}/docs/page{n}_{code}.html", "https://{host}/news/{n}.html"]
    hosts = [(f"{rng.choice(['www.', '', 'docs.'])}site{i}.{rng.choice(['is', 'com', 'de', 'fr'])}",
              rng.choice(layouts)) for i in range(max(count // 60, 4))]
    lines = []
    for index in range(count):
        host, layout = rng.choice(hosts[: 1 + index % len(hosts)])
        code = rng.choice(codes)
        url = layout.format(host=host, code=code, n=rng.randrange(12))
        if rng.random() < 0.2:
            url = url.replace("https://", "http://")
        cld2 = rng.choice([{"en": "eng", "fr": "fra", "de": "deu", "is": "isl"}.get(code, "eng"), "eng", "fra,eng", "",
                           ",eng", "fra,"])  # "": no languages key; an empty first or last language
        if "/news/" in layout:  # sites in one language
            cld2 = rng.choice(["deu", "deu,eng"])
        stamp = f"2024080{rng.randrange(1, 4)}10100{rng.randrange(2)}"
        lines.append(format_cdx_line(surt(url), stamp, {
            "url": url, "mime": "text/html", "status": "200", "length": "900",
            "offset": str(rng.randrange(4) * 900), "languages": cld2,
            "filename": f"crawl-data/CC-MAIN-2024-33/segments/1/warc/{rng.choice('ab')}.warc.gz"}))
    return sorted(lines)


@pytest.mark.slow
def test_the_jvm_pass_and_the_windows_give_the_same_urls(spark, tmp_path, monkeypatch):
    """scan-cdx's per-host pass on the JVM (parascout.UrlLanguagePass) gives the urls rows the windows give, on
    generated hosts and the real sites, with hosts bigger than the rows it holds in memory (spilled), with and
    without --langs; and it writes them ordered by site, host and SURT."""
    from parascout.udfs.common.jvm import jvm_jar_path
    from parascout.udfs.index import cdx_records

    if jvm_jar_path() is None:
        pytest.skip("the jar is not built (`make jar`): there is no JVM pass to compare")
    generated = tmp_path / "generated.cdx"
    generated.write_text("\n".join(url_language_cdx_lines(4000)) + "\n")
    sources = [(generated, [], 1_000_000), (generated, [], 7), (generated, ["--langs", "en,fr"], 7)]
    if REAL_SITES.exists():
        sources += [(REAL_SITES / "indexes", [], 50), (REAL_SITES / "indexes", ["--langs", "en,fr"], 1_000_000)]
    seen_url_languages = not_bilingual = 0
    for number, (cdx, options, held_rows) in enumerate(sources):
        tables = {}
        for engine in ("jvm", "windows"):
            with monkeypatch.context() as patch:
                patch.setattr(cdx_records, "MAX_HELD_HOST_ROWS", held_rows)
                if engine == "windows":
                    patch.setattr(cdx_records, "url_language_pass", lambda frame, pairs: None)
                root = tmp_path / f"{number}-{engine}"
                report = run_job(ScanCdx, spark, ["--root", str(root), "--cdx", str(cdx), *options])
            assert report["balanced"], report
            tables[engine] = (spark.read.parquet(str(root / "urls")).drop("version").toPandas(), report)
            for part in sorted((root / "urls").glob("version=*/part-*.parquet")):  # ordered as the docs say
                keys = pq.read_table(part, columns=["host", "domain", "surt"]).to_pandas()
                keys.insert(0, "site", [site_of(host, domain, frozenset(), grouped_by="name")
                                        for host, domain in zip(keys["host"], keys["domain"])])
                assert keys.equals(keys.sort_values(["site", "host", "surt"])), (engine, part)
        jvm, windows = tables["jvm"][0], tables["windows"][0]
        assert tables["jvm"][1]["filtered"] == tables["windows"][1]["filtered"], (cdx, options)
        not_bilingual += tables["jvm"][1]["filtered"].get("host_not_bilingual", 0)
        columns = sorted(jvm.columns)
        ordered = [frame[columns].astype(str).sort_values(["host", "surt", "url"]).reset_index(drop=True)
                   for frame in (jvm, windows)]
        pd.testing.assert_frame_equal(*ordered)
        seen_url_languages += int((jvm["lang_source"] == "url").sum())
        assert len(jvm) > 0
    assert seen_url_languages > 100  # the URL-language rule decided pages, not only the CDX's languages
    assert not_bilingual > 50  # and --langs left sites out


def test_counts_observed_upstream_of_the_jvm_pass_are_reported(spark, tmp_path):
    """The JVM pass reads the sorted rows' internal RDD, which hides the plan upstream of it from the action that
    runs: scan-cdx's record counts, observed there, still arrive once the action ends (else Observation.get would
    wait for ever and the job count every reason in a second pass)."""
    import json
    import threading

    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from parascout.udfs.common.jvm import jvm_jar_path
    from parascout.udfs.index import cdx, cdx_records

    if jvm_jar_path() is None:
        pytest.skip("the jar is not built (`make jar`): there is no JVM pass")
    lines = url_language_cdx_lines(300)
    path = tmp_path / "pages.cdx"
    path.write_text("\n".join(lines) + "\n")
    records = cdx_records.jvm_file_records(spark, [str(path)], [None], cdx.MAX_LINE_BYTES)
    assert records is not None
    observation = Observation("upstream")
    observed = records.observe(observation, F.count(F.lit(1)).alias("records"),
                               F.sum(F.when(F.col("url").startswith("http:"), 1).otherwise(0)).alias("http"))
    captures = cdx_records.latest_captures(observed.where(F.col("reason").isNull()).drop("reason"), (), None)
    assert "LogicalRDD" in captures._jdf.queryExecution().logical().toString()  # the pass's own rows, plan cut
    captures.write.format("noop").mode("overwrite").save()
    got = {}
    waiting = threading.Thread(target=lambda: got.update(observation.get), daemon=True)
    waiting.start()
    waiting.join(timeout=60)
    assert got, "the observation upstream of the JVM pass was never completed"
    assert got["records"] == len(lines)
    assert got["http"] == sum(1 for line in lines if json.loads(line.split(" ", 2)[2])["url"].startswith("http:"))
