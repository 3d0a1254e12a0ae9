"""Stage knobs (VerificationConfig, ReplayConfig): set from a job's --conf section, refused when unknown, passed down
to the decision, recorded in the report and listed in docs/configuration.md."""
from __future__ import annotations

import dataclasses
import random

import pandas as pd
import pytest
import yaml

from parascout.jobs.base import ConfigError, JobReport
from parascout.jobs.replay_crawl import ReplayCrawlJob
from parascout.jobs.verify_pairs import VerifyPairsJob
from parascout.udfs import storage
from parascout.udfs.html_text import paragraph_hash
from parascout.udfs.replay import make_policy
from parascout.udfs.replay.batch import ReplayRun, replay_host
from parascout.udfs.replay.config import ReplayConfig
from parascout.udfs.replay.policies import SmartSite
from parascout.udfs.replay.synthetic import multilingual_site
from parascout.udfs.stage_config import config_from_mapping
from parascout.udfs.structure import ThresholdRule
from parascout.udfs.verification import verify_host
from parascout.udfs.verification_config import VerificationConfig
from tests.conftest import run_job
from tests.test_documents import ENGLISH, GERMAN
from tests.test_verify_pairs import HOST, LEXICON, REAL_ENGLISH, REAL_GERMAN, build_site, doc_row, text_of


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
                         config=VerificationConfig(min_main_lang_share=0.99)).iloc[0]
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
        config_from_mapping(VerificationConfig, {"min_main_lang_share": "high"}, "verification")
    assert config_from_mapping(VerificationConfig, {"null_quantile": 1}, "v").null_quantile == 1.0


def test_the_report_records_every_value_used(tmp_path):
    conf = conf_file(tmp_path, {"verify-pairs": {"verification": {"min_main_lang_share": 0.6}, "seed": 3}})
    job = VerifyPairsJob()
    job.args = job.parse_arguments(["--root", str(tmp_path), "--conf", conf])
    assert job.verification == VerificationConfig(min_main_lang_share=0.6) and job.args.seed == 3
    recorded = JobReport(job.name, job._public_args(), job.conf).data["args"]["verification"]
    assert recorded == dataclasses.asdict(VerificationConfig(min_main_lang_share=0.6))
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


def test_docs_list_every_field():
    from docs.generate import DOCS, configuration_page, stage_configs_markdown

    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert configuration_page(page) == page, "docs/configuration.md is stale: run python docs/generate.py"
    table = stage_configs_markdown()
    for config_class in (VerificationConfig, ReplayConfig):
        for field in dataclasses.fields(config_class):
            assert f"| `{field.name}` | `{field.default}` | {field.metadata['help'].split()[0]}" in table


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
    assert report["args"]["verification"]["min_main_lang_share"] == VerificationConfig().min_main_lang_share
    verified = VerifyPairsJob().use_spark(spark)
    verified.args = verified.parse_arguments(["--root", str(tmp_path)])
    verified = verified.read_table("verified_pairs").toPandas()
    shared = verified[verified["parallel"]]["shared_images"]
    assert len(shared) and (shared == 0).all()
