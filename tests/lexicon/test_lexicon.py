"""Lexicon: tokenisation, the four readers on hand-made fixtures (broken lines included), IBM model 1,
the lexicon directory and the train-lexicon job (files, and bootstrapped from an archive root)."""
from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest
import yaml

from parascout.jobs.errors import ConfigError
from parascout.jobs.train_lexicon import TrainLexiconJob
from parascout.udfs.common.language_id import tokenize
from parascout.udfs.lexicon.config import LexiconConfig
from parascout.udfs.lexicon.lexicon import (
    Lexicon,
    cognate,
    lexicon_dirs,
    lexicon_for,
    load_lexicon,
    write_lexicon,
)
from parascout.udfs.lexicon.readers import (
    dictd_number,
    page_pair_texts,
    paragraph_pairs,
    read_aligned_files,
    read_bitextor_dic,
    read_dictd,
    read_tei,
    read_tsv_pairs,
)
from parascout.udfs.lexicon.training import page_folds, train_ibm1, train_lexicon, with_held_out
from tests.conftest import run_job

CORPUS = [("the house", "la maison"), ("the blue house", "la maison bleue"), ("the cat", "le chat"),
          ("a blue cat", "un chat bleu"), ("the house is blue", "la maison est bleue"), ("a house", "une maison")]


def test_tokenize_latin_han_and_arabic():
    assert tokenize("L'été dernier, 2019!", "fra") == ["l", "été", "dernier", "2019"]
    assert tokenize("起初，神创造天地。ABC 12", "zho") == ["起", "初", "神", "创", "造", "天", "地", "abc", "12"]
    # diacritics and tatweel gone, alef forms unified, the article (with a clitic) stripped
    assert tokenize("والكِتاب ـأحمد", "ara") == ["كتاب", "احمد"]
    assert tokenize(None) == [] and tokenize("") == []


def test_cognates_need_long_similar_words():
    assert cognate("information", "informations") > 0.9
    assert cognate("table", "tafel") == 0.0   # similarity 0.6 < 0.8
    assert cognate("nation", "nation") == 1.0 and cognate("chat", "chat") == 0.0  # short words: identity only


def test_an_unknown_word_backs_off_to_the_known_words_sharing_its_longest_stem():
    lexicon = Lexicon("eng", "deu", {"king": {"könig": 0.8}, "house": {"haus": 0.6, "hauses": 0.3},
                                     "kingdom": {"reich": 0.9}, "2019": {"2019": 1.0}})
    assert lexicon.stem_matches("houses") == ["house"] and lexicon.stem_matches("kings") == ["king", "kingdom"]
    assert lexicon.stem_matches("königs", "trg") == ["könig"] and lexicon.stem_matches("hausen", "trg") == ["hauses"]
    assert lexicon.stem_matches("kingdoms") == ["kingdom"]  # the longest shared stem wins over "king"
    assert lexicon.stem_matches("housekeeping") == []  # more than stem_max_suffix letters beyond the stem
    assert lexicon.stem_matches("house") == [] and lexicon.stem_matches("haus", "trg") == []  # known words
    assert lexicon.stem_matches("hou") == [] and lexicon.stem_matches("20199") == []  # short, digits
    assert lexicon.reversed().stem_matches("königs") == ["könig"]  # each side has its own index
    arabic = Lexicon("ara", "eng", {"قال": {"said": 0.8}, "كتاب": {"book": 0.9}})
    assert arabic.stem_matches("كتابه") == ["كتاب"] and arabic.stem_matches("وقال") == []  # suffixes only


def test_ibm1_learns_word_translations():
    pairs = [(tokenize(a), tokenize(b)) for a, b in CORPUS]
    forward = train_ibm1(pairs, iterations=10)
    assert max((p, t) for (s, t), p in forward.items() if s == "house")[1] == "maison"
    assert max((p, t) for (s, t), p in forward.items() if s == "cat")[1] == "chat"
    lexicon = train_lexicon("eng", "fra", CORPUS, iterations=10)
    assert lexicon.prob("house", "maison") > 0.5 and lexicon.prob("house", "chat") < 0.1
    assert lexicon.metadata["sizes"]["corpus_pairs"] == 6
    assert lexicon_for([lexicon], "fra", "eng").prob("maison", "house") == lexicon.prob("house", "maison")
    assert lexicon_for([lexicon], "eng", "deu") is None


def write_dictd(tmp_path, entries: dict[str, str], compress: bool) -> tuple[str, str]:
    body, index = b"", []
    for headword, text in [("00databaseinfo", "a test dictionary\n"), *entries.items()]:
        data = text.encode()
        index.append(f"{headword}\t{dictd_number(len(body))}\t{dictd_number(len(data))}")
        body += data
    index.append("broken line without offsets")
    (tmp_path / "eng-fra.index").write_text("\n".join(index) + "\n")
    dict_path = tmp_path / ("eng-fra.dict.dz" if compress else "eng-fra.dict")
    dict_path.write_bytes(gzip.compress(body) if compress else body)
    return str(tmp_path / "eng-fra.index"), str(dict_path)


