"""Files in and out: the raw TSV releases (a malformed row reported by file and line), JSON
written atomically, SQLite stores, and the temporaries and locks of shared folders."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import socket
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "DurableStore",
    "MalformedRowError",
    "NoRowsError",
    "CorruptFileError",
    "NotWritableError",
    "ReadReport",
    "SkippedRow",
    "read_qqp",
    "read_wikiqa",
    "decoded",
    "read_json",
    "json_key",
    "json_row",
    "to_json",
    "plain",
    "write_atomic",
    "write_json",
    "not_writable",
    "temporary",
    "is_temporary",
    "remove_stale",
    "locked",
    "check_name",
]


class MalformedRowError(ValueError):
    """A row without the expected fields: its reason from a parser, then (``strict``) where."""


class NoRowsError(ValueError):
    """A data file without a single well-formed row (empty, a header only, or all malformed)."""


class CorruptFileError(ValueError):
    """A file pairlab wrote earlier that cannot be read back; the message names the remedy."""


class NotWritableError(OSError):
    """An output folder or file that cannot be written (read-only, or the disk is full)."""


@dataclass(frozen=True)
class SkippedRow:
    path: str
    line: int  # 1-based line number in the file
    reason: str
    text: str  # the start of the raw line, for the report


@dataclass
class ReadReport:
    """What a reader read and what it skipped."""

    files: list[str] = field(default_factory=list)
    rows_read: int = 0
    skipped: list[SkippedRow] = field(default_factory=list)

    def merge(self, other: ReadReport) -> ReadReport:
        return ReadReport(
            self.files + other.files, self.rows_read + other.rows_read, self.skipped + other.skipped
        )

    def summary(self) -> str:
        lines = [
            f"read {self.rows_read:,} rows from {len(self.files)} file(s); "
            f"skipped {len(self.skipped)} malformed row(s)",
            *(f"  {r.path}:{r.line}: {r.reason}: {r.text!r}" for r in self.skipped[:20]),
        ]
        if len(self.skipped) > 20:
            lines.append(f"  ... and {len(self.skipped) - 20} more")
        return "\n".join(lines)


def read_qqp(path, *, strict: bool = False) -> tuple[pd.DataFrame, ReadReport]:
    """Rows of a QQP file: ``qid1, qid2`` (int64), ``question1, question2`` (str),
    ``is_duplicate`` (int8); and the report of skipped rows."""

    def parse(fields):
        if len(fields) != 6:
            raise MalformedRowError(f"expected 6 tab-separated fields, found {len(fields)}")
        try:
            qid1, qid2, label = int(fields[1]), int(fields[2]), int(fields[5])
        except ValueError:
            raise MalformedRowError("qid1, qid2 and is_duplicate must be integers") from None
        if label not in (0, 1):
            raise MalformedRowError(f"is_duplicate must be 0 or 1, found {label}")
        return qid1, qid2, fields[3], fields[4], label

    expected = "a QQP TSV (id, qid1, qid2, question1, question2, is_duplicate)"
    rows, report = _read_rows(path, parse, "id\tqid1", expected, strict=strict)
    frame = pd.DataFrame(rows, columns=["qid1", "qid2", "question1", "question2", "is_duplicate"])
    frame = frame.astype({"qid1": "int64", "qid2": "int64", "is_duplicate": "int8"})
    return frame, report


def read_wikiqa(path, *, strict: bool = False) -> tuple[pd.DataFrame, ReadReport]:
    """Rows of a WikiQA file (7 columns, or the 5-column re-formatted one): columns
    ``question, title, sentence, label`` (``title`` None without a document title)."""

    def parse(fields):
        if len(fields) == 7:
            question, title, sentence, label = fields[1], fields[3], fields[5], fields[6]
        elif len(fields) == 5:
            question, title, sentence, label = fields[1], None, fields[3], fields[4]
        else:
            raise MalformedRowError(f"expected 7 (or 5) tab-separated fields, found {len(fields)}")
        if label not in ("0", "1"):
            raise MalformedRowError(f"Label must be 0 or 1, found {label!r}")
        if not question.strip() or not sentence.strip():
            raise MalformedRowError("empty question or sentence")
        return question, title, sentence, int(label)

    expected = (
        "a WikiQA TSV (QuestionID, Question, [DocumentID, DocumentTitle,] SentenceID, Sentence, "
        "Label)"
    )
    rows, report = _read_rows(path, parse, "QuestionID\t", expected, strict=strict)
    return pd.DataFrame(rows, columns=["question", "title", "sentence", "label"]), report


def _read_rows(path, parse, header_prefix: str, expected: str, *, strict: bool):
    """Parsed rows and the report; a byte that is not UTF-8 costs its row, not the file.
    ``header_prefix``: how a first line that is a header starts; ``expected``: the file's form."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"data file not found: {path}")
    rows, skipped, number = [], [], 0
    for number, line, reason in decoded(path):
        line = line.rstrip("\r\n")
        if reason is None:
            if (number == 1 and line.startswith(header_prefix)) or not line.strip():
                continue
            try:
                rows.append(parse(line.split("\t")))
                continue
            except MalformedRowError as bad:
                reason = str(bad)
        if strict:
            raise MalformedRowError(f"{path}:{number}: {reason}: {line[:120]!r}")
        skipped.append(SkippedRow(str(path), number, reason, line[:120]))
    if not rows:
        found = (
            f"its {number} line(s) hold no data row (a header only)" if number else "it is empty"
        )
        if skipped:
            found = f"all {len(skipped):,} of its rows are malformed and were skipped (line "
            found += f"{skipped[0].line}: {skipped[0].reason})"
        raise NoRowsError(
            f"{path} holds no well-formed row: {found}. Expected {expected}, tab-separated with "
            "no quoting; replace the file with the release's (see the data folder's README)."
        )
    return rows, ReadReport([str(path)], len(rows), skipped)


