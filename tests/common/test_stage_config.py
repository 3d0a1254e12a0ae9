"""Stage knobs (VerificationConfig, ReplayConfig, AlignmentConfig, BlockingConfig): set from a job's --conf section,
refused when unknown, passed down to the decision, recorded in the report and listed in docs/configuration.md."""
from __future__ import annotations

import argparse
import dataclasses
import random

import pandas as pd
import pytest
import yaml

from parascout.jobs.errors import ConfigError
from parascout.jobs.export_bitext import ExportBitextJob
from parascout.jobs.rank_pairs import RankPairs
from parascout.jobs.replay_crawl import ReplayCrawlJob
from parascout.jobs.report import JobReport
from parascout.jobs.verify_pairs import VerifyPairsJob
from parascout.udfs.common import storage
from parascout.udfs.common.code_text import CodeConfig, is_code
from parascout.udfs.common.stage_config import config_from_mapping, nested_configs
from parascout.udfs.export.bitext.align import align_sentences
from parascout.udfs.export.bitext.config import AlignmentConfig
from parascout.udfs.export.bitext.export import export_document
from parascout.udfs.export.bitext.filters import filter_reason
from parascout.udfs.export.bitext.sentences import split_sentences
from parascout.udfs.fetch.html_text import paragraph_hash
from parascout.udfs.lexicon.config import LexiconConfig
from parascout.udfs.lexicon.lexicon import WordMatching
from parascout.udfs.rank import blocking
from parascout.udfs.rank.blocking import BlockingConfig
from parascout.udfs.replay import make_policy
from parascout.udfs.replay.batch import ReplayRun, replay_host
from parascout.udfs.replay.config import ReplayConfig
from parascout.udfs.replay.site_policy import SmartSite
from parascout.udfs.replay.synthetic import multilingual_site
from parascout.udfs.verify.pages import HostPages
from parascout.udfs.verify.structure import ThresholdRule
from parascout.udfs.verify.verification import verify_host
from parascout.udfs.verify.verification_config import VerificationConfig
from testkit.sites import image_pages, synthetic_sites
from testkit.warc import ENGLISH, GERMAN
from tests.conftest import REPO, run_job
from tests.support.bitext import EN, FR, SRC, TRG, TinyLexicon, document, tokenize
from tests.support.bitext import write_inputs as write_bitext_inputs
from tests.support.verify_sites import HOST, LEXICON, REAL_ENGLISH, REAL_GERMAN, build_site, doc_row, text_of


def conf_file(tmp_path, content: dict) -> str:
    path = tmp_path / "stage.yaml"
    path.write_text(yaml.safe_dump(content), encoding="utf-8")
    return str(path)


def partial_translation() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A German page with two English paragraphs left untranslated (a translation by the default share) and its
    English original (test_verify_pairs' half-translated page)."""
    src, trg = f"http://{HOST}/en/a", f"http://{HOST}/de/a"

    def paragraph(text: str, lang: str | None = None) -> dict:
        return {"text": text, "type": "text", "lang": lang, "boilerplate": False, "hash": paragraph_hash(text)}

    def english(index: int) -> str:
        return f"{REAL_ENGLISH[index]} {REAL_ENGLISH[(index + 1) % len(REAL_ENGLISH)]}"

    target = [paragraph(t) for t in REAL_GERMAN] + [paragraph(english(index)) for index in (4, 5)]
    pages = pd.DataFrame([
        {**doc_row(src, [text_of(ENGLISH, 300)] * 6), "text_paragraphs": [paragraph(t, "eng") for t in REAL_ENGLISH],
         "main_text": "\n".join(REAL_ENGLISH), "duplicate_of": None},
        {**doc_row(trg, [text_of(GERMAN, 300)] * 6), "text_paragraphs": target,
         "main_text": "\n".join(p["text"] for p in target), "duplicate_of": None}])
    pairs = pd.DataFrame([{"host": HOST, "src_url": src, "trg_url": trg, "src_lang": "eng", "trg_lang": "deu",
                           "source": "handle"}])
    return pairs, pages


def test_a_changed_language_share_reaches_the_language_check():
    pairs, pages = partial_translation()
    default = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON]).iloc[0]
    assert default.lang_ok and 0.5 < default.trg_lang_share < 0.8
    strict = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON],
                         config=VerificationConfig(min_lang_share=0.99)).iloc[0]
    assert not strict.lang_ok and strict.reason in ("untranslated", "lang_mismatch")
    assert strict.trg_lang_share == pytest.approx(default.trg_lang_share)


