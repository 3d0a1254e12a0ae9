"""The hand-off to Bitextor's tools: export-bitext's sentence file through the real bifixer (both TSV formats), and
export-crawl-plan's bitextor.yaml against the facts of Bitextor 8.3's config schema."""
from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from parascout.jobs.export_bitext import ExportBitextJob
from parascout.udfs.export.bitext import formats
from parascout.udfs.export.crawl_plan import bitextor_config

REPO = Path(__file__).resolve().parents[2]
BIFIXER = Path(sys.executable).with_name("bifixer")
needs_bifixer = pytest.mark.skipif(not BIFIXER.exists(), reason="bifixer: pip install -r requirements-dev.txt")

#: sentence pairs a web page can hold: tabs, newlines and carriage returns, HTML, entities, control and separator
#: characters, scripts and emoji, and sides longer than bifixer fixes (5,000 characters) or would resegment
HOSTILE = [
    ("http://a.example/en/1", "http://a.example/fr/1", "Tab\there & <b>bold</b>\nnext\r\nline", "Tab\t&\rici", 0.9),
    ("http://a.example/en/été?q=a\tb", "http://a.example/fr/€", "Ünïcödé — “quotes” 😀 e\u0301", "中文。العربية", 0.5),
    ("http://a.example/en/3", "http://a.example/fr/3", "ctl \x0b\x0c\x1c\x1e\x85\u2028\u2029 end", "\x00\x01 fin", 0.1),
    ("http://a.example/en/4", "http://a.example/fr/4", "&#10; entity &#9; &lt;p&gt; &amp;", "&#x0A; entité", 0.25),
    ("http://a.example/en/5", "http://a.example/fr/5", "long " * 3000, "longue " * 3000, 0.75),
    ("http://a.example/en/6", "http://a.example/fr/6", "word " * 200 + ". Then more.", "mot " * 200 + ". Puis.", 1.0),
]


def write_sentences(folder: Path, tsv_format: str) -> Path:
    """HOSTILE as export-bitext writes its sentence file."""
    path = folder / f"eng-fra{formats.SENTENCES_SUFFIX}"
    ExportBitextJob.write_gzip(str(path), (formats.sentence_line(*row) for row in HOSTILE),
                               header=formats.tsv_header(formats.SENTENCE_COLUMNS, tsv_format))
    return path


