"""Every notebook is a jupytext pair: notebooks/NN_name.ipynb and notebooks/NN_name.py hold the
same cells. An edit to one that was not synced to the other fails here (``make sync``)."""

from pathlib import Path

import jupytext
import pytest
from jupytext.compare import NotebookDifference, compare_notebooks

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PAIRS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def test_every_notebook_has_its_script_and_every_script_its_notebook():
    assert PAIRS, f"no notebooks in {NOTEBOOKS}"
    scripts = {p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.py")}
    assert scripts == {p.stem for p in PAIRS}


@pytest.mark.parametrize("path", PAIRS, ids=lambda p: p.stem)
def test_notebook_and_script_agree(path):
    notebook = jupytext.read(path)
    assert notebook.metadata["jupytext"]["formats"] == "ipynb,py:percent"
    assert notebook.metadata["kernelspec"]["name"] == "pairlab"
    script = jupytext.read(path.with_suffix(".py"))
    try:
        compare_notebooks(script, notebook, fmt="py:percent")
    except NotebookDifference as difference:
        pytest.fail(
            f"{path.name} and {path.stem}.py differ (run `make sync`: the newer file "
            f"wins):\n{difference}"
        )


def test_an_edit_to_one_side_is_caught(tmp_path):
    notebook = jupytext.read(PAIRS[0])
    edited = jupytext.reads(
        jupytext.writes(notebook, "py:percent").replace(
            "from pairlab", "import math\nfrom pairlab", 1
        ),
        "py:percent",
    )
    with pytest.raises(NotebookDifference):
        compare_notebooks(edited, notebook, fmt="py:percent")
