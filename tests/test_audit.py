"""The audit over all pairs (pairlab.evaluation.audit, audit_prior, audit_estimate): strata that
cover every pair exactly once, draws that stay in their stratum, estimates that are exact when
the audit is a census, and intervals that cover on a synthetic pool with known positives."""

import numpy as np
import pytest
from conftest import clustered_pool

from pairlab.data.pairs import PairSpace, as_id_set, isin_sorted
from pairlab.evaluation.audit import draw_audit, stratify
from pairlab.evaluation.audit_estimate import (
    combine_rounds,
    coverage,
    estimate,
    estimate_wald,
    replay_combined,
    replay_coverage,
)
from pairlab.evaluation.audit_prior import allocate, expected_variance, rate_prior


def asymmetric_pool(n_left=40, n_right=600, dim=8, noise=0.5, seed=0):
    """Left items with 0-2 matching right items placed near them; the rest of the right side
    is unrelated. Returns (space, left, right, positives)."""
    rng = np.random.default_rng(seed)
    left = rng.normal(size=(n_left, dim))
    owner = np.where(rng.random(n_right) < 0.1, rng.integers(0, n_left, n_right), -1)
    right = np.where(
        owner[:, None] >= 0, left[np.maximum(owner, 0)], rng.normal(size=(n_right, dim))
    )
    right = right + noise * rng.normal(size=right.shape)
    left, right = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in (left, right))
    space = PairSpace(n_left, n_right, False)
    r = np.flatnonzero(owner >= 0)
    return (
        space,
        left.astype(np.float32),
        right.astype(np.float32),
        as_id_set(space.encode(owner[r], r)),
    )


def symmetric_pool(n_items=300, seed=0):
    pool, emb = clustered_pool(n_items=n_items, seed=seed)
    return pool.space, emb, None, pool.positives


def fitted_probability(space, left, right, positives):
    """A logistic calibration fitted on every pair (the pool is small): well calibrated."""
    from sklearn.linear_model import LogisticRegression

    ids = np.arange(space.n_pairs)
    i, j = space.decode(ids)
    right = left if right is None else right
    x = np.einsum("nd,nd->n", left[i].astype(np.float64), right[j].astype(np.float64))
    fit = LogisticRegression(C=1e4, max_iter=1000).fit(x[:, None], isin_sorted(ids, positives))
    a, b = float(fit.intercept_[0]), float(fit.coef_[0, 0])
    return lambda s: 1.0 / (1.0 + np.exp(-(a + b * np.asarray(s, dtype=np.float64))))


POOLS = {"symmetric": symmetric_pool, "asymmetric": asymmetric_pool}


@pytest.fixture(scope="module", params=sorted(POOLS))
def pool(request):
    space, left, right, positives = POOLS[request.param]()
    return space, left, right, positives, fitted_probability(space, left, right, positives)


def strata_of(pool, **options):
    space, left, right, _, probability = pool
    options = {"first": 20, "n_strata": 8, "max_enumerated": 2000, **options}
    return stratify(space, left, right, probability=probability, **options)


# --- strata ------------------------------------------------------------------------------------


@pytest.mark.parametrize("max_enumerated", [500, 10**9])
def test_sizes_are_the_exact_counts_of_every_pair(pool, max_enumerated):
    """Fails if the blockwise stream misses, repeats or misplaces a pair (a symmetric block
    counting (i, j) and (j, i), a self pair, a block edge), or if a stratum's boundary falls
    between the stream's and the per-pair scorer's arithmetic."""
    strata = strata_of(pool, max_enumerated=max_enumerated, block_elements=3000)
    every = strata.stratum_of(np.arange(strata.space.n_pairs))
    assert strata.sizes.sum() == strata.space.n_pairs
    assert strata.sizes.tolist() == np.bincount(every, minlength=strata.n_strata).tolist()
    for h in range(strata.enumerated):
        assert (strata.stratum_of(strata.members(h)) == h).all()
        assert len(strata.members(h)) == strata.sizes[h]
    assert (np.diff(strata.lower) < 0).all()


