"""Simulated annotators: the pool's imputed labels (:class:`Oracle`), flipped at fixed class
rates (:class:`NoisyOracle`) or at a rate set by the base model's error
(:class:`ErrorDependentOracle`, Bansal and Sharma 2023, Appendix B).

Noise is a pure function of ``(seed, pair_id)`` (splitmix64): a pair gets the same answer in
any batch. The paper prints no accuracy per base-error bin (Fig. 3 plots it): pass your own.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..data.loaders import Pool
from .base import Annotator, check_pair_ids

__all__ = ["Oracle", "NoisyOracle", "ErrorDependentOracle", "pair_uniform"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


class Oracle(Annotator):
    """The pool's imputed labels: the exact answer to every request."""

    name = "oracle"

    def annotate(self, pool: Pool, pair_ids) -> np.ndarray:
        """(n,) int8 imputed labels of ``pair_ids`` ((n,) int64)."""
        return pool.labels(check_pair_ids(pool, pair_ids))


class NoisyOracle(Annotator):
    """The oracle with positives flipped to 0 at rate ``flip_positive`` and negatives flipped to
    1 at rate ``flip_negative``; reproducible per pair under ``seed``."""

    name = "noisy_oracle"

    def __init__(self, *, flip_positive: float = 0.0, flip_negative: float = 0.0, seed: int = 0):
        self.flip_positive = _check_rate("flip_positive", flip_positive)
        self.flip_negative = _check_rate("flip_negative", flip_negative)
        self.seed = _check_seed(seed)

    def annotate(self, pool: Pool, pair_ids) -> np.ndarray:
        """(n,) int8 noisy labels of ``pair_ids`` ((n,) int64)."""
        ids = check_pair_ids(pool, pair_ids)
        truth = pool.labels(ids)
        rate = np.where(truth == 1, self.flip_positive, self.flip_negative)
        return _flip(truth, pair_uniform(ids, self.seed) < rate)


class ErrorDependentOracle(Annotator):
    """The oracle, right with probability ``accuracy[bin]`` ((q,) in [0, 1]) in the pair's bin of
    base-model error cut at ``edges`` ((q - 1,) increasing, fixed); ``base_error`` is
    ``f(pool, ids) -> (n,) float`` or an array of errors indexed by pair id."""

    name = "error_dependent_oracle"

    def __init__(self, base_error, accuracy, edges, *, seed: int = 0):
        self.accuracy = _check_accuracy(accuracy)
        self.edges = _check_edges(edges, len(self.accuracy))
        if not callable(base_error):
            base_error = _check_errors(np.asarray(base_error, dtype=np.float64), "base_error")
        self.base_error = base_error
        self.seed = _check_seed(seed)

    def annotate(self, pool: Pool, pair_ids) -> np.ndarray:
        """(n,) int8 noisy labels of ``pair_ids`` ((n,) int64)."""
        ids = check_pair_ids(pool, pair_ids)
        if not callable(self.base_error):
            if len(self.base_error) < pool.n_pairs:
                raise ValueError(
                    f"base_error holds {len(self.base_error)} errors but the pool has "
                    f"{pool.n_pairs} pairs"
                )
            errors = self.base_error[ids]
        else:
            errors = np.asarray(self.base_error(pool, ids), dtype=np.float64)
            if errors.shape != ids.shape:
                raise ValueError(f"base_error returned shape {errors.shape}, expected {ids.shape}")
            _check_errors(errors, "base_error(pool, ids)")
        bins = np.searchsorted(self.edges, errors, side="right")  # (n,)
        return _flip(pool.labels(ids), pair_uniform(ids, self.seed) < 1.0 - self.accuracy[bins])

    def params(self) -> dict:
        return {"accuracy": self.accuracy.tolist(), "edges": self.edges.tolist(), "seed": self.seed}


def pair_uniform(pair_ids, seed: int) -> np.ndarray:
    """(n,) float64 uniform on [0, 1), a pure function of each (seed, pair id)."""
    ids = np.asarray(pair_ids, dtype=np.int64).astype(np.uint64)
    key = _splitmix64(np.array([_check_seed(seed)], dtype=np.uint64))  # (1,) seed scrambled first
    bits = _splitmix64(ids ^ key)  # (n,) uint64
    return (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        return z ^ (z >> np.uint64(31))


def _flip(truth: np.ndarray, flip: np.ndarray) -> np.ndarray:
    return np.where(flip, 1 - truth, truth).astype(np.int8)


def _check_rate(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    return int(seed)


def _check_accuracy(accuracy) -> np.ndarray:
    values = np.asarray(accuracy, dtype=np.float64)
    if values.ndim != 1 or len(values) == 0:
        raise ValueError(f"accuracy must be a non-empty 1-D table, got shape {values.shape}")
    if not np.all((values >= 0.0) & (values <= 1.0)):  # False for NaN too
        raise ValueError(f"accuracy values must lie in [0, 1], got {values.tolist()}")
    return values


def _check_edges(edges, n_bins: int) -> np.ndarray:
    values = np.asarray(edges, dtype=np.float64).reshape(-1)
    if len(values) != n_bins - 1:
        raise ValueError(f"{n_bins} accuracy bins need {n_bins - 1} edges, got {len(values)}")
    if not np.isfinite(values).all() or np.any(np.diff(values) < 0):
        raise ValueError(f"edges must be finite and non-decreasing, got {values.tolist()}")
    return values


def _check_errors(errors: np.ndarray, name: str) -> np.ndarray:
    if errors.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {errors.shape}")
    n_nan = int(np.isnan(errors).sum())
    if n_nan:
        raise ValueError(f"{name} has {n_nan} NaN errors of {len(errors)}")
    return errors
