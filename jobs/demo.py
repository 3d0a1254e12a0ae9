"""`parascout demo`: the whole pipeline on the embedded sample archive, then a report.

The sample archive (and a second one whose true pairs train the pair model), then every job of the pipeline in
jobs.pipeline's order (the order each job's declared inputs and outputs give), then report.md.
Every step is an ordinary job run in one SparkSession over the same root; a step
whose report says it already ran with the same arguments is skipped, so a rerun
resumes where a failed run stopped.
"""
from __future__ import annotations

import json
import time
from typing import NamedTuple

from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError
from parascout.jobs.language_pairs import language_pair_option
from parascout.udfs.common import storage, table_layout
from parascout.udfs.common.demo_report import build_demo_report, produced, step_summary
from parascout.udfs.common.langs import load_languages, parse_lang_pair

#: the methods compared with the truth in the report, weakest first: the last one is the pipeline's answer
HANDLES = "URL handles only (bucket-handles, the STRAND baseline)"
URL_MODELS = "URL models, 1-1 per site (rank-pairs)"
VERIFIED = "URL models + page content check (verify-pairs): the pipeline's pairs"
#: --text-corpus value for the generator's built-in word lists instead of real translations
BUILT_IN = "none"


class Step(NamedTuple):
    """One pipeline step: the job, its arguments, and what it is for when that is not the job's usual work."""

    job: str
    argv: list[str]
    purpose: str = ""


