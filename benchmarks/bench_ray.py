"""The local Ray backend against the sequential one: the same sweep, timed on each.

    python benchmarks/bench_ray.py [--profile smoke] [--task qqp] [--strategies random uncertainty]
                                   [--seeds 0 1]

The sweep is notebook 03's under a profile (its pools and settings), on one task: strategies x
seeds runs (4 by default). Both sides start from the same cache of pretrained embeddings and
each trains its own seed-round models (a fresh copy of the cache each). The sequential side
runs one run after another in this process with torch's default threads (every core); the Ray
side starts a local Ray instance on every core (timed apart) and runs one run per core at once,
one thread each. Ray's processes get ``tests/ray_site`` on their path (its docstring says why;
``--no-ray-site`` leaves it out). Writes ``benchmarks/results/ray/<profile>-<host>.json``;
``make docs`` renders docs/ray.md from it. Not a test: no thresholds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pairlab import experiments, profiles, runner  # noqa: E402
from pairlab.models.embed import embed_pool  # noqa: E402

SITE = ROOT / "tests" / "ray_site"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--task", default="qqp", help="qqp or wikiqa")
    parser.add_argument("--strategies", nargs="+", default=["random", "uncertainty"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--no-ray-site", action="store_true", help="leave tests/ray_site out")
    args = parser.parse_args(argv)
    params = {**notebook_params(args.profile), "dataset": args.task}
    work = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    try:
        prepared, settings = warm_cache(params, work / "warm")
        sweep = dict(
            prepared=prepared, strategies=args.strategies, seeds=args.seeds, settings=settings
        )
        sequential = timed(sweep, work, "local")
        ray_init = start_ray(site=not args.no_ray_site)
        ray = timed(sweep, work, "ray")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record(
        {
            "profile": args.profile,
            "task": args.task,
            "strategies": args.strategies,
            "seeds": args.seeds,
            "runs": len(args.strategies) * len(args.seeds),
            "ray_site": not args.no_ray_site,
            "sequential": sequential,
            "ray": {**ray, "init_s": ray_init},
            "speedup": sequential["seconds"] / ray["seconds"],
            "speedup_with_init": sequential["seconds"] / (ray["seconds"] + ray_init),
        }
    )
    return 0


def notebook_params(profile: str) -> dict:
    """Notebook 03's parameters under ``profile``: its parameters cell, then the profile's."""
    import ast

    import papermill

    cell = papermill.inspect_notebook(str(runner.notebooks(select=["03"])[0]))
    defaults = {name: ast.literal_eval(p["default"]) for name, p in cell.items()}
    return {**defaults, **profiles.load_profile(profile, notebook="03")}


def warm_cache(params: dict, cache: Path):
    """The sweep's pools and settings, with every pretrained embedding it needs cached in
    ``cache`` (the strata's, drawn here, and the training pools')."""
    os.environ["PAIRLAB_CACHE_DIR"] = str(cache)
    prepared, settings = experiments.prepare_active(params, show=False)
    for pools, _ in prepared.values():
        embed_pool(
            pools["train"],
            settings.model,
            max_seq_length=settings.max_seq_length,
            show_progress=False,
        )
    return prepared, settings


def start_ray(*, site: bool) -> float:
    """Seconds to start a local Ray instance on every core."""
    import ray

    if site:
        paths = [str(SITE), os.environ.get("PYTHONPATH")]
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    start = time.perf_counter()
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
    return time.perf_counter() - start


def timed(sweep: dict, work: Path, backend: str) -> dict:
    """The sweep on ``backend`` from a fresh copy of the warm cache: its wall seconds, the
    seconds until the first run started, and the machine's load average before and after."""
    import torch

    cache = shutil.copytree(work / "warm", work / backend)
    os.environ["PAIRLAB_CACHE_DIR"] = str(cache)
    torch.set_num_threads(os.cpu_count())  # the sequential side's runs use every core
    started = []
    load = os.getloadavg()[0]
    start = time.perf_counter()
    experiments.sweep(
        sweep["prepared"],
        sweep["strategies"],
        sweep["seeds"],
        sweep["settings"],
        cache / "runs",
        backend=backend,
        callbacks=[
            lambda event, **p: (
                event == "run_started" and started.append(time.perf_counter() - start)
            )
        ],
    )
    seconds = time.perf_counter() - start
    print(f"{backend}: {seconds:.1f} s (first run started after {started[0]:.1f} s)", flush=True)
    return {
        "seconds": seconds,
        "first_run_s": started[0],
        "load_before": load,
        "load_after": os.getloadavg()[0],
        "threads_per_run": 1 if backend == "ray" else torch.get_num_threads(),
    }


def record(results: dict) -> Path:
    import ray
    import torch

    machine = {
        "host": socket.gethostname(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "ray": ray.__version__,
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }
    out = ROOT / "benchmarks" / "results" / "ray" / f"{results['profile']}-{machine['host']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine, **results}, indent=2) + "\n")
    print(
        f"speed-up {results['speedup']:.2f}x ({results['speedup_with_init']:.2f}x counting "
        f"Ray's start); written: {out.relative_to(ROOT)}"
    )
    return out


if __name__ == "__main__":
    sys.exit(main())
