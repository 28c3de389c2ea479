"""The labelling session: the simulation's loop with a person (here a thread or the oracle)
answering through the session store."""

import threading
import time

import numpy as np
import pytest
from conftest import POOLS, VECTORS, FakeLearner

from pairlab.active.config import ActiveConfig
from pairlab.active.loop import ActiveRun
from pairlab.active.store import round_ids
from pairlab.annotators.person import SessionStore
from pairlab.data.items import Records
from pairlab.data.recordpool import record_pairs
from pairlab.io import ReadReport, to_json
from pairlab.metrics_files import check
from pairlab.session import LabelingSession, SessionSettings, compare_strategies
from pairlab.session.audit import SessionAudit
from pairlab.session.export import clusters, label_frame, precision_threshold
from pairlab.session.worker import Job, SessionRun, first_pairs, run_job

TRAIN = POOLS["train"]


def records() -> Records:
    texts = TRAIN.left_texts
    return Records(
        "toy",
        np.array([f"r{k}" for k in range(len(texts))], object),
        texts,
        ("text",),
        ReadReport(),
        {},
    )


def truth() -> tuple[np.ndarray, np.ndarray]:
    i, j = TRAIN.space.decode(TRAIN.positives)
    return np.array([f"r{k}" for k in i], object), np.array([f"r{k}" for k in j], object)


def oracle_toy() -> dict:
    """A session's options on the toy pool: the oracle answers, 3 rounds of 12, no audit."""
    return dict(
        annotator="oracle",
        oracle_pairs=truth(),
        batch=12,
        budget=36,
        candidate_m=6,
        audit_share=0.0,
        name="toy",
    )


def test_an_oracle_session_asks_the_pairs_notebook_03s_loop_asks(tmp_path):
    """One loop, not two: the session's rounds are ActiveRun's rounds with the same settings."""
    session = LabelingSession(records(), tmp_path / "s", **oracle_toy())
    session.run(learner=FakeLearner(VECTORS))
    fields = {k: v for k, v in session.config.to_dict().items() if k not in ("annotator", "task")}
    plain = ActiveRun(
        ActiveConfig(task="toy", **fields),
        {"train": session.pool},
        {},
        tmp_path / "plain",
        learner=FakeLearner(VECTORS),
    )
    plain.run()
    ours, theirs = round_ids(tmp_path / "s" / "run"), round_ids(tmp_path / "plain")
    assert len(ours) == len(theirs) == 3
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(np.sort(a), np.sort(b))
    counts = session.counts()
    assert counts["labels"] == 36 and counts["queued"] == 0
    assert counts["positives"] == int(np.isin(np.concatenate(ours), session.pool.positives).sum())


def test_a_one_to_one_session_never_asks_a_record_already_matched(tmp_path):
    """``one_to_one``: after a round, no later batch holds a record of a pair labelled a match
    in an earlier round; the rule keys the run apart, and the oracle comparison runs random
    labelling without it (random draws from the whole pool)."""
    options = oracle_toy()

    def asked_of_matched(folder) -> int:
        """Pairs of a later round holding a record matched in an earlier one."""
        rounds, asked = round_ids(folder / "run"), 0
        for k in range(1, len(rounds)):
            before = np.concatenate(rounds[:k])
            found = np.unique(np.concatenate(space.decode(before[np.isin(before, positives)])))
            assert len(found)  # the toy's first round finds matches
            i, j = space.decode(rounds[k])
            asked += int((np.isin(i, found) | np.isin(j, found)).sum())
        return asked

    session = LabelingSession(records(), tmp_path / "s", one_to_one=True, **options)
    space, positives = session.pool.space, session.pool.positives
    session.run(learner=FakeLearner(VECTORS))
    assert session.config.strategy_params == {"one_to_one": True}
    assert asked_of_matched(tmp_path / "s") == 0
    plain = LabelingSession(records(), tmp_path / "p", **options)
    assert plain.config.strategy_params == {}
    plain.run(learner=FakeLearner(VECTORS))
    assert asked_of_matched(tmp_path / "p") > 0  # without the rule the toy asks some
    table = compare_strategies(
        session, ["random", "static_retrieval"], learner=FakeLearner(VECTORS)
    )
    assert list(table.index) == ["uncertainty", "random", "static_retrieval"]


