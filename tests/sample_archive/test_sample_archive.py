"""make-sample-archive: determinism, CommonCrawl formats (checked against real excerpts), truth consistency."""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
from urllib.parse import urljoin

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

from parascout.jobs.errors import ConfigError
from parascout.jobs.make_sample_archive import MakeSampleArchiveJob
from parascout.udfs.sample_archive import code_strip_recoverable, generate
from parascout.udfs.sample_archive.index import COLUMNAR_SCHEMA

SMALL = {"hosts": 6, "seed": 11, "pages_per_host": 50, "overrides": {"captures_per_warc": 150}}
COLUMNAR_TYPES = {"url_surtkey": pa.string(), "url": pa.string(), "url_host_name": pa.string(),
                  "url_host_tld": pa.string(), "url_host_registered_domain": pa.string(), "url_protocol": pa.string(),
                  "url_port": pa.int32(), "url_path": pa.string(), "url_query": pa.string(),
                  "fetch_time": pa.timestamp("us", tz="UTC"), "fetch_status": pa.int16(),
                  "fetch_redirect": pa.string(), "content_digest": pa.string(), "content_mime_type": pa.string(),
                  "content_mime_detected": pa.string(), "content_charset": pa.string(),
                  "content_languages": pa.string(), "content_truncated": pa.string(), "warc_filename": pa.string(),
                  "warc_record_offset": pa.int32(), "warc_record_length": pa.int32(), "warc_segment": pa.string()}


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample") / "archive"
    summary = generate(str(out), progress=False, verbose=False, **SMALL)
    return out, summary


def cdx_entries(root) -> list[tuple[str, str, dict]]:
    entries = []
    for name in sorted(os.listdir(root / "indexes")):
        if name.startswith("cdx-"):
            for line in gzip.decompress((root / "indexes" / name).read_bytes()).decode("utf-8").splitlines():
                key, timestamp, payload = line.split(" ", 2)
                entries.append((key, timestamp, json.loads(payload)))
    return entries


def file_hashes(root) -> dict[str, str]:
    return {str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob("*")) if path.is_file()}


def wat_documents(root) -> list[tuple[dict, dict]]:
    documents = []
    for path in sorted((root / "wat").iterdir()):
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type == "metadata":
                    headers = dict(record.rec_headers.headers)
                    documents.append((headers, json.loads(record.content_stream().read())))
    return documents


def test_same_seed_gives_same_bytes_whatever_the_worker_count(archive, tmp_path):
    root, _ = archive
    again = tmp_path / "again"
    generate(str(again), progress=False, verbose=False, workers=2, **SMALL)
    first, second = file_hashes(root), file_hashes(again)
    assert first == second
    assert sum(name.startswith("warc/") for name in first) == sum(name.startswith("wat/") for name in first) > 1
    other = tmp_path / "other"
    generate(str(other), progress=False, verbose=False, **{**SMALL, "seed": 12})
    assert file_hashes(other)["truth/pairs.parquet"] != first["truth/pairs.parquet"]


def test_every_cdx_offset_reads_back_its_warc_record(archive):
    root, summary = archive
    entries = cdx_entries(root)
    assert len(entries) == summary["cdx_lines"] == summary["captures"]
    assert [e[:2] for e in entries] == sorted(e[:2] for e in entries)
    for _, _, fields in entries:
        with open(root / fields["filename"], "rb") as handle:
            handle.seek(int(fields["offset"]))
            member = handle.read(int(fields["length"]))
        records = list(ArchiveIterator(io.BytesIO(member)))
        assert len(records) == 1
        record = records[0]
        assert record.rec_type == "response"
        assert record.rec_headers.get_header("WARC-Target-URI") == fields["url"]
        assert record.http_headers.get_statuscode() == fields["status"]
        assert record.rec_headers.get_header("WARC-Payload-Digest") == "sha1:" + fields["digest"]
        assert fields["filename"].split("/")[0] in ("warc", "crawldiagnostics", "robotstxt")
    statuses = {fields["status"] for _, _, fields in entries}
    assert {"200", "301", "404"} <= statuses
    mimes = {fields["mime"] for _, _, fields in entries}
    assert {"text/html", "image/jpeg", "application/pdf", "text/plain"} <= mimes
    redirects = [fields for _, _, fields in entries if fields["status"] == "301"]
    assert redirects and all(fields["redirect"].startswith("https://") for fields in redirects)


