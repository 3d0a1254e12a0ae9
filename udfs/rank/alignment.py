"""1-1 alignment of scored URL pairs per host, the candidate pools of `parascout align`, and evaluation.

Every method (STRAND handles, the WMT16 stripper, the URL models) produces scored
candidate pairs; `greedy_one_to_one` turns them into an alignment where each URL is
used at most once, best score first. `evaluate_alignment` measures recall and
precision against gold pairs (the WMT16 gold-pool setting: per host, the pool is
the source and target URLs of its gold pairs).
"""
from __future__ import annotations

import heapq
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from parascout.udfs.common.urls import url_host

PAIR_COLUMNS = ["host", "src_url", "trg_url", "score"]
_TOKEN_RE = re.compile(r"[^\W_]+")


def greedy_one_to_one(pairs: pd.DataFrame) -> pd.DataFrame:
    """Keep pairs by descending score (ties: input order) while both URLs are still free."""
    if pairs.empty:
        return pairs.iloc[0:0].reset_index(drop=True)
    order = np.argsort(-pairs["score"].to_numpy(dtype=float), kind="stable")
    used_src: set[str] = set()
    used_trg: set[str] = set()
    keep = []
    for position, src, trg in zip(order, pairs["src_url"].to_numpy()[order], pairs["trg_url"].to_numpy()[order]):
        if src in used_src or trg in used_trg or src == trg:
            continue
        used_src.add(src)
        used_trg.add(trg)
        keep.append(position)
    return pairs.iloc[keep].reset_index(drop=True)


def evaluate_alignment(predicted: Iterable[tuple[str, str]], gold: Iterable[tuple[str, str]]) -> dict:
    """Recall, precision and F1 of predicted (src, trg) pairs against gold pairs."""
    predicted_set, gold_set = set(map(tuple, predicted)), set(map(tuple, gold))
    return alignment_scores(len(gold_set), len(predicted_set), len(predicted_set & gold_set))


def alignment_scores(gold: int, predicted: int, correct: int) -> dict:
    """evaluate_alignment's row from its counts (e.g. counts summed over several runs)."""
    recall = correct / gold if gold else 0.0
    precision = correct / predicted if predicted else 0.0
    f1 = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return {"gold": gold, "predicted": predicted, "correct": correct,
            "recall": round(recall, 4), "precision": round(precision, 4), "f1": round(f1, 4)}


def read_gold_pairs(path: str | Path) -> pd.DataFrame:
    """WMT16 gold pairs (`src_url trg_url` per line, whitespace-separated) as host, src_url, trg_url."""
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            parts = line.split()
            if len(parts) == 2:
                rows.append((url_host(parts[0]) or "", parts[0], parts[1]))
    return pd.DataFrame(rows, columns=["host", "src_url", "trg_url"])


def gold_pool(gold: pd.DataFrame, src_lang: str, trg_lang: str) -> pd.DataFrame:
    """The gold-pool input of an aligner: every source and target URL of the gold pairs (lang, url)."""
    src = pd.DataFrame({"lang": src_lang, "url": gold["src_url"]})
    trg = pd.DataFrame({"lang": trg_lang, "url": gold["trg_url"]})
    return pd.concat([src, trg], ignore_index=True).drop_duplicates(["url"]).reset_index(drop=True)


# ---- model candidates: all src×trg pairs per host, blocked by token Jaccard on huge hosts ------
def url_token_set(url: str) -> frozenset[str]:
    """Lower-cased letter/digit tokens of a URL (host included), for Jaccard blocking."""
    return frozenset(_TOKEN_RE.findall(url.lower()))