def test_an_unknown_or_mistyped_key_fails_with_one_line_naming_the_valid_ones(tmp_path):
    conf = conf_file(tmp_path, {"verify-pairs": {"verification": {"min_main_lang_shar": 0.6}}})
    with pytest.raises(ConfigError) as error:
        VerifyPairsJob().parse_arguments(["--root", str(tmp_path), "--conf", conf])
    message = str(error.value)
    assert "\n" not in message and "min_main_lang_shar" in message
    assert all(field.name in message for field in dataclasses.fields(VerificationConfig))
    conf = conf_file(tmp_path, {"replay-crawl": {"replay": {"partner_weight": 1.0}}})
    with pytest.raises(ConfigError, match="site_partner_weight") as error:
        ReplayCrawlJob().parse_arguments(["--root", str(tmp_path), "--langs", "en,is", "--conf", conf])
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="expected int"):
        config_from_mapping(VerificationConfig, {"min_text_words": 2.5}, "verification")
    with pytest.raises(ValueError, match="expected float"):
        config_from_mapping(VerificationConfig, {"min_lang_share": "high"}, "verification")
    assert config_from_mapping(VerificationConfig, {"null_quantile": 1}, "v").null_quantile == 1.0


def test_the_report_records_every_value_used(tmp_path):
    conf = conf_file(tmp_path, {"verify-pairs": {"verification": {"min_lang_share": 0.6}, "seed": 3}})
    job = VerifyPairsJob()
    job.args = job.parse_arguments(["--root", str(tmp_path), "--conf", conf])
    assert job.verification == VerificationConfig(min_lang_share=0.6) and job.args.seed == 3
    recorded = JobReport(job.name, job._public_args(), job.conf).data["args"]["verification"]
    assert recorded == dataclasses.asdict(VerificationConfig(min_lang_share=0.6))
    fingerprint = job.arguments_fingerprint()
    job.args = job.parse_arguments(["--root", str(tmp_path)])  # no section: the defaults, recorded too
    assert job._public_args()["verification"] == dataclasses.asdict(VerificationConfig())
    assert job.arguments_fingerprint() != fingerprint
    replay = ReplayCrawlJob()
    replay.args = replay.parse_arguments(["--root", str(tmp_path), "--langs", "en,is", "--conf", conf_file(
        tmp_path, {"replay-crawl": {"replay": {"site_partner_weight": 1.0}}})])
    assert replay._public_args()["replay"] == dataclasses.asdict(ReplayConfig(site_partner_weight=1.0))


def test_replay_knobs_reach_the_policies_and_the_simulator():
    scorer = lambda *urls: None  # never called: no graph is replayed
    policy = make_policy("smart+site", langs=("eng", "isl"), lang_scorer=scorer, pair_scorer=scorer,
                         config=ReplayConfig(site_partner_weight=2.0, language_focus=0.1, partner_min_p=0.7))
    assert (policy.partner_weight, policy.language_focus, policy.partner_min_p) == (2.0, 0.1, 0.7)
    assert SmartSite.partner_weight == ReplayConfig().site_partner_weight  # the class keeps the default
    assert make_policy("smart", langs=("eng", "isl"), lang_scorer=scorer, pair_scorer=scorer,
                       config=ReplayConfig(language_focus=0.1)).language_focus == 0.0  # smart: the paper's formula
    assert make_policy("ilsp", langs=("eng", "isl"), config=ReplayConfig(ilsp_bonus=3.0)).bonus == 3.0
    docs, truth = multilingual_site(n_articles=20, host="www.alpha.is", seed=1)
    curves = {}
    for every in (0.01, 0.25):
        run = ReplayRun(langs=("eng", "isl"), policies=("bfs",), config=ReplayConfig(sample_every=every))
        curves[every] = replay_host(docs, truth, run).iloc[0]["curve_fetched"]
    assert len(curves[0.25]) < len(curves[0.01])


