"""The whole pipeline on the real-sites archives (real documentation sites in CommonCrawl's formats), scored per site,
with every verification knob chosen leave-one-site-out.

    python benchmarks/eval_real_sites.py --out out/real-sites [--archive DIR ...] [--l2 fr,de,es]
        [--grid min_lang_share=0.4,0.45,0.5,0.55] [--only STEPS] [--base-model e5-small-bundled]

For each archive (default: ../shared/data/real-sites and real-sites-2) and each language paired with English that
the archive has truth for, runs the README's walk-through with defaults and no labels (the lexicon bootstrapped from
the archive) into OUT/<archive>-<l2>/, writes its logs/steps.tsv (step, exit code, seconds) and scores.json (the
archive's own score.py). `--base-model` fine-tunes both URL models (train-url2lang and train-pairs) from that
pretrained encoder instead of training the n-gram models, with a fixed number of steps. Then verify-pairs runs once
more per value of the --grid knob (a VerificationConfig field) into OUT/<archive>-<l2>/grid/<value>/ (the run's
docs, texts and scored pairs linked in), and every site (a host of the truth) is scored from each value's
verified_pairs. Leave one site out: for each site, the value is the one that
does best on all the OTHER sites together (the highest F1 of strict precision and recall of translated and partial
pairs, pooled), and the site is reported with it.

Prints, per site and language pair: the value chosen without the site, strict precision (untranslated pairs count as
wrong), recall of translated and partial pairs, untranslated pairs accepted, the share of the translated pairs
rank-pairs' 1-1 alignment had right that verification keeps, and every pair where verification overturns the
alignment (both directions), counted by the truth's class; OUT/overturns.tsv lists each of those pairs with its class, verify-pairs' reason and evidence.
Writes OUT/loso.json, OUT/loso.md and OUT/loso.png; `--score-only` scores the grid runs an earlier
call left, running nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "data"
DEFAULT_ARCHIVES = (SHARED / "real-sites", SHARED / "real-sites-2")
DEFAULT_POSITIVES = SHARED / "wmt16" / "train.pairs"
LANG_NAMES = {"fr": "fra", "de": "deu", "es": "spa", "ru": "rus", "it": "ita", "pt": "por"}
#: the grid the leave-one-site-out choice runs over (a VerificationConfig field and its values)
DEFAULT_GRID = "min_lang_share=0.4,0.45,0.5,0.55"
#: the strict precision every site should reach (the dashed line of loso.png)
TARGET_PRECISION = 0.97
#: the tables a grid run of verify-pairs reads from the run it re-decides
VERIFY_INPUTS = ("docs", "texts", "scored_pairs", "candidates")
PIPELINE = ("scan-cdx", "bucket-handles", "train-url2lang", "train-pairs", "fetch-docs", "rank-pairs",
            "train-lexicon", "verify-pairs", "export-bitext", "shortlist", "replay-crawl")


def truth_file(archive: Path, l2: str) -> Path:
    return archive / "truth" / ("pairs.tsv" if l2 == "fr" else f"pairs_en-{l2}.tsv")


def read_truth(archive: Path, l2: str):
    import pandas as pd

    return pd.read_csv(truth_file(archive, l2), sep="\t", dtype=str, keep_default_na=False, quoting=3)


def truth_table(archive: Path, run: Path, l2: str) -> Path:
    """The archive's truth for en-l2 in the project's format (shortlist and replay read it)."""
    import pandas as pd

    truth = read_truth(archive, l2)
    out = run / "truth_pairs.parquet"
    pd.DataFrame({"host": truth["host"], "src_url": truth["en_url"], "trg_url": truth["fr_url"],
                  "src_lang": "eng", "trg_lang": LANG_NAMES[l2], "class": truth["class"]}).to_parquet(out, index=False)
    return out


#: steps of fine-tuning a pretrained encoder (batches of 32): what 8 minutes of one core give multilingual-e5-small
#: on WMT16 (eval_url_models_wmt16.py), fixed so the models do not depend on the machine's speed or load
FINE_TUNING_STEPS = {"train-url2lang": 130, "train-pairs": 100}


def fine_tuning(step: str, base_model: str | None) -> list:
    """train-url2lang / train-pairs options that fine-tune `base_model` as the WMT16 comparison does."""
    if not base_model:
        return []
    return ["--backend", "transformer", "--base-model", base_model, "--max-steps", FINE_TUNING_STEPS[step],
            "--max-epochs", 2, "--batch-size", 32, "--learning-rate", 5e-5, "--max-length", 96, "--patience", 2,
            "--max-minutes", 60, "--seed", 0]


def steps(archive: Path, run: Path, l2: str, positives: Path, truth: Path,
          base_model: str | None = None) -> list[tuple[str, list[str]]]:
    """The walk-through, in the order that works (documents before ranking: their links propose pairs)."""
    langs, models = f"en,{l2}", run / "models"
    return [
        ("scan-cdx", ["--root", run, "--cdx", archive / "indexes", "--langs", langs]),
        ("bucket-handles", ["--root", run, "--langs", langs]),
        ("train-url2lang", ["--urls", run / "urls", "--out", models / "url2lang",
                            *fine_tuning("train-url2lang", base_model)]),
        ("train-pairs", ["--positives", positives, "--out", models / "pairs", *fine_tuning("train-pairs", base_model)]),
        ("fetch-docs", ["--root", run, "--warc-prefix", f"{archive}/", "--select", "all"]),
        ("rank-pairs", ["--root", run, "--langs", langs, "--lang-model", models / "url2lang",
                        "--pair-model", models / "pairs"]),
        ("train-lexicon", ["--langs", langs, "--out", models / "lexicon", "--from-archive", run]),
        ("verify-pairs", ["--root", run, "--lexicon", models / "lexicon"]),
        ("export-bitext", ["--root", run, "--langs", langs, "--lexicon", models / "lexicon"]),
        ("shortlist", ["--root", run, "--langs", langs, "--truth", truth]),
        ("replay-crawl", ["--root", run, "--langs", langs, "--truth", truth, "--lang-model", models / "url2lang",
                          "--pair-model", models / "pairs"]),
    ]


def parascout(step: str, arguments: list) -> int:
    return subprocess.call([sys.executable, "-m", "parascout.jobs.cli", step, *map(str, arguments)])


def run_pipeline(archive: Path, run: Path, l2: str, positives: Path, only: set[str] | None,
                 base_model: str | None = None) -> None:
    """The walk-through into `run` (finished steps are reused by the jobs), then the archive's scorer."""
    (run / "logs").mkdir(parents=True, exist_ok=True)
    truth = truth_table(archive, run, l2)
    log = run / "logs" / "steps.tsv"
    if not log.exists():
        log.write_text("step\trc\tseconds\n")  # the header the archive's scorer reads
    with log.open("a") as steps_log:
        for number, (step, arguments) in enumerate(steps(archive, run, l2, positives, truth, base_model), 1):
            if only and step not in only:
                continue
            print(f"[{archive.name} en-{l2} {number}/{len(PIPELINE)}] parascout {step}", flush=True)
            started = time.monotonic()
            rc = parascout(step, arguments)
            steps_log.write(f"{step}\t{rc}\t{round(time.monotonic() - started)}\n")
            steps_log.flush()
    score = [sys.executable, str(archive / "score.py"), str(archive), str(run), "--json", str(run / "scores.json")]
    if l2 != "fr":
        score += ["--l2", l2]
    subprocess.call(score, stdout=subprocess.DEVNULL)


