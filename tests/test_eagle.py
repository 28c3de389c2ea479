"""EAGLE's case study: the split by base error, AUC, and the metrics aggregation."""

import numpy as np
import pytest

from pairlab.experiments.eagle import auc, case_metrics, split_by_error


def test_split_by_error_takes_each_end_and_breaks_ties_by_id():
    ids = np.arange(100, 120, dtype=np.int64)
    error = np.r_[np.linspace(0, 1, 10), np.full(10, 0.5)]  # ten tied in the middle
    parts = split_by_error(ids, error, share=0.3)
    assert [len(parts[k]) for k in ("low", "middle", "high")] == [6, 8, 6]
    # errors 0 .. 0.44 (ids 100-104), then the ten ties at 0.5 (ids 110-119) in id order, then
    # 0.56 .. 1 (ids 105-109): each end takes its side of the tie by pair id
    assert np.array_equal(parts["low"], [100, 101, 102, 103, 104, 110])
    assert np.array_equal(parts["high"], [105, 106, 107, 108, 109, 119])
    assert error[np.isin(ids, parts["high"])].min() >= error[np.isin(ids, parts["middle"])].max()
    assert error[np.isin(ids, parts["low"])].max() <= error[np.isin(ids, parts["middle"])].min()
    together = np.sort(np.concatenate(list(parts.values())))
    assert np.array_equal(together, ids)  # a partition
    again = split_by_error(ids[::-1].copy(), error[::-1].copy(), share=0.3)
    assert all(np.array_equal(parts[k], again[k]) for k in parts)  # order of input is irrelevant
    with pytest.raises(ValueError, match="share must be in"):
        split_by_error(ids, error, share=0.5)
    with pytest.raises(ValueError, match="too few"):
        split_by_error(ids[:1], error[:1], share=0.3)


def test_auc_matches_scikit_learn_and_is_none_for_one_class():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    y, s = rng.integers(0, 2, 200), rng.normal(size=200)
    assert auc(y, s) == pytest.approx(roc_auc_score(y, s))
    assert auc(np.ones(5, int), np.arange(5.0)) is None


def test_case_metrics_average_seeds_and_keep_each():
    runs = {
        ("clean", 0): {"initial": {"auc_all": 0.8, "auc_high_error": None, "auc_low_error": None}},
        ("clean", 1): {"initial": {"auc_all": 0.6, "auc_high_error": 0.5, "auc_low_error": None}},
    }
    m = case_metrics(runs)["clean"]["initial"]
    assert m["auc_all"] == pytest.approx(0.7) and m["auc_all_std"] == pytest.approx(
        np.std([0.8, 0.6], ddof=1)
    )
    assert m["auc_high_error"] == 0.5 and "auc_high_error_std" not in m  # one seed had an answer
    assert m["per_seed"]["auc_high_error"] == [None, 0.5] and m["seeds"] == [0, 1]
    assert m["auc_low_error"] is None  # one class in every seed's part: said, not left out
