"""An audit sample over ALL pairs: score strata covering the pool, and stratified random draws.

At match rates of 1 in 10^4-10^5 a uniform sample holds no positive, so the pool is cut by the
model's score into strata of exact sizes: small, rich ones at the top (geometric by score rank),
huge, poor ones below. An audit draws uniformly from the *unlabelled* part of each stratum
(labelled pairs are a census). The pool is scored once, blockwise (sizes, and the ids of the
top strata); the huge strata are sampled by rejection. Boundaries lie in gaps between distinct
float64 scores, so block and per-pair arithmetic agree on each pair's stratum.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..data.pairs import PairSpace, check_id_set, isin_sorted, setdiff_sorted
from .audit_prior import allocate, expected_variance, rate_prior

__all__ = ["AuditStrata", "Audit", "PairCosine", "stratify", "draw_audit"]

_GAP = 1e-9  # a boundary sits in a gap at least this wide between distinct scores


class PairCosine:
    """Float64 cosine of unit-norm embeddings, by blocks of left rows or by pair ids."""

    def __init__(self, space: PairSpace, left, right=None):
        self.space = space
        self.left = _as_embeddings("left", left, space.n_left)
        one_side = right is None or space.symmetric
        self.right = self.left if one_side else _as_embeddings("right", right, space.n_right)
        if self.left.shape[1] != self.right.shape[1]:
            raise ValueError(
                f"left and right embeddings differ in dimension: "
                f"{self.left.shape[1]} vs {self.right.shape[1]}"
            )

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        i, j = self.space.decode(ids)
        return np.einsum("nd,nd->n", self.left[i], self.right[j])

    def blocks(self, elements: int):
        """Yields ``(pair_ids, scores)`` of every pair, a block of left rows at a time."""
        n_right = self.space.n_right
        step = max(1, elements // max(n_right, 1))
        for start in range(0, self.space.n_left, step):
            rows = np.arange(start, min(start + step, self.space.n_left))
            first = start + 1 if self.space.symmetric else 0  # no valid column before it
            sims = self.left[rows] @ self.right[first:].T  # (block, n_right - first)
            if self.space.symmetric:
                r, c = np.nonzero(np.arange(first, n_right)[None, :] > rows[:, None])
                yield self.space.encode(rows[r], c + first), sims[r, c]
            else:
                yield (rows[:, None] * n_right + np.arange(n_right)[None, :]).ravel(), sims.ravel()


@dataclass(frozen=True, eq=False)
class AuditStrata:
    """Score strata covering every pair: stratum ``h`` holds the pairs scoring in ``[lower[h],
    lower[h - 1])``. (H,) arrays: ``lower`` float64 descending (last -inf), ``sizes`` int64
    ``N_h``, ``prob_sums`` float64 (calibrated probabilities summed). Strata ``0..enumerated-1``
    keep their sorted ids at ``top_ids[top_offsets[h]:top_offsets[h + 1]]``."""

    space: PairSpace
    lower: np.ndarray
    sizes: np.ndarray
    prob_sums: np.ndarray
    enumerated: int
    top_ids: np.ndarray
    top_offsets: np.ndarray
    threshold: float | None
    scorer: PairCosine
    probability: Callable

    @property
    def n_strata(self) -> int:
        return len(self.sizes)

    @property
    def predicted(self) -> np.ndarray:
        """(H,) bool: the strata at or above the model's threshold (none without one)."""
        if self.threshold is None:
            return np.zeros(self.n_strata, dtype=bool)
        return self.lower >= self.threshold

    def stratum_of(self, ids) -> np.ndarray:
        """Stratum of each pair id (int64, like ``ids``)."""
        ids = np.asarray(ids, dtype=np.int64)
        self.space.check(ids)
        return _bin(self.scorer(ids), self.lower[:-1])

    def members(self, h: int) -> np.ndarray:
        """Sorted ids of an enumerated stratum's pairs."""
        if not 0 <= h < self.enumerated:
            raise ValueError(f"stratum {h} is not enumerated (strata 0..{self.enumerated - 1} are)")
        return self.top_ids[self.top_offsets[h] : self.top_offsets[h + 1]]


