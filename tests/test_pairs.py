import numpy as np
import pytest

from pairlab.data.pairs import PairSpace, as_id_set, isin_sorted, sample_range, setdiff_sorted


@pytest.mark.parametrize("n", [2, 3, 10, 1000])
def test_symmetric_codes_are_dense_and_round_trip(n):
    space = PairSpace(n, n, True)
    i, j = np.triu_indices(n, k=1)
    codes = space.encode(i, j)
    assert np.array_equal(np.sort(codes), np.arange(space.n_pairs))  # dense: exactly [0, N)
    left, right = space.decode(codes)
    assert np.array_equal(left, i) and np.array_equal(right, j)
    assert np.array_equal(space.encode(j, i), codes)  # order does not matter


def test_symmetric_round_trip_at_huge_sizes():
    n = 3_000_000_000  # codes near 4.5e18: float sqrt alone would be off by one
    space = PairSpace(n, n, True)
    rng = np.random.default_rng(0)
    codes = np.r_[
        rng.integers(0, space.n_pairs, 10_000),
        0,
        space.n_pairs - 1,
        np.arange(1, 40) * (np.arange(1, 40) - 1) // 2,
    ]  # row starts
    left, right = space.decode(codes)
    assert (left < right).all() and (right < n).all()
    assert np.array_equal(space.encode(left, right), codes)


def test_asymmetric_round_trip():
    space = PairSpace(7, 11, False)
    codes = np.arange(space.n_pairs)
    left, right = space.decode(codes)
    assert np.array_equal(space.encode(left, right), codes)
    assert space.n_pairs == 77


def test_bad_pairs_are_rejected():
    space = PairSpace(5, 5, True)
    with pytest.raises(ValueError, match="self pair"):
        space.encode([1], [1])
    with pytest.raises(ValueError, match="outside"):
        space.encode([0], [5])
    with pytest.raises(ValueError, match="outside"):
        space.decode([space.n_pairs])
    with pytest.raises(ValueError, match="one item set"):
        PairSpace(3, 4, True)


@pytest.mark.parametrize("size", [1000, 10**9])  # enumerated complement / rejection sampling
def test_sample_is_distinct_sorted_and_excludes(size):
    rng = np.random.default_rng(1)
    exclude = as_id_set(rng.integers(0, min(size, 10**6), 300))
    got = sample_range(size, 500, rng, exclude=exclude)
    assert len(got) == 500 and len(np.unique(got)) == 500
    assert np.array_equal(got, np.sort(got))
    assert not isin_sorted(got, exclude).any()
    assert got.min() >= 0 and got.max() < size


def test_sample_is_uniform():
    rng = np.random.default_rng(2)
    counts = np.zeros(20)
    for _ in range(2000):
        counts[sample_range(20, 5, rng, exclude=np.array([3], dtype=np.int64))] += 1
    assert counts[3] == 0
    expected = 2000 * 5 / 19
    chi2 = np.sum((np.delete(counts, 3) - expected) ** 2 / expected)
    assert chi2 < 45  # 18 degrees of freedom: p < 0.001 beyond about 42


def test_sample_larger_than_pool_is_a_clear_error():
    with pytest.raises(ValueError, match="only 9 are available"):
        sample_range(10, 10, np.random.default_rng(0), exclude=np.array([4], dtype=np.int64))


def test_set_operations():
    a = as_id_set([5, 1, 3, 3, 9])
    assert a.tolist() == [1, 3, 5, 9]
    assert isin_sorted([0, 3, 9, 10], a).tolist() == [False, True, True, False]
    assert setdiff_sorted(a, as_id_set([3, 9])).tolist() == [1, 5]
    assert isin_sorted([1, 2], np.empty(0, dtype=np.int64)).tolist() == [False, False]
    with pytest.raises(TypeError):
        as_id_set([0.5])
