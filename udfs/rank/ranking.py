"""Scoring candidate URL pairs of one host group: language, cascade, rank, 1-1 alignment.

Everything here is pandas in, pandas out. Models enter as plain callables so the
same functions run with the real URL models (the job builds the callables from
`udfs.rank.url_models.load_model`) and with simple deterministic scorers in the tests:

- a language scorer: `predict_lang(urls) -> DataFrame` (one column per ISO 639-3 code
  plus 'unk', one row per URL, probabilities);
- a pair scorer: `predict_parallel(src_urls, trg_urls) -> array` of P(parallel).

URL score of a pair = P(src in src language) x P(trg in trg language) x P(parallel), as in
García-Romero et al.; a language read from the CDX `languages` field counts as 1. Links between the
two pages are evidence of their own (ILSP-FC, Resnik's STRAND "parent/sibling" pages): score =
sigmoid(logit(URL score) + link_log_odds), where link_log_odds adds a fitted log-odds weight per
piece of evidence (LINK_EVIDENCE_WEIGHTS: a link either way or both, switcher cues naming the target's
language, a cue target no other page links to, shared third-language alternates, a shared rare
image). A pair without evidence keeps its URL score; the weights are an offset logistic regression
(the URL score's logit as the offset) fitted on a training archive (`fit_link_weights`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd

from parascout.udfs.rank.alignment import greedy_one_to_one

LangScorer = Callable[[list[str]], pd.DataFrame]
PairScorer = Callable[[list[str], list[str]], np.ndarray]

#: URLs or pairs handed to a model at once (bounds memory of a transformer batch)
SCORING_BATCH = 8192
UNKNOWN_LANGUAGE = "unk"

LANGUAGE_STATUS_OK = "ok"
LANGUAGE_OTHER = "lang_other"
LANGUAGE_UNKNOWN = "lang_unknown"
LANGUAGE_NO_MODEL = "lang_missing_no_model"
#: language statuses other than ok: the URL is left out of the ranking (filtered, not bad)
FILTERED_REASONS = frozenset({LANGUAGE_OTHER, LANGUAGE_UNKNOWN, LANGUAGE_NO_MODEL})
BAD_REASONS: frozenset[str] = frozenset()

#: candidate source of pairs that only the exhaustive product of a small group proposed
EXHAUSTIVE_SOURCE = "exhaustive"
SCORED_COLUMNS = ["p_parallel_fast", "p_parallel", "score_url", "link_log_odds", "score", "scored_by", "rank"]
#: what links say about a pair (rank-pairs' blocking.link_evidence; all False / 0 without `docs`)
LINK_EVIDENCE_COLUMNS = ("link_src_to_trg", "link_trg_to_src", "cue_links", "cue_exclusive", "shared_alternates")
#: log-odds each piece of link evidence adds to the URL score's logit: an offset logistic regression
#: (`fit_link_weights`; refit with `benchmarks/eval_rank_pairs_sample.py --fit`), the URL score on the
#: alignment scale as the offset. A link one way only is evidence against (a page without a translation links to
#: the other language's home page); a switcher both ways naming the language, exclusive: +5.0
LINK_EVIDENCE_WEIGHTS = {"links_both_ways": 1.841, "link_one_way": -2.842, "cue_links": 0.84, "cue_exclusive": 1.507,
                         "shared_alternates": -0.268, "shared_image": 5.48}
#: URL scores are clipped to [SCORE_EPSILON, 1 - SCORE_EPSILON] before their logit
SCORE_EPSILON = 1e-6


# ---- language of each URL ------------------------------------------------------------------
def predict_languages(urls: list[str], predict_lang: LangScorer, threshold: float) -> pd.DataFrame:
    """Argmax language of each URL from a URL language model: lang (None below threshold or 'unk'), p_lang."""
    frames = [predict_lang(urls[start:start + SCORING_BATCH]) for start in range(0, len(urls), SCORING_BATCH)]
    probabilities = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if probabilities.empty:
        return pd.DataFrame({"lang": pd.Series([None] * len(urls), dtype=object), "p_lang": np.zeros(len(urls))})
    best = probabilities.idxmax(axis=1).astype(object)
    best_probability = probabilities.max(axis=1).to_numpy(dtype=np.float64)
    confident = (best_probability >= threshold) & (best != UNKNOWN_LANGUAGE).to_numpy()
    return pd.DataFrame({"lang": best.where(confident, None).to_numpy(), "p_lang": best_probability})


def assign_languages(urls: pd.DataFrame, languages: tuple[str, ...], predict_lang: LangScorer | None,
                     threshold: float = 0.5) -> pd.DataFrame:
    """Add lang, p_lang, lang_source ('cdx' | 'model') and language_status to a frame of url, lang.

    The CDX language wins where present (p_lang = 1); otherwise the model's argmax above
    `threshold`. language_status says why a URL cannot take part: lang_other (another
    language), lang_unknown (model unsure), lang_missing_no_model (no CDX language, no model).
    """
    out = urls.copy()
    out["lang_source"] = np.where(out["lang"].notna(), "cdx", None)
    out["p_lang"] = np.where(out["lang"].notna(), 1.0, 0.0)
    missing = out["lang"].isna().to_numpy()
    if missing.any() and predict_lang is not None:
        predicted = predict_languages(out.loc[missing, "url"].tolist(), predict_lang, threshold)
        out.loc[missing, "lang"] = predicted["lang"].to_numpy()
        out.loc[missing, "p_lang"] = predicted["p_lang"].to_numpy()
        out.loc[missing, "lang_source"] = np.where(predicted["lang"].notna(), "model", None)
    status = np.where(out["lang"].isin(languages), LANGUAGE_STATUS_OK, LANGUAGE_OTHER)
    status = np.where(out["lang"].isna(), LANGUAGE_UNKNOWN if predict_lang is not None else LANGUAGE_NO_MODEL,
                      status)
    out["language_status"] = status
    return out


# ---- scoring -------------------------------------------------------------------------------
def predict_pairs(src_urls: list[str], trg_urls: list[str], predict_parallel: PairScorer) -> np.ndarray:
    """P(parallel) for each (src, trg), in bounded batches, clipped to [0, 1]."""
    scores = [np.asarray(predict_parallel(src_urls[start:start + SCORING_BATCH], trg_urls[start:start + SCORING_BATCH]),
                         dtype=np.float64).reshape(-1)
              for start in range(0, len(src_urls), SCORING_BATCH)]
    return np.clip(np.concatenate(scores), 0.0, 1.0) if scores else np.zeros(0)


def combine_scores(pairs: pd.DataFrame) -> pd.Series:
    """The URL score: P(src in src lang) x P(trg in trg lang) x P(parallel)."""
    return pairs["p_src_lang"] * pairs["p_trg_lang"] * pairs["p_parallel"]


# ---- link evidence -------------------------------------------------------------------------
def link_features(pairs: pd.DataFrame) -> pd.DataFrame:
    """The link-evidence features of LINK_EVIDENCE_WEIGHTS per pair, from the LINK_EVIDENCE_COLUMNS (missing
    columns count as no evidence) and `source` (a shared rare image is source 'image')."""
    def column(name: str) -> np.ndarray:
        values = pairs[name] if name in pairs.columns else pd.Series(0, index=pairs.index)
        return values.fillna(0).to_numpy(dtype=np.float64)

    forward, backward = column("link_src_to_trg") > 0, column("link_trg_to_src") > 0
    image = (pairs["source"].fillna("").str.split(",").map(lambda sources: "image" in sources).to_numpy(dtype=bool)
             if "source" in pairs.columns else np.zeros(len(pairs), dtype=bool))
    return pd.DataFrame({"links_both_ways": (forward & backward).astype(np.float64),
                         "link_one_way": (forward ^ backward).astype(np.float64),
                         "cue_links": column("cue_links"), "cue_exclusive": (column("cue_exclusive") > 0).astype(float),
                         "shared_alternates": (column("shared_alternates") > 0).astype(np.float64),
                         "shared_image": image.astype(np.float64)}, index=pairs.index)[list(LINK_EVIDENCE_WEIGHTS)]


def link_log_odds(pairs: pd.DataFrame, weights: dict[str, float] | None = None) -> np.ndarray:
    """Log-odds the links add to each pair's URL score (0 for a pair without link evidence)."""
    weights = LINK_EVIDENCE_WEIGHTS if weights is None else weights
    features = link_features(pairs)
    return features.to_numpy() @ np.array([weights.get(name, 0.0) for name in features.columns], dtype=np.float64)


