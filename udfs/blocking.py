"""Candidate blocking within a web host: token-Jaccard top-k pairs and bounded sub-groups.

A host with 10^5 pages has 10^10 URL pairs, so pairs are never enumerated. For every
URL of one language we keep the k URLs of the other language whose URL tokens are
most similar (Jaccard over token sets, language markers removed), in both directions.
Small groups are scored exactly with sparse matrix products in bounded chunks; big
groups go through MinHash/LSH banding, then exact Jaccard on the colliding pairs (and
an exact pass for the URLs no bucket paired). Huge hosts are first split into bounded
groups by language-neutral path prefix, then by a hash of the language-neutral URL
(the "handle"), so that URLs differing only by their language marker stay together.

Content blocking (ILSP-FC): fetched pages (`docs.images`) of the two languages that show the same
rare image file name are paired; names on many of a site's pages (logos, icons) are ignored and
names on more than a bounded number of pages are skipped and counted, so no site can blow up.
Structure blocking (STRAND's length correlation as a blocker): within a bounded group, each page's
k nearest pages of the other language by the log text lengths of their first paragraphs.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from urllib.parse import unquote, urlsplit

import numpy as np
import pandas as pd
from scipy import sparse

from parascout.udfs.langs import load_languages

TOKEN_SPLIT = re.compile(r"[\W_]+", re.UNICODE)
LETTER_DIGIT_BOUNDARY = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])", re.UNICODE)
LOCALE_SEGMENT = re.compile(r"^([a-z]{2,3})(?:[-_][a-z]{2,4})?$")
#: tokens every URL of a host shares; they only dilute the similarity
URL_NOISE_TOKENS = frozenset({"http", "https", "www"})
#: character n-grams of URL words join the word tokens (WMT16 en-fr top-5 recall 94.8% -> 96.9%)
CHAR_NGRAM = 3
#: the features of a URL with no token left (a home page: '/', '/en/', '/?lang=is')
EMPTY_URL_FEATURES = frozenset({"<root>"})
#: dense cells (src rows x trg columns) of one exact-Jaccard chunk: bounds memory per group
EXACT_CHUNK_CELLS = 4_000_000
MINHASH_PERMUTATIONS = 64
#: token occurrences hashed at once (x permutations x 8 bytes of memory)
MINHASH_CHUNK_TOKENS = 200_000
LSH_BANDS = 16
#: LSH buckets pairing more URLs than this are skipped (a token every URL shares, not evidence)
MAX_BUCKET_PAIRS = 20_000
#: an image name on more than this share of a site's fetched pages is site furniture (logo, icon)
IMAGE_MAX_SHARE = 0.1
#: an image name on more pages than this gives no pairs on any site (bounds one name's src x trg product)
IMAGE_MAX_PAGES = 20
#: an image name on at most this many pages is rare however small the site (a page and its translations)
IMAGE_RARE_PAGES = 4
IMAGE_STATUSES = ("ok", "common", "one_language", "capped")
#: paragraphs (<p> elements, in page order) whose text lengths make a page's structure profile
PROFILE_PARAGRAPHS = 8
#: profile value of a paragraph a page does not have (centred log lengths lie within about +-3)
MISSING_PARAGRAPH = -9.0

PAIR_COLUMNS = ["src_index", "trg_index", "jaccard"]
EMPTY_PAIRS = {"src_index": "int64", "trg_index": "int64", "jaccard": "float64", "top_k": "bool"}


@functools.lru_cache(maxsize=64)
def language_markers(languages: tuple[str, ...]) -> frozenset[str]:
    """Lower-cased codes and names that mark a URL as being in one of `languages` (ISO 639-3)."""
    table = load_languages()
    markers: set[str] = set()
    for iso3 in languages:
        language = table.get(iso3)
        if language is None:
            markers.add(iso3)
            continue
        markers.update(code.lower() for code in language.codes)
        for name in (language.name, language.endonym or "", *language.names):
            markers.update(tokenize_text(name))
        for locale in language.locales:
            markers.add(re.sub(r"[-_]", "", locale.lower()))
    markers.discard("")
    return frozenset(markers)


def tokenize_text(text: str) -> list[str]:
    """Lower-cased word and number tokens; letters and digits glued together are split (m99f -> m 99 f)."""
    return [token for token in TOKEN_SPLIT.split(LETTER_DIGIT_BOUNDARY.sub(" ", text.lower())) if token]


def url_tokens(url: str, markers: frozenset[str] = frozenset(), strip_host: str | None = None) -> frozenset[str]:
    """The URL's token set for similarity: path, query and the host left of `strip_host`, minus markers."""
    try:
        parts = urlsplit(unquote(url.strip()))
    except (ValueError, AttributeError):
        return frozenset()
    host = (parts.hostname or "").rstrip(".")
    if strip_host and (host == strip_host or host.endswith("." + strip_host)):
        host = host[: -len(strip_host)]
    text = f"{host} {parts.path} {parts.query}"
    return frozenset(t for t in tokenize_text(text) if t not in markers and t not in URL_NOISE_TOKENS)


