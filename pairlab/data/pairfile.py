"""Your own pairs: any labelled pair file (or DataFrame) as an all-pairs task, :func:`load_pairs`.

Files are CSV (standard quoting), TSV (tab-separated, no quoting: quotes are text, as in the QQP
and WikiQA releases), JSON lines, or Parquet, each with a header naming its columns. CSV and TSV
are read with the standard library's ``csv`` reader and JSON lines line by line, so that every
skipped row is reported with its line number (pandas reports only some, and stops at the first
bad JSON line); Parquet is read with pandas, and its rows are numbered instead of lines.

What is wrong with the whole file (no such column, empty, no positives, labels that are neither
binary nor numeric, graded labels without a threshold) is a ``ValueError`` naming the file, line
and column; what is wrong with one row (empty text or label, a wrong number of fields, bad JSON,
bytes that are not UTF-8) costs that row only, counted and reported in ``task.report``.
"""
from __future__ import annotations

import csv
import json
import math
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import NoRowsError, ReadReport, SkippedRow
from .build import build_asymmetric, build_symmetric
from .tasks import BUILT_IN, SPLITS, Task

__all__ = ["load_pairs", "read_pair_file", "pair_rows", "SUFFIXES", "is_pair_file", "pair_task_name"]

SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
            ".parquet": "parquet", ".pq": "parquet"}