def logit(probability) -> np.ndarray:
    clipped = np.clip(np.asarray(probability, dtype=np.float64), SCORE_EPSILON, 1 - SCORE_EPSILON)
    return np.log(clipped) - np.log1p(-clipped)


def with_link_evidence(url_score, log_odds) -> np.ndarray:
    """score = sigmoid(logit(URL score) + link log-odds); the URL score unchanged where log_odds is 0, and never
    moved against the evidence by the clipping of a URL score of 0 or 1."""
    url_score, log_odds = np.asarray(url_score, dtype=np.float64), np.asarray(log_odds, dtype=np.float64)
    combined = 1.0 / (1.0 + np.exp(-(logit(url_score) + log_odds)))
    return np.where(log_odds > 0, np.maximum(combined, url_score),
                    np.where(log_odds < 0, np.minimum(combined, url_score), url_score))


def fit_link_weights(pairs: pd.DataFrame, url_score, labels, l2: float = 1.0) -> dict[str, float]:
    """LINK_EVIDENCE_WEIGHTS by maximum likelihood of labels (true pair or not) given logit(URL score) as a fixed
    offset, with an L2 penalty `l2` (evidence no pair shows gets weight 0)."""
    from scipy.optimize import minimize

    features = link_features(pairs).to_numpy()
    offset, labels = logit(url_score), np.asarray(labels, dtype=np.float64)

    def loss(weights: np.ndarray) -> tuple[float, np.ndarray]:
        z = offset + features @ weights
        probability = 1.0 / (1.0 + np.exp(-z))
        value = np.sum(np.logaddexp(0.0, z) - labels * z) + 0.5 * l2 * weights @ weights
        return value, features.T @ (probability - labels) + l2 * weights

    fitted = minimize(loss, np.zeros(features.shape[1]), jac=True, method="L-BFGS-B").x
    return {name: round(float(weight), 3) for name, weight in zip(LINK_EVIDENCE_WEIGHTS, fitted)}


