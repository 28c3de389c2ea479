"""Training configuration shared by ConcatBERT and CosineBERT, and the data they train on."""

from __future__ import annotations

import gc
import io
import shutil
import tempfile
import weakref
from contextlib import contextmanager, nullcontext, redirect_stderr
from dataclasses import asdict, dataclass

import numpy as np

from ..progress import Progress, listened

__all__ = [
    "TrainConfig",
    "number",
    "pair_dataset",
    "training_arguments",
    "default_device",
    "disable_dropout",
    "quiet_progress",
    "length_buckets",
    "native_bf16",
    "training_context",
    "trainer",
]

PRECISIONS = ("fp32", "bf16")  # bf16: autocast in training (weights and optimiser stay fp32)
BATCH_ORDERS = ("random", "length")  # length: shuffled batches of pairs of similar length
WINDOW = 64  # batches per window whose pairs are sorted by length


def number(name: str, value, *, whole: bool = False):
    """``value`` as a plain float, or with ``whole`` as an int where it is whole (``2.0 -> 2``),
    so that equal settings give equal config digests; anything else is a ``TypeError``."""
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
    # Speed settings, off by default: each changes the arithmetic or the order of the updates
    precision: str = "fp32"  # "bf16": bfloat16 autocast (2x the matmul rate with avx512_bf16)
    batch_order: str = "random"  # "length": batches of similar length (less padding)

    def __post_init__(self):
        for name in ("learning_rate", "adam_epsilon", "weight_decay", "warmup_ratio"):
            object.__setattr__(self, name, number(name, getattr(self, name)))
        object.__setattr__(self, "epochs", number("epochs", self.epochs, whole=True))
        for name in ("learning_rate", "epochs", "batch_size"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")
        if self.max_seq_length < 8:
            raise ValueError(f"max_seq_length must be >= 8, got {self.max_seq_length}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
        if self.batch_order not in BATCH_ORDERS:
            raise ValueError(f"batch_order must be one of {BATCH_ORDERS}, got {self.batch_order!r}")

    def to_dict(self) -> dict:
        """The fields, without the speed settings at their defaults (older digests hold)."""
        speed_defaults = {"precision": "fp32", "batch_order": "random"}
        return {k: v for k, v in asdict(self).items() if speed_defaults.get(k) != v}


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


def training_arguments(args_cls, config: TrainConfig, **extra):
    """sentence-transformers training arguments from ``config`` (no checkpoints, no logging
    services); bf16 on a CPU without native bfloat16 (emulated, tens of times slower) is refused."""
    import torch

    if config.precision == "bf16" and default_device() == "cpu" and not native_bf16():
        raise RuntimeError(
            "precision 'bf16' needs a CPU with native bfloat16 arithmetic (AVX-512 BF16 or AMX); "
            f"this one has {torch.backends.cpu.get_cpu_capability()}, where bf16 autocast is "
            "emulated and its matmuls run tens of times slower than fp32. Train in fp32 (a "
            "profile's train_precision: fp32), or on a CPU that has it."
        )
    if config.batch_order == "length":
        # the run's own seed: sentence-transformers 6.0.1 passes every batch sampler seed 0
        extra.setdefault(
            "batch_sampler", lambda data, **kw: length_buckets(data, **{**kw, "seed": config.seed})
        )
    scratch = tempfile.mkdtemp(prefix="pairlab-train-")  # the trainer writes nothing there
    args = args_cls(
        output_dir=scratch,
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
    weakref.finalize(args, shutil.rmtree, scratch, True)  # it goes with the arguments
    return args


def length_buckets(
    dataset, *, batch_size: int, drop_last: bool, generator=None, seed: int = 0, **_
):
    """The batch sampler of ``batch_order="length"``: each epoch shuffles the pairs (seeded),
    cuts them into windows of ``WINDOW`` batches, sorts each window by the texts' lengths
    (second column, then first) and shuffles the batches; every pair is seen once an epoch."""
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
def training_context(model, config: TrainConfig):
    """Train ``model`` with the objects alive now frozen out of ``Trainer.train``'s full
    ``gc.collect()`` (in a notebook kernel ~500,000 objects: 0.25-0.4 s a training), and with
    eager attention where ``config`` is bf16 on CPU (the fused kernel's bf16 backward is slower
    than fp32 there), restoring the model's own kernel afterwards."""
    from transformers import PreTrainedModel

    inner = []
    if config.precision == "bf16" and default_device() == "cpu":
        inner = [m for m in model.modules() if isinstance(m, PreTrainedModel)]
        inner = [m for m in inner if not any(m is not o and m in set(o.modules()) for o in inner)]
    was = [m.config._attn_implementation for m in inner]
    for m in inner:
        m.set_attn_implementation("eager")
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        for m, name in zip(inner, was):
            m.set_attn_implementation(name)


def native_bf16() -> bool:
    """Whether this CPU does bfloat16 arithmetic natively (oneDNN's check: AVX-512 BF16 or AMX)."""
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
    """Silence the progress bars of transformers, datasets and the hub inside the block."""
    import datasets
    import huggingface_hub.utils as hub
    from transformers.utils import logging as hf

    was_on = (
        hf.is_progress_bar_enabled(),
        datasets.is_progress_bar_enabled(),
        not hub.are_progress_bars_disabled(),
    )
    for off in (hf.disable_progress_bar, datasets.disable_progress_bars, hub.disable_progress_bars):
        off()
    try:
        yield
    finally:
        ons = (hf.enable_progress_bar, datasets.enable_progress_bars, hub.enable_progress_bars)
        for on, was in zip(ons, was_on):
            if was:
                on()


def trainer(model, loss, dataset, config: TrainConfig, *, quiet: bool = False, **arguments):
    """sentence-transformers' trainer (its cross-encoder one for a ``CrossEncoder``) with
    ``config``'s arguments; ``quiet`` drops the progress bars (the loop has its own events)."""
    import sentence_transformers as st

    ce = isinstance(model, st.CrossEncoder)
    trainer_cls = st.CrossEncoderTrainer if ce else st.SentenceTransformerTrainer
    args_cls = st.CrossEncoderTrainingArguments if ce else st.SentenceTransformerTrainingArguments
    args = training_arguments(args_cls, config, **arguments)
    # the model-card callback draws a bar while it picks widget examples at construction
    with redirect_stderr(io.StringIO()) if quiet else nullcontext():
        built = trainer_cls(model=model, args=args, train_dataset=dataset, loss=loss)
    bars = ("ProgressCallback", "NotebookProgressCallback")  # the terminal's and the notebook's
    for callback in list(built.callback_handler.callbacks) if quiet else []:
        if type(callback).__name__ in bars:
            built.remove_callback(callback)
    if listened():  # the steps counted for whoever listens (a session's widget, a kernel's log)
        built.add_callback(_steps())
    return built


def _steps():
    """A trainer callback counting the training steps in a :class:`~pairlab.progress.Progress`."""
    from transformers import TrainerCallback

    class Steps(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            self.done = Progress(state.max_steps, "training steps")

        def on_step_end(self, args, state, control, **kwargs):
            self.done.advance()

        def on_train_end(self, args, state, control, **kwargs):
            self.done.__exit__()

    return Steps()
