"""Query-level active learning for rankers: the four strategies on states with known answers,
and the round loop (round 1 shared by every strategy, scan-to-first-relevant annotation, resume,
read-back, same seed same questions) with the fast stand-in learner."""

import json

import numpy as np
import pytest
from conftest import EVAL_SETS, POOLS, VECTORS, FakeLearner

from pairlab.active import QueryConfig, QueryRun, run_folder
from pairlab.active.committee import member_scores
from pairlab.active.queries import (
    CommitteeQuestions,
    DiverseQuestions,
    QueryState,
    RandomQuestions,
    UncertainQuestions,
)
from pairlab.annotators.scan import scan_to_first_relevant
from pairlab.data.pairs import isin_sorted
from pairlab.evaluation.ranking import answerable, top_items

POOL = POOLS["train"]
LEFT = np.stack([VECTORS[t] for t in POOL.left_texts])
FREE = answerable(POOL)


def state(**extra) -> QueryState:
    base = dict(
        round=2,
        pool=POOL,
        questions=FREE,
        labelled=np.empty(0, np.int64),
        labels=np.empty(0, np.int8),
        rng=np.random.default_rng(0),
        embeddings=(LEFT, LEFT),
    )
    return QueryState(**{**base, **extra})


def test_random_questions_are_uniform_over_the_free_ones():
    picked = RandomQuestions().select(state(questions=FREE[:10]), 10)
    assert np.array_equal(picked, FREE[:10])
    seen = np.unique(
        np.concatenate(
            [RandomQuestions().select(state(rng=np.random.default_rng(s)), 5) for s in range(60)]
        )
    )
    assert isin_sorted(seen, FREE).all() and len(seen) > len(FREE) // 2
    with pytest.raises(ValueError, match="only 10 questions .* not 11"):
        RandomQuestions().select(state(questions=FREE[:10]), 11)


def test_uncertainty_takes_the_questions_nearest_the_middle_of_the_score_distribution():
    k = 5
    picked = UncertainQuestions(top_k=k).select(state(), 6)
    scores = LEFT[FREE] @ LEFT.T
    scores[np.arange(len(FREE)), FREE] = -np.inf
    top = -np.sort(-scores, axis=1)[:, :k]  # each question's k best cosines
    closest = np.abs(top - top.mean()).min(axis=1)
    assert np.array_equal(picked, np.sort(FREE[np.lexsort((FREE, closest))[:6]]))


class Member:
    def __init__(self, emb, calibration=None):
        self.emb, self.calibration = emb, calibration


def test_committee_takes_the_questions_whose_candidates_the_members_order_most_differently():
    flipped = np.zeros(len(LEFT), bool)
    flipped[FREE[:3]] = True  # the second member scores these questions' candidates backwards
    second = np.where(flipped[:, None], -LEFT, LEFT)
    items = top_items(POOL, LEFT, LEFT, FREE, 6)  # (n_free, 6) under the current ranker
    unique, where = np.unique(items, return_inverse=True)
    rows = np.broadcast_to(np.arange(len(FREE))[:, None], items.shape)
    scores = np.stack(
        [
            member_scores(Member(e), e[FREE], e[unique], rows, where.reshape(items.shape))
            for e in (LEFT, second)
        ]
    )  # what the loop hands the committee (QueryRun._committee)
    picked = CommitteeQuestions(top_k=6).select(state(member_scores=scores), 3)
    assert np.array_equal(picked, FREE[:3])  # reversed orderings: the highest vote entropy
    with pytest.raises(ValueError, match="reads QueryState.member_scores"):
        CommitteeQuestions(top_k=6).select(state(), 3)


def test_diversity_takes_one_question_per_cluster_of_their_embeddings():
    rng = np.random.default_rng(0)
    centres = np.eye(8, dtype=np.float32)[:4]
    emb = centres[np.arange(len(LEFT)) % 4] + 0.01 * rng.normal(size=(len(LEFT), 8)).astype(
        np.float32
    )
    picked = DiverseQuestions().select(state(embeddings=(emb, emb)), 4)
    assert sorted(picked % 4) == [0, 1, 2, 3] and isin_sorted(picked, FREE).all()


def config(strategy="qbc", **extra):
    return QueryConfig(
        task="toy", strategy=strategy, **{"batches": (4, 4, 4), "top_k": 5, "n_boot": 20, **extra}
    )


def query_run(tmp_path, strategy="qbc", learner=None, callbacks=(), **extra):
    c = config(strategy, **extra)
    pools = {"train": POOLS["train"], "test": POOLS["test"]}
    folder = run_folder(tmp_path, c, pools, {"test": EVAL_SETS["test"]})
    return QueryRun(
        c,
        pools,
        EVAL_SETS["test"],
        folder,
        learner=learner or FakeLearner(VECTORS),
        callbacks=callbacks,
    ), folder


