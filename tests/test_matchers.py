"""The export's choice of matcher (pairlab.session.export): a ratio estimate of a
matcher's true positives from audit rounds held out of training, and the choice by
the estimated F1, on a hand-built audit whose answers are known; the cross-encoder's scores kept
for an export run again."""

import numpy as np
import pandas as pd
import pytest

from pairlab.annotators.person import SessionStore
from pairlab.evaluation.audit import Audit
from pairlab.models.training import TrainConfig
from pairlab.session.audit import SessionAudit
from pairlab.session.export import (
    Candidates,
    Matcher,
    audit_counts,
    audit_rounds,
    choose,
    cross_encoder,
    quality_intervals,
)


def design(ids, stratum, unlabelled):
    h = len(unlabelled)
    return Audit(
        ids=np.asarray(ids, np.int64),
        stratum=np.asarray(stratum, np.int64),
        sizes=np.asarray(unlabelled, np.int64),
        unlabelled=np.asarray(unlabelled, np.int64),
        known=np.zeros(h, np.int64),
        rates=np.full(h, 0.1),
        predicted=np.zeros(h, bool),
        prior="recalibrated",
        strength=1.0,
        design_variance=1.0,
    )


@pytest.fixture
def audited(tmp_path):
    """Two audit rounds over stratum 0 (100 unlabelled pairs) and stratum 1 (10,000): round 2
    at ids 1-4 and 11-14, round 3 at ids 5-8 and 15-18; the answers: 1, 2, 5 and 11 match."""
    audit = SessionAudit(tmp_path / "audit")
    store = SessionStore(tmp_path / "labels.sqlite")
    for r, ids in ((2, [1, 2, 3, 4, 11, 12, 13, 14]), (3, [5, 6, 7, 8, 15, 16, 17, 18])):
        strata = [0, 0, 0, 0, 1, 1, 1, 1]
        empty = np.empty(0, np.int64)
        audit._save(r, design(ids, strata, [100, 10_000]), empty, empty)
        store.post(r, ids, "audit")
        for pair in ids:
            store.answer(pair, int(pair in (1, 2, 5, 11)), annotator="oracle")
    return audit, store


# the person's yes answers and every answered pair, for choose()
ANSWERED = dict(
    said_yes=np.array([1, 2, 5, 11]),
    labelled=np.array([1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15, 16, 17, 18]),
)
NONE = np.empty(0, np.int64)
FOUND = Candidates(np.array([1, 3, 5, *range(20, 40)], np.int64), np.zeros(23), m=5)
PROBA = np.array([0.9, 0.9, 0.9] + [0.5] * 20)  # a matcher's: the audited calls, then 20-39


def test_the_true_positives_are_the_probabilities_corrected_by_the_audit(audited):
    audit, store = audited
    matcher = Matcher("bi-encoder", PROBA, 0.5)  # calls 1, 3, 5 and 20-39
    predicted = np.arange(20, 40)
    counts = audit_counts(audit_rounds(audit, store, NONE), matcher, FOUND, predicted)
    # the audited calls' mean residual, each round's weighted by stratum, the rounds by calls:
    # round 2: 1 matches (+0.1), 3 does not (-0.9); round 3: 5 matches (+0.1)
    mean = (2 * (0.1 - 0.9) / 2 + 0.1) / 3
    assert counts["tp"] == pytest.approx(20 * (0.5 + mean))
    assert counts["expected_tp"] == pytest.approx(10.0) and counts["audit_predicted"] == 3
    assert 0.0 <= counts["tp_ci"][0] < counts["tp"] < counts["tp_ci"][1] <= 20.0
    held = audit_counts(audit_rounds(audit, store, np.array([3])), matcher, FOUND, predicted)
    # 3 left out (trained on): the audited calls 1 and 5 both match
    assert held["tp"] == pytest.approx(20 * 0.6)
    assert held["audit_answers"] == 15
    alone = audit_counts(audit_rounds(audit, store, np.array([5])), matcher, FOUND, predicted)
    assert alone["tp_ci"] == [0.0, 20.0]  # one round holds a call: no spread, no bound
    one_round = [audit_rounds(audit, store, NONE)[0]]
    assert audit_counts(one_round, matcher, FOUND, predicted) is None  # no spread to read


