"""Committees and diversity, the two criteria both levels share: vote entropy on labels and on
orderings, the members' training shares, and k-means picks one item per cluster; then the
pair-level strategies built on them (``qbc``, ``diversity``) in the notebook-03 loop."""

import numpy as np
import pytest
from conftest import VECTORS, FakeLearner, run

from pairlab.active.committee import (
    label_vote_entropy,
    member_scores,
    ordering_vote_entropy,
    train_committee,
    vote_entropy,
)
from pairlab.active.strategies import Committee, RoundState, kmeans_pick, pair_features
from pairlab.data.pairs import PairSpace

LOG2 = np.log(2)


def test_ordering_vote_entropy_is_zero_when_members_agree_and_maximal_when_reversed():
    k = 6
    base = np.arange(k, 0, -1, dtype=float)  # scores 6..1: candidate 0 first
    agree = np.stack([base, base * 3 + 1])[:, None, :]  # (2 members, 1 question, k): same order
    reverse = np.stack([base, -base])[:, None, :]
    assert ordering_vote_entropy(agree)[0] == 0.0
    assert ordering_vote_entropy(reverse)[0] == pytest.approx(LOG2 * k * (k - 1) / 2)
    one_swap = np.stack([base, base[[1, 0, 2, 3, 4, 5]]])[:, None, :]  # one pair ordered apart
    assert ordering_vote_entropy(one_swap)[0] == pytest.approx(LOG2)
    # any two members' entropy lies between the extremes, question by question
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(2, 50, k))
    ve = ordering_vote_entropy(scores, block=7)  # blocks do not change the result
    assert ((ve >= 0) & (ve <= LOG2 * k * (k - 1) / 2 + 1e-12)).all()
    assert np.allclose(ve, ordering_vote_entropy(scores))


def test_vote_entropy_of_labels_and_counts():
    assert vote_entropy([[3, 0], [0, 3]]).tolist() == [0.0, 0.0]
    assert vote_entropy([[1, 1]])[0] == pytest.approx(LOG2)
    assert vote_entropy([[1, 1, 1]])[0] == pytest.approx(np.log(3))
    logits = np.array([[2.0, -1.0, 0.5], [1.0, -3.0, -0.5]])  # agree, agree, split
    assert label_vote_entropy(logits) == pytest.approx([0.0, 0.0, LOG2])
    with pytest.raises(ValueError, match="n_members >= 2"):
        label_vote_entropy(np.zeros((1, 3)))


def test_members_train_on_their_own_share_of_the_answered_labels():
    seen = []
    ids = np.arange(10, dtype=np.int64) * 3
    labels = np.array([1, 0, 0, -1, 0, 1, 0, 0, -1, 0], dtype=np.int8)
    models = train_committee(
        lambda i, y, member: seen.append((i, y, member)) or member,
        ids,
        labels,
        np.random.default_rng(1),
        members=3,
        share=0.5,
    )
    assert models == [0, 1, 2]
    for i, y, _ in seen:
        assert len(i) == 4 and (y >= 0).all()  # half of the 8 answered labels, never a -1
        assert np.array_equal(y, labels[np.searchsorted(ids, i)])
    assert len({tuple(i) for i, _, _ in seen}) == 3  # each member its own share
    with pytest.raises(ValueError, match="at least 2 members"):
        Committee(members=1)


def separable(n_clusters=5, per_cluster=12, dim=6, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.eye(dim)[:n_clusters] * 10
    cluster = np.repeat(np.arange(n_clusters), per_cluster)
    return (centres[cluster] + 0.1 * rng.normal(size=(len(cluster), dim))).astype(
        np.float32
    ), cluster


def test_diversity_picks_one_question_per_cluster_of_separable_embeddings():
    vectors, cluster = separable()
    for seed in range(5):
        picked = kmeans_pick(vectors, 5, np.random.default_rng(seed))
        assert sorted(cluster[picked].tolist()) == [0, 1, 2, 3, 4], seed
    firsts = {tuple(kmeans_pick(vectors, 5, np.random.default_rng(s))) for s in range(6)}
    assert len(firsts) > 1  # the member of each cluster is random
    again = kmeans_pick(vectors, 5, np.random.default_rng(3))
    assert np.array_equal(again, kmeans_pick(vectors, 5, np.random.default_rng(3)))
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 60\]"):
        kmeans_pick(vectors, 61, np.random.default_rng(0))


