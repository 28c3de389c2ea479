"""Active learning at the query level (Althammer et al. 2023): a round picks *questions*, and
annotating one scans the current ranker's ranking to its first relevant item
(:mod:`pairlab.annotators.scan`). One small class per criterion behind one ``select`` method,
as the pair-level strategies (:mod:`.strategies`), and the run's settings (:class:`QueryConfig`).

- ``random``: uniform over the questions not annotated yet;
- ``uncertainty``: the questions holding the candidate whose score is closest to the mean score
  of every question's top-k candidates (section 5.1: the paper scores BM25's top 100);
- ``qbc``: committee members trained on random shares of the labels; the questions whose top-k
  candidates the members order most differently (vote entropy, section 5.2);
- ``diversity``: k-means of the questions' embeddings under the current ranker, k = the batch
  size, one random question per cluster (section 5.3).

Round 1 is the same random questions for every strategy of a seed (the paper's rule: a committee
needs labels to start from), so the loop asks :class:`RandomQuestions` for it.
"""

from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass

import numpy as np

from ..data.tasks import Pool
from ..evaluation.ranking import top_items
from ..models.training import number
from ..params import Configurable
from .committee import check_committee, ordering_vote_entropy
from .config import PerTask
from .diversity import kmeans_pick

__all__ = [
    "QueryState",
    "QueryStrategy",
    "RandomQuestions",
    "UncertainQuestions",
    "CommitteeQuestions",
    "DiverseQuestions",
    "QUERY_STRATEGIES",
    "QueryConfig",
    "QuerySettings",
]


@dataclass(frozen=True, eq=False)
class QueryState:
    """What a query-level strategy may look at when choosing round ``round``'s questions: plain
    data, as :class:`~.base.RoundState` for pairs."""

    round: int  # 1-based
    pool: Pool  # the training split: its left items are the questions
    questions: np.ndarray  # (n_free,) int64 sorted: free questions with a relevant item
    labelled: np.ndarray  # (n_labelled,) int64 sorted pair ids scanned in earlier rounds
    labels: np.ndarray  # (n_labelled,) int8 their labels
    rng: np.random.Generator  # seeded by the run's seed and the round
    model: object = None  # the ranker trained so far; None: the pretrained encoder
    embeddings: tuple | None = None  # (left, right) float32 item embeddings under ``model``
    member_scores: np.ndarray | None = None  # (members, n_free, top_k) a committee's, if read


class QueryStrategy(Configurable):
    """Chooses ``n`` questions; subclasses set ``name`` and implement ``select``. ``reads``:
    ``("member_scores",)`` for a committee, whose members the loop trains."""

    name = "query_strategy"
    reads: tuple = ()

    def select(self, state: QueryState, n: int) -> np.ndarray:
        """(n,) int64 sorted question indices, distinct, all from ``state.questions``."""
        raise NotImplementedError


class RandomQuestions(QueryStrategy):
    """Uniform over the questions not annotated yet."""

    name = "random"

    def select(self, state, n):
        _check_room(state, n)
        return np.sort(state.rng.choice(state.questions, size=n, replace=False)).astype(np.int64)


class UncertainQuestions(QueryStrategy):
    """The questions whose most uncertain top-k candidate is closest to the mean score of all
    the questions' top-k candidates (the paper's uncertainty: no decision boundary for a ranker,
    so the middle of the score distribution stands for it)."""

    name = "uncertainty"

    def __init__(self, top_k: int = 20):
        self.top_k = _positive("top_k", top_k)

    def params(self):
        return {"top_k": self.top_k}

    def select(self, state, n):
        _check_room(state, n)
        left, right = state.embeddings
        items = top_items(state.pool, left, right, state.questions, self.top_k)
        scores = np.einsum("qd,qkd->qk", left[state.questions], right[items]).astype(np.float64)
        closest = np.abs(scores - scores.mean()).min(axis=1)  # (n_free,)
        return _smallest(state.questions, closest, n)


class CommitteeQuestions(QueryStrategy):
    """``members`` rankers, each trained on its own random ``share`` of the labelled pairs,
    re-rank every question's top-k candidates under the current ranker; the questions with the
    highest vote entropy over those orderings (Cai et al. 2011's committee, 2 members on 80%)."""

    name = "qbc"
    reads = ("member_scores",)

    def __init__(self, top_k: int = 20, members: int = 2, share: float = 0.8):
        self.top_k = _positive("top_k", top_k)
        self.members, self.share = check_committee(members, share)

    def params(self):
        return {"top_k": self.top_k, "members": self.members, "share": self.share}

    def select(self, state, n):
        _check_room(state, n)
        if state.member_scores is None:
            raise ValueError(
                f"round {state.round}: a committee reads QueryState.member_scores, which the "
                "loop fills for a strategy whose `reads` names it"
            )
        return _smallest(state.questions, -ordering_vote_entropy(state.member_scores), n)


