"""STRAND's structural filter (Resnik & Smith 2003) and the decision rule built on it.

Two pages are linearised into tokens ("[START:p]", "[END:p]", "[Chunk:123]", see
udfs.fetch.documents). `strand_features` aligns the two token sequences — markup must
match exactly, a text chunk matches any text chunk — with a minimal diff (a
longest common subsequence, rapidfuzz's Indel.opcodes), and measures:

- dp: difference percentage, the share of tokens (of both pages) left unaligned;
- n:  the number of aligned text-chunk pairs whose lengths differ;
- r:  the Pearson correlation of the lengths of aligned text-chunk pairs;
- p:  the two-sided significance of r.

Resnik & Smith accept a pair when dp < 20% and p < 0.05 (`ThresholdRule`) and
found a small decision tree learned from labelled pairs better (`TreeRule.fit`).
Both rules serialise to a dict, so the one in use is written into the job report.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

CHUNK_PREFIX = "[Chunk:"
MIN_CHUNKS_FOR_CORRELATION = 3
#: longer token sequences are cut before alignment (bounds the diff's time and memory)
MAX_ALIGNED_TOKENS = 10_000
#: numeric features of a pair the learned rule may split on, and the value used when one is missing
RULE_FEATURES = {"dp": 1.0, "n": 0.0, "r": 0.0, "p": 1.0, "image_jaccard": -1.0,
                 "length_ratio": 0.0, "paragraph_ratio": 0.0}


@dataclass(frozen=True)
class StructureFeatures:
    """STRAND's measures for one pair of linearised pages."""

    dp: float
    n: int
    r: float | None
    p: float
    aligned_chunks: int


def _chunk_length(token: str) -> int | None:
    if token.startswith(CHUNK_PREFIX):
        try:
            return int(token[len(CHUNK_PREFIX):-1])
        except ValueError:
            return 0
    return None


def _alignment_key(token: str) -> str:
    return "[Chunk]" if token.startswith(CHUNK_PREFIX) else token


def pearson_significance(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float]:
    """Pearson r of two length lists and its two-sided p-value; (None, 1.0) when undefined.

    Computed with plain sums and the regularised incomplete beta (the Student-t tail), not
    numpy.corrcoef + scipy.stats.t.sf, whose overheads were half of a pair's verification time."""
    count = len(x)
    if count < MIN_CHUNKS_FOR_CORRELATION:
        return None, 1.0
    mean_x, mean_y = sum(x) / count, sum(y) / count
    sxx = sum((a - mean_x) ** 2 for a in x)
    syy = sum((b - mean_y) ** 2 for b in y)
    if sxx <= 1e-12 * max(1.0, mean_x * mean_x) * count or syy <= 1e-12 * max(1.0, mean_y * mean_y) * count:
        return None, 1.0
    sxy = sum((a - mean_x) * (b - mean_y) for a, b in zip(x, y))
    r = max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))
    degrees = count - 2
    if abs(r) >= 1.0:
        return r, 0.0
    if degrees == 0:
        return r, 1.0
    t_squared = r * r * degrees / (1.0 - r * r)
    return r, float(special.betainc(degrees / 2.0, 0.5, degrees / (degrees + t_squared)))


def align_tokens(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs (i, j) of a longest common subsequence of a and b (a minimal insert/delete diff).

    rapidfuzz's Indel.opcodes over the tokens mapped to characters: the same LCS length (so the
    same dp) as the bit-parallel LCS on Python integers this replaced, and faster."""
    codes: dict[str, str] = {}
    return _aligned_pairs(_encode(a, codes), _encode(b, codes))


def _encode(tokens: Sequence[str], codes: dict[str, str]) -> str:
    return "".join([codes.get(t) or codes.setdefault(t, chr(0x100 + len(codes))) for t in tokens])


def _aligned_pairs(left: str, right: str) -> list[tuple[int, int]]:
    from rapidfuzz.distance import Indel

    return [pair for tag, i1, i2, j1, _ in Indel.opcodes(left, right) if tag == "equal"
            for pair in zip(range(i1, i2), range(j1, j1 + i2 - i1))]


@dataclass(frozen=True)
class Linearised:
    """A page's STRAND tokens prepared once: alignment keys as one character each (codes shared by the
    pages compared) and text-chunk lengths (None for markup)."""

    encoded: str
    lengths: list[int | None]


def linearise(tokens: Sequence[str] | None, codes: dict[str, str] | None = None) -> Linearised:
    tokens = list(tokens if tokens is not None else [])[:MAX_ALIGNED_TOKENS]
    return Linearised(_encode([_alignment_key(t) for t in tokens], {} if codes is None else codes),
                      [_chunk_length(t) for t in tokens])


def strand_features(source: Sequence[str] | Linearised | None, target: Sequence[str] | Linearised | None
                    ) -> StructureFeatures:
    """Align two STRAND token sequences (raw, or linearised with shared codes) and compute dp, n, r, p."""
    codes: dict[str, str] = {}
    a = source if isinstance(source, Linearised) else linearise(source, codes)
    b = target if isinstance(target, Linearised) else linearise(target, codes)
    if not a.encoded and not b.encoded:
        return StructureFeatures(dp=1.0, n=0, r=None, p=1.0, aligned_chunks=0)
    alignment = _aligned_pairs(a.encoded, b.encoded)
    source_lengths: list[int] = []
    target_lengths: list[int] = []
    for i, j in alignment:
        length = a.lengths[i]
        if length is not None:
            source_lengths.append(length)
            target_lengths.append(b.lengths[j])
    dp = (len(a.encoded) + len(b.encoded) - 2 * len(alignment)) / (len(a.encoded) + len(b.encoded))
    unequal = sum(1 for x, y in zip(source_lengths, target_lengths) if x != y)
    r, p = pearson_significance(source_lengths, target_lengths)
    return StructureFeatures(dp=dp, n=unequal, r=r, p=p, aligned_chunks=len(source_lengths))


def feature_matrix(rows: list[dict] | object) -> np.ndarray:
    """The RULE_FEATURES of a pandas frame (or list of dicts) as a float matrix, missing values filled."""
    import pandas as pd

    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    columns = []
    for name, missing in RULE_FEATURES.items():
        values = pd.to_numeric(frame[name], errors="coerce") if name in frame else pd.Series(np.nan, index=frame.index)
        columns.append(values.fillna(missing).to_numpy(dtype=float))
    return np.column_stack(columns) if columns else np.zeros((len(frame), 0))


@dataclass(frozen=True)
class ThresholdRule:
    """Resnik & Smith's default: parallel when dp < max_dp and p < max_p."""

    max_dp: float = 0.2
    max_p: float = 0.05

    method = "strand-threshold"

    def decide(self, features: StructureFeatures | dict) -> tuple[bool, str | None]:
        """(parallel, reason for rejection or None)."""
        values = features if isinstance(features, dict) else features.__dict__
        if values["dp"] is None or values["dp"] >= self.max_dp:
            return False, "dp_too_high"
        if values.get("aligned_chunks", MIN_CHUNKS_FOR_CORRELATION) < MIN_CHUNKS_FOR_CORRELATION:
            return False, "too_few_chunks"
        if values["p"] is None or values["p"] >= self.max_p:
            return False, "p_too_high"
        return True, None

    def to_dict(self) -> dict:
        return {"method": self.method, "max_dp": self.max_dp, "max_p": self.max_p}


