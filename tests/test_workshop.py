"""Workshop copies (pairlab.workshop): exercises paired with one solution each, solutions
removed from the participant copies, and no later cell reading what only a solution defines."""

import nbformat
import pytest

from pairlab import workshop

md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def exercise(title="Exercise 1.1: predict it"):
    return md(f"### {title}\n\nPredict, then run.", metadata={"tags": ["exercise"]})


def solution(source="answer = 2 + 2\nassert answer == 4"):
    return code(source, metadata={"tags": ["solution"]})


def test_a_participant_copy_has_no_solution_and_no_output():
    shown = code(
        "x = 1\nx",
        outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "1"})],
        execution_count=3,
    )
    nb = notebook(shown, exercise(), solution(), md("after"), code("print(x)"))
    assert workshop.check(nb) == [
        {"title": "Exercise 1.1: predict it", "exercise": 1, "solution": 2}
    ]
    copy = workshop.participant_copy(nb)
    assert [c.cell_type for c in copy.cells] == ["code", "markdown", "code", "markdown", "code"]
    assert copy.cells[2].source == workshop.PLACEHOLDER
    assert copy.cells[2].metadata["tags"] == ["your-answer"]
    assert "2 + 2" not in "".join(c.source for c in copy.cells)
    assert copy.cells[0].outputs == [] and copy.cells[0].execution_count is None
    assert nb.cells[2].source.startswith("answer")  # the original is left alone


def test_write_checks_and_writes_every_notebook(tmp_path):
    src = tmp_path / "01_a.ipynb"
    nbformat.write(notebook(exercise(), solution()), src)
    [(path, n)] = workshop.write([src], tmp_path / "out")
    assert n == 1 and path == tmp_path / "out" / "01_a.ipynb"
    assert not workshop.exercises(nbformat.read(path, as_version=4))[0]["solution"]


@pytest.mark.parametrize(
    "cells, message",
    [
        ((exercise(),), "has no solution"),
        ((solution(),), "without an exercise"),
        ((exercise(), solution(), solution()), "without an exercise"),
        ((exercise(), code("y = 1"), solution()), "first code cell"),
        ((code("x = 1", metadata={"tags": ["exercise"]}), solution()), "must be markdown"),
        (
            (exercise(), solution("mine = 3"), code("print(mine + 1)")),
            "defined only by the solution",
        ),
    ],
)
def test_broken_exercises_are_named(cells, message):
    with pytest.raises(ValueError, match=message):
        workshop.check(notebook(*cells), "nb")


def test_names_a_solution_shares_with_the_notebook_are_fine():
    """A solution may re-bind what the notebook defined before it; magics are skipped."""
    nb = notebook(
        code("results = {}\n%matplotlib inline"),
        exercise(),
        solution("results = dict(a=1)\nimport numpy as np"),
        code("print(results, len)"),
    )
    assert len(workshop.check(nb)) == 1


def test_the_start_page_lists_every_notebook_with_its_time_needs_and_exercises():
    """WORKSHOP.md is rendered from the notebooks (title, the runs each reads, exercises) and
    the quick profile's recorded times; a notebook added or an exercise written shows up."""
    import json

    from pairlab import report
    from pairlab.paths import project_root

    root = project_root()
    text = report.render("WORKSHOP.md", root)
    times = json.loads((root / "results" / "quick" / "timings.json").read_text())["notebooks"]
    for nb in workshop.guide(root, times):
        row = next(line for line in text.splitlines() if line.startswith(f"| `{nb['stem']}` |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == nb["title"] and cells[2] == (", ".join(nb["after"]) or "-")
        assert cells[3] != "not timed yet" if nb["stem"] in times else cells[3] == "not timed yet"
        assert all(title in cells[4] for title in nb["exercises"])
    assert "[WORKSHOP.md](WORKSHOP.md)" in report.render("README.md", root)


def test_the_teaching_notebooks_each_have_an_exercise_participants_can_run_without():
    """Notebooks 01-05 and 09 hold at least one exercise with its solution, and no cell after a
    solution reads what only the solution defines (so `make workshop`'s copies run)."""
    from pairlab.paths import project_root

    for path in sorted((project_root() / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        found = workshop.check(nbformat.read(path, as_version=4), path.name)
        if path.name[:2] in ("01", "02", "03", "04", "05", "09"):
            assert found, f"{path.name} has no exercise"
