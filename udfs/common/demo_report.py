"""The demo's report.md / report.html: what a corpus builder reads first.

Top of the page: which sites to crawl first and how much parallel text each holds (the shortlist
with export-bitext's yield per site), then how much of the archive's truth the pipeline found, in
plain words; a sample of the bitext, the crawl replay in two sentences, the URL models' scores, every
step with what its counts mean, and last the commands to run on one's own data. Each figure comes with a
sentence on what it means for the result. Built from the step summaries the demo collects
(`step_summary`), its evaluation against the truth and the shortlist table: nothing reruns.
"""
from __future__ import annotations

import math

import pandas as pd

from parascout.udfs.common.report_document import Report

#: shortlist rows shown in the report (the table holds every site)
MAX_SITES = 20

#: per job: what the step does, and what its primary input and kept count are (the job report's
#: input = kept + filtered + bad means different things per job)
STEP_MEANING = {
    "make-sample-archive": ("writes a synthetic CommonCrawl-style archive and its truth", "captures written"),
    "scan-cdx": ("reads the CDX index, keeps HTML pages answered 200", "URLs kept"),
    "bucket-handles": ("STRAND baseline: pairs URLs that differ only by a language marker",
                       "URLs with a partner in their bucket"),
    "train-url2lang": ("learns a URL's language (labels: the CDX's CLD2 language)", "URLs trained on"),
    "train-pairs": ("learns whether two URLs are translations (the training archive's true pairs)",
                    "pairs trained on"),
    "fetch-docs": ("reads each URL's WARC record: main text, paragraphs, links", "documents read"),
    "rank-pairs": ("scores candidate URL pairs with the URL models, aligns them 1-1 per site",
                   "URLs of the pair's languages on sites holding both"),
    "train-lexicon": ("word translation probabilities for the content check", "aligned records read"),
    "verify-pairs": ("checks each scored pair's pages: HTML structure and translated words, no labels",
                     "pairs judged parallel"),
    "export-bitext": ("aligns the parallel pages' sentences; writes TSV and TMX", "page pairs exported"),
    "shortlist": ("ranks sites by predicted pairs", "sites holding both languages"),
    "replay-crawl": ("replays crawl policies over the archived link graph", "documents replayed"),
    "export-crawl-plan": ("seeds, hosts and ranked URLs for a crawl of the top sites", "sites planned"),
}


#: a job report's primary input as the steps table names it
INPUT_NAMES = {"urls": "URLs", "docs": "documents", "requested": "URLs requested"}


def step_summary(job: str, purpose: str, report: dict, reused: bool) -> dict:
    """What the demo keeps of a step's job report: its counts with their reasons, time, outputs, metrics."""
    primary = report.get("primary_input")
    return {
        "job": job,
        "purpose": purpose,
        "seconds": round(float(report.get("seconds") or 0.0), 1),  # the job's own time: its 'done in' log line
        "reused": reused,
        "input_name": primary,
        "input": (report.get("inputs") or {}).get(primary),
        "kept": report.get("kept"),
        "filtered": dict(report.get("filtered") or {}),
        "bad": dict(report.get("bad") or {}),
        "outputs": dict(report.get("outputs") or {}),
        "metrics": dict(report.get("metrics") or {}),
    }


def produced(summaries: list[dict]) -> str:
    """One line of what the pipeline made: document pairs, sentence pairs and words, shortlisted sites."""
    outputs = {table: rows for summary in summaries for table, rows in summary["outputs"].items()}
    exported = next((step["kept"] for step in summaries if step["job"] == "export-bitext"), None) or 0
    parts = [f"{exported:,} verified document pairs with aligned sentences",
             f"{outputs.get('bitext/sent', 0):,} sentence pairs"]
    words = _words(_metrics(summaries, "export-bitext"))
    if words:
        parts.append("words " + ", ".join(f"{lang} {count:,}" for lang, count in words.items()))
    parts.append(f"{outputs.get('shortlist', 0):,} sites shortlisted")
    return "; ".join(parts)


