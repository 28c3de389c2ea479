"""Which pairs to label next: one small class per criterion whose ``select`` reads a
:class:`RoundState` and returns pair ids. :class:`CandidateSearch` (small-text's ``SEALS``, on
pairs) restricts a criterion to ``D_close`` under the selection model. :data:`STRATEGIES` names
the strategies, :func:`register_strategy` adds your own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ..annotators.factory import base_error
from ..data.loaders import Pool
from ..data.pairs import (
    PairSpace,
    as_id_set,
    isin_sorted,
    of_matched_records,
    sample_range,
    setdiff_sorted,
)
from ..evaluation.candidates import neighbour_pairs
from ..params import Configurable
from .committee import check_committee, label_vote_entropy

__all__ = [
    "RoundState",
    "Strategy",
    "CandidateSearch",
    "Random",
    "Retrieval",
    "Uncertainty",
    "RandomCandidates",
    "Stated",
    "StratifiedMatch",
    "StratifiedAllPositives",
    "ConditionalInformativeness",
    "BaseConsistent",
    "BaseInconsistent",
    "Committee",
    "Diversity",
    "OneToOne",
    "STRATEGIES",
    "BUILT_IN",
    "make_strategy",
    "register_strategy",
    "kmeans_pick",
    "pair_features",
    "smallest",
    "filled",
]

SELECTION_MODELS = ("pretrained", "trained")


@dataclass(frozen=True, eq=False)
class RoundState:
    """What a strategy may look at when choosing round ``round``'s batch: arrays, no callables."""

    round: int  # 1-based
    pool: Pool
    labelled: np.ndarray  # (n_labelled,) int64 sorted ids labelled in earlier rounds
    budget: int  # total labels of the run (all rounds)
    rng: np.random.Generator  # seeded by the run's seed and the round
    labels: np.ndarray | None = None  # (n_labelled,) int8 the annotator's answers (-1: none)
    held_out: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # never asked
    # over candidates (a CandidateSearch's criterion); empty for a whole-pool strategy
    candidates: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # (n,) sorted
    cosine: np.ndarray = field(default_factory=lambda: np.empty(0))  # (n,) float64
    logits: np.ndarray | None = None  # (n_candidates,) calibrated; None: pretrained encoder
    model: object = None  # the selection model (None: the pretrained encoder)
    embeddings: tuple | None = None  # (left, right) float32 item embeddings under ``model``
    base_cosine: np.ndarray | None = None  # (n_candidates,) pretrained cosine, if read
    member_logits: np.ndarray | None = None  # (members, n_candidates) a committee's, if read

    @property
    def unavailable(self) -> np.ndarray:
        """The sorted ids a batch may not hold: the labelled pairs and the held-out ones."""
        return np.union1d(self.labelled, self.held_out) if len(self.held_out) else self.labelled


class Strategy(Configurable):
    """Chooses ``n`` unlabelled pairs; subclasses set ``name`` and implement ``select``.
    ``reads`` names what the loop fills beyond the candidates, their cosines and logits:
    ``"base_cosine"``, ``"member_logits"`` (then the criterion has ``members`` and ``share``)."""

    name = "strategy"
    adaptive = False  # True: selects with the model trained on the labels so far
    reads: tuple = ()

    @property
    def criterion(self) -> Strategy:
        """The strategy that ranks, inside any wrapper: what the loop reads ``reads`` from."""
        return self

    def select(self, state: RoundState, n: int) -> np.ndarray:
        """(n,) int64 pair ids, distinct and not in ``state.unavailable``."""
        raise NotImplementedError


