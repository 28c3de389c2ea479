"""Which pairs to label next: one small class per criterion, one ``select`` method.

The round loop (:mod:`pairlab.active.loop`) hands every strategy a :class:`RoundState` of plain
data: the pool, the sorted ids already labelled and their answers, the round's rng and, for a
criterion over candidates, the candidates with their cosines and calibrated logits (and what its
``reads`` asks for: the pretrained cosines, a committee's logits). A strategy returns ``n``
distinct unlabelled pair ids; the loop checks that.

A criterion that ranks candidates (retrieval, uncertainty, committee, diversity) never searches
for them itself: :class:`CandidateSearch` wraps it, as small-text's ``SEALS`` wraps a query
strategy, and restricts the pool to ``D_close`` (each item's top-m neighbours under the
selection model, minus the labelled pairs) before the criterion picks. The wrapper also says
which model selects: ``"pretrained"`` (static retrieval) or ``"trained"`` (the model trained on
the labels so far: adaptive retrieval, uncertainty, committee, diversity). A strategy is
``adaptive`` exactly when it selects with the trained model; the registry composes the named
strategies (:data:`STRATEGIES`), and :func:`register_strategy` adds one of your own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..data.pairs import as_id_set, isin_sorted, sample_range, setdiff_sorted
from .base import RoundState, Strategy
from .candidate_search import SELECTION_MODELS, CandidateSearch
from .committee import check_committee, label_vote_entropy
from .diversity import kmeans_pick, pair_features

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
]


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
        for name, value in (("n_positive", n_positive), ("n_negative", n_negative)):
            if not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        self.n_positive, self.n_negative = int(n_positive), int(n_negative)

    def params(self):
        return {"n_positive": self.n_positive, "n_negative": self.n_negative}

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
    """EAGLE (Bansal and Sharma 2023, eq. 3): the candidates whose score under the model trained
    so far deviates most, squared, from the base (pretrained) model's. The two scores are put on
    one scale as percentile ranks among the candidates: fine-tuning shifts and spreads every
    cosine, so raw cosines of the two models differ everywhere, while a pair whose *rank* moved
    is one the fine-tuned model judges differently from the base model."""

    name = "conditional_informativeness"
    reads = ("base_cosine",)

    def select(self, state, n):
        deviation = (_percentile(state.cosine) - _percentile(_base_cosine(state))) ** 2
        return _top(state, n, -deviation)


class BaseConsistent(Strategy):
    """Oracle diagnostic (reads the imputed labels; analysis only): the candidates the base
    model already gets right, lowest squared error of its score (cosine clipped to [0, 1])
    against the label."""

    name = "base_consistent"
    reads = ("base_cosine",)

    def select(self, state, n):
        return _top(state, n, _base_error(state))


class BaseInconsistent(Strategy):
    """Oracle diagnostic (reads the imputed labels; analysis only): the candidates the base
    model gets most wrong, highest squared error of its score against the label."""

    name = "base_inconsistent"
    reads = ("base_cosine",)

    def select(self, state, n):
        return _top(state, n, -_base_error(state))


class Committee(Strategy):
    """Query by committee (Seung et al. 1992): ``members`` models, each trained on its own
    random ``share`` of the labels, vote on every candidate's label (p >= 1/2); the candidates
    of highest vote entropy, ties broken by the widest spread of the members' logits."""

    name = "qbc"
    reads = ("member_logits",)  # the loop trains the members (:func:`.committee.train_committee`)

    def __init__(self, members: int = 2, share: float = 0.8):
        self.members, self.share = check_committee(members, share)

    def params(self):
        return {"members": self.members, "share": self.share}

    def select(self, state, n):
        logits = _read(state, "member_logits")  # (members, n_candidates)
        return _top(state, n, -label_vote_entropy(logits), -logits.std(axis=0))


class Diversity(Strategy):
    """k-means of the candidate pairs under the selection model (``[u * v, |u - v|]`` of the two
    items' embeddings), k = the batch size, one random pair of each cluster. The clusters are
    fitted on a uniform sample of ``points_per_cluster`` candidates per cluster, which bounds the
    work when D_close holds 10^5 pairs; the picks stay uniform within each cluster."""

    name = "diversity"

    def __init__(self, points_per_cluster: int = 64):
        if not isinstance(points_per_cluster, (int, np.integer)) or points_per_cluster < 1:
            raise ValueError(
                f"points_per_cluster must be a positive integer, got {points_per_cluster!r}"
            )
        self.points_per_cluster = int(points_per_cluster)

    def params(self):
        return {"points_per_cluster": self.points_per_cluster}

    def select(self, state, n):
        _enough_candidates(state, n)
        sample = state.candidates
        if len(sample) > self.points_per_cluster * n:
            sample = np.sort(
                state.rng.choice(sample, size=self.points_per_cluster * n, replace=False)
            )
        left, right = _read(state, "embeddings")
        features = pair_features(state.pool.space, left, right, sample)
        return np.sort(sample[kmeans_pick(features, n, state.rng)])