def build_demo_report(run: dict, summaries: list[dict], quality: dict, shortlist: pd.DataFrame | None) -> Report:
    """The demo's report. run: langs (two ISO 639-3 codes), names (their English names), hosts, seed,
    text_source, seconds (the demo's wall time) and optionally text_description (what the page text is),
    real_text (pages hold real translations), langs_option (`en,fr`) and out (the demo's folder);
    quality: evaluate_against_truth's scores per method."""
    src, trg = run["langs"]
    names = run.get("names") or {}
    pair = f"{names.get(src, src)}–{names.get(trg, trg)}"
    report = Report(f"parascout demo: {pair} parallel text in a sample archive of {run['hosts']} hosts "
                    f"(seed {run['seed']})")
    reused = sum(step["reused"] for step in summaries)
    report.paragraph(f"{len(summaries)} steps{f' ({reused} reused from an earlier run)' if reused else ''} in "
                     f"{_duration(run['seconds'])}; page text: {run.get('text_description') or run['text_source']}. "
                     f"The pipeline produced {produced(summaries)}.")
    if "real_text" in run:
        report.paragraph(_text_sentence(run))
    capped = [job for job, metrics in (run.get("model_metrics") or {}).items()
              if ((metrics.get("history") or [{}])[-1]).get("stopped_by") == "max_minutes"]
    if capped:
        report.paragraph(f"Note: {' and '.join(capped)} stopped at the --train-minutes safety cap (a slow or busy "
                         "machine), so the numbers below depend on machine speed; see The URL models.")
    _sites_section(report, summaries, shortlist, (src, trg))
    _truth_section(report, quality, pair)
    _bitext_section(report, summaries)
    _replay_section(report, summaries)
    _models_section(report, summaries, run.get("model_metrics") or {})
    _steps_section(report, summaries, run)
    _next_section(report, run)
    return report


def _text_sentence(run: dict) -> str:
    """What the page text means for the figures below."""
    if run["real_text"]:
        return (f"The pages hold real human translations ({run['text_source']}), so the content check and the "
                "sentence alignment below meet real translation, as on the web; the URLs, page templates and "
                "link structure are still the generator's.")
    return ("The pages hold the generator's built-in word lists (real words aligned by concept, not sentences), so "
            "the content check and sentence figures below are not what real pages give; `--text-corpus DIR`, or "
            "the default bundled Bibles, give real translations.")


def _sites_section(report: Report, summaries: list[dict], shortlist: pd.DataFrame | None, langs) -> None:
    report.heading("Which sites to crawl first")
    if shortlist is None or shortlist.empty:
        report.paragraph("No shortlist: no site holds pages in both languages.")
        return
    src, trg = langs
    report.paragraph(
        "Sites ranked by the pairs the URL models predict before any page is fetched (predicted pairs: "
        "1-1 aligned URL pairs scoring at least 0.5). The columns after it are what the pipeline then got "
        "from each site's archived pages: verified document pairs, aligned sentence pairs and words "
        "(export-bitext).")
    ordered = shortlist.sort_values("rank")
    table = pd.DataFrame({
        "rank": ordered["rank"], "site": ordered["site"],
        f"{src} URLs": ordered["n_urls_src"], f"{trg} URLs": ordered["n_urls_trg"],
        "predicted pairs": ordered["predicted_pairs"],
        "documents": ordered["bitext_documents"], "sentence pairs": ordered["bitext_sentence_pairs"],
        f"{src} words": ordered["bitext_words_src"], f"{trg} words": ordered["bitext_words_trg"],
    })
    report.table(table.head(MAX_SITES))
    totals = (f"All {len(ordered)} sites: {int(ordered['bitext_documents'].sum()):,} document pairs, "
              f"{int(ordered['bitext_sentence_pairs'].sum()):,} sentence pairs, "
              f"{int(ordered['bitext_words_src'].sum()):,} {src} and {int(ordered['bitext_words_trg'].sum()):,} "
              f"{trg} words")
    empty = int((ordered["bitext_documents"] == 0).sum())
    shown = f"; the first {MAX_SITES} are shown, every site is in the `shortlist` table" if len(ordered) > MAX_SITES \
        else ""
    report.paragraph(f"{totals}{shown}. Sites with no verified pair: {empty}.")
    evaluation = _metrics(summaries, "shortlist").get("evaluation")
    if isinstance(evaluation, dict):
        report.paragraph(_ranking_sentence(evaluation))


