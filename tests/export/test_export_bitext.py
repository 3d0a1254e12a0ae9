"""export-bitext: formats written and read back (TMX parsed and checked against the TMX 1.4b DTD's
structure), document-level bad input, and the job on tiny tables with its balanced report."""
from __future__ import annotations

import gzip
import json
import shutil
from xml.etree import ElementTree

import pandas as pd
import pytest

from parascout.jobs.export_bitext import ExportBitextJob
from parascout.jobs.shortlist import ShortlistJob
from parascout.udfs.common.table_layout import table_location
from parascout.udfs.export.bitext import formats
from parascout.udfs.export.bitext.export import BAD_REASONS, NO_PAIRS_KEPT, export_document
from parascout.udfs.export.bitext.filters import filter_reason
from parascout.udfs.lexicon.lexicon import Lexicon, write_lexicon
from tests.conftest import run_job
from tests.support.bitext import EN, FR, document, write_inputs

XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
HEADER_REQUIRED = {"creationtool", "creationtoolversion", "segtype", "o-tmf", "adminlang", "srclang", "datatype"}


def check_tmx_structure(text: str) -> list[ElementTree.Element]:
    """TMX 1.4b's DTD as explicit checks: tmx(header, body); header's required attributes;
    body(tu*); tu((note|prop)*, tuv+); prop has type; tuv has xml:lang and exactly one seg."""
    assert '<!DOCTYPE tmx SYSTEM "tmx14.dtd">' in text
    root = ElementTree.fromstring(text.encode("utf-8"))
    assert root.tag == "tmx" and root.get("version") == "1.4"
    assert [child.tag for child in root] == ["header", "body"]
    header, body = list(root)
    assert HEADER_REQUIRED <= set(header.attrib), HEADER_REQUIRED - set(header.attrib)
    assert header.get("segtype") in {"block", "paragraph", "sentence", "phrase"}
    units = list(body)
    for unit in units:
        assert unit.tag == "tu"
        tags = [child.tag for child in unit]
        first_tuv = tags.index("tuv")
        assert set(tags[:first_tuv]) <= {"note", "prop"} and set(tags[first_tuv:]) == {"tuv"}
        for prop in unit.findall("prop"):
            assert prop.get("type")
        for tuv in unit.findall("tuv"):
            assert tuv.get(XML_LANG) and [child.tag for child in tuv] == ["seg"]
    return units


def test_bitextor_tsvs_and_tmx_are_written_and_read_back():
    src, trg = "Tab\there & <b>bold</b>\nnext line", "Tabulation & <i>ici</i> \x01"
    line = formats.document_line("http://a/en", "http://a/fr", src, trg)
    assert list(formats.read_document_lines([line])) == [("http://a/en", "http://a/fr", src, trg)]
    line = formats.sentence_line("http://a/en", "http://a/fr", src, trg, 0.87654)
    assert line.count("\t") == 4
    assert list(formats.read_sentence_lines([line])) == [
        ("http://a/en", "http://a/fr", "Tab here & <b>bold</b> next line", "Tabulation & <i>ici</i> \x01", 0.8765)]
    text = (formats.tmx_header("en", "0.2.0") + formats.tmx_unit(1, "en", "fr", src, trg, 3, 0.5, "http://a/en?x=1&y=2",
                                                                "http://a/fr") + formats.TMX_FOOTER)
    units = check_tmx_structure(text)
    assert len(units) == 1
    segs = [tuv.find("seg").text for tuv in units[0].findall("tuv")]
    assert segs == [src, "Tabulation & <i>ici</i> "]  # the control character XML cannot hold is dropped
    props = {prop.get("type"): prop.text for prop in units[0].findall("prop")}
    assert props == {"count": "3", "score": "0.5000", "src-url": "http://a/en?x=1&y=2", "trg-url": "http://a/fr"}


def test_the_readers_take_both_formats_and_refuse_a_foreign_header():
    rows = [formats.sentence_line("http://a/en", "http://a/fr", "One.", "Un.", 0.5)]
    header = formats.tsv_header(formats.SENTENCE_COLUMNS, "bitextor")
    assert header == "src_url\ttrg_url\tsrc_text\ttrg_text\taligner_score\n"
    assert formats.tsv_header(formats.SENTENCE_COLUMNS, "bitextor-8.1") == ""
    expected = [("http://a/en", "http://a/fr", "One.", "Un.", 0.5)]
    assert list(formats.read_sentence_lines([header, *rows])) == list(formats.read_sentence_lines(rows)) == expected
    documents = [formats.tsv_header(formats.DOCUMENT_COLUMNS, "bitextor"),
                 formats.document_line("http://a/en", "http://a/fr", "One.", "Un.")]
    assert documents[0] == "src_url\ttrg_url\tsrc_doc\ttrg_doc\n"
    assert list(formats.read_document_lines(documents)) == [("http://a/en", "http://a/fr", "One.", "Un.")]
    with pytest.raises(ValueError, match="header"):
        list(formats.read_sentence_lines(["src_url\ttrg_url\tsent1\tsent2\thunalign_score\n", *rows]))
    with pytest.raises(ValueError, match="header"):
        list(formats.read_document_lines([header]))  # a sentence file is no documents file
    with pytest.raises(ValueError, match="unknown TSV format"):
        formats.tsv_header(formats.SENTENCE_COLUMNS, "moses")


