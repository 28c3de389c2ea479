"""Tasks and their pools: a :class:`Task` is three split :class:`Pool` s of one all-pairs task;
a pool holds its texts and its positive and stated negative pair ids; every other pair is an
imputed negative."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..io import ReadReport
from .pairs import PairSpace, isin_sorted

__all__ = ["Pool", "Task", "SPLITS", "BUILT_IN", "like"]

SPLITS = ("train", "dev", "test")
BUILT_IN = ("qqp", "wikiqa")


def like(name: str, symmetric: bool) -> str:
    """``name`` if it is a built-in task, else the built-in task of the same kind: ``"qqp"``
    (symmetric) or ``"wikiqa"``."""
    return name if name in BUILT_IN else ("qqp" if symmetric else "wikiqa")


@dataclass(frozen=True, eq=False)
class Pool:
    """One split of a task: every pair of its left and right items, labelled by imputation."""

    task: str
    split: str
    left_texts: np.ndarray  # (n_left,) object: str
    right_texts: np.ndarray  # (n_right,) object: str; the same array as left_texts if symmetric
    symmetric: bool
    positives: np.ndarray  # (n_pos,) int64 sorted pair ids
    stated_negatives: np.ndarray  # (n_stated_neg,) int64 sorted pair ids
    truth_known = True  # every pair's label is known (a person's RecordPool may not know it)

    @property
    def space(self) -> PairSpace:
        return PairSpace(len(self.left_texts), len(self.right_texts), self.symmetric)

    @property
    def n_pairs(self) -> int:
        return self.space.n_pairs

    @property
    def n_positives(self) -> int:
        return len(self.positives)

    @property
    def n_negatives(self) -> int:
        return self.n_pairs - self.n_positives

    def labels(self, pair_ids) -> np.ndarray:
        """Imputed labels (int8, 1 = positive) of ``pair_ids``; the oracle of active learning."""
        ids = np.asarray(pair_ids, dtype=np.int64)
        self.space.check(ids)
        return isin_sorted(ids, self.positives).astype(np.int8)

    def texts(self, pair_ids) -> tuple[np.ndarray, np.ndarray]:
        """Left and right texts of ``pair_ids``."""
        left, right = self.space.decode(pair_ids)
        return self.left_texts[left], self.right_texts[right]

    def stated(self, pair_ids) -> np.ndarray:
        """What is stated of each pair: ``"positive"``, ``"negative"`` or ``"-"`` (str)."""
        ids = np.asarray(pair_ids, dtype=np.int64)
        negative = np.where(isin_sorted(ids, self.stated_negatives), "negative", "-")
        return np.where(isin_sorted(ids, self.positives), "positive", negative)

    def frame(self, pair_ids) -> pd.DataFrame:
        """A readable table of pairs: id, left, right, imputed label, stated (heuristic) label."""
        ids = np.asarray(pair_ids, dtype=np.int64)
        left, right = self.texts(ids)
        return pd.DataFrame(
            {"pair_id": ids, "left": left, "right": right, "label": self.labels(ids)}
        ).assign(stated=self.stated(ids))

    def __repr__(self) -> str:
        return (
            f"Pool({self.task}/{self.split}: {len(self.left_texts):,} x "
            f"{len(self.right_texts):,} items, {self.n_pairs:,} pairs, "
            f"{self.n_positives:,} positives, symmetric={self.symmetric})"
        )


@dataclass(frozen=True, eq=False)
class Task:
    """A task's three split pools and what building them counted."""

    name: str
    splits: dict[str, Pool]
    notes: dict = field(default_factory=dict)  # counts and choices made while building
    report: ReadReport = field(default_factory=ReadReport)
    # builds the task again from the same rows with another max_items (None: not rebuildable)
    rebuild: Callable[..., Task] | None = field(default=None, repr=False)

    @property
    def symmetric(self) -> bool:
        return next(iter(self.splits.values())).symmetric

    def resized(self, max_items) -> Task:
        """The task built again from the same rows, seed and fractions with ``max_items``."""
        if self.rebuild is None:
            raise ValueError(f"task {self.name!r} was not built from rows, so it cannot be rebuilt")
        return self.rebuild(max_items=max_items)

    def __getitem__(self, split: str) -> Pool:
        if split not in self.splits:
            raise KeyError(f"task {self.name!r} has no split {split!r}; it has {list(self.splits)}")
        return self.splits[split]

    def __repr__(self) -> str:
        return f"Task({self.name}: " + ", ".join(repr(p) for p in self.splits.values()) + ")"
