"""Which pairs to label next: one small class per criterion, one ``select`` method.

The round loop (:mod:`pairlab.active`) hands every strategy a :class:`RoundState`: the pool, the
sorted ids already labelled, and the candidate pairs ``D_close`` that nearest-neighbour search
found under the selection model (unlabelled, with their cosines and, once a model is trained,
calibrated logits). A strategy returns ``n`` distinct unlabelled pair ids; the loop checks that.
Candidate search restricts the pool for every strategy that wants it; a strategy that looks
elsewhere (random over the whole pool, the stated data, oracle strata) simply ignores it.

``adaptive`` says whether the strategy wants the model trained on the labels so far
(uncertainty, adaptive retrieval) or the pretrained encoder (static retrieval, and every
strategy's seed round). New strategies (committee disagreement, diversity, base-vs-finetuned
deviation) subclass :class:`Strategy`; ``state.model`` and ``state.pretrained_cosine`` give them
what they need without touching the loop.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .data import Pool
from .pairs import as_id_set, isin_sorted, sample_range, setdiff_sorted

__all__ = ["RoundState", "Strategy", "Random", "StaticRetrieval", "AdaptiveRetrieval",
           "Uncertainty", "RandomCandidates", "Stated", "StratifiedMatch", "StratifiedAllPositives", "STRATEGIES",
           "make_strategy"]


@dataclass(frozen=True, eq=False)
class RoundState:
    """What a strategy may look at when choosing round ``round``'s batch."""

    round: int  # 1-based
    pool: Pool
    labelled: np.ndarray  # (n_labelled,) int64 sorted ids labelled in earlier rounds
    budget: int  # total labels of the run (all rounds)
    rng: np.random.Generator  # seeded by the run's seed and the round
    candidates: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # sorted, unlabelled
    cosine: np.ndarray = field(default_factory=lambda: np.empty(0))  # (n_candidates,) selection model
    logits: np.ndarray | None = None  # (n_candidates,) calibrated; None under the pretrained encoder
    model: object = None  # the selection model (a CosineBERT), None when pretrained
    pretrained_cosine: Callable | None = None  # pair ids -> cosine under the pretrained encoder


class Strategy:
    """Chooses ``n`` unlabelled pairs; subclasses set ``name`` and implement ``select``."""

    name = "strategy"
    adaptive = False  # True: select with the model trained on the labels so far
    uses_candidates = True  # False: the loop skips the neighbour search for it

    def select(self, state: RoundState, n: int) -> np.ndarray:
        """(n,) int64 pair ids, distinct and not in ``state.labelled``."""
        raise NotImplementedError

    def params(self) -> dict:
        """Constructor arguments, recorded in the run's config."""
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


class Random(Strategy):
    """Uniform over the whole pool: meets the true imbalance, whatever the labels turn out."""

    name = "random"
    uses_candidates = False

    def select(self, state, n):
        return state.pool.space.sample(n, state.rng, exclude=state.labelled)


class StaticRetrieval(Strategy):
    """The candidates of highest pretrained cosine (one shot: the same order every round)."""

    name = "static_retrieval"

    def select(self, state, n):
        return _top(state, n, -state.cosine)


class AdaptiveRetrieval(Strategy):
    """The candidates of highest p under the model trained so far (p rises with the cosine)."""

    name = "adaptive_retrieval"
    adaptive = True

    def select(self, state, n):
        return _top(state, n, -state.cosine)


class Uncertainty(Strategy):
    """The candidates whose calibrated p is closest to 1/2 (smallest |logit|)."""

    name = "uncertainty"
    adaptive = True

    def select(self, state, n):
        if state.logits is None:
            raise ValueError("uncertainty sampling needs a calibrated model; round "
                             f"{state.round} has none (seed the run with another strategy)")
        return _top(state, n, np.abs(state.logits))


class RandomCandidates(Strategy):
    """Uniform over the pretrained candidates ``D_close``: random label sets that do contain
    positives, to measure how much AP moves between equally good label sets (noise)."""

    name = "random_candidates"

    def select(self, state, n):
        if n > len(state.candidates):
            raise ValueError(f"round {state.round}: only {len(state.candidates)} unlabelled "
                             f"candidates for a batch of {n}; search more neighbours per item")
        return np.sort(state.rng.choice(state.candidates, size=n, replace=False))


