"""Metrics of the URL models: per-class P/R/F1, macro averages, top-class confusion; and 1-1 alignment
quality with orphans (pair kinds, orphan pools, precision/recall/F1 per kind, the score cut-off)."""
from __future__ import annotations

import re
from collections import Counter
from urllib.parse import unquote

import numpy as np
import pandas as pd

from parascout.udfs.rank.url_models.preprocess import fold_accents


def classification_report(y_true: list, y_pred: list, labels: list | None = None, top: int = 10) -> dict:
    """Per-class precision/recall/F1/support, macro averages over classes present in y_true, accuracy,
    and the confusion matrix of the `top` most frequent true classes (rows true, columns predicted)."""
    y_true = [str(v) for v in y_true]
    y_pred = [str(v) for v in y_pred]
    labels = [str(v) for v in labels] if labels is not None else []
    labels = list(dict.fromkeys(labels + sorted(set(y_true) | set(y_pred))))
    code = {label: i for i, label in enumerate(labels)}
    true_codes = np.array([code[v] for v in y_true], dtype=np.int64)
    pred_codes = np.array([code[v] for v in y_pred], dtype=np.int64)
    size = len(labels)
    confusion = np.bincount(true_codes * size + pred_codes, minlength=size * size).reshape(size, size)
    true_positive = np.diag(confusion)
    support = confusion.sum(axis=1)
    predicted = confusion.sum(axis=0)
    precision = np.divide(true_positive, predicted, out=np.zeros(size), where=predicted > 0)
    recall = np.divide(true_positive, support, out=np.zeros(size), where=support > 0)
    f1 = np.divide(2 * precision * recall, precision + recall, out=np.zeros(size), where=precision + recall > 0)
    per_class = {label: {"precision": round(float(precision[i]), 4), "recall": round(float(recall[i]), 4),
                         "f1": round(float(f1[i]), 4), "support": int(support[i])}
                 for i, label in enumerate(labels)}
    present = support > 0
    macro = {name: round(float(values[present].mean()), 4) if present.any() else 0.0
             for name, values in (("precision", precision), ("recall", recall), ("f1", f1))}
    top_codes = [i for i in np.argsort(-support, kind="stable")[:top] if support[i] > 0]
    return {
        "examples": len(y_true),
        "accuracy": round(float(true_positive.sum() / len(y_true)), 4) if y_true else 0.0,
        "macro": macro,
        "per_class": per_class,
        "confusion_top": {"labels": [labels[i] for i in top_codes],
                          "matrix": confusion[np.ix_(top_codes, top_codes)].tolist()},
    }


def macro_f1(y_true: list, y_pred: list) -> float:
    """Macro-averaged F1 over the classes present in y_true."""
    return classification_report(y_true, y_pred, top=0)["macro"]["f1"]


def format_report(report: dict, title: str = "", max_classes: int = 20) -> str:
    """A printable table of a classification_report (the largest classes first) and its top confusion."""
    lines = [title] if title else []
    lines.append(f"examples {report['examples']}  accuracy {report['accuracy']:.4f}  "
                 f"macro P {report['macro']['precision']:.4f} R {report['macro']['recall']:.4f} "
                 f"F1 {report['macro']['f1']:.4f}")
    lines.append(f"{'class':>14} {'precision':>9} {'recall':>7} {'f1':>7} {'support':>8}")
    ranked = sorted(report["per_class"].items(), key=lambda item: -item[1]["support"])
    for label, scores in ranked[:max_classes]:
        lines.append(f"{label:>14} {scores['precision']:9.4f} {scores['recall']:7.4f} {scores['f1']:7.4f} "
                     f"{scores['support']:8d}")
    confusion = report["confusion_top"]
    if confusion["labels"]:
        lines.append("confusion (rows true, columns predicted): " + " ".join(confusion["labels"]))
        for label, row in zip(confusion["labels"], confusion["matrix"]):
            lines.append(f"{label:>14} " + " ".join(f"{v:6d}" for v in row))
    return "\n".join(lines)


# ---- alignment with orphans: the setting a user meets (not every page has a partner) -------------
PAIR_KINDS = ("identifier", "numeric", "translated")
_WORD_OR_NUMBER = re.compile(r"[^\W\d_]+|\d+")
#: query keys whose value names the page's language (`lang=fr`, `clang=2`): key and value are identifiers
LANGUAGE_QUERY_KEYS = re.compile(r"(?<=[?&;])(?:c?lang|language|locale|lng|hl)=[^&;#]*", re.IGNORECASE)


def _folded_tokens(url: str) -> list[str]:
    """Lower-cased, accent-folded letter runs and digit runs of a URL (scheme and language query keys dropped)."""
    return _WORD_OR_NUMBER.findall(fold_accents(LANGUAGE_QUERY_KEYS.sub("", unquote(url.split("://", 1)[-1])).lower()))


def _strip_glued_marker(token: str, markers: frozenset[str]) -> str:
    """`aboutusen` -> `aboutus`: a 2-3 letter language marker glued to the end or start of a longer word."""
    for size in (3, 2):
        if len(token) > size + 2 and token[-size:] in markers:
            return token[:-size]
        if len(token) > size + 2 and token[:size] in markers:
            return token[size:]
    return token


