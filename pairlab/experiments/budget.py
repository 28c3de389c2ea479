"""Budget views of active-learning curves: labels needed to reach a target, the data-efficiency
factor (paper appendix B.1: uncertainty sampling passes static retrieval's full-budget AP with
14x fewer labels on QQP), the budget at which two curves separate beyond their intervals, and
what labels cost in annotator time and money (Althammer et al. 2023: 75 judgements an hour at
$50 an hour)."""
from __future__ import annotations

import numpy as np

__all__ = ["labels_to_reach", "efficiency_factor", "separation_budget", "annotation_cost"]


def labels_to_reach(labels, values, target: float) -> float:
    """The number of labels at which a curve first reaches ``target``, interpolating linearly
    between rounds; ``nan`` if it never does. ``labels`` (n,) increasing, ``values`` (n,)."""
    x, y = _curve(labels, values)
    reached = np.flatnonzero(y >= target)
    if len(reached) == 0:
        return float("nan")
    k = int(reached[0])
    if k == 0:
        return float(x[0])
    x0, x1, y0, y1 = x[k - 1], x[k], y[k - 1], y[k]
    return float(x0 + (target - y0) / (y1 - y0) * (x1 - x0))


def efficiency_factor(labels, values, reference_labels: float, reference_value: float) -> float:
    """``reference_labels`` over the labels the curve needs to reach ``reference_value``: how many
    times fewer labels it needs than the reference (``nan`` if it never reaches it)."""
    if not reference_labels > 0:
        raise ValueError(f"reference_labels must be positive, got {reference_labels!r}")
    return float(reference_labels / labels_to_reach(labels, values, reference_value))


def separation_budget(labels, lower, upper) -> float:
    """The budget at which one curve separates above another: the fewest labels from which
    ``lower`` (n,), the upper curve's lower interval bound, stays above ``upper`` (n,), the other
    curve's upper bound, at that budget and every larger one measured, ``labels`` (n,) strictly
    increasing. ``nan`` if they are not apart at the largest budget (a gap that closes again
    is no separation). Curves apart from the first point on separate at ``labels[0]``."""
    x, low = _curve(labels, lower)
    _, high = _curve(labels, upper)
    apart = low > high
    if not apart[-1]:
        return float("nan")
    together = np.flatnonzero(~apart)
    return float(x[together[-1] + 1] if len(together) else x[0])


def annotation_cost(labels, *, per_hour: float = 75.0, dollars_per_hour: float = 50.0,
                    compute_seconds: float = 0.0) -> dict:
    """Annotator hours and dollars for ``labels`` judgements, beside the compute time."""
    if not (per_hour > 0 and dollars_per_hour >= 0 and compute_seconds >= 0):
        raise ValueError("per_hour must be positive; dollars_per_hour and compute_seconds non-negative")
    n = np.asarray(labels, dtype=np.float64)
    if (n < 0).any():
        raise ValueError("label counts must be non-negative")
    hours = n / per_hour
    return {"labels": n, "annotator_hours": hours, "dollars": hours * dollars_per_hour,
            "compute_hours": compute_seconds / 3600.0}


def _curve(labels, values) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(labels, dtype=np.float64)
    y = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape or len(x) == 0:
        raise ValueError(f"labels and values must be equal-length 1-d arrays, got {x.shape} and {y.shape}")
    if np.isnan(y).any() or np.isnan(x).any():
        raise ValueError("a curve with NaN labels or values has no defined crossing")
    if (np.diff(x) <= 0).any():
        raise ValueError("labels must be strictly increasing")
    return x, y
