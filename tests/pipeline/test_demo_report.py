"""The demo's report.md from hand-made step summaries (no Spark): the shortlist first, plain-words quality,
labelled steps whose counts say what they mean, rounded numbers, no 'nan', a sentence on what each figure means,
the next commands last; `demo --help`; the bundled Bibles as the default page text."""
import gzip
import re
import shlex
from pathlib import Path

import pandas as pd
import pytest

from parascout.jobs.cli import discover
from parascout.jobs.demo import HANDLES, URL_MODELS, VERIFIED, Demo, describe_text
from parascout.jobs.errors import ConfigError
from parascout.udfs.common.demo_report import build_demo_report, produced, step_summary
from parascout.udfs.sample_archive.corpus import bundled_corpus, corpus_languages, load_texts


def job_report(primary: str, count: int, kept: int, filtered=None, bad=None, outputs=None, metrics=None,
               seconds=1.234) -> dict:
    return {"primary_input": primary, "inputs": {primary: count}, "kept": kept, "filtered": filtered or {},
            "bad": bad or {}, "outputs": outputs or {}, "metrics": metrics or {}, "seconds": seconds}


def summaries() -> list[dict]:
    steps = [
        ("make-sample-archive", "the archive mined: 4 hosts, seed 1",
         job_report("captures", 100, 100, metrics={"text_source": "the Bible"}, seconds=74.61)),
        ("make-sample-archive", "the training archive: 8 other hosts", job_report("captures", 50, 50)),
        ("scan-cdx", "", job_report("index_records", 100, 80, filtered={"mime": 15, "redirect": 5},
                                    outputs={"urls": 80, "hosts": 4},
                                    metrics={"scored_vs_cartesian": 0.38089384995783726})),
        ("train-url2lang", "", job_report("urls", 80, 80, metrics={"dev_macro_f1": 0.30123, "test_macro_f1": 0.8456,
                                                                     "model_dir": "/nowhere"})),
        ("verify-pairs", "", job_report("scored_pairs", 40, 12, filtered={"content_rejected": 27},
                                        bad={"fetch_failed": 1}, outputs={"verified_pairs": 40})),
        ("export-bitext", "", job_report("verified_pairs (parallel)", 12, 12, metrics={
            "sentence_pairs": 321, "unique_sentence_pairs": 300, "words_eng": 4567, "words_fra": 4890,
            "examples": [["A house.", "Une maison.", 0.98765]]},
            outputs={"bitext_documents": 12, "bitext/sent": 321})),
        ("shortlist", "", job_report("rank_hosts", 3, 3, outputs={"shortlist": 3}, metrics={"evaluation": {
            "hosts_evaluated": 3, "relevant_min_true_pairs": 5, "spearman": 0.49999999, "precision_at_5": 2 / 3}})),
        ("replay-crawl", "", job_report("docs", 90, 60, filtered={"host_without_truth_pairs": 30}, metrics={
            "hosts_replayed": 3, "mean_auc": {"bfs": 0.41234, "smart+site": 0.6789, "oracle": 0.8},
            "median_share_fetches_to_80": {"bfs": 0.9, "smart+site": 0.55},
            "shortlist_comparison": {"policy": "smart", "hosts_compared": 3, "spearman_pairs": float("nan")},
            "report_files": ["/x/replay/yield_curves.png", "/x/replay/deciles.png", "/x/replay/report.md"]})),
    ]
    return [step_summary(job, purpose, report, reused=False) for job, purpose, report in steps]


SHORTLIST = pd.DataFrame({
    "site": ["big.fr", "mid.com", "none.net"], "src_lang": "eng", "trg_lang": "fra", "n_urls_src": [40, 20, 5],
    "n_urls_trg": [38, 15, 4], "predicted_pairs": [30, 10, 0], "expected_pairs": [29.5, 9.1, 0.2],
    "predicted_ratio": [0.79, 0.67, 0.0], "rank": [1, 2, 3], "bitext_documents": [9, 3, 0],
    "bitext_sentence_pairs": [250, 71, 0], "bitext_words_src": [3500, 1067, 0], "bitext_words_trg": [3700, 1190, 0]})