def _ranking_sentence(evaluation: dict) -> str:
    """How far the ranking can be trusted, from the shortlist's evaluation against the archive's truth."""
    sites, relevant = evaluation.get("hosts_evaluated", 0), evaluation.get("relevant_min_true_pairs", 1)
    rho = evaluation.get("spearman")
    text = (f"How good the ranking is (against the archive's truth, {sites} sites): "
            + (f"Spearman ρ = {rho:.2f} between predicted and true pairs per site (1: the same order)"
               if _number(rho) else "no Spearman ρ (fewer than 2 sites or a constant side)"))
    at_5, first = evaluation.get("precision_at_5"), min(5, sites)
    if _number(at_5):
        text += (f"; {round(at_5 * first)} of the first {first} sites hold at least {relevant} true pairs "
                 f"(precision@5 {at_5:.2f})")
    if _number(rho):
        text += (". The order can be trusted to pick sites before fetching anything" if rho >= TRUSTED
                 else ". The order is a weak guide: fetch and verify a few pages of each candidate site before "
                      "choosing")
    return text + "."


def _truth_section(report: Report, quality: dict, pair: str) -> None:
    report.heading("How much of the truth the pipeline found")
    if not quality:
        report.paragraph("No truth to compare with.")
        return
    gold = next(iter(quality.values()))["gold"]
    report.paragraph(f"The sample archive knows its {gold:,} true {pair} page pairs. Precision: the share of a "
                     "method's pairs that are true; recall: the share of the true pairs it found.")
    report.bullets([f"{label}: {scores['correct']:,} of its {scores['predicted']:,} pairs are true "
                    f"(precision {_percent(scores['precision'])}), {_percent(scores['recall'])} of the true pairs "
                    "found (recall)" for label, scores in quality.items()])
    table = pd.DataFrame([{"method": label, "pairs": s["predicted"], "true": s["correct"],
                           "precision": _percent(s["precision"]), "recall": _percent(s["recall"]),
                           "F1": f"{s['f1']:.2f}"} for label, s in quality.items()])
    report.table(table)
    report.paragraph(_truth_reading(quality))


def _truth_reading(quality: dict) -> str:
    """What the last method's scores mean against the one before it: what the content check bought."""
    scores = list(quality.values())
    before, last = (scores[-2] if len(scores) > 1 else None), scores[-1]
    text = (f"What this means: {_percent(last['precision'])} of the pairs the pipeline outputs are translations "
            f"(precision), and it finds {_percent(last['recall'])} of the true pairs (recall).")
    if before and _number(before["precision"]) and _number(last["precision"]):
        change = "raises" if last["precision"] > before["precision"] else "does not raise"
        text += (f" Reading the pages {change} precision over the URLs alone ({_percent(before['precision'])} → "
                 f"{_percent(last['precision'])}): pairs whose URLs look alike but whose pages are not translations "
                 "are dropped")
        text += (f", at the cost of true pairs the check rejected (recall {_percent(before['recall'])} → "
                 f"{_percent(last['recall'])})." if last["recall"] < before["recall"] else ".")
    return text


