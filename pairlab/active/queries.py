"""Active learning at the query level (Althammer et al. 2023, Algorithm 1): a round picks
*questions* (round 1: random ones), annotating one scans the current ranker's ranking to its
first relevant item (:mod:`pairlab.annotators.scan`), and CosineBERT is retrained on every pair
labelled so far. The question strategies (section 5), their settings and the loop.
"""

from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass, replace

import numpy as np

from ..annotators.scan import scan_to_first_relevant
from ..data.pairs import isin_sorted, setdiff_sorted, union_sorted
from ..data.tasks import Pool
from ..evaluation.ranking import answerable, rank_metrics, top_items
from ..evaluation.strata import EvalSet, evaluate
from ..models.scoring import CosineScorer
from ..models.training import default_device, number
from ..params import Configurable
from . import store
from .committee import check_committee, member_scores, ordering_vote_entropy
from .config import PerTask
from .loop import RunFolderRun, Stages
from .strategies import filled, kmeans_pick, positive, smallest

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
    "QueryRun",
    "COST_STAGES",
    "ranking_record",
]

COST_STAGES = ("embed", "select", "annotate", "train")  # what collecting the data costs


@dataclass(frozen=True, eq=False)
class QueryState:
    """What a question strategy may look at in round ``round`` (as RoundState for pairs)."""

    round: int  # 1-based
    pool: Pool  # the training split: its left items are the questions
    questions: np.ndarray  # (n_free,) int64 sorted: free questions with a relevant item
    labelled: np.ndarray  # (n_labelled,) int64 sorted pair ids scanned in earlier rounds
    labels: np.ndarray  # (n_labelled,) int8 their labels
    rng: np.random.Generator  # seeded by the run's seed and the round
    embeddings: tuple | None = None  # (left, right) float32 item embeddings, the current ranker
    member_scores: np.ndarray | None = None  # (members, n_free, top_k) a committee's, if read


class QueryStrategy(Configurable):
    """Chooses ``n`` questions; subclasses set ``name`` and implement ``select``. ``reads``:
    ``("member_scores",)`` for a committee, whose members the loop trains."""

    name = "query_strategy"
    adaptive = True  # every round's ranker is trained, and the next round reads it
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
    top-k candidates (a ranker has no decision boundary: the middle of the scores stands in)."""

    name = "uncertainty"

    def __init__(self, top_k: int = 20):
        self.top_k = positive("top_k", top_k)

    def select(self, state, n):
        _check_room(state, n)
        left, right = state.embeddings
        items = top_items(state.pool, left, right, state.questions, self.top_k)
        scores = np.einsum("qd,qkd->qk", left[state.questions], right[items]).astype(np.float64)
        closest = np.abs(scores - scores.mean()).min(axis=1)  # (n_free,)
        return smallest(state.questions, n, closest)


class CommitteeQuestions(QueryStrategy):
    """``members`` rankers, each trained on its own random ``share`` of the labelled pairs,
    re-rank every question's top-k candidates under the current ranker; the questions with the
    highest vote entropy over those orderings (Cai et al. 2011: 2 members on 80%)."""

    name = "qbc"
    reads = ("member_scores",)

    def __init__(self, top_k: int = 20, members: int = 2, share: float = 0.8):
        self.top_k = positive("top_k", top_k)
        self.members, self.share = check_committee(members, share)

    def select(self, state, n):
        _check_room(state, n)
        entropy = ordering_vote_entropy(filled(state, "member_scores"))
        return smallest(state.questions, n, -entropy)


class DiverseQuestions(QueryStrategy):
    """k-means of the free questions' embeddings, k = ``n``, one random question per cluster."""

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
    positive("a round's number of questions", n)
    if n > len(state.questions):
        raise ValueError(
            f"round {state.round}: only {len(state.questions)} questions with a "
            f"relevant item are left to annotate, not {n}: lower the batches"
        )


@dataclass(frozen=True)
class QuerySettings(PerTask):
    """The fields of :class:`QueryConfig` the runs of notebook 08's sweep share (all but the task,
    strategy and seed); any may be a per-task dict."""

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

    def config(self, task: str, strategy: str, seed: int = 0) -> QueryConfig:
        """The run of ``strategy`` on ``task`` with ``seed``."""
        return QueryConfig(task=task, strategy=strategy, seed=int(seed), **self.for_task(task))


@dataclass(frozen=True, kw_only=True)
class QueryConfig(QuerySettings):
    """One query-level run: the questions annotated per round, how the ranker (CosineBERT) is
    trained each round, and how it is measured. Its digest names the run folder."""

    task: str
    strategy: str
    seed: int = 0
    encoder_layers = None  # the whole model (a class attribute: not in the digest)

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

    def make_strategy(self) -> QueryStrategy:
        """This run's strategy, with this config's parameters."""
        cls = QUERY_STRATEGIES[self.strategy]
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


