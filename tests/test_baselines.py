import numpy as np
import pandas as pd
import pytest

from pairlab.data import build_qqp
from pairlab.experiments import baselines
from pairlab.models.training import TrainConfig


def toy_qqp():
    texts = {
        1: "How do I learn Python?",
        2: "What is the best way to learn Python?",
        3: "How can I learn Python quickly?",
        4: "What is the capital of France?",
        5: "Which city is the capital of France?",
        6: "How do I cook rice?",
        7: "Why is the sky blue?",
        8: "What makes the sky look blue?",
    }
    rows = [(1, 2, 1), (2, 3, 1), (4, 5, 1), (7, 8, 1), (1, 4, 0), (6, 7, 0), (3, 6, 0), (5, 8, 0)]
    frame = pd.DataFrame(
        [(a, b, texts[a], texts[b], y) for a, b, y in rows],
        columns=["qid1", "qid2", "question1", "question2", "is_duplicate"],
    )
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


def test_train_or_load_reuses_a_saved_model(tmp_path, tiny_model):
    pool = toy_qqp()["train"]
    ids, _ = baselines.stated_pairs(pool)
    config = TrainConfig(epochs=1, batch_size=4)
    first, name = baselines.train_or_load(
        "cosinebert", pool, ids, config, folder=tmp_path, model=tiny_model
    )
    again, same = baselines.train_or_load(
        "cosinebert", pool, ids, config, folder=tmp_path, model=tiny_model
    )
    assert name == same and (tmp_path / name / "pairlab_done").is_file()
    assert again.calibration == first.calibration  # loaded, not retrained
    other = baselines.model_id("cosinebert", pool, ids[:-1], config, tiny_model)
    assert other != name
    with pytest.raises(ValueError, match="kind"):
        baselines.train_or_load("svm", pool, ids, config, folder=tmp_path)


@pytest.mark.parametrize("kind", ["concatbert", "cosinebert"])
def test_a_saved_models_scores_are_read_back_not_recomputed(
    tmp_path, kind, monkeypatch, tiny_model
):
    pool = toy_qqp()["train"]
    ids, _ = baselines.stated_pairs(pool)
    config = TrainConfig(epochs=1, batch_size=4)
    model, name = baselines.train_or_load(
        kind, pool, ids, config, folder=tmp_path, model=tiny_model
    )
    outputs = tmp_path / name / baselines.OUTPUTS
    stale = outputs / "stale.npy"  # what a crashed earlier model left: dropped when retrained
    first = model.score_pairs(pool, ids[:5])
    assert len(list(outputs.glob("*.npy"))) >= 1
    fresh = model.score_pairs(pool, ids[5:9])  # other pairs: computed, not a wrong read-back
    loaded, _ = baselines.train_or_load(kind, pool, ids, config, folder=tmp_path, model=tiny_model)
    calls = []
    inner = loaded.model if kind == "concatbert" else loaded.encoder
    real = inner.predict if kind == "concatbert" else inner.encode
    monkeypatch.setattr(
        inner,
        "predict" if kind == "concatbert" else "encode",
        lambda *a, **k: calls.append(1) or real(*a, **k),
    )
    assert np.allclose(loaded.score_pairs(pool, ids[:5]), first, atol=1e-6) and not calls
    assert np.allclose(loaded.score_pairs(pool, ids[5:9]), fresh, atol=1e-6) and not calls
    unseen = np.setdiff1d(np.arange(min(pool.n_pairs, 40)), ids)[:3]
    assert len(unseen) == 3
    loaded.score_pairs(pool, unseen)
    assert calls  # pairs it never scored are scored
    stale.write_bytes(b"x")
    (tmp_path / name / "pairlab_done").unlink()
    baselines.train_or_load(kind, pool, ids, config, folder=tmp_path, model=tiny_model)
    assert not stale.exists()


def test_heuristic_metrics_of_a_perfect_scorer():
    task = toy_qqp()
    perfect = lambda pool, ids: pool.labels(ids).astype(float)  # noqa: E731
    out = baselines.heuristic_metrics("qqp", perfect, task["train"], task["train"])
    assert out["accuracy"] == out["f1"] == out["roc_auc"] == 1.0
