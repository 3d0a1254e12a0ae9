"""The whole pipeline on the real-sites archive (real documentation sites in CommonCrawl's formats), scored by
the archive's own scorer.

    python benchmarks/eval_real_sites.py --out out/real-sites [--l2 fr] [--archive ../shared/data/real-sites]

Runs every step of the README's walk-through with defaults and no labels (the lexicon bootstrapped from the
archive), writes RUN/logs/steps.tsv (step, exit code, seconds) and RUN/scores.json, and prints score.py's
report. A step that fails is recorded and the later steps still run where their inputs exist.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_ARCHIVE = HERE.parent.parent / "shared" / "data" / "real-sites"
DEFAULT_POSITIVES = HERE.parent.parent / "shared" / "data" / "wmt16" / "train.pairs"
LANG_NAMES = {"fr": "fra", "de": "deu", "es": "spa", "ru": "rus"}


def truth_table(archive: Path, run: Path, l2: str) -> Path:
    """The archive's truth for en-l2 in the project's format (shortlist and replay read it)."""
    import pandas as pd

    name = "pairs.tsv" if l2 == "fr" else f"pairs_en-{l2}.tsv"
    truth = pd.read_csv(archive / "truth" / name, sep="\t", dtype=str, keep_default_na=False, quoting=3)
    out = run / "truth_pairs.parquet"
    pd.DataFrame({"host": truth["host"], "src_url": truth["en_url"], "trg_url": truth["fr_url"],
                  "src_lang": "eng", "trg_lang": LANG_NAMES[l2], "class": truth["class"]}).to_parquet(out, index=False)
    return out


def steps(archive: Path, run: Path, l2: str, positives: Path, truth: Path) -> list[tuple[str, list[str]]]:
    """The walk-through, in the order that works (documents before ranking: their links propose pairs)."""
    langs, models = f"en,{l2}", run / "models"
    return [
        ("scan-cdx", ["--root", run, "--cdx", archive / "indexes", "--langs", langs]),
        ("bucket-handles", ["--root", run, "--langs", langs]),
        ("train-url2lang", ["--urls", run / "urls", "--out", models / "url2lang"]),
        ("train-pairs", ["--positives", positives, "--out", models / "pairs"]),
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="run folder (created; steps already done are reused)")
    parser.add_argument("--archive", default=str(DEFAULT_ARCHIVE), help="the real-sites archive folder")
    parser.add_argument("--l2", default="fr", choices=sorted(LANG_NAMES), help="the language paired with English")
    parser.add_argument("--positives", default=str(DEFAULT_POSITIVES), help="positive URL pairs for train-pairs")
    parser.add_argument("--only", help="comma-separated steps to run (default: all)")
    args = parser.parse_args(argv)
    archive, run = Path(args.archive).resolve(), Path(args.out).resolve()
    if not (archive / "score.py").exists():
        print(f"no real-sites archive at {archive}", file=sys.stderr)
        return 2
    (run / "logs").mkdir(parents=True, exist_ok=True)
    truth = truth_table(archive, run, args.l2)
    only = set(args.only.split(",")) if args.only else None
    log = run / "logs" / "steps.tsv"
    if not log.exists():
        log.write_text("step\trc\tseconds\n")  # the header the archive's scorer reads
    with log.open("a") as steps_log:
        for number, (step, arguments) in enumerate(steps(archive, run, args.l2, Path(args.positives), truth), 1):
            if only and step not in only:
                continue
            print(f"[{number}/11] parascout {step}", flush=True)
            started = time.monotonic()
            rc = subprocess.call([sys.executable, "-m", "parascout.jobs.cli", step, *map(str, arguments)])
            steps_log.write(f"{step}\t{rc}\t{round(time.monotonic() - started)}\n")
            steps_log.flush()
    score = [sys.executable, str(archive / "score.py"), str(archive), str(run), "--json", str(run / "scores.json")]
    if args.l2 != "fr":
        score += ["--l2", args.l2]
    return subprocess.call(score)


if __name__ == "__main__":
    sys.exit(main())
