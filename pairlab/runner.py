"""Run the notebook suite with papermill under a profile: ``python -m pairlab.runner``.

A profile is a parameter file ``profiles/<name>.yaml`` for the whole suite. Its top-level keys
go to every notebook that declares them; its ``notebooks`` section overrides keys for the
notebooks it names by their number, so notebooks that use one name for different values can
share a file::

    max_items: {qqp: {train: 300, dev: 150, test: 150}}   # every notebook (01, 02)
    n_boot: 100
    notebooks:
      "03 04 05":                    # active learning: 04 and 05 read back 03's run folders,
        max_items: {qqp: {train: 150, dev: 80, test: 80}}   # so they share these values
        n_boot: 50

The runner adds ``run_dir`` and ``figures_dir``, passes each notebook the resolved parameters
it declares (a key no notebook of its scope declares is an error), and writes each executed
notebook to ``runs/<profile>/<notebook>.ipynb`` beside its metrics file. Keys of the older flat
format (``al_max_items``, ``al_neighbours``, ``al_n_random``, ``al_n_boot``, ``neighbours``,
``concat_neighbours``) still work, with a :class:`DeprecationWarning` naming the new key.
Notebooks always run on the ``pairlab`` kernel (never a global ``python3`` kernel that may not
have pairlab installed).

The executed copies keep no widget state: a plotly FigureWidget alone put its 5 MB JavaScript
bundle into each saved notebook (the live dashboards of notebooks 03-05 made them 5-10 MB). The
widgets are live while a kernel runs them; what a saved copy shows instead is the printed log,
the tables and the static figures each notebook also writes.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
import warnings
from pathlib import Path

import yaml

from .paths import project_root

__all__ = ["KERNEL", "ACTIVE", "DEPRECATED", "load_profile", "resolve", "check_profile",
           "notebooks", "run"]

KERNEL = "pairlab"


def notebooks(root: Path | None = None, select=None) -> list[Path]:
    """The numbered notebooks, in order; ``select`` keeps those whose name starts with any of
    the given prefixes (``["01", "03"]``)."""
    root = root or project_root()
    found = sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if select:
        found = [nb for nb in found if any(nb.name.startswith(s) for s in select)]
    if not found:
        raise FileNotFoundError(f"no notebooks matching {select or '[0-9][0-9]_*'} in "
                                f"{root / 'notebooks'}")
    return found


ACTIVE = "03 04 05"  # the active-learning notebooks: one run folder, identical settings
SECTION = "notebooks"

# old key -> (new key, the section it moves to; None: stays top-level)
DEPRECATED = {"neighbours": ("near_m", None), "concat_neighbours": ("concat_near_m", None),
              "al_neighbours": ("candidate_m", None), "al_max_items": ("max_items", ACTIVE),
              "al_n_random": ("n_random", ACTIVE), "al_n_boot": ("n_boot", ACTIVE)}


def load_profile(name: str, root: Path | None = None, *, notebook: str | None = None) -> dict:
    """``profiles/<name>.yaml`` with the profile's run and figure folders: the profile itself
    (top-level keys and its ``notebooks`` section), or with ``notebook`` (a name or its number,
    ``"03"``) the flat parameters that notebook gets (:func:`resolve`)."""
    root = root or project_root()
    path = root / "profiles" / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in (root / "profiles").glob("*.yaml"))
        raise FileNotFoundError(f"no profile {name!r} ({path}); known profiles: {known}")
    profile = migrate(yaml.safe_load(path.read_text()) or {}, source=str(path))
    profile.setdefault("run_dir", f"runs/{name}")
    profile.setdefault("figures_dir", f"figures/{name}")
    return resolve(profile, notebook) if notebook is not None else profile


def migrate(profile: dict, *, source: str = "the profile") -> dict:
    """``profile`` with the flat format's deprecated keys renamed (and the active-learning ones
    moved to the ``"03 04 05"`` section), each with a DeprecationWarning naming the new key."""
    if not isinstance(profile, dict):
        raise ValueError(f"{source} must hold a mapping of parameter names to values")
    out = {k: v for k, v in profile.items() if k != SECTION}
    sections = profile.get(SECTION) or {}
    if not isinstance(sections, dict) or not all(isinstance(v, dict) for v in sections.values()):
        raise ValueError(f"{source}: {SECTION!r} must map notebook numbers (\"03 04 05\") to "
                         f"mappings of parameters, got {sections!r}")
    sections = {str(k): dict(v) for k, v in sections.items()}
    for old, (new, section) in DEPRECATED.items():
        if old not in out:
            continue
        target = out if section is None else sections.setdefault(section, {})
        where = new if section is None else f"{SECTION}[{section!r}].{new}"
        if new in target:
            raise ValueError(f"{source} sets both the deprecated {old!r} and {where}; keep {where}")
        warnings.warn(f"{source}: parameter {old!r} is deprecated; use {where}",
                      DeprecationWarning, stacklevel=3)
        target[new] = out.pop(old)
    if sections:
        out[SECTION] = sections
    return out


def resolve(profile: dict, notebook: str) -> dict:
    """The flat parameters of ``notebook`` (a name such as ``"04_ablations"`` or its number):
    the top-level keys, then every section that names the notebook, in the file's order."""
    number = _number(notebook)
    params = {k: v for k, v in profile.items() if k != SECTION}
    for names, overrides in (profile.get(SECTION) or {}).items():
        if number in _numbers(names):
            params.update(overrides)
    return params