def stratify(
    space: PairSpace,
    left,
    right=None,
    *,
    probability: Callable,
    n_strata: int = 12,
    first: int = 100,
    max_enumerated: int = 1_000_000,
    threshold: float | None = None,
    n_sample: int = 200_000,
    block_elements: int = 4_000_000,
    seed: int = 0,
) -> AuditStrata:
    """Strata of every pair by the cosine of ``left`` (n_left, dim) and ``right`` embeddings.

    Boundaries fall at geometric score ranks ``first * ratio**k`` (``n_strata`` strata reach the
    whole pool), plus ``threshold`` (the model's decision score). ``probability`` maps float64
    cosines to calibrated match probabilities. The top ``~max_enumerated`` pairs are kept by id;
    lower boundaries come from the score quantiles of ``n_sample`` uniform pairs (``seed``);
    every size is counted exactly.
    """
    counts = dict(n_strata=n_strata, first=first, max_enumerated=max_enumerated, n_sample=n_sample)
    for name, value in {**counts, "block_elements": block_elements}.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if not callable(probability):
        raise TypeError(f"probability must map scores to probabilities, got {probability!r}")
    if threshold is not None and not np.isfinite(threshold):
        raise ValueError(f"threshold must be a finite score, got {threshold!r}")
    if space.n_pairs == 0:
        raise ValueError("the pool has no pairs to stratify")
    scorer = PairCosine(space, left, right)
    ranks = _geometric_ranks(space.n_pairs, first, n_strata)
    cut, below = _sample_cuts(scorer, ranks, max_enumerated, n_sample, seed)
    if threshold is not None and threshold < cut:
        below = np.union1d(below, [threshold])[::-1]
    bounds = np.r_[cut, below] if np.isfinite(cut) else below  # bin 0 is the enumerated region
    sizes, sums, top_ids, top_scores = _stream(scorer, bounds, cut, probability, block_elements)
    order = np.argsort(-top_scores, kind="stable")
    top_ids, top_scores = top_ids[order], top_scores[order]
    upper = _rank_cuts(top_scores, ranks[ranks < len(top_scores)])
    if threshold is not None and threshold >= cut:
        upper = np.union1d(upper, [threshold])[::-1]
    top_bin = _bin(top_scores, upper)
    n_top = len(upper) + 1
    top_sizes = np.bincount(top_bin, minlength=n_top)
    top_sums = np.bincount(
        top_bin, weights=_probabilities(probability, top_scores), minlength=n_top
    )
    if np.isfinite(cut):  # streamed strata below the enumerated ones: bins 1.. of the stream
        lower = np.r_[upper, cut, below, -np.inf]
        sizes, sums = np.r_[top_sizes, sizes[1:]], np.r_[top_sums, sums[1:]]
    else:  # every pair enumerated
        lower, sizes, sums = np.r_[upper, -np.inf], top_sizes, top_sums
    by_stratum = np.lexsort((top_ids, top_bin))
    return AuditStrata(
        space,
        lower.astype(np.float64),
        sizes.astype(np.int64),
        sums,
        n_top,
        top_ids[by_stratum],
        np.r_[0, np.cumsum(top_sizes)].astype(np.int64),
        threshold,
        scorer,
        probability,
    )


@dataclass(frozen=True, eq=False)
class Audit:
    """One round's audit: the drawn ``ids`` (int64 (n,), grouped by stratum) and their
    ``stratum``; per stratum (H,) at draw time: ``sizes`` N_h, ``unlabelled`` M_h (the frame),
    ``known`` (labelled positives), ``rates`` (mean calibrated probability of the unlabelled),
    ``predicted`` (at or above the threshold); ``prior``, ``strength``, ``max_positives`` name
    the rate prior; ``design_variance`` (expected posterior variance of the total at draw time)
    weighs the round when rounds combine."""

    ids: np.ndarray
    stratum: np.ndarray
    sizes: np.ndarray
    unlabelled: np.ndarray
    known: np.ndarray
    rates: np.ndarray
    predicted: np.ndarray
    prior: str
    strength: float
    design_variance: float
    max_positives: float | None = None

    @property
    def allocation(self) -> np.ndarray:
        return np.bincount(self.stratum, minlength=len(self.sizes)).astype(np.int64)

    @classmethod
    def planned(
        cls, n, sizes, unlabelled, known, rates, predicted, *, prior, strength, floor, max_positives
    ) -> Audit:
        """The audit of ``n`` pairs over strata given per stratum (H,) that ``prior`` plans
        (:func:`.audit_prior.allocate`); its ``ids`` are placeholders ``0..n-1`` until drawn."""
        bound = None if max_positives is None else float(max_positives)
        options = dict(prior=prior, strength=strength, sizes=unlabelled, max_positives=bound)
        belief = rate_prior(rates, **options)
        linear = {k: getattr(belief, k) for k in ("deviation_var", "shared", "shared_var")}
        alloc = allocate(unlabelled, belief.centre, n, floor=floor, **linear)
        return cls(
            np.arange(alloc.sum(), dtype=np.int64),
            np.repeat(np.arange(len(sizes)), alloc),
            np.array(sizes, np.int64),  # a copy: the strata's own stay as they are
            np.asarray(unlabelled, np.int64),
            np.asarray(known, np.int64),
            np.asarray(rates, np.float64),
            np.asarray(predicted, bool),
            prior,
            float(strength),
            expected_variance(alloc, unlabelled, belief.centre, **linear),
            bound,
        )


