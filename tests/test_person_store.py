"""SessionStore's queries against a plain-Python reading of the same answer rows."""

import multiprocessing
import time
from dataclasses import replace

import numpy as np
import pytest

from pairlab.annotators.person import NO_ANSWER, UNANSWERED, WITHDRAWN, SessionStore


def reference(store):
    """(first unanswered pair id or None, counts) from the rows themselves."""
    latest = dict(zip(store.history()["pair_id"], store.history()["label"]))
    queue = store.queue().sort_values(["kind"], key=lambda k: k == "spare", kind="stable")
    queue = queue["pair_id"].tolist()  # a round's own pairs before the spares
    open_ = [p for p in queue if latest.get(p, WITHDRAWN) == WITHDRAWN]
    labels = [v for v in latest.values() if v != WITHDRAWN]
    counts = {
        "labels": sum(v in (0, 1) for v in labels),
        "positives": labels.count(1),
        "unsure": labels.count(NO_ANSWER),
        "queued": len(open_),
    }
    return (open_[0] if open_ else None), counts


def test_next_pair_and_counts_follow_answers_and_undos(tmp_path):
    store = SessionStore(tmp_path / "s.sqlite")
    rng = np.random.default_rng(0)
    store.post(0, rng.permutation(60), ["batch", "audit", "spare"] * 20)
    for step in range(150):
        if step == 70:
            store.post(1, 100 + np.arange(20), "batch")
        first, counts = reference(store)
        item = store.next_pair()
        assert (item and item.pair_id) == first and store.counts() == counts, step
        if item is None or rng.random() < 0.2:
            store.undo(annotator="a")
        else:
            store.answer(item.pair_id, int(rng.choice([1, 0, NO_ANSWER])), annotator="a")
    store.close()


def test_undo_takes_back_only_the_annotators_own_answers(tmp_path):
    store = SessionStore(tmp_path / "s.sqlite")
    store.post(0, [1, 2, 3], "batch")
    store.answer(1, 1, annotator="ann")
    store.answer(2, 0, annotator="given")  # a label known before the session, written later
    assert store.undo(annotator="ann") == 1  # not pair 2, the latest row
    assert store.undo(annotator="ann") is None  # 1 is withdrawn: nothing of ann's is left
    assert store.answers([1, 2]).tolist() == [UNANSWERED, 0]
    store.answer(1, 0, annotator="bob")
    assert store.undo(annotator="ann") is None  # bob's answer is bob's to take back
    assert store.undo(annotator="bob") == 1
    store.close()


def test_spares_respect_one_to_one():
    """Issue 60: with one_to_one the spares skip the records of a labelled match, as the
    strategy's batch does (52 spares of a Walmart-Amazon session paired a matched record)."""
    from types import SimpleNamespace

    from pairlab.annotators.person import _spares
    from pairlab.data.pairs import PairSpace

    space = PairSpace(4, 5, symmetric=False)  # left 0-3, right 0-4: pair id = left * 5 + right
    candidates = np.array([1, 2, 6, 7, 12, 18], np.int64)  # (0,1) (0,2) (1,1) (1,2) (2,2) (3,3)
    state = SimpleNamespace(
        pool=SimpleNamespace(space=space),
        candidates=candidates,
        logits=np.zeros(len(candidates)),  # all as near the boundary: queue order
        cosine=None,
        labelled=np.array([0], np.int64),  # (0, 0): a match
        labels=np.array([1]),
    )
    shown = np.array([12], np.int64)
    assert _spares(state, shown, 10).tolist() == [1, 2, 6, 7, 18]
    # left record 0 is matched: (0,1) and (0,2) go; right record 0 is in no candidate
    assert _spares(state, shown, 10, one_to_one=True).tolist() == [6, 7, 18]


def test_the_queue_is_topped_up_while_rounds_remain(tmp_path):
    """Issue 60: 64 spares lasted a minute of a 16-25 minute round. With ``spares=None`` the
    worker keeps ``low`` pairs to answer queued, from the reserve (best first, none queued
    twice; one_to_one: none of a matched record), and stops once the last round is answered."""
    from pairlab.annotators.person import PersonAnnotator
    from pairlab.data.pairs import PairSpace

    store = SessionStore(tmp_path / "s.sqlite")
    space = PairSpace(4, 5, symmetric=False)  # pair id = left * 5 + right
    person = PersonAnnotator(store, spares=None, audits=(0, 0), one_to_one=True, space=space)
    person.reserve = np.array([12, 1, 2, 6, 7, 18, 3], np.int64)
    store.post(1, [12, 0], "batch")
    assert person.top_up(low=2, chunk=3) == 0  # two to answer: enough
    store.answer(0, 1, annotator="person")  # (0, 0) a match: left 0 and right 0 are taken
    assert person.top_up(low=2, chunk=3) == 3
    assert store.queue()["pair_id"].tolist() == [12, 0, 6, 7, 18]  # 12 queued; 1, 2, 3 of left 0
    assert person.top_up(low=2, chunk=3) == 0
    for pair in (12, 6, 7):
        store.answer(pair, 0, annotator="person")
    person.round, person.closed = 2, True  # the last round's pairs are answered
    assert person.top_up(low=2, chunk=3) == 0
    store.close()


