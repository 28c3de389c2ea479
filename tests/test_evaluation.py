import numpy as np
import pytest
from conftest import clustered_pool
from sklearn.metrics import average_precision_score

from pairlab.data.pairs import isin_sorted
from pairlab.evaluation import (
    CosineScorer,
    EvalConfig,
    build_eval_set,
    evaluate,
    exact_all_pairs,
    metrics,
)


@pytest.fixture(scope="module")
def pool_and_emb():
    return clustered_pool(n_items=400, seed=0)


@pytest.fixture(scope="module")
def big_pool_and_emb():
    return clustered_pool(n_items=1000, seed=1)  # 499,500 pairs


def test_strata_are_disjoint_and_complete(pool_and_emb):
    pool, emb = pool_and_emb
    es = build_eval_set(pool, emb, config=EvalConfig(near_m=5, n_random=1000, seed=0))
    assert not isin_sorted(es.near, pool.positives).any()
    assert not isin_sorted(es.rand, pool.positives).any()
    assert not isin_sorted(es.rand, es.near).any()
    assert len(es.rand) == 1000 and es.n_neg_total == pool.n_pairs - pool.n_positives
    assert es.w_rand == pytest.approx((es.n_neg_total - len(es.near)) / 1000)


def test_exact_all_pairs_equals_brute_force(pool_and_emb):
    pool, emb = pool_and_emb
    i, j = np.triu_indices(len(emb), k=1)
    scores = np.einsum("nd,nd->n", emb[i].astype(np.float64), emb[j].astype(np.float64))
    labels = pool.labels(pool.space.encode(i, j))
    exact = exact_all_pairs(pool, emb)
    assert exact["ap"] == pytest.approx(average_precision_score(labels, scores), abs=1e-6)
    assert exact["n_pairs"] == len(i)


def _fixed_threshold_truth(pool, emb, thresholds):
    scorer = CosineScorer(pool.space, emb)
    i, j = np.triu_indices(len(emb), k=1)
    ids = pool.space.encode(i, j)
    negatives = scorer(ids)[pool.labels(ids) == 0]
    return scorer, np.array([(negatives >= t).sum() for t in thresholds])


def test_fp_estimate_is_unbiased_against_exact_enumeration(pool_and_emb):
    """Eq. 13 is exactly unbiased: over 500 D_rand draws of only 400 pairs, the mean estimated
    false-positive count at four fixed thresholds lies within 3 standard errors of the exact
    count (3, not 2: four thresholds are tested at once)."""
    pool, emb = pool_and_emb
    thresholds = np.array([0.9, 0.8, 0.7, 0.5])
    scorer, exact_fp = _fixed_threshold_truth(pool, emb, thresholds)
    fps = []
    for seed in range(500):
        es = build_eval_set(pool, emb, config=EvalConfig(near_m=3, n_random=400, seed=seed))
        # pr_curve's false positives at each distinct positive score: here the thresholds
        curve = metrics.pr_curve(thresholds, scorer(es.near), scorer(es.rand), es.n_neg_total)
        fps.append(curve["fp"])
    fps = np.array(fps)
    se = fps.std(axis=0, ddof=1) / np.sqrt(len(fps))
    assert (se[1:] > 0).all(), "the random stratum should make estimates vary"
    # where no random pair ever scores above the threshold (0.9: all its false positives are
    # near neighbours) the estimate is exact; elsewhere within 3 standard errors
    assert (np.abs(fps.mean(axis=0) - exact_fp) <= 3 * se).all(), (fps.mean(0), exact_fp, se)


def test_ap_estimate_is_unbiased_against_exact_enumeration(big_pool_and_emb):
    """AP is a ratio of estimates: its bias is O(1/|D_rand|), far below the sampling error at
    realistic stratum sizes. Over 60 draws of a 10,000-pair D_rand (2% of the negatives) the
    mean AP and P@R20 lie within 2 standard errors of the exact all-pairs values."""
    pool, emb = big_pool_and_emb
    exact = exact_all_pairs(pool, emb)
    scorer = CosineScorer(pool.space, emb)
    aps, p20s = [], []
    for seed in range(60):
        es = build_eval_set(pool, emb, config=EvalConfig(near_m=3, n_random=10_000, seed=seed))
        args = (scorer(es.positives), scorer(es.near), scorer(es.rand), es.n_neg_total)
        aps.append(metrics.estimate_ap(*args))
        p20s.append(metrics.estimate_precision_at_recall(*args))
    for name, values, truth in (("AP", aps, exact["ap"]), ("P@R20", p20s, exact["p_at_r"])):
        values = np.array(values)
        se = values.std(ddof=1) / np.sqrt(len(values))
        assert se > 0
        assert abs(values.mean() - truth) < 2 * se, (name, values.mean(), truth, se)


def test_bootstrap_intervals_cover_the_exact_value(pool_and_emb):
    pool, emb = pool_and_emb
    exact = exact_all_pairs(pool, emb)
    scorer = CosineScorer(pool.space, emb)
    covered_ap, covered_p = [], []
    for seed in range(100):
        es = build_eval_set(pool, emb, config=EvalConfig(near_m=3, n_random=400, seed=seed))
        out = evaluate(es, scorer, n_boot=200, seed=seed)
        covered_ap.append(out["ap_ci"][0] <= exact["ap"] <= out["ap_ci"][1])
        covered_p.append(out["p_at_r20_ci"][0] <= exact["p_at_r"] <= out["p_at_r20_ci"][1])
    # nominal 95%; strata that are whole populations (positives, near) make it conservative
    assert np.mean(covered_ap) >= 0.9, np.mean(covered_ap)
    assert np.mean(covered_p) >= 0.9, np.mean(covered_p)


def test_evaluate_rejects_nan_scores(pool_and_emb):
    pool, emb = pool_and_emb
    es = build_eval_set(pool, emb, config=EvalConfig(near_m=2, n_random=100))

    def broken(ids):
        out = np.zeros(len(ids))
        out[:1] = np.nan
        return out

    with pytest.raises(ValueError, match="NaN"):
        evaluate(es, broken, n_boot=10)


def test_pool_without_positives_is_a_clear_error(pool_and_emb):
    pool, emb = pool_and_emb
    from dataclasses import replace

    empty = replace(pool, positives=np.empty(0, dtype=np.int64))
    with pytest.raises(ValueError, match="no positives"):
        build_eval_set(empty, emb)


def test_cosine_scorer_is_the_same_in_any_batch_size(pool_and_emb):
    """Batches are a speed setting only: scores are bit-identical and equal the plain dot
    products of the pairs' rows."""
    pool, emb = pool_and_emb
    i, j = np.triu_indices(len(emb), k=1)
    ids = pool.space.encode(i, j)
    scorer = CosineScorer(pool.space, emb)
    default = scorer(ids)
    assert np.array_equal(default, scorer(ids, batch_size=7))
    assert np.array_equal(default, scorer(ids, batch_size=10**7))
    assert np.allclose(default, (emb[i] * emb[j]).sum(1), atol=1e-6)