def check_profile(profile: dict, declared: dict[str, set], *, name: str = "profile") -> None:
    """Raise ValueError for a key no notebook in its scope declares; ``declared`` maps each
    notebook's name to the parameters its ``parameters`` cell assigns."""
    by_number = {_number(nb): params for nb, params in declared.items()}
    top = {k for k in profile if k != SECTION}
    unknown = top - set().union(*by_number.values())
    if unknown:
        raise ValueError(f"profile {name!r} sets {sorted(unknown)}, which no notebook declares")
    for names, overrides in (profile.get(SECTION) or {}).items():
        numbers = _numbers(names)
        missing = [n for n in numbers if n not in by_number]
        if missing or not numbers:
            raise ValueError(f"profile {name!r}: section {names!r} names notebooks {missing or names!r} "
                             f"that do not exist; known: {sorted(by_number)}")
        unknown = set(overrides) - set().union(*(by_number[n] for n in numbers))
        if unknown:
            raise ValueError(f"profile {name!r} sets {sorted(unknown)} for notebooks {names!r}, "
                             "which none of them declares")


def _number(notebook) -> str:
    match = re.match(r"(\d\d)(_|$)", Path(str(notebook)).name)
    if not match:
        raise ValueError(f"a notebook is named by its number or NN_name, got {notebook!r}")
    return match.group(1)


def _numbers(names) -> list[str]:
    return re.split(r"[\s,]+", str(names).strip()) if str(names).strip() else []


def run(profile: str, *, select=None, overrides: dict | None = None) -> list[Path]:
    """Execute the selected notebooks under ``profile``; returns the executed copies."""
    import papermill

    root = project_root()
    loaded = load_profile(profile, root)
    extra = migrate(dict(overrides or {}), source="the overrides")
    if os.environ.get("PAIRLAB_DATA_DIR"):  # kernels run in notebooks/: pass an absolute path
        os.environ["PAIRLAB_DATA_DIR"] = str(Path(os.environ["PAIRLAB_DATA_DIR"]).resolve())
    selected = notebooks(root, select)
    declared = {nb.stem: set(papermill.inspect_notebook(str(nb))) for nb in notebooks(root)}
    check_profile(loaded, declared, name=profile)
    check_profile(extra, declared, name="overrides")
    out_dir = root / {**resolve(loaded, selected[0].stem), **resolve(extra, selected[0].stem)}["run_dir"]
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for notebook in selected:
        output = out_dir / notebook.name
        start = time.perf_counter()
        print(f"[{profile}] {notebook.name} -> {output.relative_to(root)}", flush=True)
        params = {**resolve(loaded, notebook.stem), **resolve(extra, notebook.stem)}
        own = {k: v for k, v in params.items() if k in declared[notebook.stem]}
        papermill.execute_notebook(str(notebook), str(output), parameters=own,
                                   kernel_name=KERNEL, cwd=str(notebook.parent),
                                   progress_bar=sys.stderr.isatty(), report_mode=False,
                                   store_widget_state=False)
        print(f"[{profile}] {notebook.name} done in {time.perf_counter() - start:.0f} s", flush=True)
        written.append(output)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="demo", help="profiles/<name>.yaml (default demo)")
    parser.add_argument("--notebooks", nargs="*", help="name prefixes to run, e.g. 01 03")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                        metavar=("NAME", "VALUE"), help="override a parameter (YAML value)")
    args = parser.parse_args(argv)
    warnings.simplefilter("default", DeprecationWarning)  # an old profile key is said, not hidden
    overrides = {name: yaml.safe_load(value) for name, value in args.parameter}
    run(args.profile, select=args.notebooks, overrides=overrides)
    return 0


if __name__ == "__main__":
    sys.exit(main())
