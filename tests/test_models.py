"""CosineBERT and ConcatBERT on a tiny separable set of real-looking questions."""

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from pairlab.models.concatbert import ConcatBERT
from pairlab.models.cosinebert import (
    HEAD_LR_FACTOR,
    Calibration,
    CosineBCELoss,
    CosineBERT,
    trainer,
)
from pairlab.models.embed import load_encoder
from pairlab.models.training import TrainConfig, disable_dropout, pair_dataset

BASE = [
    "How do I learn Python?",
    "What is the capital of France?",
    "How can I lose weight fast?",
    "What is machine learning?",
    "How do I cook rice?",
    "Why is the sky blue?",
    "How to invest in stocks?",
    "What is love?",
]
PARA = [
    "What is the best way to learn Python?",
    "Which city is the capital of France?",
    "What are quick ways to lose weight?",
    "Can you explain machine learning?",
    "What's the method to cook rice?",
    "What makes the sky look blue?",
    "How should I start investing in stocks?",
    "How do you define love?",
]


def toy_pairs():
    left, right, labels = [], [], []
    for i in range(8):
        left.append(BASE[i]), right.append(PARA[i]), labels.append(1)
        for j in range(8):
            if j != i and j % 3 == i % 3:
                left.append(BASE[i]), right.append(PARA[j]), labels.append(0)
    return left, right, np.array(labels)


@pytest.fixture(scope="module")
def cosinebert():
    left, right, labels = toy_pairs()
    return CosineBERT.train(left, right, labels, config=TrainConfig(epochs=2, batch_size=8))


def test_cosine_head_forward_is_the_formula():
    encoder = load_encoder()
    disable_dropout(encoder)
    loss = CosineBCELoss(encoder, w_init=-3.0, b_init=0.5)  # a negative raw w acts as |w|
    loss.train()
    features = [encoder.tokenize(BASE[:4]), encoder.tokenize(PARA[:4])]
    labels = torch.tensor([1.0, 0.0, 1.0, 0.0])
    left = encoder(dict(features[0]))["sentence_embedding"]
    right = encoder(dict(features[1]))["sentence_embedding"]
    cos = F.cosine_similarity(left, right)
    z = (cos - cos.mean()) / torch.sqrt(cos.var(unbiased=False) + 1e-8)
    expected = F.binary_cross_entropy_with_logits(3.0 * z + 0.5, labels)
    got = loss([dict(f) for f in features], labels)
    assert torch.allclose(got, expected, atol=1e-5)
    assert loss.folded().weight == pytest.approx(3.0)


def test_training_keeps_w_non_negative_and_calibration_lowers_log_loss(cosinebert):
    assert cosinebert.info["head"]["weight"] >= 0
    assert cosinebert.calibration.weight >= 0
    # the refit is the best logistic model on the training cosines: never worse than the head
    assert cosinebert.info["calibration_log_loss"] < cosinebert.info["head_log_loss"]
    left, right, labels = toy_pairs()
    p = cosinebert.calibration.proba(cosinebert.cosine(left, right))
    assert ((p > 0.5) == (labels == 1)).mean() >= 0.9


def test_anti_correlated_labels_cannot_make_the_slope_negative(tiny_model):
    left, right, labels = toy_pairs()
    model = CosineBERT.train(
        left, right, 1 - labels, model=tiny_model, config=TrainConfig(epochs=1, batch_size=8)
    )
    assert model.info["head"]["weight"] >= 0 and model.calibration.weight >= 0


def test_a_flat_calibration_keeps_the_cosines_order():
    # labels that fall as the cosine rises: the fitted slope is negative, and a zero slope would
    # give every pair one logit (AP = the positive rate, whatever the encoder learned)
    cosine = np.linspace(0.1, 0.9, 40)
    labels = (cosine < 0.5).astype(int)
    calibration = Calibration.fit(cosine, labels)
    assert calibration.weight > 0
    logits = calibration.logits(cosine)
    assert (np.diff(logits) > 0).all()
    assert np.ptp(calibration.proba(cosine)) < 1e-4  # and it claims no information it lacks


