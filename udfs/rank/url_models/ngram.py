"""Fast URL models: fastText-style hashed character n-grams and token unigrams, vectorised in numpy.

A batch of normalised URLs becomes one array of code points; token runs (the classes of the
authors' pre-tokeniser regex), character 2..4-grams and their 64-bit polynomial hashes are
computed with a handful of array operations, so featurisation costs a few microseconds per
URL. The features feed an EmbeddingBag (mean) and a linear head (url2lang, as fastText) or a
small MLP (pairs). Pair inputs are five bags — src features, trg features, tokens only in src,
tokens only in trg, and a "substitution signature" (the hashed multiset of differing tokens,
e.g. {en}->{fr}) — plus, in models trained since cross bags exist, a sixth: every (token only in
src, token only in trg) pair, hashed (in either order since symmetric_cross, so news->actualites
learned on en-fr pairs serves fr-en pairs), so the model learns word translations that recur across
sites (news->actualites, germany->allemagne) and not only whole substitutions; plus dense
similarity features (token / trigram Jaccard, shared prefix and suffix, counts of differing
tokens and digits, cognates among the differing words), so a shallow model can learn parallelness.
Each distinct URL of a batch is featurised and embedded once, however many pairs it is in.

Why one module: the featuriser is one vectorised pass whose hashing constants, bag layout
and pair features must match the network's inputs exactly; model files depend on that layout.
"""
from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn

from parascout.udfs.rank.url_models.api import UrlModelApi
from parascout.udfs.rank.url_models.preprocess import fold_accents, normalize_url, url_tokens

CONFIG_FILE = "ngram_config.json"
WEIGHTS_FILE = "model.safetensors"
BEGIN, END = "\ue000", "\ue001"
CLASS_BLANK, CLASS_LETTER, CLASS_DIGIT, CLASS_UNDERSCORE, CLASS_PUNCT, CLASS_MARK = range(6)
PAIR_BAGS = ("src", "trg", "src_only", "trg_only", "signature")
PAIR_DENSE = ("token_jaccard", "trigram_jaccard", "src_only_tokens", "trg_only_tokens", "shared_tokens",
              "length_ratio", "slash_difference", "src_only_digits", "trg_only_digits", "identical",
              "common_prefix", "common_suffix", "src_only_markers", "trg_only_markers", "src_only_other",
              "trg_only_other", "only_markers_differ", "src_only_letters", "trg_only_letters",
              "same_token_count", "aligned_mismatches", "single_substitution", "aligned_markers_only")
#: dense features of models saved with NgramSpec.pair_extras (differing numbers, glued markers, depth)
PAIR_EXTRA_DENSE = ("numbers_differ", "number_log_distance", "number_relative_distance", "number_same_digits",
                    "number_adjacent", "number_magnitude", "glued_markers_only", "glued_marker_words",
                    "word_extended", "depth")
#: dense features of models saved with NgramSpec.cognates (translated slugs that share word beginnings)
PAIR_COGNATE_DENSE = ("cognate_share", "cognate_affix")

_MASK64 = (1 << 64) - 1
_BASE = 0x100000001B3
_BASE_INVERSE = pow(_BASE, -1, 1 << 64)
_SALT_NGRAM = 0x9E3779B97F4A7C15
_SALT_TOKEN = 0xC2B2AE3D27D4EB4F
_SALT_DIFF = 0x165667B19E3779F9
_SALT_SIGNATURE = 0x27D4EB2F165667C5
_SALT_CROSS = 0x85EBCA77C2B2AE63
_PAIR_KEY = 0xD6E8FEB86659FD93


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