def test_a_session_trains_in_bf16_where_native_and_a_run_goes_on_in_its_own(tmp_path):
    """A team's rounds keep up when training runs in bfloat16 (twice as fast where the CPU does
    it natively); a folder whose run trained in fp32 goes on in fp32, not refused as changed,
    and ``train`` still chooses."""
    from pairlab.io import write_json
    from pairlab.models.training import native_bf16

    native = "bf16" if native_bf16() else "fp32"
    assert LabelingSession(records(), tmp_path / "s", **oracle_toy()).config.precision == native
    old = LabelingSession(records(), tmp_path / "o", **oracle_toy(), precision="fp32")
    write_json(tmp_path / "o" / "run" / "config.json", to_json(old.config.to_dict()))
    again = LabelingSession(records(), tmp_path / "o", **oracle_toy())
    assert again.config == old.config and again.config.precision == "fp32"
    again._ready_to_run()  # the folder's run and the settings agree: no error


def test_a_larger_budget_goes_on_from_the_last_round_and_other_changes_are_refused(tmp_path):
    """A person who wants more labels re-runs the cell with a larger budget: the finished run
    goes on, asking what one run with that budget asks (the rounds of 12, 12 then 12); an
    uneven rest keeps the finished rounds as they were; any other change is a clear error
    when the loop would run (before a worker starts), and a smaller budget too."""
    small = {**oracle_toy(), "budget": 24}
    LabelingSession(records(), tmp_path / "s", **small).run(learner=FakeLearner(VECTORS))
    grown = LabelingSession(records(), tmp_path / "s", **oracle_toy())
    assert grown.config.batches == (12, 12, 12)
    grown.run(learner=FakeLearner(VECTORS))
    whole = LabelingSession(records(), tmp_path / "w", **oracle_toy())
    whole.run(learner=FakeLearner(VECTORS))
    ours, theirs = round_ids(tmp_path / "s" / "run"), round_ids(tmp_path / "w" / "run")
    assert len(ours) == len(theirs) == 3
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(np.sort(a), np.sort(b))
    assert grown.counts()["labels"] == 36
    again = LabelingSession(records(), tmp_path / "s", **oracle_toy())  # reopened: no change
    assert again.config == grown.config and again.result() is not None

    odd = {**oracle_toy(), "budget": 18}  # rounds of 12 and 6, then 12 more: 12, 6, 12
    LabelingSession(records(), tmp_path / "o", **odd).run(learner=FakeLearner(VECTORS))
    more = LabelingSession(records(), tmp_path / "o", **{**odd, "budget": 30})
    assert more.config.batches == (12, 6, 12)
    more.run(learner=FakeLearner(VECTORS))
    assert more.counts()["labels"] == 30

    other = LabelingSession(records(), tmp_path / "s", one_to_one=True, **oracle_toy())
    assert other.counts()["labels"] == 36  # opened to look or export: nothing is checked
    with pytest.raises(ValueError, match=r"other settings \(differing in \['strategy_params'\]"):
        other.run(learner=FakeLearner(VECTORS))
    with pytest.raises(ValueError, match="a larger budget only"):
        LabelingSession(records(), tmp_path / "s", **small).run(learner=FakeLearner(VECTORS))


def test_the_budget_is_every_answer_the_audit_included(tmp_path):
    """``budget`` answers in all: the audit pairs come out of each round's pairs, not on top
    (a session asked for 1,408 labels asked 1,542 when they did); a larger budget goes on to
    the same count, and its rounds are those one session with that budget plans."""
    session = audited_session(tmp_path / "s")
    audit = session.store.queue().query("kind == 'audit'")
    assert len(audit) == 12 and session.counts()["labels"] == 48 == len(session.store.history())
    assert session.shown == (12, 12, 12, 12) and session.audits == (0, 4, 4, 4)
    assert session.config.batches == (12, 8, 8, 8) and session.result()["labels"] == 36

    small = {**oracle_toy(), "audit_share": 1 / 3, "budget": 30}  # shown 12, 12, 6
    grown = LabelingSession(records(), tmp_path / "g", **small)
    assert grown.audits == (0, 4, 2) and grown.config.batches == (12, 8, 4)
    grown.run(learner=FakeLearner(VECTORS))
    assert grown.counts()["labels"] == 30
    more = LabelingSession(records(), tmp_path / "g", **{**small, "budget": 54})
    assert more.shown == (12, 12, 6, 12, 12) and more.audits == (0, 4, 2, 4, 4)
    more.run(learner=FakeLearner(VECTORS))
    assert more.counts()["labels"] == 54