class Stated(Strategy):
    """A uniform sample of the split's stated (heuristic) pairs: the alternative seed set."""

    name = "stated"
    uses_candidates = False

    def select(self, state, n):
        stated = setdiff_sorted(as_id_set(np.concatenate(
            [state.pool.positives, state.pool.stated_negatives])), state.labelled)
        if n > len(stated):
            raise ValueError(f"only {len(stated)} unlabelled stated pairs for a batch of {n}")
        return np.sort(state.rng.choice(stated, size=n, replace=False))


class StratifiedMatch(Strategy):
    """Oracle: uniform positives and negatives, ``n_positive`` of ``n_positive + n_negative``
    labels in all (the counts uncertainty sampling collected), spread over the rounds."""

    name = "stratified_match"
    uses_candidates = False

    def __init__(self, n_positive: int, n_negative: int):
        for name, value in (("n_positive", n_positive), ("n_negative", n_negative)):
            if not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        self.n_positive, self.n_negative = int(n_positive), int(n_negative)

    def params(self):
        return {"n_positive": self.n_positive, "n_negative": self.n_negative}

    def select(self, state, n):
        total = self.n_positive + self.n_negative
        if total != state.budget:
            raise ValueError(f"{self!r} wants {total} labels but the run's budget is {state.budget}")
        return _stratified(state, n, self.n_positive)


class StratifiedAllPositives(Strategy):
    """Oracle: every positive of the pool, and uniform negatives for the rest of the budget
    (set the budget to twice the positives to match them, as the paper did on QQP)."""

    name = "stratified_all_positives"
    uses_candidates = False

    def select(self, state, n):
        if state.pool.n_positives > state.budget:
            raise ValueError(f"the pool has {state.pool.n_positives} positives, more than the "
                             f"run's budget of {state.budget}")
        return _stratified(state, n, state.pool.n_positives)


STRATEGIES = {cls.name: cls for cls in (Random, StaticRetrieval, AdaptiveRetrieval, Uncertainty,
                                        RandomCandidates, Stated, StratifiedMatch,
                                        StratifiedAllPositives)}


def make_strategy(name: str, **params) -> Strategy:
    """The strategy registered as ``name``, built with ``params``."""
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; known: {sorted(STRATEGIES)}")
    return STRATEGIES[name](**params)


def _top(state: RoundState, n: int, key: np.ndarray) -> np.ndarray:
    """The ``n`` candidates of smallest ``key`` (ties by pair id), sorted."""
    if len(key) != len(state.candidates):
        raise ValueError(f"{len(key)} scores for {len(state.candidates)} candidates")
    if n > len(state.candidates):
        raise ValueError(f"round {state.round}: only {len(state.candidates)} unlabelled "
                         f"candidates for a batch of {n}; search more neighbours per item")
    if np.isnan(key).any():
        raise ValueError(f"round {state.round}: {int(np.isnan(key).sum())} candidate scores are NaN")
    order = np.lexsort((state.candidates, key))
    return np.sort(state.candidates[order[:n]])


def _stratified(state: RoundState, n: int, n_positive_total: int) -> np.ndarray:
    """``n`` uniform pairs, with positives in the share that ends the run at ``n_positive_total``
    positives when every round draws in proportion (labels taken so far count)."""
    pool, labelled = state.pool, state.labelled
    done = len(labelled)
    have = int(isin_sorted(labelled, pool.positives).sum())
    want = round(n_positive_total * (done + n) / state.budget) - have
    free_pos = setdiff_sorted(pool.positives, labelled)
    n_pos = int(min(max(want, 0), n, len(free_pos)))
    positives = np.sort(state.rng.choice(free_pos, size=n_pos, replace=False))
    negatives = sample_range(pool.n_pairs, n - n_pos, state.rng,
                             exclude=as_id_set(np.concatenate([labelled, pool.positives])))
    return np.sort(np.concatenate([positives, negatives]))
