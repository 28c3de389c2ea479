"""The annotation protocol of query-level active learning: a question costs the rank of its
first relevant item in the current ranking, and every pair scanned down to it is labelled."""

import numpy as np
import pytest

from pairlab.annotators.scan import scan_to_first_relevant
from pairlab.data import Pool
from pairlab.data.pairs import PairSpace, as_id_set


def one_dimensional(values):
    """Unit vectors on a circle whose dot product with (1, 0) is ``values``: a ranking built by
    hand (cosine = the value given)."""
    values = np.asarray(values, dtype=np.float64)
    return np.stack([values, np.sqrt(1 - values**2)], axis=1).astype(np.float32)


def test_assessments_equal_the_rank_of_the_first_relevant_item():
    # question 0 ranks the 8 items by these cosines: order 3, 6, 0, 5, 1, 7, 2, 4
    right = one_dimensional([0.5, 0.3, 0.1, 0.9, 0.0, 0.4, 0.8, 0.2])
    left = one_dimensional([1.0, 1.0])  # question 1 ranks them the same way
    space = PairSpace(2, 8, False)
    positives = as_id_set(space.encode([0, 0, 1], [5, 1, 3]))  # q0: items 5 (rank 4), 1 (rank 5)
    pool = Pool(
        "toy",
        "train",
        np.array(["a", "b"], dtype=object),
        np.array([f"s{k}" for k in range(8)], dtype=object),
        False,
        positives,
        np.empty(0, np.int64),
    )
    scan = scan_to_first_relevant(pool, left, right, [0, 1])
    assert scan.assessments.tolist() == [4, 1]  # q0 stops at item 5 (rank 4); q1's item 3 is first
    assert scan.items.tolist() == [3, 6, 0, 5, 3]
    assert scan.pair_ids.tolist() == space.encode([0, 0, 0, 0, 1], [3, 6, 0, 5, 3]).tolist()
    assert scan.labels.tolist() == [0, 0, 0, 1, 1]  # every scanned pair labelled, the last relevant


def test_a_symmetric_scan_skips_the_question_itself_and_ties_rank_the_lower_index_first():
    emb = one_dimensional([1.0, 0.2, 0.7, 0.7, 0.95])  # question 0 ranks 4, then 2 and 3 tied, 1
    texts = np.array([f"q{k}" for k in range(5)], dtype=object)
    space = PairSpace(5, 5, True)
    pool = Pool(
        "toy", "train", texts, texts, True, as_id_set(space.encode([3], [0])), np.empty(0, np.int64)
    )
    scan = scan_to_first_relevant(pool, emb, emb, [0, 3])
    assert scan.assessments[0] == 3  # 4, 2, then 3: the tie goes to item 2 first
    assert scan.labels[:3].tolist() == [0, 0, 1]
    left, right = space.decode(scan.pair_ids)
    assert not (left == right).any()


def test_a_question_without_a_relevant_item_is_refused():
    emb = one_dimensional([1.0, 0.5, 0.2])
    texts = np.array(["a", "b", "c"], dtype=object)
    pool = Pool("toy", "train", texts, texts, True, as_id_set([0]), np.empty(0, np.int64))
    with pytest.raises(ValueError, match=r"question\(s\) \[2\].*never stop"):
        scan_to_first_relevant(pool, emb, emb, [0, 2])
    with pytest.raises(ValueError, match="distinct"):
        scan_to_first_relevant(pool, emb, emb, [0, 0])
