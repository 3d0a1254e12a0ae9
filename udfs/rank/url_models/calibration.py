"""Scores that mean probabilities, and the alignment decision of the pair model.

Two records in a pair model's parascout_model.json, both fitted on the training run's dev hosts
(never on the hosts it is evaluated on), in the setting `align` meets: every src×trg pair of a
host's pool, with a share of the gold pairs orphaned (one side removed):

- `calibration` (Platt scaling: sigmoid(scale × logit + bias)) makes `predict_parallel` a
  probability for a pair seen alone;
- `decision` adds what the pool says about a pair: how far its logit stands above the best other
  candidate of its src URL and of its trg URL (an orphan's best candidate is usually some other
  page's partner, scored higher by that page), combined by a logistic regression into
  P(gold pair | pool), and the cut-off `min_score` under which a URL stays unaligned (the
  highest-F1 one at dev precision >= 0.95). Also from the pool: how rare on the host is the rarest
  token the two URLs share (`?id=0018` on both sides of a translated path, `11453` nowhere else) — and
  the rarest shared stem, so cognates count (`philosophy` / `philosophie` share `philo`); the
  host's id mapping: when the URLs differ in one number each, how many of the host's confident
  pairs (p_parallel >= CONFIDENT) map numbers with the same offset (`item=2041` -> `item=2042`), and
  whether the two URLs hold the same place in the order of their shape's ids (`node/807` ->
  `fr/node/11427`); and the host's own convention: how many other candidates differ in the same
  tokens (`2` on every English page: `articleSeisme2` / `articleSeisme`).

Older model directories have neither record: `predict_parallel` returns the network's softmax and
`alignment_scores` returns p_parallel as it is.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from urllib.parse import unquote

import numpy as np
import pandas as pd

from parascout.udfs.rank.url_models.preprocess import fold_accents

#: margins are clipped here (a URL with a single candidate gets the largest margin)
MARGIN_CLIP = 10.0
CONTEXT_FEATURES = ("logit", "src_margin", "trg_margin", "mutual_best", "rare_shared", "id_offset_support",
                    "difference_support", "rare_shared_stem", "id_rank_agreement")
#: a pair whose p_parallel reaches this is a confident pair: its id offset teaches the host's mapping
CONFIDENT = 0.5
_TOKEN = re.compile(r"[^\W_]+")


def fit_logistic(features: np.ndarray, labels: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """Weights (last one the bias) of a logistic regression minimising the mean log loss."""
    from scipy.optimize import minimize

    design = np.hstack([features, np.ones((len(features), 1))])
    labels = labels.astype(np.float64)

    def loss(weights: np.ndarray) -> tuple[float, np.ndarray]:
        z = design @ weights
        residual = _sigmoid(z) - labels
        return float((np.logaddexp(0.0, z) - labels * z).mean()), design.T @ residual / len(labels)

    initial = start if start is not None else np.zeros(design.shape[1])
    return minimize(loss, initial, jac=True, method="L-BFGS-B").x


def fit_platt(logits: np.ndarray, labels: np.ndarray) -> dict:
    """The calibration record: sigmoid(scale × logit + bias) fitted by log loss (temperature + shift)."""
    scale, bias = fit_logistic(logits[:, None], labels, start=np.array([1.0, 0.0]))
    return {"method": "platt", "scale": round(float(scale), 6), "bias": round(float(bias), 6)}


def calibrated(logits: np.ndarray, calibration: dict) -> np.ndarray:
    """P(parallel) from the network's logit under a calibration record."""
    return _sigmoid(calibration["scale"] * np.asarray(logits, dtype=float) + calibration["bias"])