QUALITY = {HANDLES: {"predicted": 10, "correct": 9, "gold": 20, "precision": 0.9, "recall": 0.45, "f1": 0.6},
           URL_MODELS: {"predicted": 16, "correct": 12, "gold": 20, "precision": 0.75, "recall": 0.6, "f1": 0.6667},
           VERIFIED: {"predicted": 12, "correct": 11, "gold": 20, "precision": 11 / 12, "recall": 0.55, "f1": 0.6875}}
RUN = {"langs": ("eng", "fra"), "names": {"eng": "English", "fra": "French"}, "hosts": 4, "seed": 1,
       "seconds": 432.4, "text_source": "the Bible",
       "model_metrics": {"train-url2lang": {"dev": {"per_class": {
           "ell": {"f1": 0.0, "support": 187}, "eng": {"f1": 0.9, "support": 10}, "zho": {"f1": 0.0, "support": 0}}},
           "history": [{"epoch": 1}, {"epoch": 2, "stopped_by": "max_minutes"}]}}}


@pytest.fixture(scope="module")
def markdown() -> str:
    return build_demo_report(RUN, summaries(), QUALITY, SHORTLIST).markdown()


def test_the_shortlist_comes_first_with_each_sites_text(markdown):
    sections = re.findall(r"^## (.+)$", markdown, flags=re.MULTILINE)
    assert sections[0] == "Which sites to crawl first" and sections[-2:] == ["Steps", "Next: your own data"]
    assert "| rank | site | eng URLs | fra URLs | predicted pairs | documents | sentence pairs | eng words | " \
           "fra words |" in markdown
    assert "| 1 | big.fr | 40 | 38 | 30 | 9 | 250 | 3,500 | 3,700 |" in markdown
    assert "All 3 sites: 12 document pairs, 321 sentence pairs, 4,567 eng and 4,890 fra words" in markdown
    assert "Sites with no verified pair: 1." in markdown
    assert "Spearman ρ = 0.50" in markdown and "2 of the first 3 sites hold at least 5 true pairs" in markdown


def test_quality_in_plain_words_and_rounded(markdown):
    assert "knows its 20 true English–French page pairs" in markdown
    assert f"- {VERIFIED}: 11 of its 12 pairs are true (precision 92%), 55% of the true pairs found" in markdown
    assert f"| {URL_MODELS} | 16 | 12 | 75% | 60% | 0.67 |" in markdown
    assert not re.search(r"\d\.\d{4,}", markdown), "a number is not rounded"
    assert "nan" not in markdown.lower() and "0.38" not in markdown  # no raw metric dumps


def test_steps_are_labelled_and_counts_say_what_they_mean(markdown):
    assert "| 1 | make-sample-archive | the archive mined: 4 hosts, seed 1 | 74.6 | 100 captures written |" in markdown
    assert "| 2 | make-sample-archive | the training archive: 8 other hosts |" in markdown
    assert "100 index records → 80 URLs kept; dropped: mime 15, redirect 5" in markdown
    assert "40 scored pairs → 12 pairs judged parallel; dropped: content rejected 27, fetch failed (bad) 1" in markdown
    assert "90 documents → 60 documents replayed; dropped: host without truth pairs 30" in markdown
    assert "13 steps" not in markdown and "8 steps in 7 min 12 s; page text: the Bible" in markdown


def test_replay_models_and_bitext(markdown):
    assert "smart+site 0.68, bfs 0.41 (oracle, the best possible order: 0.80)" in markdown
    assert "smart+site fetches a median 55% of its pages, breadth-first (bfs) 90%" in markdown
    assert "replay/yield_curves.png" in markdown and "replay/prediction.png" not in markdown  # the replay wrote none
    assert "Spearman ρ = nan" not in markdown
    assert "| train-url2lang (language of a URL) | 0.30 | 0.85 |" in markdown
    assert "dev misses ell F1 0.00 (187 examples)." in markdown and "zho" not in markdown
    assert "Dev and test differ by 0.54" in markdown
    assert "train-url2lang was stopped by the --train-minutes safety cap at epoch 2" in markdown
    assert "Note: train-url2lang stopped at the --train-minutes safety cap" in markdown.split("## ")[0]  # on top
    assert "| A house. | Une maison. | 0.99 |" in markdown


def test_produced_line_sums_the_pipeline():
    assert produced(summaries()) == ("12 verified document pairs with aligned sentences; 321 sentence pairs; "
                                     "words eng 4,567, fra 4,890; 3 sites shortlisted")