def test_bad_settings_are_errors_naming_the_value(tmp_path):
    for bad, needle in [
        ({"batch": 0}, "batch must be a positive integer, got 0"),
        ({"budget": 2.5}, "budget must be a positive integer, got 2.5"),
        ({"audit_share": 1.0}, r"audit_share must be a number in \[0, 1\), got 1.0"),
        ({"annotator": "robot"}, "annotator must be one of .*'robot'"),
        ({"spares": -1}, "spares must be a non-negative integer, got -1"),
        ({"matches_per_record": 0}, "matches_per_record must be > 0, got 0"),
    ]:
        with pytest.raises(ValueError, match=needle):
            SessionSettings(**bad)
        with pytest.raises(ValueError, match=needle):
            LabelingSession(records(), tmp_path / "bad", name="toy", **bad)
    settings = SessionSettings(batch=10, budget=25, audit_share=0.2)
    assert settings.rounds() == ((10, 10, 5), (0, 2, 1))
    assert settings.rounds(audited=False) == ((10, 10, 5), (0, 0, 0))
    session = LabelingSession(records(), tmp_path / "ok", name="toy", settings=settings)
    assert session.settings == settings
    assert session.config.batches == (10, 8, 4)


def test_record_use_counts_where_the_labelled_matches_sit(tmp_path):
    """``record_use`` against a count by hand over the session's answers: records in two
    matches, non-matches of matched records; the advice follows the counts and the setting."""
    from pairlab.session.session import one_to_one_advice
    from pairlab.session.worker import sentence

    session = LabelingSession(records(), tmp_path / "p", **oracle_toy())
    session.run(learner=FakeLearner(VECTORS))
    ids, labels = session.store.labelled()
    assert len(ids) == 36 and np.all(np.diff(ids) > 0)
    i, j = session.pool.space.decode(ids)
    matched = [r for a, b, y in zip(i, j, labels) if y == 1 for r in (a, b)]
    several = sum(1 for r in set(matched) if matched.count(r) > 1)
    spent = sum(1 for a, b, y in zip(i, j, labels) if y == 0 and (a in matched or b in matched))
    use = session.record_use()
    assert use["matches"] == int(labels.sum()) > 0
    assert (use["records_in_several"], use["non_matches_of_matched"]) == (several, spent)
    assert spent > 0  # the toy asks some without the rule

    one = {"matches": 40, "records_in_several": 0, "non_matches_of_matched": 7}
    assert one_to_one_advice(one, False) == "distinct_records"
    assert "one_to_one=True spends those labels" in sentence(
        {**one, "advice": "distinct_records"}, "one_to_one"
    )
    assert one_to_one_advice(one, True) == ""
    assert one_to_one_advice({**one, "matches": 5}, False) == ""  # too few to say
    many = {**one, "records_in_several": 3}
    assert one_to_one_advice(many, False) == ""
    assert one_to_one_advice(many, True) == "several_matches"
    assert "consider one_to_one=False" in sentence(
        {**many, "advice": "several_matches"}, "one_to_one"
    )
    assert sentence({**many, "advice": ""}, "one_to_one") == ""


def toy_loop(annotator: str) -> ActiveConfig:
    """The loop of a session on the toy pool: uncertainty, 3 rounds of 12, ``annotator``'s."""
    return ActiveConfig(
        task="toy",
        strategy="uncertainty",
        batches=(12, 12, 12),
        candidate_m=6,
        n_boot=2,
        curve=False,
        annotator={"kind": "person", "name": annotator},
    )


def person(store: SessionStore, pool, stop: threading.Event, answers: list, delay=0.0):
    """A simulated person: answers the next queued pair from the truth until ``stop``."""
    while not stop.is_set():
        item = store.next_pair()
        if item is None:
            time.sleep(0.01)
            continue
        label = int(pool.labels(np.array([item.pair_id]))[0])
        store.answer(item.pair_id, label, annotator="person", seconds=delay)
        answers.append(item)
        time.sleep(delay)


