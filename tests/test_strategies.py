"""Each strategy on a small pool with known scores picks exactly the expected pairs; one
contract runs over every registered strategy."""

from dataclasses import replace

import numpy as np
import pytest

from pairlab.active.committee import member_scores, train_committee
from pairlab.active.strategies import (
    STRATEGIES,
    BaseConsistent,
    BaseInconsistent,
    CandidateSearch,
    ConditionalInformativeness,
    OneToOne,
    Random,
    RandomCandidates,
    Retrieval,
    RoundState,
    Stated,
    Strategy,
    StratifiedAllPositives,
    StratifiedMatch,
    Uncertainty,
    make_strategy,
)
from pairlab.data import Pool
from pairlab.data.pairs import PairSpace, as_id_set, isin_sorted, of_matched_records
from pairlab.models.cosinebert import Calibration

N_ITEMS = 40
SPACE = PairSpace(N_ITEMS, N_ITEMS, True)  # 780 pairs


def pool() -> Pool:
    texts = np.array([f"q{k}" for k in range(N_ITEMS)], dtype=object)
    positives = as_id_set(SPACE.encode(np.arange(0, 20, 2), np.arange(1, 21, 2)))  # 10 pairs
    stated_neg = as_id_set(SPACE.encode(np.arange(20, 30), np.arange(30, 40)))  # 10 pairs
    return Pool("toy", "train", texts, texts, True, positives, stated_neg)


def state(labelled=(), n_candidates=30, budget=60, seed=0, logits=True) -> RoundState:
    p = pool()
    labelled = as_id_set(labelled)
    candidates = np.setdiff1d(np.arange(0, 3 * n_candidates, 3, dtype=np.int64), labelled)
    cosine = np.cos(candidates * 0.37)  # known, distinct scores
    return RoundState(
        round=2,
        pool=p,
        labelled=labelled,
        budget=budget,
        rng=np.random.default_rng(seed),
        candidates=candidates,
        cosine=cosine,
        logits=(cosine - 0.3) * 4 if logits else None,
    )


def expected_top(s: RoundState, key, n):
    return np.sort(s.candidates[np.argsort(key, kind="stable")[:n]])


def test_retrieval_takes_the_highest_cosines():
    s = state()
    assert np.array_equal(Retrieval().select(s, 7), expected_top(s, -s.cosine, 7))


def test_uncertainty_takes_p_closest_to_one_half():
    s = state()
    picked = Uncertainty().select(s, 5)
    assert np.array_equal(picked, expected_top(s, np.abs(s.logits), 5))
    p = 1 / (1 + np.exp(-s.logits))
    assert (
        np.abs(p[isin_sorted(s.candidates, picked)] - 0.5).max()
        <= np.abs(p[~isin_sorted(s.candidates, picked)] - 0.5).min()
    )


def test_ties_break_by_pair_id():
    s = state()
    tied = RoundState(
        round=2,
        pool=s.pool,
        labelled=s.labelled,
        budget=60,
        rng=s.rng,
        candidates=s.candidates,
        cosine=np.ones(len(s.candidates)),
        logits=np.zeros(len(s.candidates)),
    )
    assert np.array_equal(Uncertainty().select(tied, 4), s.candidates[:4])
    assert np.array_equal(Retrieval().select(tied, 4), s.candidates[:4])


def test_random_is_uniform_over_the_whole_pool_not_the_candidates():
    labelled = np.arange(0, 700, dtype=np.int64)  # most of the pool already labelled
    s = state(labelled=labelled)
    picked = Random().select(s, 80)
    assert np.array_equal(picked, np.arange(700, 780))  # exactly the 80 unlabelled pairs
    again = Random().select(state(seed=3), 50)
    assert np.array_equal(
        again, SPACE.sample(50, np.random.default_rng(3), exclude=np.empty(0, np.int64))
    )
    assert not isin_sorted(again, state().candidates).all()  # it looks beyond D_close