def test_pages_hold_their_pair_until_answered_or_the_lease_ends(tmp_path):
    store = SessionStore(tmp_path / "s.sqlite")
    store.post(0, [10, 11, 12], "batch")
    a = store.next_pair(page="a", annotator="ann", lease=60)
    b = store.next_pair(page="b", annotator="bo", lease=0.2)
    assert (a.pair_id, b.pair_id) == (10, 11)
    assert store.next_pair(page="a", annotator="ann").pair_id == 10  # asked again: the same
    store.answer(10, 1, annotator="ann")
    assert store.next_pair(page="a", annotator="ann").pair_id == 12  # 11 is b's
    assert store.next_pair(page="c", annotator="cy") is None  # 11 and 12 are held
    time.sleep(0.3)  # b's lease ends: its pair goes to the next page that asks
    assert store.next_pair(page="c", annotator="cy").pair_id == 11
    store.release(annotator="ann")  # ann's new page takes over ann's pairs
    assert store.next_pair(page="a2", annotator="ann").pair_id == 12
    assert store.annotators() == {"ann": 1}


def claim_all(path, page: str, out) -> None:
    """Claim and answer pairs as one page until none is left; ``out`` gets the pairs."""
    store, got = SessionStore(path), []
    while (item := store.next_pair(page=page, annotator=page)) is not None:
        got.append(item.pair_id)
        store.answer(item.pair_id, 1, annotator=page)
    out.put(got)


def test_pages_in_four_processes_never_get_one_pair(tmp_path):
    path = tmp_path / "s.sqlite"
    SessionStore(path).post(0, np.arange(200), "batch")
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    workers = [context.Process(target=claim_all, args=(path, f"p{i}", out)) for i in range(4)]
    for worker in workers:
        worker.start()
    got = [out.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    pairs = np.concatenate(got)
    assert len(pairs) == 200 and len(np.unique(pairs)) == 200, [len(g) for g in got]
    assert len(SessionStore(path).history()) == 200  # one answer each: none asked twice


def test_agreement_pairs_go_to_two_people_and_a_tie_to_a_third(tmp_path):
    from pairlab.annotators.person import agreement_pairs

    ids = np.arange(400)
    twice = agreement_pairs(ids, 0.25)
    assert 60 < len(twice) < 140 and np.array_equal(twice, agreement_pairs(ids[::-1], 0.25)[::-1])
    store = SessionStore(tmp_path / "s.sqlite")
    once, double = int(np.setdiff1d(ids, twice)[0]), int(twice[0])
    store.post(0, [once, double], "batch", agreement=0.25)
    for pair in (once, double):
        assert store.next_pair(annotator="ann").pair_id == pair
        store.answer(pair, 1, annotator="ann")
    assert store.next_pair(annotator="ann") is None  # never a pair she answered
    assert store.next_pair(annotator="bo").pair_id == double  # the agreement pair, once more
    store.answer(double, 0, annotator="bo")
    assert store.answers([once, double]).tolist() == [1, NO_ANSWER]  # a tie: unsure for now
    assert store.next_pair(annotator="bo") is None
    assert store.next_pair(annotator="cy").pair_id == double  # a third person settles it
    store.answer(double, 0, annotator="cy")
    assert store.answers([double]).tolist() == [0] and store.next_pair(annotator="dee") is None
    store.undo(annotator="cy")  # her answer withdrawn: the tie is back
    assert store.answers([double]).tolist() == [NO_ANSWER]


def test_agreement_is_cohens_kappa_with_its_interval(tmp_path):
    from sklearn.metrics import cohen_kappa_score

    store = SessionStore(tmp_path / "s.sqlite")
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 60)
    b = np.where(rng.random(60) < 0.8, a, 1 - a)  # agrees 80% of the time
    for pair, (x, y) in enumerate(zip(a, b)):
        store.answer(pair, int(x), annotator="ann")
        store.answer(pair, int(y), annotator="bo")
    store.answer(99, 1, annotator="ann")  # answered once: not compared
    found = store.agreement()
    assert found["pairs"] == 60
    assert found["kappa"] == pytest.approx(cohen_kappa_score(a, b))
    low, high = found["kappa_ci"]
    assert low < found["kappa"] < high and 0.1 < high - low < 0.6
    disagree = found["disagree"]
    assert sorted(disagree["pair_id"]) == list(np.flatnonzero(a != b))
    assert set(disagree["label"]) == {NO_ANSWER}  # ties, each waiting for a third person


