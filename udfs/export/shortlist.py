"""Which sites are worth crawling for a language pair: predicted parallel pairs per site, and how good that guess is.

A site's prediction is its number of 1-1 aligned URL pairs with score >= a threshold
(`predicted_pairs`), also the sum of the aligned scores (`expected_pairs`, the expected
count if scores are calibrated probabilities), and the ratio of predicted pairs to the
smaller language side. The evaluation compares the ranking with true pair counts
(a truth table or verified pairs): Spearman's rho over sites and precision@k of the
shortlist, where a site is relevant when it has at least N true pairs.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

#: the bitext_* columns: what export-bitext exported per site (0 before it ran): yield in words
BITEXT_YIELD_COLUMNS = ["bitext_documents", "bitext_sentence_pairs", "bitext_words_src", "bitext_words_trg"]
SHORTLIST_COLUMNS = ["site", "src_lang", "trg_lang", "n_urls_src", "n_urls_trg", "predicted_pairs",
                     "expected_pairs", "predicted_ratio", "rank"] + BITEXT_YIELD_COLUMNS
DEFAULT_PRECISION_KS = (5, 10, 20)


def predicted_ratio(predicted_pairs: pd.Series, n_urls_src: pd.Series, n_urls_trg: pd.Series) -> pd.Series:
    """Predicted pairs / min(URLs in language A, URLs in language B); 0 where a side is empty."""
    smaller = np.minimum(n_urls_src.to_numpy(dtype=np.float64), n_urls_trg.to_numpy(dtype=np.float64))
    ratio = np.divide(predicted_pairs.to_numpy(dtype=np.float64), smaller, out=np.zeros(len(smaller)),
                      where=smaller > 0)
    return pd.Series(ratio, index=predicted_pairs.index)


def rank_sites(sites: pd.DataFrame) -> pd.DataFrame:
    """Sites ordered best first (predicted pairs, then ratio, then site name) with rank 1..n."""
    ordered = sites.sort_values(["predicted_pairs", "predicted_ratio", "site"], ascending=[False, False, True],
                                ignore_index=True)
    ordered["rank"] = np.arange(1, len(ordered) + 1, dtype=np.int64)
    return ordered


def true_pair_counts(pairs: pd.DataFrame, languages: tuple[str, str] | None = None) -> pd.DataFrame:
    """Distinct true pairs per site from a truth table (optionally of one language pair, either direction)."""
    frame = pairs
    if languages is not None and {"src_lang", "trg_lang"} <= set(frame.columns):
        wanted = set(languages)
        keep = frame["src_lang"].isin(wanted) & frame["trg_lang"].isin(wanted) & (frame["src_lang"] != frame["trg_lang"])
        frame = frame[keep]
    if "parallel" in frame.columns:
        frame = frame[frame["parallel"].eq(True)]
    counts = frame.drop_duplicates(["site", "src_url", "trg_url"]).groupby("site").size()
    return counts.rename("true_pairs").reset_index()


def precision_at_k(ranked_sites: list[str], relevant: set[str], k: int) -> float | None:
    """Share of relevant sites among the first k of the ranking (the first n when fewer than k are ranked)."""
    top = ranked_sites[:k]
    return sum(site in relevant for site in top) / len(top) if top else None


def evaluate_shortlist(shortlist: pd.DataFrame, truth_counts: pd.DataFrame, min_true_pairs: int = 1,
                       ks: tuple[int, ...] = DEFAULT_PRECISION_KS, truth_covers_all_hosts: bool = True) -> dict:
    """Spearman of predicted vs true pairs per site, and precision@k of the ranked shortlist.

    With `truth_covers_all_hosts` (a truth table), a site missing from the truth has 0 true pairs
    and a true site missing from the shortlist was predicted 0; otherwise (verified pairs, known
    only for the sites checked) only sites present in both are compared.
    """
    how = "outer" if truth_covers_all_hosts else "inner"
    merged = shortlist[["site", "predicted_pairs", "rank"]].merge(truth_counts[["site", "true_pairs"]], on="site",
                                                                   how=how)
    merged[["predicted_pairs", "true_pairs"]] = merged[["predicted_pairs", "true_pairs"]].fillna(0)
    relevant = set(merged.loc[merged["true_pairs"] >= min_true_pairs, "site"])
    ranked = merged.dropna(subset=["rank"]).sort_values("rank")["site"].tolist()
    metrics: dict = {"hosts_evaluated": len(merged), "hosts_relevant": len(relevant),
                     "relevant_min_true_pairs": int(min_true_pairs)}
    if len(merged) >= 2 and merged["predicted_pairs"].nunique() > 1 and merged["true_pairs"].nunique() > 1:
        rho, p_value = spearmanr(merged["predicted_pairs"], merged["true_pairs"])
        metrics["spearman"], metrics["spearman_p"] = float(rho), float(p_value)
    else:
        metrics["spearman"], metrics["spearman_p"] = None, None
    for k in ks:
        metrics[f"precision_at_{k}"] = precision_at_k(ranked, relevant, k)
    return metrics
