"""Random kills: an active-learning sweep is SIGKILLed again and again (at random moments inside
its stages, and just before or after its atomic renames) and restarted until it finishes; it
must end with exactly the labels, rounds and metrics of an uninterrupted run, and leave no
temporary file behind.

Short mode (``make test``): the tests' stand-in learner, 6 kills, all at file writes. Full mode
(``make test-reliability``): the real CosineBERT on a smoke-sized QQP pool, 20 kills spread over
embedding, search, training, evaluation and the writes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from reliability_kit import FULL, ROOT, outputs, record, reference, run_target  # noqa: F401 (fixtures)

from pairlab.io import is_temporary


def moments(status: Path, *, unique: bool = True) -> list[str]:
    """The kill moments of a run's status file, in order: every stage entered and every file
    renamed into place (each once, if ``unique``)."""
    out = []
    for line in status.read_text().splitlines():
        kind, *rest = line.split()
        if kind == "stage" and rest[0] != "0":
            out.append(f"stage:{rest[0]}:{rest[1]}")
        elif kind == "write":
            out.append(f"write:{rest[1]}")
    return list(dict.fromkeys(out)) if unique else out


def compare(reference: dict, killed: dict) -> dict:
    ref, got = reference["labels"], killed["labels"]
    key = ["round", "left", "right"]
    merged = ref.merge(got, on=key, how="outer", suffixes=("_ref", "_got"), indicator=True)
    both = merged[merged["_merge"] == "both"]
    return {
        "rows": int(len(ref)),
        "lost": int((merged["_merge"] == "left_only").sum()),
        "extra": int((merged["_merge"] == "right_only").sum()),
        "duplicated": int(got.duplicated(subset=key).sum()),
        "differing": int((both["label_ref"] != both["label_got"]).sum()),
        "rounds_identical": reference["rounds"] == killed["rounds"],
        "records_identical": reference["records"] == killed["records"],
        "result_identical": reference["result"] == killed["result"],
    }


def _kind(moment: str) -> str:
    return moment.split(":")[2] if moment.startswith("stage") else "write"


def _where(spot: str) -> str:
    """``killed stage:2:train`` -> ``train``; ``killed write:round_02.npz before`` -> ``before
    renaming a round file`` (files by kind: round, embeddings, model, result, labels, config)."""
    moment = spot.split()[1]
    if moment.startswith("stage"):
        return moment.split(":")[2]
    name = moment.split(":", 1)[1]
    kind = (
        "round file"
        if name.startswith("round_")
        else "cached embeddings"
        if name.endswith(".npy")
        else name
        if "." in name
        else "shared model"
    )
    return f"{spot.split()[2]} renaming {kind}"


def leftovers(*folders) -> list[str]:
    return sorted(str(p) for folder in folders for p in Path(folder).rglob("*") if is_temporary(p))


def test_random_kills_lose_nothing_and_change_nothing(tmp_path, reference, record):
    n_kills = 20 if FULL else 4
    rng = np.random.default_rng(20261123)
    started = time.monotonic()
    timeline = moments(reference[1])
    # a trained model's embeddings are cached only when training shared it (a resumed run loads
    # the round model instead), so those writes need not come again: no kills planned there
    first_round = next(i for i, m in enumerate(timeline) if m.startswith("stage:1:"))
    timeline = [m for i, m in enumerate(timeline) if not (i > first_round and m.endswith(".npy"))]
    index = {moment: i for i, moment in enumerate(timeline)}

    root, status, cache = tmp_path / "killed", tmp_path / "killed.status", tmp_path / "cache"
    landed, restarts = [], 0
    for k in range(n_kills):
        # the next moment: one ahead of where the killed run got to, that will come again (a
        # file already renamed into place, e.g. a cached embedding, is not written twice)
        seen = moments(status, unique=False) if status.exists() else []
        reached = max((index[m] for m in seen if m in index), default=-1)
        ahead = [m for m in timeline[reached + 1 :] if not (m.startswith("write") and m in seen)]
        if not ahead:
            break
        window = ahead[: max(1, len(ahead) // (n_kills - k))]  # room left for the other kills
        hits = Counter(_kind(line.split()[1]) for line in landed)
        fewest = min(hits[_kind(m)] for m in window)  # spread the kills over stages and writes
        choices = [m for m in window if hits[_kind(m)] == fewest]
        moment = choices[int(rng.integers(len(choices)))]
        extra = (
            ["--when", rng.choice(["before", "after"])]
            if moment.startswith("write")
            else ["--delay", f"{rng.uniform(0, 0.3) if FULL else 0:.3f}"]
        )  # stand-in stages take ms
        restarts += 1
        if run_target(root, status, cache, "--kill-at", moment, *extra) == 0:
            break  # the run finished before the moment came
        landed.append(
            next(
                line
                for line in reversed(status.read_text().splitlines())
                if line.startswith("killed ")
            )
        )
    run_target(root, status, cache)  # and once more, to the end
    restarts += 1

    figures = compare(outputs(reference[0]), outputs(root))
    left = leftovers(root, cache)
    where = Counter(_where(spot) for spot in landed)
    record(
        kills=len(landed),
        restarts=restarts,
        learner="CosineBERT (all-MiniLM-L6-v2)" if FULL else "stand-in",
        landed=dict(sorted(where.items())),
        leftover_temporaries=len(left),
        seconds=round(time.monotonic() - started),
        **figures,
    )
    assert len(landed) >= n_kills * 0.75, landed  # most kills landed before the run finished
    assert (
        figures["lost"] == figures["extra"] == figures["duplicated"] == figures["differing"] == 0
    ), figures
    assert (
        figures["rounds_identical"] and figures["records_identical"] and figures["result_identical"]
    )
    assert not left, left


@pytest.mark.skipif(
    not FULL,
    reason="make test runs every notebook through the runner and nbval "
    "runs them again, reading their runs back; make test-reliability kills one",
)
def test_a_killed_notebook_run_again_reads_its_finished_runs_back(tmp_path, record):
    """Notebook 03 through the runner, the runner and its kernel SIGKILLed once the first of its
    runs has finished; run again, that run is read back, not recomputed."""
    run_dir = f"runs/reliability-{os.getpid()}"  # relative to the project, as users set it
    command = [
        sys.executable,
        "-m",
        "pairlab.runner",
        "--profile",
        "smoke",
        "--notebooks",
        "03",
        "-p",
        "dataset",
        "qqp",
        "-p",
        "strategies",
        "[random, uncertainty]",
        "-p",
        "seeds",
        "[0, 1]",
        "-p",
        "run_dir",
        run_dir,
        "-p",
        "figures_dir",
        f"{run_dir}/figures",
    ]
    env = {**os.environ, "PAIRLAB_CACHE_DIR": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    active = ROOT / run_dir / "active"
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        while proc.poll() is None and not list(active.glob("*/*/result.json")):
            time.sleep(0.5)
        assert proc.poll() is None, "the notebook ended before any run finished"
        import psutil  # ipykernel's dependency: the kernel runs in a session of its own

        family = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
        for member in family:
            with contextlib.suppress(psutil.NoSuchProcess):
                member.kill()
        psutil.wait_procs(family, timeout=30)
        proc.wait()
        finished = {p: p.stat().st_mtime_ns for p in active.glob("*/*/result.json")}
        again = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
        )
        assert again.returncode == 0, again.stderr[-3000:]
        kept = [p for p, mtime in finished.items() if p.stat().st_mtime_ns == mtime]
        log = (ROOT / run_dir / "03_cosinebert_active_learning.ipynb").read_text()
        runs = list(active.glob("*/*/result.json"))
        record(
            finished_before_the_kill=len(finished),
            read_back_unchanged=len(kept),
            runs=len(runs),
            seconds=round(time.monotonic() - started),
        )
        assert kept == list(finished) and log.count("read back from") == len(finished)
        assert (
            len(runs) == 4
            and (ROOT / run_dir / "03_cosinebert_active_learning.metrics.json").is_file()
        )
    finally:
        shutil.rmtree(ROOT / run_dir, ignore_errors=True)