def decoded(path):
    """``(number, text, reason)`` for each line of ``path`` (ending at ``b"\\n"``); ``reason``
    names the byte of a line that is not UTF-8 (decoded with replacements), else ``None``."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8-sig" if number == 1 else "utf-8"), None
            except UnicodeDecodeError as bad:
                byte = f"byte 0x{raw[bad.start]:02x} at column {bad.start + 1}"
                yield number, raw.decode("utf-8", "replace"), f"not UTF-8 text ({byte})"


def to_json(value, *, missing: bool = False):
    """Plain-Python copy of ``value`` (numpy as numbers and lists, paths as strings);
    ``missing``: NaN and pandas' NA become None."""
    if isinstance(value, (np.ndarray, np.generic)):
        value = value.tolist()  # a list, or a Python number
    if isinstance(value, dict):
        return {str(k): to_json(v, missing=missing) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v, missing=missing) for v in value]
    if isinstance(value, Path):
        return str(value)
    if missing and (value is pd.NA or (isinstance(value, float) and np.isnan(value))):
        return None
    return value


def plain(value):
    """A metrics file's JSON value: :func:`to_json` with NaN as None (a metrics file refuses NaN)."""
    return to_json(value, missing=True)


def json_key(label: str) -> str:
    """A column label as a metrics file's key: ``"annotation $"`` -> ``"annotation_dollars"``."""
    words = re.findall(r"[a-z0-9]+", str(label).replace("$", " dollars ").lower())
    return "_".join(words)


def json_row(row: dict) -> dict:
    """A table row (a frame's ``to_dict("records")`` entry) with :func:`json_key` keys."""
    out = {json_key(k): v for k, v in row.items()}
    if len(out) != len(row):
        raise ValueError(f"columns {sorted(map(str, row))} give the same key twice")
    return out