class CandidateSearch(Strategy):
    """``base`` restricted to ``D_close``: every item's top-``m`` neighbours under the selection
    ``model`` (``"pretrained"`` or ``"trained"``) in the faiss ``index``, minus the labelled
    pairs (SEALS, Coleman et al. 2022). The loop runs :meth:`restrict`."""

    def __init__(self, base: Strategy, *, model="pretrained", m=100, index="Flat", name=None):
        if model not in SELECTION_MODELS:
            raise ValueError(f"model must be one of {SELECTION_MODELS}, got {model!r}")
        self.base, self.model, self.m, self.index = base, model, positive("m", m), index
        self.name = name or f"{base.name}_over_{model}_candidates"

    @property
    def adaptive(self) -> bool:
        return self.model == "trained"

    @property
    def criterion(self) -> Strategy:
        return self.base.criterion

    def restrict(self, state: RoundState, left, right, model=None) -> RoundState:
        """``state`` over ``D_close`` of the item embeddings under ``model`` (None: pretrained):
        sorted candidates, float64 cosines and, under a calibrated model, logits."""
        candidates, cosine = neighbour_pairs(
            state.pool.space, left, right, m=self.m, exclude=state.unavailable, index=self.index
        )
        cosine = cosine.astype(np.float64)
        calibration = getattr(model, "calibration", None)
        logits = None if calibration is None else calibration.logits(cosine)
        return replace(
            state,
            candidates=candidates,
            cosine=cosine,
            logits=logits,
            model=model,
            embeddings=(left, right),
        )

    def select(self, state, n):
        return self.base.select(state, n)


class Random(Strategy):
    """Uniform over the whole pool: meets the true imbalance, whatever the labels turn out."""

    name = "random"

    def select(self, state, n):
        return state.pool.space.sample(n, state.rng, exclude=state.unavailable)


class Retrieval(Strategy):
    """The candidates of highest cosine under the selection model (under a trained model, the
    highest p: p rises with the cosine)."""

    name = "retrieval"

    def select(self, state, n):
        return _top(state, n, -state.cosine)


class Uncertainty(Strategy):
    """The candidates whose calibrated p is closest to 1/2 (smallest |logit|)."""

    name = "uncertainty"

    def select(self, state, n):
        if state.logits is None:
            raise ValueError(
                "uncertainty sampling needs a calibrated model; round "
                f"{state.round} has none (seed the run with another strategy)"
            )
        return _top(state, n, np.abs(state.logits))


class RandomCandidates(Strategy):
    """Uniform over the pretrained candidates ``D_close``: random label sets that do contain
    positives, to measure how much AP moves between equally good label sets (noise)."""

    name = "random_candidates"

    def select(self, state, n):
        _enough_candidates(state, n)
        return np.sort(state.rng.choice(state.candidates, size=n, replace=False))


class Stated(Strategy):
    """A uniform sample of the split's stated (heuristic) pairs: the alternative seed set."""

    name = "stated"

    def select(self, state, n):
        stated = setdiff_sorted(
            as_id_set(np.concatenate([state.pool.positives, state.pool.stated_negatives])),
            state.unavailable,
        )
        if n > len(stated):
            raise ValueError(f"only {len(stated)} unlabelled stated pairs for a batch of {n}")
        return np.sort(state.rng.choice(stated, size=n, replace=False))


class StratifiedMatch(Strategy):
    """Oracle: uniform positives and negatives, ``n_positive`` of ``n_positive + n_negative``
    labels in all (the counts uncertainty sampling collected), spread over the rounds."""

    name = "stratified_match"

    def __init__(self, n_positive: int, n_negative: int):
        self.n_positive = positive("n_positive", n_positive, minimum=0)
        self.n_negative = positive("n_negative", n_negative, minimum=0)

    def select(self, state, n):
        total = self.n_positive + self.n_negative
        if total != state.budget:
            raise ValueError(
                f"{self!r} wants {total} labels but the run's budget is {state.budget}"
            )
        return _stratified(state, n, self.n_positive)


class StratifiedAllPositives(Strategy):
    """Oracle: every positive of the pool, and uniform negatives for the rest of the budget
    (set the budget to twice the positives to match them, as the paper did on QQP)."""

    name = "stratified_all_positives"

    def select(self, state, n):
        if state.pool.n_positives > state.budget:
            raise ValueError(
                f"the pool has {state.pool.n_positives} positives, more than the "
                f"run's budget of {state.budget}"
            )
        return _stratified(state, n, state.pool.n_positives)