#: export's sentence pairs of EN / FR: their lengths in the documents' ratio differ by 1.13, 1.21 and 1.12
STRICT_LENGTHS = AlignmentConfig(max_length_ratio=1.15)


def test_a_changed_length_ratio_reaches_the_export_filter():
    reasons = [s["reason"] for s in export_document(document(EN, FR))["sentences"]]
    assert reasons == [None, None, None]
    strict = export_document(document(EN, FR), config=STRICT_LENGTHS)
    assert [s["reason"] for s in strict["sentences"]] == [None, "length_ratio", None]
    assert strict["sentence_pairs"] == 2
    short, long = "Yes.", "Oui, mais c'est une très longue phrase qui continue sans fin."
    assert filter_reason(short, long, "eng", "fra") == "length_ratio"
    assert filter_reason(short, long, "eng", "fra", config=AlignmentConfig(max_length_ratio=20.0)) is None


def test_alignment_knobs_reach_the_aligner_and_the_splitter():
    default = align_sentences(SRC, TRG, "eng", "fra", TinyLexicon(), tokenize)
    assert [bead.kind for bead in default] == ["1-1", "1-2", "1-1", "1-1"]
    no_merging = AlignmentConfig(lexicon_merge_prior=1e-12, absorb_share=2.0)  # a 1-2 bead costs too much
    assert "1-2" not in [bead.kind for bead in align_sentences(SRC, TRG, "eng", "fra", TinyLexicon(), tokenize,
                                                               config=no_merging)]
    segments, _ = split_sentences(["A sentence that goes on."], max_chars=AlignmentConfig(max_sentence_chars=5)
                                  .max_sentence_chars)
    assert segments[0].text == "A sen"


def test_a_changed_lsh_banding_or_ngram_changes_the_candidates():
    urls = synthetic_sites(n_sites=1, pages=200, seed=3)
    group = urls.assign(host=urls["site"].iloc[0])

    def candidates(config: BlockingConfig) -> set:
        pairs = blocking.similar_pairs_for_group(group, "eng", "isl", 2, 10_000, 0, config=config)  # LSH always
        return set(zip(pairs["src_url"], pairs["trg_url"], pairs["jaccard"].round(9)))

    default = candidates(BlockingConfig())
    assert candidates(BlockingConfig(lsh_bands=16)) == default
    assert len(candidates(BlockingConfig(lsh_bands=1))) < len(default) < len(candidates(BlockingConfig(lsh_bands=64)))
    assert candidates(BlockingConfig(char_ngram=4)) != default


def test_a_changed_rare_image_count_reaches_the_image_blocker():
    default, names = blocking.shared_image_pairs(image_pages(), ("eng", "isl"))
    # the banner on 6 of 25 pages is common under 4 rare pages, and pairs its pages under 6
    looser, looser_names = blocking.shared_image_pairs(image_pages(), ("eng", "isl"),
                                                       BlockingConfig(image_rare_pages=6))
    assert names.set_index("image").loc["banner.jpg", "image_status"] == "common"
    assert looser_names.set_index("image").loc["banner.jpg", "image_status"] == "ok"
    assert len(looser) == len(default) + 3 * 3 - 3


