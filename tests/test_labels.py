import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest

from pairlab.widgets.labels import LabelStore

ROOT = Path(__file__).resolve().parents[1]
WHERE = {"task": "qqp", "split": "dev", "model_id": "m0"}


def _add(store, pair_id, mark="real_error", *, stratum="near", annotator="ann", **kwargs):
    return store.add(
        pair_id, **{**WHERE, **kwargs}, stratum=stratum, mark=mark, annotator=annotator
    )


def every_mark(store):
    """Every row, superseded marks too: the append-only file as written."""
    return store._read("SELECT * FROM marks ORDER BY id")


def test_round_trip(tmp_path):
    with LabelStore(tmp_path / "sub" / "labels.sqlite") as store:
        row = store.add(
            7,
            **WHERE,
            stratum="rand",
            mark="unsure",
            annotator="ann",
            left_text="a <b>",
            right_text="c",
        )
        frame = store.marks()
    assert len(frame) == 1
    got = frame.iloc[0]
    assert got["id"] == row and got["pair_id"] == 7 and got["stratum"] == "rand"
    assert (got["mark"], got["left_text"], got["right_text"]) == ("unsure", "a <b>", "c")
    assert got["created_at"].endswith("+00:00")  # UTC ISO-8601


def test_store_is_wal_with_full_sync(tmp_path):
    with LabelStore(tmp_path / "labels.sqlite") as store:
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_marks_survive_reopening(tmp_path):
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as store:
        ids = [_add(store, k) for k in range(5)]
    with LabelStore(path) as store:  # a restarted kernel
        assert every_mark(store)["id"].tolist() == ids


@pytest.mark.parametrize("field, value", [("mark", "wrong"), ("stratum", "positive")])
def test_bad_mark_or_stratum_raises(tmp_path, field, value):
    kwargs = {"mark": "real_error", "stratum": "near", field: value}
    with LabelStore(tmp_path / "labels.sqlite") as store:
        with pytest.raises(ValueError, match=f"{field} must be one of .*{value}"):
            store.add(1, **WHERE, annotator="ann", **kwargs)
        assert len(every_mark(store)) == 0


@pytest.mark.parametrize("pair_id", [-1, 1.5, "3", True])
def test_bad_pair_id_raises(tmp_path, pair_id):
    with LabelStore(tmp_path / "labels.sqlite") as store:
        with pytest.raises(ValueError, match="pair_id must be a non-negative integer"):
            _add(store, pair_id)


def test_latest_mark_supersedes_and_counts(tmp_path):
    with LabelStore(tmp_path / "labels.sqlite") as store:
        _add(store, 1, "real_error")
        _add(store, 1, "actually_positive")  # the same annotator changes their mind
        _add(store, 1, "real_error", annotator="other")  # a second opinion is kept
        _add(store, 2, "unsure")
        _add(store, 3, "real_error", stratum="rand")
        _add(store, 4, "real_error", model_id="m1")  # another model's marks are not counted
        current = store.marks(**WHERE)
        assert len(every_mark(store)) == 6 and len(current) == 4
        mine = current[(current["pair_id"] == 1) & (current["annotator"] == "ann")]
        assert mine["mark"].tolist() == ["actually_positive"]
        assert store.counts(**WHERE, pair_ids=[1, 2, 3, 4]) == {"near": (1, 2), "rand": (1, 1)}
        assert store.counts(**WHERE, pair_ids=[2, 3]) == {"near": (0, 0), "rand": (1, 1)}


def _write_many(path, name, n):
    with LabelStore(path) as store:
        for k in range(n):
            store.add(k, **WHERE, stratum="near", mark="unsure", annotator=name)


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path = tmp_path / "labels.sqlite"  # not created beforehand: both processes race to it
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_write_many, args=(path, f"w{k}", 200)) for k in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0, 0]
    with LabelStore(path) as store:
        frame = every_mark(store)
    assert len(frame) == 400 and frame["id"].is_unique
    assert frame.groupby("annotator").size().to_dict() == {"w0": 200, "w1": 200}


def test_one_store_used_from_several_threads_loses_nothing(tmp_path):
    """Widget callbacks run on comm subshell threads (ipykernel 7), not the thread that opened
    the store: writes and reads from other threads, at once, must all land exactly once."""
    store = LabelStore(tmp_path / "labels.sqlite")  # opened on this thread
    rows, errors = [], []

    def work(k):
        try:
            for pair_id in range(100):
                rows.append(_add(store, pair_id, annotator=f"t{k}"))
                store.marks(annotator=f"t{k}")
        except Exception as caught:  # noqa: BLE001 - reported below with its thread
            errors.append(f"thread {k}: {caught!r}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    frame = every_mark(store)
    assert sorted(frame["id"]) == sorted(rows) and len(every_mark(store)) == 400
    assert frame.groupby("annotator").size().to_dict() == {f"t{k}": 100 for k in range(4)}
    with closing(sqlite3.connect(store.path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store.close()


WRITER = """
import sys
import threading
from contextlib import closing
from pairlab.widgets.labels import LabelStore
store = LabelStore(sys.argv[1])
k = 0
while True:
    row = store.add(k, task="qqp", split="dev", model_id="m0", stratum="near",
                    mark="real_error", annotator="killed", left_text="x" * 500)
    print(row, flush=True)
    k += 1
"""


def test_killed_writer_loses_no_committed_mark(tmp_path):
    path = tmp_path / "labels.sqlite"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    try:
        printed = [int(proc.stdout.readline()) for _ in range(30)]
        os.kill(proc.pid, signal.SIGKILL)  # mid-loop: possibly inside an uncommitted insert
        proc.wait(timeout=30)
        printed += [int(line) for line in proc.stdout.read().split()]
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    with LabelStore(path) as store:
        stored = set(every_mark(store)["id"])
        assert set(printed) <= stored
        assert store._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with closing(sqlite3.connect(path)) as conn:  # a plain reader sees the same rows
        assert conn.execute("SELECT COUNT(*) FROM marks").fetchone()[0] == len(stored)


def test_opening_waits_for_another_process_converting_the_file(tmp_path):
    # sqlite does not run the busy handler for the switch to WAL: a store opened while another
    # connection is mid-write in the not-yet-WAL file must retry rather than fail at once
    path = tmp_path / "labels.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE other (x)")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO other VALUES (1)")
    release = threading.Timer(0.5, holder.execute, args=("COMMIT",))
    release.start()
    try:
        with LabelStore(path, timeout=10) as store:
            store.add(1, **WHERE, stratum="near", mark="unsure", annotator="late")
            assert len(every_mark(store)) == 1
    finally:
        release.join()
        holder.close()
