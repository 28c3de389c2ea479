"""The package's layers: every module imports only from its own layer or the ones below (read
from the source with ast, lazy imports inside functions included). The layer order is declared
here, once. Module size is a warning, never a failure: modules are split by concept, not by
line count."""

import ast
import warnings
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pairlab"

# Bottom first: each layer's top-level modules and subpackages, with what each is for. Stated
# here once; `make docs` draws ARCHITECTURE.md's layer table from this list.
LAYERS = [
    {
        "io": "raw readers (quotes are text, bad rows counted), JSON, atomic writes and locks",
        "params": "constructor arguments as a strategy's or annotator's own config",
        "paths": "where the project, the data, the cache and the runs live",
        "progress": "work done and time left inside a long step, for whoever listens",
        "templating": "the one Jinja environment: every sentence pairlab shows is a macro",
    },
    {"data": "pair ids, tasks and pools, your pair files and record tables, the papers' numbers"},
    {"models": "encoders, cached embeddings, CosineBERT, ConcatBERT, training, inference backends"},
    {"evaluation": "all-pairs strata and the AP estimator, candidates, the audit and its estimate"},
    {"annotators": "who answers a label request (oracles, an LLM, a person): below the loop"},
    {
        "active": "the round loop, its strategies, candidate search, run folders and archives",
        "augment": "Augmented SBERT: pair samplers and a cross-encoder's silver labels",
    },
    {"experiments": "sweeps of runs, the notebooks' tables, findings and metrics records"},
    {"widgets": "plotly figures, dashboards, the labelling and false-positive widgets"},
    {"session": "a person in the loop: the labelling session, its worker, audit and export"},
    {
        "notebook": "the notebooks' one set-up call, figures and metrics files",
        "metrics_files": "each notebook's metrics file declared and checked",
        "profiles": "the suite's parameter files, resolved for each notebook",
        "runner": "papermill runs of the suite under a profile",
        "report": "the documents rendered from committed results",
        "workshop": "participant copies of the notebooks, without solutions",
        "label": "a labelling session served as a page for a team (Voilà)",
    },
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "__init__.py")


def dotted(path: Path) -> list[str]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def imported(path: Path, here: list[str] | None = None) -> set[str]:
    """The pairlab modules ``path`` imports, as dotted names (``pairlab.models.embed``);
    ``here``: the module's own dotted parts, where the file is not in the package."""
    here = dotted(path) if here is None else here
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.startswith("pairlab"):
                found |= {
                    f"{module}.{a.name}" if module == "pairlab" else module for a in node.names
                }
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("pairlab")}
    return found


def layer(module: str) -> str:
    return module.split(".")[1]


def test_every_module_has_a_layer():
    assert {dotted(p)[1] for p in MODULES} <= set(RANK), "a new subpackage needs a place in LAYERS"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path):
    mine = layer(".".join(dotted(path)))
    upward = sorted(m for m in imported(path) if RANK[layer(m)] > RANK[mine])
    assert not upward, f"{path.relative_to(PACKAGE)} (layer {mine!r}) imports from above: {upward}"


def test_the_import_reader_sees_relative_lazy_and_absolute_imports(tmp_path):
    """The checker itself: an upward import in each form is found (a probe read as a module of
    the data layer, written outside the package)."""
    source = (
        "from ..active.loop import ActiveRun\n"
        "def f():\n    from ..widgets import plots\n"
        "import pairlab.experiments.tables\n"
    )
    probe = tmp_path / "_layer_probe.py"
    probe.write_text(source)
    assert imported(probe, ["pairlab", "data", "_layer_probe"]) == {
        "pairlab.active.loop",
        "pairlab.widgets",
        "pairlab.experiments.tables",
    }


LONG = 600  # lines: a module this long may hold more than one concept; look, then decide


def test_long_modules_are_named_not_failed():
    """A size warning, never a failure: a module is split where its concepts part, not to pass
    a count (``augsbert``'s findings were once cut out of it only for that)."""
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in MODULES
        if (n := len(p.read_text().splitlines())) > LONG
    }
    if long:
        warnings.warn(f"modules over {LONG} lines (one concept each?): {long}", stacklevel=1)


def test_notebooks_call_only_names_their_modules_export():
    """``module.name`` in a notebook's code is in that module's ``__all__``: what notebooks call
    is the public surface."""
    import importlib
    import re

    notebooks = sorted((PACKAGE.parent / "notebooks").glob("[0-9][0-9]_*.py"))
    for nb in notebooks:
        code = nb.read_text()
        aliases = {}
        for line in code.splitlines():
            m = re.match(r"from (pairlab[\w.]*) import (.+)", line)
            if m:
                for item in m.group(2).split(","):
                    name, _, alias = item.strip().partition(" as ")
                    target = f"{m.group(1)}.{name}"
                    try:
                        aliases[alias or name] = importlib.import_module(target)
                    except ModuleNotFoundError:
                        pass  # a class or function, not a module
        used = {
            (n.value.id, n.attr)
            for n in ast.walk(ast.parse(code))
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        }
        calls = [(alias, attr) for alias, attr in used if alias in aliases]
        assert calls or "ctx" in code
        for alias, attr in calls:
            module = aliases[alias]
            assert attr in module.__all__, (
                f"{nb.name} calls {alias}.{attr}, not in {module.__name__}.__all__"
            )
