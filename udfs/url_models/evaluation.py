"""Classification metrics of the URL models: per-class P/R/F1, macro averages, top-class confusion."""
from __future__ import annotations

import numpy as np


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
