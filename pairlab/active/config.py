"""One active-learning run's settings and its batch schedule (paper section 4: round i labels
n_i = n1 * growth^(i-1) pairs)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from fractions import Fraction

from ..models.training import TrainConfig, number
from .strategies import Strategy, make_strategy, positive

__all__ = ["ActiveConfig", "LoopSettings", "PerTask", "schedule"]


def schedule(n1: int, rounds: int, growth: float = 1.5) -> list[int]:
    """Batch sizes n_i = floor(n1 * growth^(i-1)), exact for ratios such as 3/2 (2048 and 10
    rounds give the paper's 232,100 labels; 4 rounds give WikiQA's 16,640)."""
    positive("n1", n1)
    positive("rounds", rounds)
    if not growth >= 1:
        raise ValueError(f"growth must be >= 1, got {growth!r}")
    ratio = Fraction(growth).limit_denominator(1000)
    return [int(n1 * ratio**i) for i in range(rounds)]


@dataclass(frozen=True)
class _LoopFields:
    """The fields of :class:`ActiveConfig` the runs of a sweep share (:class:`LoopSettings`)."""

    n1: int = 2048  # seed-set size
    rounds: int = 10  # k
    growth: float = 1.5
    batches: tuple | None = None  # explicit batch sizes (overrides n1, rounds, growth)
    seed_set: str = "static_retrieval"  # round 1 of adaptive strategies ("stated": the ablation)
    candidate_m: int = 100  # m: candidates per left item (D_close)
    index: str = "Flat"  # faiss index-factory string
    model: str | None = None  # None: the offline all-MiniLM-L6-v2
    encoder_layers: int | None = None  # keep the model's first n layers (None: all)
    epochs: float = 2.0
    learning_rate: float = 2e-5
    batch_size: int = 16
    max_seq_length: int = 128
    precision: str = "fp32"  # training arithmetic: "bf16" autocast is about 2x faster on CPU
    batch_order: str = "random"  # "length": training batches of similar length (less padding)
    n_boot: int = 1000  # bootstrap replicates for the per-round intervals
    curve: bool = True  # train and evaluate every round (False: non-adaptive ones train once)
    keep_model: bool = False  # keep the final model in the run folder
    annotator: dict | None = None  # who labels (pairlab.annotators spec); None: the pool's oracle


@dataclass(frozen=True, kw_only=True)
class ActiveConfig(_LoopFields):
    """One active-learning run: what is collected, how the model is trained and measured."""

    task: str
    strategy: str
    seed: int = 0
    strategy_params: dict = field(default_factory=dict)

    def __post_init__(self):
        self.make_strategy()  # fails early on a bad name or parameters
        # one form per number, so the same settings find the same run folder (epochs 1 and 1.0)
        own = {f.name: getattr(self, f.name) for f in fields(TrainConfig) if hasattr(self, f.name)}
        train = TrainConfig(**own)  # checks the training settings, and writes each number once
        for name in ("epochs", "learning_rate"):
            object.__setattr__(self, name, getattr(train, name))
        object.__setattr__(self, "growth", number("growth", self.growth))
        if self.encoder_layers is not None:
            positive("encoder_layers", self.encoder_layers, minimum=0)
        if self.seed_set not in ("static_retrieval", "stated"):
            raise ValueError(
                f"seed_set must be 'static_retrieval' or 'stated', got {self.seed_set!r}"
            )
        if self.batches is not None:
            object.__setattr__(self, "batches", tuple(int(b) for b in self.batches))
            if not self.batches or min(self.batches) < 1:
                raise ValueError(f"batches must be positive sizes, got {self.batches!r}")
        self.schedule()

    def make_strategy(self, name: str | None = None) -> Strategy:
        """The strategy ``name`` (default: this run's, with its parameters), its candidate search
        set to this config's ``candidate_m`` and faiss ``index``."""
        params = self.strategy_params if name is None else {}
        return make_strategy(
            name or self.strategy, candidate_m=self.candidate_m, index=self.index, **params
        )

    def schedule(self) -> list[int]:
        return list(self.batches) if self.batches else schedule(self.n1, self.rounds, self.growth)

    @property
    def budget(self) -> int:
        return sum(self.schedule())

    def to_dict(self) -> dict:
        """Every field: the run folder's ``config.json``, and what its key is a digest of."""
        return asdict(self)


class PerTask:
    """Settings shared by the runs of a sweep over tasks (a frozen dataclass): any field may be
    a per-task dict (``rounds={"qqp": 5, "wikiqa": 4}``), which :meth:`for_task` resolves."""

    def for_task(self, task: str) -> dict:
        """The fields for ``task``: each per-task dict that names ``task`` resolved to its value."""
        return {
            name: (value[task] if isinstance(value, dict) and task in value else value)
            for name, value in ((f, getattr(self, f)) for f in self.__dataclass_fields__)
        }

    @classmethod
    def from_params(cls, params: dict, **fields):
        """From an active-learning notebook's parameters: the model, its training
        (``cosine_epochs``) and the bootstrap replicates, and the subclass's own ``fields``."""
        same = ("model", "learning_rate", "batch_size", "max_seq_length", "n_boot")
        return cls(epochs=params["cosine_epochs"], **{k: params[k] for k in same}, **fields)


@dataclass(frozen=True)
class LoopSettings(PerTask, _LoopFields):
    """The :class:`ActiveConfig` fields the runs of a sweep share (all but the task, strategy,
    seed and strategy parameters), with the same defaults; any may be a per-task dict."""

    # not in a run's config or key: the rounds whose models the runs share through the cache,
    # "seed" or "all" (where two strategies pick the same batches, the second trains nothing)
    share_models: str = "seed"

    def __post_init__(self):
        if self.share_models not in ("seed", "all"):
            raise ValueError(f"share_models must be 'seed' or 'all', got {self.share_models!r}")

    @classmethod
    def from_params(cls, params: dict) -> LoopSettings:
        """From an active-learning notebook's parameters (``train_precision`` and
        ``train_batch_order`` default to the fp32 reference path where not declared)."""
        same = {k: params[k] for k in ("n1", "rounds", "growth", "candidate_m", "curve")}
        return super().from_params(
            params,
            **same,
            precision=params.get("train_precision", "fp32"),
            batch_order=params.get("train_batch_order", "random"),
            share_models=params.get("share_models", "seed"),
        )

    def config(self, task: str, strategy: str, seed: int = 0, **fields) -> ActiveConfig:
        """The run of ``strategy`` on ``task`` with ``seed``; ``fields`` (a variant's) win."""
        own = {**self.for_task(task), **fields}
        del own["share_models"]
        return ActiveConfig(task=task, strategy=strategy, seed=int(seed), **own)
