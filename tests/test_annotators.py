"""Annotators: one contract over every annotator, the seeded noisy oracles, the model threshold."""
import math

import numpy as np
import pytest

from pairlab.annotators import (ErrorDependentOracle, ModelAnnotator, NoisyOracle, Oracle,
                                pair_uniform, quantile_edges)
from pairlab.data import Pool
from pairlab.data.pairs import PairSpace, as_id_set


def text_pool(n: int = 6) -> Pool:
    """An asymmetric n x n pool: positives (j, j) for even j, whose right text is left reversed."""
    left = np.array([f"question number {j}" for j in range(n)], dtype=object)
    right = np.array([q[::-1] if j % 2 == 0 else f"sentence {j}" for j, q in enumerate(left)],
                     dtype=object)
    even = np.arange(0, n, 2)
    positives = as_id_set(PairSpace(n, n, False).encode(even, even))
    return Pool("synthetic", "dev", left, right, False, positives, np.empty(0, np.int64))


# ---------------------------------------------------------------------------------------------
# The contract, over every annotator


def perfect_score(pool, ids):
    return pool.labels(ids).astype(np.float64) * 2.0 - 1.0


ANNOTATORS = {
    "oracle": lambda: Oracle(),
    "noisy_oracle_without_noise": lambda: NoisyOracle(seed=3),
    "error_dependent_oracle_all_correct": lambda: ErrorDependentOracle(
        lambda pool, ids: np.zeros(len(ids)), [1.0, 1.0], [0.5]),
    "model": lambda: ModelAnnotator(perfect_score, 0.0),
}


@pytest.mark.parametrize("make", ANNOTATORS.values(), ids=ANNOTATORS.keys())
def test_every_annotator_keeps_the_contract(make):
    """Noise-free, each annotator must return the pool's labels as (n,) int8, in the order
    asked, and reject ids outside the pool (fails if any annotator reorders, changes dtype or
    answers for a pair that does not exist)."""
    pool, annotator = text_pool(), make()
    ids = np.arange(pool.n_pairs, dtype=np.int64)[::-1].copy()  # unsorted on purpose
    labels = annotator.annotate(pool, ids)
    assert labels.dtype == np.int8 and labels.shape == ids.shape
    np.testing.assert_array_equal(labels, pool.labels(ids))
    np.testing.assert_array_equal(annotator.annotate(pool, ids[:0]), np.empty(0, np.int8))
    with pytest.raises(ValueError):
        annotator.annotate(pool, [pool.n_pairs])
    with pytest.raises(ValueError):
        annotator.annotate(pool, ids.reshape(-1, 2))


# ---------------------------------------------------------------------------------------------
# Noisy oracles


@pytest.fixture(scope="module")
def big_pool() -> Pool:
    """500 x 400 = 200,000 pairs, 40,000 of them positive."""
    rng = np.random.default_rng(0)
    texts = np.array([f"t{k}" for k in range(500)], dtype=object)
    positives = np.sort(rng.choice(200_000, size=40_000, replace=False)).astype(np.int64)
    return Pool("synthetic", "train", texts, texts[:400], False, positives, np.empty(0, np.int64))


def within_4_sigma(flipped: np.ndarray, rate: float) -> bool:
    return abs(flipped.mean() - rate) <= 4 * math.sqrt(rate * (1 - rate) / len(flipped))


def test_noisy_oracle_flips_at_the_given_rates(big_pool):
    """Fails if either class's flip rate is off by more than 4 binomial standard errors."""
    ids = np.arange(big_pool.n_pairs, dtype=np.int64)
    truth = big_pool.labels(ids)
    noisy = NoisyOracle(flip_positive=0.2, flip_negative=0.05, seed=7).annotate(big_pool, ids)
    assert within_4_sigma(noisy[truth == 1] == 0, 0.2)
    assert within_4_sigma(noisy[truth == 0] == 1, 0.05)


def test_noisy_oracle_answers_a_pair_the_same_in_any_batch_and_order(big_pool):
    """A pair's answer may depend only on (seed, pair id): fails if it depends on the batch."""
    ids = np.arange(big_pool.n_pairs, dtype=np.int64)
    whole = NoisyOracle(flip_positive=0.3, flip_negative=0.1, seed=11).annotate(big_pool, ids)
    rng = np.random.default_rng(1)
    shuffled = rng.permutation(ids)
    cuts = np.sort(rng.choice(len(ids), size=50, replace=False))
    fresh = NoisyOracle(flip_positive=0.3, flip_negative=0.1, seed=11)
    for part in np.split(shuffled, cuts)[::-1]:  # uneven batches, shuffled, last first
        np.testing.assert_array_equal(fresh.annotate(big_pool, np.sort(part)), whole[np.sort(part)])
    np.testing.assert_array_equal(fresh.annotate(big_pool, shuffled), whole[shuffled])