def test_a_knob_declared_as_an_option_is_one_generated_from_its_config_field(tmp_path):
    """--image-max-share comes from BlockingConfig's field (its help, its type), sets that field over the --conf
    section's value, and is recorded once, in the config."""
    job = RankPairs()
    action = next(a for a in job.build_parser()._actions if "--image-max-pages" in a.option_strings)
    assert action.type is int and "image_pairs_capped" in action.help and "default: 20" in action.help
    conf = conf_file(tmp_path, {"rank-pairs": {"blocking": {"image_max_pages": 7, "image_max_share": 0.3}}})
    base = ["--root", str(tmp_path), "--langs", "en,fr", "--lang-model", "m", "--pair-model", "m", "--conf", conf]
    args = job.parse_arguments([*base, "--image-max-pages", "3"])
    assert (args.blocking.image_max_pages, args.blocking.image_max_share) == (3, 0.3)
    assert not any("image_max" in name for name in vars(args))
    assert job.parse_arguments(base).blocking.image_max_pages == 7
    with pytest.raises(SystemExit):
        job.parse_arguments([*base, "--image-max-pages", "many"])


def test_the_code_section_is_one_config_set_per_job_and_reaching_both_stages(tmp_path):
    example = "Call the function foo_bar() here now please"  # a code share of 1/7: code only for a lower code_share
    assert not is_code(example) and is_code(example, CodeConfig(code_share=0.1))
    conf = conf_file(tmp_path, {"verify-pairs": {"verification": {"code": {"code_share": 0.1}}},
                                "export-bitext": {"alignment": {"code": {"min_run_code_share": 0.5}}}})
    verify = VerifyPairsJob().parse_arguments(["--root", str(tmp_path), "--conf", conf])
    assert verify.verification.code == CodeConfig(code_share=0.1) and verify.verification.min_lang_share == 0.5
    export = ExportBitextJob().parse_arguments(["--root", str(tmp_path), "--langs", "en,fr", "--conf", conf])
    assert export.alignment.code == CodeConfig(min_run_code_share=0.5)
    assert filter_reason(example, example + " x", "eng", "fra") != "code"
    assert filter_reason(example, example + " x", "eng", "fra", config=AlignmentConfig(code=CodeConfig(
        code_share=0.1))) == "code"
    frame = pd.DataFrame([{"url": f"http://{HOST}/a", "text_paragraphs": [
        {"text": example, "type": "text", "lang": None, "boilerplate": False, "hash": "1"}]}])
    assert HostPages(frame).prose(f"http://{HOST}/a")  # prose by default: it counts in the page's language shares
    assert HostPages(frame, VerificationConfig(code=CodeConfig(code_share=0.1))).prose(f"http://{HOST}/a") == []
    bad = conf_file(tmp_path, {"verify-pairs": {"verification": {"code": {"code_shar": 0.3}}}})
    with pytest.raises(ConfigError, match="verification.code: unknown key code_shar"):
        VerifyPairsJob().parse_arguments(["--root", str(tmp_path), "--conf", bad])