def test_filters_name_their_reason():
    assert filter_reason("Same text.", "same  TEXT.", "eng", "fra") == "identical_sides"
    assert filter_reason("I have 3 cats.", "J'ai 4 chats.", "eng", "fra") == "numbers_mismatch"
    assert filter_reason("Yes.", "Oui, mais c'est une très longue phrase qui continue.", "eng", "fra") == "length_ratio"
    english = "The weather is very nice today and we will go out for a long walk."
    assert filter_reason(english, english.replace("walk", "stroll"), "eng", "fra") == "wrong_language"
    assert filter_reason(english, "Il fait très beau aujourd’hui et nous allons faire une longue promenade.",
                         "eng", "fra") is None
    # the language of a sentence with a control character from the page (CLD2 refuses the raw text: no language, so
    # no wrong_language before) and of sentences quoting markup, judged by their words
    assert filter_reason(english, english.replace("walk", "stroll\x01"), "eng", "fra") == "wrong_language"
    assert filter_reason("Type <b>bold</b> text and &amp; signs into the editor window to see how they look.",
                         "Tapez <b>du texte en gras</b> et des signes &amp; dans l'éditeur pour voir leur rendu.",
                         "eng", "fra") is None


def test_a_document_pair_exports_its_sentence_pairs_without_boilerplate():
    out = export_document(document(EN, FR))
    assert out["status"] == "ok" and out["src_paragraphs"] == EN and out["trg_text"] == "\n".join(FR)
    assert [(s["src_text"], s["trg_text"], s["reason"]) for s in out["sentences"]] == [
        ("The house is red.", "La maison est rouge.", None),
        ("It stands by the river.", "Elle se trouve au bord de la rivière.", None),
        ("My father built it in 1950.", "Mon père l'a construite en 1950.", None)]
    assert out["sentence_pairs"] == 3 and out["src_words"] == 15


def test_a_heading_paragraph_is_never_glued_to_the_sentence_after_it():
    row = document(["The red house", "The red house stands by the river. My father built it in 1950."],
                   ["La maison rouge se trouve au bord de la rivière. Mon père l'a construite en 1950."])
    row["src_paragraphs"][0]["type"] = "heading"
    out = export_document(row)
    assert [(s["bead_type"], s["src_text"], s["reason"]) for s in out["sentences"]] == [
        ("1-0", "The red house", "unaligned"), ("1-1", "The red house stands by the river.", None),
        ("1-1", "My father built it in 1950.", None)]


@pytest.mark.parametrize("src, trg, status", [
    (None, FR, "missing_src_text"), (EN, None, "missing_trg_text"), ([" "], FR, "empty_src_text"),
    (EN, [], "empty_trg_text"), (["A sentence here. " * 100_000], FR, "too_many_src_sentences"),
    (["Same words here."], ["Same words here."], NO_PAIRS_KEPT)])
def test_bad_document_pairs_get_a_status_not_an_exception(src, trg, status):
    out = export_document(document(src, trg))
    assert out["status"] == status
    assert status in BAD_REASONS or status == NO_PAIRS_KEPT


def sites_words_fra(root) -> int:
    return int(pd.read_parquet(root / "bitext_sites", columns=["trg_words"])["trg_words"].iloc[0])


