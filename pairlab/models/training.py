"""Training configuration shared by ConcatBERT and CosineBERT, and the data they train on."""

from __future__ import annotations

import atexit
import gc
import shutil
import tempfile
import weakref
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np

__all__ = [
    "TrainConfig",
    "number",
    "pair_dataset",
    "training_arguments",
    "default_device",
    "disable_dropout",
    "quiet_progress",
    "length_buckets",
    "seeded",
    "native_bf16",
    "collector_frozen",
    "PRECISIONS",
    "BATCH_ORDERS",
]

PRECISIONS = (
    "fp32",
    "bf16",
)  # bf16: autocast in training (the weights and the optimiser stay fp32)
BATCH_ORDERS = ("random", "length")  # length: shuffled batches of pairs of similar length


def number(name: str, value, *, whole: bool = False):
    """``value`` as a plain float, or with ``whole`` as an int where it is a whole number
    (``2.0 -> 2``), so that equal settings give equal config digests (``epochs=1`` and
    ``epochs=1.0``) while the types the profiles write today keep their digests. Anything but a
    number is a ``TypeError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        hint = " (YAML reads 1e-5 as text: write 1.0e-5)" if isinstance(value, str) else ""
        raise TypeError(f"{name} must be a number, got {value!r}{hint}")
    value = float(value)
    return int(value) if whole and value.is_integer() else value


@dataclass(frozen=True)
class TrainConfig:
    """Hyperparameters of the paper (Table 7) as defaults."""

    learning_rate: float = 2e-5
    epochs: float = 2.0
    batch_size: int = 16
    adam_epsilon: float = 1e-6
    weight_decay: float = 0.0
    warmup_ratio: float = 0.1  # linear warm-up over the first 10% of steps, as the original code
    max_seq_length: int = 128  # word pieces
    seed: int = 0
    # Speed settings, off by default (the reference path): each changes the arithmetic or the
    # order of the updates, so the trained model, not only its speed (their own digests).
    precision: str = (
        "fp32"  # "bf16": bfloat16 autocast (2x the matmul rate on CPUs with avx512_bf16)
    )
    batch_order: str = "random"  # "length": batches of similar length (less padding)

    def __post_init__(self):
        for name in ("learning_rate", "adam_epsilon", "weight_decay", "warmup_ratio"):
            object.__setattr__(self, name, number(name, getattr(self, name)))
        object.__setattr__(self, "epochs", number("epochs", self.epochs, whole=True))
        if self.learning_rate <= 0 or self.epochs <= 0 or self.batch_size < 1:
            raise ValueError(f"learning_rate, epochs and batch_size must be positive: {self}")
        if self.max_seq_length < 8:
            raise ValueError(f"max_seq_length must be >= 8, got {self.max_seq_length}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
        if self.batch_order not in BATCH_ORDERS:
            raise ValueError(f"batch_order must be one of {BATCH_ORDERS}, got {self.batch_order!r}")

    def to_dict(self) -> dict:
        """The fields, without the speed settings at their defaults (so models trained before
        they existed keep their digests)."""
        out = asdict(self)
        for name, default in (("precision", "fp32"), ("batch_order", "random")):
            if out[name] == default:
                del out[name]
        return out


def pair_dataset(left_texts, right_texts, labels):
    """A ``datasets.Dataset`` with columns ``sentence1, sentence2, label`` (float 0/1)."""
    from datasets import Dataset

    left, right = [str(t) for t in left_texts], [str(t) for t in right_texts]
    y = np.asarray(labels)
    if not (len(left) == len(right) == len(y)):
        raise ValueError(
            f"{len(left)} left texts, {len(right)} right texts and {len(y)} labels "
            "must be equally many"
        )
    if len(y) == 0:
        raise ValueError("no labelled pairs to train on")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    return Dataset.from_dict(
        {"sentence1": left, "sentence2": right, "label": y.astype(np.float32).tolist()}
    )


def training_arguments(args_cls, config: TrainConfig, *, output_dir: str | None = None, **extra):
    """sentence-transformers training arguments from ``config`` (no checkpoints, no logging
    services, progress bar on). bf16 on a CPU without native bfloat16 arithmetic is refused
    (:func:`native_bf16`)."""
    import torch

    if config.precision == "bf16" and default_device() == "cpu" and not native_bf16():
        raise RuntimeError(
            "precision 'bf16' needs a CPU with native bfloat16 arithmetic (AVX-512 BF16 or AMX); "
            f"this one has {torch.backends.cpu.get_cpu_capability()}, where bf16 autocast is "
            "emulated and its matmuls run tens of times slower than fp32 (an AVX2 EPYC: 0.4 "
            "against 37 GFLOP/s). Train in fp32, the reference path (a profile's "
            "train_precision: fp32), or on a CPU that has it."
        )
    if config.batch_order == "length":
        extra.setdefault("batch_sampler", seeded(length_buckets, config.seed))
    scratch = None if output_dir else tempfile.mkdtemp(prefix="pairlab-train-")
    args = args_cls(
        output_dir=output_dir or scratch,
        bf16=config.precision == "bf16",
        num_train_epochs=config.epochs,
        per_device_train_batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        adam_epsilon=config.adam_epsilon,
        weight_decay=config.weight_decay,
        warmup_steps=config.warmup_ratio,  # float: a ratio
        lr_scheduler_type="linear",
        seed=config.seed,
        data_seed=config.seed,
        save_strategy="no",
        report_to="none",
        logging_steps=50,
        use_cpu=not torch.cuda.is_available(),
        dataloader_drop_last=False,
        **extra,
    )
    if scratch is not None:  # the trainer writes nothing there (no checkpoints): gone with it
        try:
            weakref.finalize(args, shutil.rmtree, scratch, True)
        except TypeError:  # arguments that take no weak reference: at exit
            atexit.register(shutil.rmtree, scratch, True)
    return args


WINDOW = 64  # batches per window whose pairs are sorted by length


def seeded(sampler, seed: int):
    """``sampler`` (a sentence-transformers batch sampler factory) with ``seed``, whatever seed
    the library passes it: sentence-transformers 6.0.1 passes 0 for every run (6.2 passes the
    training seed), which made every seed of a run train on the same batches in the same order
    (found on a GPU machine with 6.0.1: the three seeds of a WikiQA run were one run)."""

    def with_seed(dataset, **kwargs):
        return sampler(dataset, **{**kwargs, "seed": seed})

    return with_seed


def length_buckets(
    dataset, *, batch_size: int, drop_last: bool, generator=None, seed: int = 0, **_
):
    """sentence-transformers' batch sampler for ``batch_order="length"``: each epoch shuffles the
    pairs (seeded), cuts them into windows of ``WINDOW`` batches, sorts each window by the
    lengths of its texts (second, then first column: each is padded to its longest in the
    batch) and shuffles the batches. Every pair is seen once an epoch, as with random order,
    and a batch is padded to far fewer word pieces (WikiQA: questions of ~10, sentences of ~33)."""
    from sentence_transformers.base.sampler import DefaultBatchSampler

    class LengthBuckets(DefaultBatchSampler):
        def __init__(self):
            super().__init__(
                range(len(dataset)),
                batch_size=batch_size,
                drop_last=drop_last,
                generator=generator,
                seed=seed,
            )
            first, second = (
                np.fromiter(map(len, dataset[c]), np.int64, len(dataset))
                for c in dataset.column_names[:2]
            )
            self.key = second * (int(first.max(initial=0)) + 1) + first  # second, then first

        def __iter__(self):
            rng = np.random.default_rng([self.seed, self.epoch])
            order = rng.permutation(len(self.key))
            batches = []
            for start in range(0, len(order), WINDOW * batch_size):
                window = order[start : start + WINDOW * batch_size]
                window = window[np.argsort(self.key[window], kind="stable")]
                batches += [window[i : i + batch_size] for i in range(0, len(window), batch_size)]
            if drop_last and batches and len(batches[-1]) < batch_size:
                batches = [b for b in batches if len(b) == batch_size]
            for i in rng.permutation(len(batches)):
                yield batches[i].tolist()

    return LengthBuckets()


@contextmanager
def collector_frozen():
    """Train with the objects alive now out of the cyclic garbage collector's passes
    (``gc.freeze``), put back afterwards (``gc.unfreeze``). transformers' ``Trainer.train``
    starts with accelerate's ``free_memory``, a full ``gc.collect()``, which in a notebook kernel
    walks every live object (about 500,000 once pandas, plotly and torch are loaded): 0.25-0.4 s
    a training, a fifth of a training at the smoke profile's sizes. What the training creates is
    still collected; reference counting frees the rest as always; the objects frozen here are
    collected as usual again once it ends, error or not."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextmanager
def training_attention(model, config: TrainConfig):
    """Train ``model`` (a SentenceTransformer or CrossEncoder) with the attention kernel that is
    fast for ``config``'s arithmetic, restoring the model's own afterwards: bf16 on CPU trains with
    eager attention, because the CPU's fused-attention backward in bf16 is slower than fp32
    (1,024 WikiQA pairs, MiniLM, batch 16, 2 threads: fp32 26 pairs/s, bf16 with the fused kernel
    41, bf16 eager 55). fp32 and GPU training keep the model's kernel."""
    from transformers import PreTrainedModel

    if config.precision != "bf16" or default_device() != "cpu":
        yield
        return
    inner = [m for m in model.modules() if isinstance(m, PreTrainedModel)]
    inner = [m for m in inner if not any(m is not o and m in set(o.modules()) for o in inner)]
    was = [m.config._attn_implementation for m in inner]
    for m in inner:
        m.set_attn_implementation("eager")
    try:
        yield
    finally:
        for m, name in zip(inner, was):
            m.set_attn_implementation(name)


def native_bf16() -> bool:
    """Whether this CPU does bfloat16 arithmetic natively (oneDNN's check: AVX-512 BF16 or AMX),
    the condition for ``precision="bf16"`` to train faster than fp32 on it."""
    import torch

    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def disable_dropout(module) -> None:
    """Set every dropout probability to 0 (dropout lowers cosines at training time only)."""
    import torch

    for layer in module.modules():
        if isinstance(layer, torch.nn.Dropout):
            layer.p = 0.0


@contextmanager
def quiet_progress():
    """Silence the progress bars of transformers (loading, saving weights), datasets and the
    hub inside the block, restoring them after: a loop that trains dozens of models reports
    through its own events instead."""
    import datasets
    import huggingface_hub.utils as hub
    from transformers.utils import logging as hf_logging

    was = (
        hf_logging.is_progress_bar_enabled(),
        datasets.is_progress_bar_enabled(),
        hub.are_progress_bars_disabled(),
    )
    hf_logging.disable_progress_bar()
    datasets.disable_progress_bars()
    hub.disable_progress_bars()
    try:
        yield
    finally:
        if was[0]:
            hf_logging.enable_progress_bar()
        if was[1]:
            datasets.enable_progress_bars()
        if not was[2]:
            hub.enable_progress_bars()