def test_a_team_keeps_as_many_pairs_queued_as_it_answered_in_the_last_half_minute(tmp_path):
    """Issue 58: three people answer a pair every 3 s each; twelve queued pairs last 12 s."""
    from pairlab.annotators.person import PersonAnnotator

    store = SessionStore(tmp_path / "s.sqlite")
    person = PersonAnnotator(store, spares=None, audits=(0, 0))
    person.reserve = np.arange(1000, 1200, dtype=np.int64)
    store.post(1, np.arange(60), "batch")
    for pair in range(40):
        store.answer(pair, 0, annotator=f"p{pair % 3}")
    assert store.answered_since(time.time() - 30) == 40
    assert person.top_up() == 40  # 20 left to answer, fewer than the 40 of the last 30 s
    assert store.counts()["queued"] == 60 and person.top_up() == 0
    assert person.top_up(pace=0.0) == 0  # one person's pace: 12 are enough


def recording_audit():
    """``(drawn, audit)``: an audit function that draws pairs 500.. and records in ``drawn`` each
    call's round, size, and the state's labelled and held-out pairs."""
    drawn = []

    def audit(round, state, batch, n):
        drawn.append((round, n, state.labelled.tolist(), state.held_out.tolist()))
        return np.arange(500, 500 + n, dtype=np.int64), np.zeros(n, np.int64)

    return drawn, audit


@pytest.mark.parametrize("race", [0, 1])
def test_spares_spend_the_budget_and_the_audit_comes_before_a_wait(tmp_path, race):
    """Issue 58: a team answering spares while the model trains spends the budget (the answers
    given, the audit's included) in fewer rounds. The spares stop a pair short of it; where the
    answers of a round's time would reach that, the audit pairs still to come are posted at the
    round's end (under its model, as the next round's), so the pages answer them while the last
    round embeds; that round asks what is left and withdraws the spares nobody holds. A spare a
    page takes between the last round's size and its posting comes off the audit (a team of 3 in
    rounds of 32 asked 1,410 of 1,408)."""
    from types import SimpleNamespace

    from pairlab.active.strategies import RoundState
    from pairlab.annotators.person import PersonAnnotator

    store = SessionStore(tmp_path / "s.sqlite")
    drawn, audit = recording_audit()
    person = PersonAnnotator(store, spares=None, audits=(0, 2, 2, 2), audit=audit, budget=40)
    assert person.room(1, 10) == 10  # 40 less the 6 audit pairs to come
    pool = SimpleNamespace(space=None)
    state = RoundState(1, pool, np.empty(0, np.int64), 40, None, candidates=np.arange(2000, 2010))
    person.start_round(1, state, np.arange(10))  # round 1: no audit
    person.reserve = np.arange(1000, 1100, dtype=np.int64)
    person.since = time.time() - 60
    for pair in range(10):
        store.answer(pair, 0, annotator="ann")
    person.annotate(SimpleNamespace(space=SimpleNamespace(check=lambda ids: None)), np.arange(10))
    assert drawn == []  # 10 answers in the round's time: the budget leaves 23 to spares
    for _ in range(3):
        person.top_up(low=30, chunk=30)
    assert store.spent()["free"] == 24  # 40 - 10 answered - 6 audit pairs to come
    for pair in range(1000, 1020):
        store.answer(pair, 1, annotator="bo")
    assert person.top_up(low=30, chunk=30) == 0
    page = store.next_pair(annotator="cy", page="cy")  # a page holds one spare
    assert page.kind == "spare" and store.spent()["held"] == 1
    assert person.room(2, 10) == 3  # 40 - 30 answered - 1 held - 6 audit pairs to come
    person.since = time.time() - 60  # round 2: 3 pairs, while 30 answers came in its time
    if race:  # between the batch's size and its posting, a second page takes a spare
        assert store.next_pair(annotator="di", page="di").kind == "spare"
    person.start_round(2, state, np.arange(20, 23))
    audit = 6 - race  # the last round: all the audit to come, within the budget
    assert person.closed and drawn == [(2, audit, [], [])]
    queue = store.queue()
    assert (queue["kind"] == "spare").sum() == 21 + race  # 20 answered, 1 held; withdrawn: 2
    held = {"held": 1 + race, "free": 0, "audit": audit}
    assert store.spent() == {"answered": 30, "asked": 3 + audit, **held}  # 40: the budget
    assert person.top_up(low=30, chunk=30) == 0
    store.close()


