"""The annotator contract: who answers a label request. An :class:`Annotator` returns one label
per requested pair: 1 (similar), 0 (not similar) or :data:`NO_ANSWER` (-1), never a silent 0."""

from __future__ import annotations

import numpy as np

from ..data.loaders import Pool
from ..params import Configurable

__all__ = ["Annotator", "NO_ANSWER", "check_pair_ids"]

NO_ANSWER = -1  # the annotator gave no usable answer for this pair


class Annotator(Configurable):
    """Answers label requests; subclasses set ``name`` and implement ``annotate``."""

    name = "annotator"

    def annotate(self, pool: Pool, pair_ids) -> np.ndarray:
        """(n,) int8 labels (1, 0 or NO_ANSWER) of ``pair_ids``: (n,) int64 ids of ``pool``."""
        raise NotImplementedError


def check_pair_ids(pool: Pool, pair_ids) -> np.ndarray:
    """``pair_ids`` as a (n,) int64 array of valid ids of ``pool``; raises ValueError otherwise."""
    ids = np.asarray(pair_ids)
    if ids.ndim != 1:
        raise ValueError(f"pair_ids must be one-dimensional, got shape {ids.shape}")
    if ids.size and not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"pair_ids must be integers, got dtype {ids.dtype}")
    ids = ids.astype(np.int64, copy=False)
    pool.space.check(ids)
    return ids
