"""Durable manual labels of putative false positives, in an append-only SQLite file.

Each judgement is one row of ``marks``; rows are never updated or deleted. A newer mark of the
same pair by the same annotator (for the same task, split and model) supersedes the older one
when reading *current* marks, so the whole history stays auditable. Every ``add`` is its own
committed transaction, and the file runs in WAL mode with ``synchronous=FULL`` and a busy
timeout: a killed kernel loses no returned mark, and two kernels may write at once.

One store may be used from several threads: JupyterLab's kernels (ipykernel 7) run widget
callbacks on per-comm-target subshell threads beside the main one, so the connection is opened
with ``check_same_thread=False`` and every use of it holds the store's lock (a write and its
commit, or a read, never interleave with another thread's).
"""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import open_durable

__all__ = ["LabelStore", "MARKS", "STRATA", "check_name"]

MARKS = ("real_error", "actually_positive", "unsure")
STRATA = ("near", "rand")
KEY = ("pair_id", "task", "split", "model_id", "annotator")  # a newer mark of a key supersedes
COLUMNS = (
    "id",
    "pair_id",
    "task",
    "split",
    "model_id",
    "stratum",
    "mark",
    "annotator",
    "created_at",
    "left_text",
    "right_text",
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS marks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    pair_id INTEGER NOT NULL,
    task TEXT NOT NULL,
    split TEXT NOT NULL,
    model_id TEXT NOT NULL,
    stratum TEXT NOT NULL,
    mark TEXT NOT NULL,
    annotator TEXT NOT NULL,
    created_at TEXT NOT NULL,
    left_text TEXT,
    right_text TEXT
);
CREATE INDEX IF NOT EXISTS marks_key ON marks (task, split, model_id, pair_id, annotator);
"""


class LabelStore:
    """Append-only manual marks of pairs in the SQLite file at ``path`` (created if missing)."""

    def __init__(self, path, *, timeout: float = 30.0):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn = open_durable(self.path, _SCHEMA, timeout=timeout)  # WAL, synchronous=FULL

    # -- writing ------------------------------------------------------------------------------

    def add(
        self,
        pair_id,
        *,
        task: str,
        split: str,
        model_id: str,
        stratum: str,
        mark: str,
        annotator: str,
        left_text: str | None = None,
        right_text: str | None = None,
    ) -> int:
        """Append one mark, committed before returning; returns its row id."""
        pair_id = _check_pair_id(pair_id)
        _check_choice("mark", mark, MARKS)
        _check_choice("stratum", stratum, STRATA)
        for name, value in (
            ("task", task),
            ("split", split),
            ("model_id", model_id),
            ("annotator", annotator),
        ):
            check_name(name, value)
        row = (
            pair_id,
            task,
            split,
            model_id,
            stratum,
            mark,
            annotator,
            _utc_now(),
            _optional_text("left_text", left_text),
            _optional_text("right_text", right_text),
        )
        with self._lock, self._conn:  # one transaction per mark: committed (and fsynced) on exit
            cursor = self._conn.execute(
                "INSERT INTO marks (pair_id, task, split, model_id, stratum, mark, annotator, "
                "created_at, left_text, right_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
        return int(cursor.lastrowid)

    # -- reading ------------------------------------------------------------------------------

    def marks(
        self,
        *,
        task: str | None = None,
        split: str | None = None,
        model_id: str | None = None,
        annotator: str | None = None,
        current: bool = True,
    ) -> pd.DataFrame:
        """Marks matching the given filters, oldest first; ``current`` keeps only the latest mark
        of each (pair_id, task, split, model_id, annotator)."""
        where, values = [], []  # the query's placeholders' values
        for column, value in (
            ("task", task),
            ("split", split),
            ("model_id", model_id),
            ("annotator", annotator),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                values.append(value)
        if current:
            where.append(f"id IN (SELECT MAX(id) FROM marks GROUP BY {', '.join(KEY)})")
        sql = f"SELECT {', '.join(COLUMNS)} FROM marks"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return self._frame(sql + " ORDER BY id", values)

    def to_pandas(self) -> pd.DataFrame:
        """Every row, history included, oldest first."""
        return self.marks(current=False)

    def counts(
        self, *, task: str, split: str, model_id: str, pair_ids=None
    ) -> dict[str, tuple[int, int]]:
        """``{stratum: (real_errors, judged)}`` from current marks; judged = real errors +
        actually positive (unsure marks are left out). These are ``near_marks`` and
        ``rand_marks`` of :func:`pairlab.evaluation.metrics.corrected_precision`. ``pair_ids`` keeps only
        marks of those pairs (the putative false positives at one threshold)."""
        frame = self.marks(task=task, split=split, model_id=model_id)
        if pair_ids is not None:
            frame = frame[frame["pair_id"].isin(np.asarray(pair_ids, dtype=np.int64))]
        out = {}
        for stratum in STRATA:
            marks = frame.loc[frame["stratum"] == stratum, "mark"]
            errors = int((marks == "real_error").sum())
            out[stratum] = (errors, errors + int((marks == "actually_positive").sum()))
        return out

    def _frame(self, sql: str, values) -> pd.DataFrame:
        with self._lock:
            rows = self._conn.execute(sql, values).fetchall()
        frame = pd.DataFrame(rows, columns=list(COLUMNS))
        return frame.astype({"id": np.int64, "pair_id": np.int64})

    # -- lifetime -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (every mark is already committed)."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> LabelStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM marks").fetchone()[0])

    def __repr__(self) -> str:
        return f"LabelStore({str(self.path)!r})"


# ---------------------------------------------------------------------------------------------
# Validation


def _check_pair_id(pair_id) -> int:
    if isinstance(pair_id, (bool, np.bool_)) or not isinstance(pair_id, (int, np.integer)):
        raise ValueError(f"pair_id must be a non-negative integer, got {pair_id!r}")
    if pair_id < 0:
        raise ValueError(f"pair_id must be a non-negative integer, got {pair_id!r}")
    return int(pair_id)


def _check_choice(name: str, value, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def check_name(name: str, value) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")


def _optional_text(name: str, value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string or None, got {type(value).__name__}")
    return value


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")