def test_platts_targets_keep_a_fit_on_few_separable_pairs_from_claiming_certainty():
    """``smoothed`` (Platt 1999): on 32 separable pairs the maximum-likelihood fit calls a pair
    just below the negatives impossible; Platt's targets keep it plausible, and on many
    overlapping pairs the two fits agree."""
    rng = np.random.default_rng(0)
    cosine = np.r_[rng.normal(0.8, 0.05, 20), rng.normal(0.5, 0.05, 12)]
    labels = np.r_[np.ones(20), np.zeros(12)]
    sharp, smooth = (Calibration.fit(cosine, labels, smoothed=s) for s in (False, True))
    near_miss = np.array([0.4])
    assert sharp.proba(near_miss)[0] < 1e-8 < 1e-3 < smooth.proba(near_miss)[0]
    assert smooth.proba(np.array([0.8]))[0] < (20 + 1) / (20 + 2) + 0.02  # Platt's top target
    assert (np.diff(smooth.logits(np.sort(cosine))) >= 0).all()
    cosine = np.r_[rng.normal(0.7, 0.1, 300), rng.normal(0.5, 0.1, 300)]
    labels = np.r_[np.ones(300), np.zeros(300)]
    sharp, smooth = (Calibration.fit(cosine, labels, smoothed=s) for s in (False, True))
    assert smooth.weight == pytest.approx(sharp.weight, rel=0.05)


def test_save_load_round_trip_gives_identical_scores(cosinebert, tmp_path):
    before = cosinebert.score_pairs(*_toy_pool())
    cosinebert.save(tmp_path / "cosinebert")
    loaded = CosineBERT.load(tmp_path / "cosinebert")
    assert loaded.calibration == cosinebert.calibration
    assert np.array_equal(loaded.score_pairs(*_toy_pool()), before)
    assert (tmp_path / "cosinebert" / "modules.json").is_file()  # a standard ST folder


def test_calibration_validates():
    with pytest.raises(ValueError, match="both positive and negative"):
        Calibration.fit(np.array([0.1, 0.2]), np.array([1, 1]))
    with pytest.raises(ValueError, match="not calibrated"):
        CosineBERT(load_encoder()).score_pairs(*_toy_pool())
    with pytest.raises(FileNotFoundError, match="not a saved CosineBERT"):
        CosineBERT.load("/nonexistent")


def test_concatbert_loss_falls_and_round_trips(tmp_path):
    left, right, labels = toy_pairs()

    def bce(model):
        z = model.logits(left, right, show_progress=False)
        return float(np.mean(np.logaddexp(0, z) - labels * z))

    before = bce(ConcatBERT.untrained(seed=0))
    model = ConcatBERT.train(  # 4 steps of all 22 pairs: 0.695 -> 0.589 on MiniLM
        left, right, labels, config=TrainConfig(epochs=4, batch_size=32, learning_rate=3e-4)
    )
    after = bce(model)
    assert after < before - 0.05, (before, after)
    model.save(tmp_path / "concat")
    loaded = ConcatBERT.load(tmp_path / "concat")
    assert np.allclose(
        loaded.logits(left, right, show_progress=False),
        model.logits(left, right, show_progress=False),
        atol=1e-6,
    )


def test_training_data_is_validated():
    with pytest.raises(ValueError, match="equally many"):
        CosineBERT.train(["a"], ["b", "c"], [1])
    with pytest.raises(ValueError, match="0 or 1"):
        ConcatBERT.train(["a"], ["b"], [2])