@pytest.mark.parametrize("compress", [False, True])
def test_read_dictd(tmp_path, compress):
    index, body = write_dictd(tmp_path, {"cat": "cat /kæt/\nchat <masc, n, sg>, matou\n",
                                         "house": "house /haʊs/\n1. maison <fem>; demeure\n",
                                         "empty": "empty\n"}, compress)
    counts = {}
    pairs = list(read_dictd(index, body, counts))
    assert pairs == [("cat", "chat"), ("cat", "matou"), ("house", "maison"), ("house", "demeure")]
    assert counts == {"input": 5, "reason:metadata_entry": 1, "kept": 2, "reason:no_translation": 1,
                      "reason:malformed_line": 1}


def test_read_tei_both_forms(tmp_path):
    (tmp_path / "eng-fra.tei").write_text(
        '<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>'
        '<entry><form><orth>cat</orth></form><sense><cit type="trans"><quote>chat</quote></cit>'
        '<cit type="trans"><quote>matou</quote></cit></sense></entry>'
        '<entry><form><orth>house</orth></form><trans><tr>maison</tr></trans></entry>'
        '<entry><form><orth>lonely</orth></form></entry></body></text></TEI>')
    counts = {}
    assert list(read_tei(tmp_path / "eng-fra.tei", counts)) == [("cat", "chat"), ("cat", "matou"), ("house", "maison")]
    assert counts == {"input": 3, "kept": 2, "reason:no_translation": 1}


def test_read_bitextor_dic_swaps_to_the_wanted_direction(tmp_path):
    (tmp_path / "fr-en.dic").write_text("fr\ten\nmaison\thouse\nbroken\nchat\tcat\n")
    counts = {}
    assert list(read_bitextor_dic(tmp_path / "fr-en.dic", "eng", "fra", counts)) == [("house", "maison"),
                                                                                      ("cat", "chat")]
    assert counts == {"input": 3, "kept": 2, "reason:malformed_line": 1}


def test_read_corpora(tmp_path):
    with gzip.open(tmp_path / "eng.tsv.gz", "wt") as handle:
        handle.write("v1\tthe house\nv2\tthe cat\nv3\ta dog\n")
    (tmp_path / "fra.tsv").write_text("v1\tla maison\nv2\tle chat\n")
    counts = {}
    assert list(read_aligned_files(tmp_path / "eng.tsv.gz", tmp_path / "fra.tsv", counts)) == [
        ("the house", "la maison"), ("the cat", "le chat")]
    assert counts == {"input": 3, "kept": 2, "reason:unaligned_id": 1}
    (tmp_path / "pairs.tsv").write_text("the house\tla maison\nno tab here\n")
    counts = {}
    assert list(read_tsv_pairs(tmp_path / "pairs.tsv", counts)) == [("the house", "la maison")]
    assert counts == {"input": 2, "kept": 1, "reason:malformed_line": 1}


def test_lexicon_directory_round_trip(tmp_path):
    lexicon = train_lexicon("eng", "fra", CORPUS, dictionary=[("dog", "chien")], iterations=10, sources=["toy"])
    write_lexicon(lexicon, tmp_path / "lex")
    loaded = load_lexicon(tmp_path / "lex")
    assert (loaded.src_lang, loaded.trg_lang) == ("eng", "fra")
    assert loaded.prob("dog", "chien") == 1.0
    assert abs(loaded.prob("house", "maison") - lexicon.prob("house", "maison")) < 1e-5
    metadata = json.loads((tmp_path / "lex" / "parascout_lexicon.json").read_text())
    assert metadata["sources"] == ["toy"] and metadata["format_version"] == 1 and metadata["version"]
    assert metadata["sizes"]["dictionary_entries"] == 1
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match="not a lexicon directory"):
        write_lexicon(lexicon, tmp_path / "other")
    with pytest.raises(FileNotFoundError):
        load_lexicon(tmp_path / "other")


def test_page_folds_keep_a_page_and_its_partners_in_one_fold():
    folds = page_folds([("en/a", "fr/b"), ("en/c", "fr/b"), ("en/d", "fr/e"), ("en/f", "fr/g")], 2)
    # components dealt out in the order of their first url: {a, b, c} 0, {d, e} 1, {f, g} 0
    assert folds == {"en/a": 0, "fr/b": 0, "en/c": 0, "en/d": 1, "fr/e": 1, "en/f": 0, "fr/g": 0}