def _bitext_section(report: Report, summaries: list[dict]) -> None:
    metrics = _metrics(summaries, "export-bitext")
    if "sentence_pairs" not in metrics:
        return
    report.heading("A sample of the bitext")
    words = ", ".join(f"{lang} {count:,}" for lang, count in _words(metrics).items())
    report.paragraph(f"{metrics['sentence_pairs']:,} sentence pairs ({metrics.get('unique_sentence_pairs', 0):,} "
                     f"unique), words: {words}; files in `bitext/` (Bitextor TSV, TMX), tables `bitext_*`. "
                     "Unique counts a sentence pair repeated on several pages (menus, notices) once: that is the "
                     "text a translation model would learn from. The score is the sentence aligner's confidence "
                     "that the two sentences translate each other (0–1).")
    examples = metrics.get("examples") or []
    if examples:
        report.table(pd.DataFrame([{"source": src, "target": trg, "score": f"{score:.2f}"}
                                   for src, trg, score in examples]))


def _replay_section(report: Report, summaries: list[dict]) -> None:
    metrics = _metrics(summaries, "replay-crawl")
    auc = metrics.get("mean_auc")
    if not isinstance(auc, dict) or not auc:
        return
    report.heading("Crawling: which policy finds the parallel pages sooner")
    ranked = sorted(((policy, value) for policy, value in auc.items() if policy != "oracle"),
                    key=lambda item: -item[1])
    text = (f"Crawl policies replayed offline over {metrics.get('hosts_replayed', 0)} hosts' archived link graphs. "
            "Mean area under the yield curve (1: every parallel page found with the first fetch): "
            + ", ".join(f"{policy} {value:.2f}" for policy, value in ranked)
            + (f" (oracle, the best possible order: {auc['oracle']:.2f})." if "oracle" in auc else "."))
    share = metrics.get("median_share_fetches_to_80")
    if isinstance(share, dict) and share.get("bfs") and ranked and share.get(ranked[0][0]):
        best = ranked[0][0]
        text += (f" To find 80% of a host's parallel pages, {best} fetches a median {share[best]:.0%} of its "
                 f"pages, breadth-first (bfs) {share['bfs']:.0%}.")
    if ranked and "bfs" in auc and ranked[0][0] != "bfs":
        text += (f" What that means for a crawl: with {ranked[0][0]}, a crawl stopped early has already fetched "
                 "more of the site's translated pages than a breadth-first one.")
    report.paragraph(text)
    comparison = metrics.get("shortlist_comparison")
    if isinstance(comparison, dict) and _number(comparison.get("spearman_pairs")):
        report.paragraph(f"The shortlist's prediction (URLs only) against the pairs the {comparison['policy']} "
                         f"replay found on {comparison['hosts_compared']} hosts: Spearman ρ = "
                         f"{comparison['spearman_pairs']:.2f} (1: the sites a crawl would find richest are the "
                         "ones the shortlist puts first).")
    written = " ".join(metrics.get("report_files") or [])
    for name, caption in (("yield_curves.png", "Mean yield curve per policy"),
                          ("prediction.png", "Predicted pairs vs pairs found by the replay, per host")):
        if name in written:
            report.image(f"replay/{name}", caption)
    report.paragraph("Every policy, per host and per decile of the crawl: [replay/report.md](replay/report.md).")
    if any(summary["job"] == "export-crawl-plan" for summary in summaries):
        report.paragraph("A crawl of the top sites from their entry points, on every host of each site, in the "
                         "replay's best order: [crawl-plan/plan.md](crawl-plan/plan.md) (docs/crawl-plan.md says "
                         "how to hand it to wget, Heritrix or Bitextor).")


