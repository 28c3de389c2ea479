import numpy as np
import pandas as pd
import pytest

from pairlab.experiments import baselines
from pairlab.data import build_qqp
from pairlab.models.training import TrainConfig


def toy_qqp():
    texts = {1: "How do I learn Python?", 2: "What is the best way to learn Python?",
             3: "How can I learn Python quickly?", 4: "What is the capital of France?",
             5: "Which city is the capital of France?", 6: "How do I cook rice?",
             7: "Why is the sky blue?", 8: "What makes the sky look blue?"}
    rows = [(1, 2, 1), (2, 3, 1), (4, 5, 1), (7, 8, 1), (1, 4, 0), (6, 7, 0), (3, 6, 0), (5, 8, 0)]
    frame = pd.DataFrame([(a, b, texts[a], texts[b], y) for a, b, y in rows],
                         columns=["qid1", "qid2", "question1", "question2", "is_duplicate"])
    return build_qqp(frame.astype({"is_duplicate": "int8"}), fractions=(0.98, 0.01, 0.01))


def test_stated_pairs_are_positives_and_stated_negatives():
    pool = toy_qqp()["train"]
    ids, labels = baselines.stated_pairs(pool)
    assert len(ids) == pool.n_positives + len(pool.stated_negatives) == 5 + 4  # closure adds 1-3
    assert labels.sum() == 5 and np.array_equal(ids, np.sort(ids))


def test_sample_pairs_is_seeded_and_capped():
    ids = np.arange(100, dtype=np.int64)
    a = baselines.sample_pairs(ids, 10, seed=1)
    assert len(a) == 10 and np.array_equal(a, baselines.sample_pairs(ids, 10, seed=1))
    assert not np.array_equal(a, baselines.sample_pairs(ids, 10, seed=2))
    assert baselines.sample_pairs(ids, None) is ids
    with pytest.raises(ValueError, match="max_pairs"):
        baselines.sample_pairs(ids, 1)


def test_train_or_load_reuses_a_saved_model(tmp_path):
    pool = toy_qqp()["train"]
    ids, _ = baselines.stated_pairs(pool)
    config = TrainConfig(epochs=1, batch_size=4)
    first, name = baselines.train_or_load("cosinebert", pool, ids, config, folder=tmp_path)
    again, same = baselines.train_or_load("cosinebert", pool, ids, config, folder=tmp_path)
    assert name == same and (tmp_path / name / "pairlab_done").is_file()
    assert again.calibration == first.calibration  # loaded, not retrained
    other = baselines.model_id("cosinebert", pool, ids[:-1], config)
    assert other != name
    with pytest.raises(ValueError, match="kind"):
        baselines.train_or_load("svm", pool, ids, config, folder=tmp_path)


def test_heuristic_metrics_of_a_perfect_scorer():
    task = toy_qqp()
    perfect = lambda pool, ids: pool.labels(ids).astype(float)  # noqa: E731
    out = baselines.heuristic_metrics("qqp", perfect, task["train"], task["train"])
    assert out["accuracy"] == out["f1"] == out["roc_auc"] == 1.0
