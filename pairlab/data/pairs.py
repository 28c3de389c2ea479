"""Pair ids: int64 codes for the pairs of a pool, and sorted-array set operations on them.

A pool is never materialised: its pairs are the dense range ``[0, n_pairs)``, ``i * n_right +
j`` when asymmetric, ``j * (j - 1) // 2 + i`` (``i < j``: one code per unordered pair, no self
pairs) when symmetric. A uniform random pair is a uniform random integer, and a set of pairs a
sorted int64 array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "of_matched_records",
    "PairSpace",
    "as_id_set",
    "check_id_set",
    "isin_sorted",
    "setdiff_sorted",
    "union_sorted",
]

# Above this many candidate codes the complement is not enumerated when sampling.
_ENUMERATE_LIMIT = 20_000_000


@dataclass(frozen=True)
class PairSpace:
    """The pairs of ``n_left`` x ``n_right`` items; symmetric pools have ``n_left == n_right``."""

    n_left: int
    n_right: int
    symmetric: bool

    def __post_init__(self):
        for name, value in (("n_left", self.n_left), ("n_right", self.n_right)):
            if not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if self.symmetric and self.n_left != self.n_right:
            raise ValueError(
                f"a symmetric pool has one item set: n_left={self.n_left} != n_right={self.n_right}"
            )
        if self.n_left * self.n_right >= 2**63:  # codes and j * (j - 1) must fit in int64
            raise ValueError(f"pool of {self.n_left} x {self.n_right} items overflows int64 codes")

    @property
    def n_pairs(self) -> int:
        """Number of distinct pairs (unordered, without self pairs, when symmetric)."""
        if self.symmetric:
            return self.n_left * (self.n_left - 1) // 2
        return self.n_left * self.n_right

    def encode(self, left, right) -> np.ndarray:
        """Codes of the pairs ``(left[k], right[k])``; int64 arrays of equal shape in, int64 out.
        Symmetric pools accept either order and reject self pairs."""
        left = np.asarray(left, dtype=np.int64)
        right = np.asarray(right, dtype=np.int64)
        if left.shape != right.shape:
            raise ValueError(f"left and right differ in shape: {left.shape} vs {right.shape}")
        _check_range("left", left, self.n_left)
        _check_range("right", right, self.n_right)
        if not self.symmetric:
            return left * self.n_right + right
        if np.any(left == right):
            bad = int(left[left == right][0])
            raise ValueError(f"self pair ({bad}, {bad}) in a symmetric pool")
        i, j = np.minimum(left, right), np.maximum(left, right)
        return j * (j - 1) // 2 + i

    def decode(self, codes) -> tuple[np.ndarray, np.ndarray]:
        """Item indices ``(left, right)`` of each code; symmetric pools give ``left < right``."""
        codes = np.asarray(codes, dtype=np.int64)
        self.check(codes)
        if not self.symmetric:
            return codes // self.n_right, codes % self.n_right
        j = np.floor((1.0 + np.sqrt(1.0 + 8.0 * codes.astype(np.float64))) / 2.0).astype(np.int64)
        # float rounding can put j one off for very large codes: correct it exactly in integers
        j -= (j * (j - 1) // 2 > codes).astype(np.int64)
        j += ((j + 1) * j // 2 <= codes).astype(np.int64)
        return codes - j * (j - 1) // 2, j

    def check(self, codes: np.ndarray) -> None:
        """Raise ``ValueError`` if any code is outside ``[0, n_pairs)``."""
        _check_range("pair id", codes, self.n_pairs)

    def sample(self, n: int, rng: np.random.Generator, *, exclude=None) -> np.ndarray:
        """``n`` distinct codes drawn uniformly from the pool minus ``exclude``; sorted int64."""
        exclude = as_id_set(exclude if exclude is not None else [])
        return sample_range(self.n_pairs, n, rng, exclude=exclude)


def sample_range(size: int, n: int, rng: np.random.Generator, *, exclude: np.ndarray) -> np.ndarray:
    """``n`` distinct integers uniform on ``[0, size)`` minus the sorted set ``exclude``."""
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"sample size must be a non-negative integer, got {n!r}")
    exclude = exclude[(exclude >= 0) & (exclude < size)]
    available = size - len(exclude)
    if n > available:
        raise ValueError(f"cannot draw {n} distinct pairs: only {available} are available")
    if size <= _ENUMERATE_LIMIT or available <= 4 * n:
        if size > 4 * _ENUMERATE_LIMIT:
            raise ValueError(
                f"drawing {n} of the {available} available pairs of a {size}-pair pool would "
                "enumerate it; draw fewer"
            )
        complement = setdiff_sorted(np.arange(size, dtype=np.int64), exclude)
        return np.sort(rng.choice(complement, size=n, replace=False))
    # Rejection sampling: a uniform set of distinct values, then a uniform subset of it.
    chosen = np.empty(0, dtype=np.int64)
    while len(chosen) < n:
        need = n - len(chosen)
        draw = rng.integers(0, size, size=int(need * 1.1) + 16, dtype=np.int64)
        chosen = setdiff_sorted(np.union1d(chosen, draw), exclude)
    if len(chosen) > n:
        chosen = np.sort(rng.choice(chosen, size=n, replace=False))
    return chosen


def as_id_set(ids) -> np.ndarray:
    """Sorted, de-duplicated int64 array of pair ids."""
    arr = np.asarray(ids)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"pair ids must be integers, got dtype {arr.dtype}")
    return np.unique(arr.astype(np.int64, copy=False).ravel())


def check_id_set(name: str, ids) -> np.ndarray:
    """``ids`` as a 1-d int64 array, checked to be a set of pair ids: sorted and distinct."""
    arr = np.asarray(ids)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(
            f"{name} must be a 1-d array of integer pair ids, got {arr.dtype} {arr.shape}"
        )
    if (np.diff(arr) <= 0).any():
        raise ValueError(f"{name} must be sorted, distinct pair ids (as_id_set makes them so)")
    return arr.astype(np.int64, copy=False)


def isin_sorted(values, sorted_set: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``values`` are in ``sorted_set`` (a sorted int64 array)."""
    values = np.asarray(values, dtype=np.int64)
    if len(sorted_set) == 0:
        return np.zeros(values.shape, dtype=bool)
    pos = np.searchsorted(sorted_set, values)
    pos = np.minimum(pos, len(sorted_set) - 1)
    return sorted_set[pos] == values


