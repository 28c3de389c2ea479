"""Ranking metrics over the whole right-hand side and paired significance: nDCG@10 and MRR@10
against hand-computed lists, the top-k search against a full sort, and the paired t-test's
edge cases."""

import numpy as np
import pytest

from pairlab.data import Pool
from pairlab.data.pairs import PairSpace, as_id_set
from pairlab.evaluation.ranking import (
    answerable,
    mrr_at_k,
    ndcg_at_k,
    rank_metrics,
    relevant_counts,
    top_items,
)
from pairlab.evaluation.significance import bonferroni, paired_test


def test_ndcg_and_mrr_at_10_against_a_hand_computed_case():
    rel = np.zeros((3, 10), dtype=bool)
    rel[0, [1, 3]] = True  # relevant at ranks 2 and 4, three relevant in all
    rel[2, 0] = True  # relevant at rank 1, the only one
    # row 0: DCG = 1/log2(3) + 1/log2(5) = 0.630930 + 0.430677 = 1.061606;
    #        IDCG = 1/log2(2) + 1/log2(3) + 1/log2(4) = 1 + 0.630930 + 0.5 = 2.130930
    # row 1: its one relevant item is below rank 10: 0
    ndcg = ndcg_at_k(rel, np.array([3, 1, 1]), k=10)
    assert ndcg == pytest.approx([1.061606 / 2.130930, 0.0, 1.0], abs=1e-6)
    assert mrr_at_k(rel, k=10) == pytest.approx([0.5, 0.0, 1.0])
    # more relevant items than k: the ideal list is k relevant items, so a full top 10 scores 1
    assert ndcg_at_k(np.ones((1, 10), bool), np.array([25]), k=10) == pytest.approx([1.0])
    # only the first k ranks count
    late = np.zeros((1, 12), bool)
    late[0, 10] = True
    assert ndcg_at_k(late, np.array([1]), k=10)[0] == 0.0 and mrr_at_k(late, k=10)[0] == 0.0


def asymmetric_pool(n_left=6, n_right=30, seed=0):
    rng = np.random.default_rng(seed)
    space = PairSpace(n_left, n_right, False)
    left = rng.normal(size=(n_left, 8)).astype(np.float32)
    right = rng.normal(size=(n_right, 8)).astype(np.float32)
    left /= np.linalg.norm(left, axis=1, keepdims=True)
    right /= np.linalg.norm(right, axis=1, keepdims=True)
    positives = as_id_set(space.encode([0, 0, 2, 3], [4, 7, 1, 29]))  # questions 1, 4, 5: none
    texts = np.array([f"t{k}" for k in range(n_right)], dtype=object)
    pool = Pool(
        "toy", "test", texts[:n_left].copy(), texts, False, positives, np.empty(0, np.int64)
    )
    return pool, left, right


def test_rank_metrics_rank_the_whole_right_side_for_answerable_questions_only():
    pool, left, right = asymmetric_pool()
    assert answerable(pool).tolist() == [0, 2, 3]
    assert relevant_counts(pool).tolist() == [2, 0, 1, 1, 0, 0]
    out = rank_metrics(pool, left, right, k=10)
    assert out["questions"].tolist() == [0, 2, 3]
    scores = left @ right.T
    for row, q in enumerate([0, 2, 3]):
        order = np.argsort(-scores[q], kind="stable")  # the full ranking, sorted here
        relevant = np.isin(order, {0: [4, 7], 2: [1], 3: [29]}[q])
        first = int(np.argmax(relevant)) + 1
        assert out["mrr"][row] == pytest.approx(1 / first if first <= 10 else 0.0)
        gains = relevant[:10] / np.log2(np.arange(2, 12))
        ideal = (1 / np.log2(np.arange(2, 2 + relevant.sum()))).sum()
        assert out["ndcg"][row] == pytest.approx(gains.sum() / ideal)
    assert out["ndcg_mean"] == pytest.approx(out["ndcg"].mean())


def test_top_items_of_a_symmetric_pool_never_rank_a_question_against_itself():
    rng = np.random.default_rng(1)
    emb = rng.normal(size=(12, 5)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    texts = np.array([f"q{k}" for k in range(12)], dtype=object)
    pool = Pool("toy", "test", texts, texts, True, as_id_set([0]), np.empty(0, np.int64))
    items = top_items(pool, emb, emb, np.arange(12), 11)
    assert not (items == np.arange(12)[:, None]).any()
    scores = emb @ emb.T
    np.fill_diagonal(scores, -np.inf)
    assert np.array_equal(items, np.argsort(-scores, axis=1, kind="stable")[:, :11])
    with pytest.raises(ValueError, match="11 to rank"):
        top_items(pool, emb, emb, [0], 12)


def test_paired_test_matches_scipy_and_handles_identical_samples():
    from scipy.stats import ttest_rel

    a = np.array([0.1, 0.5, 0.9, 0.3, 0.7])
    b = np.array([0.2, 0.4, 0.6, 0.3, 0.5])
    out = paired_test(a, b)
    assert out["p"] == pytest.approx(ttest_rel(a, b).pvalue)
    assert out["difference"] == pytest.approx(0.1) and out["n"] == 5
    same = paired_test(a, a)  # scipy says NaN: no difference is no evidence of one
    assert (same["p"], same["t"], same["difference"]) == (1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="equal-length"):
        paired_test(a, b[:3])
    with pytest.raises(ValueError, match="at least 2 queries"):
        paired_test([1.0], [0.5])


def test_bonferroni_multiplies_and_caps():
    assert bonferroni(0.01, 3) == pytest.approx(0.03)
    assert bonferroni(0.5, 3) == 1.0
    assert bonferroni(np.array([0.001, 0.2]), 3) == pytest.approx([0.003, 0.6])
    with pytest.raises(ValueError, match="positive integer"):
        bonferroni(0.1, 0)