def _models_section(report: Report, summaries: list[dict], model_metrics: dict[str, dict]) -> None:
    """Dev and test macro-F1 of the URL models; the classes they miss, which explain a gap between the two."""
    rows, notes = [], []
    for job, what in (("train-url2lang", "language of a URL"), ("train-pairs", "are two URLs translations")):
        metrics = _metrics(summaries, job)
        if "test_macro_f1" not in metrics:
            continue
        dev, test = float(metrics["dev_macro_f1"]), float(metrics["test_macro_f1"])
        rows.append({"model": f"{job} ({what})", "dev macro-F1": f"{dev:.2f}", "test macro-F1": f"{test:.2f}"})
        notes.append(_model_reading(job, test))
        missed = {split: _missed_classes(model_metrics.get(job, {}).get(split)) for split in ("dev", "test")}
        history = model_metrics.get(job, {}).get("history") or [{}]
        if history[-1].get("stopped_by") == "max_minutes":
            notes.append(f"{job} was stopped by the --train-minutes safety cap at epoch {history[-1].get('epoch')} "
                         "(a slow or busy machine): its scores, and every number after it, depend on machine speed; "
                         "rerun with a larger --train-minutes for the reproducible result.")
        if abs(dev - test) >= GAP or any(missed.values()):
            notes.append(f"{job}: " + "; ".join(f"{split} misses {text}" for split, text in missed.items() if text)
                         + ("." if any(missed.values()) else "") + (
                             f" Dev and test differ by {abs(dev - test):.2f}: each split is a few whole hosts, "
                             "and these are the classes its hosts hold that the model gets wrong."
                             if abs(dev - test) >= GAP else ""))
    if not rows:
        return
    report.heading("The URL models")
    report.paragraph("Macro-F1 (the mean of the per-class F1 over the classes present) on hosts held out of "
                     "training: dev decides when training stops, test is measured once. Each split holds a few "
                     "whole hosts, so a class seen on few hosts (a language, a URL style) can be missed entirely "
                     "in one split and present in the other. Per-class tables: `models/*/metrics.json`.")
    report.table(pd.DataFrame(rows))
    report.bullets(notes)


#: a difference between dev and test macro-F1 the report explains
GAP = 0.1
#: test macro-F1 from which a URL model's score is called good, and below which low
GOOD_F1, LOW_F1 = 0.9, 0.7
#: Spearman ρ from which the shortlist's order is called trustworthy
TRUSTED = 0.7

#: per URL model: what its score feeds, so a reader knows what a low score costs
MODEL_ROLE = {
    "train-url2lang": "rank-pairs multiplies each pair's score by P(each URL is in its language) from this model",
    "train-pairs": "rank-pairs multiplies each pair's score by P(the two URLs are translations) from this model",
}


def _model_reading(job: str, test_f1: float) -> str:
    """One sentence: how good the model's test score is and what a weak one costs downstream."""
    level = "good" if test_f1 >= GOOD_F1 else "fair" if test_f1 >= LOW_F1 else "low"
    text = f"{job}: test macro-F1 {test_f1:.2f} is {level}. {MODEL_ROLE[job]}"
    if level == "good":
        return text + ", so the shortlist's predicted pairs rest on sound URL scores."
    return (text + f"; with a {level} score, pairs score lower or in the wrong order, so the shortlist's predicted "
            "pairs (score ≥ 0.5) miss some and the replay's smart policies guide worse. verify-pairs reads the pages "
            "of every scored pair whatever its URL score, so the verified pairs and the bitext depend on it less.")


def _missed_classes(split: dict | None, below: float = 0.5) -> str:
    """'ell F1 0.00 (187 examples), ara 0.42 (124)': classes present in a split that the model gets mostly wrong."""
    per_class = (split or {}).get("per_class") or {}
    weak = sorted(((name, scores) for name, scores in per_class.items()
                   if scores.get("support", 0) > 0 and scores.get("f1", 1.0) < below), key=lambda item: item[1]["f1"])
    return ", ".join(f"{name} F1 {scores['f1']:.2f} ({scores['support']:,} examples)" for name, scores in weak)


