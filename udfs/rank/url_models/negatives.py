"""Synthetic negative URL pairs for the parallelness model (García-Romero et al.).

Three generators, each in a bilingual variant (u in language A, u' in language B) and a
monolingual one (u and u' in the same language), all drawing partners from the same host
as the positive pair:

- random: u paired with a random URL of the host (not its translation);
- jaccard: u paired with the host URLs whose token sets have the highest Jaccard
  similarity with u (hard negatives: the closest URLs that are not its translation);
- remove: random tokens removed from the resource part (after the host) of both URLs
  of a positive pair (bilingual) or of one URL paired with itself (monolingual);
- neighbour: u paired with the host URL of the partner's language (bi) or its own (mono)
  that has the same shape once digit runs are masked and the nearest numbers
  (`item=2040` for `item=2041`): the mistake an id-based site invites.

Every negative is checked against the positive set (both orientations) and a URL is
never paired with itself. The default combination is the paper's best (random mono+bi,
jaccard mono+bi, remove bi) plus neighbour bi. Where a pair's languages are unknown (a WMT16-style pair
file) the side stands for the language: all src URLs share one, all trg URLs the other.
"""
from __future__ import annotations

import random
import re

import numpy as np
import pandas as pd
from scipy import sparse

from parascout.udfs.common.urls import url_host
from parascout.udfs.rank.url_models.preprocess import TOKEN_PATTERN, normalize_url, resource_start, url_tokens

GENERATORS = ("random", "jaccard", "remove", "neighbour")
VARIANTS = ("bi", "mono")
ALL_STRATEGIES = tuple(f"{g}-{v}" for g in GENERATORS for v in VARIANTS)
DEFAULT_STRATEGIES = ("random-mono", "random-bi", "jaccard-mono", "jaccard-bi", "remove-bi", "neighbour-bi")
NEGATIVE_COLUMNS = ["host", "src_url", "trg_url", "src_lang", "trg_lang", "strategy"]
REPEATED_SLASHES = re.compile(r"/{2,}")
DIGIT_RUN = re.compile(r"[0-9]+")


def parse_strategies(text: str) -> tuple[str, ...]:
    """'random-mono,jaccard-bi' (or 'default' / 'all') -> validated strategy names."""
    if text.strip() in ("default", ""):
        return DEFAULT_STRATEGIES
    if text.strip() == "all":
        return ALL_STRATEGIES
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in ALL_STRATEGIES]
    if unknown:
        raise ValueError(f"unknown negative strategies {unknown}; choose from {list(ALL_STRATEGIES)}")
    return names


def with_languages_and_hosts(positives: pd.DataFrame) -> pd.DataFrame:
    """Positives with host (from src_url when absent) and src/trg languages (the side when unknown)."""
    frame = positives[["src_url", "trg_url"]].copy()
    frame["host"] = positives.get("host")
    frame["host"] = frame["host"].where(frame["host"].notna(), frame["src_url"].map(url_host))
    for side in ("src", "trg"):
        column = f"{side}_lang"
        frame[column] = positives.get(column)
        frame[column] = frame[column].where(frame[column].notna(), side)
    return frame.reset_index(drop=True)


def remove_random_tokens(url: str, rng: random.Random, fraction: float = 0.5) -> str:
    """The URL with about `fraction` of its resource tokens removed (at least one); the URL itself if it has none."""
    start = resource_start(url)
    tokens = TOKEN_PATTERN.findall(url[start:])
    if not tokens:
        return url
    wanted = rng.normalvariate(len(tokens) * fraction, len(tokens) * fraction / 3.0)
    count = min(max(round(wanted), 1), len(tokens))
    removed = set(rng.sample(range(len(tokens)), count))
    resource = "".join(token for index, token in enumerate(tokens) if index not in removed)
    return url[:start] + REPEATED_SLASHES.sub("/", resource).lstrip("/")


