"""Silver labels (Augmented SBERT): a trained cross-encoder labels sampled pairs of a pool for
the bi-encoder, each scored once and kept in an ``.npz`` file with the seconds spent."""

from __future__ import annotations

import time
import warnings
import zipfile
from pathlib import Path

import numpy as np

from ..data.loaders import Pool
from ..data.pairs import as_id_set, isin_sorted, setdiff_sorted
from ..io import write_atomic

__all__ = ["SilverLabeller"]


class SilverLabeller:
    """``model`` (with ``score_pairs(pool, ids)``) labels pairs of ``pool`` but ``gold``: positive
    when its logit is >= ``threshold``; ``path``: an ``.npz`` file of the scores across runs."""

    def __init__(self, model, pool: Pool, threshold: float, *, gold=None, path=None):
        if not np.isfinite(threshold):
            raise ValueError(f"threshold must be finite, got {threshold!r}")
        self.model, self.pool, self.threshold = model, pool, float(threshold)
        self.gold = as_id_set(gold if gold is not None else [])
        self.path = Path(path) if path else None
        self.ids, self.logits = np.empty(0, np.int64), np.empty(0, np.float64)
        self.seconds, self.n_scored = 0.0, 0  # all scoring of these pairs, earlier runs included
        if self.path is not None and self.path.is_file():
            try:
                with np.load(self.path) as saved:
                    self.ids, self.logits = saved["ids"], saved["logits"]
                    self.seconds, self.n_scored = float(saved["seconds"]), int(saved["n_scored"])
            except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as error:
                warnings.warn(
                    f"silver scores {self.path} are unreadable ({type(error).__name__}: "
                    f"{error}); scoring their pairs again",
                    RuntimeWarning,
                    stacklevel=2,
                )

    def label(self, ids) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, labels)``: the sorted ``ids`` without gold pairs and their silver labels (int8)."""
        ids = as_id_set(ids)
        ids = ids[~isin_sorted(ids, self.gold)]
        return ids, (self.score(ids) >= self.threshold).astype(np.int8)

    def score(self, ids) -> np.ndarray:
        """Logits of the sorted ``ids``, scoring only those never scored before."""
        ids = as_id_set(ids)
        new = setdiff_sorted(ids, self.ids)
        if len(new):
            start = time.perf_counter()
            logits = np.asarray(self.model.score_pairs(self.pool, new), dtype=np.float64)
            self.seconds += time.perf_counter() - start
            self.n_scored += len(new)
            if logits.shape != new.shape or not np.isfinite(logits).all():
                raise ValueError("the cross-encoder returned missing or non-finite scores")
            merged = np.concatenate([self.ids, new])
            order = np.argsort(merged, kind="stable")
            self.ids, self.logits = merged[order], np.concatenate([self.logits, logits])[order]
            if self.path is not None:
                saved = dict(ids=self.ids, logits=self.logits, n_scored=self.n_scored)
                write_atomic(self.path, lambda tmp: np.savez(tmp, seconds=self.seconds, **saved))
        return self.logits[np.searchsorted(self.ids, ids)]

    @property
    def pairs_per_second(self) -> float | None:
        """Scoring throughput over every pair scored, earlier runs included (None before any)."""
        return self.n_scored / self.seconds if self.seconds > 0 else None
