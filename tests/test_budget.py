"""Budget computations on synthetic curves with known answers."""
import math

import numpy as np
import pytest

from pairlab.experiments.budget import annotation_cost, efficiency_factor, labels_to_reach

LABELS = [100, 200, 400, 800]
AP = [0.10, 0.30, 0.50, 0.55]


def test_labels_to_reach_interpolates_between_rounds():
    assert labels_to_reach(LABELS, AP, 0.40) == pytest.approx(300.0)  # halfway from 200 to 400
    assert labels_to_reach(LABELS, AP, 0.30) == 200.0
    assert labels_to_reach(LABELS, AP, 0.05) == 100.0  # reached at the first round already
    assert math.isnan(labels_to_reach(LABELS, AP, 0.60))


def test_efficiency_factor_is_reference_labels_over_labels_needed():
    # static retrieval reaches 0.40 with 3,000 labels; this curve needs 300: 10x
    assert efficiency_factor(LABELS, AP, 3000, 0.40) == pytest.approx(10.0)
    # the paper's QQP: uncertainty passes static retrieval's 232,100-label AP after 16,640
    paper_like = efficiency_factor([2048, 5120, 9728, 16640], [0.15, 0.19, 0.21, 0.226], 232_100, 0.219)
    assert paper_like == pytest.approx(232_100 / (9728 + (0.219 - 0.21) / 0.016 * 6912), rel=1e-9)
    assert math.isnan(efficiency_factor(LABELS, AP, 3000, 0.9))


def test_a_curve_that_dips_counts_its_first_crossing():
    assert labels_to_reach([1, 2, 3, 4], [0.1, 0.5, 0.2, 0.6], 0.4) == pytest.approx(1.75)


def test_annotation_cost_uses_the_stated_rates():
    cost = annotation_cost([75, 150], compute_seconds=1800)
    assert np.allclose(cost["annotator_hours"], [1.0, 2.0])
    assert np.allclose(cost["dollars"], [50.0, 100.0]) and cost["compute_hours"] == 0.5
    assert np.allclose(annotation_cost([300], per_hour=100, dollars_per_hour=20)["dollars"], [60.0])


@pytest.mark.parametrize("labels, values, match", [
    ([1, 1, 2], [0.1, 0.2, 0.3], "strictly increasing"),
    ([1, 2], [0.1], "equal-length"),
    ([1, 2], [0.1, float("nan")], "NaN"),
])
def test_bad_curves_are_clear_errors(labels, values, match):
    with pytest.raises(ValueError, match=match):
        labels_to_reach(labels, values, 0.2)


def test_bad_rates_are_clear_errors():
    with pytest.raises(ValueError, match="per_hour must be positive"):
        annotation_cost([10], per_hour=0)
    with pytest.raises(ValueError, match="reference_labels must be positive"):
        efficiency_factor(LABELS, AP, 0, 0.3)