def _set_groups(hashes: np.ndarray, owners: np.ndarray, is_src: np.ndarray, order_needed: bool = False):
    """Sort (owner, hash, side) once: group ids of equal (owner, hash), and per group has_src / has_trg."""
    composite = (owners.astype(np.uint64) << np.uint64(40)) | ((mix64(hashes) >> np.uint64(25)) << np.uint64(1)) \
        | (~is_src).astype(np.uint64)
    order = np.argsort(composite, kind="stable") if order_needed else None
    ordered = composite[order] if order_needed else np.sort(composite)
    value = ordered >> np.uint64(1)
    starts = np.flatnonzero(np.concatenate([[True], value[1:] != value[:-1]]))
    ends = np.concatenate([starts[1:], [len(ordered)]]) - 1
    has_src = (ordered[starts] & np.uint64(1)) == 0
    has_trg = (ordered[ends] & np.uint64(1)) == 1 if len(ordered) else np.zeros(0, dtype=bool)
    group_owner = (ordered[starts] >> np.uint64(40)).astype(np.int64)
    return order, starts, has_src, has_trg, group_owner


def _jaccard(has_src, has_trg, group_owner, pairs: int) -> np.ndarray:
    """Per pair |A ∩ B| / |A ∪ B| from set groups (1 when both sets are empty)."""
    shared = np.bincount(group_owner[has_src & has_trg], minlength=pairs)
    union = np.bincount(group_owner, minlength=pairs)
    return np.where(union > 0, shared / np.maximum(union, 1), 1.0)


def _first_difference(code_points: np.ndarray, src_at: np.ndarray, trg_at: np.ndarray, step: int,
                      limit: np.ndarray, chunk: int = 16) -> np.ndarray:
    """Per row, the first offset k < limit where code_points[src_at + k*step] != code_points[trg_at + k*step].

    Compares `chunk` offsets at a time and keeps only the rows still equal, so the cost follows
    the common length, not the URL length.
    """
    result = limit.copy()
    rows = np.flatnonzero(limit > 0)
    offset = 0
    while len(rows):
        steps = np.arange(offset, offset + chunk)[None, :]
        inside = steps < limit[rows, None]
        src_index = np.where(inside, src_at[rows, None] + step * steps, 0)
        trg_index = np.where(inside, trg_at[rows, None] + step * steps, 0)
        differ = (code_points[src_index] != code_points[trg_index]) & inside
        found = differ.any(axis=1)
        result[rows[found]] = offset + differ[found].argmax(axis=1)
        offset += chunk
        rows = rows[~found & (limit[rows] > offset)]
    return result


