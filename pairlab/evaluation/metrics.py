"""All-pairs precision, recall and AP estimated from three strata (paper appendix A.2, eq. 13):
false positives from every negative in ``D_near`` plus a uniform sample ``D_rand`` of the others,
each standing for ``(n_neg_total - |D_near|) / |D_rand|`` pairs; a pair counts at threshold g
when its score >= g. Public functions validate and raise ``ValueError``; ``_`` cores do not."""

from __future__ import annotations

import numpy as np

__all__ = [
    "estimate_ap",
    "estimate_precision_at_recall",
    "pr_curve",
    "bootstrap",
    "corrected_precision",
    "ap_from_counts",
    "precision_at_recall_from_counts",
    "as_scores",
    "count_at_least",
]


def estimate_ap(pos_scores, near_neg_scores, rand_neg_scores, n_neg_total) -> float:
    """Estimated all-pairs average precision (paper eq. 6 with FP from eq. 13)."""
    pos, near, rand, w = _validate(pos_scores, near_neg_scores, rand_neg_scores, n_neg_total)
    tp, fp = _curve(pos, near, rand, w)[1:]
    return ap_from_counts(tp, fp, len(pos))


def estimate_precision_at_recall(
    pos_scores, near_neg_scores, rand_neg_scores, n_neg_total, recall: float = 0.2
) -> float:
    """Estimated precision at the highest threshold whose recall reaches ``recall``."""
    if not 0.0 < recall <= 1.0:
        raise ValueError(f"recall must be in (0, 1], got {recall!r}")
    pos, near, rand, w = _validate(pos_scores, near_neg_scores, rand_neg_scores, n_neg_total)
    tp, fp = _curve(pos, near, rand, w)[1:]
    return precision_at_recall_from_counts(tp, fp, len(pos), recall)


def pr_curve(pos_scores, near_neg_scores, rand_neg_scores, n_neg_total) -> dict:
    """The estimated PR curve at each distinct positive score, descending: ``{"threshold",
    "recall", "precision", "tp", "fp"}`` (arrays of equal length)."""
    pos, near, rand, w = _validate(pos_scores, near_neg_scores, rand_neg_scores, n_neg_total)
    thresholds, tp, fp = _curve(pos, near, rand, w)
    curve = {"threshold": thresholds, "recall": tp / len(pos), "precision": tp / (tp + fp)}
    return {**curve, "tp": tp, "fp": fp}


def ap_from_counts(tp: np.ndarray, fp: np.ndarray, n_pos: int) -> float:
    """AP from true/false positive counts at descending thresholds (tp strictly increasing)."""
    recall_step = np.diff(np.r_[0.0, tp]) / n_pos
    return float(np.sum(recall_step * tp / (tp + fp)))


def precision_at_recall_from_counts(
    tp: np.ndarray, fp: np.ndarray, n_pos: int, recall: float
) -> float:
    """Precision at the first (highest) threshold whose recall reaches ``recall``."""
    k = int(np.searchsorted(tp, recall * n_pos - 1e-9, side="left"))
    return float(tp[k] / (tp[k] + fp[k]))