def test_head_learns_ten_thousand_times_faster_than_the_encoder():
    encoder = load_encoder()
    loss = CosineBCELoss(encoder)
    left, right, labels = toy_pairs()
    config = TrainConfig(learning_rate=2e-5)
    optimizer = trainer(encoder, loss, pair_dataset(left, right, labels), config).create_optimizer()
    lr_of = {id(p): group["lr"] for group in optimizer.param_groups for p in group["params"]}
    assert lr_of[id(loss.w)] == lr_of[id(loss.b)] == pytest.approx(2e-5 * HEAD_LR_FACTOR)
    encoder_lrs = {lr_of[id(p)] for p in encoder.parameters()}
    assert np.allclose(sorted(encoder_lrs), [2e-5])


def test_cosinebert_trained_on_one_class_keeps_its_head_as_calibration(tiny_model):
    left, right, labels = toy_pairs()
    negatives = labels == 0  # what uniform sampling of a real pool returns: no positive at all
    model = CosineBERT.train(
        np.array(left)[negatives],
        np.array(right)[negatives],
        labels[negatives],
        model=tiny_model,
        config=TrainConfig(epochs=1, batch_size=8),
        quiet=True,
    )
    assert "one class" in model.info["calibration"]
    assert model.calibration == Calibration(**model.info["head"])
    assert np.isfinite(model.score_pairs(*_toy_pool())).all()


def _toy_pool():
    """A pool of 8 x 8 pairs (positives on the diagonal) and 16 of its pair ids."""
    from pairlab.data import Pool
    from pairlab.data.pairs import PairSpace

    space = PairSpace(8, 8, False)
    pool = Pool(
        "toy",
        "train",
        np.array(BASE, dtype=object),
        np.array(PARA, dtype=object),
        False,
        space.encode(np.arange(8), np.arange(8)),
        np.empty(0, np.int64),
    )
    return pool, np.sort(np.r_[pool.positives, space.encode(np.arange(8), (np.arange(8) + 1) % 8)])


def test_seed_round_models_are_shared_across_runs_and_identical(tmp_path, monkeypatch, tiny_model):
    """The learner keeps a seed-round model under a digest of its training inputs: a second run
    with the same labels loads it instead of training, with the same calibration and the same
    embeddings; other rounds, other labels and PAIRLAB_SHARE_MODELS=0 train afresh."""
    from pairlab.active import ActiveConfig, CosineBERTLearner

    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path))
    pool, ids = _toy_pool()
    labels = pool.labels(ids)
    calls = []
    real = CosineBERT.train.__func__
    monkeypatch.setattr(
        CosineBERT, "train", classmethod(lambda cls, *a, **k: calls.append(1) or real(cls, *a, **k))
    )
    config = ActiveConfig(
        task="toy", strategy="uncertainty", epochs=1, batch_size=8, model=tiny_model
    )
    first = CosineBERTLearner(config).train(pool, ids, labels, round=1)
    first_emb = CosineBERTLearner.embed(first, PARA)
    again = CosineBERTLearner(config).train(pool, ids, labels, round=1)
    assert len(calls) == 1 and again.cache_key == first.cache_key
    assert again.calibration == first.calibration
    assert np.array_equal(CosineBERTLearner.embed(again, PARA), first_emb)
    assert np.array_equal(again.embed(PARA, show_progress=False), first_emb)  # not just the cache
    CosineBERTLearner(config).train(pool, ids, labels, round=2)
    flipped = CosineBERTLearner(config).train(pool, ids, 1 - labels, round=1)
    assert len(calls) == 3 and flipped.cache_key != first.cache_key
    monkeypatch.setenv("PAIRLAB_SHARE_MODELS", "0")
    CosineBERTLearner(config).train(pool, ids, labels, round=1)
    assert len(calls) == 4