def top_k_by_jaccard(src_urls: list[str], trg_urls: list[str], k: int) -> list[tuple[int, int]]:
    """For each source URL the k target URLs with the highest token Jaccard, and vice versa (deduplicated)."""
    src_tokens = [url_token_set(u) for u in src_urls]
    trg_tokens = [url_token_set(u) for u in trg_urls]
    index: dict[str, list[int]] = {}
    for j, tokens in enumerate(trg_tokens):
        for token in tokens:
            index.setdefault(token, []).append(j)
    chosen: set[tuple[int, int]] = set()
    best_for_trg: list[list[tuple[float, int]]] = [[] for _ in trg_urls]
    for i, tokens in enumerate(src_tokens):
        shared: dict[int, int] = {}
        for token in tokens:
            for j in index.get(token, ()):
                shared[j] = shared.get(j, 0) + 1
        scored = [(n / (len(tokens) + len(trg_tokens[j]) - n), j) for j, n in shared.items()]
        for jaccard, j in heapq.nlargest(k, scored):
            chosen.add((i, j))
        for jaccard, j in scored:
            heap = best_for_trg[j]
            if len(heap) < k:
                heapq.heappush(heap, (jaccard, i))
            elif jaccard > heap[0][0]:
                heapq.heapreplace(heap, (jaccard, i))
    for j, heap in enumerate(best_for_trg):
        chosen.update((i, j) for _, i in heap)
    return sorted(chosen)


def model_candidates(pool: pd.DataFrame, src_lang: str, trg_lang: str, max_pairs_per_host: int = 250_000,
                     block_top_k: int = 20) -> tuple[pd.DataFrame, dict]:
    """All src×trg URL pairs of each host (pool: host, url, lang); hosts over the cap are blocked."""
    frames = []
    stats = {"hosts": 0, "hosts_blocked": 0, "pairs_before_blocking": 0, "candidate_pairs": 0}
    for host, group in pool.groupby("host", sort=True):
        src = sorted(group.loc[group["lang"] == src_lang, "url"])
        trg = sorted(group.loc[group["lang"] == trg_lang, "url"])
        if not src or not trg:
            continue
        stats["hosts"] += 1
        stats["pairs_before_blocking"] += len(src) * len(trg)
        if len(src) * len(trg) > max_pairs_per_host:
            stats["hosts_blocked"] += 1
            index_pairs = top_k_by_jaccard(src, trg, block_top_k)
            src_urls, trg_urls = [src[i] for i, _ in index_pairs], [trg[j] for _, j in index_pairs]
        else:
            src_urls, trg_urls = np.repeat(src, len(trg)).tolist(), np.tile(trg, len(src)).tolist()
        frames.append(pd.DataFrame({"host": host, "src_url": src_urls, "trg_url": trg_urls}))
    pairs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["host", "src_url", "trg_url"])
    stats["candidate_pairs"] = len(pairs)
    return pairs, stats


def score_with_models(pairs: pd.DataFrame, pair_model, lang_model, src_lang: str, trg_lang: str,
                      batch_size: int = 4096) -> pd.DataFrame:
    """score = P(parallel) — P(gold pair | the host's candidates) when the pair model records a decision
    (url_models.calibration) — [× P(src in src_lang) × P(trg in trg_lang) with a language model]."""
    from parascout.udfs.rank.url_models.calibration import alignment_scores

    p_parallel = [np.asarray(pair_model.predict_parallel(list(pairs["src_url"].iloc[i:i + batch_size]),
                                                          list(pairs["trg_url"].iloc[i:i + batch_size])), dtype=float)
                  for i in range(0, len(pairs), batch_size)]
    scored = pairs.assign(p_parallel=np.concatenate(p_parallel) if p_parallel else np.zeros(0))
    scored["p_src_lang"], scored["p_trg_lang"] = 1.0, 1.0
    if lang_model is not None:
        for column, lang, urls in (("p_src_lang", src_lang, scored["src_url"]), ("p_trg_lang", trg_lang, scored["trg_url"])):
            unique = sorted(set(urls))
            probabilities = {}
            for i in range(0, len(unique), batch_size):
                frame = lang_model.predict_lang(unique[i:i + batch_size])
                values = frame[lang] if lang in frame.columns else pd.Series(0.0, index=frame.index)
                probabilities.update(zip(unique[i:i + batch_size], values.to_numpy(dtype=float)))
            scored[column] = urls.map(probabilities).astype(float)
    scored["score"] = alignment_scores(scored, getattr(pair_model, "metadata", {})) * scored["p_src_lang"] \
        * scored["p_trg_lang"]
    return scored