class Demo(Job):
    name = "demo"
    description = "run the whole pipeline on the embedded sample archive and write a report"
    root_required = False
    root_option = False  # --out says where everything goes

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--out", default="out/demo", metavar="DIR",
                            help="where everything goes: the archives, every step's tables and models, the report")
        parser.add_argument("--hosts", type=int, default=60, help="hosts in the sample archive")
        parser.add_argument("--seed", type=int, default=42, help="sample archive seed")
        parser.add_argument("--pages-per-host", type=int, help="mean HTML pages per host (generator default)")
        parser.add_argument("--langs", default="en,fr", help="the language pair mined by the demo")
        parser.add_argument("--train-hosts", type=int, default=60,
                            help="hosts of the second, disjoint archive whose true pairs train the pair model")
        parser.add_argument("--train-epochs", type=int, default=6,
                            help="epochs of each URL model's training (early stopping may end it sooner): the same "
                                 "numbers on a busy and an idle machine")
        parser.add_argument("--train-minutes", type=float, default=30.0,
                            help="safety cap on each model's training time (the epochs are the budget; the cap only "
                                 "guards against a stalled machine, so its results stay those of an idle one)")
        parser.add_argument("--text-corpus", default=None, metavar="DIR",
                            help="real parallel text for the sample archives' pages (make-sample-archive "
                                 "--text-corpus, e.g. ../shared/data/parallel-text/bible); default: the English, "
                                 "French, German and Spanish Bibles bundled in conf/parallel-text/bible; "
                                 f"'{BUILT_IN}': built-in word lists")

    def validate_arguments(self, args):
        from parascout.udfs.sample_archive.corpus import TextCorpusError, bundled_corpus, corpus_languages

        args.root = args.out
        super().validate_arguments(args)
        pair = language_pair_option(args.langs)
        if args.text_corpus == BUILT_IN:
            args.text_corpus = None
        elif args.text_corpus is None:
            args.text_corpus = bundled_corpus()
        if args.text_corpus:
            try:
                absent = [lang for lang in pair if lang not in corpus_languages(args.text_corpus)]
            except TextCorpusError as error:
                raise ConfigError(str(error)) from error
            if absent:  # the archive would hold no pages of that language: fail now, not after an hour
                raise ConfigError(f"--langs {args.langs}: --text-corpus {args.text_corpus} has no text for "
                                  f"{','.join(absent)}; name a corpus that has it, or --text-corpus {BUILT_IN} "
                                  "for the built-in word lists")

    def langs_option(self) -> str:
        """--langs as the jobs are given it: `en,fr`."""
        languages, (src, trg) = load_languages(), parse_lang_pair(self.args.langs)
        return f"{languages[src].iso639_1},{languages[trg].iso639_1}"

    def steps(self, registry: dict[str, type[Job]] | None = None) -> list[Step]:
        """Every pipeline step, in the pipeline's order (jobs.pipeline) of `registry` (default: every job)."""
        from parascout.jobs.cli import discover
        from parascout.jobs.pipeline import pipeline_order

        position = {name: number for number, name in enumerate(pipeline_order(registry or discover()))}
        return sorted(self.unordered_steps(), key=lambda step: position[step.job])  # stable: the archives in turn

    def unordered_steps(self) -> list[Step]:
        """Every pipeline step with its arguments."""
        a = self.args
        root, archive, models = a.out, storage.join(a.out, "archive"), storage.join(a.out, "models")
        langs = self.langs_option()
        truth = storage.join(archive, "truth", "pairs.parquet")
        training_archive = storage.join(a.out, "training-archive")
        generator = ["--out", archive, "--hosts", str(a.hosts), "--seed", str(a.seed)]
        training_generator = ["--out", training_archive, "--hosts", str(a.train_hosts), "--seed",
                              str(a.seed + 1000), "--cdx-only"]
        if a.pages_per_host:
            generator += ["--pages-per-host", str(a.pages_per_host)]
            training_generator += ["--pages-per-host", str(a.pages_per_host)]
        if a.text_corpus:
            generator += ["--text-corpus", a.text_corpus]
            training_generator += ["--text-corpus", a.text_corpus]
        # epochs are the budget, on two torch threads, so a seed gives the same models on any machine load
        training = ["--max-epochs", str(a.train_epochs), "--threads", "2", "--max-minutes", str(a.train_minutes)]
        # The pair model learns from the truth of other hosts (another seed), never from the hosts it ranks.
        return [
            Step("make-sample-archive", generator + ["--quiet"], f"the archive mined: {a.hosts} hosts, seed {a.seed}"),
            Step("make-sample-archive", training_generator + ["--quiet"],
                 f"the training archive: {a.train_hosts} other hosts (seed {a.seed + 1000}), only their CDX and "
                 "true pairs, which train the pair model"),
            Step("scan-cdx", ["--root", root, "--cdx", storage.join(archive, "indexes")]),
            Step("bucket-handles", ["--root", root, "--langs", langs]),
            Step("train-url2lang", ["--urls", storage.join(root, "urls"), "--out", storage.join(models, "url2lang"),
                                    *training]),
            Step("train-pairs", ["--positives", storage.join(training_archive, "truth", "pairs.parquet"),
                                 "--out", storage.join(models, "pairs"), *training]),
            Step("fetch-docs", ["--root", root, "--warc-prefix", archive + "/", "--select", "all"]),
            Step("rank-pairs", ["--root", root, "--langs", langs, "--lang-model", storage.join(models, "url2lang"),
                                "--pair-model", storage.join(models, "pairs")]),
            # the lexicon tsim links words with: the Bible when the demo reads it, else bootstrapped from the archive
            Step("train-lexicon", ["--langs", langs, "--out", storage.join(models, "lexicon"),
                                   *(["--aligned", a.text_corpus] if a.text_corpus else ["--from-archive", root])]),
            Step("verify-pairs", ["--root", root, "--pairs", "scored_pairs",
                                  "--lexicon", storage.join(models, "lexicon")]),
            Step("export-bitext", ["--root", root, "--langs", langs, "--lexicon", storage.join(models, "lexicon")]),
            Step("shortlist", ["--root", root, "--langs", langs, "--truth", truth]),
            Step("replay-crawl", ["--root", root, "--langs", langs, "--truth", truth,
                                  "--lang-model", storage.join(models, "url2lang"),
                                  "--pair-model", storage.join(models, "pairs")]),
            Step("export-crawl-plan", ["--root", root, "--langs", langs, "--top", "20"]),
        ]

    def already_done(self) -> dict | None:
        """Never: the demo always walks its steps and each step skips itself when it already ran with the same
        arguments and inputs, so a rerun notices a table that changed; --force reruns every step."""
        return None

    def process(self):
        from parascout.jobs.cli import discover

        started = time.monotonic()
        registry = discover()
        spark, spark_seconds = self.spark, time.monotonic() - started  # started here, not inside the first step's time
        self.log.info("Spark session ready in %.1fs", spark_seconds)
        summaries = []
        steps = self.steps(registry)
        for number, step in enumerate(steps, 1):
            self.log.info("[%d/%d] %sparascout %s %s", number, len(steps), f"{step.purpose}: " if step.purpose else "",
                          step.job, " ".join(step.argv))
            report = registry[step.job]().use_spark(spark).run(step.argv + (["--force"] if self.args.force else []))
            summaries.append(step_summary(step.job, step.purpose, report, bool(report.get("skipped_rerun"))))
        self.report.metric("steps", summaries)
        src, trg = parse_lang_pair(self.args.langs)
        quality = evaluate_against_truth(self.args.out, src, trg)
        self.report.metric("quality", quality)
        languages = load_languages()
        text_source = summaries[0]["metrics"].get("text_source") or self.args.text_corpus or "built-in word lists"
        run = {"langs": (src, trg), "names": {code: languages[code].name for code in (src, trg)},
               "hosts": self.args.hosts, "seed": self.args.seed, "seconds": time.monotonic() - started,
               "text_source": text_source, "model_metrics": model_metrics(summaries),
               "text_description": describe_text(self.args.text_corpus, text_source),
               "real_text": bool(self.args.text_corpus), "langs_option": self.langs_option(), "out": self.args.out}
        report = build_demo_report(run, summaries, quality, read_shortlist(self.args.out))
        written = report.write(self.args.out, "report")
        self.report.input("steps", len(steps))
        self.report.kept(len(summaries))  # every step ran or was reused: a failed step raises before this
        self.produced = f"{produced(summaries)}; report: {written[0]}"

    def outcome_line(self, data: dict) -> str:
        # the closing line sums what the pipeline produced, not the demo's own step counts
        return f"{data['kept']} steps ran or were reused; {self.produced}"