def test_top_strata_are_small_and_rich_and_the_bottom_huge(pool):
    """Fails if the geometric boundaries do not put the positives in small top strata."""
    positives = pool[3]
    strata = strata_of(pool)
    rate = np.bincount(strata.stratum_of(positives), minlength=strata.n_strata) / np.maximum(
        strata.sizes, 1
    )
    assert strata.sizes[0] < strata.sizes[-1] / 100
    assert rate[0] > 20 * rate[-1]


def test_a_symmetric_space_has_each_unordered_pair_once():
    """Every code of the symmetric space appears in the enumerated strata exactly once: no
    self pair, no (j, i) twin."""
    space, left, _, positives = symmetric_pool(n_items=120)
    strata = stratify(
        space,
        left,
        probability=lambda s: (np.asarray(s) + 1) / 2,
        first=10,
        n_strata=5,
        max_enumerated=10**9,
    )
    assert strata.enumerated == strata.n_strata
    assert np.sort(strata.top_ids).tolist() == list(range(space.n_pairs))


def test_the_threshold_is_a_boundary(pool):
    """Fails if the model's threshold splits a stratum: precision would not be a stratum sum."""
    strata = strata_of(pool, threshold=0.7)
    assert 0.7 in strata.lower.tolist()
    assert strata.predicted.tolist() == (strata.lower >= 0.7).tolist()


# --- draws -------------------------------------------------------------------------------------


def test_draws_stay_in_their_stratum_never_repeat_and_skip_labelled_pairs(pool):
    space, positives = pool[0], pool[3]
    strata = strata_of(pool, max_enumerated=500)  # both enumerated and rejection strata
    labelled = as_id_set(np.r_[positives[::2], np.arange(0, space.n_pairs, 97)])
    labels = isin_sorted(labelled, positives).astype(int)
    for seed in range(5):
        audit = draw_audit(strata, 60, labelled, labels, seed=seed)
        assert len(audit.ids) == 60 == len(np.unique(audit.ids))
        assert (strata.stratum_of(audit.ids) == audit.stratum).all()
        assert not isin_sorted(audit.ids, labelled).any()
        assert (audit.allocation <= audit.unlabelled).all()
        assert audit.known.sum() == labels.sum()


def test_rejection_draws_are_uniform_within_a_stratum():
    """Each pair of a streamed stratum is drawn equally often (chi-square); fails for a sampler
    that favours low ids or first hits of a batch."""
    from scipy.stats import chisquare

    space, left, right, positives = asymmetric_pool(n_left=20, n_right=100)
    strata = stratify(
        space,
        left,
        right,
        probability=lambda s: np.full(np.shape(s), 0.01),
        first=10,
        n_strata=4,
        max_enumerated=50,
    )
    h = strata.n_strata - 2  # a streamed stratum
    members = np.flatnonzero(strata.stratum_of(np.arange(space.n_pairs)) == h)
    assert h >= strata.enumerated and 20 < len(members) < 1500
    others = np.setdiff1d(np.arange(space.n_pairs), members)  # labelled: the audit must go to h
    rng = np.random.default_rng(0)
    counts = np.zeros(len(members))
    for _ in range(300):
        audit = draw_audit(strata, 10, others, np.zeros(len(others), int), seed=rng)
        assert (audit.stratum == h).all()
        counts += isin_sorted(members, audit.ids)
    assert counts.sum() > 0
    assert chisquare(counts).pvalue > 1e-3


def test_allocation_follows_neyman_and_respects_caps_floor_and_prior():
    """Fails if the allocation ignores the rates (Neyman), the caps, the floor, or what the
    prior already knows."""
    m = np.array([100, 100, 10**6, 5])
    q = np.array([0.5, 0.01, 1e-6, 0.5])
    alloc = allocate(m, q, 60, floor=1)
    assert alloc.sum() == 60 and (alloc >= 1).all() and (alloc <= m).all()
    assert alloc[0] > alloc[1]  # the richer of two equal strata gets more (sqrt(q(1-q)))
    capped = allocate(np.array([10, 1000]), np.array([0.5, 1e-4]), 60)  # Neyman: 20 and 40
    assert capped.tolist() == [10, 50]  # the first capped at its unlabelled pairs
    known = allocate(m, q, 60, deviation_var=np.array([1e6, 1e6, 1e-9, 1e6]), floor=1)
    assert known[2] == 1  # a rate the prior already pins down gets only the floor


