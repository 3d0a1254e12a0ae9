"""make-sample-archive --text-corpus: real translations, sentence truth, hard negatives (on the shared Bible set)."""
from __future__ import annotations

import hashlib
import html
import re

import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

from parascout.jobs.errors import ConfigError
from parascout.jobs.make_sample_archive import MakeSampleArchiveJob
from parascout.udfs.sample_archive import generate
from parascout.udfs.sample_archive.corpus import load_texts
from parascout.udfs.sample_archive.texts import NEGATIVE_KINDS, phrases

TINY = {"hosts": 4, "seed": 3, "pages_per_host": 30, "overrides": {"captures_per_warc": 150}}
ALIGNED_BEADS = ("1-1", "1-2", "2-1")


@pytest.fixture(scope="module")
def bible(shared_data):
    folder = shared_data / "parallel-text" / "bible"
    if not (folder / "eng.tsv.gz").exists():
        pytest.skip(f"the verse-aligned Bible set is not at {folder}")
    return str(folder)


@pytest.fixture(scope="module")
def archive(bible, tmp_path_factory):
    out = tmp_path_factory.mktemp("text") / "archive"
    summary = generate(str(out), progress=False, verbose=False, text_corpus=bible, **TINY)
    truth = {name: pq.read_table(out / "truth" / f"{name}.parquet").to_pylist()
             for name in ("pairs", "pages", "sentences")}
    return out, summary, truth


def normalised(text: str, lang: str) -> str:
    text = re.sub(r"\s+", " ", text)
    return text.replace(" ", "") if lang == "zho" else text


def test_true_pairs_hold_the_same_passage_and_corpus_ids(archive, bible):
    _, summary, truth = archive
    pages = {row["url"]: row for row in truth["pages"]}
    beads_of = {}
    for row in truth["sentences"]:
        beads_of.setdefault((row["src_url"], row["trg_url"]), []).append(row)
    text_pairs = [p for p in truth["pairs"] if p["page_kind"] in ("home", "section", "article")]
    assert len(text_pairs) == summary["pairs"] > 20 and set(beads_of) == {(p["src_url"], p["trg_url"]) for p in text_pairs}
    for pair in text_pairs:
        assert pages[pair["src_url"]]["passage"] == pages[pair["trg_url"]]["passage"]
        rows = beads_of[(pair["src_url"], pair["trg_url"])]
        assert [row["bead"] for row in rows] == list(range(len(rows)))
        for row in rows:
            if row["bead_type"] in ALIGNED_BEADS:
                assert row["src_ids"] == row["trg_ids"] and row["src_ids"]
    by_type = {}
    for row in truth["sentences"]:
        by_type[row["bead_type"]] = by_type.get(row["bead_type"], 0) + 1
    assert set(by_type) == {"1-1", "1-2", "2-1", "1-0", "0-1"} and by_type == summary["beads"]
    english = load_texts(bible, "eng")[0]
    single = [row for row in truth["sentences"] if row["bead_type"] == "1-1" and row["src_lang"] == "eng"
              and len(row["src_ids"]) == 1]
    assert single and all(row["src_text"] == english[row["src_ids"][0]] for row in single)


def test_sentence_truth_is_in_the_page_texts(archive):
    _, _, truth = archive
    body = {row["url"]: row["body_text"] for row in truth["pages"]}
    checked = 0
    for row in truth["sentences"]:
        for url, lang, text in ((row["src_url"], row["src_lang"], row["src_text"]),
                                (row["trg_url"], row["trg_lang"], row["trg_text"])):
            if text:
                assert normalised(text, lang) in normalised(body[url], lang), (url, text)
                checked += 1
        sides = (row["src_text"] != "", row["trg_text"] != "")
        assert sides == {"1-0": (True, False), "0-1": (False, True)}.get(row["bead_type"], (True, True))
    assert checked > 100