class QueryRun(RunFolderRun):
    """One query-level run of ``config`` on ``pools`` (``train``, ``test``), measured on the
    test split's rankings and its all-pairs strata ``eval_set``."""

    def __init__(
        self, config: QueryConfig, pools, eval_set: EvalSet, folder, *, learner=None, callbacks=()
    ):
        if not {"train", "test"} <= set(pools):
            raise ValueError(
                f"a query-level run needs the 'train' and 'test' pools, got {sorted(pools)}"
            )
        super().__init__(config, pools, folder, learner=learner, callbacks=callbacks)
        self.eval_set, self.questions = eval_set, answerable(self.pool)
        if config.budget > len(self.questions):
            raise ValueError(
                f"{config.task}/train has {len(self.questions)} questions with a "
                f"relevant item, fewer than the {config.budget} the batches "
                f"{config.schedule()} annotate: lower them or keep more questions"
            )

    def _round(self, i: int, n: int, model, ids, labels, records):
        done = union_sorted(*[np.asarray(r["questions"], np.int64) for r in records])
        stages = Stages(self._emit, i)
        with stages("embed"):
            left, right = self._embeddings(model)
        state = QueryState(
            round=i,
            pool=self.pool,
            questions=setdiff_sorted(self.questions, done),
            labelled=ids,
            labels=labels,
            rng=np.random.default_rng([self.config.seed, i]),
            embeddings=(left, right),
        )
        strategy = self.strategy if i > 1 else RandomQuestions()  # round 1: the same questions
        if "member_scores" in strategy.reads:
            state = replace(state, member_scores=self._committee(strategy, state, stages))
        with stages("select"):
            picked = np.asarray(strategy.select(state, n), dtype=np.int64)
            _check_picked(state, picked, n, strategy)
        with stages("annotate"):
            scan = scan_to_first_relevant(self.pool, left, right, picked)
        batch, first = np.unique(scan.pair_ids, return_index=True)  # a pair scanned twice: once
        fresh = ~isin_sorted(batch, ids)
        batch, batch_labels = batch[fresh], scan.labels[first][fresh]
        store.save_batch(
            self.folder, i, batch, batch_labels, questions=picked, assessments=scan.assessments
        )
        all_ids, all_labels, _ = store.append_batch(ids, labels, None, batch, batch_labels, i)
        with stages("train"):
            model = self.learner.train(self.pool, all_ids, all_labels, round=i)
        with stages("evaluate"):
            test = self._evaluate(model)
        if i < len(self.config.schedule()):  # the next round (or a resumed run) selects with it
            self._save_model(model, i)
        record = {
            "round": i,
            "strategy": strategy.name,
            "questions": picked.tolist(),
            "assessments": scan.assessments.tolist(),
            "n_questions": int(len(done) + n),
            "labels": int(len(all_ids)),
            "positives_found": int(all_labels.sum()),
            "test": test,
            "seconds": stages.times,
            "device": default_device(),
        }
        return model, record, batch, batch_labels

    def _committee(self, strategy, state: QueryState, stages) -> np.ndarray:
        """(members, n_free, top_k) float64: each member's scores of every free question's top-k
        candidates (under the current ranker)."""
        items = top_items(self.pool, *state.embeddings, state.questions, strategy.top_k)
        with stages("train"):
            members = self._members(state, strategy)
        unique, where = np.unique(items, return_inverse=True)  # embed only the texts scored
        rows = np.broadcast_to(np.arange(len(items))[:, None], items.shape)
        cols = where.reshape(items.shape)  # (n_free, top_k) rows of the embedded candidates
        scores = []
        for member in members:
            questions = self.learner.embed(member, self.pool.left_texts[state.questions])
            candidates = self.learner.embed(member, self.pool.right_texts[unique])
            scores.append(member_scores(member, questions, candidates, rows, cols))
        return np.stack(scores)

    def _evaluate(self, model) -> dict:
        left, right = self._embed(model, self.pools["test"])
        c = self.config
        return ranking_record(
            self.pools["test"], self.eval_set, left, right, k=c.eval_k, n_boot=c.n_boot, seed=c.seed
        )

    def _finish(self, model, records, ids, labels) -> dict:
        return {
            "questions": int(sum(len(r["questions"]) for r in records)),
            "assessments": int(sum(sum(r["assessments"]) for r in records)),
            "test": {k: v for k, v in records[-1]["test"].items() if k != "per_query"},
        }


def ranking_record(test: Pool, eval_set: EvalSet, left, right, *, k: int, n_boot: int, seed: int):
    """A ranker's test record from its item embeddings of ``test``: nDCG@k and MRR@k per
    question and their means, and the all-pairs AP on ``eval_set`` with its interval."""
    ranks = rank_metrics(test, left, right, k=k)
    ap = evaluate(eval_set, CosineScorer(test.space, left, right), n_boot=n_boot, seed=seed)
    return {
        "ndcg": ranks["ndcg_mean"],
        "mrr": ranks["mrr_mean"],
        "ap": ap["ap"],
        "ap_ci": ap["ap_ci"],
        "per_query": {k: ranks[k].tolist() for k in ("questions", "ndcg", "mrr")},
    }


def _check_picked(state: QueryState, picked: np.ndarray, n: int, strategy) -> None:
    """The loop's invariant: ``n`` distinct questions, each still free to annotate."""
    where = f"query strategy {strategy.name!r}"
    if picked.shape != (n,) or len(np.unique(picked)) != n:
        raise RuntimeError(f"{where} returned {picked.shape} questions, not {n} distinct ones")
    if not isin_sorted(picked, state.questions).all():
        raise RuntimeError(
            f"{where} returned a question already annotated or without a relevant item"
        )