def test_a_query_run_scans_trains_and_measures_every_round(tmp_path):
    learner = FakeLearner(VECTORS)
    run, folder = query_run(tmp_path, "uncertainty", learner=learner)
    result = run.run()
    records = result["records"]
    assert [r["strategy"] for r in records] == ["random", "uncertainty", "uncertainty"]
    assert [r["n_questions"] for r in records] == [4, 8, 12] and result["questions"] == 12
    asked = np.concatenate([r["questions"] for r in records])
    assert len(np.unique(asked)) == 12 and isin_sorted(np.sort(asked), FREE).all()
    # round 1 scans the pretrained ranking: its assessments are the ranks of first relevant items
    left, right = learner.pretrained_embeddings(POOL)
    scan = scan_to_first_relevant(POOL, left, right, records[0]["questions"])
    assert records[0]["assessments"] == scan.assessments.tolist()
    assert result["assessments"] == sum(sum(r["assessments"]) for r in records) >= 12
    assert learner.trained == [
        (1, records[0]["labels"]),
        (2, records[1]["labels"]),
        (3, records[2]["labels"]),
    ]
    labels = np.concatenate(
        [np.load(folder / "rounds" / f"round_{i:02d}.npz")["labels"] for i in (1, 2, 3)]
    )
    assert len(labels) == result["labels"] and labels.sum() == records[-1]["positives_found"] <= 12
    for r in records:
        test = r["test"]
        assert test["ndcg"] == pytest.approx(np.mean(test["per_query"]["ndcg"]))
        assert test["per_query"]["questions"] == answerable(POOLS["test"]).tolist()
        assert 0 <= test["mrr"] <= 1 and test["ap_ci"][0] <= test["ap"] <= test["ap_ci"][1]
        assert {"embed", "select", "annotate", "train", "evaluate"} <= set(r["seconds"])
    assert not list(folder.glob("model_round_*"))


def test_round_one_is_the_same_random_questions_for_every_strategy_of_a_seed(tmp_path):
    firsts = {}
    for strategy in ("random", "uncertainty", "qbc", "diversity"):
        run, _ = query_run(tmp_path, strategy)
        firsts[strategy] = run.run()["records"][0]["questions"]
    assert len({tuple(v) for v in firsts.values()}) == 1
    other, _ = query_run(tmp_path, "random", seed=1)
    assert other.run()["records"][0]["questions"] != firsts["random"]


def test_the_committee_trains_two_members_a_round_after_the_first(tmp_path):
    learner = FakeLearner(VECTORS)
    run, _ = query_run(tmp_path, "qbc", learner=learner)
    records = run.run()["records"]
    sizes = [r["labels"] for r in records]
    assert [(r, m) for r, m, _ in learner.members] == [(2, 0), (2, 1), (3, 0), (3, 1)]
    assert [n for _, _, n in learner.members] == [round(0.8 * sizes[0])] * 2 + [
        round(0.8 * sizes[1])
    ] * 2


def test_a_killed_run_resumes_to_the_same_questions_and_a_finished_one_is_read_back(tmp_path):
    straight, _ = query_run(tmp_path / "a", "diversity")
    expected = straight.run()
    crashing, folder = query_run(
        tmp_path / "b", "diversity", learner=FakeLearner(VECTORS, crash_at_round=3)
    )
    with pytest.raises(KeyboardInterrupt):
        crashing.run()
    assert (folder / "rounds" / "round_02.json").is_file() and not (
        folder / "rounds" / "round_03.json"
    ).is_file()
    learner = FakeLearner(VECTORS)
    resumed, _ = query_run(tmp_path / "b", "diversity", learner=learner)
    result = resumed.run()
    assert [r for r, _ in learner.trained] == [3]  # rounds 1-2 were not redone
    strip = lambda rs: [{k: v for k, v in r.items() if k != "seconds"} for r in rs]  # noqa: E731
    assert strip(result["records"]) == strip(expected["records"])
    events, again_learner = [], FakeLearner(VECTORS)
    again, _ = query_run(
        tmp_path / "b",
        "diversity",
        learner=again_learner,
        callbacks=[lambda event, **p: events.append(event)],
    )
    assert again.run() == json.loads(json.dumps(result)) and again_learner.trained == []
    assert events == ["run_reused"]


def test_bad_query_configs_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown query strategy 'committee'"):
        config("committee")
    with pytest.raises(ValueError, match="batches must be positive"):
        config(batches=(4, 0))
    with pytest.raises(ValueError, match="at least 2 members"):
        config(members=1)
    with pytest.raises(ValueError, match=f"has {len(FREE)} questions with a relevant item"):
        query_run(tmp_path, batches=(len(FREE), 1))


def test_a_strategy_returning_an_annotated_question_is_caught(tmp_path):
    run, _ = query_run(tmp_path, "random")

    class Repeat(RandomQuestions):
        name = "repeat"

        def select(self, state, n):
            return FREE[:n]  # round 1 took some of these already, or not: always the same

    run.strategy = Repeat()
    run.first = Repeat()
    with pytest.raises(RuntimeError, match="already annotated"):
        run.run()