def read_table(root: Path, table: str):
    """A table's current version as pandas (None when the run has none)."""
    import pandas as pd

    from parascout.udfs.common.table_layout import table_location

    location = table_location(str(root / table))
    return pd.read_parquet(location) if location else None


def grid_run(run: Path, knob: str, value: str) -> Path:
    """verify-pairs over the run's inputs with `knob: value` (VerificationConfig), in its own root."""
    root = run / "grid" / f"{knob}={value}"
    root.mkdir(parents=True, exist_ok=True)
    for table in VERIFY_INPUTS:
        link = root / table
        if (run / table).exists() and not link.exists():
            link.symlink_to(run / table, target_is_directory=True)
    conf = root / "verify.yaml"
    conf.write_text(f"verify-pairs:\n  verification:\n    {knob}: {value}\n")
    parascout("verify-pairs", ["--root", root, "--lexicon", run / "models" / "lexicon", "--conf", conf, "--force"])
    return root


def pair_key(a: str, b: str) -> frozenset:
    return frozenset((a, b))


def site_counts(root: Path, run: Path, truth) -> dict[str, dict]:
    """Per site (truth host): pairs by class, accepted pairs by class, and the overturns of the 1-1 alignment."""
    from urllib.parse import urlsplit

    verified, alignment = read_table(root, "verified_pairs"), read_table(run, "alignment")
    classes = {pair_key(en, l2): cls for en, l2, cls in zip(truth["en_url"], truth["fr_url"], truth["class"])}
    accepted = set() if verified is None else {
        pair_key(s, t) for s, t, ok in zip(verified["src_url"], verified["trg_url"], verified["parallel"]) if ok}
    verdicts = {} if verified is None else {
        (s, t): (reason, evidence) for s, t, reason, evidence in zip(
            verified["src_url"], verified["trg_url"], verified["reason"],
            verified["evidence"] if "evidence" in verified else [None] * len(verified))}
    aligned = set() if alignment is None else {pair_key(s, t) for s, t in zip(alignment["src_url"], alignment["trg_url"])}
    counts: dict[str, dict] = {}

    def site(pair: frozenset) -> dict:
        host = urlsplit(min(pair)).hostname
        return counts.setdefault(host, {"pairs": {}, "accepted": {}, "aligned_right": 0, "kept_aligned_right": 0,
                                        "overturned_rejected": {}, "overturned_added": {}, "overturns": []})

    def overturn(direction: str, src: str, trg: str, cls: str) -> None:
        reason, evidence = verdicts.get((src, trg), verdicts.get((trg, src), ("not_verified", None)))
        site(pair_key(src, trg))["overturns"].append(
            {"direction": direction, "src_url": src, "trg_url": trg, "class": cls, "reason": reason,
             "evidence": evidence})

    def add(table: dict, key: str) -> None:
        table[key] = table.get(key, 0) + 1

    for pair, cls in classes.items():
        add(site(pair)["pairs"], cls)
    for pair in accepted:
        add(site(pair)["accepted"], classes.get(pair, "false"))
    for src, trg in [] if alignment is None else zip(alignment["src_url"], alignment["trg_url"]):
        pair = pair_key(src, trg)
        entry, cls = site(pair), classes.get(pair, "false")
        if cls == "translated":
            entry["aligned_right"] += 1
            entry["kept_aligned_right"] += pair in accepted
        if pair not in accepted:
            add(entry["overturned_rejected"], cls)
            overturn("alignment pair rejected", src, trg, cls)
    for src, trg, ok in [] if verified is None else zip(verified["src_url"], verified["trg_url"], verified["parallel"]):
        if ok and pair_key(src, trg) not in aligned:
            add(site(pair_key(src, trg))["overturned_added"], classes.get(pair_key(src, trg), "false"))
            overturn("accepted, not in the alignment", src, trg, classes.get(pair_key(src, trg), "false"))
    return counts