def _read(state: RoundState, name: str) -> np.ndarray:
    """``state``'s field ``name``, which the loop fills for a criterion that ``reads`` it."""
    value = getattr(state, name)
    if value is None:
        raise ValueError(
            f"round {state.round}: this strategy reads RoundState.{name}, which is None "
            f"(the loop fills it for a criterion whose `reads` names it)"
        )
    return value


def _base_cosine(state: RoundState) -> np.ndarray:
    return np.asarray(_read(state, "base_cosine"), np.float64)


def _base_error(state: RoundState) -> np.ndarray:
    score = np.clip(_base_cosine(state), 0.0, 1.0)
    return (score - state.pool.labels(state.candidates)) ** 2


def _percentile(x: np.ndarray) -> np.ndarray:
    """Ranks scaled to (0, 1]; ties share their mean rank."""
    from scipy.stats import rankdata

    return rankdata(x) / max(len(x), 1)


def _over_candidates(base: type, model: str, name: str) -> Callable:
    def build(*, candidate_m: int = 100, index: str = "Flat", **params) -> Strategy:
        return CandidateSearch(base(**params), model=model, m=candidate_m, index=index, name=name)

    return build


def _whole_pool(cls: type) -> Callable:
    def build(*, candidate_m: int = 100, index: str = "Flat", **params) -> Strategy:
        return cls(**params)  # looks beyond any candidates: m and the index do not apply

    return build


STRATEGIES = {
    "random": _whole_pool(Random),
    "static_retrieval": _over_candidates(Retrieval, "pretrained", "static_retrieval"),
    "adaptive_retrieval": _over_candidates(Retrieval, "trained", "adaptive_retrieval"),
    "uncertainty": _over_candidates(Uncertainty, "trained", "uncertainty"),
    "random_candidates": _over_candidates(RandomCandidates, "pretrained", "random_candidates"),
    "stated": _whole_pool(Stated),
    "stratified_match": _whole_pool(StratifiedMatch),
    "stratified_all_positives": _whole_pool(StratifiedAllPositives),
    "conditional_informativeness": _over_candidates(
        ConditionalInformativeness, "trained", "conditional_informativeness"
    ),
    "base_consistent": _over_candidates(BaseConsistent, "pretrained", "base_consistent"),
    "base_inconsistent": _over_candidates(BaseInconsistent, "pretrained", "base_inconsistent"),
    "qbc": _over_candidates(Committee, "trained", "qbc"),
    "diversity": _over_candidates(Diversity, "trained", "diversity"),
}


BUILT_IN = frozenset(STRATEGIES)  # names no registration may take


def register_strategy(name: str, *, model: str | None = "trained") -> Callable[[type], type]:
    """Class decorator: registers a :class:`Strategy` subclass as ``name``, so a config or a
    sweep builds it by that name (:func:`make_strategy`). ``model`` is the selection model of
    the :class:`CandidateSearch` it is wrapped in (``"trained"``: adaptive, its ``select`` sees
    ``state.logits``; ``"pretrained"``); None: it chooses from the whole pool itself.

    A built-in name is refused (:data:`BUILT_IN`). Registering one of your own names again (a
    notebook cell run twice, perhaps edited) replaces it: a run folder's key includes a digest
    of the strategy's code (:mod:`.behaviour`), so runs of the earlier class are not read back
    for the new one."""
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
        STRATEGIES[name] = (
            _over_candidates(cls, model, name) if model is not None else _named(cls, name)
        )
        return cls

    return register


def _named(cls: type, name: str) -> Callable:
    def build(*, candidate_m: int = 100, index: str = "Flat", **params) -> Strategy:
        strategy = cls(**params)
        strategy.name = name  # the loop's records name a run's strategy by it
        return strategy

    return build