def test_held_out_lexicons_never_learned_their_folds_pages(tmp_path):
    rows = [(src, trg, f"en/{k}", f"fr/{k}") for k, (src, trg) in enumerate(CORPUS)]
    lexicon = with_held_out(train_lexicon("eng", "fra", [row[:2] for row in rows], iterations=10), rows, folds=3,
                            iterations=10)
    assert len(lexicon.held_out) == 3 and lexicon.metadata["held_out_folds"] == 3 and len(lexicon.fold_of) == 12
    # "is" / "est" only on the page pair en/4 - fr/4 (fold 4 % 3): the lexicon knows it, that fold's held-out one not
    assert lexicon.fold_of["en/4"] == lexicon.fold_of["fr/4"] == 1
    assert lexicon.translations("is") and not lexicon.held_out_for("en/4", "fr/4").translations("is")
    assert lexicon.held_out_for("en/4", "fr/9") is lexicon.held_out[1] and lexicon.held_out_for("en/9", "fr/9") is None
    assert lexicon.held_out[0].translations("is")  # another fold learned from en/4 - fr/4
    # looked up the other way round: the same folds, reversed held-out lexicons (built once)
    backward = lexicon_for([lexicon], "fra", "eng")
    assert backward is lexicon.reversed() and backward.reversed() is lexicon
    assert backward.translations("est") and not backward.held_out_for("fr/4", "en/4").translations("est")
    write_lexicon(lexicon, tmp_path / "lex")
    loaded = load_lexicon(tmp_path / "lex")
    assert loaded.fold_of == lexicon.fold_of and [held.table.keys() for held in loaded.held_out] == [
        held.table.keys() for held in lexicon.held_out]
    assert abs(loaded.held_out[0].prob("is", "est") - lexicon.held_out[0].prob("is", "est")) < 1e-5
    # one component: nothing to hold out
    single = [(src, trg, "en/x", "fr/x") for src, trg in CORPUS]
    assert not with_held_out(train_lexicon("eng", "fra", CORPUS), single).held_out


def test_paragraph_pairs_follow_the_type_sequence():
    src = [{"text": "Menu", "type": "text", "boilerplate": True}, {"text": "Title here", "type": "heading"},
           {"text": "A first paragraph of text.", "type": "text"}, {"text": "An extra note", "type": "list_item"},
           {"text": "Second one.", "type": "text"}]
    trg = [{"text": "Titre ici", "type": "heading"}, {"text": "Un premier paragraphe de texte.", "type": "text"},
           {"text": "Le second, bien plus long que l'original anglais.", "type": "text"}]
    assert paragraph_pairs(src, trg, min_length_ratio=0.5) == [
        ("Title here", "Titre ici"), ("A first paragraph of text.", "Un premier paragraphe de texte.")]
    # the default ratio (0.3) also keeps the last pair (shares of the page's text 0.23 and 0.56)
    assert paragraph_pairs(src, trg)[-1] == ("Second one.", "Le second, bien plus long que l'original anglais.")
    # a confident page pair also teaches its whole main texts, which pair words the type sequence missed
    assert page_pair_texts(src, trg)[-1] == (
        "Title here\nA first paragraph of text.\nAn extra note\nSecond one.",
        "Titre ici\nUn premier paragraphe de texte.\nLe second, bien plus long que l'original anglais.")


def test_the_lexicon_configs_knobs_reach_the_training():
    default = train_lexicon("eng", "fra", CORPUS, iterations=10)
    pruned = train_lexicon("eng", "fra", CORPUS, iterations=10, config=LexiconConfig(max_translations=1, min_prob=0.3))
    assert max(len(row) for row in default.table.values()) > 1 == max(len(row) for row in pruned.table.values())
    assert min(p for row in pruned.table.values() for p in row.values()) >= 0.3
    cut = train_lexicon("eng", "fra", CORPUS, iterations=10, config=LexiconConfig(max_sentence_words=1))
    assert set(cut.table) < set(default.table)  # only each text's first word is learned from
    long, short = [{"text": "A long paragraph of many words here."}], [{"text": "Short."}]
    assert paragraph_pairs(long * 2 + short, long * 2 + long) != paragraph_pairs(
        long * 2 + short, long * 2 + long, LexiconConfig(paragraph_length_ratio=0.01).paragraph_length_ratio)


def test_train_lexicon_job_from_files(tmp_path):
    (tmp_path / "pairs.tsv").write_text("\n".join(f"{a}\t{b}" for a, b in CORPUS) + "\nbroken\n")
    (tmp_path / "en-fr.dic").write_text("en\tfr\ndog\tchien\n")
    out = tmp_path / "lex"
    report = TrainLexiconJob().run(["--langs", "en,fr", "--out", str(out), "--corpus", str(tmp_path / "pairs.tsv"),
                                    "--dictionary", str(tmp_path / "en-fr.dic"), "--iterations", "10"])
    assert report["status"] == "ok" and report["balanced"]
    assert report["inputs"]["source_records"] == 8 and report["kept"] == 7
    assert report["bad"] == {"malformed_line": 1}
    lexicon = load_lexicon(out)
    assert lexicon.prob("dog", "chien") == 1.0 and lexicon.prob("house", "maison") > 0.5
    assert (out / "_reports" / "train-lexicon.json").exists()
    with pytest.raises(ConfigError, match="at least one source"):
        TrainLexiconJob().run(["--langs", "en,fr", "--out", str(out)])


