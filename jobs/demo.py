"""`parascout demo`: the whole pipeline on the embedded sample archive, then a report.

sample archive → scan-cdx → bucket-handles → train-url2lang, train-pairs →
rank-pairs → fetch-docs → train-lexicon → verify-pairs → export-bitext → shortlist → replay-crawl → report.md.
Every step is an ordinary job run in one SparkSession over the same root; a step
whose report says it already ran with the same arguments is skipped, so a rerun
resumes where a failed run stopped.
"""
from __future__ import annotations

import time

from parascout.jobs.base import Job, language_pair_option
from parascout.udfs import storage
from parascout.udfs.langs import load_languages, parse_lang_pair


class Demo(Job):
    name = "demo"
    description = "run the whole pipeline on the embedded sample archive and write a report"
    root_required = False

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--out", default="out/demo", help="where the archive, tables and report go")
        parser.add_argument("--hosts", type=int, default=60, help="hosts in the sample archive")
        parser.add_argument("--seed", type=int, default=42, help="sample archive seed")
        parser.add_argument("--pages-per-host", type=int, help="mean HTML pages per host (generator default)")
        parser.add_argument("--langs", default="en,fr", help="the language pair mined by the demo")
        parser.add_argument("--train-hosts", type=int, default=60,
                            help="hosts of the second, disjoint archive whose true pairs train the pair model")
        parser.add_argument("--train-epochs", type=int, default=6,
                            help="epochs of each URL model's training (early stopping may end it sooner): the same "
                                 "numbers on a busy and an idle machine")
        parser.add_argument("--train-minutes", type=float, default=10.0,
                            help="safety cap on each model's training time (the epochs are the budget)")
        parser.add_argument("--text-corpus", default=None, metavar="DIR",
                            help="real parallel text for the sample archives' pages (make-sample-archive "
                                 "--text-corpus, e.g. ../shared/data/parallel-text/bible); default: built-in word lists")

    def validate_arguments(self, args):
        args.root = args.out
        super().validate_arguments(args)
        language_pair_option(args.langs)

    def steps(self) -> list[tuple[str, list[str]]]:
        """(job name, argv) of every pipeline step, in dependency order."""
        a = self.args
        root, archive, models = a.out, storage.join(a.out, "archive"), storage.join(a.out, "models")
        src, trg = parse_lang_pair(a.langs)
        languages = load_languages()
        langs = f"{languages[src].iso639_1},{languages[trg].iso639_1}"
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
            ("make-sample-archive", generator),
            ("make-sample-archive", training_generator + ["--no-progress"]),
            ("scan-cdx", ["--root", root, "--cdx", storage.join(archive, "indexes")]),
            ("bucket-handles", ["--root", root, "--langs", langs]),
            ("train-url2lang", ["--urls", storage.join(root, "urls"), "--out", storage.join(models, "url2lang"),
                                *training]),
            ("train-pairs", ["--positives", storage.join(training_archive, "truth", "pairs.parquet"),
                             "--out", storage.join(models, "pairs"), *training]),
            # docs before ranking: their links add language-switcher neighbours to the candidate pairs
            ("fetch-docs", ["--root", root, "--warc-prefix", archive + "/", "--select", "all"]),
            ("rank-pairs", ["--root", root, "--langs", langs, "--lang-model", storage.join(models, "url2lang"),
                            "--pair-model", storage.join(models, "pairs")]),
            # the lexicon tsim links words with: the Bible when the demo reads it, else bootstrapped from the archive
            ("train-lexicon", ["--langs", langs, "--out", storage.join(models, "lexicon"),
                               *(["--aligned", a.text_corpus] if a.text_corpus else ["--from-archive", root])]),
            ("verify-pairs", ["--root", root, "--pairs", "scored_pairs", "--lexicon", storage.join(models, "lexicon")]),
            # the bitext before shortlist, so the shortlist carries each site's yield in words
            ("export-bitext", ["--root", root, "--langs", langs, "--lexicon", storage.join(models, "lexicon")]),
            ("shortlist", ["--root", root, "--langs", langs, "--truth", truth]),
            ("replay-crawl", ["--root", root, "--langs", langs, "--truth", truth,
                              "--lang-model", storage.join(models, "url2lang"),
                              "--pair-model", storage.join(models, "pairs")]),
        ]

    def process(self):
        from parascout.jobs.cli import discover

        registry = discover()
        summaries = []
        steps = self.steps()
        for number, (job_name, argv) in enumerate(steps, 1):
            self.log.info("[%d/%d] parascout %s %s", number, len(steps), job_name, " ".join(argv))
            started = time.monotonic()
            report = registry[job_name]().use_spark(self.spark).run(argv)
            summaries.append({
                "job": job_name,
                "seconds": round(time.monotonic() - started, 1),
                "reused": bool(report.get("skipped_rerun")),
                "kept": report.get("kept"),
                "filtered": sum((report.get("filtered") or {}).values()),
                "bad": sum((report.get("bad") or {}).values()),
                "outputs": report.get("outputs", {}),
                "metrics": report.get("metrics", {}),
            })
        self.report.metric("steps", summaries)
        quality = evaluate_against_truth(self.args.out, *parse_lang_pair(self.args.langs))
        self.report.metric("quality", quality)
        report_file = storage.join(self.args.out, "report.md")
        storage.write_text(report_file, render_report(self.args, summaries, quality))
        self.report.input("steps", len(steps))
        self.report.kept(len(summaries))  # every step ran or was reused: a failed step raises before this
        self.log.info("demo produced: %s; report: %s", produced(summaries), report_file)