def test_a_last_audit_drawn_short_leaves_no_wait_for_the_final_model(tmp_path):
    """Walmart-Amazon seed 1 (a team in rounds of 64): the last round's audit drew 89 of its 90
    pairs (the strata's allocation), and the pages waited 192 s for the final model to draw the
    one left. What the budget leaves goes to the round's candidates at once; after the rounds
    no audit pair is drawn beyond the budget."""
    from types import SimpleNamespace

    from pairlab.active.strategies import RoundState
    from pairlab.annotators.person import PersonAnnotator

    store = SessionStore(tmp_path / "s.sqlite")
    short = lambda round, state, batch, n: (np.arange(500, 500 + n - 1), np.zeros(n - 1, int))  # noqa: E731
    person = PersonAnnotator(store, spares=None, audits=(0, 4), audit=short, budget=20)
    candidates = np.array([3, 20, 21, 22, 23], np.int64)
    logits = np.array([0.0, 5.0, -0.5, 0.2, 9.0])  # nearest the boundary: 3 (queued), 22, 21
    state = RoundState(2, SimpleNamespace(space=None), np.arange(10), 20, None)
    state = replace(state, candidates=candidates, cosine=np.zeros(5), logits=logits)
    store.post(1, np.arange(10), "batch")
    for pair in range(10):
        store.answer(pair, pair % 2, annotator="ann")
    assert person.room(2, 64) == 6  # 20 - 10 answered - 4 audit pairs to come
    person.start_round(2, state, np.arange(30, 36))
    queue = store.queue()
    assert person.closed and (queue["kind"] == "audit").sum() == 3  # one short
    assert queue["pair_id"].tolist()[-1] == 22 and store.spent()["asked"] == 10  # the budget
    assert person.last_audit(replace(state, round=3)) == 0  # nothing beyond it
    store.close()


def test_the_audit_to_come_is_posted_when_a_rounds_answers_would_spend_the_spares(tmp_path):
    """The audit pairs are drawn under the round's model outside every pair queued."""
    from types import SimpleNamespace

    from pairlab.active.strategies import RoundState
    from pairlab.annotators.person import PersonAnnotator

    store = SessionStore(tmp_path / "s.sqlite")
    drawn, audit = recording_audit()
    person = PersonAnnotator(store, spares=None, audits=(0, 2, 2, 2), audit=audit, budget=40)
    pool = SimpleNamespace(space=SimpleNamespace(check=lambda ids: None))
    state = RoundState(1, pool, np.empty(0, np.int64), 40, None)
    person.start_round(1, state, np.arange(10))
    store.post(1, [1000, 1001], "spare")
    for pair in [*range(10), 1000]:
        store.answer(pair, pair % 2, annotator="ann")  # 11 answers in the round's time
    person.since = time.time() - 60
    person.reserve = np.arange(1002, 1100, dtype=np.int64)
    person.top_up(low=30, chunk=30)  # 40 - 11 answered - 1 queued - 6 to come: 22 more
    for pair in range(1002, 1012):
        store.answer(pair, 0, annotator="ann")  # 21 answers now in the round's time
    person.annotate(pool, np.arange(10))  # 21 answers in its time, none left to spares: audit
    labelled = [*range(10), 1000, *range(1002, 1012)]
    assert drawn == [(2, 6, labelled, [*range(10), *range(1000, 1024)])]
    queue = store.queue()
    assert (queue.loc[queue["kind"] == "audit", "round"] == 2).sum() == 6
    assert person.room(2, 20) == 13  # 40 - 21 answered - 6 asked (the 12 spares queued aside)
    assert person.top_up(low=30, chunk=30) == 0  # the spares queued fill the budget
    store.close()


