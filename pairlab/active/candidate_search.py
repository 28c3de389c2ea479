"""Candidate search as a wrapper: any criterion, restricted to the pairs near each item under
the selection model (small-text's ``SEALS``, which restricts the pool to the labelled set's
nearest neighbours, applied to pairs)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..evaluation.candidates import neighbour_pairs
from .base import Strategy

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

    def params(self):
        return {"base": self.base, "model": self.model, "m": self.m, "index": self.index}

    def select(self, state, n):
        model = state.model if self.adaptive else None
        with state.stage("embed"):
            left, right = state.embeddings(model)
        with state.stage("search"):
            candidates, cosine = neighbour_pairs(
                state.pool.space, left, right, m=self.m, exclude=state.unavailable, index=self.index
            )
            cosine = cosine.astype(np.float64)
        calibration = getattr(model, "calibration", None)
        logits = calibration.logits(cosine) if calibration is not None else None
        restricted = replace(
            state, candidates=candidates, cosine=cosine, logits=logits, model=model
        )
        if state.observe is not None:  # the loop records the candidates and the batch's p
            state.observe(restricted)
        return self.base.select(restricted, n)