def test_train_lexicon_on_the_bible(shared_data, tmp_path):
    bible = shared_data / "parallel-text" / "bible"
    if not (bible / "eus.tsv.gz").exists():
        pytest.skip("the Bible files are not in ../shared/data/parallel-text/bible")
    lexicon = train_lexicon("eng", "eus", read_aligned_files(bible / "eng.tsv.gz", bible / "eus.tsv.gz"),
                            iterations=4)
    # the 1571 Leiçarraga New Testament spells Jesus "Iesus" (with case endings: iesusec, iesusen)
    assert max(lexicon.translations("jesus"), key=lexicon.translations("jesus").get) == "iesus"
    assert lexicon.metadata["sizes"]["corpus_pairs"] > 7000


@pytest.mark.slow
def test_train_lexicon_bootstrapped_from_an_archive(spark, tmp_path):
    root = tmp_path / "root"
    english = ["The house is blue.", "The cat sleeps in the house.", "A blue cat and a red house."]
    french = ["La maison est bleue.", "Le chat dort dans la maison.", "Un chat bleu et une maison rouge."]

    def page(url, lang, texts, duplicate_of=None):
        paragraphs = [{"text": t, "type": "text", "lang": lang, "boilerplate": False, "hash": str(i)}
                      for i, t in enumerate(texts)]
        return {"url": url, "host": "h", "lang": lang, "title": "", "paragraphs": paragraphs,
                "main_text": "\n".join(texts), "text_truncated": False, "duplicate_of": duplicate_of}

    texts = [page(f"http://h/en/{k}", "eng", english[k:] + english[:k]) for k in range(3)]
    texts += [page(f"http://h/fr/{k}", "fra", french[k:] + french[:k]) for k in range(3)]
    # a pair only a 'similar' source proposed, but its URLs share a handle (/en/ vs /fr/): confident too
    texts += [page("http://h/en/dog", "eng", ["The dog runs.", "The dog sleeps in the house."]),
              page("http://h/fr/dog", "fra", ["Le chien court.", "Le chien dort dans la maison."])]
    # a French home page: no page's translation
    texts.append(page("http://h/fr/", "fra", ["Bienvenue zèbre girafe.", "Les zèbres mangent."]))
    spark.createDataFrame(pd.DataFrame(texts)).write.parquet(str(root / "texts"))
    candidates = pd.DataFrame({"host": "h",
                               "src_url": [f"http://h/en/{k}" for k in range(3)] + ["http://h/en/0", "http://h/en/dog"],
                               "trg_url": [f"http://h/fr/{k}" for k in range(3)] + ["http://h/fr/1", "http://h/fr/dog"],
                               "src_lang": "eng", "trg_lang": "fra",
                               "source": ["link", "handle,similar", "link", "similar", "similar"]})
    spark.createDataFrame(candidates).write.parquet(str(root / "candidates"))
    report = run_job(TrainLexiconJob, spark, ["--langs", "fr,en", "--out", str(tmp_path / "lex"),
                                              "--from-archive", str(root), "--iterations", "10"])
    assert report["balanced"] and report["inputs"]["source_records"] == 4 and report["kept"] == 4
    # distinct pairs: 3 paragraph pairs repeated on the 3 rotated pages, 2 of the dog page, 4 whole-page pairs
    assert report["metrics"]["archive_paragraph_pairs"] == 9
    lexicon = load_lexicon(tmp_path / "lex")
    assert (lexicon.src_lang, lexicon.trg_lang) == ("fra", "eng")
    assert max(lexicon.translations("maison"), key=lexicon.translations("maison").get) == "house"
    assert max(lexicon.translations("chien"), key=lexicon.translations("chien").get) == "dog"
    # four page pairs, four folds: the held-out lexicon of the dog pages never saw a dog
    assert report["metrics"]["held_out"] == {"folds": 4, "pages": 8} and len(lexicon.held_out) == 4
    assert not lexicon.held_out_for("http://h/fr/dog", "http://h/en/dog").translations("chien")
    with pytest.raises(ConfigError, match="no verified_pairs"):
        run_job(TrainLexiconJob, spark, ["--langs", "fr,en", "--out", str(tmp_path / "lex2"), "--from-archive",
                                         str(root), "--with-verified-pairs"])
    # a second round: verify-pairs found en/0 - fr/1 parallel (the 'similar' pair the first round left out), and
    # three pages paired with the home page (as pages of three sites can be, each site's pairs 1-1 on their own)
    verified = pd.concat([candidates.assign(parallel=[True, False, False, True, True]), pd.DataFrame(
        {"host": ["a", "b", "c"], "src_url": ["http://h/en/1", "http://h/en/2", "http://h/en/dog"],
         "trg_url": "http://h/fr/", "src_lang": "eng", "trg_lang": "fra", "source": "link", "parallel": True})])
    spark.createDataFrame(verified).write.parquet(str(root / "verified_pairs"))
    report = run_job(TrainLexiconJob, spark, ["--langs", "fr,en", "--out", str(tmp_path / "lex2"),
                                              "--from-archive", str(root), "--with-verified-pairs"])
    # the second round learns from the 3 accepted pairs instead of the 4 confident ones; the home page's 3 (more
    # than MAX_PAGE_PAIRS) are left out, counted, and teach nothing
    assert report["metrics"]["archive_sources"] == ["verified_pairs"] and report["balanced"]
    assert report["inputs"]["source_records"] == 6 and report["metrics"]["archive_paragraph_pairs"] == 11
    assert report["filtered"] == {"hub_page": 3} and report["metrics"]["hub_filter"]["hub_pages"] == 1
    second = load_lexicon(tmp_path / "lex2")
    assert not second.translations("zèbre") and not second.translations("bienvenue")
    assert max(second.translations("maison"), key=second.translations("maison").get) == "house"