def test_a_shared_calibration_error_sends_the_audit_to_rich_strata():
    """With a level shift common to all strata, hits in a rich stratum inform the poor ones:
    the rich stratum gets more than it would with independent strata."""
    m, q = np.array([500, 50_000]), np.array([0.2, 0.002])
    belief = {
        "deviation_var": np.full(2, 3.0),
        "shared": np.ones((2, 1)),
        "shared_var": np.array([1.5]),
    }
    alone = allocate(m, q, 40, deviation_var=belief["deviation_var"])
    shared = allocate(m, q, 40, **belief)
    assert shared[0] > alone[0]
    assert expected_variance(shared, m, q, **belief) < expected_variance(alone, m, q, **belief)


# --- estimates ---------------------------------------------------------------------------------


def test_a_census_audit_is_exact_with_zero_width(pool):
    """Every unlabelled pair audited: the total, the recall of the found set and the model's
    precision and recall equal the truth, and each interval has zero width."""
    space, positives = pool[0], pool[3]
    strata = strata_of(pool, threshold=0.6)
    labelled = as_id_set(positives[::3])
    labels = np.ones(len(labelled), int)
    audit = draw_audit(strata, space.n_pairs - len(labelled), labelled, labels, seed=0)
    y = isin_sorted(audit.ids, positives).astype(int)
    tp = int(strata.predicted[strata.stratum_of(positives)].sum())
    n_pred = int(strata.sizes[strata.predicted].sum())
    for est in (
        estimate(audit, y, found=len(labelled), n_draws=200),
        estimate_wald(audit, y, found=len(labelled)),
    ):
        assert est["total"] == len(positives) and est["total_ci"] == [len(positives)] * 2
        assert est["recall_found"] == pytest.approx(len(labelled) / len(positives))
        assert est["recall_found_ci"][1] - est["recall_found_ci"][0] == pytest.approx(0)
        assert est["precision"] == pytest.approx(tp / n_pred)
        assert est["recall"] == pytest.approx(tp / len(positives))
        assert est["precision_ci"][1] - est["precision_ci"][0] == pytest.approx(0)


def test_labelled_pairs_count_as_observed(pool):
    """With every pair labelled the audit is empty and the estimate is the census count."""
    space, positives = pool[0], pool[3]
    strata = strata_of(pool)
    everything = np.arange(space.n_pairs)
    audit = draw_audit(
        strata, 0, everything, isin_sorted(everything, positives).astype(int), floor=0
    )
    est = estimate(audit, np.zeros(0, int), n_draws=100)
    assert est["total"] == len(positives) == est["found"] and est["recall_found_ci"] == [1.0, 1.0]


def test_audit_hits_raise_the_estimate_and_zeros_lower_it(pool):
    """Fails if the posterior ignores the labels (a prior-only estimate)."""
    strata = strata_of(pool)
    audit = draw_audit(strata, 80, seed=1)
    low = estimate(audit, np.zeros(80, int), n_draws=500)["total"]
    high = estimate(audit, np.ones(80, int), n_draws=500)["total"]
    assert low < high


def test_combined_rounds_equal_a_census_round():
    """A round with zero design variance (a census) gets all the weight."""
    space, left, right, positives = asymmetric_pool(n_left=10, n_right=60)
    probability = fitted_probability(space, left, right, positives)
    a = stratify(space, left, right, probability=probability, first=5, n_strata=4)
    shuffled = right[np.random.default_rng(0).permutation(len(right))]  # another model's strata
    b = stratify(space, left, shuffled, probability=probability, first=5, n_strata=4)
    small, census = draw_audit(a, 20, seed=0), draw_audit(b, space.n_pairs, seed=0)
    labels = [isin_sorted(x.ids, positives).astype(int) for x in (small, census)]
    out = combine_rounds([small, census], labels, found=3, n_draws=200)
    assert out["weights"] == [0.0, 1.0]
    assert out["total"] == len(positives) and out["total_ci"] == [len(positives)] * 2


