"""The annotator contract: who answers a label request. An :class:`Annotator` returns one label
per requested pair: 1 (similar), 0 (not similar) or :data:`NO_ANSWER` (-1), never a silent 0."""

from __future__ import annotations

import numpy as np

from ..data.loaders import Pool
from ..params import Configurable

__all__ = ["Annotator", "NO_ANSWER", "check_pair_ids"]

NO_ANSWER = -1  # the annotator gave no usable answer for this pair


class Annotator(Configurable):
    """Answers label requests; subclasses set ``name`` and implement ``annotate``. The loop asks
    four things besides, whose defaults are an oracle's."""

    name = "annotator"

    def annotate(self, pool: Pool, pair_ids) -> np.ndarray:
        """(n,) int8 labels (1, 0 or NO_ANSWER) of ``pair_ids``: (n,) int64 ids of ``pool``."""
        raise NotImplementedError

    def held_out(self) -> np.ndarray:
        """Sorted int64 pair ids no batch may hold (a session's audit pairs); none by default."""
        return np.empty(0, np.int64)

    def start_round(self, round: int, state, batch) -> None:
        """Told round ``round``'s :class:`~pairlab.active.strategies.RoundState` and its ``batch``
        before :meth:`annotate` (a session posts its pairs then); nothing by default."""

    def answered_beyond(self, labelled) -> tuple[np.ndarray, np.ndarray]:
        """Pairs answered outside ``labelled`` (sorted int64) and their int8 labels, which count
        as the round's (a person's spare pairs); none by default."""
        return np.empty(0, np.int64), np.empty(0, np.int8)

    @property
    def usage(self) -> dict:
        """Counts of what answering has spent so far (requests, tokens, cost); none by default."""
        return {}


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
