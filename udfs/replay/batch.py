"""Per-site replay for Spark's cogroup().applyInPandas: one site's docs + truth in, one row per policy out.

Pandas in, pandas out, no SparkSession: the job wires `replay_host` to Spark. A row carries the
summary metrics and, as arrays, the sampled yield curve (every 1% of the budget plus the end),
the Fig. 7 deciles and the recall on a fixed 0..100% grid (for mean curves across sites).
"""
from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from parascout.udfs.common import tables
from parascout.udfs.replay import metrics
from parascout.udfs.replay.config import DEFAULT, ReplayConfig
from parascout.udfs.replay.frontier import frontier_columns, plan_policy
from parascout.udfs.replay.graph import build_graph, build_truth
from parascout.udfs.replay.policies import MODEL_POLICIES, make_policy
from parascout.udfs.replay.simulator import simulate

log = logging.getLogger("parascout.replay")

#: a `replay_summary` row less lang_pair (the job adds it)
SUMMARY_SCHEMA = tables.ddl("replay_summary", without=(tables.LANG_PAIR.name,))
ARRAY_SCHEMA = (
    "curve_fetched array<long>, curve_pairs_found array<long>, curve_docs_found array<long>, "
    "curve_bytes_fetched array<long>, decile_fetched array<long>, decile_docs_found array<long>, "
    "decile_docs_in_decile array<long>, decile_share array<double>, grid_recall array<double>, "
    "frontier_url array<string>, frontier_priority array<double>, frontier_seed array<boolean>, "
    "frontier_archived array<boolean>, frontier_cld2_lang array<string>, frontier_predicted_lang array<string>, "
    "frontier_p_lang array<double>, frontier_partner_url array<string>"
)
RESULT_SCHEMA = f"{SUMMARY_SCHEMA}, {ARRAY_SCHEMA}"
SUMMARY_COLUMNS = tables.columns("replay_summary", without=(tables.LANG_PAIR.name,))
ARRAY_COLUMNS = [part.strip().split(" ", 1)[0] for part in ARRAY_SCHEMA.split(", ")]
RESULT_COLUMNS = [*SUMMARY_COLUMNS, *ARRAY_COLUMNS]
INTEGER_COLUMNS = [column.name for column in tables.fields("replay_summary") if column.type == "bigint"]


@dataclass
class ReplayRun:
    """What every site's replay shares: languages, policies, budget, seeds, model directories, and the policies' and
    simulator's knobs (`config`)."""

    langs: tuple[str, str]
    policies: tuple[str, ...]
    budget: float = 1.0
    count_missing_as_fetch: bool = True
    random_seed: int = 0
    seeds: dict[str, list[str]] = field(default_factory=dict)  # site or host -> seed URLs; absent: the home page
    lang_model: str | None = None
    pair_model: str | None = None
    config: ReplayConfig = DEFAULT


@functools.lru_cache(maxsize=4)
def model_scorers(lang_model: str, pair_model: str):
    """(lang_scorer, pair_scorer) from the URL model directories, loaded once per Python worker."""
    from parascout.udfs.rank.url_models import load_model

    return load_model(lang_model).predict_lang, load_model(pair_model).predict_parallel


