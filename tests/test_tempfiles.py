import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from conftest import VECTORS, FakeLearner, run

from pairlab.io import HOST, is_temporary, locked, remove_stale, temporary, write_json


def dead_pid() -> int:
    """The id of a process that has finished (so is not running)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temporary_names_keep_the_suffix_numpy_insists_on(tmp_path):
    assert temporary(tmp_path / "round_01.npz").name == f"round_01.{os.getpid()}-{HOST}.tmp.npz"
    assert temporary(tmp_path / "abc123").name == f"abc123.{os.getpid()}-{HOST}.tmp"
    assert is_temporary(temporary(tmp_path / "labels.csv"))
    assert not is_temporary(tmp_path / "round_01.npz") and not is_temporary(tmp_path / "a.tmp")


def test_only_temporaries_of_finished_processes_are_removed(tmp_path):
    gone = dead_pid()
    stale_file = tmp_path / f"round_02.{gone}.tmp.npz"
    stale_dir = tmp_path / "models" / f"key.{gone}.tmp"
    mine = temporary(tmp_path / "config.json")
    keep = tmp_path / "round_02.npz"
    for path in (stale_file, mine, keep):
        path.write_bytes(b"x")
    stale_dir.mkdir(parents=True)
    (stale_dir / "model.safetensors").write_bytes(b"x" * 100)
    assert remove_stale(tmp_path) == [stale_file]
    assert remove_stale(tmp_path, recursive=True) == [stale_dir]
    assert mine.exists() and keep.exists() and not stale_dir.exists()


def test_another_machines_temporaries_are_left_to_it(tmp_path):
    """Run folders and the cache may sit on a file system a Ray cluster shares: a process id
    that is free here may be a writer at work on another node, so only this machine's dead
    writers' temporaries go (and those named before names carried a host, as before)."""
    gone = dead_pid()
    other = "0" * 6 if HOST != "0" * 6 else "1" * 6
    theirs = tmp_path / f"key.{gone}-{other}.tmp.npy"
    ours, legacy = tmp_path / f"key.{gone}-{HOST}.tmp.npy", tmp_path / f"old.{gone}.tmp.npy"
    for path in (theirs, ours, legacy):
        path.write_bytes(b"x")
    assert sorted(remove_stale(tmp_path)) == sorted([ours, legacy])
    assert theirs.exists() and is_temporary(theirs)


def test_a_run_killed_between_writing_and_renaming_resumes(tmp_path):
    """The defect: a leftover ``round_01.<pid>.tmp.npz`` made every later resume fail on
    ``int("01.<pid>.tmp")``. Now the resume ignores and removes it."""
    crashed, folder = run(tmp_path, learner=FakeLearner(VECTORS, crash_at_round=2))
    with pytest.raises(KeyboardInterrupt):
        crashed.run()
    gone = dead_pid()
    rounds = folder / "rounds"
    leftovers = [
        rounds / f"round_01.{gone}.tmp.npz",
        rounds / f"round_02.{gone}.tmp.npz",
        folder / f"labels.{gone}.tmp.csv",
        folder / f"config.{gone}.tmp.json",
    ]
    np.savez(leftovers[0], ids=np.arange(3), labels=np.zeros(3, np.int8))
    for path in leftovers[1:]:
        path.write_bytes(b"half a fi")
    events = []
    resumed, _ = run(tmp_path, callbacks=[lambda event, **p: events.append((event, p))])
    result = resumed.run()
    fresh, _ = run(tmp_path / "fresh")
    assert result["records"][-1]["labels"] == fresh.run()["records"][-1]["labels"]
    assert not any(path.exists() for path in leftovers)
    started = next(p for event, p in events if event == "run_started")
    assert started["resumed"] == 1 and started["removed_temporaries"] == 4


def test_write_json_leaves_no_temporary(tmp_path):
    write_json(tmp_path / "a.json", {"x": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_a_second_holder_waits_for_the_lock(tmp_path):
    order, waited = [], threading.Event()

    def second():
        with locked(tmp_path / ".lock", on_wait=waited.set):
            order.append("second")

    with locked(tmp_path / ".lock"):
        thread = threading.Thread(target=second)
        thread.start()
        assert waited.wait(5)
        time.sleep(0.1)
        order.append("first")
    thread.join(5)
    assert order == ["first", "second"]


def test_a_killed_holder_releases_the_lock(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; from pairlab.io import locked\n"
                f"with locked({str(tmp_path / '.lock')!r}):\n"
                "    print('held', flush=True); time.sleep(60)"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        holder.kill()
        holder.wait(10)
        start = time.monotonic()
        with locked(tmp_path / ".lock"):
            pass
        assert time.monotonic() - start < 5
    finally:
        holder.kill()
