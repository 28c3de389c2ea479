"""Candidate search as a wrapper: any criterion, restricted to the pairs near each item under
the selection model (small-text's ``SEALS``, which restricts the pool to the labelled set's
nearest neighbours, applied to pairs). The loop runs the search (:meth:`CandidateSearch.restrict`)
and times it; the criterion reads the candidates it found."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..evaluation.candidates import neighbour_pairs
from .base import RoundState, Strategy

__all__ = ["CandidateSearch", "SELECTION_MODELS"]


SELECTION_MODELS = ("pretrained", "trained")


class CandidateSearch(Strategy):
    """Restricts ``base`` to ``D_close``: every item's top-``m`` neighbours under the selection
    model (``"pretrained"`` or ``"trained"``), minus the labelled pairs, with their cosines and,
    under a trained model, calibrated logits. SEALS (Coleman et al. 2022) on pairs."""

    def __init__(
        self,
        base: Strategy,
        *,
        model: str = "pretrained",
        m: int = 100,
        index: str = "Flat",
        name: str | None = None,
    ):
        if model not in SELECTION_MODELS:
            raise ValueError(f"model must be one of {SELECTION_MODELS}, got {model!r}")
        if not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"m must be a positive integer, got {m!r}")
        self.base, self.model, self.m, self.index = base, model, int(m), index
        self.name = name or f"{base.name}_over_{model}_candidates"

    @property
    def adaptive(self) -> bool:
        return self.model == "trained"

    @property
    def criterion(self) -> Strategy:
        return self.base.criterion

    def params(self):
        return {"base": self.base, "model": self.model, "m": self.m, "index": self.index}

    def restrict(self, state: RoundState, left, right, model=None) -> RoundState:
        """``state`` restricted to ``D_close`` of the item embeddings ``left`` and ``right``
        under the selection ``model`` (None: the pretrained encoder): its candidates (sorted
        int64, none of ``state.unavailable``), their float64 cosines and, under a calibrated
        model, their logits."""
        candidates, cosine = neighbour_pairs(
            state.pool.space, left, right, m=self.m, exclude=state.unavailable, index=self.index
        )
        cosine = cosine.astype(np.float64)
        calibration = getattr(model, "calibration", None)
        logits = None if calibration is None else calibration.logits(cosine)
        return replace(
            state,
            candidates=candidates,
            cosine=cosine,
            logits=logits,
            model=model,
            embeddings=(left, right),
        )

    def select(self, state, n):
        return self.base.select(state, n)