@dataclass(frozen=True)
class TreeRule:
    """A small CART decision tree over RULE_FEATURES, fitted on labelled pairs (gini, depth-limited)."""

    tree: dict

    method = "learned-tree"

    @classmethod
    def fit(cls, features: np.ndarray, labels: Sequence[bool], max_depth: int = 3, min_leaf: int = 3) -> TreeRule:
        """Grow a tree on a feature matrix (columns in RULE_FEATURES order) and boolean labels."""
        y = np.asarray(labels, dtype=bool)
        if len(y) == 0:
            raise ValueError("cannot learn a rule from zero labelled pairs")
        return cls(_grow(np.asarray(features, dtype=float), y, max_depth, min_leaf))

    def decide(self, features: dict) -> tuple[bool, str | None]:
        node = self.tree
        while "feature" in node:
            value = features.get(node["feature"])
            if value is None or (isinstance(value, float) and math.isnan(value)):
                value = RULE_FEATURES[node["feature"]]
            node = node["left"] if value <= node["threshold"] else node["right"]
        return (True, None) if node["parallel"] else (False, "rule_rejected")

    def to_dict(self) -> dict:
        return {"method": self.method, "tree": self.tree}


def _leaf(y: np.ndarray) -> dict:
    share = float(y.mean()) if len(y) else 0.0
    return {"parallel": share >= 0.5, "share_parallel": round(share, 4), "samples": len(y)}


def _gini(positives: np.ndarray, totals: np.ndarray) -> np.ndarray:
    share = positives / np.maximum(totals, 1)
    return 1.0 - share ** 2 - (1.0 - share) ** 2


def _best_split(x: np.ndarray, y: np.ndarray, min_leaf: int) -> tuple[int, float, float] | None:
    """(feature index, threshold, weighted gini) of the best split, or None."""
    best = None
    count = len(y)
    for feature in range(x.shape[1]):
        order = np.argsort(x[:, feature], kind="stable")
        values, labels = x[order, feature], y[order]
        left_totals = np.arange(1, count)
        left_positives = np.cumsum(labels)[:-1]
        right_totals = count - left_totals
        right_positives = labels.sum() - left_positives
        valid = (values[1:] > values[:-1]) & (left_totals >= min_leaf) & (right_totals >= min_leaf)
        if not valid.any():
            continue
        impurity = (left_totals * _gini(left_positives, left_totals)
                    + right_totals * _gini(right_positives, right_totals)) / count
        impurity[~valid] = np.inf
        at = int(np.argmin(impurity))
        if best is None or impurity[at] < best[2]:
            best = (feature, float((values[at] + values[at + 1]) / 2), float(impurity[at]))
    return best


def _grow(x: np.ndarray, y: np.ndarray, depth: int, min_leaf: int) -> dict:
    leaf = _leaf(y)
    if depth == 0 or len(y) < 2 * min_leaf or y.all() or not y.any():
        return leaf
    split = _best_split(x, y, min_leaf)
    if split is None or split[2] >= _gini(np.array([y.sum()]), np.array([len(y)]))[0]:
        return leaf
    feature, threshold, _ = split
    goes_left = x[:, feature] <= threshold
    return {"feature": list(RULE_FEATURES)[feature], "threshold": threshold,
            "left": _grow(x[goes_left], y[goes_left], depth - 1, min_leaf),
            "right": _grow(x[~goes_left], y[~goes_left], depth - 1, min_leaf)}


def rule_from_dict(data: dict) -> ThresholdRule | TreeRule:
    """Rebuild a rule written by `to_dict` (as stored in a verify-pairs report)."""
    if data.get("method") == TreeRule.method:
        return TreeRule(data["tree"])
    return ThresholdRule(max_dp=float(data.get("max_dp", 0.2)), max_p=float(data.get("max_p", 0.05)))