@pytest.mark.slow
def test_export_bitext_job_writes_every_format_and_balances(spark, tmp_path):
    root = str(tmp_path)
    write_inputs(spark, tmp_path)
    report = run_job(ExportBitextJob, spark, ["--root", root, "--langs", "en,fr"])
    assert report["balanced"] and report["inputs"]["verified_pairs (parallel)"] == 4
    assert report["kept"] == 1 and report["bad"] == {"missing_src_text": 1}
    assert report["filtered"] == {"other_language_pair": 1, NO_PAIRS_KEPT: 1}
    assert report["metrics"]["sentence_pairs"] == 3 and report["metrics"]["words_eng"] == 15
    # report examples: whole sentences (>= 6 words), one per document
    assert [example[0] for example in report["metrics"]["examples"]] == ["My father built it in 1950."]
    assert sorted(path.name for path in (tmp_path / "bitext").glob("*.gz")) == [
        "eng-fra.documents.gz", "eng-fra.documents.tsv.gz", "eng-fra.sent.gz", "eng-fra.sent.tsv.gz", "eng-fra.tmx.gz"]
    for earlier, bitextor in (("documents.tsv.gz", "documents.gz"), ("sent.tsv.gz", "sent.gz")):
        # under the names the real-sites archives' scorer reads: the same rows without the header line
        with gzip.open(tmp_path / "bitext" / f"eng-fra.{earlier}", "rt") as old, \
                gzip.open(tmp_path / "bitext" / f"eng-fra.{bitextor}", "rt") as new:
            assert old.read() == "".join(new.readlines()[1:])
    with gzip.open(tmp_path / "bitext" / "eng-fra.sent.gz", "rt") as handle:
        sent_lines = handle.readlines()
    assert sent_lines[0] == "src_url\ttrg_url\tsrc_text\ttrg_text\taligner_score\n"  # Bitextor 8.2+'s header
    lines = list(formats.read_sentence_lines(sent_lines))
    assert [line[2] for line in lines] == ["The house is red.", "It stands by the river.", "My father built it in 1950."]
    assert report["outputs"]["bitext/sent"] == 3 and report["outputs"]["bitext/documents"] == 1  # header not counted
    with gzip.open(tmp_path / "bitext" / "eng-fra.documents.gz", "rt") as handle:
        assert handle.readline() == "src_url\ttrg_url\tsrc_doc\ttrg_doc\n"
        assert [d[2] for d in formats.read_document_lines(handle)] == ["\n".join(EN)]
    with gzip.open(tmp_path / "bitext" / "eng-fra.tmx.gz", "rt") as handle:
        assert len(check_tmx_structure(handle.read())) == 3
    sentences = pd.read_parquet(tmp_path / "bitext_sentences")
    assert sentences["reason"].fillna("kept").value_counts().to_dict() == {"kept": 3, "identical_sides": 1}
    sites = pd.read_parquet(tmp_path / "bitext_sites", columns=["site", "documents", "sentence_pairs", "src_words"])
    assert sites.to_dict("records") == [{"site": "a.example", "documents": 1, "sentence_pairs": 3, "src_words": 15}]
    assert json.loads((tmp_path / "_reports" / "export-bitext.json").read_text())["status"] == "ok"

    # the shortlist carries each site's yield in words once export-bitext has run
    spark.createDataFrame(pd.DataFrame({
        "site": ["a.example", "b.example"], "src_lang": "fra", "trg_lang": "eng", "n_urls_src": 5, "n_urls_trg": 5,
        "n_groups": 1, "n_urls_capped": 0, "n_groups_chunked": 0, "grouped_by": "site"})).write.parquet(f"{root}/rank_hosts")
    spark.createDataFrame(pd.DataFrame({"site": ["a.example"], "src_url": ["u"], "trg_url": ["v"], "score": [0.9]})
                          ).write.parquet(f"{root}/alignment")
    run_job(ShortlistJob, spark, ["--root", root, "--langs", "fr,en"])
    ranked = pd.read_parquet(tmp_path / "shortlist").set_index("site")
    assert ranked.loc["a.example", ["bitext_documents", "bitext_sentence_pairs", "bitext_words_trg"]].tolist() == [1, 3, 15]
    assert ranked.loc["a.example", "bitext_words_src"] == sites_words_fra(tmp_path)

    # several pairs in one run: a lexicon folder with eng-fra only, so deu-fra is a counted skip; Bitextor 8.1's TSVs
    write_lexicon(Lexicon("eng", "fra", {"house": {"maison": 1.0}, "red": {"rouge": 1.0}}),
                  tmp_path / "lexicons" / "eng-fra")
    report = run_job(ExportBitextJob, spark, ["--root", root, "--langs", "en-fr,de-fr", "--lexicon",
                                              str(tmp_path / "lexicons"), "--force", "--format", "bitextor-8.1"])
    assert report["balanced"] and report["inputs"]["verified_pairs (parallel)"] == 2 * 4
    assert report["metrics"]["pairs_skipped"] == {"deu-fra": "no_lexicon"}
    assert report["filtered"]["pair_no_lexicon"] == 1 and report["by_pair"]["eng-fra"]["kept"] == 1
    eng_fra = report["metrics"]["by_pair"]["eng-fra"]  # the lexicon moves a sentence boundary: 2 or 3 pairs
    assert eng_fra["documents"] == 1 and eng_fra["sentence_pairs"] >= 2
    assert eng_fra["words"] == eng_fra["words_eng"] + eng_fra["words_fra"]
    assert report["metrics"]["summary"] == {
        "pairs": ["eng-fra"], "pairs_skipped": ["deu-fra"], "documents": 1, "sentence_pairs": eng_fra["sentence_pairs"],
        "unique_sentence_pairs": eng_fra["unique_sentence_pairs"], "words": eng_fra["words"]}
    assert sorted(p.name for p in (tmp_path / "bitext_documents").glob("version=*/lang_pair=*")) == [
        "lang_pair=eng-fra"]
    with gzip.open(tmp_path / "bitext" / "eng-fra.sent.gz", "rt") as handle:
        old_format = handle.readlines()
    assert old_format[0].startswith("http://a.example/en\t") and len(old_format) == eng_fra["sentence_pairs"]
    assert [line[:2] for line in formats.read_sentence_lines(old_format)] == [
        ("http://a.example/en", "http://a.example/fr")] * eng_fra["sentence_pairs"]
    with gzip.open(tmp_path / "bitext" / "eng-fra.documents.gz", "rt") as handle:
        assert [d[0] for d in formats.read_document_lines(handle)] == ["http://a.example/en"]
    report = run_job(ShortlistJob, spark, ["--root", root, "--langs", "fr-en,de-fr"])
    assert report["balanced"] and report["metrics"]["pairs_skipped"] == {"deu-fra": "no_sites"}
    assert report["metrics"]["by_pair"]["fra-eng"]["sites_to_crawl"] == 1
    assert report["metrics"]["summary"]["pairs"] == ["fra-eng"]
    assert report["metrics"]["summary"]["bitext_sentence_pairs"] == eng_fra["sentence_pairs"]
    assert ranked.loc["b.example", ["bitext_documents", "bitext_words_src"]].tolist() == [0, 0]


