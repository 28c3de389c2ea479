import ast
import json
from pathlib import Path

import nbformat
import pytest

from pairlab.runner import load_profile, notebooks

ROOT = Path(__file__).resolve().parents[1]
PROFILES = sorted(p.stem for p in (ROOT / "profiles").glob("*.yaml"))


def parameters_of(notebook: Path) -> set[str]:
    nb = nbformat.read(notebook, as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{notebook.name} needs exactly one cell tagged 'parameters'"
    tree = ast.parse(cells[0].source)
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets}


def test_the_four_profiles_exist():
    assert set(PROFILES) >= {"smoke", "demo", "cpu", "paper"}


@pytest.mark.parametrize("profile", PROFILES)
def test_profile_parameters_are_declared_by_some_notebook(profile):
    params = load_profile(profile, ROOT)
    declared = set().union(*(parameters_of(nb) for nb in notebooks(ROOT)))
    unknown = set(params) - declared
    assert not unknown, f"{profile}.yaml sets {unknown}, which no notebook declares (a typo?)"


def test_notebooks_use_the_pairlab_kernel_and_follow_the_habits():
    for notebook in notebooks(ROOT):
        nb = nbformat.read(notebook, as_version=4)
        assert nb.metadata["kernelspec"]["name"] == "pairlab"
        assert "dataset" in parameters_of(notebook) and "run_dir" in parameters_of(notebook)
        assert "record_metrics" in nb.cells[-1].source, "the last cell records the metrics"
        assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), \
            f"{notebook.name} is committed with outputs"


def test_unknown_profile_lists_the_known_ones():
    with pytest.raises(FileNotFoundError, match="known profiles"):
        load_profile("nope", ROOT)


def test_every_code_cell_is_valid_python():
    for notebook in notebooks(ROOT):
        nb = nbformat.read(notebook, as_version=4)
        for number, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                try:
                    ast.parse(cell.source)
                except SyntaxError as error:
                    pytest.fail(f"{notebook.name} cell {number}: {error}")