def similarity_features(tokens: frozenset[str], ngram: int = CHAR_NGRAM) -> frozenset[str]:
    """Word tokens plus character n-grams of non-numeric words, so 'philosophy' ~ 'philosophie'."""
    features = set(tokens)
    for token in tokens:
        if len(token) > ngram and not token.isdigit():
            padded = f"<{token}>"
            features.update(padded[i:i + ngram] for i in range(len(padded) - ngram + 1))
    return frozenset(features)


def url_features(url: str, markers: frozenset[str] = frozenset(), strip_host: str | None = None) -> frozenset[str]:
    """What token Jaccard compares for a URL: its tokens and their character n-grams ('/en/' and '/' match)."""
    return similarity_features(url_tokens(url, markers, strip_host)) or EMPTY_URL_FEATURES


def is_language_segment(segment: str, markers: frozenset[str]) -> bool:
    """A path segment that only names a language ('en', 'is', 'en-us', 'english')."""
    segment = segment.lower()
    if segment in markers:
        return True
    match = LOCALE_SEGMENT.match(segment)
    return bool(match and match.group(1) in markers)


def neutral_directories(url: str, markers: frozenset[str]) -> list[str]:
    """The URL's directory names with language segments removed (/en/news/a.html -> ['news'])."""
    try:
        path = urlsplit(url.strip()).path
    except (ValueError, AttributeError):
        return []
    segments = path.lower().split("/")[1:-1]
    return [s for s in segments if s and not is_language_segment(s, markers)]


def neutral_prefixes(url: str, markers: frozenset[str], depth: int = 3) -> list[str]:
    """Language-neutral directory prefixes of up to 1..depth directories (/en/a/b/c.html -> a, a/b, a/b)."""
    directories = neutral_directories(url, markers)
    return ["/".join(directories[:level]) for level in range(1, depth + 1)]


def neutral_host(host: str, domain: str | None, markers: frozenset[str]) -> str:
    """The host without www and language labels left of its registered domain: en.example.com -> example.com."""
    host = (host or "").lower().rstrip(".")
    domain = (domain or "").lower()
    if not domain or host == domain or not host.endswith("." + domain):
        return host.removeprefix("www.")
    labels = host[: -len(domain)].rstrip(".").split(".")
    kept = [label for label in labels if label and label != "www" and not is_language_segment(label, markers)]
    return ".".join([*kept, domain])


@functools.lru_cache(maxsize=64)
def _marker_pattern(markers: frozenset[str]) -> re.Pattern:
    alternatives = "|".join(sorted((re.escape(m) for m in markers), key=len, reverse=True)) or "(?!)"
    return re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])", re.UNICODE)