def _token_matrix(urls: list[str]) -> sparse.csr_matrix:
    vocabulary: dict[str, int] = {}
    rows, columns = [], []
    for row, url in enumerate(urls):
        for token in set(url_tokens(normalize_url(url).lower())):
            rows.append(row)
            columns.append(vocabulary.setdefault(token, len(vocabulary)))
    data = np.ones(len(rows), dtype=np.float32)
    return sparse.csr_matrix((data, (rows, columns)), shape=(len(urls), max(len(vocabulary), 1)))


class _HostPool:
    """The URLs of one host by language (at most max_pool per language, sampled)."""

    def __init__(self, urls_by_language: dict[str, list[str]], max_pool: int, rng: random.Random):
        self.urls = {}
        for language, urls in urls_by_language.items():
            unique = list(dict.fromkeys(urls))
            if len(unique) > max_pool:
                unique = rng.sample(unique, max_pool)
            self.urls[language] = unique
        self.index = {language: {url: i for i, url in enumerate(urls)} for language, urls in self.urls.items()}

    def partners(self, queries: list[str], language: str, excluded: list[set[str]], k: int, method: str,
                 rng: np.random.Generator) -> list[list[str]]:
        """Up to k URLs of `language` per query: random, or highest token Jaccard; never an excluded URL."""
        pool = self.urls.get(language, [])
        if not pool or not queries:
            return [[] for _ in queries]
        scores = rng.random((len(queries), len(pool)))
        if method == "jaccard":
            matrix = _token_matrix(list(queries) + pool)
            query_matrix, pool_matrix = matrix[: len(queries)], matrix[len(queries):]
            intersection = (query_matrix @ pool_matrix.T).toarray()
            sizes_query = np.asarray(query_matrix.sum(axis=1)).ravel()[:, None]
            sizes_pool = np.asarray(pool_matrix.sum(axis=1)).ravel()[None, :]
            union = np.maximum(sizes_query + sizes_pool - intersection, 1)
            scores = intersection / union + scores * 1e-6
        index = self.index[language]
        for row, urls in enumerate(excluded):
            for url in urls:
                column = index.get(url)
                if column is not None:
                    scores[row, column] = -np.inf
        k = min(k, len(pool))
        best = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        chosen = []
        for row, columns in enumerate(best):
            columns = columns[np.argsort(-scores[row, columns])]
            chosen.append([pool[c] for c in columns if np.isfinite(scores[row, c])])
        return chosen


def generate_negatives(positives: pd.DataFrame, strategies: tuple[str, ...] = DEFAULT_STRATEGIES,
                       per_positive: int = 1, seed: int = 0, max_pool: int = 2000) -> pd.DataFrame:
    """k negatives per positive and strategy, same host, never a positive (either orientation), never (u, u)."""
    for name in strategies:
        if name not in ALL_STRATEGIES:
            raise ValueError(f"unknown negative strategy {name!r}; choose from {list(ALL_STRATEGIES)}")
    frame = with_languages_and_hosts(positives)
    positive_set = set(zip(frame["src_url"], frame["trg_url"])) | set(zip(frame["trg_url"], frame["src_url"]))
    python_rng = random.Random(seed)
    numpy_rng = np.random.default_rng(seed)
    rows: list[tuple] = []
    for host, group in frame.groupby("host", sort=True):
        rows.extend(_host_negatives(host, group, strategies, per_positive, max_pool, python_rng, numpy_rng))
    negatives = pd.DataFrame(rows, columns=NEGATIVE_COLUMNS)
    keep = [(s, t) not in positive_set and s != t for s, t in zip(negatives["src_url"], negatives["trg_url"])]
    negatives = negatives[keep].drop_duplicates(subset=["src_url", "trg_url"])
    return negatives.reset_index(drop=True)