def test_the_correction_interval_narrows_as_the_rounds_agree(audited):
    audit, store = audited
    rounds = audit_rounds(audit, store, NONE)
    matcher = Matcher("bi-encoder", PROBA, 0.5)
    few = audit_counts(rounds, matcher, FOUND, np.arange(20, 40))["tp_ci"]
    many = audit_counts(rounds * 10, matcher, FOUND, np.arange(20, 40))["tp_ci"]
    assert many[1] - many[0] < few[1] - few[0]


def test_rounds_that_agree_by_chance_keep_the_models_own_noise(audited):
    """Every audited call matches (1 and 5, one a round, at 0.9): the rounds' means agree, so
    their spread is 0, and the interval takes what the model itself expects the means to vary
    (each 0.9 * 0.1), not the predicted pairs' outcomes alone (DBLP-ACM: 10% coverage)."""
    from scipy.stats import t as student

    audit, store = audited
    rounds = audit_rounds(audit, store, np.array([3])) * 5  # ten rounds, each mean +0.1
    matcher = Matcher("bi-encoder", PROBA, 0.5)
    counts = audit_counts(rounds, matcher, FOUND, np.arange(20, 40))
    assert counts["tp"] == pytest.approx(20 * 0.6)
    spread = 10 * 0.1**2 * (0.9 * 0.1)  # the ten means' variance, each weighted a tenth
    half = student.ppf(0.975, 9) * np.sqrt(20**2 * spread + 20 * 0.6 * 0.4) + 0.5  # a count
    assert counts["tp_ci"] == pytest.approx([12 - half, 12 + half])


def test_the_choice_is_the_higher_estimated_f1(audited):
    audit, store = audited
    ids = np.array([1, 2, 3, 4, 11, 12, 13, 14, 20, 21], np.int64)
    found = Candidates(ids, np.zeros(len(ids)), m=5)
    precise = Matcher("bi-encoder", np.where(np.isin(ids, [1, 2, 20]), 0.95, 0.1), 0.5)
    loose = Matcher(
        "cross-encoder", np.where(np.isin(ids, [1, 2, 3, 4, 12, 13, 20, 21]), 0.95, 0.1), 0.5
    )
    rounds = audit_rounds(audit, store, NONE)
    best, why = choose([precise, loose], found, **ANSWERED, rounds=rounds, total=10.0)
    assert best is precise and why["chosen"] == "bi-encoder"
    # precise: 20 at 0.95, its audited calls 1 and 2 both match: all of it (clipped at 1)
    assert precise.estimate["precision_unlabelled"] == pytest.approx(1.0)
    # loose: 3, 4, 12 and 13 called and none matches, 12 and 13 standing for 2,500 pairs each
    mean = (25 * (2 * 0.05 - 2 * 0.95) + 2 * 2_500 * -0.95) / (4 * 25 + 2 * 2_500)
    assert loose.estimate["precision_unlabelled"] == pytest.approx(0.95 + mean)
    assert precise.estimate["predicted"] == 1 and loose.estimate["predicted"] == 2  # 20; 20, 21
    assert precise.estimate["f1"] == pytest.approx(2 * (4 + 1) / (5 + 10))
    choose([precise], found, **ANSWERED, rounds=rounds, total=2.0)
    assert precise.estimate["recall"] == 1.0 and precise.estimate["f1"] <= 1.0  # total below found


def test_without_an_estimated_total_the_bi_encoder_is_kept(audited):
    audit, store = audited
    ids = np.array([1, 2], np.int64)
    found = Candidates(ids, np.zeros(2), m=1)
    first, second = (
        Matcher("bi-encoder", np.ones(2), 0.5),
        Matcher("cross-encoder", np.ones(2), 0.5),
    )
    best, why = choose(
        [first, second],
        found,
        said_yes=NONE,
        labelled=NONE,
        rounds=audit_rounds(audit, store, NONE),
        total=None,
    )
    assert best is first and why["why"] == "no_audit_estimate"


class _Texts:
    """The one method of a record pool a matcher reads: the texts of pair ids."""

    def texts(self, ids):
        return [f"record {i} left" for i in ids], [f"record {i % 3} right" for i in ids]


