"""The loop with annotators other than the oracle: labels.csv beside the oracle's labels, the
round records' accuracy, no-answers never trained on nor asked again, noisy runs in their own
folders, resume with the same noisy answers; and the annotator specs."""

import numpy as np
import pandas as pd
import pytest
from conftest import BASE, EVAL_SETS, POOLS, VECTORS, FakeLearner, run

from pairlab.active import ActiveConfig, ActiveRun, run_folder, run_labels
from pairlab.annotators import Annotator, ErrorDependentOracle, NoisyOracle, Oracle, make_annotator
from pairlab.data.pairs import isin_sorted

NOISY = {"kind": "noisy", "flip_positive": 0.3, "flip_negative": 0.3, "seed": 4}


class Recording(FakeLearner):
    """The stand-in learner, remembering the labels it was trained on."""

    def __init__(self, vectors, **kw):
        super().__init__(vectors, **kw)
        self.seen = []

    def train(self, pool, ids, labels, *, round):
        self.seen.append((ids.copy(), labels.copy()))
        return super().train(pool, ids, labels, round=round)


def test_a_noisy_run_trains_on_the_annotators_labels_and_says_how_they_compare(tmp_path):
    learner = Recording(VECTORS)
    active, folder = run(tmp_path, strategy="static_retrieval", learner=learner, annotator=NOISY)
    result = active.run()
    frame = pd.read_csv(folder / "labels.csv")
    assert {"label", "oracle"} <= set(frame.columns)
    wrong = int((frame["label"] != frame["oracle"]).sum())
    assert 0 < wrong < len(frame)  # a 30% flip rate flipped some, not all
    ids, labels = learner.seen[-1]
    pool = POOLS["train"]
    assert np.array_equal(
        labels, NoisyOracle(flip_positive=0.3, flip_negative=0.3, seed=4).annotate(pool, ids)
    )
    assert not np.array_equal(labels, pool.labels(ids))
    records = result["records"]
    assert (
        sum(
            r["annotation"]["false_positives"] + r["annotation"]["false_negatives"] for r in records
        )
        == wrong
    )
    assert result["annotation"]["accuracy"] == pytest.approx(1 - wrong / len(frame))
    assert result["positives_found"] == int(frame["oracle"].sum())  # the truth, not the noisy count
    read_ids, read_labels = run_labels(folder)
    assert np.array_equal(
        read_labels,
        NoisyOracle(**{k: v for k, v in NOISY.items() if k != "kind"}).annotate(pool, read_ids),
    )


def test_noisy_and_clean_runs_never_share_a_folder():
    clean = ActiveConfig(task="toy", strategy="uncertainty")
    assert clean.to_dict()["annotator"] is None  # the pool's oracle
    noisy = ActiveConfig(task="toy", strategy="uncertainty", annotator=NOISY)
    assert run_folder("r", clean, POOLS, EVAL_SETS) != run_folder("r", noisy, POOLS, EVAL_SETS)


class Silent(Annotator):
    """Answers nothing for every third pair id, the oracle otherwise; counts what it is asked."""

    name = "silent"

    def __init__(self):
        self.asked = []

    def annotate(self, pool, pair_ids):
        self.asked.append(np.asarray(pair_ids).copy())
        labels = pool.labels(pair_ids).copy()
        labels[np.asarray(pair_ids) % 3 == 0] = -1
        return labels


def test_unanswered_pairs_are_not_trained_on_nor_asked_again(tmp_path):
    learner, silent = Recording(VECTORS), Silent()
    config = ActiveConfig(strategy="uncertainty", annotator={"kind": "silent"}, **BASE)
    folder = run_folder(tmp_path, config, POOLS, EVAL_SETS)
    result = ActiveRun(config, POOLS, EVAL_SETS, folder, learner=learner, annotator=silent).run()
    asked = np.concatenate(silent.asked)
    assert len(np.unique(asked)) == len(asked)  # nothing asked twice
    unanswered = asked[asked % 3 == 0]
    assert len(unanswered) > 0 and result["annotation"]["no_answer"] == len(unanswered)
    for ids, _ in learner.seen:
        assert not isin_sorted(ids, np.sort(unanswered)).any()
    read_ids, _ = run_labels(folder)
    assert not isin_sorted(read_ids, np.sort(unanswered)).any()
    assert (pd.read_csv(folder / "labels.csv")["label"] == -1).sum() == len(unanswered)


def test_an_annotator_object_needs_a_spec_in_the_config(tmp_path):
    config = ActiveConfig(strategy="uncertainty", **BASE)
    with pytest.raises(ValueError, match="config.annotator is None"):
        ActiveRun(
            config, POOLS, EVAL_SETS, tmp_path, learner=FakeLearner(VECTORS), annotator=Oracle()
        )


def test_a_crashed_noisy_run_resumes_with_the_same_answers(tmp_path):
    straight, straight_folder = run(tmp_path / "a", annotator=NOISY)
    straight.run()
    crashing, folder = run(
        tmp_path / "b", annotator=NOISY, learner=FakeLearner(VECTORS, crash_at_round=2)
    )
    with pytest.raises(KeyboardInterrupt):
        crashing.run()
    run(tmp_path / "b", annotator=NOISY)[0].run()
    assert pd.read_csv(folder / "labels.csv").equals(pd.read_csv(straight_folder / "labels.csv"))


def test_specs_make_their_annotators_and_bad_ones_are_clear_errors(monkeypatch):
    assert isinstance(make_annotator(None), Oracle) and isinstance(
        make_annotator({"kind": "oracle"}), Oracle
    )
    noisy = make_annotator(NOISY)
    assert isinstance(noisy, NoisyOracle) and noisy.params()["seed"] == 4
    import pairlab.models.embed as embed

    pool = POOLS["train"]
    emb = np.stack([VECTORS[t] for t in pool.left_texts])
    monkeypatch.setattr(embed, "embed_pool", lambda pool, model, **kw: (emb, emb))
    dependent = make_annotator({"kind": "error_dependent", "accuracy": [1.0, 0.0], "seed": 1})
    assert isinstance(dependent, ErrorDependentOracle)
    ids = np.arange(0, pool.n_pairs, 97, dtype=np.int64)
    left, right = pool.space.decode(ids)
    error = (np.clip(np.einsum("nd,nd->n", emb[left], emb[right]), 0, 1) - pool.labels(ids)) ** 2
    given = dependent.annotate(pool, ids)
    # accuracy 1 below error 0.5 and 0 above: every answer is wrong exactly where the error is high
    assert np.array_equal(given != pool.labels(ids), error >= 0.5) and (error >= 0.5).any()
    for bad in ({"kind": "psychic"}, "noisy", {"flip_positive": 0.1}):
        with pytest.raises(ValueError, match="annotator spec"):
            make_annotator(bad)
    with pytest.raises(ValueError, match="API key out of the annotator spec"):
        make_annotator(
            {"kind": "llm", "base_url": "http://x", "model": "m", "cache": "c", "api_key": "sk"}
        )