def test_cld2_agrees_with_the_intended_language(archive):
    root, _ = archive
    intended = dict(zip(*pq.read_table(root / "truth" / "pages.parquet", columns=["url", "lang"]).to_pydict()
                        .values()))
    pages = [fields for _, _, fields in cdx_entries(root) if fields["url"] in intended]
    assert len(pages) == len(intended) > 200
    agree = sum((fields.get("languages") or "").split(",")[0] == intended[fields["url"]] for fields in pages)
    assert agree / len(pages) >= 0.95
    assert {intended[url] for url in intended} >= {"eng"} and len(set(intended.values())) >= 4


def test_duplicates_share_the_digest_of_their_page(archive):
    root, summary = archive
    entries = [fields for _, _, fields in cdx_entries(root) if fields["status"] == "200"]
    by_digest = {}
    for fields in entries:
        by_digest.setdefault(fields["digest"], []).append(fields["url"])
    assert summary["captures_by_kind"].get("warc:duplicate", 0) >= 1
    assert any(len(urls) > 1 for urls in by_digest.values())


def test_truth_pairs_are_captured_pages_linked_by_the_switcher(archive):
    root, summary = archive
    pairs = pq.read_table(root / "truth" / "pairs.parquet").to_pylist()
    assert len(pairs) == summary["pairs"] > 50
    html_200 = {fields["url"] for _, _, fields in cdx_entries(root)
                if fields["status"] == "200" and fields["mime"] == "text/html"}
    links = {}
    for headers, document in wat_documents(root):
        html = document["Envelope"]["Payload-Metadata"].get("HTTP-Response-Metadata", {}).get("HTML-Metadata")
        if html:
            base = headers["WARC-Target-URI"]
            links[base] = {urljoin(base, link["url"]) for link in html["Links"] if link["path"] == "A@/href"}
    linked = 0
    for pair in pairs:
        assert pair["src_url"] in html_200 and pair["trg_url"] in html_200
        assert pair["src_lang"] != pair["trg_lang"]
        if pair["switcher_linked"]:
            assert pair["trg_url"] in links[pair["src_url"]] or pair["src_url"] in links[pair["trg_url"]]
            linked += 1
    assert 0 < linked < len(pairs) or summary["multilingual_hosts"] == 0
    hosts = pq.read_table(root / "truth" / "hosts.parquet").to_pylist()
    assert len(hosts) == SMALL["hosts"] and sum(h["n_pairs"] for h in hosts) == len(pairs)
    assert any(h["multilingual"] for h in hosts) and all(len(h["languages"]) <= 5 for h in hosts)


def test_default_mix_prints_conventions_and_is_hard_for_code_stripping(tmp_path, capsys):
    summary = generate(str(tmp_path / "mix"), cdx_only=True, progress=False)
    printed = capsys.readouterr().out
    share = float(re.search(r"code-strip recoverable share of true pairs: ([\d.]+)%", printed).group(1)) / 100
    assert share == pytest.approx(summary["code_strip_recoverable_share"], abs=0.001)
    assert share <= 0.40
    assert len(summary["conventions"]) >= 8 and all(label in printed for label in summary["conventions"])
    markers = {label.split("+")[0] for label in summary["conventions"]}
    assert {"dir_code", "subdomain", "query_code", "query_id", "suffix", "locale", "name", "none"} <= markers
    assert summary["hosts"] == 60 and 15_000 <= summary["html_pages"] <= 25_000
    assert not (tmp_path / "mix" / "warc").exists() and (tmp_path / "mix" / "indexes" / "cluster.idx").exists()


