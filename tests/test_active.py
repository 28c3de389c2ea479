"""The round loop on synthetic pools with a fast, deterministic stand-in learner: schedule,
invariants, the run folder, crash and resume, reuse."""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import BASE, POOLS, VECTORS, FakeLearner, run

from pairlab.active import ActiveConfig, reliability, schedule
from pairlab.data.pairs import isin_sorted


def test_schedule_matches_the_papers_budgets():
    assert schedule(2048, 10) == [2048, 3072, 4608, 6912, 10368, 15552, 23328, 34992, 52488, 78732]
    assert sum(schedule(2048, 10)) == 232_100 and sum(schedule(2048, 4)) == 16_640
    assert ActiveConfig(task="t", strategy="random", n1=12, rounds=3).budget == 12 + 18 + 27
    assert ActiveConfig(task="t", strategy="random", batches=[5, 7]).schedule() == [5, 7]
    with pytest.raises(ValueError, match="n1 must be a positive integer"):
        schedule(0, 3)


def test_a_run_labels_its_budget_once_each_and_records_every_round(tmp_path):
    events = []
    active, folder = run(tmp_path, callbacks=[lambda event, **p: events.append((event, p))])
    result = active.run()
    frame = pd.read_csv(folder / "labels.csv")
    assert list(frame.columns) == ["round", "left", "right", "label", "oracle"]
    assert (frame["label"] == frame["oracle"]).all()  # the oracle answered
    assert len(frame) == result["labels"] == 12 + 18 + 27
    assert frame.groupby("round").size().tolist() == [12, 18, 27]
    pairs = {frozenset(p) for p in zip(frame["left"], frame["right"])}
    assert len(pairs) == len(frame) and all(
        len(p) == 2 for p in pairs
    )  # no pair twice, no self pair
    ids = np.concatenate(
        [np.load(folder / "rounds" / f"round_{i:02d}.npz")["ids"] for i in (1, 2, 3)]
    )
    assert len(np.unique(ids)) == len(ids)
    assert (
        frame["label"].sum()
        == result["positives_found"]
        == int(isin_sorted(np.sort(ids), POOLS["train"].positives).sum())
    )
    assert [r["strategy"] for r in result["records"]] == [
        "static_retrieval",
        "uncertainty",
        "uncertainty",
    ]
    assert all(set(r["seconds"]) >= {"select", "train", "evaluate"} for r in result["records"])
    assert (
        result["records"][0]["calibration"] is None and result["records"][1]["calibration"]["table"]
    )
    assert (
        0 <= result["test"]["ap"] <= 1 and result["test"]["ap_ci"][0] <= result["test"]["ap_ci"][1]
    )
    assert [e for e, _ in events].count("round_finished") == 3 and events[-1][0] == "run_finished"
    assert json.loads((folder / "config.json").read_text())["strategy"] == "uncertainty"
    assert not list(folder.glob("model_round_*"))  # models are dropped once the run is done


def test_selections_exclude_labelled_pairs_across_rounds(tmp_path):
    active, folder = run(tmp_path, strategy="adaptive_retrieval")
    active.run()
    batches = [np.load(folder / "rounds" / f"round_{i:02d}.npz")["ids"] for i in (1, 2, 3)]
    for k in range(1, 3):
        assert not np.isin(batches[k], np.concatenate(batches[:k])).any()


def test_a_crash_mid_round_then_resume_gives_the_uninterrupted_labels(tmp_path):
    straight, straight_folder = run(tmp_path / "a")
    expected = straight.run()
    crashing, folder = run(tmp_path / "b", learner=FakeLearner(VECTORS, crash_at_round=2))
    with pytest.raises(KeyboardInterrupt):
        crashing.run()
    assert (folder / "rounds" / "round_02.npz").is_file()  # batch 2 labelled, round unfinished
    assert not (folder / "rounds" / "round_02.json").is_file()
    learner = FakeLearner(VECTORS)
    resumed, _ = run(tmp_path / "b", learner=learner)
    result = resumed.run()
    assert [r for r, _ in learner.trained] == [2, 3]  # round 1 was not redone
    assert pd.read_csv(folder / "labels.csv").equals(pd.read_csv(straight_folder / "labels.csv"))
    assert result["test"] == expected["test"]