def test_combined_rounds_are_never_surer_than_the_rounds_themselves(pool):
    """Two rounds of one design and the same answers: the combined interval is theirs. Fails if
    the rounds' draws were averaged as independent, which shrinks it by about 1/sqrt(2) as if
    their scores' errors did not repeat (many-to-many replays: 83% coverage, issue 59)."""
    audit = draw_audit(strata_of(pool), 60, seed=2)
    y = isin_sorted(audit.ids, pool[3]).astype(int)
    one = combine_rounds([audit], [y], found=40, n_draws=4000, seed=0)
    two = combine_rounds([audit, audit], [y, y], found=40, n_draws=4000, seed=0)
    width = [np.diff(out["total_ci"])[0] for out in (one, two)]
    assert width[1] == pytest.approx(width[0], rel=0.1), width  # independent: ~0.71x


def test_two_rounds_with_different_models_combine_and_cover():
    """Round 2 is stratified by another model (noisier embeddings) and drawn after round 1's
    pairs were labelled; the combined interval for the share found covers in most of 40 runs,
    and each round weighs 1 / its design variance (fixed at its draw). Fails if the rounds'
    designs were mixed up (round 1's labels read against round 2's strata) or weighted alike."""
    space, left, right, positives = asymmetric_pool(n_left=60, n_right=800, seed=3)
    noisy = right + 0.3 * np.random.default_rng(1).normal(size=right.shape).astype(np.float32)
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    models = [
        stratify(
            space,
            left,
            r,
            probability=fitted_probability(space, left, r, positives),
            first=20,
            n_strata=8,
            max_enumerated=2000,
        )
        for r in (right, noisy)
    ]
    ranked = np.argsort(-models[0].scorer(np.arange(space.n_pairs)))
    rng = np.random.default_rng(0)
    hits = []
    for _ in range(40):
        first = np.sort(ranked[:30])
        a1 = draw_audit(models[0], 20, first, isin_sorted(first, positives).astype(int), seed=rng)
        labelled = np.union1d(ranked[:80], a1.ids)
        labels = isin_sorted(labelled, positives).astype(int)
        a2 = draw_audit(models[1], 30, labelled, labels, seed=rng)
        y = [isin_sorted(a.ids, positives).astype(int) for a in (a1, a2)]
        found = int(labels.sum() + y[1].sum())
        out = combine_rounds([a1, a2], y, found=found, n_draws=1000, seed=rng)
        lo, hi = out["recall_found_ci"]
        hits.append(lo <= found / len(positives) <= hi)
    assert np.mean(hits) >= 0.85
    inverse = 1 / np.array([a1.design_variance, a2.design_variance])
    assert out["weights"] == pytest.approx((inverse / inverse.sum()).tolist())
    assert abs(out["weights"][0] - out["weights"][1]) > 0.05


def test_intervals_cover_on_a_well_calibrated_pool():
    """Coverage of the 95% interval for the share found, over fresh audits, is near 95% with
    informative, calibrated scores (fails if the interval is too narrow or biased); the
    interval is also well inside the trivial [found / pairs, 1] (the price of a prior that
    allows a miscalibrated tail: 0.45 wide with slope sd 0.3, 0.52 with 0.5)."""
    space, left, right, positives = asymmetric_pool(n_left=60, n_right=800, seed=3)
    probability = fitted_probability(space, left, right, positives)
    strata = stratify(
        space, left, right, probability=probability, first=20, n_strata=8, max_enumerated=2000
    )
    scores = strata.scorer(np.arange(space.n_pairs))
    labelled = as_id_set(np.argsort(-scores)[:60])  # static retrieval: the 60 top pairs
    result = coverage(strata, positives, labelled, 40, repeats=60, n_draws=1000)
    assert result["coverage"]["recall_found"] >= 0.85, result
    assert result["mean_width"]["recall_found"] < 0.6, result  # trivial: ~1; 0.52 with slope sd 0.5


