"""How calibrated the selection model was on the pairs a round asked: its mean p beside the
share the annotator said were positive, and a reliability table (paper: a 20-bin calibration
table per round)."""

from __future__ import annotations

import numpy as np

from .base import RoundState

__all__ = ["batch_calibration", "reliability"]


def reliability(proba: np.ndarray, labels: np.ndarray, *, bins: int = 10) -> list[dict]:
    """Reliability table of predicted p against labels: one row per non-empty bin of p."""
    proba, labels = np.asarray(proba, np.float64), np.asarray(labels, np.float64)
    which = np.clip((proba * bins).astype(int), 0, bins - 1)
    rows = []
    for b in np.unique(which):
        mask = which == b
        rows.append(
            {
                "bin": [b / bins, (b + 1) / bins],
                "n": int(mask.sum()),
                "mean_p": float(proba[mask].mean()),
                "positive_share": float(labels[mask].mean()),
            }
        )
    return rows


def batch_calibration(state: RoundState, batch, batch_labels) -> dict | None:
    """How the selection model's p compares with the labels the batch got."""
    if state.logits is None:
        return None
    p = 1.0 / (1.0 + np.exp(-state.logits[np.searchsorted(state.candidates, batch)]))
    return {
        "mean_p": float(p.mean()),
        "positive_share": float(np.mean(batch_labels)),
        "table": reliability(p, batch_labels),
    }
