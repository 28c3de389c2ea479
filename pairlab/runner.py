"""Run the notebook suite with papermill under a profile: ``python -m pairlab.runner``.

A profile is a papermill parameter file ``profiles/<name>.yaml`` for the whole suite; the
runner adds ``run_dir`` and ``figures_dir``, passes each notebook the parameters it declares,
and writes each executed notebook to ``runs/<profile>/<notebook>.ipynb`` beside its metrics
file. Notebooks always run on the ``pairlab`` kernel (never a global
``python3`` kernel that may not have pairlab installed).

The executed copies keep no widget state: a plotly FigureWidget alone put its 5 MB JavaScript
bundle into each saved notebook (the live dashboards of notebooks 03-05 made them 5-10 MB). The
widgets are live while a kernel runs them; what a saved copy shows instead is the printed log,
the tables and the static figures each notebook also writes.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import yaml

from .paths import project_root

__all__ = ["KERNEL", "load_profile", "notebooks", "run"]

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


def load_profile(name: str, root: Path | None = None) -> dict:
    """Parameters of ``profiles/<name>.yaml``, with the profile's run and figure folders."""
    root = root or project_root()
    path = root / "profiles" / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in (root / "profiles").glob("*.yaml"))
        raise FileNotFoundError(f"no profile {name!r} ({path}); known profiles: {known}")
    params = yaml.safe_load(path.read_text()) or {}
    if not isinstance(params, dict):
        raise ValueError(f"{path} must hold a mapping of parameter names to values")
    params.setdefault("run_dir", f"runs/{name}")
    params.setdefault("figures_dir", f"figures/{name}")
    return params


def run(profile: str, *, select=None, overrides: dict | None = None) -> list[Path]:
    """Execute the selected notebooks under ``profile``; returns the executed copies."""
    import papermill

    root = project_root()
    params = {**load_profile(profile, root), **(overrides or {})}
    if os.environ.get("PAIRLAB_DATA_DIR"):  # kernels run in notebooks/: pass an absolute path
        os.environ["PAIRLAB_DATA_DIR"] = str(Path(os.environ["PAIRLAB_DATA_DIR"]).resolve())
    out_dir = root / params["run_dir"]
    out_dir.mkdir(parents=True, exist_ok=True)
    selected = notebooks(root, select)
    declared = {nb: set(papermill.inspect_notebook(str(nb))) for nb in notebooks(root)}
    unknown = set(params) - set().union(*declared.values())
    if unknown:
        raise ValueError(f"profile {profile!r} sets {sorted(unknown)}, which no notebook declares")
    written = []
    for notebook in selected:
        output = out_dir / notebook.name
        start = time.perf_counter()
        print(f"[{profile}] {notebook.name} -> {output.relative_to(root)}", flush=True)
        own = {k: v for k, v in params.items() if k in declared[notebook]}
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
    overrides = {name: yaml.safe_load(value) for name, value in args.parameter}
    run(args.profile, select=args.notebooks, overrides=overrides)
    return 0


if __name__ == "__main__":
    sys.exit(main())
