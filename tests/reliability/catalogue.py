"""The bad-input catalogue's record (issue 20, part 3): every test of tests/reliability says, per
row of the catalogue, what input it gave and what came out, so that the docs table is rendered
from a test run instead of typed.

With ``$PAIRLAB_RELIABILITY_OUT`` naming a folder, the rows go to ``bad_input.json`` there
(``bad_input.<worker>.json`` under pytest-xdist, one file per worker), written when the session
ends. Only rows whose test's checks passed are recorded.
"""

from __future__ import annotations

import json
import os
import re
from contextlib import contextmanager
from pathlib import Path

import pytest

ROWS: list[dict] = []
ROOT = Path(__file__).resolve().parents[2]
TMP = re.compile(r"/[^\s'\"]*?/pytest-\d+/(?:popen-gw\d+/)?[^/\s'\"]+")  # a test's tmp_path
OUTCOMES = ("clear error", "reported skip", "recomputed, with a warning", "not reused", "works")


def record(row: str, input: str, outcome: str, error: str | None = None) -> None:
    """One line of the catalogue: the row it belongs to, the input given, the outcome, and the
    error or report as ``"<Type>: <first line>"``."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome {outcome!r} is not one of {OUTCOMES}")
    ROWS.append(
        {
            "row": row,
            "input": portable(input),
            "outcome": outcome,
            "error": None if error is None else portable(error),
        }
    )


def portable(text: str) -> str:
    """``text`` with this machine's paths as ``<tmp>`` and ``<repo>`` and a local test server's
    port as ``<port>``, for a table in the docs."""
    text = TMP.sub("<tmp>", str(text)).replace(str(ROOT), "<repo>")
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", text)


def first_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}"


@contextmanager
def clear_error(row: str, input: str, kind, *needles: str):
    """Expect ``kind`` to be raised inside the block with a message holding every one of
    ``needles`` (the thing named, what to do; case-insensitive), and no bare library error
    type; records the row."""
    with pytest.raises(kind) as caught:
        yield caught
    message = str(caught.value)
    for needle in needles:
        assert str(needle).lower() in message.lower(), f"{needle!r} not in: {message}"
    record(row, input, "clear error", first_line(caught.value))


def skip_summary(report) -> str:
    """``ReadReport: skipped N ...; first at path:line: reason`` for a reported skip."""
    first = report.skipped[0]
    return (
        f"ReadReport: skipped {len(report.skipped)} malformed row(s); first "
        f"{Path(first.path).name}:{first.line}: {first.reason}"
    )


@pytest.fixture(scope="session", autouse=True)
def catalogue_file():
    """Writes the rows at the end of the session where ``$PAIRLAB_RELIABILITY_OUT`` asks for
    them. Every test module of tests/reliability imports this fixture; each writes every row
    recorded so far, so the last to finish leaves them all."""
    yield ROWS
    folder = os.environ.get("PAIRLAB_RELIABILITY_OUT")
    if not folder or not ROWS:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    path = Path(folder) / (f"bad_input.{worker}.json" if worker else "bad_input.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = sorted(ROWS, key=lambda r: (r["row"], r["input"]))
    path.write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