def test_random_candidates_is_uniform_over_the_candidates_only():
    s = state()
    picked = RandomCandidates().select(s, 12)
    assert isin_sorted(picked, s.candidates).all() and len(np.unique(picked)) == 12
    seen = np.unique(
        np.concatenate([RandomCandidates().select(state(seed=k), 12) for k in range(40)])
    )
    assert np.array_equal(seen, s.candidates)  # every candidate can be drawn
    with pytest.raises(ValueError, match="only 30 unlabelled candidates for a batch of 31"):
        RandomCandidates().select(s, 31)


def test_stated_samples_the_stated_pairs():
    s = state(labelled=pool().positives[:4])
    picked = Stated().select(s, 16)  # 6 unlabelled positives + 10 stated negatives
    assert np.array_equal(picked, np.union1d(pool().positives[4:], pool().stated_negatives))
    with pytest.raises(ValueError, match="only 16 unlabelled stated pairs"):
        Stated().select(s, 17)


def test_stratified_match_reaches_its_counts_over_rounds():
    strategy = StratifiedMatch(n_positive=6, n_negative=24)
    labelled = np.empty(0, np.int64)
    for round_, n in enumerate([10, 20], start=1):
        s = RoundState(
            round=round_,
            pool=pool(),
            labelled=labelled,
            budget=30,
            rng=np.random.default_rng(round_),
        )
        labelled = np.union1d(labelled, strategy.select(s, n))
    assert len(labelled) == 30
    assert isin_sorted(labelled, pool().positives).sum() == 6
    with pytest.raises(ValueError, match="budget is 60"):
        strategy.select(state(), 5)


def test_stratified_all_positives_takes_every_positive():
    s = RoundState(
        round=1,
        pool=pool(),
        labelled=np.empty(0, np.int64),
        budget=20,
        rng=np.random.default_rng(0),
    )
    picked = StratifiedAllPositives().select(s, 20)
    assert isin_sorted(pool().positives, picked).all() and len(picked) == 20
    with pytest.raises(ValueError, match="more than the run's budget"):
        StratifiedAllPositives().select(state(budget=5), 5)


def test_uncertainty_needs_a_calibrated_model():
    with pytest.raises(ValueError, match="needs a calibrated model"):
        Uncertainty().select(state(logits=False), 3)


