"""A trained model as annotator: a cross-encoder's scores, thresholded (Augmented SBERT's silver
labels, asked through the annotator contract)."""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

from ..data.loaders import Pool
from .base import Annotator, check_pair_ids

__all__ = ["ModelAnnotator"]


class ModelAnnotator(Annotator):
    """Positive when ``score(pool, ids)`` ((n,) float, e.g. a ConcatBERT's logits) is at least
    ``threshold``; a NaN score is an error, never a label."""

    name = "model"

    def __init__(self, score: Callable[[Pool, np.ndarray], np.ndarray], threshold: float):
        if not callable(score):
            raise TypeError(
                f"score must be callable as score(pool, ids), got {type(score).__name__}"
            )
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, numbers.Real)
            or not np.isfinite(threshold)
        ):
            raise ValueError(f"threshold must be a finite number, got {threshold!r}")
        self.score, self.threshold = score, float(threshold)

    def annotate(self, pool: Pool, pair_ids) -> np.ndarray:
        """(n,) int8: 1 where the score of ``pair_ids`` ((n,) int64) reaches the threshold."""
        ids = check_pair_ids(pool, pair_ids)
        scores = np.asarray(self.score(pool, ids), dtype=np.float64)
        if scores.shape != ids.shape:
            raise ValueError(f"score returned shape {scores.shape} for {ids.shape} pair ids")
        n_nan = int(np.isnan(scores).sum())
        if n_nan:
            raise ValueError(
                f"score returned {n_nan} NaN scores of {len(scores)}: "
                "the model cannot label those pairs"
            )
        return (scores >= self.threshold).astype(np.int8)

    def params(self) -> dict:
        return {
            "score": getattr(self.score, "__qualname__", repr(self.score)),
            "threshold": self.threshold,
        }