def _sigmoid(z: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return expit(z)


def _logit(probability: np.ndarray) -> np.ndarray:
    probability = np.clip(np.asarray(probability, dtype=float), 1e-12, 1 - 1e-12)
    return np.log(probability) - np.log1p(-probability)


def context_features(pairs: pd.DataFrame, score_column: str = "p_parallel") -> np.ndarray:
    """CONTEXT_FEATURES per candidate pair (host, src_url, trg_url, score_column): the pair's logit, its
    margin over the best other candidate of the same src URL (and trg URL) on the host, and whether it is
    the best of both."""
    logit = _logit(pairs[score_column].to_numpy())
    frame = pd.DataFrame({"host": pairs["host"].to_numpy(), "src": pairs["src_url"].to_numpy(),
                          "trg": pairs["trg_url"].to_numpy(), "logit": logit})
    margins = [_margin(frame, side) for side in ("src", "trg")]
    mutual = ((margins[0] > 0) & (margins[1] > 0)).astype(float)
    offsets = id_offset_support(frame, pairs[score_column].to_numpy(dtype=float))
    return np.column_stack([logit, margins[0], margins[1], mutual, rare_shared_tokens(frame), offsets,
                            difference_support(frame), rare_shared_tokens(frame, stems=True),
                            id_rank_agreement(frame)])


_WORD_OR_NUMBER = re.compile(r"[^\W\d_]+|\d+")


def difference_support(frame: pd.DataFrame) -> np.ndarray:
    """Per pair, log1p(other candidate pairs of the host whose URLs differ in the same tokens, letter runs and
    digit runs apart, counted as multisets): a host's own convention (`en`->`fr`, a `2` on every English page:
    articleSeisme2 / articleSeisme, article2KMeadows2 / article2KMeadows) recurs across its true pairs, while
    two unrelated pages differ in tokens of their own."""
    tokens: dict[str, tuple[frozenset[str], dict[str, int]]] = {}

    def words(url: str) -> tuple[frozenset[str], dict[str, int]]:
        """The URL's token set and its repeated tokens with their counts."""
        found = tokens.get(url)
        if found is None:
            runs = _WORD_OR_NUMBER.findall(_path(url).lower())
            repeated = {token: count for token, count in Counter(runs).items() if count > 1} \
                if len(set(runs)) < len(runs) else {}
            found = tokens[url] = frozenset(runs), repeated
        return found

    def only_in(first: tuple, second: tuple) -> tuple[str, ...]:
        """Tokens of `first` beyond those of `second`, as a sorted multiset."""
        (first_set, first_repeated), (second_set, second_repeated) = first, second
        extra = list(first_set - second_set)
        for token, count in first_repeated.items():
            surplus = count - (second_repeated.get(token, 1) if token in second_set else 1)
            extra += [token] * surplus
        return tuple(sorted(extra))

    def difference(src: str, trg: str) -> tuple:
        src_words, trg_words = words(src), words(trg)
        return only_in(src_words, trg_words), only_in(trg_words, src_words)

    keys = [(host, *difference(src, trg)) for host, src, trg in zip(frame["host"], frame["src"], frame["trg"])]
    support: dict[tuple, int] = {}
    for key in keys:
        support[key] = support.get(key, 0) + 1
    return np.log(np.array([support[key] for key in keys], dtype=float))


def _path(url: str) -> str:
    """The URL after its host ('' when it has no path)."""
    start = url.find("/", url.find("://") + 3 if "://" in url else 0)
    return url[start:] if start != -1 else ""


_DIGITS = re.compile(r"[0-9]+")


def id_rank_agreement(frame: pd.DataFrame, min_urls: int = 3, reach: float = 3.0) -> np.ndarray:
    """Per pair, how well the src URL's place among the host's src URLs of its shape (the path with digit runs
    masked, ordered by its numbers) matches the trg URL's place among the trg URLs of its shape: 1 on the
    diagonal of the two orders, falling to 0 `reach` places away; 0 for URLs without numbers or in shapes of
    fewer than `min_urls` URLs. A site that numbers its pages in both languages in the same order
    (node/807 -> fr/node/11427, node/850 -> fr/node/11456) keeps its pairs near that diagonal, whatever the ids."""
    places = {}
    for side in ("src", "trg"):
        urls = pd.DataFrame({"host": frame["host"].to_numpy(), "url": frame[side].to_numpy()}).drop_duplicates()
        paths = [_path(url) for url in urls["url"]]
        urls["shape"] = [_DIGITS.sub("#", path) for path in paths]
        urls["key"] = [tuple(int(n[:15]) for n in _DIGITS.findall(path)) for path in paths]
        urls = urls[urls["key"].map(len) > 0].sort_values(["host", "shape", "key"], kind="stable")
        group = urls.groupby(["host", "shape"], sort=False)
        urls["place"], urls["size"] = group.cumcount().to_numpy(), group["url"].transform("size").to_numpy()
        places[side] = dict(zip(urls["url"], zip(urls["place"], urls["size"])))
    result = np.zeros(len(frame))
    for row, (src, trg) in enumerate(zip(frame["src"], frame["trg"])):
        src_place, trg_place = places["src"].get(src), places["trg"].get(trg)
        if src_place is None or trg_place is None or min(src_place[1], trg_place[1]) < min_urls:
            continue
        expected = (src_place[0] + 0.5) * trg_place[1] / src_place[1] - 0.5
        result[row] = max(0.0, 1.0 - abs(trg_place[0] - expected) / reach)
    return result


_NUMBER = re.compile(r"[0-9]+")


def _single_offset(src: str, trg: str) -> int | None:
    """trg's number minus src's when each URL has exactly one number the other lacks; None otherwise."""
    src_numbers, trg_numbers = _NUMBER.findall(src), _NUMBER.findall(trg)
    src_only = [n for n in src_numbers if n not in trg_numbers]
    trg_only = [n for n in trg_numbers if n not in src_numbers]
    if len(src_only) != 1 or len(trg_only) != 1 or len(src_only[0]) > 15 or len(trg_only[0]) > 15:
        return None
    return int(trg_only[0]) - int(src_only[0])


def id_offset_support(frame: pd.DataFrame, p_parallel: np.ndarray) -> np.ndarray:
    """Per pair with a single differing number, log1p(confident pairs of the host, itself excluded, with the
    same offset); 0 for the other pairs."""
    offsets = [_single_offset(src, trg) for src, trg in zip(frame["src"], frame["trg"])]
    confident: dict[tuple[str, int], int] = {}
    for host, offset, p in zip(frame["host"], offsets, p_parallel):
        if offset is not None and p >= CONFIDENT:
            confident[host, offset] = confident.get((host, offset), 0) + 1
    return np.array([0.0 if offset is None else
                     math.log1p(confident.get((host, offset), 0) - (p >= CONFIDENT))
                     for host, offset, p in zip(frame["host"], offsets, p_parallel)])


def _path_tokens(url: str) -> frozenset[str]:
    """Lower-cased letter/digit runs of a URL after its host."""
    return frozenset(_TOKEN.findall(_path(url).lower()))


def _path_stems(url: str, size: int = 5) -> frozenset[str]:
    """The URL's path tokens with each word of more than `size` letters cut to its first and its last `size`
    letters, accents folded (philosophy and philosophie share `<philo`, eblandat and fblandat `andat>`)."""
    stems = set()
    for token in _WORD_OR_NUMBER.findall(fold_accents(unquote(_path(url))).lower()):
        if len(token) > size and not token.isdigit():
            stems.update((token[:size] + "<", ">" + token[-size:]))
        else:
            stems.add(token)
    return frozenset(stems)


def rare_shared_tokens(frame: pd.DataFrame, stems: bool = False) -> np.ndarray:
    """Per pair, log(URLs of the host / URLs of the host holding the rarest token both URLs share); 0 if none.
    stems: tokens compared by their folded beginnings and ends (_path_stems), so cognates count as shared."""
    result = np.zeros(len(frame))
    split = _path_stems if stems else _path_tokens
    for rows in frame.groupby("host", sort=False).indices.values():
        urls = pd.unique(np.concatenate([frame["src"].to_numpy()[rows], frame["trg"].to_numpy()[rows]]))
        tokens = {url: split(url) for url in urls}
        frequency: dict[str, int] = {}
        for found in tokens.values():
            for token in found:
                frequency[token] = frequency.get(token, 0) + 1
        total = len(urls)
        for row, src, trg in zip(rows, frame["src"].to_numpy()[rows], frame["trg"].to_numpy()[rows]):
            shared = tokens[src] & tokens[trg]
            if shared:
                result[row] = math.log(total / min(frequency[token] for token in shared))
    return result


def _margin(frame: pd.DataFrame, side: str) -> np.ndarray:
    """logit minus the best other logit among the pairs sharing this pair's `side` URL (clipped)."""
    keys = [frame["host"], frame[side]]
    best = frame.groupby(keys, sort=False)["logit"].transform("max").to_numpy()
    ranked = frame.groupby(keys, sort=False)["logit"].rank(method="first", ascending=False).to_numpy()
    second = frame["logit"].where(ranked == 2).groupby(keys, sort=False).transform("max").to_numpy()
    other = np.where(ranked == 1, second, best)
    margin = np.where(np.isnan(other), MARGIN_CLIP, frame["logit"].to_numpy() - np.nan_to_num(other))
    return np.clip(margin, -MARGIN_CLIP, MARGIN_CLIP)


def fit_decision(pairs: pd.DataFrame, labels: np.ndarray) -> dict:
    """The decision record's weights, fitted on scored pool pairs (host, src_url, trg_url, p_parallel)."""
    weights = fit_logistic(context_features(pairs), labels)
    return {"method": "pool-context", "features": list(CONTEXT_FEATURES),
            "weights": [round(float(w), 6) for w in weights[:-1]], "bias": round(float(weights[-1]), 6)}


def alignment_scores(pairs: pd.DataFrame, metadata: dict, score_column: str = "p_parallel") -> np.ndarray:
    """P(gold pair | the host's candidates) under the model's decision record; p_parallel without one."""
    decision = metadata.get("decision") or {}
    if decision.get("method") != "pool-context" or pairs.empty:
        return pairs[score_column].to_numpy(dtype=float)
    features = context_features(pairs, score_column)[:, :len(decision["weights"])]
    return _sigmoid(features @ np.asarray(decision["weights"]) + decision["bias"])


def reliability(scores: np.ndarray, labels: np.ndarray, bins: int = 10) -> dict:
    """Reliability table (equal-width score bins: mean score, observed rate, pairs) and the expected
    calibration error (|mean score - observed| weighted by the bin's share of pairs)."""
    scores, labels = np.asarray(scores, dtype=float), np.asarray(labels, dtype=float)
    which = np.minimum((scores * bins).astype(int), bins - 1)
    table, error = [], 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            mean, observed = float(scores[inside].mean()), float(labels[inside].mean())
            table.append({"bin": b, "mean_score": mean, "observed": observed, "pairs": int(inside.sum())})
            error += inside.mean() * abs(mean - observed)
    return {"bins": table, "ece": float(error)}