def _common_affixes(batch: UrlBatch, pairs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Common prefix and suffix lengths of each pair (as fractions of the longer URL), and equality."""
    lengths = batch.chars.astype(np.int64)
    src_length, trg_length = lengths[:pairs], lengths[pairs:]
    shortest = np.minimum(src_length, trg_length)
    src_start, trg_start = batch.starts[:pairs], batch.starts[pairs:]
    prefix = _first_difference(batch.code_points, src_start, trg_start, 1, shortest)
    suffix = _first_difference(batch.code_points, src_start + src_length - 1, trg_start + trg_length - 1, -1,
                               shortest)
    longest = np.maximum(np.maximum(src_length, trg_length), 1)
    identical = (src_length == trg_length) & (prefix == src_length)
    return prefix / longest, suffix / longest, identical.astype(np.float64)


def _aligned_differences(batch: UrlBatch, pairs: int, markers: np.ndarray) -> list[np.ndarray]:
    """Position-by-position token comparison of pairs with equally many tokens (a substituted language code)."""
    per_url = np.bincount(batch.token_url, minlength=2 * pairs)
    first = np.concatenate([[0], np.cumsum(per_url)[:-1]])
    same = per_url[:pairs] == per_url[pairs:]
    src_tokens = np.flatnonzero(same[np.minimum(batch.token_url, 2 * pairs - 1) % pairs] & (batch.token_url < pairs))
    owner = batch.token_url[src_tokens]
    partner = first[owner + pairs] + (src_tokens - first[owner])
    mismatch = batch.token_hash[src_tokens] != batch.token_hash[partner]
    marker = np.isin(batch.token_hash[src_tokens], markers) & np.isin(batch.token_hash[partner], markers)
    mismatches = np.bincount(owner[mismatch], minlength=pairs)
    non_marker = np.bincount(owner[mismatch & ~marker], minlength=pairs)
    return [same.astype(np.float64), np.where(same, np.log1p(mismatches), 0.0),
            (same & (mismatches == 1)).astype(np.float64),
            (same & (mismatches > 0) & (non_marker == 0)).astype(np.float64)]


def _combinations(group_owner: np.ndarray, src_mask: np.ndarray, trg_mask: np.ndarray, pairs: int,
                  max_side: int = 12) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every (src group, trg group) combination within each pair: owner, src group, trg group per
    combination (grouped by pair) and combinations per pair; at most max_side groups per side and pair."""
    def side(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        groups = np.flatnonzero(mask)              # set groups come sorted by owner (_set_groups)
        counts = np.bincount(group_owner[groups], minlength=pairs)
        rank = np.arange(len(groups)) - np.repeat(np.cumsum(counts) - counts, counts)
        groups = groups[rank < max_side]
        return groups, np.bincount(group_owner[groups], minlength=pairs)

    src_groups, n_src = side(src_mask)
    trg_groups, n_trg = side(trg_mask)
    per_pair = n_src * n_trg
    owner = np.repeat(np.arange(pairs), per_pair)
    within = np.arange(int(per_pair.sum())) - np.repeat(np.cumsum(per_pair) - per_pair, per_pair)
    src_at = (np.cumsum(n_src) - n_src)[owner] + within // np.maximum(n_trg[owner], 1)
    trg_at = (np.cumsum(n_trg) - n_trg)[owner] + within % np.maximum(n_trg[owner], 1)
    return owner, src_groups[src_at], trg_groups[trg_at], per_pair


def _number_values(batch: UrlBatch, tokens: np.ndarray, max_digits: int = 15) -> np.ndarray:
    """The value of digit tokens (their first max_digits digits) as float64."""
    lengths = np.minimum(batch.token_length[tokens], max_digits)
    starts = batch.token_start[tokens]
    values = np.zeros(len(tokens))
    for k in range(int(lengths.max()) if len(tokens) else 0):
        inside = k < lengths
        digits = batch.code_points[starts[inside] + k].astype(np.float64) - 48.0
        values[inside] = values[inside] * 10.0 + digits
    return values


def _marker_stems(batch: UrlBatch, tokens: np.ndarray, markers: np.ndarray) -> np.ndarray:
    """Hash of each letter token without a glued 2-3 letter language marker (`aboutusen` -> `aboutus`),
    suffix tried before prefix, longer marker first; the token's own hash when it has none (stem >= 3)."""
    stems = batch.token_hash[tokens].copy()
    starts, lengths = batch.token_start[tokens], batch.token_length[tokens]
    ends = starts + lengths
    done = np.zeros(len(tokens), dtype=bool)
    for size, suffix in ((3, True), (2, True), (3, False), (2, False)):
        rows = np.flatnonzero(~done & (lengths >= size + 3))
        if not len(rows):
            continue
        affix = (batch.span_hash(ends[rows] - size, ends[rows]) if suffix
                 else batch.span_hash(starts[rows], starts[rows] + size))
        rows = rows[np.isin(affix, markers)]
        stems[rows] = (batch.span_hash(starts[rows], ends[rows] - size) if suffix
                       else batch.span_hash(starts[rows] + size, ends[rows]))
        done[rows] = True
    return stems


def _extends(batch: UrlBatch, src_tokens: np.ndarray, trg_tokens: np.ndarray, max_extra: int = 3) -> np.ndarray:
    """Per (src token, trg token) combination: one word is the other plus 1..max_extra letters at its end or
    start (`mowlnch` / `mowlnchf`: a site's own glued marker)."""
    src_length, trg_length = batch.token_length[src_tokens], batch.token_length[trg_tokens]
    extra = np.abs(src_length - trg_length)
    src_longer = src_length > trg_length
    longer = np.where(src_longer, src_tokens, trg_tokens)
    shorter = np.where(src_longer, trg_tokens, src_tokens)
    short_length = np.minimum(src_length, trg_length)
    result = (extra >= 1) & (extra <= max_extra) & (short_length >= 3)
    rows = np.flatnonzero(result)
    start = batch.token_start[longer[rows]]
    head = batch.span_hash(start, start + short_length[rows])
    tail = batch.span_hash(start + extra[rows], start + extra[rows] + short_length[rows])
    wanted = batch.token_hash[shorter[rows]]
    result[rows] = (head == wanted) | (tail == wanted)
    return result


def _extra_differences(batch: UrlBatch, pairs: int, first: np.ndarray, group_owner: np.ndarray,
                       src_only: np.ndarray, trg_only: np.ndarray, group_class: np.ndarray,
                       group_marker: np.ndarray, markers: np.ndarray) -> list[np.ndarray]:
    """PAIR_EXTRA_DENSE: how close the differing numbers are (the nearest src-only / trg-only number
    pair: log distance, relative distance, same digit count, distance <= 2), whether the differing words
    are the same words with different glued language markers, and the path depth."""
    digit = (group_class == CLASS_DIGIT) & ~group_marker
    owner, src_groups, trg_groups, _ = _combinations(group_owner, src_only & digit, trg_only & digit, pairs, 6)
    distance = np.full(pairs, np.inf)
    relative = np.ones(pairs)
    same_digits = np.zeros(pairs)
    magnitude = np.zeros(pairs)
    if len(owner):
        src_values, trg_values = _number_values(batch, first[src_groups]), _number_values(batch, first[trg_groups])
        gap = np.abs(src_values - trg_values)
        order = np.lexsort((gap, owner))
        best = order[np.concatenate([[True], owner[order][1:] != owner[order][:-1]])]
        distance[owner[best]] = gap[best]
        relative[owner[best]] = gap[best] / np.maximum(np.maximum(src_values[best], trg_values[best]), 1.0)
        same_digits[owner[best]] = (batch.token_length[first[src_groups[best]]]
                                    == batch.token_length[first[trg_groups[best]]])
        magnitude[owner[best]] = np.log1p(np.minimum(src_values[best], trg_values[best]))
    found = np.isfinite(distance)
    letters = (group_class == CLASS_LETTER) & ~group_marker
    owner, src_groups, trg_groups, _ = _combinations(group_owner, src_only & letters, trg_only & letters, pairs, 6)
    glued = extended = np.zeros(pairs)
    if len(owner):
        tokens, inverse = np.unique(np.concatenate([first[src_groups], first[trg_groups]]), return_inverse=True)
        stems = _marker_stems(batch, tokens, markers)[inverse]
        same = stems[: len(owner)] == stems[len(owner):]
        glued = np.bincount(owner[same], minlength=pairs).astype(np.float64)
        extended = np.bincount(owner[_extends(batch, first[src_groups], first[trg_groups])], minlength=pairs)
    differing_words = np.bincount(group_owner[(src_only | trg_only) & letters], minlength=pairs)
    return [found.astype(np.float64), np.where(found, np.log1p(np.where(found, distance, 0.0)), 0.0), relative,
            same_digits, (found & (distance <= 2)).astype(np.float64), magnitude,
            ((glued > 0) & (2 * glued >= differing_words)).astype(np.float64), np.log1p(glued), np.log1p(extended),
            np.log1p(np.minimum(batch.slashes[:pairs], batch.slashes[pairs:]))]


def _cognates(batch: UrlBatch, pairs: int, first: np.ndarray, group_owner: np.ndarray, src_only: np.ndarray,
              trg_only: np.ndarray, group_class: np.ndarray, group_marker: np.ndarray,
              min_prefix: int = 4) -> list[np.ndarray]:
    """PAIR_COGNATE_DENSE: the share of differing words (letter runs of 3+ letters, markers aside) that have
    a cognate among the other URL's differing words — the two share their first `min_prefix`+ letters and at
    least half of the shorter word (philosophy / philosophie, principle / principe, history / histoire; accents
    are folded first), or their last `min_prefix`+1 and two thirds of it (eblandat / fblandat: a glued one-letter
    marker) — and the longest shared beginning or end of such a word pair as a share of the longer word."""
    words = (group_class == CLASS_LETTER) & ~group_marker & (batch.token_length[first] >= 3)
    owner, src_groups, trg_groups, _ = _combinations(group_owner, src_only & words, trg_only & words, pairs, 6)
    share, best = np.zeros(pairs), np.zeros(pairs)
    if len(owner):
        src_tokens, trg_tokens = first[src_groups], first[trg_groups]
        shorter = np.minimum(batch.token_length[src_tokens], batch.token_length[trg_tokens])
        longer = np.maximum(batch.token_length[src_tokens], batch.token_length[trg_tokens])
        src_start, trg_start = batch.token_start[src_tokens], batch.token_start[trg_tokens]
        src_end, trg_end = src_start + batch.token_length[src_tokens], trg_start + batch.token_length[trg_tokens]
        # only word pairs whose first min_prefix (last min_prefix + 1) letters agree are measured letter by letter
        size = np.minimum(shorter, min_prefix)
        head = (shorter >= min_prefix) & (batch.span_hash(src_start, src_start + size)
                                          == batch.span_hash(trg_start, trg_start + size))
        size = np.minimum(shorter, min_prefix + 1)
        tail = (shorter > min_prefix) & (batch.span_hash(src_end - size, src_end)
                                         == batch.span_hash(trg_end - size, trg_end))
        prefix = _first_difference(batch.code_points, src_start, trg_start, 1, np.where(head, shorter, 0))
        suffix = _first_difference(batch.code_points, src_end - 1, trg_end - 1, -1, np.where(tail, shorter, 0))
        cognate = ((prefix >= min_prefix) & (2 * prefix >= shorter)) | ((suffix > min_prefix) & (3 * suffix >= 2 * shorter))
        prefix = np.maximum(prefix, np.where(suffix > min_prefix, suffix, 0))
        matched = np.unique(src_groups[cognate]), np.unique(trg_groups[cognate])
        matched_words = sum(np.bincount(group_owner[groups], minlength=pairs) for groups in matched)
        differing = np.bincount(group_owner[(src_only | trg_only) & words], minlength=pairs)
        share = matched_words / np.maximum(differing, 1)
        np.maximum.at(best, owner[cognate], prefix[cognate] / longer[cognate])
    return [share, best]


def _cross_bag(token_hash: np.ndarray, group_owner: np.ndarray, src_only: np.ndarray, trg_only: np.ndarray,
               pairs: int, buckets: int, max_side: int = 12, symmetric: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Bucket of every (src-only token, trg-only token) combination of each pair, and bag offsets.

    `token_hash` has one hash per set group; at most `max_side` groups per side and pair take part
    (a very long URL would otherwise cost its token count squared). `symmetric`: a combination hashes
    the same in both orders, so a word translation seen as fra->eng also serves eng->fra pairs.
    """
    _, src_groups, trg_groups, per_pair = _combinations(group_owner, src_only, trg_only, pairs, max_side)
    first, second = token_hash[src_groups], token_hash[trg_groups]
    if symmetric:
        first, second = np.minimum(first, second), np.maximum(first, second)
    combined = mix64(first * _u64(_BASE) + mix64(second + _u64(_SALT_CROSS)))
    return ((combined % np.uint64(buckets)).astype(np.int64),
            np.concatenate([[0], np.cumsum(per_pair)[:-1]]).astype(np.int64))


def _unique_positions(values: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct values in first-seen order and each value's position among them."""
    index: dict[str, int] = {}
    positions = np.fromiter((index.setdefault(value, len(index)) for value in values), dtype=np.int64,
                            count=len(values))
    return list(index), positions


def pair_features(src_texts: list[str], trg_texts: list[str], spec: NgramSpec):
    """Bags (bucket indices + offsets [+ rows], one per PAIR_BAGS entry [+ the cross bag]) and dense
    features of normalised URL pairs."""
    (src_unique, src_index), (trg_unique, trg_index) = _unique_positions(src_texts), _unique_positions(trg_texts)
    return indexed_pair_features(src_unique, trg_unique, src_index, trg_index, spec)


def indexed_pair_features(src_texts: list[str], trg_texts: list[str], src_index: np.ndarray, trg_index: np.ndarray,
                          spec: NgramSpec):
    """pair_features of the pairs (src_texts[src_index[i]], trg_texts[trg_index[i]]): each distinct URL is
    featurised once however many pairs it is in (a host's pool pairs every src URL with every trg URL). The
    side bags hold each distinct URL once, with a third element, `rows`, picking every pair's URL."""
    pairs = len(src_index)
    unique = featurize(list(src_texts) + list(trg_texts), spec)
    batch = unique.take(np.concatenate([src_index, trg_index + len(src_texts)]))
    split = int(unique.counts[: len(src_texts)].sum())
    offsets = unique.offsets
    bags = [(unique.buckets[:split], offsets[: len(src_texts)], src_index),
            (unique.buckets[split:], offsets[len(src_texts):] - split, trg_index)]

    is_src = batch.token_url < pairs
    owner = np.where(is_src, batch.token_url, batch.token_url - pairs)
    order, starts, has_src, has_trg, group_owner = _set_groups(batch.token_hash, owner, is_src, order_needed=True)
    group_of = np.empty(len(order), dtype=np.int64)
    group_of[order] = np.repeat(np.arange(len(starts)), np.diff(np.concatenate([starts, [len(order)]])))
    differing = np.where(is_src, ~has_trg[group_of], ~has_src[group_of])
    signature = np.zeros(2 * pairs, dtype=np.uint64)
    for side, mask in ((0, is_src & differing), (1, ~is_src & differing)):
        diff_hash = batch.token_hash[mask]
        diff_owner = owner[mask]
        bags.append(((mix64(diff_hash + _u64(_SALT_DIFF)) % np.uint64(spec.buckets)).astype(np.int64),
                     np.concatenate([[0], np.cumsum(np.bincount(diff_owner, minlength=pairs))[:-1]])))
        np.add.at(signature, diff_owner + side * pairs, mix64(diff_hash + _u64(_SALT_TOKEN)))
    combined = mix64(signature[:pairs] * _u64(_BASE) + mix64(signature[pairs:] + _u64(_SALT_SIGNATURE)))
    bags.append(((combined % np.uint64(spec.buckets)).astype(np.int64), np.arange(pairs, dtype=np.int64)))

    token_jaccard = _jaccard(has_src, has_trg, group_owner, pairs)
    trigram_src = batch.trigram_url < pairs
    _, _, trigram_has_src, trigram_has_trg, trigram_owner = _set_groups(
        batch.trigram_hash, np.where(trigram_src, batch.trigram_url, batch.trigram_url - pairs), trigram_src)
    trigram_jaccard = _jaccard(trigram_has_src, trigram_has_trg, trigram_owner, pairs)

    first = order[starts]                       # one token per group (unique token of a pair)
    group_class = batch.token_class[first]
    group_digit = group_class == CLASS_DIGIT
    group_marker = np.isin(batch.token_hash[first], language_marker_hashes(spec.lowercase))
    if spec.pair_extras:
        group_marker |= _language_values(batch)[first]
    group_letter = (group_class == CLASS_LETTER) & (batch.token_length[first] == 1)

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(group_owner[mask], minlength=pairs).astype(np.float64)

    src_only, trg_only = has_src & ~has_trg, has_trg & ~has_src
    if spec.cross_bag:
        bags.append(_cross_bag(batch.token_hash[first], group_owner, src_only, trg_only, pairs, spec.buckets,
                               symmetric=spec.symmetric_cross))
    src_other = count(src_only & ~group_marker & ~group_letter)
    trg_other = count(trg_only & ~group_marker & ~group_letter)
    chars_src, chars_trg = batch.chars[:pairs], batch.chars[pairs:]
    prefix, suffix, identical = _common_affixes(batch, pairs)
    dense = np.stack([
        token_jaccard, trigram_jaccard, np.log1p(count(src_only)), np.log1p(count(trg_only)),
        np.log1p(count(has_src & has_trg)),
        np.minimum(chars_src, chars_trg) / np.maximum(np.maximum(chars_src, chars_trg), 1),
        np.log1p(np.abs(batch.slashes[:pairs] - batch.slashes[pairs:])),
        np.log1p(count(src_only & group_digit)), np.log1p(count(trg_only & group_digit)),
        identical, prefix, suffix,
        np.log1p(count(src_only & group_marker)), np.log1p(count(trg_only & group_marker)),
        np.log1p(src_other), np.log1p(trg_other),
        ((src_other + trg_other == 0) & (count(src_only) + count(trg_only) > 0)).astype(np.float64),
        np.log1p(count(src_only & group_letter)), np.log1p(count(trg_only & group_letter)),
        *_aligned_differences(batch, pairs, language_marker_hashes(spec.lowercase)),
        *(_extra_differences(batch, pairs, first, group_owner, src_only, trg_only, group_class, group_marker,
                             language_marker_hashes(spec.lowercase)) if spec.pair_extras else []),
        *(_cognates(batch, pairs, first, group_owner, src_only, trg_only, group_class, group_marker)
          if spec.cognates else []),
    ], axis=1).astype(np.float32)
    return (bags if spec.side_bags else bags[2:]), dense


class NgramUrlModel(UrlModelApi):
    """The fast backend behind load_model(): predict_lang / predict_parallel over hashed n-gram bags."""

    backend = "ngram"

    def __init__(self, net, spec: NgramSpec, task: str, labels: list[str], metadata: dict | None = None,
                 batch_size: int = 4096):
        self.net = net.eval()
        self.spec = spec
        self.task = task
        self.labels = list(labels)
        self.metadata = metadata or {}
        self.batch_size = batch_size

    # ---- construction ----------------------------------------------------------------
    @classmethod
    def create(cls, task: str, labels: list[str], spec: NgramSpec, seed: int = 0) -> NgramUrlModel:
        """A freshly initialised model for `task` ('url2lang' or 'pairs')."""
        torch.manual_seed(seed)
        if task == "pairs":
            bags = len(PAIR_BAGS) - (0 if spec.side_bags else 2) + int(spec.cross_bag)
            dense = len(PAIR_DENSE) + (len(PAIR_EXTRA_DENSE) if spec.pair_extras else 0) \
                + (len(PAIR_COGNATE_DENSE) if spec.cognates else 0)
            net = HashedNgramNet(spec.buckets, spec.dim, bags, dense, spec.hidden or 64, 2)
        else:
            net = HashedNgramNet(spec.buckets, spec.dim, 1, 0, spec.hidden, len(labels))
        return cls(net, spec, task, labels)

    def save(self, directory: str | Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / CONFIG_FILE).write_text(json.dumps({**asdict(self.spec), "task": self.task,
                                                         "labels": self.labels}, indent=2))
        save_file({k: v.contiguous() for k, v in self.net.state_dict().items()}, str(directory / WEIGHTS_FILE))

    @classmethod
    def load(cls, directory: str | Path, metadata: dict | None = None) -> NgramUrlModel:
        directory = Path(directory)
        config = json.loads((directory / CONFIG_FILE).read_text())
        task, labels = config.pop("task"), config.pop("labels")
        model = cls.create(task, labels, NgramSpec(**config))
        model.net.load_state_dict(load_file(str(directory / WEIGHTS_FILE)))
        model.net.eval()
        model.metadata = metadata or {}
        return model

    # ---- inputs ----------------------------------------------------------------------
    def url_inputs(self, urls: list[str]):
        """Network inputs for a batch of raw URLs (url2lang)."""
        batch = featurize(_normalised(urls, self.spec), self.spec)
        return [(torch.from_numpy(batch.buckets), torch.from_numpy(batch.offsets))], None

    def pair_inputs(self, src_urls: list[str], trg_urls: list[str]):
        """Network inputs for a batch of raw URL pairs."""
        (src_unique, src_index), (trg_unique, trg_index) = _unique_positions(src_urls), _unique_positions(trg_urls)
        bags, dense = indexed_pair_features(_normalised(src_unique, self.spec), _normalised(trg_unique, self.spec),
                                            src_index, trg_index, self.spec)
        return [tuple(torch.from_numpy(part) for part in bag) for bag in bags], torch.from_numpy(dense)

    def inputs(self, examples: dict, indices: np.ndarray):
        """Network inputs for the rows `indices` of a training frame (columns url or src_url, trg_url)."""
        if self.task == "pairs":
            return self.pair_inputs([examples["src_url"][i] for i in indices], [examples["trg_url"][i] for i in indices])
        return self.url_inputs([examples["url"][i] for i in indices])

    # ---- prediction ------------------------------------------------------------------
    def _probabilities(self, make_inputs, total: int) -> np.ndarray:
        outputs = []
        with torch.inference_mode():
            for start in range(0, total, self.batch_size):
                bags, dense = make_inputs(start, min(start + self.batch_size, total))
                outputs.append(torch.softmax(self.net(bags, dense).double(), dim=-1).numpy())
        width = 2 if self.task == "pairs" else len(self.labels)
        return np.concatenate(outputs) if outputs else np.zeros((0, width), dtype=np.float32)

    def _lang_probabilities(self, urls: list[str]) -> np.ndarray:
        return self._probabilities(lambda a, b: self.url_inputs(urls[a:b]), len(urls))

    def _pair_probabilities(self, src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
        return self._probabilities(lambda a, b: self.pair_inputs(src_urls[a:b], trg_urls[a:b]), len(src_urls))


class HashedNgramNet(nn.Module):
    """EmbeddingBag(mean) over each bag, concatenated with dense features, then [ReLU hidden] + linear."""

    def __init__(self, buckets: int, dim: int, bags: int, dense: int, hidden: int, outputs: int,
                 dropout: float = 0.1):
        super().__init__()
        self.embedding = nn.EmbeddingBag(buckets, dim, mode="mean")
        nn.init.uniform_(self.embedding.weight, -1.0 / dim, 1.0 / dim)
        width = bags * dim + dense
        self.dropout = nn.Dropout(dropout)
        self.hidden = nn.Linear(width, hidden) if hidden else None
        self.output = nn.Linear(hidden or width, outputs)
        self.dense = dense

    def forward(self, bags: list[tuple[torch.Tensor, ...]], dense: torch.Tensor | None = None,
                rows: torch.Tensor | None = None) -> torch.Tensor:
        """Logits; `rows` (training) replaces the embedding table by a gathered subset the indices point into."""
        if rows is None:
            parts = [self.embedding(bag[0], bag[1]) for bag in bags]
        else:
            parts = [nn.functional.embedding_bag(bag[0], rows, bag[1], mode="mean") for bag in bags]
        # a bag of distinct URLs carries a third element: the URL of each example
        parts = [part[bag[2]] if len(bag) > 2 else part for part, bag in zip(parts, bags)]
        if self.dense:
            parts.append(dense)
        features = self.dropout(torch.cat(parts, dim=1) if len(parts) > 1 else parts[0])
        if self.hidden is not None:
            features = torch.relu(self.hidden(features))
        return self.output(features)