class OneToOne(Strategy):
    """``base`` among the candidates whose two records are in no labelled match: where every
    record matches at most one other (two catalogues of distinct products), a pair of a record
    already matched is a non-match, and asking it spends a label on nothing
    (``benchmarks/er_label_use.py`` counts such labels in a finished session).
    Built by ``strategy_params={"one_to_one": True}`` around a candidate strategy's criterion."""

    name = "one_to_one"

    def __init__(self, base: Strategy):
        self.base = base
        self.name = base.name

    @property
    def adaptive(self) -> bool:
        return self.base.adaptive

    @property
    def criterion(self) -> Strategy:
        return self.base.criterion

    def params(self):
        return {"base": self.base}

    def select(self, state, n):
        keep = ~of_matched_records(state.pool.space, state.candidates, state.labelled, state.labels)
        if keep.all():
            return self.base.select(state, n)

        def part(x):
            return None if x is None else x[..., keep]

        narrowed = replace(
            state,
            candidates=state.candidates[keep],
            cosine=state.cosine[keep],
            logits=part(state.logits),
            base_cosine=part(state.base_cosine),
            member_logits=part(state.member_logits),
        )
        return self.base.select(narrowed, n)


def of_matched_records(space, candidates, labelled, labels) -> np.ndarray:
    """True for each of the sorted ``candidates`` (pair ids of ``space``) that holds a record of
    a pair labelled a match (``labelled`` ids, ``labels`` their 0/1 answers, -1: none; None:
    nothing known). In one table a record is matched on either side."""
    candidates = np.asarray(candidates, np.int64)
    if labels is None or not len(candidates):
        return np.zeros(len(candidates), bool)
    matches = np.asarray(labelled, np.int64)[np.asarray(labels) == 1]
    if not len(matches):
        return np.zeros(len(candidates), bool)
    left, right = space.decode(matches)
    i, j = space.decode(candidates)
    if space.symmetric:
        records = np.unique(np.concatenate([left, right]))
        return isin_sorted(i, records) | isin_sorted(j, records)
    return isin_sorted(i, np.unique(left)) | isin_sorted(j, np.unique(right))


def make_strategy(
    name: str,
    *,
    candidate_m: int = 100,
    index: str = "Flat",
    one_to_one: bool = False,
    **params,
) -> Strategy:
    """The strategy registered as ``name``, built with ``params``; candidate strategies search
    ``candidate_m`` neighbours per item with the faiss ``index``. ``one_to_one``: a candidate
    strategy's criterion never sees a pair of a record already matched (:class:`OneToOne`)."""
    if name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; known: {sorted(STRATEGIES)}")
    try:
        strategy = STRATEGIES[name](candidate_m=candidate_m, index=index, **params)
    except TypeError as error:  # a parameter it does not take, or one it needs
        raise TypeError(
            f"strategy {name!r} cannot be built with strategy_params {params!r}: {error}"
        ) from error
    if one_to_one is True:
        if not isinstance(strategy, CandidateSearch):
            raise ValueError(
                f"one_to_one applies to a strategy over candidates; {name!r} chooses from "
                "the whole pool"
            )
        strategy.base = OneToOne(strategy.base)
    elif one_to_one is not False:
        raise ValueError(f"one_to_one must be True or False, got {one_to_one!r}")
    return strategy


def _enough_candidates(state: RoundState, n: int) -> None:
    """A batch of ``n`` fits in the round's unlabelled candidates, or a clear error."""
    if n > len(state.candidates):
        raise ValueError(
            f"round {state.round}: only {len(state.candidates)} unlabelled "
            f"candidates for a batch of {n}; search more neighbours per item"
        )


def _top(state: RoundState, n: int, key: np.ndarray, *tiebreaks: np.ndarray) -> np.ndarray:
    """The ``n`` candidates of smallest ``key``, ties by each of ``tiebreaks`` (smallest first)
    and then by pair id, sorted."""
    _enough_candidates(state, n)
    for scores in (key, *tiebreaks):
        if len(scores) != len(state.candidates):
            raise ValueError(f"{len(scores)} scores for {len(state.candidates)} candidates")
        if np.isnan(scores).any():
            raise ValueError(
                f"round {state.round}: {int(np.isnan(scores).sum())} candidate scores are NaN"
            )
    order = np.lexsort((state.candidates, *reversed(tiebreaks), key))
    return np.sort(state.candidates[order[:n]])


def _stratified(state: RoundState, n: int, n_positive_total: int) -> np.ndarray:
    """``n`` uniform pairs, with positives in the share that ends the run at ``n_positive_total``
    positives when every round draws in proportion (labels taken so far count)."""
    pool, labelled = state.pool, state.labelled
    done = len(labelled)
    have = int(isin_sorted(labelled, pool.positives).sum())
    want = round(n_positive_total * (done + n) / state.budget) - have
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