def test_code_strip_baseline():
    assert code_strip_recoverable("https://www.a.is/en/news/x", "https://www.a.is/is/news/x")
    assert code_strip_recoverable("https://en.a.is/x", "https://www.a.is/x")
    assert code_strip_recoverable("https://a.is/x-en.html", "https://a.is/x.html")
    assert code_strip_recoverable("https://a.is/fr_FR/x", "https://a.is/en-gb/x")
    assert code_strip_recoverable("https://a.is/x?lang=fr", "https://a.is/x")
    assert not code_strip_recoverable("https://a.is/x?l=2", "https://a.is/x?l=1")
    assert not code_strip_recoverable("https://a.is/english/x", "https://a.is/islenska/x")
    assert not code_strip_recoverable("https://a.is/en/iceland", "https://a.is/fr/islande")


def test_wat_has_commoncrawl_layout_and_points_at_warc_members(archive):
    root, _ = archive
    documents = wat_documents(root)
    responses = [d for _, d in documents if "HTTP-Response-Metadata" in d["Envelope"]["Payload-Metadata"]]
    requests = [d for _, d in documents if "HTTP-Request-Metadata" in d["Envelope"]["Payload-Metadata"]]
    metadata = [d for _, d in documents if "WARC-Metadata-Metadata" in d["Envelope"]["Payload-Metadata"]]
    assert responses and len(requests) == len(responses) == len(metadata)
    html = [d for d in responses if "HTML-Metadata" in d["Envelope"]["Payload-Metadata"]["HTTP-Response-Metadata"]]
    sample = html[0]["Envelope"]["Payload-Metadata"]["HTTP-Response-Metadata"]["HTML-Metadata"]
    assert sample["Head"]["Title"] and {"path", "url"} <= set(sample["Links"][0])
    assert {link["path"] for d in html for link in
            d["Envelope"]["Payload-Metadata"]["HTTP-Response-Metadata"]["HTML-Metadata"]["Links"]} >= \
        {"A@/href", "IMG@/src"}
    for document in responses[:50]:
        container, envelope = document["Container"], document["Envelope"]
        with open(root / "warc" / container["Filename"], "rb") as handle:
            handle.seek(int(container["Offset"]))
            member = handle.read(int(container["Gzip-Metadata"]["Deflate-Length"]) + 18)
        inflated = gzip.decompress(member)
        assert len(inflated) == int(container["Gzip-Metadata"]["Inflated-Length"])
        record = next(ArchiveIterator(io.BytesIO(member)))
        assert record.rec_headers.get_header("WARC-Record-ID") == envelope["WARC-Header-Metadata"]["WARC-Record-ID"]
        assert inflated.index(b"\r\n\r\n") + 4 == int(envelope["WARC-Header-Length"])


def test_warc_records_carry_the_headers_of_real_commoncrawl_records(archive, shared_data):
    root, _ = archive
    real = records_by_type(shared_data / "cc-sample" / "CC-MAIN-2024-22-whirlwind.warc.gz")
    ours = records_by_type(next((root / "warc").iterdir()))
    for kind in ("warcinfo", "request", "response", "metadata"):
        assert ours[kind][0] == real[kind][0], kind
    real_meta, our_meta = real["metadata"][1].decode(), ours["metadata"][1].decode()
    assert [line.split(":")[0] for line in our_meta.splitlines() if line] == \
        [line.split(":")[0] for line in real_meta.splitlines() if line]
    cld2 = json.loads(our_meta.split("languages-cld2: ")[1].splitlines()[0])
    assert set(cld2) == set(json.loads(real_meta.split("languages-cld2: ")[1].splitlines()[0]))
    assert set(cld2["languages"][0]) == {"code", "code-iso-639-3", "text-covered", "score", "name"}
    real_request, our_request = real["request"][1].decode().splitlines(), ours["request"][1].decode().splitlines()
    assert [line.split(":")[0] for line in our_request[1:]] == [line.split(":")[0] for line in real_request[1:]]


