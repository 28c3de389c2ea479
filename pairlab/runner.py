"""Run the notebook suite with papermill under a profile: ``python -m pairlab.runner``.

Each notebook gets the profile's name, its own knobs as the profile (:mod:`.profiles`) sets
them, and in ``shared`` the shared settings that ``-p`` or ``--dataset`` change; it runs on the
``pairlab`` kernel into ``runs/<profile>/``, without widget state (a FigureWidget is 5 MB)."""

from __future__ import annotations

import argparse
import atexit
import datetime
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from jupyter_client.manager import AsyncKernelManager

from .paths import project_root, shown
from .profiles import (
    SELECT,
    WITHOUT_DATA,
    check_profile,
    load_profile,
    notebook_number as _number,
    own_and_shared,
    resolve,
    settings,
)
from .templating import seconds as duration

__all__ = [
    "KERNEL",
    "after",
    "expected_time",
    "notebooks",
    "order_times",
    "run",
    "start_order",
    "threads_per_job",
]

KERNEL = "pairlab"


def notebooks(root: Path | None = None, select=None) -> list[Path]:
    """The numbered notebooks, in order; ``select``: those starting with any of these prefixes."""
    root = root or project_root()
    every = sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    found = [nb for nb in every if not select or any(nb.name.startswith(s) for s in select)]
    if not found:
        known = [nb.name[:2] for nb in every]
        raise FileNotFoundError(
            f"no notebooks matching {select or '[0-9][0-9]_*'} in "
            f"{root / 'notebooks'}; known numbers: {known}"
        )
    return found


TIMINGS = "timings.json"


def run(
    profile: str,
    *,
    select=None,
    overrides: dict | None = None,
    jobs: int = 1,
    record_times: bool = True,
) -> list[Path]:
    """Execute the selected notebooks under ``profile``; returns the executed copies. ``jobs`` > 1:
    that many at once (:func:`_run_parallel`). Seconds go to ``<run_dir>/timings.json``."""
    root = project_root()
    os.environ.setdefault("PAIRLAB_PROGRESS", "text")  # a saved notebook keeps no widget
    loaded = load_profile(profile, root)
    overrides = dict(overrides or {})
    dataset = overrides.get("dataset")  # a file relative to here, made absolute for the kernels
    if isinstance(dataset, str) and Path(dataset).expanduser().is_file():
        overrides["dataset"] = str(Path(dataset).expanduser().resolve())
    if os.environ.get("PAIRLAB_DATA_DIR"):  # kernels run in notebooks/: pass an absolute path
        os.environ["PAIRLAB_DATA_DIR"] = str(Path(os.environ["PAIRLAB_DATA_DIR"]).resolve())
    selected = notebooks(root, select or loaded.get(SELECT))
    declared = {nb.stem: set().union(*own_and_shared(nb, root)) for nb in notebooks(root)}
    check_profile(loaded, declared, name=profile)
    check_profile(overrides, declared, name="overrides (-p)")
    each = [settings(nb.stem, loaded, overrides, root=root) for nb in selected]
    fallback = data_or_fixture(profile, each, loaded.get(WITHOUT_DATA))
    if fallback:
        overrides["data_dir"] = fallback
    out_dir = root / each[0]["run_dir"]
    out_dir.mkdir(parents=True, exist_ok=True)
    if record_times:
        expected = expected_time(profile, [nb.stem for nb in selected], root)
        print(f"[{profile}] {expected}", flush=True)
    start = time.perf_counter()
    if jobs > 1 and len(selected) > 1:
        seconds = _run_parallel(profile, selected, overrides, jobs, root)
    else:
        seconds = {}
        for notebook in selected:
            params = papermill_parameters(profile, notebook, loaded, overrides, root)
            seconds[notebook.stem] = _execute(profile, notebook, params, out_dir, root)
    if record_times:
        wall = time.perf_counter() - start
        complete = len(selected) == len(notebooks(root, loaded.get(SELECT)))
        _record_times(out_dir / TIMINGS, seconds, jobs=jobs, wall=wall if complete else None)
        print(
            f"[{profile}] {len(selected)} notebook(s) in {duration(wall)}: "
            f"executed notebooks and metrics in {shown(out_dir, root)}/, figures in "
            f"{shown(root / each[0]['figures_dir'], root)}/",
            flush=True,
        )
    return [out_dir / nb.name for nb in selected]


def papermill_parameters(profile: str, notebook: Path, loaded: dict, overrides: dict, root) -> dict:
    """What ``notebook`` is given: ``profile``, its own knobs as the profile (and ``overrides``)
    set them, and ``shared``: the overrides of its shared settings."""
    own, shared = own_and_shared(notebook, root)
    values = settings(notebook.stem, loaded, overrides, root=root)
    params = {k: values[k] for k in own if k in values}
    params["profile"] = profile
    changed = {k: v for k, v in resolve(overrides, notebook.stem).items() if k in shared}
    if changed:
        params["shared"] = changed
    return params


