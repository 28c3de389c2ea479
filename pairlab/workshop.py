"""Participant copies of the notebooks for a workshop: ``python -m pairlab.workshop [--out DIR]``
(``make workshop``). An exercise is a markdown cell tagged ``exercise`` followed by one code
cell tagged ``solution``; a participant copy replaces each solution by an empty code cell
tagged ``your-answer`` and drops all outputs, so no later cell may read what a solution defines."""

from __future__ import annotations

import argparse
import ast
import copy
import re
import sys
from pathlib import Path

import nbformat

from .paths import shown
from .runner import after, notebooks

__all__ = ["exercises", "check", "participant_copy", "write", "guide"]

EXERCISE, SOLUTION, ANSWER = "exercise", "solution", "your-answer"
PLACEHOLDER = "# Your answer here: the exercise above says what to write and what to check."


def _tags(cell) -> list:
    return list(cell.get("metadata", {}).get("tags", []))


def exercises(nb) -> list[dict]:
    """The exercises of notebook ``nb`` (an nbformat node): ``{"title", "exercise", "solution"}``
    with the cells' indexes (``solution`` None where the exercise has none)."""
    found = []
    for i, cell in enumerate(nb.cells):
        if EXERCISE in _tags(cell):
            title = next(
                (line.lstrip("# ").strip() for line in cell.source.splitlines() if line.strip()), ""
            )
            found.append({"title": title, "exercise": i, "solution": None})
        elif SOLUTION in _tags(cell):
            if not found or found[-1]["solution"] is not None:
                raise ValueError(f"cell {i} is a solution without an exercise cell before it")
            found[-1]["solution"] = i
    return found


def check(nb, name: str = "notebook") -> list[dict]:
    """:func:`exercises`, each checked to be a markdown cell followed by one code solution that
    no later cell depends on; else a ``ValueError``."""
    found = exercises(nb)
    for ex in found:
        cell = nb.cells[ex["exercise"]]
        if cell.cell_type != "markdown":
            raise ValueError(f"{name}: exercise cell {ex['exercise']} must be markdown (the task)")
        if ex["solution"] is None:
            raise ValueError(f"{name}: exercise {ex['title']!r} has no solution cell")
        kinds = [c.cell_type for c in nb.cells[ex["exercise"] + 1 : ex["solution"] + 1]]
        if kinds != ["markdown"] * (len(kinds) - 1) + ["code"]:
            raise ValueError(
                f"{name}: the solution of {ex['title']!r} must be the first code cell "
                "after its exercise"
            )
    # participants run every cell but the solutions: no other cell may read what only one defines
    solutions = {ex["solution"]: ex["title"] for ex in found}
    defined, only_in = set(), {}
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        stored, loaded = _names(cell.source)
        if i in solutions:
            only_in.update({n: solutions[i] for n in stored - defined})
            continue
        late = sorted(n for n in loaded & set(only_in) if n not in defined)
        if late:
            raise ValueError(
                f"{name}: cell {i} reads {late}, defined only by the solution of "
                f"{only_in[late[0]]!r}: participants will not have it"
            )
        defined |= stored
    return found


def _names(source: str) -> tuple[set, set]:
    """(names bound, names read) of a code cell; IPython magics and shell lines skipped."""
    code = "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
    )
    tree = ast.parse(code)
    stored, loaded = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (stored if isinstance(node.ctx, ast.Store) else loaded).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stored.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stored |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return stored, loaded


def participant_copy(nb):
    """A copy of ``nb``, its solutions replaced by empty tagged code cells, without outputs."""
    from nbconvert.preprocessors import ClearOutputPreprocessor

    out, _ = ClearOutputPreprocessor().preprocess(copy.deepcopy(nb), {})
    out.cells = [
        nbformat.v4.new_code_cell(PLACEHOLDER, metadata={"tags": [ANSWER]})
        if SOLUTION in _tags(cell)
        else cell
        for cell in out.cells
    ]
    return out


def write(notebooks, out_dir) -> list[tuple[Path, int]]:
    """Participant copies of ``notebooks`` (.ipynb paths) in ``out_dir``, each checked first;
    returns each written path with its number of exercises."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    written = []
    for path in map(Path, notebooks):
        nb = nbformat.read(path, as_version=4)
        written.append((Path(out_dir, path.name), len(check(nb, path.name))))
        nbformat.write(participant_copy(nb), written[-1][0])
    return written


def guide(root: Path, seconds: dict | None = None) -> list[dict]:
    """What WORKSHOP.md lists per notebook: ``{"stem", "number", "title", "after", "seconds",
    "exercises"}`` (title: its first heading; seconds: from a timings file's ``notebooks``)."""
    out = []
    for path in notebooks(Path(root)):
        nb = nbformat.read(path, as_version=4)
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        heading = re.search(r"^# (.*)$", text, re.M)
        title = heading[1].split("·", 1)[-1].strip() if heading else path.stem
        exercise_titles = [ex["title"] for ex in exercises(nb)]
        out.append(
            dict(stem=path.stem, number=path.stem[:2], title=title, after=after(path))
            | dict(seconds=(seconds or {}).get(path.stem), exercises=exercise_titles)
        )
    return out


def main(argv=None) -> int:
    root = Path(__file__).resolve().parents[1]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(root / "workshop"), help="default: workshop/")
    args = parser.parse_args(argv)
    for path, n in write(notebooks(root), args.out):
        print(f"{shown(path, root)}: {n} exercise(s), solutions removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