def test_too_few_candidates_and_nan_scores_are_clear_errors():
    with pytest.raises(ValueError, match="only 30 unlabelled candidates for a batch of 31"):
        Retrieval().select(state(), 31)
    s = state()
    s.logits[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Uncertainty().select(s, 3)


def test_unknown_strategy_names_the_known_ones():
    with pytest.raises(ValueError, match="known: .*uncertainty"):
        make_strategy("committee")


EMB = np.random.default_rng(7).normal(size=(N_ITEMS, 6)).astype(np.float32)
EMB /= np.linalg.norm(EMB, axis=1, keepdims=True)
TRAINED = np.roll(EMB, 1, axis=1)  # another embedding space: another D_close


class Trained:
    calibration = Calibration(0.0, 1.0, 4.0, -1.0)


class Member:
    """A committee member: its own embedding space, drawn from the labels it trained on."""

    calibration = Calibration(0.0, 1.0, 4.0, -1.0)

    def __init__(self, ids, member):
        rng = np.random.default_rng([int(ids.sum()), member])
        self.emb = TRAINED + 0.3 * rng.normal(size=TRAINED.shape).astype(np.float32)
        self.emb /= np.linalg.norm(self.emb, axis=1, keepdims=True)


def _embeddings(m):
    if m is None:
        return EMB, EMB
    emb = getattr(m, "emb", TRAINED)
    return emb, emb


def searchable(labelled=(), seed=0) -> RoundState:
    """A state with no candidates yet: what the loop starts a round from."""
    labelled = as_id_set(labelled)
    return RoundState(
        round=2,
        pool=pool(),
        labelled=labelled,
        budget=60,
        rng=np.random.default_rng(seed),
        labels=pool().labels(labelled),
    )


def _pretrained_cosine(ids):
    left, right = SPACE.decode(ids)
    return np.einsum("ij,ij->i", EMB[left], EMB[right]).astype(np.float64)


def handed(strategy, state: RoundState, model=None) -> RoundState:
    """``state`` as the loop hands it to ``strategy`` (:meth:`ActiveRun._state`): over
    candidates, ``D_close`` under its selection model and what its criterion reads."""
    if not isinstance(strategy, CandidateSearch):
        return state
    model = model if strategy.adaptive else None
    state = strategy.restrict(state, *_embeddings(model), model)
    criterion = strategy.criterion
    if "base_cosine" in criterion.reads:
        state = replace(state, base_cosine=_pretrained_cosine(state.candidates))
    if "member_logits" in criterion.reads:
        members = train_committee(
            lambda ids, labels, member: Member(ids, member),
            state.labelled,
            state.labels,
            state.rng,
            members=criterion.members,
            share=criterion.share,
        )
        rows, cols = SPACE.decode(state.candidates)
        logits = [member_scores(m, *_embeddings(m), rows, cols) for m in members]
        state = replace(state, member_logits=np.stack(logits))
    return state


def test_candidate_search_hands_the_criterion_d_close_under_the_chosen_model():
    from pairlab.evaluation.candidates import neighbour_pairs

    labelled = np.array([1, 5], dtype=np.int64)
    for model, emb in (("pretrained", EMB), ("trained", TRAINED)):
        strategy = CandidateSearch(Retrieval(), model=model, m=3, name="r")
        seen = handed(strategy, searchable(labelled), Trained())
        picked = strategy.select(seen, 5)
        ids, cosine = neighbour_pairs(SPACE, emb, emb, m=3, exclude=labelled)
        assert np.array_equal(seen.candidates, ids) and np.allclose(seen.cosine, cosine)
        assert np.array_equal(picked, expected_top(seen, -seen.cosine, 5))
        assert (seen.logits is None) == (model == "pretrained")
        assert strategy.adaptive == (model == "trained")
    with pytest.raises(ValueError, match="model must be one of"):
        CandidateSearch(Retrieval(), model="finetuned")
    with pytest.raises(ValueError, match="m must be a positive integer, got 0"):
        CandidateSearch(Retrieval(), m=0)


def test_held_out_pairs_are_never_picked_and_change_nothing_when_there_are_none():
    """``RoundState.held_out`` (a session's audit pairs): neither the candidate search nor
    random sampling offers them; with none held out, the same batches as before."""
    labelled = np.array([1, 5], dtype=np.int64)
    strategy = CandidateSearch(Retrieval(), model="pretrained", m=3, name="r")
    plain = strategy.select(handed(strategy, searchable(labelled)), 5)
    held = plain[:2]
    picked = strategy.select(handed(strategy, replace(searchable(labelled), held_out=held)), 5)
    assert not isin_sorted(picked, held).any() and len(np.unique(picked)) == 5
    assert np.array_equal(strategy.select(handed(strategy, searchable(labelled)), 5), plain)
    s = state(labelled=np.arange(0, 700, dtype=np.int64))
    picked = Random().select(replace(s, held_out=np.arange(700, 720, dtype=np.int64)), 60)
    assert np.array_equal(picked, np.arange(720, 780))  # the 60 neither labelled nor held out


def test_one_to_one_never_asks_a_pair_of_a_record_already_matched():
    """``one_to_one``: the criterion sees only candidates whose records are in no labelled
    match (either side in one table; each side on its own in two); with no match labelled,
    the same batch as without it; whole-pool strategies refuse it."""
    s = state(labelled=SPACE.encode(np.array([0, 6]), np.array([3, 9])))
    s = replace(s, labels=np.array([1, 0], np.int8))  # (0, 3) a match, (6, 9) not
    i, j = SPACE.decode(s.candidates)
    hit = np.isin(i, (0, 3)) | np.isin(j, (0, 3))
    assert hit.any() and not np.isin(i, (6, 9)).all()  # the toy exercises both cases
    one = make_strategy("uncertainty", candidate_m=3, one_to_one=True)
    picked = one.base.select(s, 10)
    kept = replace(s, candidates=s.candidates[~hit], cosine=s.cosine[~hit], logits=s.logits[~hit])
    assert np.array_equal(picked, Uncertainty().select(kept, 10))
    pi, pj = SPACE.decode(picked)
    assert not (np.isin(pi, (0, 3)) | np.isin(pj, (0, 3))).any()
    unmatched = replace(s, labels=np.array([0, 0], np.int8))
    assert np.array_equal(one.base.select(unmatched, 10), Uncertainty().select(unmatched, 10))
    # two tables: a left record and a right record are different records
    two = PairSpace(4, 5, False)
    matched = of_matched_records(
        two, np.arange(20, dtype=np.int64), two.encode(np.array([1]), np.array([2])), [1]
    )
    left, right = two.decode(np.arange(20))
    assert np.array_equal(matched, (left == 1) | (right == 2))
    assert one.name == "uncertainty" and one.adaptive
    with pytest.raises(ValueError, match="whole pool"):
        make_strategy("random", one_to_one=True)
    with pytest.raises(ValueError, match="True or False"):
        make_strategy("uncertainty", one_to_one="yes")


def test_one_to_one_keys_its_runs_apart_and_leaves_the_others_keys():
    from pairlab.active import ActiveConfig
    from pairlab.active.behaviour import run_code_digest

    plain = ActiveConfig(task="toy", strategy="uncertainty")
    one = ActiveConfig(task="toy", strategy="uncertainty", strategy_params={"one_to_one": True})
    off = ActiveConfig(task="toy", strategy="uncertainty", strategy_params={"one_to_one": False})
    assert run_code_digest(one) != run_code_digest(plain) == run_code_digest(off)
    assert isinstance(one.make_strategy().base, OneToOne)


def test_the_registry_composes_the_named_strategies():
    adaptive = {name for name in STRATEGIES if make_strategy(name, **_params(name)).adaptive}
    assert adaptive == {
        "adaptive_retrieval",
        "uncertainty",
        "conditional_informativeness",
        "qbc",
        "diversity",
    }
    static = make_strategy("static_retrieval", candidate_m=7, index="IVF4,Flat")
    assert isinstance(static.base, Retrieval) and (static.m, static.index) == (7, "IVF4,Flat")
    assert isinstance(make_strategy("random", candidate_m=7), Random)


def _params(name):
    return {"n_positive": 3, "n_negative": 57} if name == "stratified_match" else {}


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_contract_every_strategy(name):
    """n distinct, sorted, unlabelled, in-range int64 ids; the same ids for the same seed."""
    strategy = make_strategy(name, candidate_m=10, **_params(name))
    labelled = np.array([0, 3, 6, pool().positives[0]], dtype=np.int64)
    labelled.sort()
    first = strategy.select(handed(strategy, searchable(labelled), Trained()), 12)
    second = strategy.select(handed(strategy, searchable(labelled), Trained()), 12)
    assert first.dtype == np.int64 and first.shape == (12,)
    assert np.array_equal(first, np.unique(first))
    assert not isin_sorted(first, labelled).any()
    SPACE.check(first)
    assert np.array_equal(first, second)
    assert isinstance(strategy.adaptive, bool) and strategy.name == name


def with_base(s: RoundState, base: np.ndarray) -> RoundState:
    """``s`` with known base-model cosines of its candidates."""
    return replace(s, base_cosine=np.asarray(base, np.float64))


def test_conditional_informativeness_takes_the_largest_rank_moves():
    s = state(n_candidates=10)
    k = len(s.candidates)
    order = np.argsort(s.cosine)  # the fine-tuned ranks, lowest first
    base = np.empty(k)
    base[order] = np.arange(k)  # the base model ranks every candidate alike ...
    moved = order[[0, k - 1]]  # ... except the fine-tuned lowest and highest, which swap
    base[moved] = base[moved[::-1]]
    picked = ConditionalInformativeness().select(with_base(s, base * 0.01 - 3.0), 2)  # any scale
    assert np.array_equal(picked, np.sort(s.candidates[moved]))
    unchanged = ConditionalInformativeness().select(with_base(s, s.cosine * 5 + 1), 3)
    assert np.array_equal(unchanged, s.candidates[:3])  # no rank moved: ties by pair id


def test_base_consistency_reads_the_labels_and_the_base_error():
    s = state(n_candidates=12)
    truth = s.pool.labels(s.candidates)
    assert 0 < truth.sum() < len(truth)  # the errors differ by label
    base = np.linspace(-0.2, 1.2, len(s.candidates))
    error = (np.clip(base, 0, 1) - truth) ** 2
    assert np.array_equal(BaseConsistent().select(with_base(s, base), 4), expected_top(s, error, 4))
    assert np.array_equal(
        BaseInconsistent().select(with_base(s, base), 4), expected_top(s, -error, 4)
    )
    with pytest.raises(ValueError, match="reads RoundState.base_cosine, which is None"):
        BaseConsistent().select(s, 2)


@pytest.fixture
def registry(monkeypatch):
    """The registry, restored after the test: registrations stay inside it."""
    from pairlab.active import strategies

    monkeypatch.setattr(strategies, "STRATEGIES", dict(strategies.STRATEGIES))
    return strategies


class LeaningPositive(Strategy):  # a strategy of one's own, as a notebook cell writes it
    def select(self, state, n):
        order = np.lexsort((state.candidates, np.abs(state.logits - 1.0)))
        return np.sort(state.candidates[order[:n]])


def test_a_registered_strategy_is_built_by_name_over_candidates(registry):
    from pairlab.active.config import ActiveConfig

    registry.register_strategy("leaning_positive")(LeaningPositive)
    built = registry.make_strategy("leaning_positive", candidate_m=10)
    assert isinstance(built, CandidateSearch) and isinstance(built.base, LeaningPositive)
    assert built.adaptive and built.name == "leaning_positive" and built.m == 10
    picked = built.select(handed(built, searchable(), Trained()), 6)
    assert len(picked) == 6 and np.array_equal(picked, np.unique(picked))
    assert (
        ActiveConfig(task="toy", strategy="leaning_positive").make_strategy().name
        == "leaning_positive"
    )


def test_a_whole_pool_strategy_is_registered_under_its_name(registry):
    registry.register_strategy("my_random", model=None)(Random)
    built = registry.make_strategy("my_random")
    assert isinstance(built, Random) and built.name == "my_random" and Random.name == "random"


def test_registering_a_built_in_name_is_refused(registry):
    with pytest.raises(ValueError, match="'uncertainty' is a built-in strategy"):
        registry.register_strategy("uncertainty")
    assert registry.STRATEGIES["uncertainty"] is STRATEGIES["uncertainty"]


def test_registering_checks_the_name_the_model_and_the_class(registry):
    with pytest.raises(ValueError, match="identifier"):
        registry.register_strategy("my strategy")
    with pytest.raises(ValueError, match="model must be one of"):
        registry.register_strategy("mine", model="finetuned")
    with pytest.raises(TypeError, match="Strategy subclass"):
        registry.register_strategy("mine")(object)
    assert "mine" not in registry.STRATEGIES


def test_registering_a_name_again_replaces_it_and_its_code_digest(registry):
    """A cell run again with an edited class: the name builds the new class, and the run key's
    code digest follows it, so no run of the earlier class is read back for it."""
    from pairlab.active.behaviour import run_code_digest
    from pairlab.active.config import ActiveConfig

    registry.register_strategy("leaning_positive")(LeaningPositive)
    config = ActiveConfig(task="toy", strategy="leaning_positive")
    before = run_code_digest(config)
    registry.register_strategy("leaning_positive")(Uncertainty)
    assert isinstance(registry.make_strategy("leaning_positive").base, Uncertainty)
    assert run_code_digest(config) != before
    registry.register_strategy("leaning_positive")(LeaningPositive)
    assert run_code_digest(config) == before