def _steps_section(report: Report, summaries: list[dict], run: dict) -> None:
    report.heading("Steps")
    rows = []
    for number, step in enumerate(summaries, 1):
        does, kept_means = STEP_MEANING.get(step["job"], ("", "kept"))
        rows.append({"#": number, "step": step["job"], "what it does": step["purpose"] or does,
                     "seconds": f"{step['seconds']:.1f}" + (" (reused)" if step["reused"] else ""),
                     "counts": _counts(step, kept_means),
                     "outputs": ", ".join(f"{table} {rows:,}" for table, rows in step["outputs"].items())})
    report.table(pd.DataFrame(rows))
    ran = sum(step["seconds"] for step in summaries if not step["reused"])
    report.paragraph(f"Seconds are each job's own time, the `done in` of its log line (reused: the time of the run "
                     f"that made the output). The steps run now took {_duration(ran)} of the demo's "
                     f"{_duration(run['seconds'])}; the rest went to starting Spark, checking inputs (and finding "
                     "reused steps done) and writing this report. Counts: what the job read, what it kept, and what it "
                     "dropped with the reason. Full step reports: `_reports/*.json`, `models/*/_reports/*.json`.")


def _counts(step: dict, kept_means: str) -> str:
    """'24,674 index records → 19,645 URLs kept; dropped: mime 4,043, redirect 746'."""
    kept = f"{step['kept']:,} {kept_means}" if step["kept"] is not None else ""
    if step["input"] is None or step["input"] == step["kept"]:
        text = kept
    else:
        name = INPUT_NAMES.get(step["input_name"], str(step["input_name"]).replace("_", " "))
        text = f"{step['input']:,} {name} → {kept}"
    dropped = sorted({**step["filtered"], **{f"{r} (bad)": n for r, n in step["bad"].items()}}.items(),
                     key=lambda item: -item[1])
    if dropped:
        text += "; dropped: " + ", ".join(f"{reason.replace('_', ' ')} {count:,}" for reason, count in dropped)
    return text


def _metrics(summaries: list[dict], job: str) -> dict:
    return next((step["metrics"] for step in summaries if step["job"] == job), {})


def _words(metrics: dict) -> dict[str, int]:
    return {key.removeprefix("words_"): value for key, value in metrics.items()
            if key.startswith("words_") and isinstance(value, int)}


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not math.isnan(value)


def _percent(value: float) -> str:
    return f"{value:.0%}" if _number(value) else "–"


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _next_section(report: Report, run: dict) -> None:
    """The commands that run the same pipeline on one's own index, named with the demo's pair and folders."""
    langs, out = run.get("langs_option") or ",".join(run["langs"]), run.get("out") or "out/demo"
    root, lexicon = "out/mine", "out/mine/models/lexicon"
    report.heading("Next: your own data")
    report.paragraph("The same pipeline on your own index, into a new root (`out/mine`); the README's walk-through "
                     "explains each step. `--cdx` takes CDX files (plain or gzip) or a ZipNum folder, local or "
                     "`s3://`; on CommonCrawl, add `--tlds` / `--domains` to read only those blocks. `--warc-prefix` "
                     "is where the index's WARC files are: `https://data.commoncrawl.org/` for CommonCrawl. The "
                     "demo's URL models learned the sample archive's URL styles; for real sites train your own "
                     "(README, step 3).")
    report.code([
        f"parascout scan-cdx --root {root} --cdx PATH/TO/CDX --langs {langs}",
        f"parascout bucket-handles --root {root} --langs {langs}",
        f"parascout fetch-docs --root {root} --warc-prefix https://data.commoncrawl.org/ --select all",
        (f"parascout rank-pairs --root {root} --langs {langs} --lang-model {out}/models/url2lang "
         f"--pair-model {out}/models/pairs"),
        f"parascout train-lexicon --langs {langs} --out {lexicon} --from-archive {root}",
        f"parascout verify-pairs --root {root} --lexicon {lexicon}",
        f"parascout export-bitext --root {root} --langs {langs} --lexicon {lexicon}",
        f"parascout shortlist --root {root} --langs {langs}",
    ])