SPLIT_ALIASES = {"validation": "dev", "valid": "dev", "val": "dev"}
_TRUE_FALSE = {"true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0}


def load_pairs(source, *, symmetric: bool, left: str = "text1", right: str = "text2",
               label: str = "label", positive_threshold=None, left_id=None, right_id=None,
               split_column=None, fractions=(0.5, 0.25, 0.25), seed: int = 0, max_items=None,
               name: str | None = None, check_splits: bool = True) -> Task:
    """The all-pairs task of a labelled pair file or DataFrame.

    ``symmetric``: both columns hold the same kind of item (duplicates, paraphrases): the items
    are the distinct texts (or ids, with ``left_id``/``right_id``), positives the transitive
    closure of the positive pairs, and items are split by connected components of all stated
    pairs. Otherwise (question -> answer) each split's left items (``split_column``'s, else a
    random split by ``fractions``) are paired with every distinct right item. ``label`` is 0/1
    (or true/false); graded labels (a 0-5 score) need ``positive_threshold``: a pair is positive
    when its label is at least the threshold. ``max_items`` caps the left items per split (an
    int or a dict by split). ``name`` defaults to the file's stem (``"pairs"`` for a frame).
    ``check_splits``: a split without two items or a positive is an error that says why (the
    built-in tasks, whose behaviour is pinned, skip the check)."""
    if not isinstance(symmetric, (bool, np.bool_)):
        raise TypeError(f"symmetric must be True (duplicates, paraphrases: both columns hold the "
                        f"same kind of item) or False (question -> answer), got {symmetric!r}")
    if symmetric and split_column is not None:
        raise ValueError(f"split_column={split_column!r} is for asymmetric tasks: a symmetric task "
                         "is split by connected components of its pairs, so that no pair crosses "
                         "splits; leave split_column unset")
    if (left_id is None) != (right_id is None):
        raise ValueError(f"give both left_id and right_id or neither, got left_id={left_id!r}, "
                         f"right_id={right_id!r}")
    if isinstance(source, pd.DataFrame):
        frame, lines, report, where = source, None, ReadReport(["<DataFrame>"], len(source)), "<DataFrame>"
    else:
        frame, lines, report = read_pair_file(source)
        where = str(source)
    columns = {"left": left, "right": right, "label": label, "left_id": left_id,
               "right_id": right_id, "split": split_column}
    rows, skipped = pair_rows(frame, columns, positive_threshold=positive_threshold,
                              source=where, lines=lines)
    report = ReadReport(report.files, report.rows_read - len(skipped),
                        sorted(report.skipped + skipped, key=lambda row: row.line))
    name = name or (pair_task_name(source) if not isinstance(source, pd.DataFrame) else "pairs")
    build = partial(_build, name, rows, symmetric=bool(symmetric), keyed=left_id is not None,
                    seed=seed, fractions=fractions)
    task = build(max_items=max_items)
    if check_splits:
        _check_splits(task, where)
    notes = dict(task.notes)
    if not isinstance(source, pd.DataFrame):
        notes["source"] = str(source)
    if positive_threshold is not None:
        notes["positive_threshold"] = positive_threshold
    return Task(task.name, task.splits, notes, report, rebuild=build)


def _build(name, rows, *, symmetric, keyed, seed, fractions, max_items) -> Task:
    if symmetric:
        return build_symmetric(name, rows, seed=seed, fractions=fractions, max_items=max_items,
                               keyed=keyed)
    return build_asymmetric(name, rows, seed=seed, fractions=fractions, max_items=max_items)


def _check_splits(task: Task, source: str) -> None:
    """A split that cannot be trained or measured on is an error naming the reason."""
    for split in SPLITS:
        pool = task[split]
        if len(pool.left_texts) >= 2 and pool.n_positives > 0:
            continue
        items = sum(len(task[s].left_texts) for s in SPLITS)
        sizes = "/".join(f"{len(task[s].left_texts):,}" for s in SPLITS)
        why = (f"a symmetric task is split by whole connected components of its stated pairs, and "
               f"these split its {items:,} items {sizes} (a component too large for a split's share "
               "puts it all in one split; state fewer pairs per item, or more items)" if task.symmetric else
               f"{items:,} left items and {task.notes.get('rows', 0):,} rows are split "
               f"{'by the split column' if 'fractions' not in task.notes else 'at random'}")
        raise ValueError(f"{source}: the {split} split has {len(pool.left_texts)} item(s) and "
                         f"{pool.n_positives} positive(s), too few to train or measure on: {why}. "
                         "Change fractions (or max_items), or add labelled pairs")


def pair_task_name(path) -> str:
    """A file's task name: its stem (``faq`` for ``faq.jsonl``), never a built-in task's."""
    stem = Path(path).stem or "pairs"
    return f"{stem}_file" if stem in BUILT_IN else stem  # never mistaken for the paper's tasks


def is_pair_file(dataset) -> bool:
    """Whether ``dataset`` (a notebook's parameter) names a file rather than a task."""
    text = str(dataset)
    return Path(text).suffix.lower() in SUFFIXES or "/" in text or "\\" in text or Path(text).is_file()


# ---------------------------------------------------------------------------------------------
# Reading a file


def read_pair_file(path) -> tuple[pd.DataFrame, np.ndarray | None, ReadReport]:
    """The rows of a pair file as a frame of strings (JSON values as read), the line number of
    each row (``None`` for Parquet: rows are numbered), and the report of skipped rows."""
    path = Path(path)
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ValueError(f"{path}: cannot tell the format from the suffix {path.suffix!r}; "
                         f"expected one of {sorted(SUFFIXES)} (CSV, TSV, JSON lines, Parquet)")
    if not path.is_file():
        raise FileNotFoundError(f"pair file not found: {path}")
    if kind == "parquet":
        return _read_parquet(path)
    frame, lines, skipped = (_read_jsonl(path) if kind == "jsonl"
                             else _read_delimited(path, kind))
    return frame, lines, ReadReport([str(path)], len(frame), skipped)


def _decoded(path: Path, bad: set):
    """The file's lines as text; a line that is not UTF-8 is decoded with replacements and its
    number added to ``bad`` (its row is then skipped and reported)."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError:
                bad.add(number)
                yield raw.decode("utf-8", "replace")


def _read_delimited(path: Path, kind: str):
    bad: set = set()
    quoting = csv.QUOTE_MINIMAL if kind == "csv" else csv.QUOTE_NONE
    reader = csv.reader(_decoded(path, bad), delimiter="," if kind == "csv" else "\t",
                        quoting=quoting, strict=False)
    try:
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            raise NoRowsError(f"{path} is empty: expected a header line naming the columns, then "
                              "one pair per line")
        header = [h.strip() for h in header]
        twice = sorted({h for h in header if header.count(h) > 1})
        if twice:
            raise ValueError(f"{path}:1: the header names {twice} more than once")
        rows, lines, skipped, previous = [], [], [], reader.line_num
        for fields in reader:
            start, end, previous = previous + 1, reader.line_num, reader.line_num
            if not any(f.strip() for f in fields):
                continue
            reason = ("not UTF-8 text" if any(n in bad for n in range(start, end + 1)) else
                      None if len(fields) == len(header) else
                      f"expected {len(header)} fields, found {len(fields)}")
            if reason:
                skipped.append(SkippedRow(str(path), start, reason, ",".join(fields)[:120]))
                continue
            rows.append(fields)
            lines.append(start)
    except csv.Error as error:
        raise ValueError(f"{path}:{reader.line_num}: not readable as {kind.upper()} ({error})") from None
    if not rows:
        raise NoRowsError(_no_rows(path, skipped))
    return pd.DataFrame(rows, columns=header, dtype=object), np.asarray(lines), skipped


def _read_jsonl(path: Path):
    bad: set = set()
    records, lines, skipped = [], [], []
    for number, line in enumerate(_decoded(path, bad), start=1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        if number == 1 and line.lstrip().startswith("["):
            raise ValueError(f"{path}:1: a JSON array, not JSON lines; write one object per line "
                             "(pandas: frame.to_json(path, orient='records', lines=True))")
        try:
            record = None if number in bad else json.loads(line)
        except ValueError as error:
            skipped.append(SkippedRow(str(path), number, f"not valid JSON ({error})", line[:120]))
            continue
        if not isinstance(record, dict):
            reason = "not UTF-8 text" if number in bad else "not a JSON object"
            skipped.append(SkippedRow(str(path), number, reason, line[:120]))
            continue
        records.append(record)
        lines.append(number)
    if not records:
        raise NoRowsError(_no_rows(path, skipped))
    return pd.DataFrame.from_records(records), np.asarray(lines), skipped


def _read_parquet(path: Path):
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError, ImportError) as error:  # pyarrow's ArrowInvalid is a ValueError
        raise ValueError(f"{path} is not a readable Parquet file ({type(error).__name__}: "
                         f"{error})") from None
    if frame.empty:
        raise NoRowsError(f"{path} holds no rows")
    return frame, None, ReadReport([str(path)], len(frame))


def _no_rows(path: Path, skipped: list) -> str:
    if not skipped:
        return f"{path} has a header and no rows: expected one pair per line after it"
    first = skipped[0]
    return (f"{path} holds no well-formed row: all {len(skipped):,} were skipped (line "
            f"{first.line}: {first.reason})")


# ---------------------------------------------------------------------------------------------
# Checking and normalising the rows


def pair_rows(frame: pd.DataFrame, columns: dict, *, positive_threshold=None, source="<DataFrame>",
              lines=None) -> tuple[pd.DataFrame, list[SkippedRow]]:
    """The rows the builders take (``left, right, label`` int8, ``left_key, right_key``, and
    ``split`` where a split column is named) and the rows skipped. ``columns`` maps ``left``,
    ``right``, ``label`` and optionally ``left_id``, ``right_id``, ``split`` to ``frame``'s
    column names; ``lines`` are the rows' line numbers in ``source`` (else rows are numbered)."""
    _check_columns(frame, columns, source)
    where = lines if lines is not None else np.arange(1, len(frame) + 1)

    def at(i: int) -> str:  # where row i is, for messages
        return f"{source}:{where[i]}" if lines is not None else f"{source} row {where[i]}"

    labels, bad_label = _labels(frame[columns["label"]], positive_threshold, columns["label"], at)
    out = pd.DataFrame({"left": _texts(frame[columns["left"]]),
                        "right": _texts(frame[columns["right"]]), "label": labels})
    reasons = pd.Series(bad_label, index=frame.index, dtype=object)
    for side in ("left", "right"):
        _flag(reasons, _blank(out[side]), f"empty text in column {columns[side]!r}")
        key = columns[f"{side}_id"]
        # ids keep their type (QQP's int64 qids sort as numbers), texts are compared as they are
        out[f"{side}_key"] = out[side] if key is None else frame[key]
        if key is not None:
            _flag(reasons, _blank(frame[key]), f"empty id in column {key!r}")
    if columns.get("split") is not None:
        out["split"] = _splits(frame[columns["split"]], columns["split"], at)
        _flag(reasons, _blank(out["split"]), f"empty split in column {columns['split']!r}")
    bad = reasons.notna().to_numpy()
    skipped = [SkippedRow(source, int(where[i]), reasons.iloc[i], _row_text(frame, i))
               for i in np.flatnonzero(bad)]
    out = out[~bad].reset_index(drop=True)
    if out.empty:
        raise NoRowsError(f"{source} holds no usable row: all {len(frame):,} were skipped "
                          f"({skipped[0].reason} at {at(0)})")
    if not (out["label"] == 1).any():
        rule = (f"no label reaches positive_threshold={positive_threshold}" if positive_threshold
                is not None else "every label is 0")
        raise ValueError(f"{source}: no positive pair in column {columns['label']!r}: {rule}. A "
                         "task needs positives; check the label column (and the threshold)")
    return out, skipped


def _check_columns(frame: pd.DataFrame, columns: dict, source: str) -> None:
    named = {role: col for role, col in columns.items() if col is not None}
    missing = {role: col for role, col in named.items() if col not in frame.columns}
    if not missing:
        return
    header = SUFFIXES.get(Path(source).suffix.lower()) in ("csv", "tsv")
    at = f"{source}:1 (the header)" if header else source
    found = [str(c) for c in frame.columns]
    raise ValueError(f"{at} has no column {', '.join(map(repr, missing.values()))} (asked for as "
                     f"{', '.join(missing)}); its columns are {found}. Name the columns with "
                     "load_pairs(left=..., right=..., label=..., left_id=..., right_id=..., "
                     "split_column=...), or in a notebook with pairs_columns={'left': ..., "
                     "'right': ..., 'label': ...}")


def _texts(column: pd.Series) -> pd.Series:
    """The column as strings, kept as they are; missing values become empty strings."""
    if column.map(type).eq(str).all():
        return column
    return column.map(lambda v: v if isinstance(v, str) else "" if _missing(v) else str(v))


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _blank(column: pd.Series) -> np.ndarray:
    """Which values are missing or only whitespace."""
    return _texts(column).str.strip().eq("").to_numpy()


def _flag(reasons: pd.Series, mask, reason: str) -> None:
    """Record ``reason`` for the rows of ``mask`` that have none yet."""
    reasons[np.asarray(mask) & reasons.isna().to_numpy()] = reason


def _labels(column: pd.Series, threshold, name: str, at):
    """Labels (int8: 1 positive) and the reason each unusable row is skipped (``None``: kept).
    A column that holds no number at all, or graded values without ``threshold``, is an error."""
    text = _texts(column).str.strip().str.lower()
    number = pd.to_numeric(text.map(lambda t: _TRUE_FALSE.get(t, t)), errors="coerce").to_numpy(float)
    empty = (text == "").to_numpy() | (text == "nan").to_numpy()
    not_number = ~empty & ~np.isfinite(number)
    if not_number.any() and not_number.sum() == (~empty).sum():
        i = int(np.flatnonzero(not_number)[0])
        raise ValueError(f"{at(i)}: column {name!r} is neither binary nor "
                         f"numeric (first value {column.iloc[i]!r}); the label column must hold "
                         "0/1 (or true/false, yes/no), or numbers with positive_threshold")
    if threshold is None:
        graded = ~empty & ~not_number & ~np.isin(number, (0.0, 1.0))
        if graded.any():
            i = int(np.flatnonzero(graded)[0])
            raise ValueError(f"{at(i)}: column {name!r} holds {column.iloc[i]!r}, "
                             "not 0 or 1: graded labels need positive_threshold (a pair is positive "
                             "when its label is at least the threshold; in a notebook: pairs_threshold)")
        labels = number == 1.0
    else:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
            raise ValueError(f"positive_threshold must be a finite number, got {threshold!r}")
        labels = number >= threshold
    reasons = np.where(empty, f"empty label in column {name!r}",
                       np.where(not_number, f"label in column {name!r} is not a number", None))
    return labels.astype(np.int8), reasons


def _splits(column: pd.Series, name: str, at) -> pd.Series:
    split = _texts(column).str.strip().str.lower().replace(SPLIT_ALIASES)
    unknown = ~split.isin(SPLITS + ("",))
    if unknown.any():
        i = int(np.flatnonzero(unknown.to_numpy())[0])
        raise ValueError(f"{at(i)}: split column {name!r} holds "
                         f"{column.iloc[i]!r}; expected train, dev (or validation) or test")
    return split


def _row_text(frame: pd.DataFrame, i: int) -> str:
    return " | ".join(str(v) for v in frame.iloc[i].tolist())[:120]
