"""The training speed settings (issue 35): batches of similar length and bf16 with eager attention
change the order and the arithmetic of training, not the protocol. The sampler still shows every
pair once an epoch, the attention switch is undone after training, and on a smoke-sized WikiQA
pool the fast path's test AP falls inside the reference path's 95% interval. Both trainings
run with the objects alive before them out of the garbage collector's full passes."""

import gc

import numpy as np
import pytest

from pairlab.models import training
from pairlab.models.training import (
    TrainConfig,
    length_buckets,
    native_bf16,
    training_arguments,
    training_context,
)


class _Texts:
    """The two text columns a batch sampler reads, as a datasets.Dataset has them."""

    column_names = ["sentence1", "sentence2", "label"]

    def __init__(self, first, second):
        self.columns = {"sentence1": first, "sentence2": second}

    def __len__(self):
        return len(self.columns["sentence1"])

    def __getitem__(self, name):
        return self.columns[name]


def _dataset(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    first = ["q" * int(k) for k in rng.integers(5, 20, n)]
    second = ["s" * int(k) for k in rng.integers(10, 200, n)]
    return _Texts(first, second)


class _Arguments:  # as sentence-transformers' training arguments, they take weak references
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


def _epoch(sampler, epoch):
    sampler.set_epoch(epoch)
    return list(sampler)


def test_length_buckets_show_every_pair_once_an_epoch_seeded():
    data = _dataset()
    sampler = length_buckets(data, batch_size=16, drop_last=False, seed=3)
    for epoch in (0, 1):
        batches = _epoch(sampler, epoch)
        flat = np.concatenate(batches)
        assert sorted(flat.tolist()) == list(range(len(data)))
        assert max(map(len, batches)) == 16
    again = length_buckets(data, batch_size=16, drop_last=False, seed=3)
    assert _epoch(again, 1) == _epoch(sampler, 1)
    assert _epoch(sampler, 0) != _epoch(sampler, 1)


def test_the_training_seed_orders_the_batches_whatever_seed_the_library_passes():
    """sentence-transformers 6.0.1 hands every batch sampler seed 0; 6.2 hands it the training
    seed. Either way the batches follow the run's own seed, so two seeds of a run train on
    different orders (with 6.0.1 they trained on one, and three seeds were one run)."""
    data = _dataset()

    def order(seed, passed):
        args = training_arguments(_Arguments, TrainConfig(seed=seed, batch_order="length"))
        return _epoch(args.batch_sampler(data, batch_size=16, drop_last=False, seed=passed), 0)

    want = _epoch(length_buckets(data, batch_size=16, drop_last=False, seed=1002), 0)
    assert order(1002, passed=0) == order(1002, passed=1002) == want
    assert order(2, passed=0) != order(1002, passed=0)


def test_length_buckets_pad_far_less_than_random_order():
    data = _dataset()
    second = np.array([len(t) for t in data["sentence2"]])

    def padded(batches):  # word pieces a batch is padded to, summed
        return sum(len(b) * second[b].max() for b in map(np.asarray, batches))

    order = np.random.default_rng(0).permutation(len(second))
    random_batches = [order[i : i + 16] for i in range(0, len(order), 16)]
    bucketed = _epoch(length_buckets(data, batch_size=16, drop_last=False), 0)
    assert padded(bucketed) < 0.75 * padded(random_batches)


def test_bf16_on_cpu_trains_with_eager_attention_and_restores_the_kernel(tiny_model):
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(tiny_model, device="cpu")
    inner = encoder[0].auto_model
    before = inner.config._attn_implementation
    with training_context(encoder, TrainConfig(precision="bf16")):
        assert inner.config._attn_implementation == "eager"
    assert inner.config._attn_implementation == before
    with training_context(encoder, TrainConfig()):
        assert inner.config._attn_implementation == before


@pytest.mark.parametrize("kind", ["cosinebert", "concatbert"])
def test_the_trainers_full_collections_skip_the_objects_alive_before(kind, tiny_model, monkeypatch):
    from pairlab.models.concatbert import ConcatBERT
    from pairlab.models.cosinebert import CosineBERT

    frozen, collect = [], gc.collect  # the frozen count at each collection during training
    monkeypatch.setattr(
        gc, "collect", lambda *a: frozen.append(gc.get_freeze_count()) or collect(*a)
    )
    model = {"cosinebert": CosineBERT, "concatbert": ConcatBERT}[kind]
    texts = [f"record {i}" for i in range(8)]
    model.train(texts, texts[::-1], [1, 0] * 4, model=tiny_model, config=TrainConfig(epochs=1))
    assert frozen and min(frozen) > 10_000  # accelerate's collection ran, the old objects frozen
    assert gc.get_freeze_count() == 0  # and given back to the collector afterwards


def test_the_collector_is_given_back_when_training_fails(tiny_model):
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(tiny_model, device="cpu")
    with pytest.raises(RuntimeError), training.training_context(encoder, TrainConfig()):
        assert gc.get_freeze_count() > 0
        raise RuntimeError("the training failed")
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize("native", [False, True])
def test_bf16_training_is_refused_on_a_cpu_without_native_bfloat16(native, monkeypatch):
    """Emulated bf16 (an AVX2 CPU) ran matmuls at 0.4 GFLOP/s against fp32's 37: a run would
    look hung. It is refused with the way out named; a CPU that has bf16 gets its arguments."""
    from sentence_transformers import SentenceTransformerTrainingArguments

    monkeypatch.setattr(training, "native_bf16", lambda: native)
    monkeypatch.setattr(training, "default_device", lambda: "cpu")
    config = TrainConfig(precision="bf16")
    if native:
        assert training_arguments(SentenceTransformerTrainingArguments, config).bf16
    else:
        with pytest.raises(RuntimeError, match="native bfloat16.*train_precision: fp32"):
            training_arguments(SentenceTransformerTrainingArguments, config)
    assert not training_arguments(SentenceTransformerTrainingArguments, TrainConfig()).bf16


@pytest.mark.slow
@pytest.mark.skipif(
    not native_bf16(),
    reason="this CPU has no native bfloat16: bf16 training is "
    "refused here (test_bf16_training_is_refused_on_a_cpu_without_native_bfloat16)",
)
def test_fast_training_keeps_test_ap_inside_the_reference_interval(data_dir, tmp_path):
    """Uncertainty sampling on small WikiQA pools (60 training questions, 2 rounds, 80 labels),
    once on the fp32 random-order reference path and once with length batches and bf16: the
    same labels in round 1 (the seed round does not train), and the fast run's test AP inside
    the reference's 95% interval. (At full scale the two paths are compared by the paper-cpu
    profile's uncertainty seed-0 runs, one of each, in results/paper-cpu/archive.)"""
    from pairlab.active.config import LoopSettings
    from pairlab.data.loaders import load_task
    from pairlab.evaluation import EvalConfig
    from pairlab.experiments.sweeps import pools_and_strata, sweep

    task = load_task("wikiqa", data_dir).resized({"train": 60, "dev": 30, "test": 40})
    prepared = {"wikiqa": pools_and_strata(task, EvalConfig(10, 2000, 0), max_seq_length=32)}
    base = dict(
        n1=32, rounds=2, growth=1.5, candidate_m=10, epochs=1, max_seq_length=32, n_boot=200
    )
    results = {}
    for name, speed in (("reference", {}), ("fast", dict(precision="bf16", batch_order="length"))):
        out = sweep(prepared, ["uncertainty"], [0], LoopSettings(**base, **speed), tmp_path / name)
        results[name] = out[("wikiqa", "uncertainty", 0)]
    reference, fast = results["reference"], results["fast"]
    assert reference["records"][0]["labels"] == fast["records"][0]["labels"] == 32
    low, high = reference["test"]["ap_ci"]
    assert low <= fast["test"]["ap"] <= high, (reference["test"], fast["test"])


def test_training_leaves_no_scratch_folder_behind():
    """Each training's output folder (the trainer writes nothing there) goes with its arguments:
    1,223 empty ``pairlab-train-*`` folders had piled up in /tmp on one machine."""
    import gc
    from pathlib import Path

    args = training_arguments(_Arguments, TrainConfig())
    folder = Path(args.output_dir)
    assert folder.is_dir() and folder.name.startswith("pairlab-train-")
    del args
    gc.collect()
    assert not folder.exists()
