"""Where a replayed crawl's fetches go before it reaches 80% of a site's parallel documents.

Replays bfs and the given policies on every (site, language pair) of sample archives that
`eval_replay_sample.py` generated under --work (same archives, same cached 200-host models), and
sorts each policy's fetches before its 80% point by what the archive's truth says they were:
parallel (half of a true pair of the language pair), untranslated pages of the pair's smaller /
larger language (by archived pages on the site), listings (home, section and listing pages that are
not parallel), pages in another language or none, pages missing from the archive. Each share is
per bfs fetch-to-80, averaged over the site-pairs where bfs reached 80%: the parts add up to the
mean (not the median) fetches-to-80 ratio.

    .venv/bin/python benchmarks/replay_waste.py --seed 42,5 --policies smart+site,oracle --work /tmp/replay/work

Tuning seeds only: the per-page view is the kind of error a held-out seed must not be looked at with.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import numpy as np
import pandas as pd
from eval_replay_sample import archive_docs, site_pairs

from parascout.udfs.replay import build_graph, build_truth, make_policy, simulate
from parascout.udfs.replay.batch import model_scorers
from parascout.udfs.replay.graph import url_key

CATEGORIES = ("parallel", "untranslated_smaller", "untranslated_larger", "listing", "other_language", "missing")
HUB_KINDS = frozenset({"home", "section", "listing"})


def fetch_categories(graph, truth_index, order: list[int], langs: tuple[str, str], page_kinds: dict) -> list[str]:
    """One of CATEGORIES per fetched page, from the archive's truth (page kinds by URL key)."""
    counts = {lang: sum(1 for page_lang in graph.langs[: graph.n_docs] if page_lang == lang) for lang in langs}
    smaller = min(langs, key=lambda lang: (counts[lang], lang))
    categories = []
    for node in order:
        lang = graph.langs[node] if node < graph.n_docs else None
        if node >= graph.n_docs:
            categories.append("missing")
        elif truth_index.partners[node]:
            categories.append("parallel")
        elif lang not in langs:
            categories.append("other_language")
        elif page_kinds.get(url_key(graph.urls[node])) in HUB_KINDS:
            categories.append("listing")
        else:
            categories.append("untranslated_smaller" if lang == smaller else "untranslated_larger")
    return categories


def breakdown(archive: Path, policies: list[str], lang_model: str, pair_model: str) -> pd.DataFrame:
    """Per site-pair and policy: bfs fetches-to-80, the policy's ratio, and each category's fetches per bfs's."""
    docs = archive_docs(archive)
    truth = pd.read_parquet(archive / "truth" / "pairs.parquet")
    pages = pd.read_parquet(archive / "truth" / "pages.parquet", columns=["url", "page_kind"])
    page_kinds = dict(zip(pages["url"].map(url_key), pages["page_kind"]))
    lang_scorer, pair_scorer = model_scorers(lang_model, pair_model)
    rows = []
    for langs, site, site_docs, pairs in site_pairs(docs, truth):
        graph = build_graph(site_docs, site)
        truth_index = build_truth(graph, pairs)
        bfs_80 = simulate(graph, "bfs", truth_index).summary()["fetches_to_80"]
        if not bfs_80:
            continue
        for name in policies:
            policy = make_policy(name, langs=langs, lang_scorer=lang_scorer, pair_scorer=pair_scorer)
            result = simulate(graph, policy, truth_index)
            until = result.summary()["fetches_to_80"]
            row = {"archive": archive.name, "site": site, "langs": "-".join(langs), "policy": name, "bfs_80": bfs_80,
                   "ratio": until / bfs_80 if until else np.inf}
            categories = fetch_categories(graph, truth_index, result.order[:until or 0], langs, page_kinds)
            row.update({category: categories.count(category) / bfs_80 for category in CATEGORIES})
            rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", default="42", help="tuning archive seed(s), comma-separated")
    parser.add_argument("--policies", default="smart+site,oracle")
    parser.add_argument("--test-hosts", type=int, default=60)
    parser.add_argument("--train-hosts", type=int, default=200, help="the cached models-N under --work")
    parser.add_argument("--work", default="/tmp/eval-url-models-sample")
    args = parser.parse_args(argv)
    work = Path(args.work)
    models = work / f"models-{args.train_hosts}"
    if not (models / "pairs").exists():
        parser.error(f"no models under {models}: run eval_replay_sample.py with --work {work} first")
    frames = []
    for seed in args.seed.split(","):
        archive = work / f"full-{args.test_hosts}-{seed}"
        if not (archive / "truth" / "pairs.parquet").exists():
            parser.error(f"no archive {archive}: run eval_replay_sample.py --seed {seed} --work {work} first")
        frames.append(breakdown(archive, args.policies.split(","), str(models / "url2lang"), str(models / "pairs")))
    table = pd.concat(frames, ignore_index=True)
    summary = table.groupby("policy", sort=False).agg(
        site_pairs=("ratio", "size"), median_ratio=("ratio", "median"),
        **{category: (category, "mean") for category in CATEGORIES})
    print(summary.round(3).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
