import numpy as np
import pytest

from pairlab.evaluation.heuristic import accuracy_f1, best_threshold, clean_map, roc_auc


def test_best_threshold_maximises_f1_and_accuracy():
    labels = np.array([1, 1, 0, 1, 0, 0])
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.2, 0.1])
    # F1 at each cut: >=.9: 2/4; >=.8: 4/5; >=.7: 4/6; >=.6: 6/7 (best); >=.2: 6/8
    assert best_threshold(labels, scores, metric="f1") == 0.6
    # accuracy ties at 5/6 for >=.8 and >=.6: the higher threshold comes first
    assert best_threshold(labels, scores, metric="accuracy") == 0.8
    out = accuracy_f1(labels, scores, 0.6)
    assert out["f1"] == pytest.approx(6 / 7) and out["accuracy"] == pytest.approx(5 / 6)


def test_ties_are_one_threshold():
    # Splitting the tie at 0.5 would reach F1 1.0 (the positive 0.5 in, the negative out), which
    # no threshold can: the tied group goes in whole, giving F1 0.8 at 0.5, the best there is.
    labels = np.array([1, 1, 0, 0])
    scores = np.array([0.9, 0.5, 0.5, 0.1])
    assert best_threshold(labels, scores) == 0.5
    at = accuracy_f1(labels, scores, 0.5)
    assert at["f1"] == pytest.approx(0.8) and at["precision"] == pytest.approx(2 / 3)
    assert (
        best_threshold(labels, scores, metric="accuracy") == 0.9
    )  # 3 of 4 right, vs 3 of 4 at 0.5


def test_clean_map_uses_only_clean_queries():
    q = np.array(["a", "a", "a", "b", "b", "c", "c"])
    y = np.array([1, 0, 0, 0, 0, 1, 0])
    s = np.array([0.1, 0.9, 0.5, 0.3, 0.2, 0.8, 0.1])
    # a: positive ranked 3rd -> AP 1/3; b has no positive; c: AP 1
    assert clean_map(q, y, s) == pytest.approx((1 / 3 + 1) / 2)


def test_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        roc_auc([0, 1], [0.1, np.nan])
    with pytest.raises(ValueError, match="both positive and negative"):
        roc_auc([1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="no clean query"):
        clean_map(["a", "a"], [1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="metric"):
        best_threshold([0, 1], [0.1, 0.2], metric="auc")
