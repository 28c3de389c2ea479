"""The strategy contract: a :class:`Strategy` chooses ``n`` unlabelled pair ids from what a
:class:`RoundState` shows it (small-text's ``QueryStrategy.query``, on pairs)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np

from ..data.loaders import Pool
from ..params import Configurable

__all__ = ["RoundState", "Strategy"]


def _no_timing(stage: str):
    return nullcontext()


@dataclass(frozen=True, eq=False)
class RoundState:
    """What a strategy may look at when choosing round ``round``'s batch."""

    round: int  # 1-based
    pool: Pool
    labelled: np.ndarray  # (n_labelled,) int64 sorted ids labelled in earlier rounds
    budget: int  # total labels of the run (all rounds)
    rng: np.random.Generator  # seeded by the run's seed and the round
    candidates: np.ndarray = field(
        default_factory=lambda: np.empty(0, np.int64)
    )  # sorted, unlabelled
    cosine: np.ndarray = field(
        default_factory=lambda: np.empty(0)
    )  # (n_candidates,) selection model
    logits: np.ndarray | None = (
        None  # (n_candidates,) calibrated; None under the pretrained encoder
    )
    model: object = None  # the model trained so far (a CosineBERT); None before the first training
    pretrained_cosine: Callable | None = None  # pair ids -> cosine under the pretrained encoder
    embeddings: Callable | None = (
        None  # model or None (pretrained) -> (left, right) item embeddings
    )
    stage: Callable = _no_timing  # stage name -> context manager timing that stage
    observe: Callable | None = None  # called with the restricted state a wrapper hands on
    labels: np.ndarray | None = None  # (n_labelled,) int8 the annotator's answers (-1: none)
    train: Callable | None = (
        None  # (ids, labels, member) -> a model trained as the loop's (committees)
    )
    held_out: np.ndarray = field(
        default_factory=lambda: np.empty(0, np.int64)
    )  # sorted ids no strategy may pick: a session's audit pairs, never trained on

    @property
    def unavailable(self) -> np.ndarray:
        """The sorted ids a batch may not hold: the labelled pairs and the held-out ones."""
        return np.union1d(self.labelled, self.held_out) if len(self.held_out) else self.labelled


class Strategy(Configurable):
    """Chooses ``n`` unlabelled pairs; subclasses set ``name`` and implement ``select``."""

    name = "strategy"
    adaptive = False  # True: selects with the model trained on the labels so far

    def select(self, state: RoundState, n: int) -> np.ndarray:
        """(n,) int64 pair ids, distinct and not in ``state.labelled``."""
        raise NotImplementedError