class DiverseQuestions(QueryStrategy):
    """k-means of the free questions' embeddings under the current ranker, k = ``n``, one
    random question per cluster (faiss' k-means)."""

    name = "diversity"

    def select(self, state, n):
        _check_room(state, n)
        left, _ = state.embeddings
        return state.questions[kmeans_pick(left[state.questions], n, state.rng)]


QUERY_STRATEGIES = {
    cls.name: cls
    for cls in (RandomQuestions, UncertainQuestions, CommitteeQuestions, DiverseQuestions)
}


def _check_room(state: QueryState, n: int) -> None:
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"a round annotates a positive number of questions, got {n!r}")
    if n > len(state.questions):
        raise ValueError(
            f"round {state.round}: only {len(state.questions)} questions with a "
            f"relevant item are left to annotate, not {n}: lower the batches"
        )


def _smallest(questions: np.ndarray, key: np.ndarray, n: int) -> np.ndarray:
    """The ``n`` questions of smallest ``key`` (ties: the lower index), sorted."""
    if np.isnan(key).any():
        raise ValueError(f"{int(np.isnan(key).sum())} question scores are NaN")
    return np.sort(questions[np.lexsort((questions, key))[:n]]).astype(np.int64)


def _positive(name: str, value) -> int:
    if not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class QuerySettings(PerTask):
    """The :class:`QueryConfig` fields the runs of notebook 08's sweep share (all but the task,
    strategy and seed), with the same defaults; any may be a per-task dict."""

    batches: tuple | dict = (20, 20, 20, 20, 20)
    top_k: int | dict = 20
    members: int | dict = 2
    share: float | dict = 0.8
    model: str | None = None
    epochs: float | dict = 2.0
    learning_rate: float | dict = 2e-5
    batch_size: int | dict = 16
    max_seq_length: int | dict = 128
    eval_k: int | dict = 10
    n_boot: int | dict = 1000

    def config(self, task: str, strategy: str, seed: int = 0) -> QueryConfig:
        """The run of ``strategy`` on ``task`` with ``seed``."""
        return QueryConfig(task=task, strategy=strategy, seed=int(seed), **self.for_task(task))


@dataclass(frozen=True)
class QueryConfig:
    """One query-level run: the questions annotated per round, how the ranker (CosineBERT) is
    trained each round, and how it is measured. Its digest names the run folder."""

    task: str
    strategy: str
    seed: int = 0
    batches: tuple = (20, 20, 20, 20, 20)  # questions annotated in each round
    top_k: int = 20  # candidates per question for uncertainty and the committee (paper: 100)
    members: int = 2  # committee size (paper: 2)
    share: float = 0.8  # each member's share of the labelled pairs (paper: 80%)
    model: str | None = None  # None: the offline all-MiniLM-L6-v2
    epochs: float = 2.0
    learning_rate: float = 2e-5
    batch_size: int = 16
    max_seq_length: int = 128
    eval_k: int = 10  # nDCG@k and MRR@k
    n_boot: int = 1000  # bootstrap replicates of the all-pairs AP interval

    @property
    def encoder_layers(self) -> None:
        """Query runs train the whole model (no cut encoder, notebook 09's depth): the learner
        and the run folder read it as :class:`ActiveConfig`'s; not a field, so not in the digest."""
        return None

    def __post_init__(self):
        if self.strategy not in QUERY_STRATEGIES:
            raise ValueError(
                f"unknown query strategy {self.strategy!r}; known: {sorted(QUERY_STRATEGIES)}"
            )
        batches = tuple(int(b) for b in self.batches) if self.batches else ()
        if not batches or min(batches) < 1:
            raise ValueError(f"batches must be positive numbers of questions, got {self.batches!r}")
        object.__setattr__(self, "batches", batches)
        object.__setattr__(self, "epochs", number("epochs", self.epochs, whole=True))
        for name in ("learning_rate", "share"):
            object.__setattr__(self, name, number(name, getattr(self, name)))
        for name in ("epochs", "learning_rate", "batch_size", "eval_k", "n_boot"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")
        self.make_strategy()  # fails early on bad top_k, members or share

    def make_strategy(self, name: str | None = None) -> QueryStrategy:
        """The strategy ``name`` (default: this run's) with this config's parameters."""
        cls = QUERY_STRATEGIES[name or self.strategy]
        accepted = inspect.signature(cls).parameters
        return cls(**{k: getattr(self, k) for k in ("top_k", "members", "share") if k in accepted})

    def schedule(self) -> list[int]:
        return list(self.batches)

    @property
    def budget(self) -> int:
        """Questions annotated over the whole run."""
        return sum(self.batches)

    def to_dict(self) -> dict:
        return asdict(self)
