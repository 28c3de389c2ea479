"""Budget computations on synthetic curves with known answers."""

import math

import numpy as np
import pytest

from pairlab.experiments import costs
from pairlab.experiments.budget import Budget, labels_to_reach, separation_budget

LABELS = [100, 200, 400, 800]
AP = [0.10, 0.30, 0.50, 0.55]


def test_labels_to_reach_interpolates_between_rounds():
    assert labels_to_reach(LABELS, AP, 0.40) == pytest.approx(300.0)  # halfway from 200 to 400
    assert labels_to_reach(LABELS, AP, 0.30) == 200.0
    assert labels_to_reach(LABELS, AP, 0.05) == 100.0  # reached at the first round already
    assert math.isnan(labels_to_reach(LABELS, AP, 0.60))


def test_a_curve_that_dips_counts_its_first_crossing():
    assert labels_to_reach([1, 2, 3, 4], [0.1, 0.5, 0.2, 0.6], 0.4) == pytest.approx(1.75)


def test_curves_separate_where_they_stay_apart_to_the_end():
    labels = [100, 200, 400, 800, 1600]
    static_hi = [0.30, 0.32, 0.33, 0.34, 0.34]  # static retrieval's upper bound flattens out
    # uncertainty's lower bound: overlapping, apart at 200, together again at 400, apart from 800 on
    lower = [0.20, 0.33, 0.31, 0.36, 0.45]
    assert separation_budget(labels, lower, static_hi) == 800.0
    assert separation_budget(labels, [0.4] * 5, static_hi) == 100.0  # apart from the first point
    # apart in the middle but not at the end: no separation
    assert math.isnan(separation_budget(labels, [0.2, 0.4, 0.4, 0.4, 0.3], static_hi))
    # touching is not apart: the lower bound must exceed the other's upper bound
    assert math.isnan(separation_budget(labels, static_hi, static_hi))


def test_separation_of_two_noisy_curves_from_their_intervals():
    """Two curves of known means and a known interval half-width: the crossing of the gap over
    the summed half-widths is where they separate."""
    labels = np.array([50, 100, 200, 400, 800, 1600])
    static = np.full(6, 0.40)
    adaptive = 0.40 + 0.05 * np.arange(6)  # gap 0, .05, .10, .15, .20, .25
    half = 0.06  # each curve's interval: +- 0.06, so apart once the gap exceeds 0.12
    assert separation_budget(labels, adaptive - half, static + half) == 400.0
    assert math.isnan(separation_budget(labels, static - half, adaptive + half))  # the other way


def test_costs_use_the_stated_rates():

    entry = {
        "labels": 150,
        "seconds_per_run": {"train": 1000.0, "embed": 800.0},
        "ap": {"mean": 0.5},
    }
    row = costs({"toy": {"random": entry}}).loc[("toy", "random")]
    assert (row["annotator hours"], row["annotation $"]) == (2.0, 100.0)
    assert row["compute hours (measured)"] == 0.5
    assert Budget(100, 20).annotation([300]) == pytest.approx([60.0])


@pytest.mark.parametrize(
    "labels, values, match",
    [
        ([1, 1, 2], [0.1, 0.2, 0.3], "strictly increasing"),
        ([1, 2], [0.1], "equal-length"),
        ([1, 2], [0.1, float("nan")], "NaN"),
    ],
)
def test_bad_curves_are_clear_errors(labels, values, match):
    with pytest.raises(ValueError, match=match):
        labels_to_reach(labels, values, 0.2)
    with pytest.raises(ValueError, match=match):
        separation_budget(labels, values, values)


def test_bad_rates_are_clear_errors():
    with pytest.raises(ValueError, match="per_hour must be positive"):
        costs({}, per_hour=0)
