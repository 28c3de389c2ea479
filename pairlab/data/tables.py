"""One table (CSV, TSV without quoting, JSON lines, Parquet, or a DataFrame) read with each skipped
row reported by its line (pandas reports only some)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import NoRowsError, ReadReport, SkippedRow, decoded

__all__ = [
    "SUFFIXES",
    "read_source",
    "check_columns",
    "text_column",
    "blank",
    "flag",
    "located",
    "skip_rows",
]

SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
FRAME = "<DataFrame>"  # where a DataFrame's rows are, in messages


def read_source(source, *, what: str) -> tuple[pd.DataFrame, np.ndarray | None, ReadReport, str]:
    """A file (by path) or a DataFrame as ``(frame, lines, report, where)``: its rows (a file's as
    strings), each row's line number (``None`` for a DataFrame or Parquet), the report of rows
    skipped while reading, and its name in messages; ``what`` names one row (``"pair"``)."""
    if isinstance(source, pd.DataFrame):
        return source, None, ReadReport([FRAME], len(source)), FRAME
    path = Path(source)
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ValueError(
            f"{path}: cannot tell the format from the suffix {path.suffix!r}; "
            f"expected one of {sorted(SUFFIXES)} (CSV, TSV, JSON lines, Parquet)"
        )
    if not path.is_file():
        raise FileNotFoundError(f"{what} file not found: {path}")
    if kind == "parquet":
        try:
            frame, lines, skipped = pd.read_parquet(path), None, []
        except (OSError, ValueError, ImportError) as error:  # pyarrow's ArrowInvalid: ValueError
            why = f"{type(error).__name__}: {error}"
            raise ValueError(f"{path} is not a readable Parquet file ({why})") from None
        if frame.empty:
            raise NoRowsError(f"{path} holds no rows")
    else:
        read = _read_jsonl if kind == "jsonl" else _read_delimited
        frame, lines, skipped = read(path, kind, what)
        if not len(frame) and not skipped:
            raise NoRowsError(
                f"{path} has a header and no rows: expected one {what} per line after it"
            )
        if not len(frame):
            first = skipped[0]
            raise NoRowsError(
                f"{path} holds no well-formed row: all {len(skipped):,} were skipped "
                f"(line {first.line}: {first.reason})"
            )
    return frame, lines, ReadReport([str(path)], len(frame), skipped), str(source)


def _read_delimited(path: Path, kind: str, what: str):
    numbered = list(decoded(path))
    bad = {number for number, _, reason in numbered if reason}  # lines that are not UTF-8
    delimiter, quoting = (",", csv.QUOTE_MINIMAL) if kind == "csv" else ("\t", csv.QUOTE_NONE)
    texts = [text for _, text, _ in numbered]
    reader = csv.reader(texts, delimiter=delimiter, quoting=quoting, strict=False)
    try:
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            raise NoRowsError(
                f"{path} is empty: expected a header line naming the columns, then "
                f"one {what} per line"
            )
        header = [h.strip() for h in header]
        twice = sorted({h for h in header if header.count(h) > 1})
        if twice:
            raise ValueError(f"{path}:1: the header names {twice} more than once")
        rows, lines, skipped, previous = [], [], [], reader.line_num
        for fields in reader:
            start, end, previous = previous + 1, reader.line_num, reader.line_num
            if not any(f.strip() for f in fields):
                continue
            if any(n in bad for n in range(start, end + 1)):
                reason = "not UTF-8 text"
            elif len(fields) != len(header) and end > start:  # never a skip: lines lost
                raise ValueError(
                    f"{path}:{start}: a quote opened on this line is closed on line {end} or "
                    f"never, so lines {start}-{end} read as one row of {len(fields)} fields "
                    f"(the header has {len(header)}): close the quote, or remove it"
                )
            elif len(fields) != len(header):
                reason = f"expected {len(header)} fields, found {len(fields)}"
            else:
                rows.append(fields)
                lines.append(start)
                continue
            skipped.append(SkippedRow(str(path), start, reason, ",".join(fields)[:120]))
    except csv.Error as error:
        raise ValueError(
            f"{path}:{reader.line_num}: not readable as {kind.upper()} ({error})"
        ) from None
    return pd.DataFrame(rows, columns=header, dtype=object), np.asarray(lines), skipped


def _read_jsonl(path: Path, kind: str, what: str):
    records, lines, skipped = [], [], []
    for number, line, bad in decoded(path):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        if number == 1 and line.lstrip().startswith("["):
            raise ValueError(
                f"{path}:1: a JSON array, not JSON lines; write one object per line "
                "(pandas: frame.to_json(path, orient='records', lines=True))"
            )
        try:
            record = None if bad else json.loads(line)
            reason = (
                "not UTF-8 text" if bad else not isinstance(record, dict) and "not a JSON object"
            )
        except ValueError as error:
            reason = f"not valid JSON ({error})"
        if reason:
            skipped.append(SkippedRow(str(path), number, reason, line[:120]))
            continue
        records.append(record)
        lines.append(number)
    return pd.DataFrame.from_records(records), np.asarray(lines), skipped


def check_columns(frame: pd.DataFrame, columns: dict, source: str, *, remedy: str) -> None:
    """A ``ValueError`` naming the columns of ``columns`` (role -> column name, ``None``: not
    asked for) that ``frame`` lacks, the columns it has, and ``remedy``."""
    missing = {r: c for r, c in columns.items() if c is not None and c not in frame.columns}
    if not missing:
        return
    header = SUFFIXES.get(Path(source).suffix.lower()) in ("csv", "tsv")
    at = f"{source}:1 (the header)" if header else source
    found = [str(c) for c in frame.columns]
    raise ValueError(
        f"{at} has no column {', '.join(map(repr, missing.values()))} (asked for as "
        f"{', '.join(missing)}); its columns are {found}. {remedy}"
    )


def located(source: str, lines):
    """``at(i)``: where row ``i`` is, for messages (``file.csv:12`` or ``<DataFrame> row 12``)."""
    return lambda i: f"{source}:{lines[i]}" if lines is not None else f"{source} row {i + 1}"


def text_column(column: pd.Series) -> pd.Series:
    """The column as strings, kept as they are; missing values become empty strings."""
    if column.map(type).eq(str).all():
        return column
    return column.where(column.notna(), "").map(str)


def blank(column: pd.Series) -> np.ndarray:
    """Which values are missing or only whitespace."""
    return text_column(column).str.strip().eq("").to_numpy()


def flag(reasons: pd.Series, mask, reason) -> None:
    """Record ``reason`` (one, or one per row) for the rows of ``mask`` that have none yet."""
    mask = np.asarray(mask) & reasons.isna().to_numpy()
    reasons[mask] = reason if isinstance(reason, str) else np.asarray(reason, dtype=object)[mask]


def skip_rows(frame: pd.DataFrame, reasons: pd.Series, where: str, lines, what: str, report):
    """Which rows have a reason to be skipped (bool (n,)), and ``report`` with them moved to the
    skipped ones, in line order; a ``NoRowsError`` when every row has one."""
    line = lines if lines is not None else np.arange(1, len(frame) + 1)
    bad = reasons.notna().to_numpy()
    skipped = [
        SkippedRow(where, int(line[i]), reasons.iloc[i], " | ".join(map(str, frame.iloc[i]))[:120])
        for i in np.flatnonzero(bad)
    ]
    if bad.all():
        raise NoRowsError(
            f"{where} holds no usable {what}: all {len(frame):,} were skipped "
            f"({skipped[0].reason} at {located(where, lines)(0)})"
        )
    skipped = sorted(report.skipped + skipped, key=lambda row: row.line)
    return bad, ReadReport(report.files, report.rows_read - int(bad.sum()), skipped)