def draw_audit(
    strata: AuditStrata,
    n: int,
    labelled=None,
    labels=None,
    *,
    seed=0,
    prior: str = "recalibrated",
    strength: float = 1.0,
    floor: int = 1,
    max_positives: float | None = None,
) -> Audit:
    """An audit of ``n`` pairs: ``n_h`` (:meth:`Audit.planned` under ``prior``) drawn
    uniformly without replacement from each stratum's pairs not in ``labelled`` (sorted int64 ids
    with 0/1 ``labels``), at least ``floor`` a stratum. ``seed``: an int or a Generator."""
    labelled, labels = _labelled(strata.space, labelled, labels)
    rng = np.random.default_rng(seed)
    h_lab = strata.stratum_of(labelled)
    n_strata = strata.n_strata
    unlabelled = strata.sizes - np.bincount(h_lab, minlength=n_strata)
    known = np.bincount(h_lab, weights=labels, minlength=n_strata).astype(np.int64)
    p_lab = _probabilities(strata.probability, strata.scorer(labelled))
    lab_sums = np.bincount(h_lab, weights=p_lab, minlength=n_strata)
    rates = np.where(
        unlabelled > 0,
        np.maximum(strata.prob_sums - lab_sums, 0.0) / np.maximum(unlabelled, 1),
        0.5,
    )
    options = dict(prior=prior, strength=strength, floor=floor, max_positives=max_positives)
    audit = Audit.planned(n, strata.sizes, unlabelled, known, rates, strata.predicted, **options)
    alloc, ids = audit.allocation, []
    for h in range(strata.enumerated):  # a uniform draw from each enumerated frame
        frame = setdiff_sorted(strata.members(h), labelled)
        ids.append(np.sort(rng.choice(frame, alloc[h], replace=False)) if alloc[h] else frame[:0])
    ids += _draw_by_rejection(strata, alloc, labelled, rng)
    return replace(audit, ids=np.concatenate(ids).astype(np.int64))


def _draw_by_rejection(strata: AuditStrata, alloc, labelled, rng) -> list:
    """Uniform pairs until each streamed stratum has its quota: the first ``n_h`` distinct,
    unlabelled draws landing in stratum h are a uniform sample of it without replacement."""
    first = strata.enumerated
    need = alloc[first:].copy()
    share = strata.sizes[first:] / strata.space.n_pairs  # chance a uniform pair lands in each
    got = [np.empty(0, dtype=np.int64) for _ in need]
    drawn, limit = 0, 1000 * (int(need.sum()) + 1) / max(share.min(initial=1.0), 1e-12)
    while need.sum() > 0:
        if drawn > limit:
            raise RuntimeError(
                f"rejection sampling drew {drawn} pairs without filling the strata "
                f"(still needed: {need.tolist()})"
            )
        # enough draws to fill the neediest stratum, on average, with some to spare
        batch = int(min(1 << 16, 1.5 * np.max(need / np.maximum(share, 1e-12), initial=0) + 64))
        ids = rng.integers(0, strata.space.n_pairs, size=batch, dtype=np.int64)
        drawn += batch
        _, first_seen = np.unique(ids, return_index=True)
        ids = ids[np.sort(first_seen)]  # distinct, in draw order
        ids = ids[~isin_sorted(ids, labelled)]
        h = strata.stratum_of(ids) - first
        for k in np.flatnonzero(need > 0):
            new = ids[h == k]
            new = new[~isin_sorted(new, np.sort(got[k]))][: need[k]]
            got[k] = np.r_[got[k], new]
            need[k] -= len(new)
    return [np.sort(g) for g in got]