def test_an_audit_no_round_could_draw_comes_under_the_final_model(tmp_path):
    """A team faster than round 1's embedding spends the budget on spares before any model is
    trained (round 1 only trains): the audit still to come is drawn under the final model,
    outside every answered pair, so every answer of the budget is asked; once only."""
    from types import SimpleNamespace

    from pairlab.active.strategies import RoundState
    from pairlab.annotators.person import PersonAnnotator

    store = SessionStore(tmp_path / "s.sqlite")
    drawn, audit = recording_audit()
    person = PersonAnnotator(store, spares=None, audits=(0, 2), audit=audit, budget=16)
    store.post(1, np.arange(14), "spare")
    for pair in range(14):
        store.answer(pair, pair % 2, annotator="ann")
    assert person.room(1, 8) == 0  # 16 less 14 answered less the 2 audit pairs to come
    final = RoundState(2, SimpleNamespace(space=None), np.empty(0, np.int64), 16, None)
    assert person.last_audit(final) == 2
    assert drawn == [(2, 2, list(range(14)), list(range(14)))]
    assert store.spent() == {"answered": 14, "asked": 2, "held": 0, "free": 0, "audit": 2}
    assert person.last_audit(final) == 0  # posted: none to come
    store.close()


def test_an_audit_no_model_could_draw_leaves_its_labels_to_the_candidates(tmp_path):
    """Every answer a match: no model can rank the audit's strata (one class), so the audit
    posts nothing, and the session finished 2 answers short of its budget (notebook 10's lab
    test). The rest goes to the final model's candidates nearest its boundary, outside every
    queued pair; once."""
    from types import SimpleNamespace

    from pairlab.active.strategies import RoundState
    from pairlab.annotators.person import PersonAnnotator

    store = SessionStore(tmp_path / "s.sqlite")
    none = lambda round, state, batch, n: (np.empty(0, np.int64),) * 2  # noqa: E731 (one class)
    person = PersonAnnotator(store, spares=None, audits=(0, 2), audit=none, budget=16)
    store.post(1, np.arange(14), "batch")
    for pair in range(14):
        store.answer(pair, 1, annotator="ann")
    candidates = np.array([3, 20, 21, 22, 23], np.int64)
    logits = np.array([0.0, 5.0, -0.5, 0.2, 9.0])  # nearest the boundary: 3 (queued), 22, 21
    pool = SimpleNamespace(space=None)
    final = RoundState(2, pool, np.empty(0, np.int64), 16, None, candidates=candidates)
    final = replace(final, cosine=np.zeros(5), logits=logits)
    assert person.last_audit(final) == 0
    assert person.spend_rest(final) == 2
    queue = store.queue()
    assert queue["pair_id"].tolist()[-2:] == [22, 21] and set(queue["kind"]) == {"batch"}
    assert store.spent() == {"answered": 14, "asked": 2, "held": 0, "free": 0, "audit": 0}
    assert person.spend_rest(final) == 0  # a restarted worker: none left
    store.close()


def test_no_batch_may_pick_a_pair_answered_or_held_for_the_audit(tmp_path):
    """A team answers spares while a round embeds the records; the round's batch, chosen after,
    must not pick them: it would ask nothing and spend the budget (a Walmart-Amazon team
    session ended 52 answers short of 1,408 so). Queued spares not yet answered stay free, and
    a round's own pairs, which the round picks again after a restart."""
    from pairlab.annotators.person import PersonAnnotator

    store = SessionStore(tmp_path / "s.sqlite")
    person = PersonAnnotator(store, spares=None, audits=(0, 2), budget=40)
    store.post(1, [10, 11, 12], "spare")
    store.post(2, [20, 21], "audit")
    store.post(2, [30], "batch")
    for pair, label in ((11, 1), (12, -1), (30, 0)):  # unsure is an answer, too
        store.answer(pair, label, annotator="ann")
    assert person.held_out().tolist() == [11, 12, 20, 21]  # round 2's own pair: picked again
    store.close()


def test_the_reserve_is_ranked_by_the_model_just_trained(tmp_path):
    """Issue 58: a team's spares while the next round embeds come from the newest model, which
    scores only the reserve's next pairs (their records embedded: seconds, not minutes)."""
    from pairlab.annotators.person import PersonAnnotator

    store = SessionStore(tmp_path / "s.sqlite")
    person = PersonAnnotator(store, spares=None, audits=(0, 0))
    person.reserve = np.arange(10, 20, dtype=np.int64)
    store.post(1, [12], "spare")
    scored = []

    def score(ids):
        scored.append(ids.tolist())
        return ids - 15.0  # a logit: 15 on the boundary

    person.trained(score, shortlist=5)
    assert scored == [[10, 11, 13, 14, 15]]  # the queued pair aside
    assert person.reserve.tolist() == [15, 14, 13, 11, 10, 16, 17, 18, 19]
    store.post(1, person.reserve, "spare")
    person.trained(score, shortlist=5)  # every pair of the reserve queued: nothing to score
    person.closed, person.reserve = True, np.arange(30, 40)  # the budget asked: no more spares
    person.trained(score, shortlist=5)
    assert len(scored) == 1
    store.close()
