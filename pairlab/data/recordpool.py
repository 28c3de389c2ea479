"""The pairs of your own records: :func:`record_pairs` makes the :class:`RecordPool` of one table
(duplicates within it) or of two (each left record with each right one). A pair not known is
*unknown*, not negative, unless a simulation gives ``all_positives`` (every true pair)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .build import components, pairs_within_groups
from .items import Records, UnknownIdError, read_id_pairs
from .pairs import PairSpace, as_id_set, isin_sorted, setdiff_sorted
from .tasks import Pool

__all__ = ["RecordPool", "record_pairs", "NoTruthError"]

SPLIT = "all"  # a pool of records is not split: a person labels it as one


class NoTruthError(ValueError):
    """The labels of a pool whose positives are not all known were asked for."""


@dataclass(frozen=True, eq=False, repr=False)
class RecordPool(Pool):
    """Every pair of one table's records (``symmetric``) or of two tables' (``left`` x
    ``right``). ``positives`` (sorted int64 pair ids) are all positive pairs when
    ``truth_known``, else those stated (``known_positives``) and what they imply in one table."""

    left: Records
    right: Records  # the same object as left when symmetric
    known_positives: np.ndarray  # (n,) int64 sorted pair ids: the positives given (the seeds)
    truth_known: bool  # positives are every positive pair: any other pair is a negative
    notes: dict = field(default_factory=dict)

    def labels(self, pair_ids) -> np.ndarray:
        """Labels (int8, 1 = positive) of ``pair_ids`` where the truth is known, else a
        :class:`NoTruthError`."""
        if not self.truth_known:
            raise NoTruthError(
                f"{self.task}: no truth is known for these pairs: only {len(self.positives):,} known "
                f"positive(s) and {len(self.stated_negatives):,} known negative(s) of "
                f"{self.n_pairs:,} pairs, and every other pair is unlabelled, not negative. A "
                "person labels these pairs; for a simulation, build the pool with "
                "record_pairs(..., all_positives=<every true pair>)"
            )
        return super().labels(pair_ids)

    @property
    def n_positives(self) -> int:
        if not self.truth_known:
            raise NoTruthError(
                f"{self.task}: the number of positives is unknown (no truth is "
                f"known; {len(self.positives):,} are known positive)"
            )
        return len(self.positives)

    def pair_ids(self, left_ids, right_ids) -> np.ndarray:
        """Pair ids (int64, in the order given) of the records ``left_ids[k]``, ``right_ids[k]``;
        a one-table pool takes either order."""
        return _pair_ids(self.left, self.right, self.symmetric, left_ids, right_ids)

    def record_ids(self, pair_ids) -> tuple[np.ndarray, np.ndarray]:
        """The record ids (object: str) of each pair's left and right record (in one table, the
        left is the one read first)."""
        i, j = self.space.decode(pair_ids)
        return self.left.ids[i], self.right.ids[j]

    def __repr__(self) -> str:
        sides = f"{len(self.left):,} x {len(self.right):,} records"
        known = f"{len(self.stated_negatives):,} negatives, the rest unlabelled"
        known = "all" if self.truth_known else known
        return (
            f"RecordPool({self.task}: {sides}, {self.n_pairs:,} pairs, "
            f"{len(self.positives):,} positives ({known}))"
        )


def record_pairs(
    left: Records,
    right: Records | None = None,
    *,
    positives=None,
    negatives=None,
    all_positives=None,
    name: str | None = None,
) -> RecordPool:
    """The pool of every pair of ``left``'s records (``right=None``: duplicates within one
    table) or of each ``left`` record with each ``right`` record (matching two tables).

    ``positives`` and ``negatives`` are the pairs known (the seeds); ``all_positives`` is every
    true pair (a simulation's oracle). Each is a file or DataFrame of record-id pairs
    (:func:`~pairlab.data.items.read_id_pairs`) or a tuple of two id arrays. In one table
    matching is transitive (a~b, b~c: a~c); a known negative the positives contradict is
    dropped. What was added, dropped or given twice is counted in ``notes``."""
    symmetric = right is None
    right = left if symmetric else right
    _check_sides(left, right, symmetric)
    space = PairSpace(len(left), len(right), symmetric)
    notes = {}
    known = _known(left, right, symmetric, positives, "positives", notes)
    negatives = _known(left, right, symmetric, negatives, "negatives", notes)
    positive = _closure(space, known, "positives", notes)
    if all_positives is not None:
        positive = _truth(left, right, space, all_positives, positive, notes)
    contradicted = isin_sorted(negatives, positive)
    notes["negatives_contradicted_by_positives"] = int(contradicted.sum())
    return RecordPool(
        task=name or (left.name if symmetric else f"{left.name}-{right.name}"),
        split=SPLIT,
        left_texts=left.texts,
        right_texts=right.texts,
        symmetric=symmetric,
        positives=positive,
        stated_negatives=negatives[~contradicted],
        left=left,
        right=right,
        known_positives=known,
        truth_known=all_positives is not None,
        notes=notes,
    )


def _check_sides(left, right, symmetric: bool) -> None:
    for side, records in (("left", left), ("right", right)):
        if not isinstance(records, Records):
            raise TypeError(f"{side} must be Records (load_items), got {type(records).__name__}")
    if symmetric and len(left) < 2:
        raise ValueError(
            f"{left.name!r} has {len(left)} record(s): at least two records are needed for "
            "duplicates within one table (two tables to match need one each)"
        )
    if not symmetric and min(len(left), len(right)) < 1:
        sizes = f"{left.name!r} has {len(left)}, {right.name!r} has {len(right)}"
        raise ValueError(f"two tables to match need a record each: {sizes}")


def _truth(
    left: Records, right: Records, space: PairSpace, pairs, known: np.ndarray, notes: dict
) -> np.ndarray:
    """Every positive pair: ``pairs`` and what they imply, which must hold the ``known`` ones."""
    given = _known(left, right, space.symmetric, pairs, "all_positives", notes)
    truth = _closure(space, given, "all_positives", notes)
    outside = setdiff_sorted(known, truth)
    if len(outside):
        i, j = space.decode(outside[:1])
        first = (str(left.ids[i[0]]), str(right.ids[j[0]]))
        raise ValueError(
            f"{len(outside):,} known positive pair(s) are not among all_positives, "
            f"first {first}: all_positives must hold every true pair, the known "
            "ones included"
        )
    notes["all_positives"] = len(truth)
    return truth


def _known(
    left: Records, right: Records, symmetric: bool, pairs, role: str, notes: dict
) -> np.ndarray:
    """The sorted, distinct pair ids of known pairs (a file, a DataFrame or two id arrays)."""
    if pairs is None:
        return np.empty(0, dtype=np.int64)
    if isinstance(pairs, (str, Path, pd.DataFrame)):
        *pairs, report = read_id_pairs(pairs)
        notes[f"{role}_rows_skipped"] = len(report.skipped)
    elif not (isinstance(pairs, tuple) and len(pairs) == 2):
        raise TypeError(
            f"{role} must be a file or DataFrame of id pairs, or a tuple of two id "
            f"arrays (left_ids, right_ids), got {type(pairs).__name__} {pairs!r:.60}"
        )
    left_ids, right_ids = pairs
    try:
        ids = _pair_ids(left, right, symmetric, left_ids, right_ids)
    except (UnknownIdError, ValueError) as error:
        raise type(error)(f"{role}: {error}") from None
    unique = as_id_set(ids)
    notes[f"{role}_given_twice"] = len(ids) - len(unique)
    return unique


def _pair_ids(left: Records, right: Records, symmetric: bool, left_ids, right_ids) -> np.ndarray:
    left_ids = np.atleast_1d(np.asarray(left_ids, dtype=object))
    right_ids = np.atleast_1d(np.asarray(right_ids, dtype=object))
    if left_ids.shape != right_ids.shape or left_ids.ndim != 1:
        raise ValueError(
            f"left and right ids must be two 1-d arrays of one length, got shapes "
            f"{left_ids.shape} and {right_ids.shape}"
        )
    i, j = _index(left, left_ids, "left"), _index(right, right_ids, "right")
    same = i == j
    if symmetric and same.any():
        k = int(np.flatnonzero(same)[0])
        raise ValueError(
            f"{int(same.sum()):,} pair(s) join a record with itself, first "
            f"({left.ids[i[k]]!r}, {right.ids[j[k]]!r}): a pair of one table joins "
            "two different records"
        )
    return PairSpace(len(left), len(right), symmetric).encode(i, j)


def _index(records: Records, ids, side: str) -> np.ndarray:
    try:
        return records.index_of(ids)
    except UnknownIdError as error:
        raise UnknownIdError(f"{side} ids: {error}") from None


def _closure(space: PairSpace, ids: np.ndarray, role: str, notes: dict) -> np.ndarray:
    """``ids`` with every pair they imply in one table (a~b, b~c: a~c), the added counted."""
    if not space.symmetric:
        return ids
    a, b = space.decode(ids)
    members, local = np.unique(np.r_[a, b], return_inverse=True)  # records in no pair: alone
    groups = components(len(members), local[: len(a)], local[len(a) :])
    i, j = pairs_within_groups(groups)
    closed = as_id_set(space.encode(members[i], members[j]))
    notes[f"{role}_added_by_closure"] = len(closed) - len(ids)
    return closed
