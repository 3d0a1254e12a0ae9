"""discover-sites against the sample archive's truth: precision / recall at top-k of the sites holding a pair.

For each seed: make-sample-archive (default mix), scan-cdx, fetch-docs --wat (the link graph and its language
cues only: no WARC payload is parsed), then discover-sites per language pair with the docs (index languages,
URL markers, switcher links) and without them (--use-docs no), and once more on a copy of the root whose
`urls` have no language (as CommonCrawl's indexes before 2018 have none): URL markers and switcher links
alone. A site is relevant when truth/hosts.parquet gives one of its hosts both languages. Baseline in the same
run: the hosts table alone (`is_candidate`: the index shows both languages), ranked by the smaller side.
Nothing here was tuned: the score is fixed (one point per kind of evidence + balance).

    .venv/bin/python benchmarks/eval_discover_sites.py [--seeds 42,7,1234] [--hosts 60]
        [--pairs en-fr,en-de,en-es,en-is,fr-de] [--out /tmp/eval-discover-sites]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from parascout.jobs.base import Job
from parascout.jobs.cli import discover
from parascout.udfs.common import table_layout
from parascout.udfs.common.langs import to_iso639_3
from parascout.udfs.common.sites import site_of
from parascout.udfs.common.urls import registered_domain
from parascout.udfs.index.site_discovery import precision_recall_at

KS = (10, 20)


def run(registry, spark, name: str, argv: list[str]) -> dict:
    started = time.process_time()
    report = registry[name]().use_spark(spark).run(argv)
    print(f"  {name} {' '.join(argv[-4:])}: {report.get('seconds')} s ({time.process_time() - started:.1f} driver "
          f"CPU-s)", flush=True)
    return report


def index_baseline(root: Path, pair: tuple[str, str], relevant: set[str]) -> dict:
    """Sites whose index shows both languages, ranked by the smaller side (the hosts table alone)."""
    from parascout.udfs.common.langs import language_markers

    hosts = pd.read_parquet(table_layout.table_location(str(root / "hosts")), columns=["host", "domain", "lang_counts"])
    markers = language_markers(pair)
    hosts["site"] = [site_of(h, d, markers) for h, d in zip(hosts.host, hosts.domain)]
    hosts["src"] = [dict(counts).get(pair[0], 0) for counts in hosts.lang_counts]
    hosts["trg"] = [dict(counts).get(pair[1], 0) for counts in hosts.lang_counts]
    sites = hosts.groupby("site")[["src", "trg"]].sum()
    sites = sites[(sites.src > 0) & (sites.trg > 0)]
    ranked = sites.assign(side=sites.min(axis=1)).sort_values("side", ascending=False).index.tolist()
    return precision_recall_at(ranked, relevant, KS)


def relevant_sites(archive: Path, pair: tuple[str, str]) -> set[str]:
    from parascout.udfs.common.langs import language_markers

    truth = pd.read_parquet(archive / "truth" / "hosts.parquet", columns=["host", "languages"])
    markers = language_markers(pair)
    return {site_of(host, registered_domain(host), markers) for host, langs in zip(truth.host, truth.languages)
            if set(pair) <= set(langs)}


def without_languages(root: Path) -> Path:
    """A copy of the root whose urls have no language column values (docs shared as they are)."""
    import shutil

    from parascout.udfs.common import storage

    copy = root.parent / "root-no-languages"
    if not (copy / "docs").exists():
        shutil.rmtree(copy, ignore_errors=True)
        urls = pd.read_parquet(table_layout.table_location(str(root / "urls")), columns=["url", "host", "domain"])
        storage.write_parquet_table(urls.assign(lang=pd.Series(pd.NA, index=urls.index, dtype="string")),
                                    str(copy / "urls"))
        shutil.copytree(root / "docs", copy / "docs")
    return copy


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="42,7,1234")
    parser.add_argument("--hosts", type=int, default=60)
    parser.add_argument("--pairs", default="en-fr,en-de,en-es,en-is,fr-de")
    parser.add_argument("--out", default="/tmp/eval-discover-sites")
    parser.add_argument("--variants", default="all,index,nolang,baseline",
                        help="all: all evidence; index: --use-docs no; nolang: urls without languages; baseline")
    args = parser.parse_args(argv)
    registry, spark = discover(), Job().spark
    pairs = [tuple(to_iso639_3(code) for code in pair.split("-")) for pair in args.pairs.split(",")]
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        archive, root = Path(args.out) / f"seed{seed}" / "archive", Path(args.out) / f"seed{seed}" / "root"
        if not (archive / "truth" / "hosts.parquet").exists():
            run(registry, spark, "make-sample-archive", ["--out", str(archive), "--hosts", str(args.hosts), "--seed",
                                                         str(seed), "--no-progress", "--workers", "1"])
        run(registry, spark, "scan-cdx", ["--root", str(root), "--cdx", str(archive / "indexes")])
        run(registry, spark, "fetch-docs", ["--root", str(root), "--wat", str(archive / "wat")])
        for pair in pairs:
            relevant = relevant_sites(archive, pair)
            truth = str(archive / "truth" / "hosts.parquet")
            langs = ",".join(pair)
            chosen = args.variants.split(",")
            variants = [("all", "all evidence", root, []), ("index", "index only", root, ["--use-docs", "no"]),
                        ("nolang", "no index languages", without_languages(root), [])]
            for _, variant, where, extra in (v for v in variants if v[0] in chosen):
                report = run(registry, spark, "discover-sites", ["--root", str(where), "--langs", langs, "--truth",
                                                                 truth, "--force", *extra])
                rows.append({"seed": seed, "pair": langs, "variant": variant, **report["metrics"]["evaluation"]})
            if "baseline" in chosen:
                rows.append({"seed": seed, "pair": langs, "variant": "hosts table baseline",
                             **index_baseline(root, pair, relevant)})
            for row in rows[-len(chosen):]:
                print(f"    {row['variant']:<22} relevant {row['sites_relevant']:>3}  " + "  ".join(
                    f"{key} {row[key] if row[key] is None else round(row[key], 3)}"
                    for key in ("precision_at_r", "precision_at_10", "recall_at_10")), flush=True)
    table = pd.DataFrame(rows)
    columns = ["sites_relevant", "precision_at_10", "recall_at_10", "precision_at_20", "recall_at_20",
               "precision_at_r", "recall_at_r"]
    pd.set_option("display.width", 200)
    print(table[["seed", "pair", "variant", *columns]].to_string(index=False, float_format="%.3f"))
    pooled = table.assign(hits=table.precision_at_r * table.sites_relevant).groupby("variant").agg(
        relevant=("sites_relevant", "sum"), hits=("hits", "sum"))
    pooled["r_precision"] = pooled.hits / pooled.relevant
    print("\npooled over seeds and pairs: precision at r (= recall at r, r = the relevant sites of each pair)")
    print(pooled.to_string(float_format="%.3f"))


if __name__ == "__main__":
    sys.exit(main())