def neutral_handle(url: str, markers: frozenset[str]) -> str:
    """Path and query with language markers cut out: translations differing only by marker share it."""
    try:
        parts = urlsplit(url.strip().lower())
    except (ValueError, AttributeError):
        return url or ""
    return _marker_pattern(markers).sub("", f"{parts.path}?{parts.query}")


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
def minhash_signatures(matrix: sparse.csr_matrix, token_hashes: np.ndarray, permutations: int = MINHASH_PERMUTATIONS,
                       seed: int = 1) -> np.ndarray:
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


def band_keys(signatures: np.ndarray, bands: int = LSH_BANDS) -> np.ndarray:
    """One 64-bit bucket key per (row, band): the band's rows of the signature hashed together."""
    rows_per_band = signatures.shape[1] // bands
    keys = np.empty((signatures.shape[0], bands), dtype=np.uint64)
    for band in range(bands):
        block = np.ascontiguousarray(signatures[:, band * rows_per_band:(band + 1) * rows_per_band])
        keys[:, band] = pd.util.hash_array(block.view(f"V{block.itemsize * rows_per_band}").ravel())
    return keys


def lsh_candidate_pairs(src_keys: np.ndarray, trg_keys: np.ndarray, src_rows: np.ndarray, trg_rows: np.ndarray,
                        max_bucket_pairs: int = MAX_BUCKET_PAIRS) -> tuple[pd.DataFrame, int]:
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
                      bands: int = LSH_BANDS, permutations: int = MINHASH_PERMUTATIONS,
                      max_bucket_pairs: int = MAX_BUCKET_PAIRS) -> tuple[pd.DataFrame, dict[str, int]]:
    """Top-k pairs from LSH buckets verified by exact Jaccard; URLs no bucket paired get an exact pass."""
    stacked = sparse.vstack([src, trg]).tocsr()
    keys = band_keys(minhash_signatures(stacked, token_hashes, permutations), bands)
    src_keys, trg_keys = keys[: src.shape[0]], keys[src.shape[0]:]
    src_rows = np.flatnonzero(np.diff(src.indptr) > 0)
    trg_rows = np.flatnonzero(np.diff(trg.indptr) > 0)
    candidates, skipped = lsh_candidate_pairs(src_keys, trg_keys, src_rows, trg_rows, max_bucket_pairs)
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
                  lsh_min_pairs: int = 2_000_000, exhaustive_max_pairs: int = 0) -> tuple[pd.DataFrame, dict[str, int]]:
    """Candidate pairs of one group: all of them when src x trg <= exhaustive_max_pairs, else the top-k
    token-Jaccard pairs both ways (exact below `lsh_min_pairs` cells of the product, else MinHash/LSH).

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
        pairs, stats = lsh_similar_pairs(src, trg, pd.util.hash_array(vocabulary), k, bands=LSH_BANDS)
        stats = {"groups_lsh": 1, **stats}
    return pairs.assign(top_k=True), stats


# ---- one group of one host -----------------------------------------------------------------
SIMILAR_SCHEMA = "host string, src_url string, trg_url string, jaccard double, top_k boolean"


def cap_group(group: pd.DataFrame, max_urls: int) -> pd.DataFrame:
    """The first `max_urls` URLs of a group by URL order (what Spark reports as capped is the rest)."""
    if len(group) <= max_urls:
        return group
    return group.sort_values("url", kind="stable").head(max_urls)


def similar_pairs_for_group(group: pd.DataFrame, src_lang: str, trg_lang: str, k: int, max_urls: int,
                            lsh_min_pairs: int, strip_to: str = "host", exhaustive_max_pairs: int = 0) -> pd.DataFrame:
    """Candidate (src, trg) URL pairs of one host group (columns host, url, lang[, domain]): see similar_pairs."""
    group = cap_group(group, max_urls)
    markers = language_markers((src_lang, trg_lang))
    src = group[group["lang"] == src_lang].reset_index(drop=True)
    trg = group[group["lang"] == trg_lang].reset_index(drop=True)
    if src.empty or trg.empty:
        return pd.DataFrame({"host": pd.Series(dtype=object), "src_url": pd.Series(dtype=object),
                             "trg_url": pd.Series(dtype=object), "jaccard": pd.Series(dtype=np.float64),
                             "top_k": pd.Series(dtype=bool)})
    strip = group[strip_to].iloc[0]
    src_tokens = [url_features(u, markers, strip) for u in src["url"]]
    trg_tokens = [url_features(u, markers, strip) for u in trg["url"]]
    pairs, _ = similar_pairs(src_tokens, trg_tokens, k, lsh_min_pairs, exhaustive_max_pairs)
    return pd.DataFrame({
        "host": group["host"].iloc[0],
        "src_url": src["url"].to_numpy()[pairs["src_index"].to_numpy()],
        "trg_url": trg["url"].to_numpy()[pairs["trg_index"].to_numpy()],
        "jaccard": pairs["jaccard"].to_numpy(dtype=np.float64),
        "top_k": pairs["top_k"].to_numpy(dtype=bool),
    })


def split_keys(urls: Iterable[str], languages: tuple[str, str], depth: int = 3) -> pd.DataFrame:
    """Per URL: language-neutral prefixes prefix_1..prefix_depth and a 31-bit hash of its neutral handle."""
    markers = language_markers(tuple(languages))
    urls = list(urls)
    prefixes = [neutral_prefixes(u or "", markers, depth) for u in urls]
    handles = pd.Series([neutral_handle(u or "", markers) for u in urls], dtype=object)
    frame = pd.DataFrame(prefixes, columns=[f"prefix_{level}" for level in range(1, depth + 1)])
    frame["handle_hash"] = (pd.util.hash_array(handles.to_numpy()) >> np.uint64(33)).astype(np.int64)
    return frame


# ---- Spark wrappers (mapInPandas / applyInPandas / pandas_udf) -----------------------------
def bind(function: Callable, **settings) -> Callable:
    """`function` with keyword settings fixed, as a plain function (Spark reads no type hints off it)."""
    def bound(data):
        return function(data, **settings)

    return bound


def split_keys_schema(depth: int) -> str:
    """Schema of `with_split_keys` output: the kept-URL columns plus prefixes and handle hash."""
    prefixes = ", ".join(f"prefix_{level} string" for level in range(1, depth + 1))
    return (f"site string, url string, surt string, lang string, p_lang double, lang_source string, "
            f"domain string, {prefixes}, handle_hash long")


def with_split_keys(batches: Iterable[pd.DataFrame], languages: tuple[str, str], depth: int
                    ) -> Iterable[pd.DataFrame]:
    """mapInPandas: add the split keys (neutral prefixes, handle hash) to batches of kept URLs."""
    for batch in batches:
        if batch.empty:
            continue
        keys = split_keys(batch["url"], languages, depth)
        yield pd.concat([batch.reset_index(drop=True), keys], axis=1)


def sites_of_hosts(batches: Iterable[pd.DataFrame], languages: tuple[str, str], grouped_by: str = "site"
                   ) -> Iterable[pd.DataFrame]:
    """mapInPandas: the site of each distinct host (language-neutral host, or registered domain); adds domain."""
    from parascout.udfs.urls import registered_domain

    markers = language_markers(tuple(languages))
    for batch in batches:
        if batch.empty:
            continue
        batch = batch.copy()
        if "domain" not in batch.columns:
            batch["domain"] = [registered_domain(h) for h in batch["host"]]
        if grouped_by == "domain":
            batch["site"] = batch["domain"].fillna(batch["host"])
        else:
            batch["site"] = [neutral_host(h, d, markers) for h, d in zip(batch["host"], batch["domain"])]
        yield batch[["host", "domain", "site"]]


def similar_pairs_for_group_frame(group: pd.DataFrame, languages: tuple[str, str], k: int, max_urls: int,
                                  lsh_min_pairs: int, strip_to: str = "host", exhaustive_max_pairs: int = 0
                                  ) -> pd.DataFrame:
    """applyInPandas: `similar_pairs_for_group` for a (host, group_key) group of kept URLs."""
    return similar_pairs_for_group(group, languages[0], languages[1], k, max_urls, lsh_min_pairs, strip_to,
                                   exhaustive_max_pairs)


def surt_of_links(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
    """pandas_udf body: SURT keys of absolute http(s) links (None for anything else)."""
    from parascout.udfs.urls import surt

    for links in batches:
        yield pd.Series([surt(link) if isinstance(link, str) and link.lower().startswith(("http://", "https://"))
                         else None for link in links], dtype=object)


# ---- Spark DataFrame plans (no SparkSession here: DataFrames in, DataFrames out) -----------
def bounded_groups(kept, languages: tuple[str, str], limit: int, depth: int = 3):
    """Add group_key to kept URLs (site, url, lang, ...): '' while a site has <= limit URLs, else its
    language-neutral path prefix (1..depth directories, deepened while a group stays over the limit),
    else prefix#(handle hash mod ceil(n / limit)); `chunked` marks hash-split groups.

    Only aggregations and joins: no site's URLs ever meet in one task before they are bounded.
    """
    from pyspark.sql import functions as F

    levels = max(depth, 1)
    keyed = kept.select("site", "url", "surt", "lang", "p_lang", "lang_source", "domain").mapInPandas(
        bind(with_split_keys, languages=languages, depth=levels), split_keys_schema(levels)
    ).withColumn("group_key", F.lit(""))
    for level in range(1, depth + 1):
        oversized = (keyed.groupBy("site", "group_key").count().filter(F.col("count") > limit)
                     .select("site", "group_key", F.lit(True).alias("oversized")))
        keyed = (keyed.join(oversized, ["site", "group_key"], "left")
                 .withColumn("group_key", F.when(F.col("oversized"), F.col(f"prefix_{level}"))
                             .otherwise(F.col("group_key"))).drop("oversized"))
    sizes = keyed.groupBy("site", "group_key").agg(F.count("*").alias("group_urls"))
    chunk = (F.col("handle_hash") % F.ceil(F.col("group_urls") / F.lit(limit))).cast("string")
    return (keyed.join(sizes, ["site", "group_key"])
            .withColumn("chunked", F.col("group_urls") > limit)
            .withColumn("group_key", F.when(F.col("chunked"), F.concat("group_key", F.lit("#"), chunk))
                        .otherwise(F.col("group_key")))
            .drop("group_urls"))


def orient_pairs(pairs, kept, first_language: str):
    """Candidate pairs (src_url, trg_url[, handle]) checked against kept URLs: host = their site, src in
    `first_language`, and `reason` ok | url_not_kept | cross_site | same_language."""
    from pyspark.sql import functions as F

    side = kept.select("url", "site", "lang")
    handle = F.col("handle") if "handle" in pairs.columns else F.lit(None).cast("string")
    joined = (pairs.select("src_url", "trg_url", handle.alias("handle"))
              .join(side.toDF("src_url", "src_site", "a_lang"), "src_url", "left")
              .join(side.toDF("trg_url", "trg_site", "b_lang"), "trg_url", "left"))
    reason = (F.when(F.col("a_lang").isNull() | F.col("b_lang").isNull(), "url_not_kept")
              .when(F.col("src_site") != F.col("trg_site"), "cross_site")
              .when(F.col("a_lang") == F.col("b_lang"), "same_language").otherwise("ok"))
    swap = F.col("a_lang") != F.lit(first_language)
    return joined.select(
        F.col("src_site").alias("host"),
        F.when(swap, F.col("trg_url")).otherwise(F.col("src_url")).alias("src_url"),
        F.when(swap, F.col("src_url")).otherwise(F.col("trg_url")).alias("trg_url"),
        "handle", reason.alias("reason"))


def link_pairs(docs, kept):
    """(page, linked page) for fetched pages (docs: url, outlinks[, status]) whose links hit a kept URL by SURT."""
    from pyspark.sql import functions as F

    fetched = docs.filter(F.col("status") == "ok") if "status" in docs.columns else docs
    links = (fetched.select("url", F.explode("outlinks").alias("link")).filter(F.col("link").isNotNull())
             .withColumn("link_surt", F.pandas_udf(surt_of_links, "string")(F.col("link"))))
    targets = kept.select(F.col("url").alias("trg_url"), F.col("surt").alias("link_surt"))
    return links.join(targets, "link_surt").select(F.col("url").alias("src_url"), "trg_url").distinct()


# ---- shared image names (ILSP-FC content blocking) -----------------------------------------
def image_status(n_pages, n_src, n_trg, site_pages, max_share: float = IMAGE_MAX_SHARE,
                 max_pages: int = IMAGE_MAX_PAGES):
    """Why an image name of a site does or does not pair pages (numpy arrays in, array of statuses out):
    common (on > max(IMAGE_RARE_PAGES, max_share x site pages) pages), one_language, capped (> max_pages
    pages: its n_src x n_trg pairs are skipped) or ok."""
    n_pages, n_src, n_trg = np.asarray(n_pages), np.asarray(n_src), np.asarray(n_trg)
    common = n_pages > np.maximum(IMAGE_RARE_PAGES, max_share * np.asarray(site_pages, dtype=np.float64))
    conditions = [common, (n_src == 0) | (n_trg == 0), n_pages > max_pages]
    return np.select(conditions, list(IMAGE_STATUSES[1:]), IMAGE_STATUSES[0])


def shared_image_pairs(pages: pd.DataFrame, languages: tuple[str, str], max_share: float = IMAGE_MAX_SHARE,
                       max_pages: int = IMAGE_MAX_PAGES) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairs of fetched pages (site, url, lang, images) in the two languages sharing a usable image name,
    as (host, src_url, trg_url), and every (site, image) name with n_pages, n_src, n_trg, site_pages, status.

    The pandas twin of `image_pairs` (the Spark plan rank-pairs runs), for benchmarks and tests.
    """
    pages = pages[pages["lang"].isin(languages)]
    site_pages = pages.groupby("site")["url"].nunique().rename("site_pages")
    incidences = (pages[["site", "url", "lang", "images"]].explode("images").rename(columns={"images": "image"})
                  .dropna(subset=["image"]))
    incidences = incidences[incidences["image"] != ""].drop_duplicates()
    names = incidences.assign(is_src=incidences["lang"] == languages[0], is_trg=incidences["lang"] == languages[1]
                              ).groupby(["site", "image"]).agg(n_pages=("url", "size"), n_src=("is_src", "sum"),
                                                               n_trg=("is_trg", "sum")).reset_index()
    names = names.join(site_pages, on="site")
    names["image_status"] = image_status(names["n_pages"], names["n_src"], names["n_trg"], names["site_pages"],
                                         max_share, max_pages)
    usable = incidences.merge(names.loc[names["image_status"] == "ok", ["site", "image"]], on=["site", "image"])
    src = usable[usable["lang"] == languages[0]].rename(columns={"url": "src_url"})[["site", "image", "src_url"]]
    trg = usable[usable["lang"] == languages[1]].rename(columns={"url": "trg_url"})[["site", "image", "trg_url"]]
    pairs = src.merge(trg, on=["site", "image"])[["site", "src_url", "trg_url"]].drop_duplicates()
    return pairs.rename(columns={"site": "host"}).reset_index(drop=True), names