def describe_text(text_corpus: str | None, text_source: str) -> str:
    """The page text in words for the report: the translations and where they were read, or the word lists."""
    from parascout.udfs.sample_archive import resolve_languages
    from parascout.udfs.sample_archive.corpus import bundled_corpus, describe_corpus

    if not text_corpus:
        return text_source
    where = "bundled with parascout, conf/parallel-text/bible" if text_corpus == bundled_corpus() else text_corpus
    return f"{describe_corpus(text_corpus, tuple(resolve_languages(None, text_corpus)))} ({where})"


def model_metrics(summaries: list[dict]) -> dict[str, dict]:
    """Each trained URL model's metrics.json (per-class scores on dev and test), by training job."""
    found = {}
    for step in summaries:
        path = storage.join(step["metrics"]["model_dir"], "metrics.json") if "model_dir" in step["metrics"] else None
        if path and storage.exists(path):
            found[step["job"]] = json.loads(storage.read_text(path))
    return found


def read_shortlist(root: str):
    """The shortlist table as pandas (one row per site holding both languages: small), None when absent."""
    import pandas as pd

    location = table_layout.table_location(storage.join(root, "shortlist"))
    return pd.read_parquet(location) if location else None


def evaluate_against_truth(root: str, src_lang: str, trg_lang: str) -> dict:
    """Precision/recall of each method's pairs against the sample archive's truth (the demo is small)."""
    import pandas as pd

    from parascout.udfs.rank.alignment import evaluate_alignment

    truth = pd.read_parquet(storage.join(root, "archive", "truth", "pairs.parquet"))
    forward = truth[(truth.src_lang == src_lang) & (truth.trg_lang == trg_lang)]
    backward = truth[(truth.src_lang == trg_lang) & (truth.trg_lang == src_lang)]
    gold = set(zip(forward.src_url, forward.trg_url)) | set(zip(backward.trg_url, backward.src_url))
    verified = pd.read_parquet(storage.join(root, "verified_pairs"), columns=["src_url", "trg_url", "parallel"])
    methods = {
        HANDLES: ("candidates", None),
        URL_MODELS: ("alignment", None),
        VERIFIED: (None, verified[verified.parallel]),
    }
    quality = {}
    for label, (table, frame) in methods.items():
        if frame is None:
            frame = pd.read_parquet(storage.join(root, table), columns=["src_url", "trg_url"])
        quality[label] = evaluate_alignment(zip(frame.src_url, frame.trg_url), gold)
    return quality
