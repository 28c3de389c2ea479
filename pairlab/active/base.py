"""The strategy contract: a :class:`Strategy` chooses ``n`` unlabelled pair ids from the plain
data of a :class:`RoundState` (small-text's ``QueryStrategy.query``, on pairs). A strategy reads
arrays and returns ids: it never calls back into the loop, which embeds, searches, trains any
committee and times each stage itself."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data.loaders import Pool
from ..params import Configurable

__all__ = ["RoundState", "Strategy", "READS"]

READS = ("base_cosine", "member_logits")  # what a criterion may ask the loop for beyond the rest


def _no_ids():
    return np.empty(0, np.int64)


@dataclass(frozen=True, eq=False)
class RoundState:
    """What a strategy may look at when choosing round ``round``'s batch: arrays, no callables."""

    round: int  # 1-based
    pool: Pool
    labelled: np.ndarray  # (n_labelled,) int64 sorted ids labelled in earlier rounds
    budget: int  # total labels of the run (all rounds)
    rng: np.random.Generator  # seeded by the run's seed and the round
    labels: np.ndarray | None = None  # (n_labelled,) int8 the annotator's answers (-1: none)
    held_out: np.ndarray = field(default_factory=_no_ids)  # sorted ids no batch may hold
    # over candidates (a CandidateSearch's criterion); empty for a whole-pool strategy
    candidates: np.ndarray = field(default_factory=_no_ids)  # (n_candidates,) sorted, unlabelled
    cosine: np.ndarray = field(default_factory=lambda: np.empty(0))  # (n_candidates,) float64
    logits: np.ndarray | None = None  # (n_candidates,) calibrated; None: pretrained encoder
    model: object = None  # the selection model (None: the pretrained encoder)
    embeddings: tuple | None = None  # (left, right) float32 item embeddings under ``model``
    base_cosine: np.ndarray | None = None  # (n_candidates,) pretrained cosine, if read
    member_logits: np.ndarray | None = None  # (members, n_candidates) a committee's, if read

    @property
    def unavailable(self) -> np.ndarray:
        """The sorted ids a batch may not hold: the labelled pairs and the held-out ones."""
        return np.union1d(self.labelled, self.held_out) if len(self.held_out) else self.labelled


class Strategy(Configurable):
    """Chooses ``n`` unlabelled pairs; subclasses set ``name`` and implement ``select``.
    ``reads`` names what it needs beyond the candidates, their cosines and logits
    (:data:`READS`; one reading ``member_logits`` says its committee's ``members`` and ``share``)."""

    name = "strategy"
    adaptive = False  # True: selects with the model trained on the labels so far
    reads: tuple = ()

    @property
    def criterion(self) -> Strategy:
        """The strategy that ranks, inside any wrapper: what the loop reads ``reads`` from."""
        return self

    def select(self, state: RoundState, n: int) -> np.ndarray:
        """(n,) int64 pair ids, distinct and not in ``state.unavailable``."""
        raise NotImplementedError