def image_pairs(docs, kept, languages: tuple[str, str], max_share: float = IMAGE_MAX_SHARE,
                max_pages: int = IMAGE_MAX_PAGES):
    """Spark plan of `shared_image_pairs` over `docs` (url, images[, status]) and kept URLs (url, site, lang):
    (pairs: host, src_url, trg_url; names: site, image, n_pages, n_src, n_trg, site_pages, image_status).

    Joins and group-bys only; a (site, image) group is joined with itself only when it holds at most
    `max_pages` pages, so one name gives at most (max_pages / 2)^2 pairs.
    """
    from pyspark.sql import functions as F

    fetched = docs.filter(F.col("status") == "ok") if "status" in docs.columns else docs
    pages = fetched.select("url", "images").join(kept.select("url", "site", "lang"), "url")
    site_pages = pages.groupBy("site").agg(F.countDistinct("url").alias("site_pages"))
    incidences = (pages.select("site", "url", "lang", F.explode("images").alias("image"))
                  .filter(F.col("image").isNotNull() & (F.col("image") != "")).distinct())
    n_pages, n_src, n_trg = F.col("n_pages"), F.col("n_src"), F.col("n_trg")
    common = n_pages > F.greatest(F.lit(float(IMAGE_RARE_PAGES)), F.lit(float(max_share)) * F.col("site_pages"))
    status = (F.when(common, IMAGE_STATUSES[1]).when((n_src == 0) | (n_trg == 0), IMAGE_STATUSES[2])
              .when(n_pages > max_pages, IMAGE_STATUSES[3]).otherwise(IMAGE_STATUSES[0]))
    names = (incidences.groupBy("site", "image")
             .agg(F.count("*").alias("n_pages"), F.sum((F.col("lang") == languages[0]).cast("long")).alias("n_src"),
                  F.sum((F.col("lang") == languages[1]).cast("long")).alias("n_trg"))
             .join(site_pages, "site").withColumn("image_status", status))
    usable = incidences.join(names.filter(F.col("image_status") == IMAGE_STATUSES[0]).select("site", "image"),
                             ["site", "image"])
    src = usable.filter(F.col("lang") == languages[0]).select("site", "image", F.col("url").alias("src_url"))
    trg = usable.filter(F.col("lang") == languages[1]).select("site", "image", F.col("url").alias("trg_url"))
    pairs = src.join(trg, ["site", "image"]).select(F.col("site").alias("host"), "src_url", "trg_url").distinct()
    return pairs, names


