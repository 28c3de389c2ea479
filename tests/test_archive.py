"""A run's archive: the committed record of a run folder, restored on a machine without it."""

import shutil

import numpy as np
from conftest import POOLS, VECTORS, FakeLearner, run

from pairlab.active import archive, store
from pairlab.active.store import load_result, round_ids


def test_an_archived_run_is_read_back_on_a_new_machine_not_recomputed(tmp_path):
    active, folder = run(tmp_path / "a")
    result = active.run()
    saved = archive.save(folder, tmp_path / "archive" / folder.name)
    assert sorted(p.name for p in saved.iterdir()) == [
        "config.json",
        "labels.npz",
        "result.json",
        "rounds",
    ]
    assert not list(saved.rglob("model*")) and not list(saved.glob("labels.csv"))
    learner = FakeLearner(VECTORS)
    again, fresh = run(tmp_path / "b", learner=learner)  # a new machine: no run folder
    again.archive = saved
    assert again.run() == result
    assert learner.trained == []  # read back, nothing trained
    assert load_result(fresh) == result
    np.testing.assert_array_equal(
        np.concatenate(round_ids(fresh)), np.concatenate(round_ids(folder))
    )
    assert (fresh / "labels.csv").read_bytes() == (folder / "labels.csv").read_bytes()


def test_a_run_resumed_from_its_archive_asks_what_it_would_have_asked(tmp_path):
    """The archive of two finished rounds, on a new machine: round 3 is computed from the
    archived labels (round 2's model retrained from them) and asks the same pairs."""
    whole, folder = run(tmp_path / "whole")
    whole.run()
    crashing, partial = run(tmp_path / "part", learner=FakeLearner(VECTORS, crash_at_round=3))
    crashing.archive = tmp_path / "archive"
    try:
        crashing.run()
    except KeyboardInterrupt:
        pass
    assert store.rounds_in(tmp_path / "archive") == 2
    shutil.rmtree(tmp_path / "part")  # the machine is lost
    resumed, again = run(tmp_path / "part")
    resumed.archive = tmp_path / "archive"
    resumed.run()
    for a, b in zip(round_ids(again), round_ids(folder)):
        np.testing.assert_array_equal(a, b)
    assert store.rounds_in(tmp_path / "archive") == 3
    assert (tmp_path / "archive" / "result.json").is_file()


def test_a_folder_ahead_of_its_archive_is_kept(tmp_path):
    active, folder = run(tmp_path / "a")
    active.run()
    assert archive.restore(tmp_path / "missing", folder, POOLS["train"]) == 0
    stale = tmp_path / "stale"
    archive.save(folder, stale)
    shutil.rmtree(stale / "rounds")
    (stale / "rounds").mkdir()
    assert archive.restore(stale, folder, POOLS["train"]) == 0
    assert load_result(folder) is not None