class ConditionalInformativeness(Strategy):
    """EAGLE (Bansal and Sharma 2023, eq. 3): the candidates whose score under the trained model
    deviates most, squared, from the base model's; both percentile ranks among the candidates
    (fine-tuning shifts every cosine; a pair whose *rank* moved is judged differently)."""

    name = "conditional_informativeness"
    reads = ("base_cosine",)

    def select(self, state, n):
        base = np.asarray(filled(state, "base_cosine"), np.float64)
        deviation = (_percentile(state.cosine) - _percentile(base)) ** 2
        return _top(state, n, -deviation)


class BaseConsistent(Strategy):
    """Oracle diagnostic (reads the imputed labels): the candidates the base model already gets
    right, lowest squared error of its score (cosine clipped to [0, 1]) against the label."""

    name = "base_consistent"
    reads = ("base_cosine",)

    def select(self, state, n):
        return _top(state, n, _base_error(state))


class BaseInconsistent(Strategy):
    """Oracle diagnostic (reads the imputed labels): the candidates the base model gets most
    wrong, highest squared error of its score against the label."""

    name = "base_inconsistent"
    reads = ("base_cosine",)

    def select(self, state, n):
        return _top(state, n, -_base_error(state))


class Committee(Strategy):
    """Query by committee (Seung et al. 1992): ``members`` models, each trained on its own
    random ``share`` of the labels, vote on every candidate's label (p >= 1/2); the candidates
    of highest vote entropy, ties broken by the widest spread of the members' logits."""

    name = "qbc"
    reads = ("member_logits",)  # the loop trains the members

    def __init__(self, members: int = 2, share: float = 0.8):
        self.members, self.share = check_committee(members, share)

    def select(self, state, n):
        logits = filled(state, "member_logits")  # (members, n_candidates)
        return _top(state, n, -label_vote_entropy(logits), -logits.std(axis=0))


class Diversity(Strategy):
    """k-means of the candidate pairs (:func:`pair_features`), k = the batch size, one random pair
    of each cluster, fitted on a sample of ``points_per_cluster`` candidates per cluster."""

    name = "diversity"

    def __init__(self, points_per_cluster: int = 64):
        self.points_per_cluster = positive("points_per_cluster", points_per_cluster)

    def select(self, state, n):
        _enough_candidates(state, n)
        sample = state.candidates
        if len(sample) > self.points_per_cluster * n:
            sample = np.sort(
                state.rng.choice(sample, size=self.points_per_cluster * n, replace=False)
            )
        left, right = filled(state, "embeddings")
        features = pair_features(state.pool.space, left, right, sample)
        return np.sort(sample[kmeans_pick(features, n, state.rng)])


class OneToOne(Strategy):
    """``base`` among the candidates whose two records are in no labelled match: where a record
    matches at most one other (two catalogues of distinct products), such a pair is a non-match
    (``make_strategy(..., one_to_one=True)``)."""

    def __init__(self, base: Strategy):
        self.base, self.name = base, base.name

    @property
    def adaptive(self) -> bool:
        return self.base.adaptive

    @property
    def criterion(self) -> Strategy:
        return self.base.criterion

    def select(self, state, n):
        keep = ~of_matched_records(state.pool.space, state.candidates, state.labelled, state.labels)
        per_candidate = ("candidates", "cosine", "logits", "base_cosine", "member_logits")
        values = {name: getattr(state, name) for name in per_candidate}  # the last axis each
        narrowed = {name: v[..., keep] for name, v in values.items() if v is not None}
        return self.base.select(replace(state, **narrowed), n)