class SiteScores:
    """A site's URL-model scores, each URL's language and each link's P(parallel) computed once for every policy of
    the site's replay that asks (smart, smart+lang, smart+site and its rescoring passes score the same links): with a
    transformer model a link costs thousands of times what it costs with the n-gram model. A site with more than
    `max_entries` links (or URLs) is scored by each policy for itself: a kept score costs ~170 bytes."""

    max_entries = 1_000_000

    def __init__(self, lang_scorer, pair_scorer):
        self._lang_scorer, self._pair_scorer = lang_scorer, pair_scorer
        self._langs: dict[str, dict] = {}
        self._pairs: dict[tuple[str, str], float] = {}
        self.scored_urls = self.scored_pairs = 0

    def lang(self, urls: list[str]) -> pd.DataFrame:
        """lang_scorer's probabilities per language, one row per URL."""
        if len(self._langs) + len(urls) > self.max_entries:
            self.scored_urls += len(urls)
            return self._lang_scorer(urls)
        rows, scored = self._kept(self._langs, urls, lambda missing: self._lang_scorer(missing).to_dict("records"))
        self.scored_urls += scored
        return pd.DataFrame.from_records(rows)

    def pair(self, src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
        """pair_scorer's P(parallel) per (source, target) URL pair."""
        if len(self._pairs) + len(src_urls) > self.max_entries:
            self.scored_pairs += len(src_urls)
            return self._score_pairs(src_urls, trg_urls)
        values, scored = self._kept(self._pairs, list(zip(src_urls, trg_urls)), lambda missing: self._score_pairs(
            [key[0] for key in missing], [key[1] for key in missing]).tolist())
        self.scored_pairs += scored
        return np.array(values, dtype=float)

    def _score_pairs(self, src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
        return np.asarray(self._pair_scorer(src_urls, trg_urls), dtype=float).reshape(-1)

    @staticmethod
    def _kept(store: dict, keys: list, score) -> tuple[list, int]:
        """The values of `keys` from `store`, those it lacks computed by `score` (their keys -> their values, in order)
        once each and kept: (the values, how many were computed)."""
        missing = [key for key in dict.fromkeys(keys) if key not in store]
        if missing:
            store.update(zip(missing, score(missing)))
        return [store[key] for key in keys], len(missing)


def replay_host(docs: pd.DataFrame, truth: pd.DataFrame, config: ReplayRun) -> pd.DataFrame:
    """Replay every configured policy on one site, named by the docs' `site` column (its rows may span the site's
    hosts) or, without one, by their host; a policy that fails yields a row with status 'failed: ...'."""
    if docs.empty:
        return pd.DataFrame(columns=RESULT_COLUMNS)
    site = str(docs["site"].iloc[0] if "site" in docs else docs["host"].iloc[0])  # a site spans its hosts
    started = time.perf_counter()
    graph = build_graph(docs, site)
    truth_index = build_truth(graph, truth)
    seeds = config.seeds.get(site) or [url for name in sorted(graph.scope) for url in config.seeds.get(name, [])] or None
    hosts = ",".join(sorted(docs["host"].dropna().astype(str).unique())) if "host" in docs else site
    base = {"site": site, "host": hosts or site, "n_rows": len(docs), "n_truth_pairs": truth_index.n_input_pairs,
            "n_unusable_truth_pairs": truth_index.n_unusable_pairs}
    rows, crawls = [], {}
    # the models' scores, shared by the site's model policies; the first loads the models, so that a load error is
    # that policy's failure, counted in its row
    scores = None
    for name in config.policies:
        try:
            scorers = {}
            if name in MODEL_POLICIES and config.lang_model and config.pair_model:
                scores = scores or SiteScores(*model_scorers(config.lang_model, config.pair_model))
                scorers = {"lang_scorer": scores.lang, "pair_scorer": scores.pair}
            policy = make_policy(name, langs=config.langs, random_seed=config.random_seed, config=config.config,
                                 **scorers)
            result = simulate(graph, policy, truth_index, budget=config.budget, seeds=seeds,
                              count_missing_as_fetch=config.count_missing_as_fetch,
                              sample_every=config.config.sample_every)
        except Exception as error:  # noqa: BLE001  (a site's failure is counted in its row, never the job's end)
            log.warning("replay of %s with %s failed: %s: %s", site, name, type(error).__name__, error)
            rows.append({**base, "policy": name, "status": f"failed: {type(error).__name__}: {error}"[:500]})
            continue
        rows.append({**base, **_result_row(result, graph)})
        crawls[name] = (result, policy)
    planned = plan_policy(rows)
    for row in rows:  # only the planned policy's fetch order is kept: the frontier a crawler is handed
        row["planned"] = row["policy"] == planned
        if row["planned"]:
            row.update(frontier_columns(*crawls[planned]))
    log.info("replayed %s (%d docs, %d parallel) with %d policies in %.2fs%s", site, graph.n_docs,
             truth_index.n_parallel_docs, len(config.policies), time.perf_counter() - started,
             f" ({scores.scored_urls} URLs and {scores.scored_pairs} links scored by the URL models)" if scores else "")
    return _typed(pd.DataFrame(rows, columns=RESULT_COLUMNS))


def seed_urls_by_host(text: str) -> tuple[dict[str, list[str]], int]:
    """Seed URLs of a --seeds file (one per line, '#' comments) by host, and the count of unusable lines."""
    from parascout.udfs.common.urls import url_host

    seeds: dict[str, list[str]] = {}
    unusable = 0
    for line in text.splitlines():
        url = line.strip()
        if not url or url.startswith("#"):
            continue
        host = url_host(url) if "://" in url else None
        if host:
            seeds.setdefault(host, []).append(url)
        else:
            unusable += 1
    return seeds, unusable


def _result_row(result, graph) -> dict:
    curve = result.curve()
    decile_frame = metrics.deciles(result.doc_events, result.n_parallel_docs, result.budget_fetches)
    return {
        **metrics.summarise(result), "status": "ok", "n_nodes": graph.n_nodes, "n_links": graph.n_links,
        "n_offhost_links": graph.n_offhost_links, "seconds": result.seconds_prepare + result.seconds_crawl,
        "curve_fetched": curve["fetched"].tolist(), "curve_pairs_found": curve["pairs_found"].tolist(),
        "curve_docs_found": curve["docs_found"].tolist(), "curve_bytes_fetched": curve["bytes_fetched"].tolist(),
        "decile_fetched": decile_frame["fetched"].tolist(), "decile_docs_found": decile_frame["docs_found"].tolist(),
        "decile_docs_in_decile": decile_frame["docs_found_in_decile"].tolist(),
        "decile_share": decile_frame["share_of_parallel_docs"].tolist(),
        "grid_recall": metrics.grid_recall(result.doc_events, result.n_parallel_docs, result.budget_fetches),
    }


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Nullable integers (a policy that never reached 80% has no fetches_to_80), floats as floats."""
    for column in INTEGER_COLUMNS:
        frame[column] = pd.array([None if pd.isna(v) else int(v) for v in frame[column]], dtype="Int64")
    for column in ARRAY_COLUMNS:
        frame[column] = [value if isinstance(value, list) else None for value in frame[column]]
    for column in ("recall", "pair_recall", "auc", "share_fetches_to_50", "share_fetches_to_80",
                   "share_fetches_to_90", "seconds"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(np.float64)
    return frame