def data_or_fixture(profile: str, params: list[dict], without_data) -> str | None:
    """``None`` when the data files the notebooks need are found; else the profile's
    ``without_data`` folder (said loudly), or an error saying how to get them."""
    from .data.loaders import BUILT_IN, data_files

    wanted = {
        (name, p.get("data_dir"))
        for p in params
        for name in (BUILT_IN if p.get("dataset", "all") == "all" else (p["dataset"],))
        if name in BUILT_IN
    }
    try:
        for name, folder in sorted(wanted, key=str):
            data_files(name, folder)
    except FileNotFoundError as missing:
        if not without_data or any(folder for _, folder in wanted):
            raise FileNotFoundError(
                f"No data for profile {profile!r}. Run `make data` (downloads QQP and WikiQA from "
                "their official sources into ./data), or set PAIRLAB_DATA_DIR to a folder holding "
                "them, or run on your own pair file: make run DATASET=path/to/pairs.csv "
                f"PAIRS_SYMMETRIC=true (see the README).\n\n{missing}"
            ) from None
        print(
            f"\n{'!' * 96}\n[{profile}] NO DATA: {str(missing).splitlines()[0]}\n[{profile}] "
            f"running on the SYNTHETIC fixture in {without_data} instead (fixtures/make_fixtures"
            f".py): the notebooks run, and their numbers say nothing about QQP or WikiQA.\n"
            f"[{profile}] For the real data: make data, or set PAIRLAB_DATA_DIR.\n{'!' * 96}\n",
            flush=True,
        )
        return str(without_data)
    return None


def _execute(profile: str, notebook: Path, params: dict, out_dir: Path, root: Path) -> float:
    """Run one notebook; one line when it is done (a progress bar meanwhile on a terminal)."""
    import papermill

    output = out_dir / notebook.name
    start = time.perf_counter()
    remote = params.get("backend") == "ray"  # its sweeps' progress bar, shown here as it moves
    papermill.execute_notebook(
        str(notebook),
        str(output),
        parameters=params,
        kernel_name=KERNEL,
        cwd=str(notebook.parent),
        progress_bar=sys.stderr.isatty() and not remote,
        store_widget_state=False,
        stderr_file=sys.stderr if remote else None,
        kernel_manager_class=f"{__name__}.LocalKernelManager",
    )
    seconds = time.perf_counter() - start
    done = f"{notebook.stem} done in {duration(seconds)} -> {shown(output, root)}"
    print(f"[{profile}] {done}", flush=True)
    return seconds