def test_wat_request_record_has_the_keys_of_the_real_wat(archive, shared_data):
    root, _ = archive
    with open(shared_data / "cc-sample" / "CC-MAIN-2024-22-whirlwind.warc.wat.gz", "rb") as stream:
        real = [json.loads(r.content_stream().read()) for r in ArchiveIterator(stream) if r.rec_type == "metadata"]
    ours = [d for _, d in wat_documents(root) if "HTTP-Request-Metadata" in d["Envelope"]["Payload-Metadata"]]
    assert real and ours
    assert key_paths(ours[0]) - {"Envelope.WARC-Header-Metadata.WARC-Payload-Digest",
                                 "Envelope.WARC-Header-Metadata.WARC-Block-Digest"} == key_paths(real[0])


def test_real_commoncrawl_excerpts_parse_with_the_same_readers(shared_data):
    for name, expected in (("CC-MAIN-2020-34-excerpt.warc.gz", 16), ("CC-MAIN-2024-22-whirlwind.warc.gz", 1)):
        with open(shared_data / "cc-sample" / name, "rb") as stream:
            types = [record.rec_type for record in ArchiveIterator(stream)]
        assert types.count("response") == expected and types[0] == "warcinfo"


def test_columnar_index_has_the_commoncrawl_schema(archive):
    root, summary = archive
    table_root = root / "cc-index" / "table" / "cc-main" / "warc"
    dataset = ds.dataset(table_root, format="parquet", partitioning="hive")
    table = dataset.to_table()
    for name, kind in COLUMNAR_TYPES.items():
        assert table.schema.field(name).type == kind, name
    assert set(COLUMNAR_SCHEMA.names) <= set(table.schema.names) and {"crawl", "subset"} <= set(table.schema.names)
    assert table.num_rows == summary["cdx_lines"]
    rows = table.to_pylist()
    assert {row["subset"] for row in rows} == {"warc", "crawldiagnostics", "robotstxt"}
    assert all(row["warc_filename"].startswith(row["subset"] + "/") for row in rows)
    html = [row for row in rows if row["fetch_status"] == 200 and row["content_mime_detected"] == "text/html"]
    assert html and all(row["content_languages"] for row in html[:50])
    assert summary["columnar_rows"]["warc"] == sum(row["subset"] == "warc" for row in rows)


def test_zipnum_cluster_index_points_at_blocks(archive):
    root, _ = archive
    for line in (root / "indexes" / "cluster.idx").read_text().splitlines():
        key, filename, offset, length, _ = line.split("\t")
        with open(root / "indexes" / filename, "rb") as handle:
            handle.seek(int(offset))
            block = gzip.decompress(handle.read(int(length))).decode()
        assert block.startswith(key + " ")


@pytest.mark.slow
def test_spark_reads_the_columnar_index_types(archive, spark):
    root, _ = archive
    frame = spark.read.parquet(str(root / "cc-index" / "table" / "cc-main" / "warc"))
    types = dict(frame.dtypes)
    assert types["fetch_status"] == "smallint" and types["warc_record_offset"] == "int"
    assert types["fetch_time"] == "timestamp" and types["subset"] == "string"
    assert frame.filter("subset = 'warc' AND fetch_status = 200").count() > 0


