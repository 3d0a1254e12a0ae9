"""rank-pairs with and without link evidence on sample archives: aligned precision / recall against the truth.

Per archive (a full sample archive: WARC + WAT; `eval_replay_sample.test_archive`), `urls` from its columnar
index and `docs` from its WAT files (outlinks with their language cues `outlink_cues`, image names; no
paragraph profiles), then `rank-pairs` (this tree's defaults) in a local[2] Spark session for the --pairs
language pairs with the most switcher-linked true pairs with different numeric ids (the generator's `ids`
convention: what the URL model cannot pair). Its `alignment` is compared with the alignment of the same
scored pairs by the URL score alone (`ranking.align_group` with no link log-odds, the cut-off and
cross-group rule of the job: what rank-pairs aligned before link evidence). Prints per language pair and
pooled: true pairs kept in scored_pairs, precision / recall of the 1-1 alignment against
truth/pairs.parquet, and the share of switcher-linked different-id true pairs that end up aligned.

    .venv/bin/python benchmarks/eval_rank_pairs_sample.py --seed 42 --fit      # fit LINK_EVIDENCE_WEIGHTS
    .venv/bin/python benchmarks/eval_rank_pairs_sample.py --seed 7,1234,99     # held out

--fit prints the offset logistic regression of `ranking.fit_link_weights` on the candidate pairs of the
with-links runs (URL score on the alignment scale as the offset); paste it into udfs/rank/ranking.py. Models:
--models DIR with url2lang/ and pairs/ (default: eval_replay_sample's 200-host models, trained if missing).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import pandas as pd
import pyarrow.parquet as pq
from bench_rank_pairs import archive_urls_table, run_rank_pairs, spark_session
from eval_replay_sample import test_archive, train_models

from parascout.udfs.rank import ranking
from parascout.udfs.rank.url_models import model_metadata


def archive_docs(archive: Path) -> pd.DataFrame:
    """docs rows (url, host, status, outlinks, outlink_cues, images) from the archive's WAT files."""
    from parascout.udfs.index.wat import read_wat

    rows = []
    for path in sorted((archive / "wat").glob("*.wat.gz")):
        with open(path, "rb") as stream:
            rows.extend(read_wat(stream))
    return pd.DataFrame(rows)[["url", "host", "status", "outlinks", "outlink_cues", "images"]]


def write_root(archive: Path, root: Path) -> None:
    """`urls` and `docs` of an archive under a dataset root (once)."""
    if (root / "docs" / "_SUCCESS").exists():
        return
    for table, frame in (("urls", archive_urls_table(archive).to_pandas()), ("docs", archive_docs(archive))):
        (root / table).mkdir(parents=True, exist_ok=True)
        frame.to_parquet(root / table / "part-00000.parquet", index=False)
        (root / table / "_SUCCESS").write_text("")


def gold_pairs(truth: pd.DataFrame, langs: tuple[str, str]) -> pd.DataFrame:
    """True pairs of a language pair oriented src = langs[0], with their convention and switcher flag."""
    forward = truth[(truth["src_lang"] == langs[0]) & (truth["trg_lang"] == langs[1])]
    backward = truth[(truth["src_lang"] == langs[1]) & (truth["trg_lang"] == langs[0])].rename(
        columns={"src_url": "trg_url", "trg_url": "src_url"})
    gold = pd.concat([forward, backward], ignore_index=True)
    gold["style"] = [c.split("+")[1] if "+" in c else "marker-only" for c in gold["convention"]]
    return gold[["src_url", "trg_url", "style", "switcher_linked"]]


def url_only_alignment(root: Path, metadata: dict, min_score: float) -> pd.DataFrame:
    """The job's alignment of its scored pairs by the URL score alone: per (host, group_key) `ranking.align_group`
    without link log-odds, then the best-scored source per target across groups (as rank-pairs resolves them)."""
    scored = pd.read_parquet(root / "scored_pairs").assign(link_log_odds=0.0)
    aligned = pd.concat([ranking.align_group(group, min_score, metadata)
                         for _, group in scored.groupby(["host", "group_key"])], ignore_index=True)
    return aligned.sort_values(["score", "src_url"], ascending=[False, True]).drop_duplicates("trg_url")


def quality(scored: pd.DataFrame, aligned: pd.DataFrame, gold: pd.DataFrame, urls: set[str]) -> dict:
    """Recall of the true pairs whose two URLs are ranked (in `urls`), precision of the alignment."""
    gold = gold[gold["src_url"].isin(urls) & gold["trg_url"].isin(urls)]
    keys = set(zip(gold["src_url"], gold["trg_url"]))
    scored_keys, aligned_keys = set(zip(scored["src_url"], scored["trg_url"])), set(zip(aligned["src_url"],
                                                                                         aligned["trg_url"]))
    in_scored = pd.Series([p in scored_keys for p in zip(gold["src_url"], gold["trg_url"])], index=gold.index)
    in_aligned = pd.Series([p in aligned_keys for p in zip(gold["src_url"], gold["trg_url"])], index=gold.index)
    ids_linked = (gold["style"] == "ids") & gold["switcher_linked"]
    hits = sum(p in keys for p in zip(aligned["src_url"], aligned["trg_url"]))
    return {"true_pairs": len(gold), "aligned": len(aligned), "aligned_true": hits,
            "ids_switcher_pairs": int(ids_linked.sum()), "ids_switcher_aligned": int(in_aligned[ids_linked].sum()),
            "kept_in_scored": int(in_scored.sum())}


