"""Quality of verify-pairs on a real-text sample archive: STRAND's Table 3 redone, without labels.

Builds (or reuses) a `make-sample-archive --text-corpus` archive, runs scan-cdx and fetch-docs
(`docs`, `texts`), then the pairs to verify. `--candidates pipeline` (the default; what a user
gets): per language pair eng–X, bucket-handles and rank-pairs as `make demo` runs them (a pair
model trained once on a host-disjoint archive of seed PAIR_MODEL_SEED), their `scored_pairs`
together; recall is then bounded by what rank-pairs proposes. `--candidates synthetic` (cheaper,
no URL model; verification alone): language-switcher links between fetched pages (source 'link'),
every true pair (source 'similar'), each hard negative page against its original's partner, and
random same-site pairs, all eng–X. For each lexicon setting (the Bible, or bootstrapped
from the archive by train-lexicon --from-archive) verify-pairs runs with its default decision, and
the verified_pairs features give: the default (no labels), structure only (STRAND dp/p rule), tsim
only (tsim above the random same-site pairs' 99th percentile) and the combination, each aligned 1-1,
scored against the true pairs whose both pages were fetched, per language pair. A near-duplicate
capture (truth/pages.parquet duplicate_of) stands for the page it copies: the pair it makes with
its original's partner is that true pair, once.

    .venv/bin/python benchmarks/eval_verify.py --seed 42 --hosts 12 [--out /tmp/eval-verify] \
        [--candidates pipeline|synthetic] [--lexicons bible,bootstrap] [--reuse]

`--pool DIR [DIR ...]` runs nothing: it sums the counts of earlier runs' eval_verify.json (each DIR a seed's folder,
e.g. /tmp/eval-verify/seed42) per setting, decision and language pair, and checks the bootstrap target on the pooled
default decision: the bootstrapped lexicon's precision and recall within TARGET_POINTS of the Bible's per language
pair. A language pair has a few dozen true pairs per 12-host archive, so one error moves a seed's figure by 2-8 points;
pooled over seeds, a figure moves by well under one.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parascout.jobs.base import Job
from parascout.jobs.cli import discover
from parascout.jobs.errors import ConfigError
from parascout.udfs.common import storage, table_layout
from parascout.udfs.rank.alignment import alignment_scores, evaluate_alignment
from parascout.udfs.verify.decision import one_to_one
from parascout.udfs.verify.verification import NULL_QUANTILE

BIBLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "parallel-text" / "bible"
TARGETS = ("fra", "deu", "ara", "zho", "eus")
#: the archive the pair model of `--candidates pipeline` learns from (host-disjoint from every evaluated seed)
PAIR_MODEL_SEED = 5000
#: the bootstrap target: the bootstrapped lexicon's pooled precision and recall per language pair within this of the Bible's
TARGET_POINTS = 0.03
ISO1 = {"eng": "en", "fra": "fr", "deu": "de", "ara": "ar", "zho": "zh", "eus": "eu"}


def read(root: Path, table: str, columns: list[str] | None = None) -> pd.DataFrame:
    return pd.read_parquet(table_layout.table_location(str(root / table)), columns=columns)


def run(registry, spark, name: str, argv: list[str]) -> dict:
    started = time.process_time()
    report = registry[name]().use_spark(spark).run(argv)
    print(f"  {name}: {report.get('seconds')} s ({time.process_time() - started:.1f} driver CPU-s)", flush=True)
    return report


def build_candidates(root: Path, archive: Path, randoms: int, seed: int) -> pd.DataFrame:
    """eng–X candidate pairs: switcher links, true pairs, hard negatives, random same-site pairs."""
    docs = read(root, "docs", columns=["url", "host", "status", "cld2_lang", "outlinks"])
    docs = docs[docs.status == "ok"]
    lang = dict(zip(docs.url, docs.cld2_lang))
    truth = pd.read_parquet(archive / "truth" / "pairs.parquet")
    pages = pd.read_parquet(archive / "truth" / "pages.parquet", columns=["url", "lang", "negative_of"])
    rows = []

    def add(host, a, b, source):
        la, lb = lang.get(a), lang.get(b)
        if la is None or lb is None:
            return
        if la == "eng" and lb in TARGETS:
            rows.append((host, a, b, "eng", lb, source))
        elif lb == "eng" and la in TARGETS:
            rows.append((host, b, a, "eng", la, source))

    for host, url, links in zip(docs.host, docs.url, docs.outlinks):
        for link in set(links if links is not None else []):
            if link in lang and link != url:
                add(host, url, link, "link")
    partners: dict[str, list[str]] = {}
    for host, a, b in zip(truth.host, truth.src_url, truth.trg_url):
        add(host, a, b, "similar")
        partners.setdefault(a, []).append(b)
        partners.setdefault(b, []).append(a)
    for url, original in zip(pages.url, pages.negative_of):
        for partner in partners.get(original, []) if original else []:
            add(docs.host[docs.url == url].iloc[0] if url in lang else None, url, partner, "similar")
    rng = random.Random(seed)
    by_host = docs.groupby("host").url.apply(list).to_dict()
    for host, urls in by_host.items():
        for url in urls:
            for _ in range(randoms):
                add(host, url, rng.choice(urls), "similar")
    frame = pd.DataFrame(rows, columns=["host", "src_url", "trg_url", "src_lang", "trg_lang", "source"])
    frame = frame[frame.src_url != frame.trg_url]
    return (frame.groupby(["host", "src_url", "trg_url", "src_lang", "trg_lang"], as_index=False)
            .agg(source=("source", lambda s: ",".join(sorted(set(s))))))


def pipeline_candidates(registry, spark, root: Path, out: Path, langs: str) -> pd.DataFrame:
    """scored_pairs of bucket-handles + rank-pairs for every eng–X pair, with a pair model trained once."""
    models = out / "models"
    if not (models / "pairs").exists():
        training = models / "archive"
        run(registry, spark, "make-sample-archive", ["--out", str(training), "--hosts", "60", "--seed",
                                                     str(PAIR_MODEL_SEED), "--cdx-only", "--text-corpus", str(BIBLE),
                                                     "--langs", langs, "--no-progress"])
        run(registry, spark, "train-pairs", ["--positives", str(training / "truth" / "pairs.parquet"), "--out",
                                             str(models / "pairs"), "--max-epochs", "6", "--threads", "2",
                                             "--max-minutes", "10"])
    frames = []
    for target in TARGETS:
        pair = f"en,{ISO1[target]}"
        run(registry, spark, "bucket-handles", ["--root", str(root), "--langs", pair, "--force"])
        run(registry, spark, "rank-pairs", ["--root", str(root), "--langs", pair, "--pair-model", str(models / "pairs"),
                                            "--force"])
        frames.append(read(root, "scored_pairs"))
    return pd.concat(frames, ignore_index=True)


def gold_pairs(root: Path, archive: Path) -> set[tuple[str, str]]:
    """True eng–X pairs (eng first) whose both pages were fetched."""
    docs = read(root, "docs", columns=["url", "status"])
    fetched = set(docs.url[docs.status == "ok"])
    truth = pd.read_parquet(archive / "truth" / "pairs.parquet")
    gold = set()
    for a, b, la, lb in zip(truth.src_url, truth.trg_url, truth.src_lang, truth.trg_lang):
        if a in fetched and b in fetched:
            if la == "eng" and lb in TARGETS:
                gold.add((a, b))
            elif lb == "eng" and la in TARGETS:
                gold.add((b, a))
    return gold


def variants(verified: pd.DataFrame, null: float) -> dict[str, pd.DataFrame]:
    """The accepted pairs of each decision, each aligned 1-1 (best p / score first)."""
    judged = verified[~verified.reason.isin(["missing_src_doc", "missing_trg_doc", "failed_src_doc",
                                             "failed_trg_doc", "lang_mismatch"])].copy()

    def aligned(accept, score):
        frame = judged.assign(parallel=accept.to_numpy(), p_parallel_content=score.to_numpy())
        frame = frame.assign(src_key=frame.src_url, trg_key=frame.trg_url)
        result = pd.concat([one_to_one(g) for _, g in frame.groupby(["host", "trg_lang"])], ignore_index=True)
        return result[result.parallel]

    tsim_idf, structure = judged.tsim_idf.fillna(0), judged.structure_ok.fillna(False).astype(bool)
    return {"default (no labels)": verified[verified.parallel],
            "structure only (dp < 0.2, p < 0.05)": aligned(structure, 1 - judged.dp.fillna(1)),
            "tsim only (STRAND's 0.44)": aligned(judged.tsim.fillna(0) > 0.44, judged.tsim.fillna(0)),
            f"tsim_idf only (> random pairs' q{NULL_QUANTILE})": aligned(tsim_idf > null, tsim_idf),
            "structure and tsim_idf": aligned(structure & (tsim_idf > null), tsim_idf)}


def canonical_urls(archive: Path) -> dict[str, str]:
    """Near-duplicate capture URL -> the URL of the page it copies (truth/pages.parquet)."""
    pages = pd.read_parquet(archive / "truth" / "pages.parquet", columns=["url", "duplicate_of"])
    pages = pages[pages.duplicate_of.notna()]
    return dict(zip(pages.url, pages.duplicate_of))


def evaluate(verified: pd.DataFrame, gold: set, null: float, lang: dict[str, str], canonical: dict[str, str]
             ) -> dict:
    table = {}
    for name, accepted in variants(verified, null).items():
        accepted = accepted.assign(src_url=accepted.src_url.map(lambda url: canonical.get(url, url)),
                                   trg_url=accepted.trg_url.map(lambda url: canonical.get(url, url)))
        scores = {"all": evaluate_alignment(zip(accepted.src_url, accepted.trg_url), gold)}
        for target in TARGETS:
            subset = accepted[accepted.trg_lang == target]
            scores[target] = evaluate_alignment(zip(subset.src_url, subset.trg_url),
                                                {(a, b) for a, b in gold if lang.get(b) == target})
        table[name] = scores
    return table


def pooled(folders: list[Path]) -> dict:
    """{setting: {decision: {pair: {gold, predicted, correct, precision, recall, f1}}}} summed over the folders'
    eval_verify.json."""
    sums: dict = {}
    for folder in folders:
        results = json.loads((folder / "eval_verify.json").read_text())
        for setting, value in results.items():
            if not isinstance(value, dict) or "quality" not in value:
                continue
            for decision, scores in value["quality"].items():
                for pair, counts in scores.items():
                    total = sums.setdefault(setting, {}).setdefault(decision, {}).setdefault(
                        pair, {"gold": 0, "predicted": 0, "correct": 0})
                    for key in total:
                        total[key] += counts[key]
    return {setting: {decision: {pair: alignment_scores(**total) for pair, total in scores.items()}
                      for decision, scores in decisions.items()} for setting, decisions in sums.items()}


def print_pooled(folders: list[Path]) -> None:
    """The pooled table of `pooled`, and the bootstrap-vs-Bible check of the default decision per language pair."""
    sums = pooled(folders)
    print(f"pooled over {len(folders)} runs: {', '.join(str(folder) for folder in folders)}")
    for setting, decisions in sums.items():
        for decision, scores in decisions.items():
            line = " ".join(f"{pair} P{v['precision']:.3f}/R{v['recall']:.3f}" for pair, v in scores.items())
            print(f"{setting:16s} {decision:45s} {line}")
    default = "default (no labels)"
    if default not in sums.get("bible", {}) or default not in sums.get("bootstrap", {}):
        return
    bible, bootstrap = sums["bible"][default], sums["bootstrap"][default]
    within = 0
    for pair in TARGETS:
        ok = all(bootstrap[pair][key] >= bible[pair][key] - TARGET_POINTS for key in ("precision", "recall"))
        within += ok
        print(f"{pair}: bootstrap P{bootstrap[pair]['precision']:.3f}/R{bootstrap[pair]['recall']:.3f} vs Bible "
              f"P{bible[pair]['precision']:.3f}/R{bible[pair]['recall']:.3f} ({bible[pair]['gold']} true pairs): "
              f"{'within' if ok else 'NOT within'} {TARGET_POINTS * 100:.0f} points")
    print(f"language pairs within {TARGET_POINTS * 100:.0f} points of the Bible, pooled: {within} of {len(TARGETS)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--hosts", type=int, default=12)
    parser.add_argument("--pages-per-host", type=int, default=120)
    parser.add_argument("--random-candidates", type=int, default=2, help="random same-site candidates per page")
    parser.add_argument("--out", default="/tmp/eval-verify")
    parser.add_argument("--lexicons", default="bible,bootstrap", help="bible, bootstrap or both")
    parser.add_argument("--candidates", choices=["pipeline", "synthetic"], default="pipeline",
                        help="pipeline: bucket-handles + rank-pairs' scored_pairs; synthetic: links, true pairs, "
                             "hard negatives and random pairs (cheaper, verification alone)")
    parser.add_argument("--bootstrap-rounds", type=int, default=2,
                        help="bootstrapped lexicon: train-lexicon --from-archive, verify-pairs, then train again "
                             "with --with-verified-pairs and verify (2 rounds) ...")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse the archive, docs and texts an earlier run of this seed left under --out")
    parser.add_argument("--pool", nargs="+", metavar="DIR",
                        help="run nothing: pool the eval_verify.json of these seed folders (see the module doc)")
    args = parser.parse_args(argv)
    if args.pool:
        print_pooled([Path(folder) for folder in args.pool])
        return
    out = Path(args.out) / f"seed{args.seed}"
    archive, root = out / "archive", out / "root"
    registry = discover()
    spark = Job().spark
    langs = ",".join(ISO1[code] for code in ("eng", *TARGETS))
    if not (args.reuse and table_layout.table_location(str(root / "texts"))):
        run(registry, spark, "make-sample-archive", ["--out", str(archive), "--hosts", str(args.hosts), "--seed",
                                                     str(args.seed), "--text-corpus", str(BIBLE), "--langs", langs,
                                                     "--pages-per-host", str(args.pages_per_host), "--no-progress"])
        run(registry, spark, "scan-cdx", ["--root", str(root), "--cdx", str(archive / "indexes")])
        run(registry, spark, "fetch-docs", ["--root", str(root), "--warc-prefix", str(archive) + "/",
                                            "--select", "all"])
    if args.candidates == "pipeline":
        candidates = pipeline_candidates(registry, spark, root, Path(args.out), langs)
        storage.write_parquet_table(candidates, str(root / "scored_pairs"))
    else:
        candidates = build_candidates(root, archive, args.random_candidates, args.seed)
        storage.write_parquet_table(candidates, str(root / "candidates"))
    gold = gold_pairs(root, archive)
    docs = read(root, "docs", columns=["url", "cld2_lang"])
    lang = dict(zip(docs.url, docs.cld2_lang))
    results = {"seed": args.seed, "hosts": args.hosts, "candidates": len(candidates), "gold": len(gold),
               "candidate_mode": args.candidates, "candidate_recall": round(len(gold & set(zip(
                   candidates.src_url, candidates.trg_url))) / max(1, len(gold)), 4)}
    print(f"candidates ({args.candidates}) {len(candidates)} (sources {candidates.source.value_counts().to_dict()}), "
          f"gold {len(gold)}, gold among the candidates {results['candidate_recall']}")
    table = "scored_pairs" if args.candidates == "pipeline" else "candidates"
    for setting in args.lexicons.split(","):
        rounds = args.bootstrap_rounds if setting == "bootstrap" else 1
        for round_number in range(1, rounds + 1):
            lexicon_args, cpu = [], {}
            for target in TARGETS:
                # the Bible lexicons do not depend on the archive: trained once for all seeds
                folder = (Path(args.out) if setting == "bible" else out) / f"lexicon-{setting}-{target}"
                source = (["--aligned", str(BIBLE)] if setting == "bible" else
                          ["--from-archive", str(root), *(["--with-verified-pairs"] if round_number > 1 else [])])
                if setting != "bible" or not (folder / "parascout_lexicon.json").exists():
                    try:
                        run(registry, spark, "train-lexicon", ["--langs", f"en,{ISO1[target]}", "--out",
                                                               str(folder), *source, "--force"])
                    except ConfigError as error:  # the archive taught this language pair nothing (no text pairs)
                        if setting == "bible":
                            raise
                        print(f"  {setting} eng–{target}: no lexicon ({error}); verify-pairs judges it without one")
                        cpu[target] = {"no_lexicon": str(error)}
                        continue
                metadata = json.loads((folder / "parascout_lexicon.json").read_text())
                cpu[target] = {"cpu_s": metadata["training_cpu_seconds"], **metadata["sizes"]}
                lexicon_args += ["--lexicon", str(folder)]
            report = run(registry, spark, "verify-pairs", ["--root", str(root), "--pairs", table, *lexicon_args,
                                                           "--force"])
            verified = read(root, "verified_pairs")
            null = report["metrics"]["self_labels"]["null_tsim_idf_quantile"]
            name = setting if rounds == 1 or round_number == rounds else f"{setting}-round{round_number}"
            results[name] = {"lexicon_training_cpu_s": cpu, "self_labels": report["metrics"]["self_labels"],
                             "verify_seconds": report["seconds"],
                             "quality": evaluate(verified, gold, null, lang, canonical_urls(archive))}
            for variant, scores in results[name]["quality"].items():
                line = " ".join(f"{k} P{v['precision']:.3f}/R{v['recall']:.3f}" for k, v in scores.items())
                print(f"{name:16s} {variant:45s} {line}")
    (out / "eval_verify.json").write_text(json.dumps(results, indent=2, default=str))
    print(f"wrote {out / 'eval_verify.json'}")


if __name__ == "__main__":
    main()