def _host_negatives(host, group, strategies, per_positive, max_pool, python_rng, numpy_rng) -> list[tuple]:
    urls_by_language: dict[str, list[str]] = {}
    partners: dict[str, set[str]] = {}
    for src, trg, src_lang, trg_lang in zip(group["src_url"], group["trg_url"], group["src_lang"], group["trg_lang"]):
        urls_by_language.setdefault(src_lang, []).append(src)
        urls_by_language.setdefault(trg_lang, []).append(trg)
        partners.setdefault(src, {src}).add(trg)
        partners.setdefault(trg, {trg}).add(src)
    pool = _HostPool(urls_by_language, max_pool, python_rng)
    positives = list(zip(group["src_url"], group["trg_url"], group["src_lang"], group["trg_lang"]))
    rows: list[tuple] = []
    for name in strategies:
        generator, variant = name.split("-")
        if generator == "remove":
            rows.extend(_removal_negatives(host, positives, variant, per_positive, python_rng, name))
            continue
        if generator == "neighbour":
            rows.extend(_neighbour_negatives(host, positives, pool, partners, variant, per_positive, name))
            continue
        # monolingual queries alternate sides so both languages get same-language negatives
        queries = []
        for index, (src, trg, src_lang, trg_lang) in enumerate(positives):
            if variant == "bi":
                queries.append((src, src_lang, trg_lang))
            elif index % 2 == 0:
                queries.append((src, src_lang, src_lang))
            else:
                queries.append((trg, trg_lang, trg_lang))
        for language in sorted({q[2] for q in queries}):
            subset = [q for q in queries if q[2] == language]
            urls = [q[0] for q in subset]
            chosen = pool.partners(urls, language, [partners[u] for u in urls], per_positive, generator, numpy_rng)
            for (url, url_lang, partner_lang), found in zip(subset, chosen):
                rows.extend((host, url, partner, url_lang, partner_lang, name) for partner in found)
    return rows


def _number_shape(url: str) -> tuple[str, tuple[int, ...]]:
    """(the URL with digit runs masked, its numbers)."""
    return DIGIT_RUN.sub("#", url), tuple(int(run[:15]) for run in DIGIT_RUN.findall(url))


def _neighbour_negatives(host, positives, pool: _HostPool, partners, variant, per_positive, name) -> list[tuple]:
    """Per positive, the k URLs of the same shape with the nearest numbers (never a partner)."""
    shapes: dict[str, dict[str, list[tuple[tuple[int, ...], str]]]] = {}
    for language, urls in pool.urls.items():
        by_shape = shapes.setdefault(language, {})
        for url in urls:
            shape, numbers = _number_shape(url)
            if numbers:
                by_shape.setdefault(shape, []).append((numbers, url))
    rows = []
    for index, (src, trg, src_lang, trg_lang) in enumerate(positives):
        query, query_lang, model, model_lang = (src, src_lang, trg, trg_lang)
        if variant == "mono":
            query, query_lang, model, model_lang = ((src, src_lang, src, src_lang) if index % 2 == 0
                                                    else (trg, trg_lang, trg, trg_lang))
        shape, numbers = _number_shape(model)
        same_shape = shapes.get(model_lang, {}).get(shape, [])
        excluded = partners.get(query, {query})
        ranked = sorted((sum(abs(a - b) for a, b in zip(other, numbers)), url) for other, url in same_shape
                        if url not in excluded and url != model)
        rows.extend((host, query, url, query_lang, model_lang, name) for _, url in ranked[:per_positive])
    return rows


def _removal_negatives(host, positives, variant, per_positive, rng, name) -> list[tuple]:
    rows = []
    for index, (src, trg, src_lang, trg_lang) in enumerate(positives):
        for _ in range(per_positive):
            if variant == "bi":
                rows.append((host, remove_random_tokens(src, rng), remove_random_tokens(trg, rng),
                             src_lang, trg_lang, name))
            elif index % 2 == 0:
                rows.append((host, src, remove_random_tokens(src, rng), src_lang, src_lang, name))
            else:
                rows.append((host, trg, remove_random_tokens(trg, rng), trg_lang, trg_lang, name))
    return rows
