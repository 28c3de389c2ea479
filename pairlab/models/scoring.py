"""Scoring pairs from fixed item embeddings: the cosine of unit-norm vectors (the pretrained
baseline, and CosineBERT's scorer once its items are embedded)."""

from __future__ import annotations

import numpy as np

from ..data.pairs import PairSpace

__all__ = ["CosineScorer"]


class CosineScorer:
    """Scores pairs by the cosine (float32) of fixed unit-norm embeddings (the pretrained
    baseline), or by ``calibration.logits`` of it (float64, CosineBERT's) where one is given."""

    def __init__(
        self,
        space: PairSpace,
        left_emb: np.ndarray,
        right_emb: np.ndarray | None = None,
        calibration=None,
    ):
        self.space, self.calibration = space, calibration
        self.left = np.asarray(left_emb, dtype=np.float32)
        self.right = self.left if right_emb is None else np.asarray(right_emb, dtype=np.float32)

    def __call__(self, pair_ids, *, batch_size: int = 2048) -> np.ndarray:
        ids = np.asarray(pair_ids, dtype=np.int64)
        out = np.empty(len(ids), dtype=np.float32)
        # small batches keep the gathered rows in cache: 4x faster than 10^6-pair batches at
        # 384 dimensions on this machine, and bit-identical (each row's dot product is the same)
        for start in range(0, len(ids), batch_size):
            i, j = self.space.decode(ids[start : start + batch_size])
            out[start : start + batch_size] = np.einsum("nd,nd->n", self.left[i], self.right[j])
        return out if self.calibration is None else self.calibration.logits(out)