def test_every_hard_negative_kind_is_present_and_labelled(archive):
    _, summary, truth = archive
    pages = {row["url"]: row for row in truth["pages"]}
    kinds = {}
    for row in truth["pages"]:
        if row["negative_kind"]:
            kinds.setdefault(row["negative_kind"], []).append(row)
    assert set(kinds) == set(NEGATIVE_KINDS)
    assert {kind: len(rows) for kind, rows in kinds.items()} == summary["negatives"]
    paired = {url for pair in truth["pairs"] for url in (pair["src_url"], pair["trg_url"])}
    last_bead = {}  # (src_url, trg_url) -> type of the last bead holding corpus ids
    for row in truth["sentences"]:
        if row["src_ids"] or row["trg_ids"]:
            last_bead[(row["src_url"], row["trg_url"])] = row["bead_type"]
    for row in kinds["near_duplicate"]:
        original = pages[row["duplicate_of"]]
        assert row["url"] != original["url"] and row["body_text"] == original["body_text"] and row["variant"]
    for row in kinds["partial_translation"]:
        assert 0 < row["translated_share"] < 1 and last_bead[(row["negative_of"], row["url"])] == "1-0"
    for row in kinds["boilerplate_only"]:
        original = pages[row["negative_of"]]
        assert row["url"] not in paired and row["lang"] != original["lang"]
        assert row["body_text"].split("\n")[0] == original["body_text"].split("\n")[0]
    for row in kinds["same_template"]:
        target = pages[row["negative_of"]]
        assert target["lang"] != row["lang"] and target["passage"] != row["passage"] and row["url"] not in paired
    hosts = {row["host"]: row["languages"] for row in pq.read_table(archive[0] / "truth" / "hosts.parquet").to_pylist()}
    for row in kinds["third_language_source"]:
        assert row["translated_from"] not in hosts[row["host"]] and row["n_languages"] == 1


def test_cld2_agrees_except_where_the_body_is_in_another_language(archive):
    _, summary, _ = archive
    assert summary["text_source"].endswith("bible")
    assert set(summary["cld2_disagreements_by_kind"]) <= {"boilerplate_only", "near_duplicate"}
    assert len(summary["cld2_agreement"]) >= 4
    assert summary["cld2_agree_share"] >= 0.9 and sum(summary["cld2_disagreements_by_kind"].values()) < 10


def test_pages_carry_boilerplate_in_their_language_around_the_body(archive):
    root, _, truth = archive
    pages = {row["url"]: row for row in truth["pages"] if row["page_kind"] == "article" and not row["negative_kind"]}
    seen = 0
    for path in sorted((root / "warc").iterdir()):
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                url = record.rec_headers.get_header("WARC-Target-URI")
                if record.rec_type != "response" or url not in pages:
                    continue
                document = html.unescape(record.content_stream().read().decode("utf-8"))
                words = phrases(pages[url]["lang"])
                for key in ("cookies", "popular", "legal", "privacy"):
                    assert words[key] in document, (url, key)
                assert 'class="sidebar"' in document
                assert all(line in document for line in pages[url]["body_text"].split("\n"))
                seen += 1
    assert seen == len(pages) > 10


def test_same_seed_same_bytes_and_no_passage_shared(archive, bible, tmp_path):
    root, summary, truth = archive
    again = tmp_path / "again"
    generate(str(again), progress=False, verbose=False, text_corpus=bible, workers=2, **TINY)
    assert file_hashes(root) == file_hashes(again)
    assert summary["pages_with_a_passage_of_another_host"] == 0 and summary["passages_reused_within_host"] == 0
    holders = {}
    for row in truth["pages"]:
        if row["passage"]:
            holders.setdefault(row["passage"], set()).add((row["host"], row["page_key"]))
    assert holders and all(len(keys) == 1 for keys in holders.values())


def test_job_reports_text_metrics_and_rejects_languages_the_corpus_lacks(bible, tmp_path):
    with pytest.raises(ConfigError, match="isl"):
        MakeSampleArchiveJob().run(["--out", str(tmp_path / "is"), "--langs", "en,is", "--text-corpus", bible])
    out = tmp_path / "job"
    report = MakeSampleArchiveJob().run(["--out", str(out), "--hosts", "3", "--seed", "5", "--pages-per-host", "20",
                                         "--cdx-only", "--no-progress", "--workers", "1", "--text-corpus", bible])
    assert report["status"] == "ok" and report["balanced"] and report["metrics"]["text_source"] == bible
    assert set(report["args"]["langs"].split(",")) <= {"eng", "fra", "deu", "spa", "fin", "eus", "rus", "ell",
                                                       "ara", "zho"}
    assert sum(report["metrics"]["negatives"].values()) > 0 and report["metrics"]["cld2_agree_share"] >= 0.9
    assert not (out / "truth" / "sentences.parquet").exists()
    pages = pq.read_table(out / "truth" / "pages.parquet", columns=["body_text"]).column("body_text").to_pylist()
    assert pages and all(text is None for text in pages)


def file_hashes(root) -> dict[str, str]:
    return {str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(root.rglob("*")) if path.is_file()}
