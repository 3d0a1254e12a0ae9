"""Replay simulator throughput: simulated fetches per CPU-second (one core), against a bare FIFO traversal.

A synthetic bilingual site of --pages pages (about --out-degree links each) is interned once;
then each policy replays it with budget 1.0 and cheap scorers (pure functions of the URL).
The baseline is the same graph walked by a bare deque + seen-array BFS in the same run
(no bookkeeping, no truth, no priorities): the ceiling for a Python frontier loop. Loop rates
and "prepare" (scoring, handles, the oracle's distances) use process CPU time, fair on a shared machine.
"""
from __future__ import annotations

import argparse
import time
from collections import deque

import numpy as np
import pandas as pd

from parascout.udfs.replay import POLICY_NAMES, build_graph, build_truth, make_policy, simulate
from parascout.udfs.replay.synthetic import random_site


def cheap_lang_scorer(urls: list[str]) -> pd.DataFrame:
    """P(isl) 0.9 for '/is/' URLs, else 0.05; P(eng) the other way round."""
    second = np.fromiter(("/is/" in url for url in urls), dtype=bool, count=len(urls))
    return pd.DataFrame({"eng": np.where(second, 0.05, 0.9), "isl": np.where(second, 0.9, 0.05)})


def cheap_pair_scorer(src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
    """0.9 when the two URLs differ in language directory, else 0.1."""
    return np.fromiter(((s[:24] == t[:24]) != (s[24:] == t[24:]) for s, t in zip(src_urls, trg_urls)),
                       dtype=bool, count=len(src_urls)) * 0.8 + 0.1


def bare_fifo(graph) -> tuple[int, float]:
    """Fetches and CPU seconds of a plain BFS over the same adjacency lists."""
    started = time.process_time()
    links, seen, queue, fetched = graph.links, bytearray(graph.n_nodes), deque([graph.home()]), 0
    seen[graph.home()] = 1
    while queue:
        node = queue.popleft()
        fetched += 1
        for target in links[node]:
            if not seen[target]:
                seen[target] = 1
                queue.append(target)
    return fetched, time.process_time() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--out-degree", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3, help="best of N runs per measurement")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    docs, truth = random_site(n_pages=args.pages, out_degree=args.out_degree, seed=0)
    graph = build_graph(docs)
    truth_index = build_truth(graph, truth)
    build_seconds = time.perf_counter() - started
    print(f"graph: {graph.n_docs:,} pages, {graph.n_links:,} links, {truth_index.n_pairs:,} truth pairs; "
          f"generated + interned in {build_seconds:.2f}s")
    best_bare = min((bare_fifo(graph) for _ in range(args.repeats)), key=lambda run: run[1])
    bare_rate = best_bare[0] / best_bare[1]
    print(f"{'baseline: bare FIFO traversal':34s} {bare_rate:>12,.0f} fetches/s")
    print(f"{'policy':12s} {'fetches':>9s} {'loop fetches/s':>15s} {'x bare':>7s} {'prepare s':>10s} "
          f"{'with prepare, fetches/s':>24s} {'AUC':>6s}")
    for name in POLICY_NAMES:
        runs = []
        for _ in range(args.repeats):
            policy = make_policy(name, langs=("eng", "isl"), lang_scorer=cheap_lang_scorer,
                                 pair_scorer=cheap_pair_scorer, random_seed=0)
            runs.append(simulate(graph, policy, truth_index, budget=1.0))
        result = min(runs, key=lambda run: run.cpu_seconds_crawl)
        loop_rate = result.fetched / result.cpu_seconds_crawl
        total_rate = result.fetched / (result.cpu_seconds_crawl + result.cpu_seconds_prepare)
        print(f"{name:12s} {result.fetched:>9,d} {loop_rate:>15,.0f} {loop_rate / bare_rate:>7.2f} "
              f"{result.cpu_seconds_prepare:>10.2f} {total_rate:>24,.0f} {result.summary()['auc']:>6.3f}")


if __name__ == "__main__":
    main()