def figures(entries: list[dict]) -> dict:
    """Strict precision, recall per class and the rest, pooled over count entries (site_counts' values)."""
    def total(key: str, cls: str) -> int:
        return sum(entry[key].get(cls, 0) for entry in entries)

    accepted = sum(sum(entry["accepted"].values()) for entry in entries)
    right = total("accepted", "translated") + total("accepted", "partial")
    aligned_right = sum(entry["aligned_right"] for entry in entries)

    def recall(cls: str) -> float | None:
        return round(total("accepted", cls) / total("pairs", cls), 3) if total("pairs", cls) else None

    return {"pairs": sum(sum(entry["pairs"].values()) for entry in entries), "accepted": accepted,
            "precision_strict": round(right / accepted, 3) if accepted else None,
            "recall_translated": recall("translated"), "recall_partial": recall("partial"),
            "untranslated_accepted": total("accepted", "untranslated"), "false_accepted": total("accepted", "false"),
            "kept_of_aligned_right": round(sum(e["kept_aligned_right"] for e in entries) / aligned_right, 3)
            if aligned_right else None,
            "recall_right": right / max(total("pairs", "translated") + total("pairs", "partial"), 1)}


def objective(result: dict) -> float:
    """F1 of strict precision and the recall of translated and partial pairs (a knob trades one for the other: F1
    weighs a pair gained and a wrong pair accepted alike, whatever the precision already is)."""
    precision = result["precision_strict"] if result["precision_strict"] is not None else 1.0
    recall = result["recall_right"]
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def leave_one_site_out(counts: dict[tuple, dict[str, dict]], values: list[str], default: str | None = None
                       ) -> list[dict]:
    """counts[(run, value)][site] -> one row per (run, site): the value chosen on the other sites (a tie keeps
    `default`), its figures."""
    runs = sorted({run for run, _ in counts})
    sites = sorted({site for (run, value), by_site in counts.items() for site in by_site})
    rows = []
    for held_out in sites:
        scores = {value: objective(figures([entry for (run, v), by_site in counts.items() if v == value
                                            for site, entry in by_site.items() if site != held_out]))
                  for value in values}
        chosen = max(values, key=lambda value: (scores[value], value == default))  # a tie keeps the default
        for run in runs:
            entry = counts[(run, chosen)].get(held_out)
            if entry and entry["pairs"]:
                result = figures([entry])
                result.pop("recall_right")
                rows.append({"site": held_out, "run": run, "value": chosen, **result,
                             "overturned_rejected": entry["overturned_rejected"],
                             "overturned_added": entry["overturned_added"], "overturns": entry["overturns"]})
    return rows


