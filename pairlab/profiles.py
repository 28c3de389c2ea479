"""Profiles: the parameter files ``profiles/<name>.yaml`` of the whole suite. Top-level keys go
to every notebook that declares them; the ``notebooks`` section overrides keys for the notebooks
it names by number (``"03 04 05": {n_boot: 50}``)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from .paths import project_root

__all__ = [
    "BASE",
    "WITHOUT_DATA",
    "SELECT",
    "load_profile",
    "resolve",
    "settings",
    "own_and_shared",
    "check_profile",
    "notebook_number",
]


BASE = "base"  # profiles/base.yaml: the shared settings' defaults, under every profile
SECTION = "notebooks"
WITHOUT_DATA = "without_data"  # the runner's own profile key: a folder to run on without data
SELECT = "select"  # the runner's own profile key: the notebooks it runs (numbers; default: all)
RUNNER_KEYS = (SECTION, WITHOUT_DATA, SELECT)  # not parameters


def load_profile(name: str, root: Path | None = None, *, notebook: str | None = None) -> dict:
    """``profiles/<name>.yaml`` with its run and figure folders; with ``notebook`` (a name or
    number) every setting that notebook gets under it (:func:`settings`)."""
    root = root or project_root()
    path = root / "profiles" / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in (root / "profiles").glob("*.yaml") if p.stem != BASE)
        raise FileNotFoundError(f"no profile {name!r} ({path}); known profiles: {known}")
    profile = yaml.safe_load(path.read_text()) or {}
    if not isinstance(profile, dict):
        raise ValueError(f"{path} must hold a mapping of parameter names to values")
    sections = profile.get(SECTION) or {}
    if not isinstance(sections, dict) or not all(isinstance(v, dict) for v in sections.values()):
        raise ValueError(
            f'{path}: {SECTION!r} must map notebook numbers ("03 04 05") to '
            f"mappings of parameters, got {sections!r}"
        )
    if name != BASE:
        profile.setdefault("run_dir", f"runs/{name}")
        profile.setdefault("figures_dir", f"figures/{name}")
    return settings(notebook, profile, root=root) if notebook is not None else profile


def settings(notebook: str, *profiles: dict, root: Path | None = None) -> dict:
    """What ``notebook`` runs with under ``profiles`` (each resolved, later ones winning) laid
    over the shared settings of ``profiles/base.yaml``."""
    out = resolve(load_profile(BASE, root), notebook)
    for profile in profiles:
        out.update(resolve(profile, notebook))
    return out


def own_and_shared(path, root: Path | None = None) -> tuple[list[str], list[str]]:
    """``(the names the parameters cell of the notebook at path sets, the shared settings it
    takes)``: those ``profiles/base.yaml`` gives it, less its own, where its cell has a
    ``profile``."""
    import papermill

    own = list(papermill.inspect_notebook(str(path)))
    if "profile" not in own:
        return own, []
    return own, [n for n in resolve(load_profile(BASE, root), path) if n not in own]


def resolve(profile: dict, notebook: str) -> dict:
    """The flat parameters of ``notebook`` (``"04_ablations"`` or ``"04"``): the top-level keys,
    then every section that names it, in the file's order."""
    number = notebook_number(notebook)
    params = {k: v for k, v in profile.items() if k not in RUNNER_KEYS}
    for names, overrides in (profile.get(SECTION) or {}).items():
        if number in section_numbers(names):
            params.update(overrides)
    return params


def check_profile(profile: dict, declared: dict[str, set], *, name: str = "profile") -> None:
    """Raise ValueError for a key no notebook in its scope declares (``declared``: each
    notebook's name -> its parameters)."""
    by_number = {notebook_number(nb): params for nb, params in declared.items()}
    top = {k for k in profile if k not in RUNNER_KEYS}
    unknown = top - set().union(*by_number.values())
    if unknown:
        raise ValueError(
            f"profile {name!r} sets {sorted(unknown)}, which no notebook declares "
            "(a typo? each notebook's parameters cell lists the names it takes)"
        )
    for names, overrides in (profile.get(SECTION) or {}).items():
        numbers = section_numbers(names)
        missing = [n for n in numbers if n not in by_number]
        if missing or not numbers:
            raise ValueError(
                f"profile {name!r}: section {names!r} names notebooks {missing or names!r} "
                f"that do not exist; known: {sorted(by_number)}"
            )
        unknown = set(overrides) - set().union(*(by_number[n] for n in numbers))
        if unknown:
            raise ValueError(
                f"profile {name!r} sets {sorted(unknown)} for notebooks {names!r}, "
                "which none of them declares"
            )


def notebook_number(notebook) -> str:
    """``"04"`` for ``"04"``, ``"04_ablations"`` or a path to ``04_ablations.ipynb``."""
    match = re.match(r"(\d\d)(_|$)", Path(str(notebook)).name)
    if not match:
        raise ValueError(f"a notebook is named by its number or NN_name, got {notebook!r}")
    return match.group(1)


def section_numbers(names) -> list[str]:
    """The notebook numbers a ``notebooks:`` section key names (``"03 04 05"``)."""
    return str(names).replace(",", " ").split()