def test_a_person_labels_every_pair_once_and_spares_join_the_next_round(tmp_path):
    pool = record_pairs(records(), all_positives=truth(), name="toy")
    config = toy_loop("person")
    job = Job(config, pool, tmp_path, SessionSettings(spares=5))
    store = SessionStore(tmp_path / "labels.sqlite")
    stop, answers = threading.Event(), []
    thread = threading.Thread(target=person, args=(store, pool, stop, answers), daemon=True)
    thread.start()
    try:
        result = run_job(job, learner=FakeLearner(VECTORS))
    finally:
        stop.set()
        thread.join(5)
    asked = [a.pair_id for a in answers]
    assert len(asked) == len(set(asked)), "a pair was asked twice"
    history = store.history()
    assert len(history) == len(asked)  # one row per answer, none lost
    rounds = round_ids(tmp_path / "run")
    labelled = np.concatenate(rounds)
    assert len(labelled) == len(np.unique(labelled)) == result["labels"]
    assert result["labels"] >= 36  # the batches, plus the spares answered while the model trained
    queue = store.queue()
    answered_spares = queue[(queue["kind"] == "spare") & queue["pair_id"].isin(asked)]
    assert np.isin(answered_spares["pair_id"], labelled).all() or len(rounds) == 3


def test_a_team_faster_than_the_rounds_spends_the_budget_in_fewer_rounds(tmp_path):
    """Issue 58: the spares a team answers while the model trains spend the budget, too: the
    rounds ask what it has left, the last trains on every answer, and no answer goes beyond."""
    pool = record_pairs(records(), all_positives=truth(), name="toy")
    config = toy_loop("person")
    settings = SessionSettings(batch=12, budget=36, audit_share=0.0)
    store = SessionStore(tmp_path / "labels.sqlite")
    store.post(1, first_pairs(pool, 0, 12), "spare")  # as start() does
    stop, answers = threading.Event(), []
    thread = threading.Thread(target=person, args=(store, pool, stop, answers), daemon=True)
    thread.start()
    try:
        result = run_job(Job(config, pool, tmp_path, settings), learner=FakeLearner(VECTORS))
    finally:
        stop.set()
        thread.join(5)
    labelled = np.concatenate(round_ids(tmp_path / "run"))
    assert len(answers) == len(store.history()) <= 36
    assert len(labelled) == len(np.unique(labelled)) == result["labels"] == len(answers)
    assert len(result["records"]) < 3  # the spares answered took the third round's place


@pytest.mark.parametrize("truth_known", [True, False])
def test_a_simulated_team_checks_its_audits_coverage_where_the_truth_is_known(
    tmp_path, truth_known
):
    """A team simulated from the truth (benchmarks/person_pace.py) redraws each audit round's
    design against it, as an oracle session does; a real person's session, whose pool does not
    know the truth, has nothing to check against."""
    truth_pool = record_pairs(records(), all_positives=truth(), name="toy")
    pool = truth_pool if truth_known else record_pairs(records(), name="toy")
    settings = SessionSettings(batch=12, budget=36, audit_share=0.25, coverage=3, spares=0)
    job = Job(toy_loop("person"), pool, tmp_path, settings, audits=(0, 3, 3))
    store = SessionStore(tmp_path / "labels.sqlite")
    stop, answers = threading.Event(), []
    thread = threading.Thread(target=person, args=(store, truth_pool, stop, answers), daemon=True)
    thread.start()
    try:
        run_job(job, learner=FakeLearner(VECTORS))
    finally:
        stop.set()
        thread.join(5)
    audit = SessionAudit(tmp_path / "audit")
    checks = audit.coverage_rounds()
    assert audit.rounds(), "no audit was drawn: nothing to check"
    assert [c["round"] for c in checks] == (audit.rounds() if truth_known else [])
    assert all(c["repeats"] == 3 and 0 <= c["coverage"]["total"] <= 1 for c in checks)


def test_a_budget_spent_on_spares_ends_with_a_round_that_only_trains(tmp_path):
    """Where a team's spares spend the budget while a model trains, the next round chooses
    nothing and embeds nothing: it trains on those answers and ends the run."""
    from pairlab.annotators import Annotator

    pool = record_pairs(records(), all_positives=truth(), name="toy")
    spares = np.sort(first_pairs(pool, 0, 12))

    class Team(Annotator):
        name = "team"

        round = 0

        def room(self, round, n):
            self.round = round
            return n if round == 1 else 0  # the spares answered meanwhile spend the rest

        def annotate(self, pool, pair_ids):
            return pool.labels(pair_ids).astype(np.int8)

        def answered_beyond(self, labelled):  # answered while round 1's model trained
            ids = np.setdiff1d(spares, labelled) if self.round > 1 else spares[:0]
            return ids, pool.labels(ids).astype(np.int8)

        def trained(self, score):  # the next spares ranked by the model just trained
            scored.append(score(spares[:3]))

    config = toy_loop("team")
    scored = []
    run = SessionRun(config, {"train": pool}, {}, tmp_path, annotator=Team())
    run.learner = FakeLearner(VECTORS)
    result = run.run()
    first, last = result["records"]
    assert len(scored) == 2 and all(s.shape == (3,) and np.isfinite(s).all() for s in scored)
    assert last["batch"] == 0 and "embed" not in last["seconds"] and "train" in last["seconds"]
    labelled = np.concatenate(round_ids(tmp_path))
    assert result["labels"] == len(labelled) == len(np.union1d(labelled, spares))