def pair_kind(src_url: str, trg_url: str, markers: frozenset[str]) -> str:
    """How a true pair's URLs differ, the rule the orphan protocol reports by:

    language query parameters (`lang=fr`, `clang=2`, `locale=`...) are dropped; the two URLs' tokens
    (letter runs and digit runs, lower-cased, accents folded) are compared as
    multisets; tokens that are language markers (`markers`) leave the difference, and so do
    differing words that become equal once a glued 2-3 letter marker is cut (`aboutusen`/`aboutusfr`).
    Nothing left: 'identifier' (only language identifiers differ); only digit runs left:
    'numeric' (different ids); any word left: 'translated' (a translated path or slug).
    """
    src, trg = Counter(_folded_tokens(src_url)), Counter(_folded_tokens(trg_url))
    only_src = [t for t in (src - trg).elements() if t not in markers]
    only_trg = [t for t in (trg - src).elements() if t not in markers]
    glued_src = Counter(_strip_glued_marker(t, markers) for t in only_src if not t.isdigit())
    glued_trg = Counter(_strip_glued_marker(t, markers) for t in only_trg if not t.isdigit())
    words_left = (glued_src - glued_trg) + (glued_trg - glued_src)
    if words_left:
        return "translated"
    return "numeric" if any(t.isdigit() for t in only_src + only_trg) else "identifier"


def orphan_pools(gold: pd.DataFrame, orphan_share: float = 0.3, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pool, kept gold): a seeded `orphan_share` of the gold pairs loses one side (src or trg, at random),
    so its other side stays in the pool with no partner. pool: host, url, lang ('src' / 'trg' when the
    gold has no languages); kept gold: the pairs whose two URLs are both still in the pool."""
    rng = np.random.default_rng(seed)
    losing = rng.random(len(gold)) < orphan_share
    lose_src = rng.random(len(gold)) < 0.5
    src_lang = gold["src_lang"] if "src_lang" in gold else pd.Series("src", index=gold.index)
    trg_lang = gold["trg_lang"] if "trg_lang" in gold else pd.Series("trg", index=gold.index)
    dropped = set(gold["src_url"][losing & lose_src]) | set(gold["trg_url"][losing & ~lose_src])
    pool = pd.concat([pd.DataFrame({"host": gold["host"], "url": gold["src_url"], "lang": src_lang.fillna("src")}),
                      pd.DataFrame({"host": gold["host"], "url": gold["trg_url"], "lang": trg_lang.fillna("trg")})])
    pool = pool[~pool["url"].isin(dropped)].drop_duplicates("url").reset_index(drop=True)
    kept = gold[~gold["src_url"].isin(dropped) & ~gold["trg_url"].isin(dropped)].reset_index(drop=True)
    return pool, kept


def alignment_quality(aligned: pd.DataFrame, gold: pd.DataFrame, markers: frozenset[str]) -> dict:
    """Precision, recall, F1 of aligned (src_url, trg_url) pairs against gold, overall and per pair kind
    (recall: gold pairs of the kind found; precision: proposed pairs of the kind, by the same rule, correct)."""
    gold_set = set(zip(gold["src_url"], gold["trg_url"]))
    proposed = list(zip(aligned["src_url"], aligned["trg_url"]))
    result = {"all": _prf(sum(p in gold_set for p in proposed), len(proposed), len(gold_set))}
    gold_kinds = Counter(pair_kind(s, t, markers) for s, t in gold_set)
    found = Counter(pair_kind(s, t, markers) for s, t in proposed if (s, t) in gold_set)
    proposed_kinds = Counter(pair_kind(s, t, markers) for s, t in proposed)
    for kind in PAIR_KINDS:
        result[kind] = _prf(found[kind], proposed_kinds[kind], gold_kinds[kind])
    return result


def _prf(correct: int, proposed: int, gold: int) -> dict:
    precision = correct / proposed if proposed else 0.0
    recall = correct / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "correct": correct, "proposed": proposed, "gold": gold}


def best_threshold(aligned: pd.DataFrame, gold: pd.DataFrame, min_precision: float = 0.95) -> dict:
    """The score cut-off for a greedy 1-1 alignment: the highest-F1 one among those with precision >=
    min_precision (the highest-F1 one when none reaches it).

    Cutting before or after the greedy pass gives the same pairs (greedy takes pairs best first), so
    one greedy alignment of every candidate (`aligned`: src_url, trg_url, score) serves every cut-off.
    The cut-off returned lies halfway between the last pair kept and the next one.
    """
    gold_set = set(zip(gold["src_url"], gold["trg_url"]))
    ordered = aligned.sort_values("score", ascending=False, kind="stable")
    scores = ordered["score"].to_numpy(dtype=float)
    correct = np.cumsum([p in gold_set for p in zip(ordered["src_url"], ordered["trg_url"])])
    if not len(scores) or not gold_set:
        return {"min_score": 0.5, "precision": 0.0, "recall": 0.0, "f1": 0.0}
    last_of_score = np.flatnonzero(np.concatenate([scores[1:] != scores[:-1], [True]]))
    proposed = last_of_score + 1
    precision = correct[last_of_score] / proposed
    recall = correct[last_of_score] / len(gold_set)
    f1 = np.where(precision + recall > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    eligible = precision >= min_precision
    choice = int(np.argmax(np.where(eligible, f1, -1.0))) if eligible.any() else int(np.argmax(f1))
    kept_score = scores[last_of_score[choice]]
    next_score = scores[last_of_score[choice] + 1] if last_of_score[choice] + 1 < len(scores) else 0.0
    return {"min_score": float(kept_score + next_score) / 2, "precision": float(precision[choice]),
            "recall": float(recall[choice]), "f1": float(f1[choice]), "min_precision": min_precision,
            "reached_min_precision": bool(eligible.any())}