def setdiff_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elements of sorted set ``a`` not in sorted set ``b``."""
    return a[~isin_sorted(a, b)]


def union_sorted(*sets: np.ndarray) -> np.ndarray:
    """Sorted union of id sets."""
    if not sets:
        return np.empty(0, dtype=np.int64)
    return as_id_set(np.concatenate([np.asarray(s, dtype=np.int64) for s in sets]))


def of_matched_records(space, candidates, labelled, labels) -> np.ndarray:
    """(n_candidates,) bool: which sorted ``candidates`` hold a record of a pair ``labelled`` a
    match (``labels``: their answers; None: nothing known), on either side in one table."""
    candidates = np.asarray(candidates, np.int64)
    if labels is None or not len(candidates):
        return np.zeros(len(candidates), bool)
    matches = np.asarray(labelled, np.int64)[np.asarray(labels) == 1]
    if not len(matches):
        return np.zeros(len(candidates), bool)
    left, right = space.decode(matches)
    i, j = space.decode(candidates)
    if space.symmetric:
        records = np.unique(np.concatenate([left, right]))
        return isin_sorted(i, records) | isin_sorted(j, records)
    return isin_sorted(i, np.unique(left)) | isin_sorted(j, np.unique(right))


def _check_range(name: str, values: np.ndarray, upper: int) -> None:
    if values.size == 0:
        return
    low, high = int(values.min()), int(values.max())
    if low < 0 or high >= upper:
        bad = low if low < 0 else high
        raise ValueError(f"{name} {bad} is outside [0, {upper})")