def test_an_export_run_again_reads_the_cross_encoders_scores_back(
    tiny_model, tmp_path, monkeypatch
):
    from sentence_transformers.cross_encoder import CrossEncoderTrainer

    trainings = []  # counted in the library's trainer: ConcatBERT's code, in the key, unchanged
    train = CrossEncoderTrainer.train
    monkeypatch.setattr(
        CrossEncoderTrainer,
        "train",
        lambda self, *a, **k: trainings.append(1) or train(self, *a, **k),
    )
    found = Candidates(np.arange(10, 16, dtype=np.int64), np.zeros(6), 2)
    labels = pd.DataFrame({"pair_id": np.arange(6), "label": [1, 0, 1, 0, 0, 1]})
    config = TrainConfig(epochs=1, batch_size=4, max_seq_length=16)

    def export(labels, cache=tmp_path):
        return cross_encoder(
            _Texts(), found, labels, 0.9, config=config, model=tiny_model, cache=cache
        )

    first = export(labels)
    again = export(labels)
    assert len(trainings) == 1  # the same labels: read back, not trained again
    np.testing.assert_array_equal(again.proba, first.proba)
    assert again.threshold == first.threshold
    export(labels.assign(label=[1, 0, 1, 0, 1, 1]))  # one answer changed: trained again
    assert len(trainings) == 2
    export(labels, cache=None)  # no cache folder: always trained
    assert len(trainings) == 3


def test_the_export_quality_intervals_hold_the_share_found_and_widen_with_unaudited_calls():
    """Issue 59: an export of the labelled matches alone has precision 1 and the session's
    share-found interval as its recall; predictions with no interval of their true positives
    may be anything (precision 0-1), so their interval spans that."""
    alone = quality_intervals(713, 0, None, (690.0, 1_040.0))
    assert alone["precision_ci"] == [1.0, 1.0]
    assert alone["recall_ci"] == [713 / 1_040, 713 / 713]  # the total is at least what is found
    assert alone["f1_ci"] == [2 * 713 / (713 + 1_040), 1.0]
    blind = quality_intervals(100, 100, None, (150.0, 250.0))
    assert blind["precision_ci"] == [0.5, 1.0] and blind["recall_ci"] == [100 / 250, 1.0]
    lo, hi = quality_intervals(100, 100, (60.0, 90.0), (150.0, 250.0))["precision_ci"]
    assert (lo, hi) == (160 / 200, 190 / 200)


def test_the_chosen_estimate_carries_its_intervals(audited):
    audit, store = audited
    matcher = Matcher("bi-encoder", PROBA, 0.5)
    rounds = audit_rounds(audit, store, NONE)
    choose([matcher], FOUND, **ANSWERED, rounds=rounds, total=30.0, total_ci=[25.0, 40.0])
    e = matcher.estimate
    assert e["audit_predicted"] == 3 and e["predicted"] == 20  # 1, 3, 5 audited; 20-39
    for key in ("precision", "recall", "f1"):
        assert e[f"{key}_ci"][0] <= e[key] <= e[f"{key}_ci"][1], key


def test_the_matcher_choice_names_each_estimated_f1_with_its_interval():
    from pairlab.session.worker import sentence

    choice = {
        "chosen": "bi-encoder",
        "why": "higher_f1",
        "estimates": {
            "bi-encoder": {"f1": 0.83, "f1_ci": [0.61, 0.95]},
            "cross-encoder": {"f1": 0.8},
        },
    }
    said = sentence(choice, "matcher_choice")
    assert "bi-encoder 0.830 (95% interval 0.61-0.95), cross-encoder 0.800)" in said
    assert "adds no pair" not in said
    nothing = sentence({**choice, "matches": 713, "labelled_matches": 713}, "matcher_choice")
    assert nothing.endswith(
        "it adds no pair to your 713 labelled matches: matches.csv holds your own yes answers"
    )
    assert "adds no pair" not in sentence(
        {**choice, "matches": 714, "labelled_matches": 713}, "matcher_choice"
    )
    blind = {"f1": 0.8, "f1_ci": [0.5, 0.9], "predicted": 29, "tp_ci": [0.0, 29.0]}
    said = sentence({**choice, "estimates": {"bi-encoder": blind}}, "matcher_choice")
    assert "too few audit pairs among the 29 pairs it adds to bound how many of them" in said
