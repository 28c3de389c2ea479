"""Issue 37, point 1: the settings a notebook passes down are built once into typed, frozen
objects; a notebook's parameters (``params``) are read only by the helpers notebooks call
themselves and by the ``from_params`` constructors of the settings objects, never below."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUMBING = {"notebook.py", "runner.py", "profiles.py"}  # the parameters' own machinery


def _called_by_notebooks() -> set[str]:
    text = "\n".join(p.read_text() for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    return set(re.findall(r"\b(\w+)\(", text))


def _readers():
    """(module, function) of every function that indexes ``params`` or calls ``params.get``."""
    for path in sorted((ROOT / "pairlab").rglob("*.py")):
        if path.name in PLUMBING:
            continue
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            own = [n for n in ast.walk(fn) if _reads_params(n)]
            nested = [
                n
                for inner in ast.walk(fn)
                if inner is not fn and isinstance(inner, (ast.FunctionDef, ast.Lambda))
                for n in ast.walk(inner)
                if _reads_params(n)
            ]
            if len(own) > len(nested):
                yield f"{path.relative_to(ROOT)}:{fn.name}", fn.name


def _reads_params(node) -> bool:
    if isinstance(node, ast.Subscript):
        target = node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        target = node.func.value if node.func.attr == "get" else None
    else:
        return False
    return (
        isinstance(target, ast.Name)
        and target.id == "params"
        or (isinstance(target, ast.Attribute) and target.attr == "params")
    )


# not yet converted (issue 37 is open while any is left): each must still read params, so
# this list can only shrink
LEFT = set()


def test_params_are_read_only_where_settings_are_built():
    called = _called_by_notebooks()
    below = sorted(
        where for where, name in _readers() if name != "from_params" and name not in called
    )
    assert sorted(set(below) - LEFT) == []
    assert sorted(LEFT - set(below)) == []


def test_no_signature_below_the_notebook_helpers_takes_the_parameters():
    """Only the helpers notebooks call and the settings' ``from_params`` take ``params``."""
    called = _called_by_notebooks()
    takers = []
    for path in sorted((ROOT / "pairlab").rglob("*.py")):
        if path.name in PLUMBING:
            continue
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
                if "params" in names and fn.name != "from_params" and fn.name not in called:
                    takers.append(f"{path.relative_to(ROOT)}:{fn.name}")
    assert takers == []