def produced(summaries: list[dict]) -> str:
    """One line of what the pipeline made: document pairs, sentence pairs and words, shortlisted sites."""
    outputs = {table: rows for summary in summaries for table, rows in (summary["outputs"] or {}).items()}
    exported = next((s["metrics"] for s in summaries if s["job"] == "export-bitext"), {})
    words = {key.removeprefix("words_"): value for key, value in exported.items()
             if key.startswith("words_") and isinstance(value, int)}
    parts = [f"{outputs.get('bitext_documents', 0):,} verified, aligned document pairs",
             f"{outputs.get('bitext/sent.tsv', 0):,} sentence pairs"]
    if words:
        parts.append("words " + ", ".join(f"{lang} {count:,}" for lang, count in words.items()))
    parts.append(f"{outputs.get('shortlist', 0):,} sites shortlisted")
    return "; ".join(parts)


def evaluate_against_truth(root: str, src_lang: str, trg_lang: str) -> dict:
    """Precision/recall of each method's pairs against the sample archive's truth (the demo is small)."""
    import pandas as pd

    from parascout.udfs.alignment import evaluate_alignment

    truth = pd.read_parquet(storage.join(root, "archive", "truth", "pairs.parquet"))
    forward = truth[(truth.src_lang == src_lang) & (truth.trg_lang == trg_lang)]
    backward = truth[(truth.src_lang == trg_lang) & (truth.trg_lang == src_lang)]
    gold = set(zip(forward.src_url, forward.trg_url)) | set(zip(backward.trg_url, backward.src_url))
    verified = pd.read_parquet(storage.join(root, "verified_pairs"), columns=["src_url", "trg_url", "parallel"])
    methods = {
        "STRAND handle buckets (bucket-handles)": ("candidates", None),
        "URL models, 1-1 alignment (rank-pairs)": ("alignment", None),
        "verify-pairs: structure + tsim, no labels, 1-1": (None, verified[verified.parallel]),
    }
    quality = {}
    for label, (table, frame) in methods.items():
        if frame is None:
            frame = pd.read_parquet(storage.join(root, table), columns=["src_url", "trg_url"])
        quality[label] = evaluate_alignment(zip(frame.src_url, frame.trg_url), gold)
    return quality


def bitext_lines(summaries: list[dict]) -> list[str]:
    """The report's bitext section: sentence pairs and words exported, a few aligned pairs."""
    metrics = next((step["metrics"] for step in summaries if step["job"] == "export-bitext"), None)
    if not metrics or "sentence_pairs" not in metrics:
        return []
    words = ", ".join(f"{key[6:]} {value:,}" for key, value in metrics.items() if key.startswith("words_"))
    summary = (f"{metrics['sentence_pairs']:,} sentence pairs ({metrics.get('unique_sentence_pairs', 0):,} unique), "
               f"words: {words}; files in `bitext/` (Bitextor TSV, TMX), tables `bitext_*`.")
    lines = ["## Bitext (export-bitext)", "", summary, "",
             "| source | target | score |", "|---|---|---:|"]
    for src, trg, score in metrics.get("examples", []):
        src, trg = (text.replace("|", "\\|") for text in (src, trg))
        lines.append(f"| {src} | {trg} | {score:.3f} |")
    return lines + [""]


def render_report(args, summaries: list[dict], quality: dict) -> str:
    """A Markdown report of the demo run: every step's counts, quality against the truth, metrics."""
    text_source = next((step["metrics"].get("text_source") for step in summaries
                        if step["job"] == "make-sample-archive"), None) or args.text_corpus or "built-in word lists"
    lines = [f"# parascout demo — {args.langs} on a {args.hosts}-host sample archive (seed {args.seed})", "",
             f"Page text: {text_source}.", "",
             "| step | seconds | reused | kept | filtered | bad | outputs |", "|---|---:|---|---:|---:|---:|---|"]
    for step in summaries:
        outputs = ", ".join(f"{table}: {rows}" for table, rows in step["outputs"].items())
        lines.append(f"| {step['job']} | {step['seconds']} | {'yes' if step['reused'] else ''} | {step['kept']} | "
                     f"{step['filtered']} | {step['bad']} | {outputs} |")
    lines += ["", "## Pairs against the archive's truth", "",
              "| method | pairs | correct | precision | recall | F1 |", "|---|---:|---:|---:|---:|---:|"]
    for label, scores in quality.items():
        lines.append(f"| {label} | {scores['predicted']} | {scores['correct']} | {scores['precision']:.3f} | "
                     f"{scores['recall']:.3f} | {scores['f1']:.3f} |")
    lines += ["", f"True {args.langs} pairs in the archive: {next(iter(quality.values()))['gold']}.", ""]
    lines += bitext_lines(summaries)
    lines += ["## Headline metrics", ""]
    for step in summaries:
        scalars = {k: v for k, v in step["metrics"].items() if isinstance(v, (int, float, str, bool))}
        if scalars:
            lines.append(f"### {step['job']}")
            lines += [f"- {key}: {value}" for key, value in scalars.items()]
            lines.append("")
    lines += ["## Crawl replay", "", "See [replay/report.md](replay/report.md) and its plots:", "",
              "![mean yield curves](replay/yield_curves.png)", "",
              "Full step reports: `_reports/*.json`.", ""]
    return "\n".join(lines) + "\n"