def test_noisy_oracle_seeds_give_independent_noise(big_pool):
    """Different seeds must flip different pairs (fails if the seed is ignored or barely
    mixed): of the pairs seed 0 flips at rate 10%, seed 1 flips about 10%, not all."""
    ids = np.arange(big_pool.n_pairs, dtype=np.int64)
    truth = big_pool.labels(ids)
    flips = [NoisyOracle(flip_positive=0.1, flip_negative=0.1, seed=s).annotate(big_pool, ids)
             != truth for s in (0, 1)]
    assert within_4_sigma(flips[1][flips[0]], 0.1)


def test_noisy_oracle_without_noise_is_the_oracle(big_pool):
    ids = np.arange(0, big_pool.n_pairs, 7, dtype=np.int64)
    np.testing.assert_array_equal(NoisyOracle(seed=5).annotate(big_pool, ids),
                                  Oracle().annotate(big_pool, ids))
    flipped = NoisyOracle(flip_positive=1.0, flip_negative=1.0).annotate(big_pool, ids)
    np.testing.assert_array_equal(flipped, 1 - big_pool.labels(ids))


@pytest.mark.parametrize("rates", [{"flip_positive": -0.1}, {"flip_negative": 1.5},
                                   {"flip_positive": float("nan")}, {"flip_negative": "0.1"},
                                   {"flip_positive": True}, {"seed": -1}, {"seed": 1.5}])
def test_noisy_oracle_rejects_bad_rates_and_seeds(rates):
    with pytest.raises(ValueError, match=next(iter(rates))):
        NoisyOracle(**rates)


def test_pair_uniform_is_uniform_and_in_range():
    """Fails if the hash leaves [0, 1) or is visibly non-uniform over 200,000 ids."""
    u = pair_uniform(np.arange(200_000), seed=3)
    assert u.min() >= 0.0 and u.max() < 1.0
    counts = np.bincount((u * 10).astype(int), minlength=10)  # (10,) ids per decile
    assert np.all(np.abs(counts - 20_000) <= 4 * math.sqrt(200_000 * 0.1 * 0.9)), counts


def test_error_dependent_oracle_flips_by_error_bin(big_pool):
    """Accuracy 1.0 in the low-error half and 0.6 in the high-error half: no flip below the
    edge, 40% above it (fails if bins or accuracies are read the wrong way round)."""
    errors = np.linspace(0.0, 1.0, big_pool.n_pairs)
    edges = quantile_edges(errors, 2)  # (1,) the median
    oracle = ErrorDependentOracle(errors, [1.0, 0.6], edges, seed=2)
    ids = np.arange(big_pool.n_pairs, dtype=np.int64)
    labels = oracle.annotate(big_pool, ids)
    wrong, low = labels != big_pool.labels(ids), errors < edges[0]
    assert low.sum() == big_pool.n_pairs // 2 and not wrong[low].any()
    assert within_4_sigma(wrong[~low], 0.4)
    by_callable = ErrorDependentOracle(lambda pool, i: errors[i], [1.0, 0.6], edges, seed=2)
    np.testing.assert_array_equal(by_callable.annotate(big_pool, ids[::3]), labels[::3])


def test_error_dependent_oracle_validates():
    with pytest.raises(ValueError, match="edges"):
        ErrorDependentOracle(np.zeros(4), [0.9, 0.8, 0.7], [0.5])
    with pytest.raises(ValueError, match="accuracy"):
        ErrorDependentOracle(np.zeros(4), [0.9, 1.2], [0.5])
    with pytest.raises(ValueError, match="1 NaN"):
        ErrorDependentOracle(np.array([0.1, np.nan]), [0.9], [])
    np.testing.assert_allclose(quantile_edges(np.arange(100.0), 4), [24.75, 49.5, 74.25])


# ---------------------------------------------------------------------------------------------
# Model annotator


def test_model_annotator_thresholds_scores():
    """Score at the threshold counts as positive, below as negative."""
    pool = text_pool()
    scores = {0: 0.2, 1: 0.5, 2: 0.9}
    annotator = ModelAnnotator(lambda p, ids: np.array([scores[i] for i in ids]), 0.5)
    np.testing.assert_array_equal(annotator.annotate(pool, [0, 1, 2]), [0, 1, 1])


def test_model_annotator_refuses_nan_scores():
    """A NaN score must raise, naming how many, never become a 0."""
    annotator = ModelAnnotator(lambda p, ids: np.array([0.3, np.nan, np.nan]), 0.0)
    with pytest.raises(ValueError, match="2 NaN scores of 3"):
        annotator.annotate(text_pool(), [0, 1, 2])
    with pytest.raises(ValueError, match="threshold"):
        ModelAnnotator(perfect_score, float("nan"))
    with pytest.raises(ValueError, match="shape"):
        ModelAnnotator(lambda p, ids: np.zeros(5), 0.0).annotate(text_pool(), [0, 1])
