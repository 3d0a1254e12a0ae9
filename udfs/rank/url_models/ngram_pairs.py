"""Pair features of the fast URL models: the bags and dense similarity features of a URL pair.

Pair inputs are five bags — src features, trg features, tokens only in src, tokens only in
trg, and a "substitution signature" (the hashed multiset of differing tokens, e.g. {en}->{fr})
— plus, in models trained since cross bags exist, a sixth: every (token only in src, token only
in trg) pair, hashed (in either order since symmetric_cross, so news->actualites learned on
en-fr pairs serves fr-en pairs), so the model learns word translations that recur across sites
(news->actualites, germany->allemagne) and not only whole substitutions; plus dense similarity
features (token / trigram Jaccard, shared prefix and suffix, counts of differing tokens and
digits, cognates among the differing words), so a shallow model can learn parallelness. Each
distinct URL of a batch is featurised once, however many pairs it is in.

Why a module of its own: these are set operations over one featurised batch (ngram_features),
and PAIR_BAGS and the PAIR_*_DENSE names are the input layout pair models were saved with;
features added later sit behind NgramSpec flags, so older model files keep their inputs.
"""
from __future__ import annotations

import numpy as np

from parascout.udfs.rank.url_models.ngram_features import (
    _BASE,
    _SALT_TOKEN,
    CLASS_DIGIT,
    CLASS_LETTER,
    NgramSpec,
    UrlBatch,
    _language_values,
    _u64,
    featurize,
    language_marker_hashes,
    mix64,
)

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

_SALT_DIFF = 0x165667B19E3779F9
_SALT_SIGNATURE = 0x27D4EB2F165667C5
_SALT_CROSS = 0x85EBCA77C2B2AE63
_PAIR_KEY = 0xD6E8FEB86659FD93


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