def bootstrap(
    pos_scores,
    near_neg_scores,
    rand_neg_scores,
    n_neg_total,
    *,
    n_boot: int = 1000,
    recall: float = 0.2,
    level: float = 0.95,
    seed: int = 0,
) -> dict:
    """Stratified bootstrap of AP and P@R: ``{"ap", "ap_ci", "p_at_r", "p_at_r_ci"}``, the
    original sample's points and percentile intervals."""
    if not isinstance(n_boot, (int, np.integer)) or n_boot < 2:
        raise ValueError(f"n_boot must be an integer >= 2, got {n_boot!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    pos, near, rand, w = _validate(pos_scores, near_neg_scores, rand_neg_scores, n_neg_total)
    tp, fp = _curve(pos, near, rand, w)[1:]
    rng = np.random.default_rng(seed)
    strata = _Resampler(pos, near, rand, w)
    samples = np.array([strata.draw(rng, recall) for _ in range(n_boot)])  # (n_boot, 2)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(samples, [tail, 100.0 - tail], axis=0)
    return {
        "ap": ap_from_counts(tp, fp, len(pos)),
        "ap_ci": [float(low[0]), float(high[0])],
        "p_at_r": precision_at_recall_from_counts(tp, fp, len(pos), recall),
        "p_at_r_ci": [float(low[1]), float(high[1])],
    }


class _Resampler:
    """Bootstrap replicates as counts over the k distinct positive scores, O(k + n_above) each: a
    negative below every positive never counts, so only the draws above the lowest one matter."""

    def __init__(self, pos, near, rand, w):
        self.values, self.pos_group = np.unique(pos, return_inverse=True)  # ascending
        self.n_pos = len(pos)
        self.near = _Stratum(near, self.values)
        self.rand = _Stratum(rand, self.values)
        self.w = w

    def draw(self, rng, recall) -> tuple[float, float]:
        n_pos = self.n_pos
        pos_w = np.bincount(
            self.pos_group[rng.integers(0, n_pos, n_pos)], minlength=len(self.values)
        )
        present = pos_w > 0
        tp = np.cumsum(pos_w[::-1])[::-1][present][::-1].astype(np.float64)  # descending thr
        fp = (self.near.draw(rng) + self.w * self.rand.draw(rng))[present][::-1]
        return (
            ap_from_counts(tp, fp, n_pos),
            precision_at_recall_from_counts(tp, fp, n_pos, recall),
        )


class _Stratum:
    """A negative stratum binned by the ascending distinct positive scores ``values``, resampled
    item by item (O(n_above)) or as multinomial bin counts (O(k)): one distribution."""

    ITEMS_PER_BIN = 16  # multinomial when n_above > 16 (k + 1): measured cheaper on this machine

    def __init__(self, scores, values):
        bins = np.searchsorted(values, np.sort(scores), side="right")
        self.above = bins[bins > 0]  # sorted, so these are the stratum's top items
        self.n, self.k = len(bins), len(values)
        self.by_bin = len(self.above) > self.ITEMS_PER_BIN * (self.k + 1)
        if self.by_bin:
            sizes = np.bincount(bins, minlength=self.k + 1)
            self.p = sizes / self.n

    def draw(self, rng) -> np.ndarray:
        """A resample's count of scores >= each value (float64, length k)."""
        if self.n == 0:
            return np.zeros(self.k)
        if self.by_bin:
            counts = rng.multinomial(self.n, self.p)
        else:
            n_above = len(self.above)
            m = rng.binomial(self.n, n_above / self.n)
            counts = np.bincount(
                self.above[rng.integers(0, n_above, m)] if m else self.above[:0],
                minlength=self.k + 1,
            )
        return np.cumsum(counts[:0:-1])[::-1].astype(np.float64)  # [j]: sum of bins j+1..k


def corrected_precision(
    tp: float, fp_near: float, fp_rand: float, *, near_marks=(0, 0), rand_marks=(0, 0), level=0.95
) -> dict:
    """Precision corrected by manual labels of putative false positives (paper eq. 14):
    ``{"precision", "ci", "imputed_precision", "p_near", "p_rand"}``. ``*_marks = (real_errors,
    marked)`` per stratum; each share of real errors gets a Jeffreys Beta posterior (unmarked:
    share 1), its interval widened to hold the point (Brown, Cai and DasGupta 2001)."""
    if tp < 0 or fp_near < 0 or fp_rand < 0:
        raise ValueError(
            f"counts must be non-negative, got tp={tp}, fp_near={fp_near}, fp_rand={fp_rand}"
        )
    rng, n_draws = np.random.default_rng(0), 20_000
    shares, draws = [], []
    for name, (errors, marked) in (("near_marks", near_marks), ("rand_marks", rand_marks)):
        if not 0 <= errors <= marked:
            raise ValueError(
                f"{name} must be (real_errors, marked) with 0 <= real_errors <= "
                f"marked, got {(errors, marked)!r}"
            )
        shares.append(errors / marked if marked else 1.0)
        draws.append(
            rng.beta(errors + 0.5, marked - errors + 0.5, n_draws) if marked else np.ones(n_draws)
        )
    if tp + fp_near + fp_rand == 0:
        raise ValueError("no pair above the threshold: precision is undefined")
    point = tp / (tp + shares[0] * fp_near + shares[1] * fp_rand)
    sampled = tp / (tp + draws[0] * fp_near + draws[1] * fp_rand)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(sampled, [tail, 100.0 - tail])
    low, high = min(low, point), max(high, point)  # the boundary rule (see the docstring)
    return {
        "precision": float(point),
        "ci": [float(low), float(high)],
        "imputed_precision": float(tp / (tp + fp_near + fp_rand)),
        "p_near": shares[0],
        "p_rand": shares[1],
    }


def _curve(pos, near, rand, w):
    """Distinct positive scores (descending) with TP and estimated FP at each."""
    pos_sorted = np.sort(pos)
    thresholds = np.unique(pos_sorted)[::-1]
    tp = count_at_least(pos_sorted, thresholds)
    fp = count_at_least(np.sort(near), thresholds) + w * count_at_least(np.sort(rand), thresholds)
    return thresholds, tp, fp


def count_at_least(sorted_values: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    below = np.searchsorted(sorted_values, thresholds, side="left")
    return (len(sorted_values) - below).astype(np.float64)


def _validate(pos, near, rand, n_neg_total):
    pos = as_scores("pos_scores", pos)
    near = as_scores("near_neg_scores", near)
    rand = as_scores("rand_neg_scores", rand)
    if len(pos) == 0:
        raise ValueError("pos_scores is empty: precision and recall need at least one positive")
    return pos, near, rand, _rand_weight(len(near), len(rand), n_neg_total)


def as_scores(name: str, values) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of scores, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"{name} has {int(bad.sum())} NaN or infinite score(s), first at index "
            f"{int(np.flatnonzero(bad)[0])}: every score must be a finite number "
            "(a diverged model, or a scorer dividing by zero?)"
        )
    return arr


def _rand_weight(n_near: int, n_rand: int, n_neg_total) -> float:
    """Weight of one random negative: (n_neg_total - |D_near|) / |D_rand|."""
    if isinstance(n_neg_total, bool) or not isinstance(n_neg_total, (int, np.integer)):
        raise ValueError(f"n_neg_total must be an integer count of negatives, got {n_neg_total!r}")
    rest = int(n_neg_total) - n_near
    if rest < 0:
        raise ValueError(f"n_neg_total={n_neg_total} is smaller than the {n_near} near negatives")
    if n_rand > rest:
        raise ValueError(f"{n_rand} random negatives but only {rest} negatives lie outside D_near")
    if n_rand == 0:
        if rest > 0:
            raise ValueError(
                f"rand_neg_scores is empty but {rest} negatives lie outside D_near: "
                "their false positives cannot be estimated"
            )
        return 0.0
    return rest / n_rand
