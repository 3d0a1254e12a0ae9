"""Features of the fast URL models: hashed token unigrams and character n-grams, vectorised in numpy.

A batch of normalised URLs becomes one array of code points; token runs (the classes of the
authors' pre-tokeniser regex), character 2..4-grams and their 64-bit polynomial hashes are
computed with a handful of array operations, so featurisation costs a few microseconds per
URL. The UrlBatch keeps the code points and their prefix hashes, so the pair features
(ngram_pairs) can hash any span of a URL again, and take a URL into many pairs, without
featurising it twice. NgramSpec holds the feature and network sizes a model was saved with.

Why apart from the network: featurising needs numpy only, and the hashing constants and bucket
layout here decide which embedding row each feature reads; model files depend on that layout.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from parascout.udfs.rank.url_models.preprocess import fold_accents, normalize_url, url_tokens

BEGIN, END = "\ue000", "\ue001"
CLASS_BLANK, CLASS_LETTER, CLASS_DIGIT, CLASS_UNDERSCORE, CLASS_PUNCT, CLASS_MARK = range(6)

_MASK64 = (1 << 64) - 1
_BASE = 0x100000001B3
_BASE_INVERSE = pow(_BASE, -1, 1 << 64)
_SALT_NGRAM = 0x9E3779B97F4A7C15
_SALT_TOKEN = 0xC2B2AE3D27D4EB4F


def _u64(value: int) -> np.uint64:
    return np.uint64(value & _MASK64)


def mix64(values: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    values = values ^ (values >> np.uint64(30))
    values = values * _u64(0xBF58476D1CE4E5B9)
    values = values ^ (values >> np.uint64(27))
    values = values * _u64(0x94D049BB133111EB)
    return values ^ (values >> np.uint64(31))


def _ascii_classes() -> np.ndarray:
    table = np.empty(128, dtype=np.uint8)
    for code in range(128):
        char = chr(code)
        if char.isspace():
            table[code] = CLASS_BLANK
        elif "0" <= char <= "9":
            table[code] = CLASS_DIGIT
        elif char == "_":
            table[code] = CLASS_UNDERSCORE
        elif char.isalnum():
            table[code] = CLASS_LETTER
        else:
            table[code] = CLASS_PUNCT
    return table


_ASCII_CLASSES = _ascii_classes()
_CLASS_CACHE: dict[int, int] = {ord(BEGIN): CLASS_MARK, ord(END): CLASS_MARK}


def _code_point_class(code: int) -> int:
    """The pre-tokeniser class of a non-ASCII code point (as Python's re sees \\w and \\s)."""
    cached = _CLASS_CACHE.get(code)
    if cached is None:
        char = chr(code)
        if char.isspace():
            cached = CLASS_BLANK
        elif char.isalnum():
            cached = CLASS_LETTER
        else:
            cached = CLASS_PUNCT
        _CLASS_CACHE[code] = cached
    return cached


class _Powers:
    """Cached BASE**j and BASE**-j (mod 2**64) for prefix-sum span hashing."""

    def __init__(self) -> None:
        self.forward = np.ones(1, dtype=np.uint64)
        self.inverse = np.ones(1, dtype=np.uint64)

    def get(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        if len(self.forward) < size:
            size = max(size, 2 * len(self.forward))
            self.forward = np.cumprod(np.full(size, _BASE, dtype=np.uint64), dtype=np.uint64)
            self.forward = np.concatenate([np.ones(1, dtype=np.uint64), self.forward[:-1]])
            self.inverse = np.cumprod(np.full(size, _BASE_INVERSE, dtype=np.uint64), dtype=np.uint64)
            self.inverse = np.concatenate([np.ones(1, dtype=np.uint64), self.inverse[:-1]])
        return self.forward[:size], self.inverse[:size]


_POWERS = _Powers()


@dataclass(frozen=True)
class NgramSpec:
    """Feature and network sizes of an n-gram model (saved as ngram_config.json)."""

    buckets: int = 1 << 19
    dim: int = 32
    ngram_min: int = 2
    ngram_max: int = 4
    max_chars: int = 256
    hidden: int = 0
    lowercase: bool = True
    side_bags: bool = True
    cross_bag: bool = False    # False for models saved before the bag existed; training turns it on
    symmetric_cross: bool = False  # cross bag pairs unordered ((a, b) == (b, a)); directed in older models
    pair_extras: bool = False  # PAIR_EXTRA_DENSE features (False for models saved before they existed)
    fold_accents: bool = False  # accents folded before featurising (règlement == reglement)
    cognates: bool = False     # PAIR_COGNATE_DENSE features (False for models saved before they existed)


@dataclass
class UrlBatch:
    """Hashed features of a batch of URLs (all arrays in position order, hence grouped by URL)."""

    count: int
    buckets: np.ndarray        # int64 bucket of every feature (tokens and n-grams)
    counts: np.ndarray         # features per URL
    token_hash: np.ndarray     # uint64 raw hash per token
    token_url: np.ndarray      # URL index per token
    token_class: np.ndarray    # pre-tokeniser class per token
    token_length: np.ndarray   # code points per token
    trigram_hash: np.ndarray   # uint64 raw hash per character trigram
    trigram_url: np.ndarray
    chars: np.ndarray          # normalised length per URL
    slashes: np.ndarray        # '/' per URL
    code_points: np.ndarray    # the joined batch (markers included)
    starts: np.ndarray         # index of each URL's first code point in code_points
    token_start: np.ndarray    # index of each token's first code point in code_points
    prefix: np.ndarray         # polynomial prefix hashes of code_points (span_hash of any span)

    def span_hash(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The raw hash of code_points[start:end] per row (equal to token_hash for a token's span)."""
        _, inverse_powers = _POWERS.get(len(self.prefix))
        return (self.prefix[ends] - self.prefix[starts]) * inverse_powers[starts]

    @property
    def offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.counts)[:-1]]).astype(np.int64)

    def take(self, urls: np.ndarray) -> UrlBatch:
        """The batch of URLs `urls` (indices into this batch, repeats allowed) without featurising them again:
        token and trigram rows are gathered and still point into this batch's code points. The n-gram
        buckets are not gathered (`buckets` is empty): a pair's side bags read them from this batch."""
        urls = np.asarray(urls, dtype=np.int64)
        tokens = _ranges(np.bincount(self.token_url, minlength=self.count), urls)
        trigrams = _ranges(np.bincount(self.trigram_url, minlength=self.count), urls)
        return UrlBatch(
            count=len(urls), buckets=np.empty(0, dtype=np.int64), counts=self.counts[urls],
            token_hash=self.token_hash[tokens], token_url=_owners(np.bincount(self.token_url, minlength=self.count),
                                                                  urls),
            token_class=self.token_class[tokens], token_length=self.token_length[tokens],
            trigram_hash=self.trigram_hash[trigrams],
            trigram_url=_owners(np.bincount(self.trigram_url, minlength=self.count), urls),
            chars=self.chars[urls], slashes=self.slashes[urls], code_points=self.code_points, starts=self.starts[urls],
            token_start=self.token_start[tokens], prefix=self.prefix)


def _ranges(per_url: np.ndarray, urls: np.ndarray) -> np.ndarray:
    """Row indices of the rows of each URL in `urls`, in order, for rows grouped by URL (`per_url` rows each)."""
    lengths = per_url[urls]
    firsts = (np.cumsum(per_url) - per_url)[urls]
    total = int(lengths.sum())
    return np.repeat(firsts - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)


def _owners(per_url: np.ndarray, urls: np.ndarray) -> np.ndarray:
    """The position in `urls` owning each row that _ranges returns."""
    return np.repeat(np.arange(len(urls)), per_url[urls])


def _normalised(urls: list[str], spec: NgramSpec) -> list[str]:
    """normalize_url of each URL (accents folded when spec.fold_accents), cut to spec.max_chars."""
    texts = [normalize_url(url)[: spec.max_chars] if url else "" for url in urls]
    if spec.fold_accents:
        texts = [text if text.isascii() else fold_accents(text) for text in texts]
    return texts


#: query keys whose value names the page's language (`lang=fr`, `clang=2`, `L=3`): values count as markers
LANGUAGE_QUERY_KEYS = ("lang", "clang", "language", "locale", "lng", "hl", "l", "langid", "sprache")  # one token each


@functools.lru_cache(maxsize=2)
def _key_hashes() -> tuple[np.ndarray, np.uint64]:
    batch = featurize(["=", *LANGUAGE_QUERY_KEYS], NgramSpec())
    return np.unique(batch.token_hash[1:]), batch.token_hash[0]


def _language_values(batch: UrlBatch) -> np.ndarray:
    """Per token: it is the value of a language query key (the token after `key=`, same URL)."""
    keys, equals = _key_hashes()
    result = np.zeros(len(batch.token_hash), dtype=bool)
    if len(result) < 3:
        return result
    follows = (batch.token_hash[1:-1] == equals) & np.isin(batch.token_hash[:-2], keys)
    follows &= batch.token_url[:-2] == batch.token_url[2:]
    result[2:] = follows
    return result


@functools.lru_cache(maxsize=4)
def language_marker_hashes(lowercase: bool = True) -> np.ndarray:
    """Token hashes of language markers: ISO 639 codes, names, endonyms and locale parts (conf/languages.yaml)."""
    from parascout.udfs.common.langs import load_languages

    markers = set()
    for language in load_languages().values():
        for word in language.markers:
            markers.update(url_tokens(word.lower() if lowercase else word))
    markers = sorted(m for m in markers if m.isalpha())
    batch = featurize(markers, NgramSpec(lowercase=lowercase))
    return np.unique(batch.token_hash)


def featurize(texts: list[str], spec: NgramSpec) -> UrlBatch:
    """Hashed token and character n-gram features of already normalised URLs (one vectorised pass)."""
    joined = BEGIN + (END + BEGIN).join(texts) + END
    if spec.lowercase:
        joined = joined.lower()
    if joined.count(BEGIN) != len(texts) or joined.count(END) != len(texts):
        joined = BEGIN + (END + BEGIN).join(t.replace(BEGIN, " ").replace(END, " ") for t in texts) + END
        joined = joined.lower() if spec.lowercase else joined
    code_points = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    size = len(code_points)
    code_points[code_points < 32] = 32
    url_of = np.cumsum(code_points == ord(BEGIN)) - 1

    classes = _ASCII_CLASSES[np.minimum(code_points, 127).astype(np.int64)]
    wide = np.flatnonzero(code_points >= 128)
    if len(wide):
        unique, inverse = np.unique(code_points[wide], return_inverse=True)
        classes[wide] = np.array([_code_point_class(int(c)) for c in unique], dtype=np.uint8)[inverse]

    forward, inverse_powers = _POWERS.get(size + 1)
    prefix = np.zeros(size + 1, dtype=np.uint64)
    np.cumsum((code_points + np.uint64(1)) * forward[:size], out=prefix[1:])

    def span_hash(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        return (prefix[ends] - prefix[starts]) * inverse_powers[starts]

    orders = list(range(spec.ngram_min, spec.ngram_max + 1))
    table = np.zeros((size, 1 + len(orders)), dtype=np.uint64)
    valid = np.zeros((size, 1 + len(orders)), dtype=bool)

    boundaries = np.flatnonzero(np.concatenate([[True], classes[1:] != classes[:-1]]))
    token_ends = np.concatenate([boundaries[1:], [size]])
    is_token = (classes[boundaries] >= CLASS_LETTER) & (classes[boundaries] <= CLASS_PUNCT)
    token_starts, token_ends = boundaries[is_token], token_ends[is_token]
    token_hash = span_hash(token_starts, token_ends)
    table[token_starts, 0] = mix64(token_hash + _u64(_SALT_TOKEN))
    valid[token_starts, 0] = True

    trigram_hash = trigram_url = np.empty(0, dtype=np.uint64)
    for column, order in enumerate(orders, start=1):
        starts = np.arange(max(size - order + 1, 0))
        ok = url_of[starts] == url_of[starts + order - 1]
        starts = starts[ok]
        hashes = span_hash(starts, starts + order)
        table[starts, column] = mix64(hashes + _u64(_SALT_NGRAM * order))
        valid[starts, column] = True
        if order == 3:
            inner = classes[starts] != CLASS_MARK
            inner &= classes[starts + 2] != CLASS_MARK
            trigram_hash, trigram_url = hashes[inner], url_of[starts[inner]]

    per_position = valid.sum(axis=1)
    counts = np.bincount(url_of, weights=per_position, minlength=len(texts)).astype(np.int64)
    buckets = (table[valid] % np.uint64(spec.buckets)).astype(np.int64)
    slashes = np.bincount(url_of[code_points == ord("/")], minlength=len(texts))
    begins = np.flatnonzero(code_points == ord(BEGIN))
    ends = np.flatnonzero(code_points == ord(END))
    return UrlBatch(
        count=len(texts), buckets=buckets, counts=counts, token_hash=token_hash,
        token_url=url_of[token_starts], token_class=classes[token_starts], token_length=token_ends - token_starts,
        trigram_hash=trigram_hash,
        trigram_url=trigram_url, chars=(ends - begins - 1).astype(np.float64), slashes=slashes,
        code_points=code_points, starts=begins + 1, token_start=token_starts, prefix=prefix,
    )
