"""Durable manual labels of putative false positives in an append-only SQLite file (a
:class:`~pairlab.io.DurableStore`): a newer mark of the same pair by the same annotator (task,
split and model) supersedes the older one when reading *current* marks."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pandas as pd

from ..io import DurableStore, check_name

__all__ = ["LabelStore", "MARKS", "STRATA"]

MARKS = ("real_error", "actually_positive", "unsure")
STRATA = ("near", "rand")
KEY = ("pair_id", "task", "split", "model_id", "annotator")  # a newer mark of a key supersedes


class LabelStore(DurableStore):
    """Append-only manual marks of pairs in the SQLite file at ``path`` (created if missing)."""

    SCHEMA = """
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
        if isinstance(pair_id, bool) or not isinstance(pair_id, (int, np.integer)) or pair_id < 0:
            raise ValueError(f"pair_id must be a non-negative integer, got {pair_id!r}")
        for name, value, allowed in (("mark", mark, MARKS), ("stratum", stratum, STRATA)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
        names = dict(task=task, split=split, model_id=model_id, annotator=annotator)
        for name, value in names.items():
            check_name(name, value)
        now = datetime.now(timezone.utc).isoformat(timespec="microseconds")
        row = dict(pair_id=int(pair_id), **names, stratum=stratum, mark=mark, created_at=now)
        row |= dict(left_text=left_text, right_text=right_text)
        sql = f"INSERT INTO marks ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})"
        return self._write(sql, tuple(row.values()))  # one transaction per mark

    def marks(
        self,
        *,
        task: str | None = None,
        split: str | None = None,
        model_id: str | None = None,
        annotator: str | None = None,
    ) -> pd.DataFrame:
        """Current marks (each key's latest) matching the given filters, oldest first."""
        given = dict(task=task, split=split, model_id=model_id, annotator=annotator)
        given = {column: value for column, value in given.items() if value is not None}
        where = [f"{column} = ?" for column in given]
        where.append(f"id IN (SELECT MAX(id) FROM marks GROUP BY {', '.join(KEY)})")
        sql = "SELECT * FROM marks WHERE " + " AND ".join(where)
        frame = self._read(sql + " ORDER BY id", list(given.values()))
        return frame.astype({"id": np.int64, "pair_id": np.int64})

    def counts(
        self, *, task: str, split: str, model_id: str, pair_ids
    ) -> dict[str, tuple[int, int]]:
        """``{stratum: (real_errors, judged)}`` of the current marks of ``pair_ids``, judged = real
        errors + actually positive: ``corrected_precision``'s ``*_marks``."""
        frame = self.marks(task=task, split=split, model_id=model_id)
        frame = frame[frame["pair_id"].isin(np.asarray(pair_ids, dtype=np.int64))]
        n = pd.crosstab(frame["stratum"], frame["mark"]).reindex(
            STRATA, columns=MARKS, fill_value=0
        )
        errors, positive = n["real_error"], n["actually_positive"]
        return {s: (int(errors[s]), int(errors[s] + positive[s])) for s in STRATA}
