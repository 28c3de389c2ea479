import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from pairlab.evaluation import metrics
from pairlab.evaluation.metrics import estimate_ap, estimate_precision_at_recall


def weighted_sklearn_ap(pos, near, rand, n_neg_total):
    w = (n_neg_total - len(near)) / len(rand)
    y = np.r_[np.ones(len(pos)), np.zeros(len(near) + len(rand))]
    weights = np.r_[np.ones(len(pos) + len(near)), np.full(len(rand), w)]
    return average_precision_score(y, np.r_[pos, near, rand], sample_weight=weights)


@pytest.mark.parametrize("seed", range(5))
def test_ap_equals_sklearn_weighted_ap_with_ties(seed):
    rng = np.random.default_rng(seed)
    pos = np.round(rng.normal(1.5, 1, 200), 1)  # rounding makes many ties across strata
    near = np.round(rng.normal(0.8, 1, 3000), 1)
    rand = np.round(rng.normal(0, 1, 5000), 1)
    got = estimate_ap(pos, near, rand, 1_000_000)
    assert got == pytest.approx(weighted_sklearn_ap(pos, near, rand, 1_000_000), rel=1e-12)


def test_hand_worked_example():
    # Scores: positives 0.9, 0.5; near negative 0.7; two random negatives 0.8, 0.1 with
    # n_neg_total = 11 -> w_rand = (11 - 1) / 2 = 5 per random pair.
    pos, near, rand = [0.9, 0.5], [0.7], [0.8, 0.1]
    # threshold 0.9: TP 1, FP 0 -> P 1, R .5 ; threshold 0.5: TP 2, FP 1 + 5 -> P 2/8, R 1
    assert estimate_ap(pos, near, rand, 11) == pytest.approx(0.5 * 1 + 0.5 * 0.25)
    assert estimate_precision_at_recall(pos, near, rand, 11, recall=0.2) == 1.0
    assert estimate_precision_at_recall(pos, near, rand, 11, recall=0.5) == 1.0
    assert estimate_precision_at_recall(pos, near, rand, 11, recall=0.51) == 0.25
    # ">=": a negative tied with a positive counts as a false positive at that threshold
    assert estimate_precision_at_recall([0.5], [0.5], [], 1, recall=1.0) == 0.5


def test_estimated_fp_is_eq_13():
    # pr_curve's false positives at each distinct positive score: here the thresholds
    fp = metrics.pr_curve([0.75, 0.0], [0.7, 0.8], [0.9, 0.1, -1.0, 0.2], 102)["fp"]
    w = (102 - 2) / 4
    assert fp.tolist() == [1 + w * 1, 2 + w * 3]


@pytest.mark.parametrize(
    "args, message",
    [
        (([np.nan, 1.0], [0.1], [0.2], 10), "pos_scores has 1 NaN"),
        (([1.0], [0.1, np.inf], [0.2], 10), "near_neg_scores has 1 NaN or infinite"),
        (([], [0.1], [0.2], 10), "pos_scores is empty"),
        (([1.0], [0.1, 0.2], [], 1), "smaller than the 2 near negatives"),
        (([1.0], [0.1], [], 10), "rand_neg_scores is empty but 9 negatives"),
        (([1.0], [0.1], [0.2] * 5, 3), "5 random negatives but only 2"),
        (([1.0], [0.1], [0.2], 10.5), "n_neg_total must be an integer"),
        (([[1.0]], [0.1], [0.2], 10), "1-d array"),
    ],
)
def test_bad_input_is_named(args, message):
    with pytest.raises(ValueError, match=message):
        estimate_ap(*args)


def test_recall_out_of_range():
    with pytest.raises(ValueError, match="recall"):
        estimate_precision_at_recall([1.0], [], [], 0, recall=0.0)


def test_empty_random_stratum_is_fine_when_near_holds_every_negative():
    assert estimate_ap([1.0, 0.2], [0.5], [], 1) == pytest.approx(0.5 + 0.5 * 2 / 3)


def test_bootstrap_point_estimates_and_interval_order():
    rng = np.random.default_rng(0)
    pos, near, rand = rng.normal(2, 1, 100), rng.normal(1, 1, 1000), rng.normal(0, 1, 2000)
    out = metrics.bootstrap(pos, near, rand, 10**6, n_boot=300, seed=1)
    assert out["ap"] == estimate_ap(pos, near, rand, 10**6)
    assert out["ap_ci"][0] < out["ap"] < out["ap_ci"][1]
    assert out["p_at_r_ci"][0] <= out["p_at_r"] <= out["p_at_r_ci"][1]
    again = metrics.bootstrap(pos, near, rand, 10**6, n_boot=300, seed=1)
    assert again["ap_ci"] == out["ap_ci"]  # seeded


def _strata(seed=4):
    rng = np.random.default_rng(seed)
    return tuple(np.round(rng.normal(m, 1, n), 2) for m, n in ((2, 50), (1, 300), (0, 400)))