def summarise(rows: pd.DataFrame) -> pd.DataFrame:
    sums = rows.groupby("run")[["true_pairs", "aligned", "aligned_true", "ids_switcher_pairs", "ids_switcher_aligned",
                                "kept_in_scored", "candidates", "cartesian"]].sum()
    sums = sums.reindex(["url_only", "links"])
    return pd.DataFrame({
        "precision": (sums["aligned_true"] / sums["aligned"]).round(4),
        "recall": (sums["aligned_true"] / sums["true_pairs"]).round(4),
        "ids_switcher_aligned": (sums["ids_switcher_aligned"] / sums["ids_switcher_pairs"]).round(4),
        "ids_switcher_pairs": sums["ids_switcher_pairs"],
        "kept_in_scored": (sums["kept_in_scored"] / sums["true_pairs"]).round(4),
        "candidates_vs_cartesian": (sums["candidates"] / sums["cartesian"]).round(4),
        "true_pairs": sums["true_pairs"]})


def fit_rows(root: Path, gold: pd.DataFrame, model_dir: str) -> pd.DataFrame:
    """The with-links run's scored pairs with their URL score on the alignment scale and a true-pair label."""
    metadata = model_metadata(model_dir)
    scored = pd.read_parquet(root / "scored_pairs")
    scored["align_url_score"] = pd.concat([
        pd.Series(ranking.alignment_url_scores(group, metadata), index=group.index)
        for _, group in scored.groupby(["host", "group_key"])])
    keys = set(zip(gold["src_url"], gold["trg_url"]))
    scored["label"] = [p in keys for p in zip(scored["src_url"], scored["trg_url"])]
    return scored


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", default="42", help="archive seeds, comma-separated, pooled")
    parser.add_argument("--pairs", type=int, default=2, help="language pairs per archive (most switcher-linked "
                        "different-id true pairs first)")
    parser.add_argument("--fit", action="store_true", help="fit the link evidence weights on these archives")
    parser.add_argument("--work", default="/tmp/eval-url-models-sample", help="archives and models (shared with "
                        "eval_replay_sample.py)")
    parser.add_argument("--models", help="a folder with url2lang/ and pairs/ (default: the 200-host models)")
    args = parser.parse_args(argv)
    work = Path(args.work)
    lang_model, pair_model = ((f"{args.models}/url2lang", f"{args.models}/pairs") if args.models
                              else train_models(work, 200, 242, 3.0))
    models = {"lang": lang_model, "pairs": pair_model}
    metadata = model_metadata(pair_model)
    spark = spark_session()
    rows, fitting = [], []
    for seed in (int(s) for s in args.seed.split(",")):
        archive = test_archive(work, 60, seed)
        data = work / f"rank-pairs-{seed}"
        write_root(archive, data)
        truth = pd.read_parquet(archive / "truth" / "pairs.parquet")
        urls = pq.read_table(data / "urls", columns=["url"]).column("url").to_pylist()
        ranked = set(urls)
        ids_linked = truth["convention"].str.endswith("+ids") & truth["switcher_linked"]
        counts = truth.assign(key=[tuple(sorted(p)) for p in zip(truth["src_lang"], truth["trg_lang"])],
                              ids_linked=ids_linked).groupby("key")["ids_linked"].sum().sort_values(ascending=False)
        for langs in counts.index[:args.pairs]:
            gold = gold_pairs(truth, langs)
            root = work / f"rank-pairs-{seed}-{'-'.join(langs)}"
            root.mkdir(parents=True, exist_ok=True)
            for table in ("urls", "docs"):
                if not (root / table).exists():
                    (root / table).symlink_to(data / table)
            report, _ = run_rank_pairs(spark, root, ",".join(langs), models)
            metrics = report["metrics"]
            scored = pd.read_parquet(root / "scored_pairs", columns=["src_url", "trg_url"])
            alignments = {"links": pd.read_parquet(root / "alignment", columns=["src_url", "trg_url"]),
                          "url_only": url_only_alignment(root, metadata, metrics["align_min_score"]["value"])}
            for run, aligned in alignments.items():
                row = {"seed": seed, "langs": "-".join(langs), "run": run,
                       "candidates": metrics["pairs_after_dedup"], "cartesian": metrics["cartesian_pairs"],
                       "candidates_per_source": json.dumps(metrics["candidates_per_source"]),
                       "job_s": report["seconds"], **quality(scored, aligned, gold, ranked)}
                rows.append(row)
                print(json.dumps(row), flush=True)
            if args.fit:
                fitting.append(fit_rows(root, gold, pair_model))
    spark.stop()
    frame = pd.DataFrame(rows)
    frame.to_csv(work / f"eval-rank-pairs-{args.seed.replace(',', '-')}.csv", index=False)
    print(frame.drop(columns=["candidates_per_source"]).to_string(index=False))
    print(f"\npooled over seeds {args.seed}:\n{summarise(frame).to_string()}")
    if fitting:
        pooled = pd.concat(fitting, ignore_index=True)
        weights = ranking.fit_link_weights(pooled, pooled["align_url_score"], pooled["label"])
        print(f"\nLINK_EVIDENCE_WEIGHTS fitted on {len(pooled)} pairs ({int(pooled['label'].sum())} true): {weights}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
