"""The reliability catalogue's shared pieces (imported by its test modules: a second conftest.py
would shadow tests/conftest.py): the full or short mode, and the figures each test
records for the docs table.

``PAIRLAB_RELIABILITY=full`` (``make test-reliability``) runs the long versions (20 kills of a
real-model run, 1,000 marks per writer); otherwise (``make test``) the short ones.
``PAIRLAB_RELIABILITY_OUT=<folder>`` makes each test write its figures there as JSON
(``<test>.json``), which ``python -m pairlab.report`` renders into docs/RELIABILITY.md.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

FULL = os.environ.get("PAIRLAB_RELIABILITY") == "full"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.fixture
def record(request):
    """``record(**figures)``: keep this test's figures (merged over calls) for the docs."""
    out = os.environ.get("PAIRLAB_RELIABILITY_OUT")
    figures = {}

    def keep(**values):
        figures.update(values)
        if out:
            path = Path(out) / f"{request.node.name}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                json.dumps(
                    {"test": request.node.nodeid, "mode": "full" if FULL else "short", **figures},
                    indent=2,
                    sort_keys=True,
                )
                + "\n"
            )

    return keep


def target_command(root, status, *extra) -> list[str]:
    return [sys.executable, str(HERE / "run_target.py"), str(root), str(status), *map(str, extra)]


MODE = [] if FULL else ["--fake"]  # run_target's learner: CosineBERT, or the tests' stand-in


def target_env(cache) -> dict:
    return {
        **os.environ,
        "PAIRLAB_CACHE_DIR": str(cache),
        "OMP_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


def run_target(root, status, cache, *extra) -> int:
    """run_target.py to its end (or its self-inflicted SIGKILL); returns the exit status."""
    proc = subprocess.run(
        target_command(root, status, *MODE, *extra),
        env=target_env(cache),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=900,
    )
    if proc.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"the run failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.returncode


@pytest.fixture(scope="session")
def reference(tmp_path_factory):
    """One uninterrupted run in its own process, folder and cache: what every other run of the
    same config and seed must equal. Returns (root, status file)."""
    folder = tmp_path_factory.mktemp("reference")
    run_target(folder / "runs", folder / "status", folder / "cache")
    return folder / "runs", folder / "status"


def outputs(root: Path) -> dict:
    """A finished run's labels, round batches, records and result, timings left out."""
    import numpy as np
    import pandas as pd
    from conftest import timeless

    (folder,) = [p for p in Path(root).glob("*/*") if p.is_dir()]
    rounds = {}
    for path in sorted((folder / "rounds").glob("round_*.npz")):
        with np.load(path) as f:
            rounds[path.name] = {k: f[k].tolist() for k in f.files}
    # without what the machine measured (wall times, peak memory), which no two runs share
    records = [
        timeless(json.loads(p.read_text()))
        for p in sorted((folder / "rounds").glob("round_*.json"))
    ]
    result = timeless(json.loads((folder / "result.json").read_text()))
    return {
        "labels": pd.read_csv(folder / "labels.csv"),
        "rounds": rounds,
        "records": records,
        "result": result,
    }


def same_outputs(a: dict, b: dict) -> dict:
    """Per part of :func:`outputs`: identical or not."""
    return {key: bool(a[key].equals(b[key]) if key == "labels" else a[key] == b[key]) for key in a}