def test_alignment_and_blocking_sections_are_parsed_checked_and_recorded(tmp_path):
    conf = conf_file(tmp_path, {"export-bitext": {"alignment": {"max_length_ratio": 2.5}},
                                "rank-pairs": {"blocking": {"lsh_bands": 32}}})
    export = ExportBitextJob()
    export.args = export.parse_arguments(["--root", str(tmp_path), "--langs", "en,fr", "--conf", conf])
    assert export.alignment == AlignmentConfig(max_length_ratio=2.5)
    assert export._public_args()["alignment"] == dataclasses.asdict(AlignmentConfig(max_length_ratio=2.5))
    rank = RankPairs()
    rank.args = rank.parse_arguments(["--root", str(tmp_path), "--langs", "en,is", "--pair-model", "x",
                                      "--conf", conf])
    assert rank.blocking == BlockingConfig(lsh_bands=32)
    assert rank._public_args()["blocking"] == dataclasses.asdict(BlockingConfig(lsh_bands=32))
    rank.args = rank.parse_arguments(["--root", str(tmp_path), "--langs", "en,is", "--pair-model", "x"])
    assert rank._public_args()["blocking"] == dataclasses.asdict(BlockingConfig())  # the defaults, recorded too

    for job, argv, section, names in (
            (ExportBitextJob, ["--langs", "en,fr"], {"export-bitext": {"alignment": {"max_length_ration": 2}}},
             AlignmentConfig),
            (RankPairs, ["--langs", "en,is", "--pair-model", "x"], {"rank-pairs": {"blocking": {"bands": 8}}},
             BlockingConfig)):
        with pytest.raises(ConfigError) as error:
            job().parse_arguments(["--root", str(tmp_path), *argv, "--conf", conf_file(tmp_path, section)])
        assert "\n" not in str(error.value) and "unknown key" in str(error.value)
        assert all(field.name in str(error.value) for field in dataclasses.fields(names))
    with pytest.raises(ConfigError, match="lsh_bands must be between 1 and minhash_permutations") as error:
        RankPairs().parse_arguments(["--root", str(tmp_path), "--langs", "en,is", "--pair-model", "x", "--conf",
                                     conf_file(tmp_path, {"rank-pairs": {"blocking": {"lsh_bands": 100}}})])
    assert "\n" not in str(error.value)


def every_stage_config() -> list[type]:
    from docs.generate import stage_configs

    found = [config_class for _, _, config_class in stage_configs()]
    return list(dict.fromkeys(found + [inner for config_class in found for inner in nested_configs(config_class)]))


def test_docs_list_every_field():
    from docs.generate import DOCS, configuration_page, stage_configs_markdown
    from parascout.udfs.fetch.config import ExtractionConfig

    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert configuration_page(page) == page, "docs/configuration.md is stale: run python docs/generate.py"
    table = stage_configs_markdown()
    documented = every_stage_config()
    assert {VerificationConfig, ReplayConfig, AlignmentConfig, BlockingConfig, LexiconConfig, ExtractionConfig,
            CodeConfig, WordMatching} <= set(documented)
    rows = table.splitlines()
    for config_class in documented:
        for field in dataclasses.fields(config_class):
            assert any(row.startswith(f"| `{field.name}` |") and field.metadata["help"][:40] in row for row in rows), \
                f"{config_class.__name__}.{field.name} is not in docs/configuration.md"


@pytest.mark.slow
def test_verify_pairs_job_passes_its_config_down_and_reports_it(spark, tmp_path):
    docs, pairs, _ = build_site(random.Random(5), translations=4)
    storage.write_parquet_table(pd.DataFrame(docs), str(tmp_path / "docs"))
    storage.write_parquet_table(pd.DataFrame(pairs), str(tmp_path / "candidates"))
    # every image on more than 1% of a page's host: the charts are boilerplate too, and drop out of image_jaccard
    conf = conf_file(tmp_path, {"verify-pairs": {"verification": {"boilerplate_image_share": 0.01,
                                                                  "min_boilerplate_docs": 2}}})
    report = run_job(VerifyPairsJob, spark, ["--root", str(tmp_path), "--conf", conf])
    assert report["args"]["verification"]["boilerplate_image_share"] == 0.01
    assert report["args"]["verification"]["min_lang_share"] == VerificationConfig().min_lang_share
    verified = VerifyPairsJob().use_spark(spark)
    verified.args = verified.parse_arguments(["--root", str(tmp_path)])
    verified = verified.read_table("verified_pairs").toPandas()
    shared = verified[verified["parallel"]]["shared_images"]
    assert len(shared) and (shared == 0).all()