def test_diversity_fills_up_when_rows_repeat():
    vectors = np.repeat(np.eye(3, dtype=np.float32), 4, axis=0)  # 3 distinct rows, 5 picks
    picked = kmeans_pick(vectors, 5, np.random.default_rng(0))
    assert len(np.unique(picked)) == 5 and len(np.unique(vectors[picked], axis=0)) == 3


def test_pair_features_do_not_depend_on_the_order_of_the_pair():
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(5, 4)).astype(np.float32)
    space = PairSpace(5, 5, True)
    a = pair_features(space, emb, emb, space.encode([1], [3]))
    b = pair_features(space, emb, emb, space.encode([3], [1]))
    assert a.shape == (1, 8) and np.array_equal(a, b)


class Member:
    def __init__(self, emb, calibration=None):
        self.emb, self.calibration = emb, calibration


def committee_state(member_embeddings):
    """Candidates 0..9 of a 6-item pool with the logits of members of the embeddings given
    (no calibration: their cosines)."""
    space = PairSpace(6, 6, True)
    from pairlab.data import Pool

    texts = np.array([f"q{k}" for k in range(6)], dtype=object)
    pool = Pool("toy", "train", texts, texts, True, np.array([0], np.int64), np.empty(0, np.int64))
    rows, cols = space.decode(np.arange(10, dtype=np.int64))
    logits = [member_scores(Member(e), e, e, rows, cols) for e in member_embeddings]
    return RoundState(
        round=2,
        pool=pool,
        labelled=np.array([10, 11, 12], np.int64),
        budget=20,
        rng=np.random.default_rng(0),
        candidates=np.arange(10, dtype=np.int64),
        cosine=np.zeros(10),
        labels=np.array([1, 0, 0], np.int8),
        member_logits=np.stack(logits) if logits else None,
    ), space


def test_committee_takes_the_pairs_its_members_label_differently():
    rng = np.random.default_rng(4)
    first = rng.normal(size=(6, 3)).astype(np.float32)
    first /= np.linalg.norm(first, axis=1, keepdims=True)
    second = first.copy()
    second[[1, 2]] *= -1  # the second member flips the cosine of every pair with one of items 1, 2
    state, space = committee_state([first, second])
    picked = Committee().select(state, 4)
    i, j = space.decode(np.arange(10))
    cos1 = np.einsum("nd,nd->n", first[i], first[j])
    cos2 = np.einsum("nd,nd->n", second[i], second[j])
    split = (cos1 >= 0) != (cos2 >= 0)
    assert split.tolist() == [(a in (1, 2)) != (b in (1, 2)) for a, b in zip(i, j)]
    spread = np.abs(cos1 - cos2) / 2  # the two members' logit std (no calibration: cosines)
    expected = np.lexsort((np.arange(10), -spread, ~split))[:4]
    assert np.array_equal(picked, np.sort(expected)) and split[picked].all()


def test_committee_reads_the_members_logits_the_loop_computes():
    state, _ = committee_state([])
    with pytest.raises(ValueError, match="RoundState.member_logits"):
        Committee().select(state, 2)
    assert Committee().reads == ("member_logits",)


@pytest.mark.parametrize("strategy", ["qbc", "diversity"])
def test_pair_level_committee_and_diversity_run_in_the_loop(tmp_path, strategy):
    learner = FakeLearner(VECTORS)
    active, folder = run(tmp_path, strategy=strategy, learner=learner)
    result = active.run()
    assert [r["strategy"] for r in result["records"]] == ["static_retrieval", strategy, strategy]
    assert result["labels"] == 12 + 18 + 27
    if strategy == "qbc":  # 2 members in rounds 2 and 3, each on 80% of the labels so far
        assert learner.members == [(2, 0, 10), (2, 1, 10), (3, 0, 24), (3, 1, 24)]
        assert result["records"][1]["seconds"]["train"] > 0
    else:
        assert learner.members == []
    again, folder_b = run(tmp_path / "b", strategy=strategy, learner=FakeLearner(VECTORS))
    again.run()
    for i in (1, 2, 3):  # the same seed gives the same batches
        a = np.load(folder / "rounds" / f"round_{i:02d}.npz")["ids"]
        assert np.array_equal(a, np.load(folder_b / "rounds" / f"round_{i:02d}.npz")["ids"])