# name -> (the criterion's class, its CandidateSearch's selection model; None: the whole pool)
STRATEGIES = {
    "random": (Random, None),
    "static_retrieval": (Retrieval, "pretrained"),
    "adaptive_retrieval": (Retrieval, "trained"),
    "uncertainty": (Uncertainty, "trained"),
    "random_candidates": (RandomCandidates, "pretrained"),
    "stated": (Stated, None),
    "stratified_match": (StratifiedMatch, None),
    "stratified_all_positives": (StratifiedAllPositives, None),
    "conditional_informativeness": (ConditionalInformativeness, "trained"),
    "base_consistent": (BaseConsistent, "pretrained"),
    "base_inconsistent": (BaseInconsistent, "pretrained"),
    "qbc": (Committee, "trained"),
    "diversity": (Diversity, "trained"),
}
BUILT_IN = frozenset(STRATEGIES)  # names no registration may take


def register_strategy(name: str, *, model: str | None = "trained") -> Callable[[type], type]:
    """Class decorator: registers a :class:`Strategy` subclass as ``name``, wrapped in a
    :class:`CandidateSearch` under the selection ``model`` (None: the whole pool). Registering
    your name again replaces it (a run's key holds a digest of the class's code)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            f"a strategy name must be an identifier such as 'my_uncertainty', got {name!r}"
        )
    if name in BUILT_IN:
        raise ValueError(
            f"{name!r} is a built-in strategy; register yours under a name of its own "
            f"(built-in: {sorted(BUILT_IN)})"
        )
    if model is not None and model not in SELECTION_MODELS:
        raise ValueError(f"model must be one of {SELECTION_MODELS} or None, got {model!r}")

    def register(cls: type) -> type:
        if not (isinstance(cls, type) and issubclass(cls, Strategy)):
            raise TypeError(
                f"register_strategy({name!r}) decorates a Strategy subclass, got {cls!r}"
            )
        STRATEGIES[name] = (cls, model)
        return cls

    return register


def make_strategy(
    name: str, *, candidate_m: int = 100, index: str = "Flat", one_to_one=False, **params
) -> Strategy:
    """The strategy registered as ``name``, built with ``params``, searching ``candidate_m``
    neighbours per item in the faiss ``index`` (``one_to_one``: within :class:`OneToOne`)."""
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; known: {sorted(STRATEGIES)}")
    cls, model = STRATEGIES[name]
    try:
        strategy = cls(**params)
    except TypeError as error:  # a parameter it does not take, or one it needs
        raise TypeError(
            f"strategy {name!r} cannot be built with strategy_params {params!r}: {error}"
        ) from error
    if one_to_one not in (True, False):
        raise ValueError(f"one_to_one must be True or False, got {one_to_one!r}")
    if model is None:
        if one_to_one:
            raise ValueError(
                f"one_to_one applies to a strategy over candidates; {name!r} chooses from "
                "the whole pool"
            )
        strategy.name = name  # the loop's records name a run's strategy by it
        return strategy
    base = OneToOne(strategy) if one_to_one else strategy
    return CandidateSearch(base, model=model, m=candidate_m, index=index, name=name)


def positive(name: str, value, *, minimum: int = 1) -> int:
    """``value`` as an int of at least ``minimum``, or a ValueError naming it."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < minimum:
        kind = "positive" if minimum == 1 else "non-negative"
        raise ValueError(f"{name} must be a {kind} integer, got {value!r}")
    return int(value)


def kmeans_pick(vectors, k: int, rng: np.random.Generator, *, max_iter: int = 100) -> np.ndarray:
    """(k,) sorted int64 row indices of ``vectors`` (n, dim): one random row of each of k-means'
    ``k`` clusters (Xu et al. 2007); where clusters stay empty, the rest uniform."""
    import warnings

    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or not np.isfinite(vectors).all():
        raise ValueError(f"vectors must be a finite 2-d array, got shape {vectors.shape}")
    n = len(vectors)
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise ValueError(f"k must be an integer in [1, {n}] (one pick per cluster), got {k!r}")
    seed = int(rng.integers(2**31 - 1))
    if k == n:
        return np.arange(n, dtype=np.int64)
    kmeans = KMeans(n_clusters=int(k), n_init=1, max_iter=max_iter, random_state=seed)
    with warnings.catch_warnings():  # fewer distinct rows than k: handled below
        warnings.simplefilter("ignore", ConvergenceWarning)
        cluster = kmeans.fit(vectors).labels_
    order = np.lexsort((rng.random(n), cluster))  # within a cluster, a random member first
    firsts = order[np.r_[True, cluster[order][1:] != cluster[order][:-1]]]
    if len(firsts) < k:
        rest = np.setdiff1d(np.arange(n), firsts)
        firsts = np.concatenate([firsts, rng.choice(rest, size=k - len(firsts), replace=False)])
    return np.sort(firsts).astype(np.int64)


