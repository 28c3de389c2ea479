"""Durable LLM answers, one row per pair, in an append-only SQLite file (a
:class:`~pairlab.io.DurableStore`): the newest row of a key is that pair's answer; each prompt's
answers are one committed transaction, so a killed run loses no answer."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from ..io import DurableStore

__all__ = ["AnswerCache"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    label INTEGER NOT NULL CHECK (label IN (1, 0, -1)),
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    task TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    raw_answer TEXT,
    created_at TEXT NOT NULL,
    left_text TEXT NOT NULL,
    right_text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_key ON answers (key);
"""


class AnswerCache(DurableStore):
    """Answers of pairs by cache key in the SQLite file at ``path`` (created if missing)."""

    SCHEMA = _SCHEMA

    def get(self, keys) -> dict[str, int]:
        """``{key: label}`` (the newest answer) of those ``keys`` answered before."""
        with self._lock:  # every key in one JSON parameter: no bound-parameter limit
            rows = self._conn.execute(
                "SELECT key, label FROM answers WHERE key IN (SELECT value FROM json_each(?)) "
                "ORDER BY id",
                (json.dumps(list(keys)),),
            )
            return dict(rows.fetchall())  # ordered by id: the newest row wins

    def put(
        self,
        keys,
        labels,
        *,
        model: str,
        prompt_version: str,
        task: str,
        attempts: int,
        raw_answer: str | None,
        left_texts,
        right_texts,
    ) -> None:
        """Append one prompt's answers ((n,) keys, labels, texts), committed before returning."""
        labels = np.asarray(labels, dtype=np.int64)
        if not len(keys) == len(labels) == len(left_texts) == len(right_texts):
            raise ValueError("keys, labels and texts must have the same length")
        now = datetime.now(timezone.utc).isoformat(timespec="microseconds")
        common = (model, prompt_version, task, int(attempts), raw_answer, now)
        rows = [
            (key, int(label), *common, str(left), str(right))
            for key, label, left, right in zip(keys, labels, left_texts, right_texts)
        ]
        with self._lock, self._conn:  # one transaction: committed (and fsynced) on exit
            self._conn.executemany(
                "INSERT INTO answers (key, label, model, prompt_version, task, attempts, "
                "raw_answer, created_at, left_text, right_text) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def to_pandas(self) -> pd.DataFrame:
        """Every row, history included, oldest first."""
        return self._read("SELECT * FROM answers ORDER BY id")

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