# ---- paragraph-length profiles (structure blocking) ------------------------------------------
def paragraph_profile(structure, paragraphs: int = PROFILE_PARAGRAPHS) -> list[float]:
    """log(1 + text length) of the first `paragraphs` <p> elements of a STRAND linearisation (docs.structure)."""
    lengths: list[float] = []
    inside = False
    for token in structure if structure is not None else ():
        if token == "[START:p]":
            inside = True
            lengths.append(0.0)
        elif token == "[END:p]":
            inside = False
            if len(lengths) >= paragraphs:
                break
        elif inside and token.startswith("[Chunk:"):
            lengths[-1] += float(token[7:-1])
    return [float(np.log1p(length)) for length in lengths[:paragraphs]]


def paragraph_profiles(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
    """pandas_udf body: docs.structure -> paragraph_profile (array<double>)."""
    for structures in batches:
        yield pd.Series([paragraph_profile(structure) for structure in structures], dtype=object)


def profile_matrix(profiles: list, paragraphs: int = PROFILE_PARAGRAPHS) -> np.ndarray:
    """Profiles of one language as rows, centred on the mean log length of that language's paragraphs (a
    language's texts are uniformly longer or shorter), padded with MISSING_PARAGRAPH."""
    matrix = np.full((len(profiles), paragraphs), np.nan)
    for row, profile in enumerate(profiles):
        values = np.asarray(profile if profile is not None else (), dtype=np.float64)[:paragraphs]
        matrix[row, :len(values)] = values
    present = ~np.isnan(matrix)
    if present.any():
        matrix[present] -= matrix[present].mean()
    return np.where(present, matrix, MISSING_PARAGRAPH)


def nearest_profiles(queries: np.ndarray, others: np.ndarray, k: int) -> pd.DataFrame:
    """For each query row, its k nearest rows of `others` by L1 distance (in bounded chunks of rows)."""
    if len(queries) == 0 or len(others) == 0:
        return pd.DataFrame({"query": [], "other": [], "distance": []})
    chunk = max(1, EXACT_CHUNK_CELLS // max(1, len(others) * queries.shape[1]))
    found = []
    for start in range(0, len(queries), chunk):
        distance = np.abs(queries[start:start + chunk, None, :] - others[None, :, :]).sum(axis=2)
        nearest = np.argsort(distance, axis=1, kind="stable")[:, :k]
        rows = np.repeat(np.arange(len(distance)), nearest.shape[1])
        found.append(pd.DataFrame({"query": rows + start, "other": nearest.ravel(),
                                   "distance": distance[rows, nearest.ravel()]}))
    return pd.concat(found, ignore_index=True)


def structure_pairs_for_group(group: pd.DataFrame, src_lang: str, trg_lang: str, k: int, max_urls: int
                              ) -> pd.DataFrame:
    """Each fetched page's k nearest pages of the other language by paragraph-length profile, both ways,
    for one group (host, url, lang, profile); pages without a paragraph take no part."""
    group = cap_group(group, max_urls)
    group = group[[profile is not None and len(profile) > 0 for profile in group["profile"]]]
    src = group[group["lang"] == src_lang].reset_index(drop=True)
    trg = group[group["lang"] == trg_lang].reset_index(drop=True)
    columns = {"host": object, "src_url": object, "trg_url": object, "distance": np.float64}
    if src.empty or trg.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in columns.items()})
    src_matrix, trg_matrix = profile_matrix(list(src["profile"])), profile_matrix(list(trg["profile"]))
    forward = nearest_profiles(src_matrix, trg_matrix, k).rename(columns={"query": "src", "other": "trg"})
    backward = nearest_profiles(trg_matrix, src_matrix, k).rename(columns={"query": "trg", "other": "src"})
    pairs = pd.concat([forward, backward], ignore_index=True).drop_duplicates(["src", "trg"])
    return pd.DataFrame({"host": group["host"].iloc[0],
                         "src_url": src["url"].to_numpy()[pairs["src"].to_numpy(dtype=np.int64)],
                         "trg_url": trg["url"].to_numpy()[pairs["trg"].to_numpy(dtype=np.int64)],
                         "distance": pairs["distance"].to_numpy(dtype=np.float64)})


