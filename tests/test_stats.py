"""Dataset statistics: counts that notebook 01's Table 1 analog and figures are built from."""

import numpy as np
import pytest
from conftest import FIXTURES, clustered_pool

from pairlab.data.pairs import as_id_set
from pairlab.evaluation import stats


def test_split_stats_counts_a_symmetric_pool():
    pool, _ = clustered_pool(n_items=50)
    counts = stats.split_stats(pool)
    assert counts["n_left"] == counts["n_right"] == 50
    assert counts["n_pairs"] == 50 * 49 // 2
    assert counts["n_positives"] == len(pool.positives) > 0
    assert counts["ratio"] == pytest.approx(counts["n_pairs"] / counts["n_positives"])
    assert "n_nearby_negatives" not in counts  # only with an evaluation set


def test_cluster_sizes_count_every_item_once_and_every_positive_at_both_ends():
    pool, _ = clustered_pool(n_items=60, seed=3)
    sizes = stats.cluster_sizes(pool)
    assert sizes.sum() == 60
    partners = np.asarray(sizes.index) * sizes.to_numpy()
    assert partners.sum() == 2 * len(pool.positives)  # a symmetric pair has two ends


def test_retrieval_yield_ranks_candidates_and_counts_random_labelling():
    pool, _ = clustered_pool(n_items=80, seed=1)
    negatives = np.setdiff1d(np.arange(200, dtype=np.int64), pool.positives)[:30]
    candidates = np.concatenate([pool.positives, negatives])
    scores = np.r_[np.ones(len(pool.positives)), np.zeros(len(negatives))]  # positives first
    budgets = [1, len(pool.positives), len(candidates)]
    table = stats.retrieval_yield(pool, candidates, scores, budgets, seed=4)
    assert table["static retrieval"].tolist() == [1, len(pool.positives), len(pool.positives)]
    expected = np.asarray(budgets) * len(pool.positives) / pool.n_pairs
    assert np.allclose(table["random (expected)"], expected)
    again = stats.retrieval_yield(pool, candidates, scores, budgets, seed=4)
    assert table["random (one draw)"].tolist() == again["random (one draw)"].tolist()
    assert (np.diff(table["random (one draw)"]) >= 0).all()  # prefixes of one sequence


def test_retrieval_yield_refuses_an_empty_candidate_set():
    pool, _ = clustered_pool(n_items=20)
    with pytest.raises(ValueError, match="no candidate"):
        stats.retrieval_yield(pool, np.empty(0, np.int64), np.empty(0))


def test_examples_label_positives_one_and_random_pairs_by_the_pool():
    pool, _ = clustered_pool(n_items=40, seed=2)
    frame = stats.examples(pool, n=3, seed=0)
    assert set(frame["kind"]) == {"positive", "random pair"}  # the pool has no stated negatives
    assert (frame.loc[frame["kind"] == "positive", "label"] == 1).all()
    random_ids = as_id_set(frame.loc[frame["kind"] == "random pair", "pair_id"].to_numpy())
    assert frame.loc[frame["kind"] == "random pair", "label"].sum() == pool.labels(random_ids).sum()


@pytest.mark.parametrize("where", ["fixture", "real"])
def test_growth_grows_pairs_quadratically_and_positives_slowly(where, request):
    from pairlab import data

    folder = FIXTURES / "data" if where == "fixture" else request.getfixturevalue("data_dir")
    table = stats.growth(
        data.load_task("qqp", folder, seed=0), [100, 300] if where == "fixture" else [100, 400]
    )
    items = table["items"].to_numpy()
    assert (table["pairs"].to_numpy() == items * (items - 1) // 2).all()
    assert table["positives"].is_monotonic_increasing
    assert table["ratio"].iloc[-1] > table["ratio"].iloc[0]  # imbalance grows with the pool
