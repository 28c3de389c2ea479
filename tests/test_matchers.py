"""The export's choice of matcher (pairlab.session.export): inverse-probability estimates of a
matcher's true and false positives from audit rounds held out of training, and the choice by
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
    """One audit round: stratum 0 (100 unlabelled pairs) audited at ids 1-4, stratum 1 (10,000
    pairs) at ids 11-14; the answers: 1, 2 and 11 match."""
    audit = SessionAudit(tmp_path / "audit")
    audit._save(
        2,
        design([1, 2, 3, 4, 11, 12, 13, 14], [0, 0, 0, 0, 1, 1, 1, 1], [100, 10_000]),
        np.empty(0, np.int64),
        np.empty(0, np.int64),
    )
    store = SessionStore(tmp_path / "labels.sqlite")
    store.post(2, [1, 2, 3, 4, 11, 12, 13, 14], "audit")
    for pair, label in zip([1, 2, 3, 4, 11, 12, 13, 14], [1, 1, 0, 0, 1, 0, 0, 0]):
        store.answer(pair, label, annotator="oracle")
    return audit, store


# the person's yes answers, every answered pair and the pairs trained on, for choose()
ANSWERED = dict(
    said_yes=np.array([1, 2, 11]),
    labelled=np.array([1, 2, 3, 4, 11, 12, 13, 14]),
    trained=np.empty(0, np.int64),
)


def test_counts_weight_each_audit_pair_by_its_stratum(audited):
    audit, store = audited
    counts = audit_counts(audit, store, np.array([1, 3, 11]), held=np.empty(0, np.int64))
    # stratum 0: weight 100 / 4 = 25 (1 true, 3 false); stratum 1: 10,000 / 4 = 2,500 (11 true)
    assert counts["tp"] == pytest.approx(25 + 2500) and counts["fp"] == pytest.approx(25)
    held = audit_counts(audit, store, np.array([1, 3, 11]), held=np.array([11]))
    assert held["tp"] == pytest.approx(25) and held["audit_answers"] == 7  # 11 left out
    assert (
        audit_counts(
            SessionAudit(audit.folder.parent / "none"), store, np.array([1]), np.empty(0, np.int64)
        )
        is None
    )


def test_the_choice_is_the_higher_estimated_f1(audited):
    audit, store = audited
    ids = np.array([1, 2, 3, 4, 11, 12, 13, 14, 20, 21], np.int64)
    found = Candidates(ids, np.zeros(len(ids)), m=5)
    precise = Matcher("bi-encoder", np.where(np.isin(ids, [1, 2, 20]), 0.95, 0.1), 0.5)
    loose = Matcher(
        "cross-encoder", np.where(np.isin(ids, [1, 2, 3, 4, 12, 13, 20, 21]), 0.95, 0.1), 0.5
    )
    best, why = choose(
        [precise, loose],
        found,
        **ANSWERED,
        audit=audit,
        store=store,
        total=10.0,
    )
    assert best is precise and why["chosen"] == "bi-encoder"
    assert precise.estimate["precision_unlabelled"] == pytest.approx(1.0)
    assert loose.estimate["precision_unlabelled"] == pytest.approx(50 / (50 + 2 * 25 + 2 * 2500))
    assert precise.estimate["predicted"] == 1 and loose.estimate["predicted"] == 2  # 20; 20, 21
    assert precise.estimate["f1"] == pytest.approx(2 * (3 + 1) / (4 + 10))
    choose(
        [precise],
        found,
        **ANSWERED,
        audit=audit,
        store=store,
        total=2.0,
    )
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
        said_yes=np.empty(0, np.int64),
        labelled=np.empty(0, np.int64),
        trained=np.empty(0, np.int64),
        audit=audit,
        store=store,
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
    share-found interval as its recall; predictions no audit answer fell on may be anything
    (precision 0-1), so their interval spans that; the point estimates lie inside."""
    alone = quality_intervals(713, 0, None, 0.0, (690.0, 1_040.0), 0.95)
    assert alone["precision_ci"] == [1.0, 1.0]
    assert alone["recall_ci"] == [713 / 1_040, 713 / 713]  # the total is at least what is found
    assert alone["f1_ci"] == [2 * 713 / (713 + 1_040), 1.0]
    blind = quality_intervals(100, 100, None, 0.0, (150.0, 250.0), 0.95)
    assert blind["precision_ci"] == [0.5, 1.0] and blind["recall_ci"] == [100 / 250, 1.0]
    weightless = quality_intervals(100, 100, None, 5.0, (150.0, 250.0), 0.95)  # tp = fp = 0
    assert weightless["precision_ci"] == [0.5, 1.0]
    lo, hi = quality_intervals(100, 100, 0.75, 40.0, (150.0, 250.0), 0.95)["precision_ci"]
    assert 0.5 < lo < (100 + 0.75 * 100) / 200 < hi < 1.0  # around 30 of 40 audited calls right
    few = quality_intervals(100, 100, 0.75, 4.0, (150.0, 250.0), 0.95)["precision_ci"]
    assert few[0] < lo and few[1] > hi  # fewer answers, a wider interval


def test_the_chosen_estimate_carries_its_intervals(audited):
    audit, store = audited
    ids = np.array([1, 2, 3, 4, 11, 12, 13, 14, 20, 21], np.int64)
    found = Candidates(ids, np.zeros(len(ids)), m=5)
    precise = Matcher("bi-encoder", np.where(np.isin(ids, [1, 2, 20]), 0.95, 0.1), 0.5)
    choose(
        [precise],
        found,
        **ANSWERED,
        audit=audit,
        store=store,
        total=10.0,
        total_ci=[6.0, 20.0],
    )
    e = precise.estimate
    assert e["audit_predicted"] == 2 and e["audit_predicted_effective"] == 2.0  # pairs 1, 2
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