@pytest.mark.slow
def test_train_lexicon_several_pairs_from_an_archive_writes_one_per_pair(spark, tmp_path):
    root = tmp_path / "root"
    sides = {"eng": ["The house is blue.", "The cat sleeps.", "A red dog."],
             "fra": ["La maison est bleue.", "Le chat dort.", "Un chien rouge."],
             "deu": ["Das Haus ist blau.", "Die Katze schläft.", "Ein roter Hund."]}
    texts = [{"url": f"http://h/{lang}/{k}", "host": "h", "lang": lang, "title": "", "main_text": text,
              "text_truncated": False, "duplicate_of": None,
              "paragraphs": [{"text": text, "type": "text", "lang": lang, "boilerplate": False, "hash": "0"}]}
             for lang, lines in sides.items() for k, text in enumerate(lines)]
    spark.createDataFrame(pd.DataFrame(texts)).write.parquet(str(root / "texts"))
    # switcher links eng-fra and deu-eng (stored the other way round); no Spanish page at all
    candidates = pd.DataFrame({"host": "h", "src_url": [f"http://h/eng/{k}" for k in range(3)]
                               + [f"http://h/deu/{k}" for k in range(3)],
                               "trg_url": [f"http://h/fra/{k}" for k in range(3)] + [f"http://h/eng/{k}" for k in range(3)],
                               "src_lang": ["eng"] * 3 + ["deu"] * 3, "trg_lang": ["fra"] * 3 + ["eng"] * 3,
                               "source": "link"})
    spark.createDataFrame(candidates).write.parquet(str(root / "candidates"))
    out = tmp_path / "lexicons"
    (out / "eng-spa").mkdir(parents=True)  # an earlier run's lexicon of the pair this run skips: removed
    (out / "eng-spa" / "parascout_lexicon.json").write_text("{}")
    report = run_job(TrainLexiconJob, spark, ["--langs", "en:fr,de,es", "--out", str(out), "--from-archive", str(root),
                                              "--iterations", "10"])
    assert report["status"] == "ok" and report["balanced"]
    assert report["metrics"]["lang_pairs"] == ["eng-fra", "eng-deu", "eng-spa"]
    assert report["metrics"]["pairs_skipped"] == {"eng-spa": "no_text_pairs"}
    assert report["by_pair"]["eng-spa"]["status"] == "skipped: no_text_pairs"
    assert report["by_pair"]["eng-fra"]["kept"] == report["by_pair"]["eng-deu"]["kept"] == 3
    assert report["metrics"]["by_pair"]["eng-deu"]["lexicon_dir"] == str(out / "eng-deu")
    assert sorted(path.name for path in out.iterdir() if not path.name.startswith("_")) == ["eng-deu", "eng-fra"]
    assert lexicon_dirs(out) == [str(out / "eng-deu"), str(out / "eng-fra")]
    german = load_lexicon(out / "eng-deu")
    assert (german.src_lang, german.trg_lang) == ("eng", "deu")
    assert "haus" in german.translations("house") and "maison" not in german.translations("house")
    french = load_lexicon(out / "eng-fra")
    assert "maison" in french.translations("house") and "haus" not in french.translations("house")
    # one pair keeps writing --out itself; --corpus holds one pair, so several are refused at start
    single = run_job(TrainLexiconJob, spark, ["--langs", "en,fr", "--out", str(tmp_path / "one"),
                                              "--from-archive", str(root)])
    assert single["status"] == "ok" and load_lexicon(tmp_path / "one").trg_lang == "fra"
    corpus = tmp_path / "c.tsv"
    corpus.write_text("a house\tune maison\n")
    with pytest.raises(ConfigError, match="--corpus and --dictionary hold one language pair"):
        run_job(TrainLexiconJob, spark, ["--langs", "en:fr,de", "--out", str(tmp_path / "x"), "--corpus", str(corpus)])


