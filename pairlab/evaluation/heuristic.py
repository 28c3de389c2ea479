"""Metrics on the stated (heuristically balanced) data, as the original benchmarks report:
QQP's accuracy and F1 at a dev-tuned threshold, WikiQA's clean MAP and a-F1, and ROC-AUC.
"""

from __future__ import annotations

import numpy as np

__all__ = ["best_threshold", "accuracy_f1", "clean_map", "roc_auc"]


def best_threshold(labels, scores, *, metric: str = "f1") -> float:
    """The threshold (positive when score >= it) maximising ``"f1"`` or ``"accuracy"``."""
    y, s = _check(labels, scores)
    if metric not in ("f1", "accuracy"):
        raise ValueError(f"metric must be 'f1' or 'accuracy', got {metric!r}")
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    last = np.r_[s[1:] != s[:-1], True]  # the end of each group of tied scores
    tp = np.cumsum(y)[last]
    predicted = (np.arange(1, len(y) + 1))[last]
    n_pos = y.sum()
    f1 = 2 * tp / (predicted + n_pos)
    accuracy = (tp + (len(y) - n_pos - (predicted - tp))) / len(y)  # true positives + negatives
    return float(s[last][int(np.argmax(f1 if metric == "f1" else accuracy))])


def accuracy_f1(labels, scores, threshold: float) -> dict:
    """Accuracy, precision, recall and F1 of ``score >= threshold``."""
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    y, s = _check(labels, scores)
    pred = (s >= threshold).astype(np.int64)
    scores = precision_recall_fscore_support(y, pred, average="binary", zero_division=0)[:3]
    out = dict(zip(("precision", "recall", "f1"), map(float, scores)))
    return {"accuracy": float(accuracy_score(y, pred)), **out, "threshold": float(threshold)}


def clean_map(query_ids, labels, scores) -> float:
    """Mean average precision over "clean" queries: those with a positive and a negative."""
    y, s = _check(labels, scores)
    q = np.asarray(query_ids)
    if q.shape != y.shape:
        raise ValueError(f"query_ids has shape {q.shape}, labels {y.shape}")
    codes, q = np.unique(q, return_inverse=True)
    positives = np.bincount(q, weights=y, minlength=len(codes))
    counts = np.bincount(q, minlength=len(codes))
    clean = np.flatnonzero((positives > 0) & (positives < counts))
    if len(clean) == 0:
        raise ValueError("no clean query (with both a positive and a negative pair)")
    from sklearn.metrics import average_precision_score  # lazy: ~0.7 s to import

    # A per-query loop: queries number in the hundreds, never pairs.
    return float(np.mean([average_precision_score(y[q == k], s[q == k]) for k in clean]))


def roc_auc(labels, scores) -> float:
    y, s = _check(labels, scores)
    if y.min() == y.max():
        raise ValueError("ROC-AUC needs both positive and negative labels")
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, s))


def _check(labels, scores):
    y = np.asarray(labels)
    s = np.asarray(scores, dtype=np.float64)
    if y.ndim != 1 or y.shape != s.shape:
        raise ValueError(f"labels {y.shape} and scores {s.shape} must be 1-d of equal length")
    if len(y) == 0:
        raise ValueError("no labelled pairs to score")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    if not np.isfinite(s).all():
        raise ValueError(f"scores contain {int((~np.isfinite(s)).sum())} NaN or infinite value(s)")
    return y.astype(np.int64), s