def test_a_new_session_queues_its_first_pairs_before_any_embedding(tmp_path):
    """Issue 60: a person waited 17 minutes for round 1's embedding. start() first queues a
    batch of BM25 pairs (a random record each with its most similar), once: a begun session's
    queue goes on."""
    session = LabelingSession(records(), tmp_path, annotator="person", batch=12, budget=36)
    session._first_pairs()
    queue = session.store.queue()
    # one a record; two records whose best is each other give one pair
    assert 9 <= len(queue) <= 12 and set(queue["kind"]) == {"spare"} and set(queue["round"]) == {1}
    left, right = session.pool.space.decode(queue["pair_id"].to_numpy(np.int64))
    assert (left != right).all()
    session._first_pairs()
    assert len(session.store.queue()) == len(queue)  # once


def test_a_restarted_worker_asks_no_answered_pair_again(tmp_path):
    pool = record_pairs(records(), all_positives=truth(), name="toy")
    config = toy_loop("oracle")
    job = Job(config, pool, tmp_path, SessionSettings(annotator="oracle"))
    with pytest.raises(KeyboardInterrupt):
        run_job(job, learner=FakeLearner(VECTORS, crash_at_round=2))
    store = SessionStore(tmp_path / "labels.sqlite")
    before = store.history()
    assert len(before) == 24  # rounds 1 and 2 answered; round 2's model was being trained
    run_job(job, learner=FakeLearner(VECTORS))
    after = store.history()
    assert after["pair_id"].is_unique and len(after) == 36


def test_no_truth_no_oracle(tmp_path):
    with pytest.raises(ValueError, match="oracle_pairs"):
        LabelingSession(records(), tmp_path, annotator="oracle")
    session = LabelingSession(records(), tmp_path, batch=12, budget=24)
    with pytest.raises(RuntimeError, match="background"):
        session.run()
    with pytest.raises(ValueError, match="budget"):
        LabelingSession(records(), tmp_path / "b", batch=12, budget=10**9)


def test_precision_threshold_keeps_the_expected_precision():
    p = np.array([0.3, 0.99, 0.6, 0.95, 0.1, 0.9])
    assert precision_threshold(p, 0.9) == 0.9  # 0.99, 0.95, 0.9: mean 0.947; with 0.6: 0.86
    assert precision_threshold(p, 0.99) == 0.99
    assert precision_threshold(p, 0.999) == 1.0  # no set reaches it: nothing by the model
    with pytest.raises(ValueError, match="target precision"):
        precision_threshold(p, 0)


def test_clusters_are_connected_components_largest_first():
    pool = record_pairs(records(), name="toy")
    ids = pool.pair_ids(["r0", "r1", "r5"], ["r1", "r2", "r6"])  # {0, 1, 2}, {5, 6}
    table = clusters(pool, ids)
    by_id = table.set_index("id")
    assert by_id.loc[["r0", "r1", "r2"], "cluster"].nunique() == 1
    assert by_id.loc["r0", "cluster"] == 0 and by_id.loc["r0", "size"] == 3
    assert by_id.loc["r5", "cluster"] == by_id.loc["r6", "cluster"] == 1
    assert (table["size"] == 1).sum() == len(pool.left) - 5
    assert table["cluster"].nunique() == len(pool.left) - 3