def test_demo_help_names_one_output_option(capsys):
    with pytest.raises(SystemExit):
        Demo().parse_arguments(["--help"])
    shown = capsys.readouterr().out
    assert "--out DIR" in shown and "--root" not in shown
    with pytest.raises(SystemExit):
        Demo().parse_arguments(["--root", "x"])


def test_each_figure_says_what_it_means(markdown):
    assert "The order is a weak guide: fetch and verify a few pages" in markdown  # ρ 0.50
    assert "What this means: 92% of the pairs the pipeline outputs are translations (precision), and it finds 55% " \
           "of the true pairs (recall)." in markdown
    assert "Reading the pages raises precision over the URLs alone (75% → 92%)" in markdown
    assert "at the cost of true pairs the check rejected (recall 60% → 55%)" in markdown
    assert "Unique counts a sentence pair repeated on several pages" in markdown
    assert "with smart+site, a crawl stopped early has already fetched more" in markdown
    assert "train-url2lang: test macro-F1 0.85 is fair. rank-pairs multiplies each pair's score by P(each URL is in " \
           "its language)" in markdown
    assert "the shortlist's predicted pairs (score ≥ 0.5) miss some" in markdown


def test_the_report_names_its_page_text():
    real = build_demo_report({**RUN, "text_description": "real translations: English (ASV) (bundled)",
                              "real_text": True}, summaries(), QUALITY, SHORTLIST).markdown()
    assert "page text: real translations: English (ASV) (bundled)." in real
    assert "The pages hold real human translations (the Bible)" in real
    built_in = build_demo_report({**RUN, "real_text": False}, summaries(), QUALITY, SHORTLIST).markdown()
    assert "The pages hold the generator's built-in word lists" in built_in


def test_the_next_commands_run_the_pipeline_on_ones_own_data():
    markdown = build_demo_report({**RUN, "langs_option": "en,fr", "out": "out/demo"}, summaries(), QUALITY,
                                 SHORTLIST).markdown()
    last = markdown.split("## Next: your own data")[1]
    commands = re.search(r"```bash\n(.*?)```", last, flags=re.DOTALL).group(1).splitlines()
    registry = discover()
    jobs = [shlex.split(command)[1] for command in commands]
    assert jobs[:2] == ["scan-cdx", "bucket-handles"] and jobs[-1] == "shortlist"
    for command in commands:
        _, job, *arguments = shlex.split(command)
        _, unknown = registry[job]().build_parser().parse_known_args(arguments)
        assert not unknown, f"{job} does not know {unknown}"
    assert "--lang-model out/demo/models/url2lang" in last and "--root out/mine" in last
    assert "scan-cdx --root out/mine --cdx PATH/TO/CDX --langs en,fr" in last


def test_the_bundled_bibles_are_verse_aligned_and_licensed():
    directory = bundled_corpus()
    assert corpus_languages(directory) == ("deu", "eng", "fra", "spa")
    texts = {lang: load_texts(directory, lang)[0] for lang in ("eng", "fra")}
    assert texts["eng"]["b.GEN.1.1"].startswith("In the beginning God created")
    assert len(set(texts["fra"]) & set(texts["eng"])) > 27_000  # ids shared = verses translated
    with gzip.open(f"{directory}/deu.tsv.gz", "rt", encoding="utf-8") as handle:
        assert handle.readline().startswith("b.GEN.1.1\t")
    assert "public domain" in Path(directory, "LICENSE.md").read_text(encoding="utf-8")
    assert describe_text(directory, "x").startswith("real translations: German (Elberfelder (1871)), English "
                                                    "(American Standard Version (1901))")


def test_the_demo_reads_the_bundled_bibles_unless_told_otherwise(tmp_path):
    demo = Demo()
    args = demo.parse_arguments(["--out", str(tmp_path)])
    demo.validate_arguments(args)
    assert args.text_corpus == bundled_corpus()
    args = demo.parse_arguments(["--out", str(tmp_path), "--text-corpus", "none", "--langs", "en,mt"])
    demo.validate_arguments(args)
    assert args.text_corpus is None
    with pytest.raises(ConfigError, match="has no text for mlt.*--text-corpus none"):
        demo.validate_arguments(demo.parse_arguments(["--out", str(tmp_path), "--langs", "en,mt"]))