def read_json(path, *, remedy: str = "delete it, and it is computed again", kind=CorruptFileError):
    """The JSON value in ``path``; a corrupt file is a ``kind`` error naming it and ``remedy``."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
        raise kind(
            f"{path} is truncated or corrupt ({type(error).__name__}: {error}): {remedy}"
        ) from error


def not_writable(path, error: OSError, *, setting: str = "run_dir") -> NotWritableError:
    """The error for a failed write of ``path``, naming the reason and the ``setting`` to change."""
    full = error.errno == errno.ENOSPC
    reason = "the disk is full" if full else (error.strerror or str(error))
    todo = "free space there or" if full else "make it writable or"
    return NotWritableError(
        f"cannot write {path}: {reason}; {todo} point {setting} at another folder"
    )


def write_json(path: Path, value) -> Path:
    """Write ``value`` (numpy allowed) as JSON atomically (:func:`write_atomic`)."""
    text = json.dumps(to_json(value), indent=2, sort_keys=True, allow_nan=False) + "\n"
    return write_atomic(path, lambda tmp: tmp.write_text(text))


def write_atomic(path, write, *, setting: str = "run_dir") -> Path:
    """``write(tmp)`` to a temporary beside ``path``, then rename it onto ``path``: a crash
    leaves the old file or the new one; a failed write is :func:`not_writable`'s error."""
    path = Path(path)
    tmp = temporary(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        os.replace(tmp, path)
    except OSError as error:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise not_writable(path, error, setting=setting) from error
    return path


class DurableStore:
    """An append-only SQLite file that threads and processes write (WAL, ``synchronous=FULL``,
    the subclass's ``SCHEMA`` applied): each use of ``_conn`` holds ``_lock``, each write is one
    committed transaction (``with self._lock, self._conn``)."""

    SCHEMA = ""

    def __init__(self, path, *, timeout: float = 30.0):
        self.path = Path(path)
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=timeout, check_same_thread=False)
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            _set_wal(self._conn, timeout)
            self._conn.execute("PRAGMA synchronous = FULL")
            with self._conn:
                self._conn.executescript(self.SCHEMA)
        except sqlite3.DatabaseError as error:
            self._conn.close()
            if isinstance(error, sqlite3.OperationalError):  # locked, read-only: not the file
                raise
            raise CorruptFileError(
                f"{self.path} is not a readable SQLite file ({error}): it holds labels that people "
                "or a paid service made, so it is not deleted; move it aside (and restore it from "
                "a copy if you have one), and a new, empty file is made"
            ) from error

    def _read(self, sql: str, args=()) -> pd.DataFrame:
        with self._lock:
            return pd.read_sql_query(sql, self._conn, params=args)

    def _write(self, sql: str, row: tuple) -> int:
        """The new row's id, committed (and fsynced) before returning."""
        with self._lock, self._conn:
            return int(self._conn.execute(sql, row).lastrowid)

    def close(self) -> None:
        """Close the connection (every write is already committed)."""
        with self._lock:
            self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def check_name(name: str, value) -> None:
    """A store's name column (an annotator, a task): a non-empty string, else a ValueError."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")


def _set_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch the file to WAL, retrying within ``timeout``: the switch runs no busy handler, so
    a second process opening a new file at once gets "database is locked"."""
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
                return
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower()
            if mode == "wal":
                return
            error = sqlite3.OperationalError(f"journal mode stayed {mode!r}, not 'wal'")
        except sqlite3.OperationalError as caught:
            if "locked" not in str(caught):
                raise
            error = caught
        if time.monotonic() > deadline:
            raise sqlite3.OperationalError(
                f"could not switch {conn!r} to WAL within {timeout:.0f} s: {error}"
            ) from error
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


# a temporary names its writer's pid and host: only this host's dead writers' are removed, as a
# Ray cluster shares folders
_TEMPORARY = re.compile(r"\.(\d+)(?:-([0-9a-f]{6}))?\.tmp(\.[A-Za-z0-9]+)?$")
HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]


def temporary(path) -> Path:
    """The temporary to write ``path`` under: ``<stem>.<pid>-<host>.tmp<suffix>`` (numpy's
    writers insist on the suffix)."""
    path = Path(path)
    return path.with_name(f"{path.stem}.{os.getpid()}-{HOST}.tmp{path.suffix}")


def is_temporary(path) -> bool:
    return _TEMPORARY.search(Path(path).name) is not None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        pass
    return True


def remove_stale(folder, *, recursive: bool = False, pattern: str = "*.tmp*") -> list[Path]:
    """Delete the temporaries under ``folder`` (matching ``pattern``) whose writer on this
    machine no longer runs; returns what was deleted."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    for path in folder.rglob(pattern) if recursive else folder.glob(pattern):
        match = _TEMPORARY.search(path.name)
        if match is None or match.group(2) not in (None, HOST) or _alive(int(match.group(1))):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


@contextmanager
def locked(path, *, on_wait=None):
    """Hold filelock's exclusive lock on ``path`` for the block; another process waits
    (``on_wait()`` called once when it has to)."""
    from filelock import FileLock, Timeout

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        if on_wait is not None:
            on_wait()
        lock.acquire()
    try:
        yield
    finally:
        lock.release()