def test_label_frame_holds_current_answers_with_audit_flags(tmp_path):
    pool = record_pairs(records(), name="toy")
    store = SessionStore(tmp_path / "labels.sqlite")
    ids = pool.pair_ids(["r0", "r3", "r7"], ["r1", "r4", "r8"])
    store.post(1, ids, ["batch", "audit", "batch"])
    store.answer(ids[0], 1, annotator="ann")
    store.answer(ids[1], 0, annotator="ann")
    store.undo(annotator="ann")
    store.answer(ids[1], 1, annotator="ann")
    store.answer(ids[2], -1, annotator="ann")
    frame = label_frame(pool, store)
    assert frame["pair_id"].tolist() == [ids[0], ids[1], ids[2]]
    assert frame["label"].tolist() == [1, 1, -1] and frame["audit"].tolist() == [False, True, False]
    assert frame[["left_id", "right_id"]].values.tolist() == [
        ["r0", "r1"],
        ["r3", "r4"],
        ["r7", "r8"],
    ]


def test_known_pairs_are_given_never_asked_and_trained_on_from_round_one(tmp_path):
    left, right = truth()
    session = LabelingSession(
        records(),
        tmp_path / "s",
        annotator="oracle",
        oracle_pairs=truth(),
        positives=(left[:3], right[:3]),
        negatives=(["r0"], ["r150"]),
        batch=12,
        budget=24,
        candidate_m=6,
        audit_share=0.0,
        name="toy",
    )
    given = session.store.history()
    assert len(given) == 4 and set(given["annotator"]) == {"given"}
    LabelingSession(
        records(),
        tmp_path / "s",
        annotator="oracle",
        oracle_pairs=truth(),
        positives=(left[:3], right[:3]),
        negatives=(["r0"], ["r150"]),
        batch=12,
        budget=24,
        candidate_m=6,
        audit_share=0.0,
        name="toy",
    )
    assert len(session.store.history()) == 4  # reopening gives them once
    learner = FakeLearner(VECTORS)
    result = session.run(learner=learner)
    first = round_ids(tmp_path / "s" / "run")[0]
    assert np.isin(session.pool.known_positives, first).all()
    assert learner.trained[0] == (1, 12 + 4)  # round 1 trains on its batch and the given pairs
    assert result["labels"] == 24 + 4


def test_no_estimate_until_an_audit_answer_per_stratum(tmp_path):
    session = LabelingSession(
        records(),
        tmp_path / "s",
        annotator="oracle",
        oracle_pairs=truth(),
        batch=12,
        budget=36,
        candidate_m=6,
        audit_share=0.25,
        name="toy",
    )
    session.run(learner=FakeLearner(VECTORS))
    queue = session.store.queue()
    audit = queue[queue["kind"] == "audit"]
    assert len(audit) == 2 * 3  # rounds 2 and 3: 12 * 0.25 = 3 pairs each; round 1 has no model
    estimate = session.estimate()
    assert estimate["total"] is None
    assert "6 audit answers so far; the estimate needs 12" in estimate["sentence"]
    assert not (tmp_path / "s" / "estimates.jsonl").exists()
    # notebook 10 records such a session too: no interval yet is a layout its metrics file holds
    exported = {"matches": 3, "clusters": 3, "threshold": 0.5, "chosen": "bi-encoder"}
    metrics = session.metrics(exported | {"estimates": {}})
    assert metrics["est_positives"] == {"point": None, "ci": None}
    assert metrics["est_recall"] == {"point": None, "ci": None}
    record = {"session": metrics, "comparison": [], "coverage": {}}
    check("10_label_your_own_pairs", to_json(record), source="a session")


def audited_session(folder, **options) -> LabelingSession:
    """An oracle session of 4 rounds of 12 pairs, a third of each from round 2 audited (the 12
    audit answers an estimate needs), run to its end."""
    session = LabelingSession(
        records(),
        folder,
        annotator="oracle",
        batch=12,
        budget=48,
        candidate_m=6,
        audit_share=1 / 3,
        name="toy",
        **{"oracle_pairs": truth(), **options},
    )
    session.run(learner=FakeLearner(VECTORS))
    return session


