"""Token-Jaccard top-k pairs between the URLs of two languages: exact sparse products in bounded chunks for
small groups, MinHash/LSH banding plus exact Jaccard on colliding pairs for big ones (never the Cartesian product).
The banding's knobs are BlockingConfig's (udfs.rank.blocking.config), passed down as `config`."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

from parascout.udfs.rank.blocking.config import DEFAULT, BlockingConfig

#: dense cells (src rows x trg columns) of one exact-Jaccard chunk: bounds memory per group
EXACT_CHUNK_CELLS = 4_000_000


#: token occurrences hashed at once (x permutations x 8 bytes of memory)
MINHASH_CHUNK_TOKENS = 200_000


PAIR_COLUMNS = ["src_index", "trg_index", "jaccard"]


EMPTY_PAIRS = {"src_index": "int64", "trg_index": "int64", "jaccard": "float64", "top_k": "bool"}


# ---- exact Jaccard -------------------------------------------------------------------------
def token_matrices(src_tokens: list[frozenset[str]], trg_tokens: list[frozenset[str]]
                   ) -> tuple[sparse.csr_matrix, sparse.csr_matrix, np.ndarray]:
    """Binary URL x token incidence matrices over one shared vocabulary, and that vocabulary."""
    lengths = np.array([len(t) for t in (*src_tokens, *trg_tokens)], dtype=np.int64)
    flat = [token for tokens in (*src_tokens, *trg_tokens) for token in tokens]
    codes, vocabulary_tokens = pd.factorize(pd.Series(flat, dtype=object))
    vocabulary = int(codes.max()) + 1 if len(codes) else 1
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    data = np.ones(len(codes), dtype=np.float32)
    matrix = sparse.csr_matrix((data, codes, indptr), shape=(len(lengths), vocabulary))
    return matrix[: len(src_tokens)], matrix[len(src_tokens):], np.asarray(vocabulary_tokens, dtype=object)


def _top_k_rows(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the k best positive entries of each row (ties: lower column first)."""
    if scores.shape[1] > k:
        candidates = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    else:
        candidates = np.tile(np.arange(scores.shape[1]), (scores.shape[0], 1))
    rows = np.repeat(np.arange(scores.shape[0]), candidates.shape[1])
    columns = candidates.ravel()
    keep = scores[rows, columns] > 0
    return rows[keep], columns[keep]


