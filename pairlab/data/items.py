"""Your own records, unlabelled: a table of records as :class:`Records` (:func:`load_items`), and
a file of record-id pairs (:func:`read_id_pairs`). Ids are strings (:func:`as_ids`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import ReadReport
from .tables import blank, check_columns, flag, located, read_source, skip_rows, text_column

__all__ = ["Records", "load_items", "read_id_pairs", "UnknownIdError", "SEPARATOR"]

MAX_CHARS = 10_000
SEPARATOR = " | "
_EXAMPLES = 5  # unknown ids named in a message


class UnknownIdError(KeyError, ValueError):
    """Ids that are not ids of the records asked; a ``KeyError`` (a lookup) and a ``ValueError``
    (bad input), so either ``except`` catches it."""

    def __str__(self) -> str:  # KeyError would show the message quoted, as a key
        return str(self.args[0])


@dataclass(frozen=True, eq=False)
class Records:
    """One table of records: ids and texts, position ``i`` of each array is record ``i``."""

    name: str
    ids: np.ndarray  # (n,) object: str, distinct
    texts: np.ndarray  # (n,) object: str, never empty
    columns: tuple[str, ...]  # the fields the texts are made of
    report: ReadReport = field(default_factory=ReadReport)
    notes: dict = field(default_factory=dict)  # counts: records, skipped by reason, truncated, ...

    def __post_init__(self):
        if len(self.ids) != len(self.texts):
            raise ValueError(f"records {self.name!r}: {len(self.ids)} ids, {len(self.texts)} texts")
        if not self._index.is_unique:
            twice = self._index[self._index.duplicated()].unique()[:_EXAMPLES]
            raise ValueError(f"records {self.name!r}: ids must be distinct; {list(twice)} repeat")

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def _index(self) -> pd.Index:
        return pd.Index(self.ids)

    def index_of(self, ids) -> np.ndarray:
        """Positions (int64, in the order given) of the records with ``ids`` (:func:`as_ids`)."""
        wanted = as_ids(np.atleast_1d(np.asarray(ids, dtype=object)))
        found = self._index.get_indexer(wanted)
        unknown = found < 0
        if unknown.any():
            missing = pd.unique(wanted[unknown])
            raise UnknownIdError(
                f"{len(missing):,} id(s) are not ids of {self.name!r} ({len(self):,} records): "
                f"{[str(m) for m in missing[:_EXAMPLES]]}{' ...' if len(missing) > _EXAMPLES else ''}"
                f"; its ids look like {[str(i) for i in self.ids[:3]]} (a record skipped when "
                "reading has no id here: see its report)"
            )
        return found.astype(np.int64)

    def summary(self) -> str:
        """What was read, kept, skipped and changed, for a person to read."""
        counts = ", ".join(
            f"{k.replace('_', ' ')} {v:,}"
            for k, v in self.notes.items()
            if isinstance(v, int) and k not in ("records", "max_chars") and v
        )
        return (
            f"{self.name}: {len(self):,} records from {list(self.columns)}"
            + (f" ({counts})" if counts else "")
            + "\n"
            + self.report.summary()
        )

    def __repr__(self) -> str:
        return f"Records({self.name}: {len(self):,} records, text from {list(self.columns)})"


def load_items(
    source, *, text, id=None, name: str | None = None, max_chars: int | None = MAX_CHARS
) -> Records:
    """The records of a CSV, TSV, JSON-lines or Parquet file, or of a DataFrame.

    ``text``: the column of each record's text, or a list of columns (``title: <value> |
    brand: <value>``). ``id``: the column of the ids, or ``None``: the rows' numbers. A text
    longer than ``max_chars`` (None: no limit) is cut and counted. Skipped, counted in ``notes``
    and reported: a record without id or text, and a later record with an id seen before.
    """
    fields = _options(text, id, max_chars)
    frame, lines, report, where = read_source(source, what="record")
    roles = {f"text[{k}]": f for k, f in enumerate(fields)}
    roles = roles if len(fields) > 1 else {"text": fields[0]}
    remedy = (
        "Name them with load_items(text=... (a column, or a list of columns), "
        "id=... (a column, or None for row numbers))"
    )
    check_columns(frame, {"id": id, **roles}, where, remedy=remedy)
    ids = as_ids(frame[id]) if id is not None else np.arange(len(frame)).astype(str).astype(object)
    texts = serialise(frame, fields)
    reasons, notes = _skips(ids, texts, id, fields, located(where, lines))
    skipped_by_reader = len(report.skipped)
    bad, report = skip_rows(frame, reasons, where, lines, "record", report)
    texts, ids = texts[~bad], ids[~bad]
    long = texts.str.len().to_numpy() > (max_chars or np.inf)
    texts = texts.str.slice(0, max_chars).to_numpy(object) if long.any() else texts.to_numpy(object)
    same = pd.Series(texts).value_counts()  # texts under two ids or more: likely duplicates
    notes = {
        "records": len(ids),
        "rows": len(frame) + skipped_by_reader,
        "skipped_by_reader": skipped_by_reader,
        **notes,
        "truncated_texts": int(long.sum()),
        "max_chars": max_chars,
        "identical_texts": int(same[same > 1].sum()),
        "identical_text_pairs": int((same * (same - 1) // 2).sum()),
        "source": where,
    }
    default = "records" if isinstance(source, pd.DataFrame) else Path(source).stem
    return Records(name or default, ids, texts, tuple(fields), report, notes)


def _options(text, id, max_chars) -> list[str]:
    """The text fields, once the options are checked."""
    fields = [text] if isinstance(text, str) else text
    names = isinstance(fields, (list, tuple)) and all(isinstance(f, str) for f in fields)
    if not names or not fields:
        raise TypeError(
            f"text must be a column name or a non-empty list of column names, got {text!r}"
        )
    twice = sorted({f for f in fields if fields.count(f) > 1})
    if twice:
        raise ValueError(f"text names the column(s) {twice} more than once")
    if id is not None and not isinstance(id, str):
        raise TypeError(f"id must be a column name or None (row numbers as ids), got {id!r}")
    whole = isinstance(max_chars, (int, np.integer)) and not isinstance(max_chars, bool)
    if max_chars is not None and not (whole and max_chars >= 1):
        raise ValueError(f"max_chars must be a positive integer or None, got {max_chars!r}")
    return list(fields)


def _skips(ids: np.ndarray, texts: pd.Series, id, fields: list[str], at) -> tuple[pd.Series, dict]:
    """Why each row is skipped (``None``: kept) and the count of each reason."""
    no_id, no_text = ids == "", texts.eq("").to_numpy()
    reasons = pd.Series(None, index=texts.index, dtype=object)
    flag(reasons, no_id, f"empty id in column {id!r}")
    flag(reasons, no_text, f"empty text: every field of {list(fields)} is empty")
    usable = np.flatnonzero(reasons.isna().to_numpy())  # a later usable row's id: skipped
    first = pd.Series(usable).groupby(ids[usable]).transform("first").to_numpy()
    again = pd.Series(ids[usable]).duplicated().to_numpy()
    reasons.iloc[usable[again]] = [
        f"id {ids[r]!r} again: the record at {at(f)} is kept"
        for r, f in zip(usable[again], first[again])
    ]
    return reasons, {
        "empty_ids": int(no_id.sum()),
        "empty_texts": int((no_text & ~no_id).sum()),
        "duplicate_ids": int(again.sum()),
    }


def serialise(frame: pd.DataFrame, fields: list[str]) -> pd.Series:
    """Each row's text: the one field's value, or ``name: value`` of each non-empty field joined
    by :data:`SEPARATOR`; ``""`` where every field is empty."""
    if len(fields) == 1:
        value = text_column(frame[fields[0]])
        return value.where(~blank(value), "")
    out = pd.Series("", index=frame.index, dtype=object)
    for name in fields:
        value = text_column(frame[name]).str.strip()
        has = value.ne("")
        joint = np.where(out.ne("") & has, SEPARATOR, "")
        out = out + joint + (f"{name}: " + value).where(has, "")
    return out


def as_ids(values) -> np.ndarray:
    """``values`` as id strings, (n,) object: strings stripped, integers (and integral floats: an
    int column with gaps) as ``str`` of the integer (``12``, never ``"12.0"``), missing ``""``."""
    series = values if isinstance(values, pd.Series) else pd.Series(np.asarray(values, object))
    whole = pd.api.types.is_bool_dtype(series) or pd.api.types.is_integer_dtype(series)
    if whole and not series.isna().any():
        return series.astype(str).to_numpy(object)
    return series.map(_id).to_numpy(object)


def _id(value) -> str:
    if isinstance(value, (float, np.floating)):
        whole = float(value).is_integer()
        return "" if np.isnan(value) else str(int(value)) if whole else str(value)
    return "" if value is None or value is pd.NA else str(value).strip()


def read_id_pairs(source, *, left: str | None = None, right: str | None = None):
    """``(left_ids, right_ids, report)``: pairs of record ids (object: str) from a file or
    DataFrame's ``left`` and ``right`` columns, by default the first two; a row with an empty id
    is skipped and reported."""
    frame, lines, report, where = read_source(source, what="id pair")
    if (left is None or right is None) and len(frame.columns) < 2:
        raise ValueError(
            f"{where} has the columns {[str(c) for c in frame.columns]}: an id pair "
            "needs two (the left record's id, then the right's)"
        )
    left = frame.columns[0] if left is None else left
    right = frame.columns[1] if right is None else right
    remedy = "Name them with read_id_pairs(left=..., right=...)"
    check_columns(frame, {"left": left, "right": right}, where, remedy=remedy)
    ids = [as_ids(frame[left]), as_ids(frame[right])]
    reasons = pd.Series(None, index=frame.index, dtype=object)
    for column, values in zip((left, right), ids):
        flag(reasons, values == "", f"empty id in column {column!r}")
    bad, report = skip_rows(frame, reasons, where, lines, "id pair", report)
    return ids[0][~bad], ids[1][~bad], report