def top_k_mask(pairs: pd.DataFrame, score_column: str, k: int) -> np.ndarray:
    """True for pairs among the k best of their source URL or of their target URL."""
    by_src = pairs.groupby("src_url")[score_column].rank(method="first", ascending=False) <= k
    by_trg = pairs.groupby("trg_url")[score_column].rank(method="first", ascending=False) <= k
    return (by_src | by_trg).to_numpy()


def rank_within_source(pairs: pd.DataFrame) -> pd.Series:
    """1 for the best-scored target of each source URL, 2 for the next... (ties broken by target URL)."""
    ordered = pairs.sort_values(["src_url", "score", "trg_url"], ascending=[True, False, True])
    ranks = ordered.groupby("src_url", sort=False).cumcount() + 1
    return ranks.reindex(pairs.index).astype(np.int32)


def cascade_scores(pairs: pd.DataFrame, fast: PairScorer, rescore: PairScorer | None = None,
                   rescore_top_k: int = 5, keep_top_k: int | None = None,
                   prunable_source: str = EXHAUSTIVE_SOURCE, link_weights: dict[str, float] | None = None
                   ) -> pd.DataFrame:
    """Score every pair with the fast model; rescore each URL's top-k with the slow model; rank per source.

    With `keep_top_k`, pairs whose only source is `prunable_source` (the exhaustive product of a
    small group) survive the fast stage only among the keep_top_k best of their source or target URL.
    Adds p_parallel_fast, p_parallel (the last model's), score_url, link_log_odds, score (the URL score with
    the link evidence, `with_link_evidence`), scored_by ('fast' | 'rescore') and rank.
    """
    out = pairs.copy()
    out["p_parallel_fast"] = predict_pairs(out["src_url"].tolist(), out["trg_url"].tolist(), fast)
    out["p_parallel"] = out["p_parallel_fast"]
    out["link_log_odds"] = link_log_odds(out, link_weights)
    out = with_scores(out)
    out["scored_by"] = "fast"
    if keep_top_k and "source" in out.columns and len(out):
        out = out[top_k_mask(out, "score", keep_top_k) | (out["source"] != prunable_source).to_numpy()]
    if rescore is not None and len(out):
        rows = out.index[top_k_mask(out, "score", rescore_top_k)]
        out.loc[rows, "p_parallel"] = predict_pairs(out.loc[rows, "src_url"].tolist(),
                                                    out.loc[rows, "trg_url"].tolist(), rescore)
        out.loc[rows, "scored_by"] = "rescore"
        out = with_scores(out)
    out["rank"] = rank_within_source(out) if len(out) else pd.Series(dtype=np.int32)
    return out


def with_scores(pairs: pd.DataFrame) -> pd.DataFrame:
    """score_url (combine_scores) and score (with the pairs' link_log_odds)."""
    url_score = combine_scores(pairs)
    return pairs.assign(score_url=url_score, score=with_link_evidence(url_score, pairs["link_log_odds"]))


# ---- 1-1 alignment -------------------------------------------------------------------------
def greedy_alignment(pairs: pd.DataFrame, min_score: float = 0.0) -> pd.DataFrame:
    """1-1 alignment (udfs.rank.alignment.greedy_one_to_one) of the pairs scoring >= min_score; ties by URLs."""
    eligible = pairs[pairs["score"] >= min_score].sort_values(["src_url", "trg_url"], kind="stable")
    return greedy_one_to_one(eligible)