def exact_top_k(queries: sparse.csr_matrix, others: sparse.csr_matrix, k: int,
                query_rows: np.ndarray | None = None) -> pd.DataFrame:
    """For each query row (all, or `query_rows`), its k most Jaccard-similar rows of `others` (J > 0)."""
    query_rows = np.arange(queries.shape[0]) if query_rows is None else np.asarray(query_rows)
    if len(query_rows) == 0 or others.shape[0] == 0:
        return pd.DataFrame({"query": [], "other": [], "jaccard": []})
    query_sizes = np.asarray(queries.sum(axis=1)).ravel()
    other_sizes = np.asarray(others.sum(axis=1)).ravel()
    others_t = others.T.tocsc()
    chunk = max(1, EXACT_CHUNK_CELLS // max(1, others.shape[0]))
    found = []
    for start in range(0, len(query_rows), chunk):
        rows = query_rows[start:start + chunk]
        intersection = (queries[rows] @ others_t).toarray()
        union = query_sizes[rows, None] + other_sizes[None, :] - intersection
        jaccard = np.divide(intersection, union, out=np.zeros_like(intersection), where=union > 0)
        local_rows, columns = _top_k_rows(jaccard, k)
        found.append(pd.DataFrame({"query": rows[local_rows], "other": columns,
                                   "jaccard": jaccard[local_rows, columns]}))
    return pd.concat(found, ignore_index=True)


def exact_similar_pairs(src: sparse.csr_matrix, trg: sparse.csr_matrix, k: int) -> pd.DataFrame:
    """Union of each source URL's top-k targets and each target URL's top-k sources, exactly."""
    forward = exact_top_k(src, trg, k).rename(columns={"query": "src_index", "other": "trg_index"})
    backward = exact_top_k(trg, src, k).rename(columns={"query": "trg_index", "other": "src_index"})
    return _union_pairs(forward, backward)


def _union_pairs(*frames: pd.DataFrame) -> pd.DataFrame:
    pairs = pd.concat([f[PAIR_COLUMNS] for f in frames], ignore_index=True)
    pairs = pairs.drop_duplicates(["src_index", "trg_index"]).astype({"src_index": np.int64, "trg_index": np.int64})
    return pairs.sort_values(["src_index", "trg_index"], ignore_index=True)


# ---- MinHash / LSH -------------------------------------------------------------------------
def minhash_signatures(matrix: sparse.csr_matrix, token_hashes: np.ndarray,
                       permutations: int = DEFAULT.minhash_permutations, seed: int = 1) -> np.ndarray:
    """MinHash signatures (rows x permutations, uint64) by multiply-shift hashing of 64-bit token hashes."""
    rng = np.random.default_rng(seed)
    multipliers = rng.integers(1, 2**63, size=permutations, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    increments = rng.integers(0, 2**63, size=permutations, dtype=np.uint64)
    signatures = np.full((matrix.shape[0], permutations), np.iinfo(np.uint64).max, dtype=np.uint64)
    rows_per_chunk = max(1, MINHASH_CHUNK_TOKENS // max(1, int(np.diff(matrix.indptr).mean() if matrix.shape[0] else 1)))
    for start in range(0, matrix.shape[0], rows_per_chunk):
        block = matrix[start:start + rows_per_chunk]
        nonempty = np.flatnonzero(np.diff(block.indptr) > 0)
        if len(nonempty) == 0:
            continue
        hashed = token_hashes[block.indices]
        with np.errstate(over="ignore"):
            permuted = (multipliers[:, None] * hashed[None, :] + increments[:, None]) >> np.uint64(16)
        minima = np.minimum.reduceat(permuted, block.indptr[:-1][nonempty], axis=1)
        signatures[start + nonempty] = minima.T
    return signatures


def band_keys(signatures: np.ndarray, bands: int = DEFAULT.lsh_bands) -> np.ndarray:
    """One 64-bit bucket key per (row, band): the band's rows of the signature hashed together."""
    rows_per_band = signatures.shape[1] // bands
    keys = np.empty((signatures.shape[0], bands), dtype=np.uint64)
    for band in range(bands):
        block = np.ascontiguousarray(signatures[:, band * rows_per_band:(band + 1) * rows_per_band])
        keys[:, band] = pd.util.hash_array(block.view(f"V{block.itemsize * rows_per_band}").ravel())
    return keys


def lsh_candidate_pairs(src_keys: np.ndarray, trg_keys: np.ndarray, src_rows: np.ndarray, trg_rows: np.ndarray,
                        max_bucket_pairs: int = DEFAULT.max_bucket_pairs) -> tuple[pd.DataFrame, int]:
    """Distinct (src, trg) row pairs sharing an LSH bucket in any band; also the number of buckets skipped."""
    found, skipped = [], 0
    for band in range(src_keys.shape[1]):
        left = pd.DataFrame({"key": src_keys[src_rows, band], "src_index": src_rows})
        right = pd.DataFrame({"key": trg_keys[trg_rows, band], "trg_index": trg_rows})
        left_sizes, right_sizes = left["key"].value_counts(), right["key"].value_counts()
        shared = left_sizes.index.intersection(right_sizes.index)
        products = left_sizes[shared] * right_sizes[shared]
        oversized = products.index[products > max_bucket_pairs]
        skipped += len(oversized)
        allowed = products.index[products <= max_bucket_pairs]
        left = left[left["key"].isin(allowed)]
        found.append(left.merge(right[right["key"].isin(allowed)], on="key")[["src_index", "trg_index"]])
    pairs = pd.concat(found, ignore_index=True).drop_duplicates() if found else pd.DataFrame(
        {"src_index": [], "trg_index": []})
    return pairs.astype(np.int64), skipped


def pairwise_jaccard(src: sparse.csr_matrix, trg: sparse.csr_matrix, src_index: np.ndarray,
                     trg_index: np.ndarray) -> np.ndarray:
    """Exact Jaccard of each listed (src row, trg row) pair."""
    if len(src_index) == 0:
        return np.zeros(0, dtype=np.float32)
    intersection = np.asarray(src[src_index].multiply(trg[trg_index]).sum(axis=1)).ravel()
    union = np.asarray(src.sum(axis=1)).ravel()[src_index] + np.asarray(trg.sum(axis=1)).ravel()[trg_index]
    union = union - intersection
    return np.divide(intersection, union, out=np.zeros_like(intersection, dtype=np.float64), where=union > 0)


def _top_k_by(pairs: pd.DataFrame, key: str, k: int) -> pd.DataFrame:
    ordered = pairs.sort_values([key, "jaccard", "src_index", "trg_index"], ascending=[True, False, True, True])
    return ordered.groupby(key, sort=False).head(k)


def lsh_similar_pairs(src: sparse.csr_matrix, trg: sparse.csr_matrix, token_hashes: np.ndarray, k: int,
                      config: BlockingConfig = DEFAULT) -> tuple[pd.DataFrame, dict[str, int]]:
    """Top-k pairs from LSH buckets verified by exact Jaccard; URLs no bucket paired get an exact pass."""
    stacked = sparse.vstack([src, trg]).tocsr()
    keys = band_keys(minhash_signatures(stacked, token_hashes, config.minhash_permutations), config.lsh_bands)
    src_keys, trg_keys = keys[: src.shape[0]], keys[src.shape[0]:]
    src_rows = np.flatnonzero(np.diff(src.indptr) > 0)
    trg_rows = np.flatnonzero(np.diff(trg.indptr) > 0)
    candidates, skipped = lsh_candidate_pairs(src_keys, trg_keys, src_rows, trg_rows, config.max_bucket_pairs)
    candidates["jaccard"] = pairwise_jaccard(src, trg, candidates["src_index"].to_numpy(),
                                             candidates["trg_index"].to_numpy())
    candidates = candidates[candidates["jaccard"] > 0]
    lonely_src = np.setdiff1d(src_rows, candidates["src_index"].unique())
    lonely_trg = np.setdiff1d(trg_rows, candidates["trg_index"].unique())
    forward = exact_top_k(src, trg, k, lonely_src).rename(columns={"query": "src_index", "other": "trg_index"})
    backward = exact_top_k(trg, src, k, lonely_trg).rename(columns={"query": "trg_index", "other": "src_index"})
    pairs = _union_pairs(_top_k_by(candidates, "src_index", k), _top_k_by(candidates, "trg_index", k),
                         forward, backward)
    stats = {"lsh_candidate_pairs": len(candidates), "lsh_buckets_skipped": skipped,
             "lsh_exact_fallback_urls": len(lonely_src) + len(lonely_trg)}
    return pairs, stats


def all_pairs(src: sparse.csr_matrix, trg: sparse.csr_matrix, k: int) -> pd.DataFrame:
    """Every (src, trg) pair with its Jaccard; top_k marks the pairs the top-k blocking would keep."""
    intersection = (src @ trg.T).toarray()
    union = np.asarray(src.sum(axis=1)) + np.asarray(trg.sum(axis=1)).T - intersection
    jaccard = np.divide(intersection, union, out=np.zeros_like(intersection), where=union > 0)
    src_index, trg_index = np.divmod(np.arange(jaccard.size), jaccard.shape[1])
    pairs = pd.DataFrame({"src_index": src_index, "trg_index": trg_index, "jaccard": jaccard.ravel()})
    chosen = exact_similar_pairs(src, trg, k)
    pairs["top_k"] = False
    pairs.loc[chosen["src_index"].to_numpy() * jaccard.shape[1] + chosen["trg_index"].to_numpy(), "top_k"] = True
    return pairs


def similar_pairs(src_tokens: list[frozenset[str]], trg_tokens: list[frozenset[str]], k: int,
                  lsh_min_pairs: int = 2_000_000, exhaustive_max_pairs: int = 0, config: BlockingConfig = DEFAULT
                  ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Candidate pairs of one group: all of them when src x trg <= exhaustive_max_pairs, else the top-k
    token-Jaccard pairs both ways (exact below `lsh_min_pairs` cells of the product, else MinHash/LSH as `config`
    says).

    Columns src_index, trg_index, jaccard, top_k (False for pairs only the exhaustive product gives).
    """
    if not src_tokens or not trg_tokens:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in EMPTY_PAIRS.items()}), {}
    src, trg, vocabulary = token_matrices(src_tokens, trg_tokens)
    product = len(src_tokens) * len(trg_tokens)
    if product <= exhaustive_max_pairs:
        return all_pairs(src, trg, k), {"groups_exhaustive": 1}
    if product < lsh_min_pairs:
        pairs, stats = exact_similar_pairs(src, trg, k), {"groups_exact": 1}
    else:
        pairs, stats = lsh_similar_pairs(src, trg, pd.util.hash_array(vocabulary), k, config)
        stats = {"groups_lsh": 1, **stats}
    return pairs.assign(top_k=True), stats