def test_a_miscalibrated_prior_is_corrected_by_recalibration():
    """Scores calibrated 30x too low: trusting them ("calibrated") undercovers, the
    recalibrated prior learns the level from the audit's hits and covers."""
    space, left, right, positives = asymmetric_pool(n_left=60, n_right=800, seed=3)
    fitted = fitted_probability(space, left, right, positives)
    strata = stratify(
        space,
        left,
        right,
        probability=lambda s: fitted(s) / 30,
        first=20,
        n_strata=8,
        max_enumerated=2000,
    )
    labelled = as_id_set(np.argsort(-strata.scorer(np.arange(space.n_pairs)))[:60])
    runs = {
        prior: coverage(strata, positives, labelled, 60, repeats=40, prior=prior, n_draws=1000)[
            "coverage"
        ]["recall_found"]
        for prior in ("calibrated", "recalibrated")
    }
    assert runs["calibrated"] < 0.5 and runs["recalibrated"] >= 0.85, runs


def test_a_recorded_check_replays_to_the_same_coverage():
    """The per-stratum record of a coverage check replays it from counts alone: the frame is
    the truth's (positives per stratum add up), and hypergeometric counts give the same
    coverage, estimate and width as drawing pairs, within the noise of the repeats."""
    space, left, right, positives = asymmetric_pool(n_left=60, n_right=800, seed=3)
    fitted = fitted_probability(space, left, right, positives)
    strata = stratify(
        space,
        left,
        right,
        probability=lambda s: fitted(s) / 10,
        first=20,
        n_strata=8,
        max_enumerated=2000,
    )
    labelled = as_id_set(np.argsort(-strata.scorer(np.arange(space.n_pairs)))[:60])
    drawn = coverage(strata, positives, labelled, 30, repeats=200, n_draws=1000, seed=1)
    frame = drawn["strata"]
    assert sum(frame["known"]) + sum(frame["positives_unlabelled"]) == len(positives)
    assert (
        frame["unlabelled"]
        == (
            strata.sizes - np.bincount(strata.stratum_of(labelled), minlength=strata.n_strata)
        ).tolist()
    )
    replayed = replay_coverage(frame, 30, repeats=200, n_draws=1000, seed=2)
    assert replayed["truth"] == {k: drawn["truth"][k] for k in ("total", "recall_found")}
    assert replayed["audit_size"] == 30
    for key in ("total", "recall_found"):
        assert abs(replayed["coverage"][key] - drawn["coverage"][key]) < 0.1, (key, drawn, replayed)
        assert replayed["mean_estimate"][key] == pytest.approx(drawn["mean_estimate"][key], rel=0.1)
        assert replayed["mean_width"][key] == pytest.approx(drawn["mean_width"][key], rel=0.15)


def test_the_combined_replay_of_one_round_is_that_rounds_and_two_rounds_lie_between():
    """What a session shows is the estimate combined over its audit rounds: replayed for one
    recorded round it is that round's replay exactly; with a second round (another labelled
    set, the same truth) its interval is as wide as the rounds' own in between, not narrower
    than both as if their scores' errors were independent."""
    space, left, right, positives = asymmetric_pool(n_left=60, n_right=800, seed=3)
    fitted = fitted_probability(space, left, right, positives)
    strata = stratify(
        space, left, right, probability=fitted, first=20, n_strata=8, max_enumerated=2000
    )
    order = np.argsort(-strata.scorer(np.arange(space.n_pairs)))
    checks = [
        {
            "strata": coverage(strata, positives, as_id_set(order[:k]), 20, repeats=1, n_draws=100)[
                "strata"
            ],
            "audit_size": 20,
        }
        for k in (40, 80)
    ]
    one = replay_combined(checks[:1], repeats=50, seed=4, n_draws=500)
    alone = replay_coverage(checks[0]["strata"], 20, repeats=50, seed=4, n_draws=500)
    assert one["coverage"] == alone["coverage"] and one["mean_estimate"] == alone["mean_estimate"]
    small = replay_combined([{**checks[0], "audit_size": 5}], repeats=5, seed=4, n_draws=200)
    assert small["audit_pairs"] == 5  # fewer pairs than strata: no floor, as a session draws
    two = replay_combined(checks, repeats=50, seed=4, n_draws=500)
    assert two["audit_pairs"] == 40 and two["truth"]["recall_found"] > one["truth"]["recall_found"]
    last = replay_coverage(checks[1]["strata"], 20, repeats=50, seed=4, n_draws=500)
    widths = [out["mean_width"]["recall_found"] for out in (one, last)]
    assert 0.95 * min(widths) <= two["mean_width"]["recall_found"] <= 1.05 * max(widths), widths