# ---- Spark wrappers: models loaded once per Python worker -----------------------------------
LANGUAGE_SCHEMA = ("url string, host string, domain string, lang string, surt string, url_status string, "
                   "p_lang double, lang_source string")
SCORED_SCHEMA = ("host string, group_key string, src_url string, trg_url string, src_lang string, trg_lang string, "
                 "source string, handle string, p_src_lang double, p_trg_lang double, link_src_to_trg boolean, "
                 "link_trg_to_src boolean, cue_links int, cue_exclusive boolean, shared_alternates int, "
                 "p_parallel_fast double, p_parallel double, score_url double, link_log_odds double, score double, "
                 "scored_by string, rank int")


def load_url_model(model_dir: str):
    """The URL model in `model_dir`, cached per worker, torch threads bounded by the task's cores."""
    from parascout.udfs.rank.url_models.spark_udfs import worker_model

    return worker_model(model_dir)


def assign_languages_with_model(batches: Iterator[pd.DataFrame], languages: tuple[str, ...],
                                lang_model: str | None, threshold: float) -> Iterator[pd.DataFrame]:
    """mapInPandas: language of URLs without a CDX language, url_status 'ok' or the language reason."""
    predict_lang = load_url_model(lang_model).predict_lang if lang_model else None
    for batch in batches:
        if batch.empty:
            continue
        labelled = assign_languages(batch, languages, predict_lang, threshold)
        labelled["url_status"] = labelled["language_status"]
        yield labelled[[c.split()[0] for c in LANGUAGE_SCHEMA.split(", ")]]


def score_group_with_models(group: pd.DataFrame, fast_model: str, rescore_model: str | None,
                            rescore_top_k: int, keep_top_k: int | None = None,
                            link_weights: dict[str, float] | None = None) -> pd.DataFrame:
    """applyInPandas: the cascade over one (host, group_key) group of candidate pairs."""
    fast = load_url_model(fast_model).predict_parallel
    rescore = load_url_model(rescore_model).predict_parallel if rescore_model else None
    scored = cascade_scores(group, fast, rescore, rescore_top_k, keep_top_k, link_weights=link_weights)
    return scored[[c.split()[0] for c in SCORED_SCHEMA.split(", ")]]


def alignment_url_scores(group: pd.DataFrame, metadata: dict | None = None) -> np.ndarray:
    """URL scores on the scale the pair model's cut-off is chosen on: with a model that records a decision,
    P(gold pair | the group's candidates) × P(src lang) × P(trg lang) (url_models.calibration), else score_url."""
    if metadata and metadata.get("decision"):
        from parascout.udfs.rank.url_models.calibration import alignment_scores

        return alignment_scores(group, metadata) * group["p_src_lang"].to_numpy() * group["p_trg_lang"].to_numpy()
    return group["score_url"].to_numpy(dtype=np.float64)


def align_group(group: pd.DataFrame, min_score: float = float("-inf"), metadata: dict | None = None) -> pd.DataFrame:
    """applyInPandas: the greedy 1-1 alignment of one (host, group_key) group over the pairs scoring >= min_score,
    score_url on the alignment scale (`alignment_url_scores`) and score = it with the pair's link log-odds."""
    url_score = alignment_url_scores(group, metadata)
    group = group.assign(score_url=url_score, score=with_link_evidence(url_score, group["link_log_odds"]))
    return greedy_alignment(group, min_score=min_score)


# ---- Spark DataFrame plans -----------------------------------------------------------------
def site_summary(kept, max_group_urls: int):
    """Per language pair and site: URLs per language, blocking groups, hash-chunked groups and URLs capped from
    similarity (kept: blocking.with_pair's columns, site, group_key, chunked)."""
    from pyspark.sql import functions as F

    site = ["lang_pair", "src_lang", "trg_lang", "site"]
    groups = kept.groupBy(*site, "group_key").agg(F.count("*").alias("n"), F.max("chunked").alias("chunked"))
    by_site = groups.groupBy(*site).agg(
        F.count("*").alias("n_groups"),
        F.sum(F.greatest(F.col("n") - max_group_urls, F.lit(0))).alias("n_urls_capped"),
        F.sum(F.col("chunked").cast("int")).alias("n_groups_chunked"))
    counts = kept.groupBy(*site).agg(F.sum((F.col("lang") == F.col("src_lang")).cast("long")).alias("n_urls_src"),
                                     F.sum((F.col("lang") == F.col("trg_lang")).cast("long")).alias("n_urls_trg"))
    return (counts.join(by_site, site)
            .select("site", "n_urls_src", "n_urls_trg", "n_groups", "n_urls_capped", "n_groups_chunked",
                    "src_lang", "trg_lang", "lang_pair"))