def run_bifixer(sentences: Path, *options: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """bifixer on the file as Bitextor 8.3 runs it (--ignore_segmentation, its default: resegmenting also needs NLTK
    data downloaded at run time; languages as ISO 639-1 codes); the process and its output lines."""
    plain = sentences.with_suffix(".tsv")
    plain.write_bytes(gzip.decompress(sentences.read_bytes()))
    output = sentences.with_suffix(".bifixed")
    output.unlink(missing_ok=True)
    done = subprocess.run([str(BIFIXER), "-q", "--ignore_segmentation", *options, str(plain), str(output), "en", "fr"],
                          check=False, capture_output=True, text=True, timeout=120)
    return done, output.read_bytes().decode("utf-8").split("\n")[:-1] if output.exists() else []


def written_rows(path: Path) -> list[tuple]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return list(formats.read_sentence_lines(handle))


@needs_bifixer
def test_bifixer_reads_the_sentence_file_by_its_header_and_keeps_every_pair(tmp_path):
    path = write_sentences(tmp_path, "bitextor")
    rows = written_rows(path)
    assert len(rows) == len(HOSTILE)
    done, lines = run_bifixer(path, "--header", "--scol", "src_text", "--tcol", "trg_text")
    assert done.returncode == 0, done.stderr
    header, *fixed = [line.split("\t") for line in lines]
    assert header == [*formats.SENTENCE_COLUMNS, "bifixer_hash", "bifixer_score"]
    assert [tuple(line[:2]) for line in fixed] == [row[:2] for row in rows]
    assert [float(line[4]) for line in fixed] == [row[4] for row in rows]
    assert all(len(line) == len(header) for line in fixed)


@needs_bifixer
def test_bitextor_81_files_have_no_header_and_bifixer_reads_them_by_position(tmp_path):
    path = write_sentences(tmp_path, "bitextor-8.1")
    rows = written_rows(path)
    (tmp_path / "with_header").mkdir()
    assert rows == written_rows(write_sentences(tmp_path / "with_header", "bitextor"))  # one reader, both formats
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        assert handle.readline().startswith("http://a.example/en/1\t")
    done, lines = run_bifixer(path)  # columns 3 and 4: bifixer's defaults
    assert done.returncode == 0, done.stderr
    assert [line.split("\t")[:2] for line in lines] == [list(row[:2]) for row in rows]
    done, _ = run_bifixer(path, "--header", "--scol", "src_text", "--tcol", "trg_text")
    assert done.returncode != 0 and "is not in the input header" in done.stderr


# ---- Bitextor 8.3's config schema, as facts (bitextor_83_problems says where they come from) ---------------------

BITEXTOR_83_TYPES = {
    "string": "dataDir permanentDir transientDir tempDir until hostsFile directoriesFile warcsFile preverticalsFile "
              "crawler crawlTimeLimit crawlerUserAgent heritrixPath heritrixUrl heritrixUser preprocessor "
              "PDFprocessing PDFextract_configfile PDFextract_sentence_join_path PDFextract_kenlm_path langID parser "
              "pruneType lang1 lang2 documentAligner embeddingsModel alignerCmd translationDirection dic "
              "sentenceAligner bicleanerFlavour bicleanerModel bicleanerExtraArgs biroamerImproveAlignmentCorpus",
    "boolean": "profiling verbose preverticals_cld2 paragraphIdentification cleanHTML ftfy additionalMetadata "
               "writeHTML multilang html5lib boilerplateCleaning generateDic deferred bifixer bifixerAggressiveDedup "
               "bifixerIgnoreSegmentation bicleaner bicleanerGenerateModel elrc tmx deduped biroamer "
               "biroamerOmitRandomSentences",
    "integer": "crawlWait shards batches boilerpipeMaxHeapSize pruneThreshold embeddingsBatchSize",
    "float": "documentAlignerThreshold sentenceAlignerThreshold bicleanerThreshold",
    "list": "granularity hosts directories warcs preverticals crawlFileTypes langs initCorpusTrainingPrefix "
            "bicleanerParallelCorpusTrainingPrefix bicleanerMonoCorpusPrefix bicleanerParallelCorpusDevPrefix "
            "biroamerMixFiles",
    "dict": "parallelWorkers parallelJobs sentenceSplitters customNBPs wordTokenizers morphologicalAnalysers",
}
KEY_TYPE = {key: kind for kind, keys in BITEXTOR_83_TYPES.items() for key in keys.split()}
PYTHON_TYPES = {"string": str, "boolean": bool, "integer": int, "float": (int, float), "list": list, "dict": dict}
ALLOWED = {
    "crawler": {"wget", "heritrix"}, "preprocessor": {"warc2text", "warc2preprocess"},
    "documentAligner": {"DIC", "externalMT", "NDA"}, "sentenceAligner": {"bleualign", "hunalign", "vecalign"},
    "granularity": {"sentences", "documents"}, "bicleanerFlavour": {"classic", "ai"}, "langID": {"cld2", "cld3"},
    "parser": {"bs4", "modest", "simple", "lxml"}, "pruneType": {"words", "chars"},
    "PDFprocessing": {"pdf2html", "pdfextract", "apacheTika", ""},
}
DEFAULTS = {"documentAligner": "externalMT", "sentenceAligner": "bleualign", "preprocessor": "warc2text",
            "granularity": ["sentences"], "bifixer": False, "bicleaner": False, "tmx": False}
#: (a setting, the value it must have; None: only that it is set) -> the keys that depend on it
DEPENDENCIES = {
    ("crawler", None): ("hosts", "hostsFile", "crawlTimeLimit"),
    ("crawler", "wget"): ("crawlerUserAgent", "crawlWait", "crawlFileTypes"),
    ("crawler", "heritrix"): ("heritrixPath", "heritrixUrl", "heritrixUser"),
    ("preprocessor", "warc2text"): ("writeHTML", "multilang"),
    ("preprocessor", "warc2preprocess"): ("langID", "parser", "html5lib"),
    ("documentAligner", "externalMT"): ("alignerCmd", "translationDirection"),
    ("bifixer", True): ("bifixerAggressiveDedup", "bifixerIgnoreSegmentation"),
    ("bicleaner", True): ("bicleanerModel", "bicleanerExtraArgs"),
    ("tmx", True): ("biroamer",),
}
#: the document aligner each sentence aligner needs (a dependency that also holds for the default, bleualign)
SENTENCE_ALIGNER_NEEDS = {"bleualign": "externalMT", "vecalign": "NDA"}
#: `until` steps before alignment: a monolingual run, which needs no lang1 / lang2
MONOLINGUAL_UNTIL = {"crawl", "preprocess", "shard", "split", "tokenise"}
FILE_KEYS = ("hostsFile", "warcsFile", "preverticalsFile")
DURATION = re.compile(r"\d*[A-Za-z]")


def required_keys(settings: dict) -> list[str]:
    """The keys Bitextor 8.3 requires with these settings (defaults filled in)."""
    required = ["dataDir", "permanentDir", "transientDir"]
    if settings.get("until") not in MONOLINGUAL_UNTIL:
        required += ["lang1", "lang2"]
    if settings["documentAligner"] == "externalMT":
        required.append("alignerCmd")
    if settings["documentAligner"] == "DIC" or (settings["documentAligner"], settings["sentenceAligner"]) == (
            "externalMT", "hunalign"):
        required.append("dic")
    if settings.get("crawler") == "heritrix":
        required.append("heritrixPath")
    if settings["bicleaner"]:
        required.append("bicleanerModel")
    return required


def value_problems(key: str, value, run_folder: Path) -> list[str]:
    """A set key's type, allowed values and checks (files exist where bitextor runs; durations like 24h)."""
    if key not in KEY_TYPE:
        return [f"{key}: unknown field"]
    kind = KEY_TYPE[key]
    if not isinstance(value, PYTHON_TYPES[kind]) or (isinstance(value, bool) and kind in ("integer", "float")):
        return [f"{key}: must be of {kind} type"]
    values = value if isinstance(value, list) else [value]
    problems = [f"{key}: unallowed value {item}" for item in values if key in ALLOWED and item not in ALLOWED[key]]
    if key in FILE_KEYS and not (run_folder / Path(value).expanduser()).is_file():
        problems.append(f"{key}: {value} does not exist")
    if key == "crawlTimeLimit" and not DURATION.fullmatch(value):
        problems.append(f"{key}: format is an integer followed by a single letter suffix")
    if key == "granularity" and value == ["documents"]:
        problems.append(f"{key}: The option 'documents' requires the option 'sentences'")
    return problems


def dependency_problems(config: dict, settings: dict) -> list[str]:
    """Keys there (set or defaulted) without the settings they depend on."""
    needs = dict(DEPENDENCIES)
    if settings["sentenceAligner"] in SENTENCE_ALIGNER_NEEDS:
        needs[("documentAligner", SENTENCE_ALIGNER_NEEDS[settings["sentenceAligner"]])] = ("sentenceAligner",)
    problems = []
    for (setting, wanted), keys in needs.items():
        if (setting not in config) if wanted is None else (settings.get(setting) != wanted):
            problems += [f"{key}: depends on {setting}" + ("" if wanted is None else f" {wanted}")
                         for key in keys if key in settings]
    return problems


def bitextor_83_problems(config: dict, run_folder: Path) -> list[str]:
    """What Bitextor 8.3's validator refuses in `config` run from `run_folder`, one `key: reason` each (none: it
    accepts it).

    The facts above are read from Bitextor's bitextor/utils/args.py (validate_args, a cerberus schema) and
    docs/CONFIG.md at its tag v8.3: cerberus refuses a key the schema does not list, a value of another type or
    outside `allowed`, a missing `required` key (some required only with certain settings: required_keys) and a key
    whose `dependencies` do not hold. validate_args fills in the defaults first, so a dependency sees them."""
    settings = {**DEFAULTS, **config}
    problems = [f"{key}: required field" for key in required_keys(settings) if key not in config]
    for key, value in config.items():
        problems += value_problems(key, value, run_folder)
    return problems + dependency_problems(config, settings)


def plan_folder(tmp_path: Path, langs: tuple[str, str]) -> tuple[Path, dict]:
    """A plan folder as export-crawl-plan leaves it: hosts.gz and bitextor.yaml side by side; the config parsed."""
    (tmp_path / "hosts.gz").write_bytes(gzip.compress(b"www.alpha.is\nwww.beta.is\n"))
    (tmp_path / "bitextor.yaml").write_text(bitextor_config("hosts.gz", langs), encoding="utf-8")
    return tmp_path, yaml.safe_load((tmp_path / "bitextor.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("langs", [("en", "is"), ("en", "no")])  # `no` is YAML 1.1's false unless quoted
def test_bitextor_config_is_accepted_by_bitextor_83s_schema(tmp_path, langs):
    folder, config = plan_folder(tmp_path, langs)
    assert bitextor_83_problems(config, folder) == []
    assert config["hostsFile"] == "hosts.gz" and (config["lang1"], config["lang2"]) == langs
    assert (config["crawler"], config["documentAligner"], config["sentenceAligner"]) == ("wget", "NDA", "vecalign")
    assert config["granularity"] == ["sentences", "documents"]
    assert "placeholder" in (folder / "bitextor.yaml").read_text()


@pytest.mark.parametrize("change, problem", [
    (lambda c: c.pop("dataDir"), "dataDir: required field"),
    (lambda c: c.update(crawler="linguacrawl"), "crawler: unallowed value linguacrawl"),
    (lambda c: c.pop("documentAligner"), "alignerCmd: required field"),  # the default aligner needs an MT command
    (lambda c: c.pop("sentenceAligner"), "sentenceAligner: depends on documentAligner externalMT"),
    (lambda c: c.update(crawlUserAgent="parascout"), "crawlUserAgent: unknown field"),  # CONFIG.md's misspelling
    (lambda c: c.update(hostsFile="elsewhere/hosts.gz"), "hostsFile: elsewhere/hosts.gz does not exist"),
    (lambda c: c.update(crawlTimeLimit="1 hour"), "crawlTimeLimit: format is an integer followed by a single letter"),
    (lambda c: c.update(granularity=["documents"]), "granularity: The option 'documents' requires the option"),
    (lambda c: c.pop("crawler"), "hostsFile: depends on crawler"),
])
def test_the_schema_check_refuses_what_bitextor_83_refuses(tmp_path, change, problem):
    folder, config = plan_folder(tmp_path, ("en", "fr"))
    change(config)
    assert any(found.startswith(problem) for found in bitextor_83_problems(config, folder))


def test_the_config_fragment_of_old_is_refused_as_bitextor_83_refused_it(tmp_path):
    folder, _ = plan_folder(tmp_path, ("en", "fr"))
    fragment = {"hostsFile": "hosts.gz", "lang1": "en", "lang2": "fr", "crawler": "wget", "crawlTimeLimit": "1h"}
    assert sorted(bitextor_83_problems(fragment, folder)) == [
        "alignerCmd: required field", "dataDir: required field", "permanentDir: required field",
        "transientDir: required field"]


def test_the_sample_in_docs_has_the_keys_bitextor_config_writes(tmp_path):
    text = (REPO / "docs" / "crawl-plan.md").read_text(encoding="utf-8")
    section = text.split("\n## Bitextor\n")[1].split("\n## ")[0]
    sample = yaml.safe_load(section.split("```yaml\n")[1].split("```")[0])
    _, config = plan_folder(tmp_path, ("en", "is"))
    assert list(sample) == list(config)
    assert "linguacrawl" not in section