def _lexicon_files(folder) -> dict[str, str]:
    """A lexicon directory's tables (lexicon and held-out ones, their page folds), decompressed."""
    return {str(path.relative_to(folder)): gzip.decompress(path.read_bytes()).decode()
            for path in sorted(folder.rglob("*.tsv.gz"))}


def _pair_report(report, label) -> tuple:
    """A pair's counts and metrics, less what differs from run to run or by folder (time, version, paths)."""
    metrics = {key: value for key, value in report["metrics"]["by_pair"][label].items()
               if key not in ("training_cpu_seconds", "lexicon_dir")}
    metrics["lexicon"] = {key: value for key, value in metrics["lexicon"].items() if key not in ("version", "sources")}
    return report["by_pair"][label], metrics


@pytest.mark.slow
def test_several_pairs_in_one_pass_learn_what_each_pair_learns_alone(spark, tmp_path):
    sides = {"eng": ["The house is blue.", "The cat sleeps.", "A red dog.", "The dog sleeps in the house."],
             "fra": ["La maison est bleue.", "Le chat dort.", "Un chien rouge.", "Le chien dort dans la maison."],
             "deu": ["Das Haus ist blau.", "Die Katze schläft.", "Ein roter Hund.", "Der Hund schläft im Haus."]}
    menu = {"eng": "Home and contact.", "fra": "Accueil et contact.", "deu": "Start und Kontakt."}

    def page(lang, k):
        # every page repeats its site's menu: one paragraph pair many page pairs hold
        texts = [sides[lang][k], sides[lang][(k + 1) % 4], menu[lang]]
        return {"url": f"http://h/{lang}/{k}", "host": "h", "lang": lang, "title": "", "main_text": "\n".join(texts),
                "text_truncated": False, "duplicate_of": None,
                "paragraphs": [{"text": text, "type": "text", "lang": lang, "boilerplate": False, "hash": str(i)}
                               for i, text in enumerate(texts)]}

    candidates = pd.DataFrame({"host": "h", "src_url": [f"http://h/eng/{k}" for k in range(4)]
                               + [f"http://h/deu/{k}" for k in range(4)],
                               "trg_url": [f"http://h/fra/{k}" for k in range(4)] + [f"http://h/eng/{k}" for k in range(4)],
                               "src_lang": ["eng"] * 4 + ["deu"] * 4, "trg_lang": ["fra"] * 4 + ["eng"] * 4,
                               "source": "link", "lang_pair": ["eng-fra"] * 4 + ["deu-eng"] * 4})
    roots = {name: tmp_path / name for name in ("together", "eng-fra", "eng-deu", "reordered")}
    for name, root in roots.items():
        spark.createDataFrame(pd.DataFrame([page(lang, k) for lang in sides for k in range(4)])).write.parquet(
            str(root / "texts"))
        # the reordered root holds the same pairs in another order and other files (as another layout reads them)
        rows = candidates.iloc[::-1] if name == "reordered" else candidates
        spark.createDataFrame(rows).repartition(3 if name == "reordered" else 1).write.partitionBy("lang_pair").parquet(
            str(root / "candidates"))

    def train(name, langs, *extra):
        return run_job(TrainLexiconJob, spark, ["--langs", langs, "--out", str(roots[name] / "lexicons"),
                                                "--from-archive", str(roots[name]), "--force", *extra])

    together = train("together", "en:fr,de")
    assert together["balanced"] and together["metrics"]["lang_pairs"] == ["eng-fra", "eng-deu"]
    alone = {"eng-fra": train("eng-fra", "en,fr"), "eng-deu": train("eng-deu", "en,de")}
    for label, report in alone.items():
        assert _lexicon_files(roots["together"] / "lexicons" / label) == _lexicon_files(roots[label] / "lexicons")
        assert _pair_report(together, label) == _pair_report(report, label)
    assert together["metrics"]["by_pair"]["eng-fra"]["held_out"]["folds"] > 1
    assert "haus" not in load_lexicon(roots["together"] / "lexicons" / "eng-fra").translations("house")
    train("reordered", "en,fr")
    assert _lexicon_files(roots["reordered"] / "lexicons") == _lexicon_files(roots["eng-fra"] / "lexicons")
    capped = train("reordered", "en:fr,de", "--max-pairs", "3")  # each pair's first 3 paragraph pairs
    assert [capped["metrics"]["by_pair"][label]["archive_paragraph_pairs"] for label in ("eng-fra", "eng-deu")] == [3, 3]
    assert capped["by_pair"]["eng-fra"]["kept"] == 1 and capped["balanced"]

    # a second round: verify-pairs accepted eng-fra pairs only, so eng-deu learns from its confident pairs again
    verified = candidates.drop(columns="lang_pair").assign(parallel=[True, True, True, False] + [False] * 4)
    for name in ("together", "eng-fra"):
        spark.createDataFrame(verified).write.parquet(str(roots[name] / "verified_pairs"))
    together = train("together", "en:fr,de", "--with-verified-pairs")
    alone = train("eng-fra", "en,fr", "--with-verified-pairs")
    assert together["metrics"]["by_pair"]["eng-fra"]["archive_sources"] == ["verified_pairs"]
    assert together["metrics"]["by_pair"]["eng-deu"]["archive_sources"] == ["candidates"]
    assert _lexicon_files(roots["together"] / "lexicons" / "eng-fra") == _lexicon_files(roots["eng-fra"] / "lexicons")
    assert _pair_report(together, "eng-fra") == _pair_report(alone, "eng-fra")
    assert _lexicon_files(roots["together"] / "lexicons" / "eng-deu") == _lexicon_files(roots["eng-deu"] / "lexicons")