def _stream(scorer, bounds, cut, probability, elements):
    """Exact sizes and probability sums per bin of ``bounds``, and the pairs scoring >= cut."""
    n_bins = len(bounds) + 1
    sizes, sums = np.zeros(n_bins, dtype=np.int64), np.zeros(n_bins)
    keep_ids, keep_scores = [], []
    for ids, scores in scorer.blocks(elements):
        b = _bin(scores, bounds)
        sizes += np.bincount(b, minlength=n_bins)
        sums += np.bincount(b, weights=_probabilities(probability, scores), minlength=n_bins)
        top = scores >= cut
        keep_ids.append(ids[top])
        keep_scores.append(scores[top])
    return sizes, sums, np.concatenate(keep_ids), np.concatenate(keep_scores)


def _sample_cuts(scorer, ranks, max_enumerated, n_sample, seed):
    """The enumeration cut and the boundaries below it, from uniform pairs' score quantiles."""
    n_pairs = scorer.space.n_pairs
    if n_pairs <= max_enumerated:
        return -np.inf, np.empty(0)
    n_sample = min(n_pairs, max(n_sample, 50 * n_pairs // max_enumerated))
    ids = scorer.space.sample(n_sample, np.random.default_rng(seed))
    scores = np.sort(scorer(ids))[::-1]
    cut = _rank_cuts(scores, [max_enumerated * n_sample / n_pairs])
    if len(cut) == 0:  # no gap in the sample below that rank (all tied): enumerate every pair
        return -np.inf, np.empty(0)
    below = _rank_cuts(scores, ranks[ranks > max_enumerated] * n_sample / n_pairs)
    return cut[0], below[below < cut[0] - _GAP]


def _geometric_ranks(n_pairs, first, n_strata) -> np.ndarray:
    if n_strata == 1 or n_pairs <= first:
        return np.empty(0, dtype=np.int64)
    ratio = (n_pairs / first) ** (1.0 / (n_strata - 1))
    ranks = np.unique(np.round(first * ratio ** np.arange(n_strata - 1)).astype(np.int64))
    return ranks[ranks < n_pairs]


def _rank_cuts(desc_scores, ranks) -> np.ndarray:
    """Boundaries (descending) below the first ``r`` scores for each rank r, each moved down
    to the next gap wider than ``_GAP`` (ties stay together)."""
    gaps = np.flatnonzero(desc_scores[:-1] - desc_scores[1:] > _GAP)  # gap after index g
    # a rank may be fractional (a sample's rank): the gap at or after ceil(r) - 1
    k = np.searchsorted(gaps, np.ceil(np.asarray(ranks, np.float64)).astype(np.int64) - 1)
    g = gaps[k[k < len(gaps)]]
    return np.unique((desc_scores[g] + desc_scores[g + 1]) / 2.0)[::-1]


def _bin(scores, bounds) -> np.ndarray:
    """Index of the first descending bound each score reaches (len(bounds) when none)."""
    return len(bounds) - np.searchsorted(np.asarray(bounds)[::-1], scores, side="right")


def _probabilities(probability, scores) -> np.ndarray:
    p = np.asarray(probability(scores), dtype=np.float64)
    if p.shape != np.shape(scores) or not np.all((p >= 0) & (p <= 1)):
        raise ValueError("probability(scores) must return one probability in [0, 1] per score")
    return p


def _labelled(space, labelled, labels):
    ids = check_id_set("labelled", [] if labelled is None else labelled)
    y = np.asarray([] if labels is None else labels, np.float64)
    if y.shape != ids.shape:
        raise ValueError(f"labelled and labels must be of equal length, got {ids.shape}, {y.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    space.check(ids)
    return ids, y


def _as_embeddings(name, values, n) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 2 or len(arr) != n:
        raise ValueError(f"{name} embeddings must be ({n}, dim), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} embeddings contain NaN or infinite values")
    return arr