def test_an_oracle_session_with_an_audit_estimates_the_matches_it_has_not_found(tmp_path):
    session = audited_session(tmp_path / "s")
    queue = session.store.queue()
    audit = queue[queue["kind"] == "audit"]
    from pairlab.session.audit import SessionAudit

    designs = [SessionAudit(tmp_path / "s" / "audit").load(r)[0] for r in (2, 3, 4)]
    assert [len(d.ids) for d in designs] == [4, 4, 4]  # 12 / 3 each; round 1: no model
    drawn = np.unique(np.concatenate([d.ids for d in designs]))
    assert len(drawn) == 12  # an earlier round's audit pair is a census, never drawn again
    assert sorted(audit["pair_id"]) == list(drawn)
    assert not audit["pair_id"].isin(queue.loc[queue["kind"] == "batch", "pair_id"]).any()
    trained = np.concatenate(round_ids(tmp_path / "s" / "run"))
    assert len(trained) == 12 + 3 * 8  # the batches only: the audit is held out of training
    assert not audit["pair_id"].isin(trained).any()
    estimate = session.estimate()
    assert estimate["found"] == session.counts()["positives"]
    low, high = estimate["total_ci"]
    assert estimate["found"] <= low <= estimate["total"] <= high + 1e-6
    low, high = estimate["recall_found_ci"]
    assert (
        0 < low <= estimate["recall_found"] + 1e-6
        and estimate["recall_found"] <= high + 1e-6 <= 1 + 1e-6
    )
    # (the fake learner's calibration puts every stratum below the top at a rate of ~0, so the
    # estimate trusts it: how well intervals cover with a real model is measured, not tested here)
    assert "of the matches found" in estimate["sentence"]
    table = session.estimate_table()
    assert (
        list(table["round"].dropna()) == [4] and len(table) == 2
    )  # round 4 (12 answers), one call


def test_no_audit_from_a_model_that_saw_one_answer(tmp_path):
    """A model trained on matches only (an easy table's first labels) keeps its trained head as
    calibration: its scores cannot stratify an audit, so none is drawn and the reason is kept."""
    from types import SimpleNamespace

    from pairlab.session.audit import SessionAudit, one_class

    model = SimpleNamespace(
        info={"calibration": "trained head (one class labelled: nothing to refit)"}
    )
    assert one_class(model) and not one_class(SimpleNamespace(info={"calibration": "refitted"}))
    audit = SessionAudit(tmp_path / "audit")
    ids, strata = audit(2, SimpleNamespace(model=model), np.arange(3), 5)
    assert len(ids) == len(strata) == 0 and audit.rounds() == []
    assert audit.skipped() == [{"round": 2, "why": "one_class"}]


def test_a_strategy_that_found_no_match_records_no_infinity():
    """Random labelling can find no match at all: its labels per match is None, so the metrics
    file (which refuses NaN and infinity) records it."""
    import json
    from types import SimpleNamespace

    from pairlab.session import comparison

    results = {
        "uncertainty": {"labels": 128, "positives_found": 64},
        "random": {"labels": 128, "positives_found": 0},
    }

    class Fake(SimpleNamespace):
        def result(self):
            return results[self.settings.strategy]

        def sibling(self, folder, **changes):
            return Fake(settings=SimpleNamespace(**changes), pool=pool)

    pool = SimpleNamespace(positives=list(range(69)), left=None)
    session = Fake(
        config=SimpleNamespace(strategy="uncertainty"),
        pool=pool,
        folder=__import__("pathlib").Path("/tmp/x"),
        settings=SimpleNamespace(strategy="uncertainty", one_to_one=False, annotator="oracle"),
    )
    frame = comparison.compare_strategies(session, ["random"])
    records = frame.reset_index().to_dict("records")
    assert [r["labels per match"] for r in records] == [2.0, None]
    json.dumps(records, allow_nan=False)