@pytest.mark.slow
def test_hub_pages_in_both_rounds(spark, tmp_path):
    root = tmp_path / "root"
    english = ["The house is blue.", "The cat sleeps.", "A red house.", "The dog runs.", "A blue cat.", "The red dog."]
    rows = [(f"http://h/en/{k}", "eng", text) for k, text in enumerate(english)]
    rows += [("http://h/fr/", "fra", "Bienvenue zèbre girafe."), ("http://h/fr/0", "fra", "La maison est bleue.")]
    texts = [{"url": url, "host": "h", "lang": lang, "title": "", "main_text": text, "text_truncated": False,
              "paragraphs": [{"text": text, "type": "text", "lang": lang, "boilerplate": False, "hash": "0"}],
              "duplicate_of": None} for url, lang, text in rows]
    spark.createDataFrame(pd.DataFrame(texts)).write.parquet(str(root / "texts"))
    # every English page's switcher links to the French home page (6 pairs > MAX_CONFIDENT_PAGE_PAIRS); en/0 to fr/0 too
    candidates = pd.DataFrame({"host": "h", "src_url": [f"http://h/en/{k}" for k in range(6)] + ["http://h/en/0"],
                               "trg_url": ["http://h/fr/"] * 6 + ["http://h/fr/0"], "src_lang": "eng",
                               "trg_lang": "fra", "source": "link"})
    spark.createDataFrame(candidates).write.parquet(str(root / "candidates"))
    report = run_job(TrainLexiconJob, spark, ["--langs", "en,fr", "--out", str(tmp_path / "lex"),
                                              "--from-archive", str(root)])
    assert report["balanced"] and report["kept"] == 1 and report["filtered"] == {"hub_page": 6}
    assert report["metrics"]["hub_filter"] == {"max_page_pairs": 5, "hub_pages": 1, "skipped": False}
    lexicon = load_lexicon(tmp_path / "lex")
    assert lexicon.translations("house") and not lexicon.reversed().translations("zèbre")
    # a second round whose every accepted pair has a hub page: a lexicon from them beats none, the filter steps aside
    spark.createDataFrame(candidates[:6].assign(parallel=True)).write.parquet(str(root / "verified_pairs"))
    report = run_job(TrainLexiconJob, spark, ["--langs", "en,fr", "--out", str(tmp_path / "lex2"),
                                              "--from-archive", str(root), "--with-verified-pairs"])
    assert report["balanced"] and report["kept"] == 6 and not report["filtered"]
    assert report["metrics"]["hub_filter"]["skipped"] and load_lexicon(tmp_path / "lex2").reversed().translations("zèbre")


def test_second_round_adds_rejected_mutual_best_pairs_whose_paragraphs_agree(spark):
    nan = float("nan")
    rows = pd.DataFrame({
        "src_url": [f"http://h/en/{k}" for k in (1, 1, 2, 3, 4, 5, 5, 6, 7, 8)],
        "trg_url": [f"http://h/fr/{k}" for k in (1, 9, 2, 3, 4, 5, 6, 6, 7)] + ["http://other/fr/8"],
        "src_lang": "eng", "trg_lang": "fra",
        "lang_ok": [True, True, True, True, False, True, True, True, True, True],
        "tsim": 0.3,
        "own_tsim_idf": [0.30, 0.10, 0.25, 0.25, 0.40, 0.20, 0.20, 0.35, 0.3, 0.3],
        "paragraph_length_r": [0.95, 0.99, 0.5, nan, 0.99, 0.99, 0.99, 0.99, None, 0.99],
        "text_paragraph_ratio": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 1.0],
    })
    found = TrainLexiconJob.agreeing_mutual_best(spark.createDataFrame(rows)).toPandas()
    # en/1-fr/1: best of both pages, lengths correlated; en/1-fr/9 not en/1's best; en/2-fr/2 lengths uncorrelated;
    # en/3-fr/3 too few paragraphs to correlate but as many; en/7-fr/7 not as many; en/4-fr/4 fails the language
    # check; en/5's two pairs tie; en/5-fr/6 loses fr/6 to en/6-fr/6; en/8's partner is on another host
    assert sorted(zip(found["src_url"], found["trg_url"])) == [
        ("http://h/en/1", "http://h/fr/1"), ("http://h/en/3", "http://h/fr/3"), ("http://h/en/6", "http://h/fr/6")]
    assert TrainLexiconJob.agreeing_mutual_best(spark.createDataFrame(rows.drop(columns="paragraph_length_r"))).count() == 0