STRUCTURE_SCHEMA = "host string, src_url string, trg_url string, distance double"


def structure_pairs_for_group_frame(group: pd.DataFrame, languages: tuple[str, str], k: int, max_urls: int
                                    ) -> pd.DataFrame:
    """applyInPandas: `structure_pairs_for_group` for a (host, group_key) group of fetched kept URLs."""
    return structure_pairs_for_group(group, languages[0], languages[1], k, max_urls)


def structure_pairs(docs, kept, languages: tuple[str, str], k: int, max_urls: int):
    """Spark plan: (host, src_url, trg_url, distance) nearest by paragraph profile within kept URL groups.

    Profiles (a few doubles) are computed before the shuffle, never the structure arrays themselves.
    """
    from pyspark.sql import functions as F

    fetched = docs.filter(F.col("status") == "ok") if "status" in docs.columns else docs
    profiles = (fetched.select("url", F.pandas_udf(paragraph_profiles, "array<double>")(F.col("structure"))
                               .alias("profile")).dropDuplicates(["url"]))
    return (kept.select(F.col("site").alias("host"), "group_key", "url", "lang").join(profiles, "url")
            .groupBy("host", "group_key").applyInPandas(
                bind(structure_pairs_for_group_frame, languages=languages, k=k, max_urls=max_urls), STRUCTURE_SCHEMA))