def test_a_finished_run_is_read_back_not_recomputed(tmp_path):
    first, _ = run(tmp_path)
    result = first.run()
    learner, events = FakeLearner(VECTORS), []
    again, _ = run(tmp_path, learner=learner, callbacks=[lambda event, **p: events.append(event)])
    assert again.run() == json.loads(json.dumps(result)) and learner.trained == []
    assert events == ["run_reused"]


def test_same_seed_same_selection_other_seed_other_random_batches(tmp_path):
    labels = []
    for seed, where in ((0, "a"), (0, "b"), (1, "c")):
        active, folder = run(tmp_path / where, strategy="random", seed=seed)
        active.run()
        labels.append(pd.read_csv(folder / "labels.csv"))
    assert labels[0].equals(labels[1]) and not labels[0].equals(labels[2])


def test_non_adaptive_runs_without_curve_train_once(tmp_path):
    learner = FakeLearner(VECTORS)
    active, _ = run(tmp_path, strategy="static_retrieval", learner=learner, curve=False)
    result = active.run()
    assert learner.trained == [(3, 57)]
    assert [("dev" in r) for r in result["records"]] == [False, False, True]


def test_bad_configs_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="exceeds the 12,720 pairs"):
        run(tmp_path, n1=10_000, rounds=2)
    with pytest.raises(ValueError, match="unknown strategy"):
        run(tmp_path, strategy="committee")
    active, folder = run(tmp_path)
    (folder).mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"strategy": "other"}))
    with pytest.raises(ValueError, match="another config"):
        active.run()


def test_reliability_bins_predicted_p_against_labels():
    table = reliability(np.array([0.05, 0.1, 0.55, 0.58, 0.95]), np.array([0, 0, 1, 0, 1]))
    assert [row["n"] for row in table] == [1, 1, 2, 1]
    assert table[2]["positive_share"] == 0.5 and table[2]["bin"] == [0.5, 0.6]


def test_stage_times_count_the_candidate_search_once(tmp_path):
    events = []
    active, _ = run(tmp_path, callbacks=[lambda event, **p: events.append((event, p))])
    record = active.run()["records"][1]
    assert list(record["seconds"]) == ["embed", "search", "select", "train", "evaluate"]
    emitted = [p for e, p in events if e == "stage" and p["round"] == 2]
    assert [p["stage"] for p in emitted] == list(record["seconds"])
    assert all(p["seconds"] == record["seconds"][p["stage"]] >= 0 for p in emitted)


def test_candidate_recall_is_recorded_for_candidate_strategies_only(tmp_path):
    """Round 1 of static retrieval searches the pretrained neighbours: its recall is theirs,
    recomputed here; later rounds count only the positives not labelled yet. Random sampling
    uses no candidates and records none."""
    from pairlab.data.pairs import isin_sorted
    from pairlab.evaluation.candidates import neighbour_pairs

    pool = POOLS["train"]
    emb = np.stack([VECTORS[t] for t in pool.left_texts])
    candidates, _ = neighbour_pairs(pool.space, emb, emb, m=BASE["candidate_m"])
    expected = isin_sorted(pool.positives, candidates).mean()
    records = run(tmp_path, strategy="static_retrieval")[0].run()["records"]
    assert records[0]["candidate_recall"] == pytest.approx(expected)
    assert all(0.0 <= r["candidate_recall"] <= 1.0 for r in records)
    # labelling the easy positives leaves the rest farther away: recall does not rise
    assert records[-1]["candidate_recall"] <= records[0]["candidate_recall"]
    assert all(
        "candidate_recall" not in r for r in run(tmp_path, strategy="random")[0].run()["records"]
    )