@pytest.mark.slow
def test_export_bitext_job_passes_its_alignment_config_down_and_reports_it(spark, tmp_path):
    write_bitext_inputs(spark, tmp_path)
    conf = conf_file(tmp_path, {"export-bitext": {"alignment": {"max_length_ratio": STRICT_LENGTHS.max_length_ratio}}})
    report = run_job(ExportBitextJob, spark, ["--root", str(tmp_path), "--langs", "en,fr", "--conf", conf])
    assert report["args"]["alignment"] == dataclasses.asdict(STRICT_LENGTHS)
    assert report["metrics"]["sentence_pairs"] == 2  # 3 with the default ratio (test_export_bitext)
    assert report["metrics"]["sentence_beads"]["length_ratio"] == 1


def test_every_option_says_what_it_decides_and_no_knob_has_two_homes():
    """A job option without help is a knob nobody can look up; a knob that is both an option and a config field, or
    a field of two stage configs, has two homes that can disagree."""
    from parascout.jobs.cli import discover

    fields: dict[str, set[str]] = {}
    for job_class in discover().values():
        for _, config_class in job_class.stage_configs:
            for declaring in [config_class, *nested_configs(config_class)]:
                for field in dataclasses.fields(declaring):
                    if not dataclasses.is_dataclass(field.default):  # a section: its fields are its class's
                        fields.setdefault(field.name, set()).add(declaring.__name__)
    assert not {name: homes for name, homes in fields.items() if len(homes) > 1}
    undocumented, twice = [], []
    for name, job_class in discover().items():
        for action in job_class().build_parser()._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not (action.help or "").strip():
                undocumented.append(f"{name} {action.option_strings or action.dest}")
            if action.dest in fields:
                twice.append(f"{name} --{action.dest} and {sorted(fields[action.dest])}")
    assert not undocumented, f"options without help: {undocumented}"
    assert not twice, f"knobs declared as an option and a config field: {twice}"


def test_every_numeric_knob_declares_its_range_and_a_value_outside_it_is_refused_however_it_is_set(tmp_path):
    """A knob's range is declared with it (knob(..., low=, high=, above=)), shown in docs/configuration.md and the
    generated options' help, and checked by the config itself: from --conf (a ConfigError naming the field), from an
    option (naming the option) and from Python (a ValueError)."""
    from parascout.udfs.common.stage_config import StageConfig, range_text

    unbounded = {("ReplayConfig", "site_class_rate_smoothing")}  # negative: off
    for config_class in every_stage_config():
        assert issubclass(config_class, StageConfig), config_class
        for field in dataclasses.fields(config_class):
            if isinstance(field.default, (int, float)) and not isinstance(field.default, bool) and \
                    (config_class.__name__, field.name) not in unbounded:
                assert range_text(field.metadata["range"]) != "any", f"{config_class.__name__}.{field.name}"
    assert "| `min_lang_share` | `0.5` | [0, 1] |" in (REPO / "docs" / "configuration.md").read_text()
    with pytest.raises(ValueError, match=r"VerificationConfig.min_lang_share must be \[0, 1\], got 1.5"):
        VerificationConfig(min_lang_share=1.5)
    with pytest.raises(ValueError, match=r"ReplayConfig.site_rescore_growth must be > 1"):
        ReplayConfig(site_rescore_growth=1.0)
    with pytest.raises(ConfigError, match=r"verify-pairs.verification: VerificationConfig.min_lang_share must be \[0, 1\]"):
        VerifyPairsJob().parse_arguments(["--root", str(tmp_path), "--conf", conf_file(
            tmp_path, {"verify-pairs": {"verification": {"min_lang_share": 1.5}}})])
    base = ["--root", str(tmp_path), "--langs", "en,fr", "--lang-model", "m", "--pair-model", "m"]
    with pytest.raises(ConfigError, match=r"--image-max-share 1.5: .*must be \[0, 1\]"):
        RankPairs().parse_arguments([*base, "--image-max-share", "1.5"])
    action = next(a for a in RankPairs().build_parser()._actions if "--image-max-share" in a.option_strings)
    assert "[0, 1]" in action.help