# --- bad input ---------------------------------------------------------------------------------


def test_bad_input_is_named(pool):
    space, left, right, positives, probability = pool
    strata = strata_of(pool)
    bad_calls = [
        (lambda: stratify(space, left, right, probability=probability, n_strata=0), "n_strata"),
        (lambda: stratify(space, left[:-1], right, probability=probability), "embeddings must be"),
        (lambda: stratify(space, left, right, probability=lambda s: s * 0 + 2), "probability"),
        (
            lambda: stratify(space, left, right, probability=probability, threshold=np.nan),
            "threshold",
        ),
        (lambda: draw_audit(strata, 10, [5, 3], [0, 1]), "sorted, distinct"),
        (lambda: draw_audit(strata, 10, [3, 5], [0, 2]), "0 or 1"),
        (lambda: draw_audit(strata, 10, [3, 5], [0]), "equal length"),
        (lambda: draw_audit(strata, 10, [3, space.n_pairs], [0, 1]), "outside"),
        (lambda: draw_audit(strata, space.n_pairs + 1), "audit size"),
        (lambda: draw_audit(strata, 2, floor=1), "floor"),
        (lambda: draw_audit(strata, 10, prior="flat"), "prior must be one of"),
        (lambda: draw_audit(strata, 10, strength=0), "strength"),
        (lambda: estimate(draw_audit(strata, 10), [1, 0]), "one 0/1 per audited pair"),
        (lambda: estimate(draw_audit(strata, 10), np.zeros(10), found=-1), "found"),
        (lambda: estimate(draw_audit(strata, 10), np.zeros(10), level=1.5), "level"),
        (lambda: rate_prior([0.1], prior="uniform"), "prior must be one of"),
        (lambda: allocate([10, 10], [0.1], 5), "shapes"),
        (lambda: coverage(strata, positives, [], 10, method="exact"), "method"),
    ]
    for call, message in bad_calls:
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(TypeError, match="Audit"):
        estimate("audit", [1])


def test_a_sessions_coverage_table_is_of_the_shown_estimate():
    """pairlab.session.coverage_table pools, per budget, the coverage of what a session shows
    (its audit rounds combined, replayed) beside the round's own audit alone."""
    from types import SimpleNamespace

    from pairlab.session.comparison import coverage_table

    space, left, right, positives = asymmetric_pool(n_left=60, n_right=800, seed=3)
    fitted = fitted_probability(space, left, right, positives)
    strata = stratify(
        space, left, right, probability=fitted, first=20, n_strata=8, max_enumerated=2000
    )
    order = np.argsort(-strata.scorer(np.arange(space.n_pairs)))
    checks = []
    for r, k in ((2, 40), (3, 80)):
        check = coverage(strata, positives, as_id_set(order[:k]), 20, repeats=30, n_draws=300)
        checks.append({**check, "round": r, "labelled": k})
    session = SimpleNamespace(
        config=SimpleNamespace(schedule=lambda: [20, 20, 40]), coverage_checks=lambda: checks
    )
    table = coverage_table([session, session])
    assert sorted(table) == [40, 80]
    assert table[40]["sessions"] == 2 and table[40]["repeats"] == 60
    assert table[40]["round_covered"] == checks[0]["coverage"]["recall_found"]
    shown = replay_combined(checks, repeats=30, seed=[0, 3])
    assert table[80]["covered"] == shown["coverage"]["recall_found"]
    assert table[80]["mean_width"] == pytest.approx(shown["mean_width"]["recall_found"])
    # a session's checks record the prior they were drawn with, and the table replays under it
    assert checks[0]["prior"] == "recalibrated" and checks[0]["max_positives"] is None
    bounded = [{**c, "prior": "bounded", "max_positives": float(len(positives))} for c in checks]
    as_drawn = replay_combined(bounded, repeats=30, seed=[0, 3])
    named = replay_combined(
        checks, repeats=30, seed=[0, 3], prior="bounded", max_positives=float(len(positives))
    )
    assert as_drawn["mean_estimate"] == named["mean_estimate"]
    assert as_drawn["mean_estimate"] != shown["mean_estimate"]