def test_bootstrap_replicate_equals_weighted_recomputation():
    """A replicate drawn item by item must equal re-running the estimator on the resample: the
    draws at or above the lowest positive are replayed, the rest stand below every positive."""
    pos, near, rand = _strata()
    resampler = metrics._Resampler(pos, near, rand, (10_000 - 300) / 400)
    assert not resampler.near.by_bin and not resampler.rand.by_bin
    ap, p20 = resampler.draw(np.random.default_rng(9), 0.2)
    replay = np.random.default_rng(9)  # the same draws, in the same order
    p = pos[replay.integers(0, 50, 50)]
    below = pos.min() - 1.0
    n, r = (_replay_items(replay, np.sort(s), pos.min(), below) for s in (near, rand))
    assert ap == pytest.approx(estimate_ap(p, n, r, 10_000))
    assert p20 == pytest.approx(estimate_precision_at_recall(p, n, r, 10_000))


def _replay_items(rng, sorted_scores, lowest, below):
    above = sorted_scores[sorted_scores >= lowest]
    m = rng.binomial(len(sorted_scores), len(above) / len(sorted_scores))
    return np.r_[above[rng.integers(0, len(above), m)], np.full(len(sorted_scores) - m, below)]


def test_bootstrap_replicate_by_bin_counts_equals_recomputation(monkeypatch):
    """The multinomial path (large strata): bin counts, replayed as that many copies of each
    bin's lower edge, give the same AP as the estimator on that resample."""
    monkeypatch.setattr(metrics._Stratum, "ITEMS_PER_BIN", 0)
    pos, near, rand = _strata()
    resampler = metrics._Resampler(pos, near, rand, (10_000 - 300) / 400)
    assert resampler.near.by_bin and resampler.rand.by_bin
    ap, p20 = resampler.draw(np.random.default_rng(9), 0.2)
    replay = np.random.default_rng(9)
    p = pos[replay.integers(0, 50, 50)]
    values = np.unique(pos)
    edges = np.r_[values[0] - 1.0, values]  # bin b holds scores in [edges[b], values[b])
    n, r = (
        np.repeat(
            edges,
            replay.multinomial(
                len(s),
                np.bincount(np.searchsorted(values, s, side="right"), minlength=len(edges))
                / len(s),
            ),
        )
        for s in (near, rand)
    )
    assert ap == pytest.approx(estimate_ap(p, n, r, 10_000))
    assert p20 == pytest.approx(estimate_precision_at_recall(p, n, r, 10_000))


@pytest.mark.parametrize("items_per_bin", [16, 0])
def test_bootstrap_intervals_match_a_plain_resampling_bootstrap(monkeypatch, items_per_bin):
    """Within Monte Carlo error (2,000 replicates each), the fast bootstrap's 95% interval is the
    one of resampling every stratum's items with replacement and re-running the estimator."""
    monkeypatch.setattr(metrics._Stratum, "ITEMS_PER_BIN", items_per_bin)
    pos, near, rand = _strata(5)
    fast = metrics.bootstrap(pos, near, rand, 10_000, n_boot=2000, seed=3)
    rng = np.random.default_rng(11)
    plain = np.percentile(
        [
            estimate_ap(*(s[rng.integers(0, len(s), len(s))] for s in (pos, near, rand)), 10_000)
            for _ in range(2000)
        ],
        [2.5, 97.5],
    )
    width = plain[1] - plain[0]
    assert np.abs(np.array(fast["ap_ci"]) - plain).max() < 0.08 * width


def test_corrected_precision_eq_14():
    # 10 true positives; 20 near and 70 (weighted) random putative false positives.
    # 72% of near and 92% of random putative FPs are real errors (the paper's QQP check).
    out = metrics.corrected_precision(10, 20, 70, near_marks=(36, 50), rand_marks=(46, 50))
    assert out["imputed_precision"] == pytest.approx(10 / 100)
    assert out["precision"] == pytest.approx(10 / (10 + 0.72 * 20 + 0.92 * 70))
    assert out["ci"][0] < out["precision"] < out["ci"][1]
    unmarked = metrics.corrected_precision(10, 20, 70)
    assert unmarked["precision"] == unmarked["imputed_precision"] == unmarked["ci"][0]
    with pytest.raises(ValueError, match="real_errors"):
        metrics.corrected_precision(10, 20, 70, near_marks=(5, 3))


@pytest.mark.parametrize(
    "near, rand",
    [
        ((1, 1), (0, 0)),
        ((0, 0), (3, 3)),
        ((4, 4), (2, 2)),
        ((0, 1), (0, 0)),
        ((0, 2), (5, 5)),
        ((1, 3), (0, 0)),
    ],
)
def test_corrected_precision_interval_holds_its_point(near, rand):
    """One 'real error' mark (share 1) gave [0.1153, 0.4717] around a point of 0.1152: the
    Jeffreys posterior never reaches share 1. The boundary rule puts the point inside."""
    out = metrics.corrected_precision(59, 120, 332.2, near_marks=near, rand_marks=rand)
    low, high = out["ci"]
    assert low <= out["precision"] <= high and low < high
    if near[0] == near[1] and rand[0] == rand[1]:  # every marked pair a real error
        assert out["precision"] == pytest.approx(out["imputed_precision"]) == low
