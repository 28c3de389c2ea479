"""Notebook 03's sweep of a profile (the paper's WikiQA protocol: ``paper-gpu``), run without
Jupyter on this machine's GPU, one process per seed side by side, each round archived as it
finishes (the profile's ``run_archive``) so that a cut-off run resumes anywhere.

    python benchmarks/paper_on_device.py OUT [--profile paper-gpu] [--seeds 0 1 2]
        [--strategies uncertainty ...] [--set train_precision fp32] [--stop-after SECONDS]
        [--process "seeds=0 strategies=uncertainty,static_retrieval train_precision=fp32" ...]

Each ``--process`` is one process's share (its seeds, strategies and settings, the rest as the
profile and ``--set`` give them); ``--per-run`` makes one process of every strategy and seed;
without either, one process per seed runs all its strategies. The processes share one model
cache: a model two runs need (the seed round; with ``share_models: all`` every round whose
labels they share) is trained by the first and loaded by the other, which waits on its lock.
Writes to OUT: ``device.json`` (the GPU, torch, the command), ``<process>.log`` (each process's
round log) and ``timings.json`` (each process's wall time and exit status). Each run's metrics,
rounds and seconds per stage are in its archive folder. The notebooks render the results on any
machine from the archive (``python -m pairlab.runner --profile paper-gpu``: finished runs are
read back, nothing is trained). Needs only pairlab's own dependencies without Jupyter: no
papermill, no widgets, no faiss (on a GPU the exact search runs in torch).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def settings(profile: str, overrides: list[tuple[str, str]], seeds=None, strategies=None) -> dict:
    """Notebook 03's parameters under ``profile``, with ``overrides`` (YAML values)."""
    from pairlab import profiles

    params = profiles.load_profile(profile, notebook="03")
    params["profile"] = profile
    for key, value in overrides:
        if key not in params:
            raise SystemExit(f"--set {key}: not one of notebook 03's parameters")
        params[key] = yaml.safe_load(value)
    if seeds is not None:
        params["seeds"] = list(seeds)
    if strategies is not None:
        params["strategies"] = list(strategies)
    return params


def run_seed(params: dict) -> None:
    """The sweep of one process: notebook 03's ``prepare_active`` and ``sweep``, archived."""
    from pairlab import experiments
    from pairlab.active import PrintLog
    from pairlab.notebook import setup

    ctx = setup("03_cosinebert_active_learning", **params)
    prepared, loop = experiments.prepare_active(ctx.params, show=False)
    archive = params.get("run_archive")
    experiments.sweep(
        prepared,
        params["strategies"],
        params["seeds"],
        loop,
        ctx.path("active"),
        callbacks=[PrintLog()],
        archive=archive and ctx.project_path(archive),
    )


def _share(text: str, params: dict) -> dict:
    """One ``--process`` value: ``seeds=0,1 strategies=a,b KEY=VALUE ...``."""
    share = {"seeds": params["seeds"], "strategies": params["strategies"], "set": []}
    for item in text.split():
        key, _, value = item.partition("=")
        if key == "seeds":
            share["seeds"] = [int(v) for v in value.split(",")]
        elif key == "strategies":
            share["strategies"] = value.split(",")
        elif key in params:
            share["set"].append((key, value))
        else:
            raise SystemExit(f"--process {text!r}: {key} is not one of notebook 03's parameters")
    return share


def device_facts() -> dict:
    import torch

    facts = {"torch": torch.__version__, "cpus": os.cpu_count(), "command": sys.argv}
    if torch.cuda.is_available():
        facts["gpu"] = torch.cuda.get_device_name(0)
        facts["gpu_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    return facts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the logs, timings and device facts")
    parser.add_argument("--profile", default="paper-gpu")
    parser.add_argument("--seeds", type=int, nargs="+", help="default: the profile's")
    parser.add_argument("--strategies", nargs="+", help="default: the profile's, in its order")
    parser.add_argument("--set", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"))
    parser.add_argument(
        "--process",
        action="append",
        default=[],
        help='one process: "seeds=0 strategies=a,b KEY=VALUE ..."',
    )
    parser.add_argument(
        "--stop-after",
        type=float,
        help="seconds; runs still going are stopped "
        "(their finished rounds are archived and resume on the next call)",
    )
    parser.add_argument(
        "--per-run", action="store_true", help="one process for every strategy and seed"
    )
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child process
    args = parser.parse_args(argv)
    params = settings(args.profile, args.set, args.seeds, args.strategies)
    if args.one:
        run_seed(params)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "device.json").write_text(json.dumps(device_facts(), indent=1))
    shares = [_share(text, params) for text in args.process]
    if args.per_run:
        shares += [
            {"seeds": [seed], "strategies": [strategy], "set": []}
            for strategy in params["strategies"]
            for seed in params["seeds"]
        ]
    shares = shares or [
        {"seeds": [seed], "strategies": params["strategies"], "set": []} for seed in params["seeds"]
    ]
    threads = max(1, (os.cpu_count() or 2) // len(shares))
    children, started = {}, time.time()
    for i, share in enumerate(shares):
        name = f"p{i}-seed{'-'.join(map(str, share['seeds']))}-{'-'.join(share['strategies'])}"
        env = {
            **os.environ,
            "OMP_NUM_THREADS": str(threads),
            "PYTHONUNBUFFERED": "1",
        }
        cmd = [
            sys.executable,
            __file__,
            str(args.out),
            "--one",
            "--profile",
            args.profile,
            "--seeds",
            *map(str, share["seeds"]),
            "--strategies",
            *share["strategies"],
        ]
        for key, value in [*args.set, *share["set"]]:
            cmd += ["--set", key, value]
        log = open(args.out / f"{name}.log", "w")
        log.write(" ".join(cmd) + "\n")
        log.flush()
        children[name] = (
            subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT),
            log,
        )
    timings = {}
    for name, (child, log) in children.items():
        left = (
            None if args.stop_after is None else max(1.0, started + args.stop_after - time.time())
        )
        try:
            code = child.wait(timeout=left)
        except subprocess.TimeoutExpired:
            child.terminate()
            code = child.wait()
        log.close()
        timings[name] = {"seconds": round(time.time() - started, 1), "exit": code}
        print(f"{name}: exit {code} after {timings[name]['seconds']} s", flush=True)
    (args.out / "timings.json").write_text(json.dumps(timings, indent=1))
    return max(abs(t["exit"]) for t in timings.values())


if __name__ == "__main__":
    raise SystemExit(main())