def test_matches_per_record_bounds_the_audit_prior_and_rises_with_the_answers(tmp_path):
    """``matches_per_record``: audits are drawn under the bounded prior, at most that many
    matches a record of the smaller side still to find; the bound is saved with each round's
    design and read back by the estimate (one a record by default; None: the calibration's
    prior). Once the answers put a record in more matches than that, the bound rises to one
    more than the most any record has, for every round: the toy's clusters (up to 4 records,
    at most 3 matches a record) keep to 4 and break 1."""
    from pairlab.session.audit import SessionAudit

    def session(folder, **options):
        s = audited_session(tmp_path / folder, **options)
        audit = SessionAudit(tmp_path / folder / "audit")
        return [audit.load(r)[0] for r in audit.rounds()], s

    with pytest.raises(ValueError, match="matches_per_record must be > 0"):
        LabelingSession(records(), tmp_path / "bad", name="toy", matches_per_record=0)
    designs, kept = session("kept", matches_per_record=4)
    space = kept.pool.space
    records_ = space.n_left if space.symmetric else min(space.n_left, space.n_right)
    assert all(d.prior == "bounded" and d.max_positives == 4 * records_ for d in designs)
    estimate = kept.estimate()
    assert estimate["assumption"]["records_over"] == 0
    assert estimate["assumption"]["per_record"] == 4
    assert estimate["bound"] == 4 * records_ and estimate["total"] >= estimate["found"]
    assert "matches are still unfound (matches_per_record)" in estimate["sentence"]
    assert "matches a record: its interval is wider" not in estimate["sentence"]

    designs, broken = session("broken")  # one a record by default; the toy's clusters break it
    estimate, use = broken.estimate(), broken.record_use()
    most = estimate["assumption"]["most"]
    assert use["records_in_several"] > 0 and most > 1
    assert estimate["assumption"]["records_over"] == use["records_in_several"]
    assert estimate["bound"] == (most + 1) * records_  # every round re-read under it
    assert designs[0].max_positives == 1.0 * records_  # drawn before any record had two
    assert f"now assumes at most {most + 1} matches a record" in estimate["sentence"]
    unbounded = [d.prior for d in session("unbounded", matches_per_record=None)[0]]
    assert unbounded == ["recalibrated"] * len(unbounded)


def test_the_assumption_counts_records_in_more_matches_than_the_bound():
    """Records over the bound, on each side of two tables or among one table's records, and
    the bound that follows: the stated one, or one more than the most matches of a record."""
    from pairlab.data.pairs import PairSpace
    from pairlab.session.audit import SessionAudit

    two = PairSpace(3, 4, symmetric=False)
    ids = two.encode(np.array([0, 0, 1, 2, 2]), np.array([0, 1, 1, 2, 3]))
    labels = np.array([1, 1, 1, 0, 1])  # left 0 matches two; right 1 is matched twice
    one = SessionAudit("unused", matches_per_record=1).assumption(two, ids, labels)
    assert one == {"matches_per_record": 1, "records_over": 2, "most": 2, "per_record": 3.0}
    assert (
        SessionAudit("unused", matches_per_record=2).assumption(two, ids, labels)["per_record"] == 2
    )
    none = SessionAudit("unused").assumption(two, ids, labels)
    assert none["per_record"] is None and SessionAudit("unused").bound(two, none) == {}
    sym = PairSpace(4, 4, symmetric=True)
    pairs = sym.encode(np.array([0, 1]), np.array([1, 2]))  # record 1 is in both
    use = SessionAudit("unused", matches_per_record=1).assumption(sym, pairs, [1, 1])
    assert use["records_over"] == 1 and use["per_record"] == 3.0
    assert SessionAudit("unused", matches_per_record=1).bound(sym, use) == {
        "prior": "bounded",
        "max_positives": 12.0,
    }


# an estimate record as the session returns it: 40 matches found of about 80
ESTIMATE = {
    "found": 40,
    "total": 80.0,
    "recall_found": 0.5,
    "recall_found_ci": (0.3, 0.8),
    "total_ci": (50.0, 130.0),
}


def test_the_stopping_sentence_says_when_the_stated_bound_sets_the_estimate():
    """The sentence names the bound it assumes, and warns when the interval's top reaches it."""
    from pairlab.session.worker import sentence as stopping_sentence

    base = {**ESTIMATE, "recent": {"pairs": 50, "positives": 3}}
    assert "matches_per_record" not in stopping_sentence(base)
    loose = stopping_sentence({**base, "bound": 1000.0})
    assert "at most 1,000 matches are still unfound" in loose and "raise" not in loose
    tight = stopping_sentence({**base, "bound": 95.0})
    assert "the interval reaches that bound" in tight and "raise matches_per_record" in tight


def test_the_sentence_says_when_the_unfound_rest_on_the_scores_not_the_audit():
    """Never silently optimistic (issue 59): where the model's scores, not the audit's answers,
    carry most of the estimate of the unfound matches, the sentence says the audit alone cannot
    bound the share found from below; where the audit carries it, the sentence is silent."""
    from pairlab.session.worker import sentence as stopping_sentence

    base = {**ESTIMATE, "audit_labels": 26}
    leaning = stopping_sentence({**base, "prior_weight": 0.88})
    assert "estimated mostly from the model's scores (88% of the weight)" in leaning
    assert "not from the 26 audit answers" in leaning
    assert "model's scores" not in stopping_sentence({**base, "prior_weight": 0.3})