def markdown(rows: list[dict], knob: str) -> str:
    def cell(value) -> str:
        return "–" if value is None else str(value)

    def classes(table: dict) -> str:
        return ", ".join(f"{cls} {count}" for cls, count in sorted(table.items())) or "–"

    lines = [(f"| site | run | {knob} (chosen on the other sites) | pairs | strict P | R translated | R partial | "
             "untranslated accepted | kept of alignment's right translated | alignment pairs rejected | "
             "accepted pairs not in the alignment |"), "|" + " --- |" * 11]
    for row in rows:
        lines.append(" | ".join(["", row["site"], row["run"], row["value"], str(row["pairs"]),
                                 cell(row["precision_strict"]), cell(row["recall_translated"]),
                                 cell(row["recall_partial"]), str(row["untranslated_accepted"]),
                                 cell(row["kept_of_aligned_right"]), classes(row["overturned_rejected"]),
                                 classes(row["overturned_added"]), ""]).strip())
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: Path) -> None:
    """Strict precision and recall of translated and partial pairs per site and run, as bars (loso.png)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{row['site']}\n{row['run'].rsplit('-', 1)[1]}" for row in rows]
    measures = (("precision_strict", "strict precision"), ("recall_translated", "recall, translated"),
                ("recall_partial", "recall, partial"))
    figure, axes = plt.subplots(figsize=(max(8.0, 0.9 * len(rows)), 4.5))
    width = 0.27
    for number, (key, name) in enumerate(measures):
        values = [row[key] if row[key] is not None else 0.0 for row in rows]
        axes.bar([k + (number - 1) * width for k in range(len(rows))], values, width, label=name)
    axes.axhline(TARGET_PRECISION, color="grey", linestyle="--", linewidth=0.8)
    axes.set_xticks(range(len(rows)), labels, fontsize=7, rotation=45, ha="right")
    axes.set_ylim(0, 1.05)
    axes.set_title("verify-pairs per site, each site left out of the knob's choice")
    axes.legend(fontsize=8, loc="lower left")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder of the runs (created; steps already done are reused)")
    parser.add_argument("--archive", action="append", help="an archive folder (repeatable; default: both)")
    parser.add_argument("--l2", default="fr,de,es", help="languages paired with English, where an archive has them")
    parser.add_argument("--positives", default=str(DEFAULT_POSITIVES), help="positive URL pairs for train-pairs")
    parser.add_argument("--only", help="comma-separated pipeline steps to run (default: all)")
    parser.add_argument("--score-only", action="store_true",
                        help="run nothing: score the runs and grid runs an earlier call left under --out")
    parser.add_argument("--grid", default=DEFAULT_GRID, help="KNOB=V1,V2,...: the VerificationConfig knob chosen "
                                                             "leave-one-site-out, and its values")
    parser.add_argument("--base-model", help="fine-tune both URL models from this pretrained encoder (e.g. "
                                             "e5-small-bundled) instead of training the n-gram models")
    args = parser.parse_args(argv)
    archives = [Path(path).resolve() for path in (args.archive or DEFAULT_ARCHIVES)]
    missing = [str(path) for path in archives if not (path / "score.py").exists()]
    if missing:
        print(f"no real-sites archive at {', '.join(missing)}", file=sys.stderr)
        return 2
    knob, _, listed = args.grid.partition("=")
    values = [value.strip() for value in listed.split(",") if value.strip()]
    only = set(args.only.split(",")) if args.only else None
    out = Path(args.out).resolve()
    counts: dict[tuple, dict[str, dict]] = {}
    for archive in archives:
        for l2 in [lang for lang in args.l2.split(",") if truth_file(archive, lang).exists()]:
            run = out / f"{archive.name}-{l2}"
            if not args.score_only:
                run_pipeline(archive, run, l2, Path(args.positives), only, args.base_model)
            truth = read_truth(archive, l2)
            for number, value in enumerate(values, 1):
                root = run / "grid" / f"{knob}={value}"
                if not args.score_only:
                    print(f"[{archive.name} en-{l2}] verify-pairs {knob}={value} ({number}/{len(values)})", flush=True)
                    root = grid_run(run, knob, value)
                counts[(run.name, value)] = site_counts(root, run, truth)
    from parascout.udfs.verify.verification_config import DEFAULT

    default = getattr(DEFAULT, knob, None)
    rows = leave_one_site_out(counts, values, None if default is None else next(
        (value for value in values if float(value) == float(default)), None))
    (out / "loso.json").write_text(json.dumps({"knob": knob, "values": values, "rows": rows}, indent=2))
    table = markdown(rows, knob)
    (out / "loso.md").write_text(table)
    plot([row for row in rows if row["accepted"]], out / "loso.png")
    with (out / "overturns.tsv").open("w") as overturns:
        overturns.write("site\trun\tdirection\tclass\treason\tevidence\tsrc_url\ttrg_url\n")
        for row in rows:
            for item in row["overturns"]:
                overturns.write("\t".join([row["site"], row["run"], item["direction"], item["class"],
                                           str(item["reason"]), str(item["evidence"]), item["src_url"],
                                           item["trg_url"]]) + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    sys.exit(main())