def test_a_bound_on_the_positives_drops_the_prior_components_above_it(monkeypatch):
    """The replays' structural bound (``MAX_POSITIVES``: e.g. about one match a record) keeps
    only the components of the recalibrated prior expecting at most that many unlabelled
    positives; a flatter slope centre (``SLOPE_CENTRE``) moves the prior's tail up. Sessions
    use neither (the defaults)."""
    from pairlab.evaluation import audit_prior

    rates = np.array([0.8, 0.3, 1e-3, 1e-8, 1e-20])
    sizes = np.array([50, 200, 4_000, 1_000_000, 100_000_000])
    free = audit_prior.rate_prior(rates, sizes=sizes)
    expected = lambda p: (p.a / (p.a + p.b)) @ sizes  # noqa: E731
    monkeypatch.setattr(audit_prior, "MAX_POSITIVES", 2_000.0)
    bound = audit_prior.rate_prior(rates, sizes=sizes)
    assert len(bound.log_weight) < len(free.log_weight)
    assert expected(bound).max() <= 2_000.0 < expected(free).max()
    monkeypatch.setattr(audit_prior, "MAX_POSITIVES", None)
    monkeypatch.setattr(audit_prior, "SLOPE_CENTRE", -1.5)
    flatter = audit_prior.rate_prior(rates, sizes=sizes)
    assert (
        flatter.posterior(np.zeros(5, np.int64), np.zeros(5, np.int64)).mean()[-1]
        > (free.posterior(np.zeros(5, np.int64), np.zeros(5, np.int64)).mean()[-1])
    )


def test_the_bounded_prior_needs_its_bound_and_keeps_it_with_the_design(pool):
    """The ``"bounded"`` prior (a session's ``matches_per_record``): refused without a bound,
    its components hold at most that many unlabelled positives, and the drawn design keeps the
    bound so the estimate reads the same prior back."""
    from pairlab.evaluation import audit_prior

    rates = np.array([0.8, 0.3, 1e-3, 1e-8, 1e-20])
    sizes = np.array([50, 200, 4_000, 1_000_000, 100_000_000])
    with pytest.raises(ValueError, match="needs max_positives"):
        audit_prior.rate_prior(rates, prior="bounded", sizes=sizes)
    bounded = audit_prior.rate_prior(rates, prior="bounded", sizes=sizes, max_positives=500.0)
    assert ((bounded.a / (bounded.a + bounded.b)) @ sizes).max() <= 500.0
    positives = pool[3]
    strata = strata_of(pool)
    labelled = as_id_set(positives[::2])
    labels = np.ones(len(labelled), int)
    audit = draw_audit(strata, 40, labelled, labels, seed=0, prior="bounded", max_positives=80.0)
    assert audit.prior == "bounded" and audit.max_positives == 80.0
    est = estimate(audit, isin_sorted(audit.ids, positives).astype(int), found=len(labelled))
    assert est["total"] >= len(labelled)
    assert draw_audit(strata, 40, labelled, labels, seed=0).max_positives is None
