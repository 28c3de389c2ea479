"""Paired significance over test queries: scipy's paired t-test and the Bonferroni correction
(Althammer et al. 2023, Table 1: p < 0.05 after Bonferroni with n = 3 strategies)."""

from __future__ import annotations

import numpy as np

__all__ = ["paired_test", "bonferroni", "ALPHA"]

ALPHA = 0.05


def paired_test(a, b) -> dict:
    """Two-sided paired t-test of per-query values ``a`` against ``b``: ``{"difference":
    mean(a - b), "t", "p", "n"}``. Identical samples give t = 0 and p = 1 (scipy: NaN)."""
    from scipy.stats import ttest_rel

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"paired samples must be equal-length 1-d arrays, got {a.shape} and {b.shape}"
        )
    if len(a) < 2:
        raise ValueError(f"a paired t-test needs at least 2 queries, got {len(a)}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("paired samples must be finite")
    difference = a - b
    if not difference.any():
        return {"difference": 0.0, "t": 0.0, "p": 1.0, "n": int(len(a))}
    t, p = ttest_rel(a, b)
    return {"difference": float(difference.mean()), "t": float(t), "p": float(p), "n": len(a)}


def bonferroni(p, n_comparisons: int) -> float | np.ndarray:
    """``p`` times the number of comparisons, capped at 1."""
    if not isinstance(n_comparisons, (int, np.integer)) or n_comparisons < 1:
        raise ValueError(f"n_comparisons must be a positive integer, got {n_comparisons!r}")
    p = np.asarray(p, dtype=np.float64)
    if ((p < 0) | (p > 1)).any():
        raise ValueError(f"p-values must lie in [0, 1], got {p}")
    out = np.minimum(p * n_comparisons, 1.0)
    return float(out) if out.ndim == 0 else out