def test_job_writes_a_balanced_report_and_skips_a_rerun(tmp_path):
    out = tmp_path / "job"
    argv = ["--out", str(out), "--hosts", "3", "--seed", "5", "--pages-per-host", "30", "--langs", "en,is,fr",
            "--cdx-only", "--no-progress", "--workers", "1"]
    report = MakeSampleArchiveJob().run(argv)
    assert report["status"] == "ok" and report["balanced"]
    assert report["inputs"]["captures"] == report["kept"] == report["outputs"]["indexes"] > 0
    assert report["metrics"]["hosts"] == 3
    saved = json.loads((out / "_reports" / "make-sample-archive.json").read_text())
    assert saved["metrics"]["code_strip_recoverable_share"] == report["metrics"]["code_strip_recoverable_share"]
    languages = set(pq.read_table(out / "truth" / "pages.parquet", columns=["lang"]).column("lang").to_pylist())
    assert languages <= {"eng", "isl", "fra"}
    assert MakeSampleArchiveJob().run(argv).get("skipped_rerun")


def test_job_rejects_languages_without_vocabulary(tmp_path):
    with pytest.raises(ConfigError, match="--langs"):
        MakeSampleArchiveJob().run(["--out", str(tmp_path), "--langs", "en,xx"])
    with pytest.raises(ConfigError, match="--out"):
        MakeSampleArchiveJob().run(["--hosts", "2"])


def records_by_type(path) -> dict:
    """The first record of each type as (header names, content); for metadata, the first with a CLD2 result."""
    found = {}
    with open(path, "rb") as stream:
        for record in ArchiveIterator(stream):
            content = record.content_stream().read()
            if record.rec_type in found or (record.rec_type == "metadata" and b"languages-cld2" not in content):
                continue
            found[record.rec_type] = ([name for name, _ in record.rec_headers.headers], content)
    return found


def key_paths(document: dict, prefix: str = "") -> set[str]:
    paths = set()
    for key, value in document.items():
        path = f"{prefix}{key}"
        paths.add(path)
        if isinstance(value, dict):
            paths |= key_paths(value, path + ".")
    return paths


def test_topical_sites_are_about_money_and_others_only_mention_it(archive):
    from parascout.udfs.sample_archive.archive import crawl_start_of
    from parascout.udfs.sample_archive.render import render_page
    from parascout.udfs.sample_archive.sites import build_site, plan_sites
    from parascout.udfs.sample_archive.topics import TOPIC, choose_topical_sites, currency_names, term_lines
    from parascout.udfs.sample_archive.vocabulary import sample_conf

    root, summary = archive
    assert not (root / "truth" / "topics.parquet").exists() and "topical_hosts" not in summary  # no --topical-sites
    conf = {**sample_conf(), "topical_sites": 1}
    specs = plan_sites(4, 3, ["eng", "fra"], conf, 40)
    choose_topical_sites(specs, 1, 3)
    sites = [build_site(spec, conf, crawl_start_of(3)) for spec in specs]
    topical = [site for site in sites if site.spec.topic == TOPIC]
    assert len(topical) == 1
    articles = [(site, page) for site in sites for page in site.pages.values() if page.kind == "article"]
    on_topic = [(site, page) for site, page in articles if page.on_topic]
    assert on_topic and all(site is topical[0] for site, _ in on_topic)
    assert len(on_topic) >= 0.7 * sum(site is topical[0] for site, _ in articles)
    for site, page in on_topic:
        assert len(page.mentions) >= 2
        for lang in page.languages:
            html = render_page(site, page, lang).html
            assert all(currency_names(lang)[code].casefold() in html.casefold() for code in page.mentions)
            if page.title_mention:
                assert f"<title>{currency_names(lang)[page.title_mention]}: " in html
    strays = [page for site, page in articles if not page.on_topic and page.mentions]
    assert all(len(page.mentions) <= 2 for page in strays)
    lines = term_lines(["eng", "fra"])
    assert "1\tUS Dollar\tmajor\ten" in lines and "1\teuro\tmajor\tfr" in lines and len(lines) == 1 + 2 * 40


def test_job_checks_topical_sites(tmp_path):
    with pytest.raises(ConfigError, match="--topical-sites"):
        MakeSampleArchiveJob().run(["--out", str(tmp_path), "--hosts", "2", "--topical-sites", "3"])