def test_every_rounds_model_is_shared_when_the_settings_ask(tmp_path, monkeypatch, tiny_model):
    """``share_models: all`` (the paper-scale profiles, where uncertainty sampling and adaptive
    retrieval pick the same batches): the sweep's learner shares every round's model, so a
    second run with the same labels in round 2 loads it; the runs' configs and keys do not
    change with the setting, and the default shares the seed round only."""
    from pairlab.active import ActiveConfig
    from pairlab.active.config import LoopSettings
    from pairlab.experiments.sweeps import sharing

    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="share_models must be 'seed' or 'all'"):
        LoopSettings(share_models="every")
    base = dict(n1=4, rounds=3, epochs=1, batch_size=8, model=tiny_model)
    shared, default = LoopSettings(**base, share_models="all"), LoopSettings(**base)
    config = shared.config("toy", "uncertainty", 0)
    assert config == default.config("toy", "uncertainty", 0) and isinstance(config, ActiveConfig)
    assert sharing(default) is None
    learner = sharing(shared)
    assert tuple(learner(config).shared_rounds) == (1, 2, 3)
    pool, ids = _toy_pool()
    calls = []
    real = CosineBERT.train.__func__
    monkeypatch.setattr(
        CosineBERT, "train", classmethod(lambda cls, *a, **k: calls.append(1) or real(cls, *a, **k))
    )
    first = learner(config).train(pool, ids, pool.labels(ids), round=2)
    other = learner(shared.config("toy", "adaptive_retrieval", 0))
    again = other.train(pool, ids, pool.labels(ids), round=2)
    assert len(calls) == 1 and again.cache_key == first.cache_key
    assert again.calibration == first.calibration


def test_a_later_rounds_model_is_shared_in_memory_and_identical(tmp_path, monkeypatch, tiny_model):
    """A round the disk cache does not share (round 2 by default) is kept in memory among the
    last few models trained: a second run with the same labels takes it, and the embeddings
    computed under it, instead of training and embedding again; the model training would give
    is the same (same calibration, same embeddings). Past ``size`` models the oldest is dropped
    and trained again; other labels and PAIRLAB_SHARE_MODELS=0 train afresh."""
    from pairlab.active import ActiveConfig, CosineBERTLearner
    from pairlab.active.learner import RECENT

    monkeypatch.setenv("PAIRLAB_CACHE_DIR", str(tmp_path))
    pool, ids = _toy_pool()
    labels = pool.labels(ids)
    calls, embedded = [], []
    real, real_embed = CosineBERT.train.__func__, CosineBERT.embed
    monkeypatch.setattr(
        CosineBERT, "train", classmethod(lambda cls, *a, **k: calls.append(1) or real(cls, *a, **k))
    )
    monkeypatch.setattr(
        CosineBERT, "embed", lambda self, *a, **k: embedded.append(1) or real_embed(self, *a, **k)
    )
    config = ActiveConfig(
        task="toy", strategy="uncertainty", epochs=1, batch_size=8, model=tiny_model
    )
    other = ActiveConfig(
        task="toy", strategy="adaptive_retrieval", epochs=1, batch_size=8, model=tiny_model
    )
    first = CosineBERTLearner(config).train(pool, ids, labels, round=2)
    first_emb = CosineBERTLearner.embed(first, PARA)
    embedded.clear()
    again = CosineBERTLearner(other).train(pool, ids, labels, round=2)
    assert again is first and len(calls) == 1
    assert np.array_equal(CosineBERTLearner.embed(again, PARA), first_emb)
    assert not embedded  # the embeddings computed under it were kept
    assert not (tmp_path / "models").exists()  # in memory only: nothing written to the cache

    monkeypatch.setenv("PAIRLAB_SHARE_MODELS", "0")  # what training gives without sharing
    fresh = CosineBERTLearner(other).train(pool, ids, labels, round=2)
    assert fresh is not first and len(calls) == 2
    assert fresh.calibration == first.calibration
    assert np.array_equal(CosineBERTLearner.embed(fresh, PARA), first_emb)
    monkeypatch.delenv("PAIRLAB_SHARE_MODELS")

    monkeypatch.setattr(RECENT, "size", 1)
    CosineBERTLearner(config).train(pool, ids, 1 - labels, round=2)  # other labels: trained,
    assert len(calls) == 3  # and round 2's model pushed out
    CosineBERTLearner(other).train(pool, ids, labels, round=2)
    assert len(calls) == 4