def test_second_round_cross_fits_the_rejected_pairs_of_one_host_it_learns_from(spark, tmp_path):

    root = tmp_path / "root"

    def page(url, lang, texts):
        paragraphs = [{"text": t, "type": "text", "lang": lang, "boilerplate": False, "hash": str(i)}
                      for i, t in enumerate(texts)]
        return {"url": url, "host": "h", "lang": lang, "title": "", "paragraphs": paragraphs,
                "main_text": "\n".join(texts), "text_truncated": False, "duplicate_of": None}

    english = ["The house is blue.", "The cat sleeps in the house.", "A blue cat and a red house."]
    french = ["La maison est bleue.", "Le chat dort dans la maison.", "Un chat bleu et une maison rouge."]
    texts = [page(f"http://h/en/{k}", "eng", english[k:] + english[:k]) for k in range(3)]
    texts += [page(f"http://h/fr/{k}", "fra", french[k:] + french[:k]) for k in range(3)]
    # the dog pages: verify-pairs rejected them (the first lexicon knew no dog), and their paragraph lengths disagree
    # (not proposed), yet the cross-fit judges every rejected pair of one host
    texts += [page("http://h/en/dog", "eng", ["The dog sleeps in the blue house.", "The red cat sleeps."]),
              page("http://h/fr/dog", "fra", ["Le chien dort dans la maison bleue.", "Le chat rouge dort."])]
    spark.createDataFrame(pd.DataFrame(texts)).write.parquet(str(root / "texts"))
    src = [f"http://h/en/{k}" for k in range(3)] + ["http://h/en/dog"]
    trg = [f"http://h/fr/{k}" for k in range(3)] + ["http://h/fr/dog"]
    verified = pd.DataFrame({"host": "h", "src_url": src, "trg_url": trg, "src_lang": "eng", "trg_lang": "fra",
                             "source": "similar", "parallel": [True, True, True, False], "lang_ok": True,
                             "tsim": 0.3, "own_tsim_idf": [0.6, 0.6, 0.6, 0.2], "paragraph_length_r": [0.99] * 3 + [0.5],
                             "text_paragraph_ratio": 1.0})
    spark.createDataFrame(verified).write.parquet(str(root / "verified_pairs"))
    spark.createDataFrame(verified[["host", "src_url", "trg_url", "src_lang", "trg_lang", "source"]]).write.parquet(
        str(root / "candidates"))
    args = ["--langs", "en,fr", "--from-archive", str(root), "--with-verified-pairs", "--iterations", "10"]
    report = run_job(TrainLexiconJob, spark, [*args, "--out", str(tmp_path / "lex")])
    # scored by a lexicon of the three accepted pairs alone, en/dog-fr/dog beats en/dog with every other French page
    # of the host and fr/dog with every other English one: learned from, so the lexicon now knows the dog
    assert report["metrics"]["cross_fitted_pairs"] == {"proposed": 0, "judged": 1, "kept": 1, "skipped": False}
    assert report["balanced"] and report["kept"] == 4
    assert max(load_lexicon(tmp_path / "lex").translations("dog"), key=load_lexicon(tmp_path / "lex")
               .translations("dog").get) == "chien"
    # too many judged pairs, pages on their hosts or page pairs to score for the driver: skipped, said, and learned
    # from the accepted pairs alone (the host has 4 pages a language: 8 rivals)
    for cap, limit in (("max_cross_fit_pages", 3), ("max_cross_fit_rivals", 7), ("max_cross_fit_pairs", 0)):
        conf = tmp_path / f"{cap}.yaml"
        conf.write_text(yaml.safe_dump({"train-lexicon": {"training": {cap: limit}}}), encoding="utf-8")
        report = run_job(TrainLexiconJob, spark, [*args, "--out", str(tmp_path / cap), "--conf", str(conf)])
        assert report["args"]["training"][cap] == limit
        assert report["metrics"]["cross_fitted_pairs"] == {"proposed": 0, "judged": 1, "kept": 0, "skipped": True}
        assert report["balanced"] and report["kept"] == 3
        assert "dog" not in set(load_lexicon(tmp_path / cap).translations("the"))