def pair_features(space: PairSpace, left: np.ndarray, right: np.ndarray, pair_ids) -> np.ndarray:
    """(n, 2 * dim) float32 order-free features of pairs: ``[u * v, |u - v|]`` of their two
    items' embeddings (what Sentence-BERT's classifier reads, without the order)."""
    i, j = space.decode(pair_ids)
    u, v = left[i], right[j]
    return np.concatenate([u * v, np.abs(u - v)], axis=1).astype(np.float32)


def filled(state, name: str) -> np.ndarray:
    """``state``'s field ``name`` (a :class:`RoundState`'s or a query-level state's), which the
    loop fills for a criterion that ``reads`` it."""
    value = getattr(state, name)
    if value is None:
        raise ValueError(
            f"round {state.round}: this strategy reads {type(state).__name__}.{name}, which is "
            "None (the loop fills it for a criterion whose `reads` names it)"
        )
    return value


def _base_error(state: RoundState) -> np.ndarray:
    return base_error(state.pool, state.candidates, filled(state, "base_cosine"))


def _percentile(x: np.ndarray) -> np.ndarray:
    """Ranks scaled to (0, 1]; ties share their mean rank."""
    from scipy.stats import rankdata

    return rankdata(x) / max(len(x), 1)


def _enough_candidates(state: RoundState, n: int) -> None:
    if n > len(state.candidates):
        raise ValueError(
            f"round {state.round}: only {len(state.candidates)} unlabelled "
            f"candidates for a batch of {n}; search more neighbours per item"
        )


def _top(state: RoundState, n: int, key: np.ndarray, *tiebreaks: np.ndarray) -> np.ndarray:
    _enough_candidates(state, n)
    return smallest(state.candidates, n, key, *tiebreaks)


def smallest(ids: np.ndarray, n: int, key: np.ndarray, *tiebreaks: np.ndarray) -> np.ndarray:
    """(n,) int64 sorted: the ``n`` of the sorted ``ids`` of smallest ``key``, ties by each of
    ``tiebreaks`` (smallest first) and then by id."""
    for scores in (key, *tiebreaks):
        if len(scores) != len(ids):
            raise ValueError(f"{len(scores)} scores for {len(ids)} candidates")
        if np.isnan(scores).any():
            raise ValueError(f"{int(np.isnan(scores).sum())} scores are NaN")
    order = np.lexsort((ids, *reversed(tiebreaks), key))
    return np.sort(ids[order[:n]]).astype(np.int64)


def _stratified(state: RoundState, n: int, n_positive_total: int) -> np.ndarray:
    """``n`` uniform pairs, with positives in the share that ends the run at ``n_positive_total``
    positives when every round draws in proportion (labels taken so far count)."""
    pool, labelled = state.pool, state.labelled
    have = int(isin_sorted(labelled, pool.positives).sum())
    want = round(n_positive_total * (len(labelled) + n) / state.budget) - have
    free_pos = setdiff_sorted(pool.positives, state.unavailable)
    n_pos = int(min(max(want, 0), n, len(free_pos)))
    positives = np.sort(state.rng.choice(free_pos, size=n_pos, replace=False))
    negatives = sample_range(
        pool.n_pairs,
        n - n_pos,
        state.rng,
        exclude=as_id_set(np.concatenate([state.unavailable, pool.positives])),
    )
    return np.sort(np.concatenate([positives, negatives]))