def bitext_contents(folder) -> dict[str, bytes]:
    return {path.name: gzip.decompress(path.read_bytes()) for path in sorted(folder.glob("*.gz"))}


@pytest.mark.slow
@pytest.mark.parametrize("kill", ["while_writing", "marker_left_beside_a_cut_file"])
def test_a_rerun_after_a_killed_export_rewrites_the_bitext_files_whole(spark, tmp_path, kill):
    write_inputs(spark, tmp_path)
    argv = ["--root", str(tmp_path), "--langs", "en,fr"]
    first = run_job(ExportBitextJob, spark, argv)
    folder = tmp_path / "bitext"
    whole = bitext_contents(folder)
    assert set(whole) == {"eng-fra.documents.gz", "eng-fra.sent.gz", "eng-fra.tmx.gz", "eng-fra.documents.tsv.gz",
                          "eng-fra.sent.tsv.gz"}
    assert json.loads((folder / "_manifest.json").read_text())["run_id"] == first["run_id"]
    tmx = folder / "eng-fra.tmx.gz"
    tmx.write_bytes(tmx.read_bytes()[: tmx.stat().st_size // 2])  # a file cut as a kill during a copy leaves it
    if kill == "while_writing":
        (folder / "_manifest.json").unlink()
        (folder / ".tmp-0badf00d-eng-fra.sent.gz").write_bytes(b"\x1f\x8b half a file")
    again = run_job(ExportBitextJob, spark, argv)
    assert "skipped_rerun" not in again and again["run_id"] != first["run_id"]
    assert bitext_contents(folder) == whole  # byte for byte, the TMX's creation date included
    assert not list(folder.glob(".tmp-*"))
    assert json.loads((folder / "_manifest.json").read_text())["run_id"] == again["run_id"]
    assert run_job(ExportBitextJob, spark, argv).get("skipped_rerun") is True  # whole now: nothing to redo


def test_each_document_pair_is_aligned_with_its_own_pairs_lexicon(monkeypatch):
    from parascout.udfs.export.bitext import export

    loaded = []
    monkeypatch.setattr(export, "cached_lexicon", lambda path, src, trg: loaded.append((path, src, trg)))
    rows = pd.DataFrame([document(EN, FR), {**document(EN, FR), "src_lang": "deu", "src_url": "http://a.example/de"},
                         {**document(EN, FR), "src_lang": "spa", "src_url": "http://a.example/es"}])
    lexicons = {frozenset(("eng", "fra")): "lex/eng-fra", frozenset(("deu", "fra")): "lex/deu-fra"}
    out = pd.concat(export.export_batches(iter([rows]), lexicon_paths=lexicons))
    assert list(out["src_lang"]) == ["eng", "deu", "spa"]
    assert loaded == [("lex/eng-fra", "eng", "fra"), ("lex/deu-fra", "deu", "fra")]  # spa-fra: lengths only


def current_rows(table) -> pd.DataFrame:
    """The rows of a table's current version, lang_pair as text."""
    rows = pd.read_parquet(table_location(str(table)))
    return rows.assign(lang_pair=rows["lang_pair"].astype(str))


def pair_files(folder, label: str) -> dict[str, bytes]:
    return {name: data for name, data in bitext_contents(folder).items() if name.startswith(f"{label}.")}


DE = ["Das Haus ist rot. Es steht am Fluss.", "Mein Vater hat es 1950 gebaut."]


def add_german_text(spark, tmp_path) -> None:
    """The German page of write_inputs' deu-fra pair (its French side is the eng-fra pair's French page)."""
    paragraphs = [{"text": p, "type": "text", "lang": None, "boilerplate": False, "hash": str(i)}
                  for i, p in enumerate(DE)]
    spark.createDataFrame([("http://a.example/de", paragraphs, None, "\n".join(DE))],
                          "url string, paragraphs array<struct<text:string, type:string, lang:string, "
                          "boilerplate:boolean, hash:string>>, duplicate_of string, main_text string"
                          ).write.mode("append").parquet(str(tmp_path / "texts"))


@pytest.mark.slow
def test_pairs_exported_in_one_run_each_equal_their_one_pair_run(spark, tmp_path):
    write_inputs(spark, tmp_path)
    add_german_text(spark, tmp_path)
    root = str(tmp_path)
    single = {}
    for langs in ("en,fr", "de,fr"):
        report = run_job(ExportBitextJob, spark, ["--root", root, "--langs", langs, "--force"])
        label = next(iter(report["by_pair"]))
        single[label] = (report["by_pair"][label], report["metrics"]["by_pair"][label],
                         current_rows(tmp_path / "bitext_sentences"), pair_files(tmp_path / "bitext", label))
    report = run_job(ExportBitextJob, spark, ["--root", root, "--langs", "en-fr,de-fr", "--force"])
    assert report["balanced"] and report["metrics"]["summary"]["pairs"] == ["eng-fra", "deu-fra"]
    sentences = current_rows(tmp_path / "bitext_sentences")
    for label, (counts, metrics, one_pair_sentences, files) in single.items():
        assert report["by_pair"][label] == counts and report["metrics"]["by_pair"][label] == metrics, label
        rows = sentences[sentences["lang_pair"] == label]
        assert set(rows["src_lang"] + "-" + rows["trg_lang"]) == {label}  # no other pair's rows in its partition
        key = ["src_url", "trg_url", "bead"]
        assert rows.sort_values(key).reset_index(drop=True).equals(
            one_pair_sentences.sort_values(key).reset_index(drop=True)), label
        assert pair_files(tmp_path / "bitext", label) == files, label
    assert report["metrics"]["by_pair"]["deu-fra"]["sentence_pairs"] > 0


@pytest.mark.slow
def test_in_domain_only_counts_each_pairs_pairs_apart(spark, tmp_path):
    write_inputs(spark, tmp_path)
    add_german_text(spark, tmp_path)
    from pyspark.sql import functions as F

    texts = spark.read.parquet(str(tmp_path / "texts"))  # only the English page of a.example is in the domain
    texts.withColumn("in_domain", F.col("url") == "http://a.example/en").write.parquet(str(tmp_path / "scored"))
    shutil.rmtree(tmp_path / "texts")
    (tmp_path / "scored").rename(tmp_path / "texts")
    (tmp_path / "texts" / "_SUCCESS").touch()
    report = run_job(ExportBitextJob, spark, ["--root", str(tmp_path), "--langs", "en-fr,de-fr", "--in-domain-only"])
    assert report["balanced"]
    assert report["by_pair"]["eng-fra"]["filtered"] == {"other_language_pair": 1, "off_domain": 2}
    assert report["by_pair"]["eng-fra"]["kept"] == 1
    assert report["by_pair"]["deu-fra"]["filtered"] == {"other_language_pair": 3, "off_domain": 1}
    assert report["metrics"]["by_pair"]["deu-fra"]["documents"] == 0
    assert report["metrics"]["by_pair"]["deu-fra"]["sentence_beads"] == {}
    with gzip.open(tmp_path / "bitext" / "deu-fra.sent.gz", "rt") as handle:
        assert handle.read() == formats.tsv_header(formats.SENTENCE_COLUMNS, "bitextor")  # the header alone
