"""Your own pairs: any labelled pair file (or DataFrame) as an all-pairs task, :func:`load_pairs`.
A fault of the whole file is a ``ValueError`` naming the file, line and column; a bad row costs
that row only, reported in ``task.report``."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .build import build_asymmetric, build_symmetric
from .tables import (
    SUFFIXES,
    blank,
    check_columns,
    flag,
    located,
    read_source,
    skip_rows,
    text_column,
)
from .tasks import BUILT_IN, SPLITS, Task

__all__ = ["load_pairs", "pair_rows", "SUFFIXES", "pair_task_name"]

SPLIT_ALIASES = {"validation": "dev", "valid": "dev", "val": "dev"}
_TRUE_FALSE = {"true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0}
COLUMNS_REMEDY = (
    "Name the columns with load_pairs(left=..., right=..., label=..., left_id=..., "
    "right_id=..., split_column=...), or in a notebook with pairs_columns={'left': "
    "..., 'right': ..., 'label': ...}"
)


def load_pairs(
    source,
    *,
    symmetric: bool,
    left: str = "text1",
    right: str = "text2",
    label: str = "label",
    positive_threshold=None,
    left_id=None,
    right_id=None,
    split_column=None,
    fractions=(0.5, 0.25, 0.25),
    seed: int = 0,
    max_items=None,
    name: str | None = None,
    check_splits: bool = True,
) -> Task:
    """The all-pairs task of a labelled pair file or DataFrame.

    ``symmetric`` (duplicates, paraphrases): the items are the distinct texts (or ids, with
    ``left_id``/``right_id``) of both columns; otherwise each split's left items
    (``split_column``'s, else a random split by ``fractions``) x every right item. ``label`` is
    0/1 (or true/false); graded labels need ``positive_threshold`` (positive: at least it).
    ``max_items`` caps the left items per split (an int or a dict by split). ``check_splits``: a
    split without two items or a positive is an error (the pinned built-in tasks skip it)."""
    if not isinstance(symmetric, (bool, np.bool_)):
        raise TypeError(
            f"symmetric must be True (duplicates, paraphrases: both columns hold the "
            f"same kind of item) or False (question -> answer), got {symmetric!r}"
        )
    if symmetric and split_column is not None:
        raise ValueError(
            f"split_column={split_column!r} is for asymmetric tasks: a symmetric task "
            "is split by connected components of its pairs, so that no pair crosses "
            "splits; leave split_column unset"
        )
    if (left_id is None) != (right_id is None):
        raise ValueError(
            f"give both left_id and right_id or neither, got left_id={left_id!r}, "
            f"right_id={right_id!r}"
        )
    frame, lines, report, where = read_source(source, what="pair")
    columns = dict(left=left, right=right, label=label, left_id=left_id, right_id=right_id)
    columns["split"] = split_column
    rows, report = pair_rows(frame, columns, report, positive_threshold, where, lines)
    name = name or (pair_task_name(source) if not isinstance(source, pd.DataFrame) else "pairs")
    build = partial(build_symmetric, keyed=left_id is not None) if symmetric else build_asymmetric
    build = partial(build, name, rows, seed=seed, fractions=fractions)
    task = build(max_items=max_items)
    if check_splits:
        _check_splits(task, where)
    notes = dict(task.notes)
    if not isinstance(source, pd.DataFrame):
        notes["source"] = str(source)
    if positive_threshold is not None:
        notes["positive_threshold"] = positive_threshold
    return Task(task.name, task.splits, notes, report, rebuild=build)


def _check_splits(task: Task, source: str) -> None:
    """A split that cannot be trained or measured on is an error naming the reason."""
    for split in SPLITS:
        pool = task[split]
        if len(pool.left_texts) >= 2 and pool.n_positives > 0:
            continue
        items = sum(len(task[s].left_texts) for s in SPLITS)
        sizes = "/".join(f"{len(task[s].left_texts):,}" for s in SPLITS)
        why = (
            f"a symmetric task is split by whole connected components of its stated pairs, and "
            f"these split its {items:,} items {sizes} (a component too large for a split's share "
            "puts it all in one split; state fewer pairs per item, or more items)"
            if task.symmetric
            else f"{items:,} left items and {task.notes.get('rows', 0):,} rows are split "
            f"{'by the split column' if 'fractions' not in task.notes else 'at random'}"
        )
        raise ValueError(
            f"{source}: the {split} split has {len(pool.left_texts)} item(s) and "
            f"{pool.n_positives} positive(s), too few to train or measure on: {why}. "
            "Change fractions (or max_items), or add labelled pairs"
        )


def pair_task_name(path) -> str:
    """A file's task name: its stem (``faq`` for ``faq.jsonl``), never a built-in task's."""
    stem = Path(path).stem or "pairs"
    return f"{stem}_file" if stem in BUILT_IN else stem  # never mistaken for the paper's tasks


def pair_rows(frame: pd.DataFrame, columns: dict, report, positive_threshold, source: str, lines):
    """The rows the builders take (``left, right, label`` int8, ``left_key, right_key``, and
    ``split`` where a split column is named) and ``report`` with the rows skipped. ``columns``
    maps those roles (and ``left_id``, ``right_id``) to ``frame``'s column names."""
    check_columns(frame, columns, source, remedy=COLUMNS_REMEDY)
    at = located(source, lines)
    labels, bad_label = _labels(frame[columns["label"]], positive_threshold, columns["label"], at)
    out = pd.DataFrame({side: text_column(frame[columns[side]]) for side in ("left", "right")})
    out["label"] = labels
    reasons = pd.Series(bad_label, index=frame.index, dtype=object)
    for side in ("left", "right"):
        flag(reasons, blank(out[side]), f"empty text in column {columns[side]!r}")
        key = columns[f"{side}_id"]
        # ids keep their type (QQP's int64 qids sort as numbers), texts are compared as they are
        out[f"{side}_key"] = out[side] if key is None else frame[key]
        if key is not None:
            flag(reasons, blank(frame[key]), f"empty id in column {key!r}")
    if columns.get("split") is not None:
        out["split"] = _splits(frame[columns["split"]], columns["split"], at)
        flag(reasons, blank(out["split"]), f"empty split in column {columns['split']!r}")
    bad, report = skip_rows(frame, reasons, source, lines, "row", report)
    out = out[~bad].reset_index(drop=True)
    if not (out["label"] == 1).any():
        rule = "every label is 0"
        if positive_threshold is not None:
            rule = f"no label reaches positive_threshold={positive_threshold}"
        raise ValueError(
            f"{source}: no positive pair in column {columns['label']!r}: {rule}. A "
            "task needs positives; check the label column (and the threshold)"
        )
    return out, report


def _labels(column: pd.Series, threshold, name: str, at):
    """Labels (int8: 1 positive) and the reason each unusable row is skipped (``None``: kept)."""
    text = text_column(column).str.strip().str.lower()
    number = pd.to_numeric(text.map(lambda t: _TRUE_FALSE.get(t, t)), errors="coerce")
    number = number.to_numpy(float)
    empty = text.isin(["", "nan"]).to_numpy()
    not_number = ~empty & ~np.isfinite(number)
    if not_number.any() and not_number.sum() == (~empty).sum():
        i = int(np.flatnonzero(not_number)[0])
        raise ValueError(
            f"{at(i)}: column {name!r} is neither binary nor "
            f"numeric (first value {column.iloc[i]!r}); the label column must hold "
            "0/1 (or true/false, yes/no), or numbers with positive_threshold"
        )
    if threshold is None:
        graded = ~empty & ~not_number & ~np.isin(number, (0.0, 1.0))
        if graded.any():
            i = int(np.flatnonzero(graded)[0])
            raise ValueError(
                f"{at(i)}: column {name!r} holds {column.iloc[i]!r}, "
                "not 0 or 1: graded labels need positive_threshold (a pair is positive "
                "when its label is at least the threshold; in a notebook: pairs_threshold)"
            )
        labels = number == 1.0
    else:
        number_like = isinstance(threshold, (int, float)) and not isinstance(threshold, bool)
        if not number_like or not math.isfinite(threshold):
            raise ValueError(f"positive_threshold must be a finite number, got {threshold!r}")
        labels = number >= threshold
    reasons = np.where(
        empty,
        f"empty label in column {name!r}",
        np.where(not_number, f"label in column {name!r} is not a number", None),
    )
    return labels.astype(np.int8), reasons


def _splits(column: pd.Series, name: str, at) -> pd.Series:
    split = text_column(column).str.strip().str.lower().replace(SPLIT_ALIASES)
    unknown = ~split.isin(SPLITS + ("",))
    if unknown.any():
        i = int(np.flatnonzero(unknown.to_numpy())[0])
        raise ValueError(
            f"{at(i)}: split column {name!r} holds "
            f"{column.iloc[i]!r}; expected train, dev (or validation) or test"
        )
    return split