class LocalKernelManager(AsyncKernelManager):
    """papermill's kernel manager: IPC sockets in a private temporary folder, not TCP ports (no
    unencrypted-TCP warning); papermill (nbclient) imports it by its dotted name."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        folder = tempfile.mkdtemp(prefix="pairlab-kernel-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        self.transport, self.ip = "ipc", os.path.join(folder, "kernel")

    async def _async_interrupt_kernel(self):  # no SIGINT to an idle kernel shutting down
        if not self.shutting_down:
            await super()._async_interrupt_kernel()


def after(notebook: Path) -> list[str]:
    """The notebooks (by number) whose results ``notebook`` reads: its ``pairlab.after``."""
    import nbformat

    return [str(n) for n in nbformat.read(notebook, 4).metadata.get("pairlab", {}).get("after", [])]


def threads_per_job(jobs: int) -> int:
    """Each of ``jobs`` processes' share of the cores for its thread pools (at least one)."""
    return max(1, (os.cpu_count() or 1) // jobs)


def _run_parallel(
    profile: str, selected: list[Path], overrides: dict, jobs: int, root: Path
) -> dict:
    """Each notebook in a child runner process, ``jobs`` at a time, in :func:`start_order`, once
    those it declares ``after`` have finished; ``$OMP_NUM_THREADS`` or ``cpus // jobs`` threads."""
    threads = os.environ.get("OMP_NUM_THREADS") or str(threads_per_job(jobs))
    env = {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    numbers = {_number(nb): nb for nb in selected}
    waits = {nb: [n for n in after(nb) if n in numbers] for nb in selected}
    pending = start_order(selected, waits, order_times(profile, root))
    running, done, seconds = {}, set(), {}
    args = [
        a
        for name, value in overrides.items()
        for a in ("-p", name, yaml.safe_dump(value, default_flow_style=True).strip())
    ]
    while pending or running:
        ready = [nb for nb in pending if all(n in done for n in waits[nb])]
        for nb in ready[: jobs - len(running)]:
            pending.remove(nb)
            command = [sys.executable, "-m", "pairlab.runner", "--profile", profile]
            command += ["--notebooks", _number(nb), "--no-timings", *args]
            running[nb] = (subprocess.Popen(command, env=env, cwd=str(root)), time.perf_counter())
        time.sleep(0.5)
        for nb, (process, began) in list(running.items()):
            if process.poll() is None:
                continue
            del running[nb]
            if process.returncode != 0:
                for other, _ in running.values():
                    other.terminate()
                raise RuntimeError(
                    f"{nb.name} failed (exit {process.returncode}); its error is printed above"
                )
            done.add(_number(nb))
            seconds[nb.stem] = time.perf_counter() - began
    return seconds


def start_order(selected: list[Path], waits: dict, times: dict) -> list[Path]:
    """The order in which ready notebooks start: the longest chain first, a chain being a
    notebook's recorded seconds (``times`` by stem, 1 when unknown) plus the longest chain of
    those waiting for it."""

    @functools.cache
    def chain(nb: Path) -> float:
        waiting = [other for other in selected if _number(nb) in waits[other]]
        return float(times.get(nb.stem, 1.0)) + max(map(chain, waiting), default=0.0)

    return sorted(selected, key=lambda nb: -chain(nb))


def order_times(profile: str, root: Path) -> dict:
    """Seconds per notebook to order a run's start by: the profile's recorded times
    (:func:`_timings`), else another profile's (the notebooks' relative weight differs little)."""
    names = (profile, "quick", "demo", "cpu", "smoke")
    recorded = (t.get("notebooks") for name in names for _, t in _timings(name, root))
    return next(filter(None, recorded), {})


def _timings(profile: str, root: Path) -> list:
    """``(path, record)`` of the committed ``results/<profile>/timings.json``, then of this
    machine's last ``runs/<profile>/timings.json``, where they exist."""
    paths = [root / folder / profile / TIMINGS for folder in ("results", "runs")]
    return [(path, json.loads(path.read_text())) for path in paths if path.is_file()]


def _record_times(path: Path, seconds: dict, *, jobs: int, wall: float | None) -> None:
    """Merge this run's seconds into ``timings.json`` (``wall`` only for the whole suite)."""
    from .io import write_json

    old = json.loads(path.read_text()) if path.is_file() else {}
    record = {
        "notebooks": {**old.get("notebooks", {}), **{k: round(v, 1) for k, v in seconds.items()}},
        "cpus": os.cpu_count(),
        "jobs": jobs,
        "recorded": datetime.date.today().isoformat(),
    }
    if wall is not None:
        record["wall_seconds"] = round(wall, 1)
    write_json(path, record)


def expected_time(profile: str, selected: list[str], root: Path) -> str:
    """What to expect, from the recorded times (:func:`_timings`)."""
    for path, t in _timings(profile, root):
        known = [t["notebooks"][nb] for nb in selected if nb in t.get("notebooks", {})]
        if known:
            break
    else:
        return f"expected time: not recorded yet for profile {profile!r} (this run records it)"
    whole = "wall_seconds" in t and len(known) == len(t["notebooks"])
    total = t["wall_seconds"] if whole else sum(known)
    missing = len(selected) - len(known)
    return (
        f"expected: about {total / 60:.0f} min on {t['cpus']} CPU cores ({t['jobs']} at a "
        f"time), as recorded on {t['recorded']} in {shown(path, root)}"
        + (f"; {missing} notebook(s) not timed yet" if missing else "")
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="quick", help="profiles/<name>.yaml (default quick)")
    parser.add_argument("--notebooks", nargs="*", help="name prefixes to run, e.g. 01 03")
    parser.add_argument("--jobs", type=int, default=1, help="notebooks at once (default 1)")
    parser.add_argument("--dataset", help="qqp, wikiqa, all, or the path of your own pair file")
    parser.add_argument("--backend", choices=("local", "ray"), help="where sweeps run")
    parser.add_argument("--address", help="with --backend ray: the Ray cluster (or 'auto')")
    parser.add_argument("--no-timings", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "YAML")
    )
    args = parser.parse_args(argv)
    if args.address and args.backend != "ray":
        parser.error("--address is the Ray cluster's: use it with --backend ray")
    try:
        overrides = {}
        for name, text in args.parameter:
            try:
                overrides[name] = yaml.safe_load(text)
            except yaml.YAMLError as error:
                raise ValueError(
                    f"parameter {name!r}: {text!r} is not a YAML value ({error})"
                ) from None
        given = {name: getattr(args, name) for name in ("dataset", "backend", "address")}
        overrides.update({name: value for name, value in given.items() if value})
        run(
            args.profile,
            select=args.notebooks,
            overrides=overrides,
            jobs=args.jobs,
            record_times=not args.no_timings,
        )
    except (OSError, ValueError, RuntimeError, yaml.YAMLError) as error:  # said plainly
        print(f"pairlab.runner: error: {error}", file=sys.stderr)
        return 1 if isinstance(error, RuntimeError) else 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
