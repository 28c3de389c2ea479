"""A person as the annotator: a session's queue and answers in one SQLite file that the loop
(:class:`PersonAnnotator`) posts to and the widget answers from, one transaction per key press.
Rows are only appended: a person's answer to a pair is their latest row of it, an undo a row
withdrawing it, and a pair's answer its people's majority (several people: a team's pages).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from ..data.pairs import of_matched_records
from ..io import DurableStore, check_name
from .base import NO_ANSWER, Annotator, check_pair_ids

__all__ = [
    "SessionStore",
    "QueueItem",
    "PersonAnnotator",
    "KINDS",
    "ANSWERS",
    "UNANSWERED",
    "SAID",
    "agreement_pairs",
    "cohen_kappa",
]

# why a pair is queued: the strategy's, the audit's, filler while the model trains, or known
# before the session (answered by "given")
KINDS = ("batch", "audit", "spare", "given")
ANSWERS = {"y": 1, "n": 0, "u": NO_ANSWER}  # the person's keys -> labels (u: unsure, no answer)
SAID = {1: "match", 0: "no match", NO_ANSWER: "unsure"}  # a label in words
UNANSWERED = -2  # :meth:`SessionStore.answers` of a pair without a current answer
WITHDRAWN = -3  # the label of an undo row: the pair's earlier answer no longer counts

_SCHEMA = """
CREATE TABLE IF NOT EXISTS queue (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    pair_id INTEGER NOT NULL UNIQUE,
    round INTEGER NOT NULL,
    kind TEXT NOT NULL,
    stratum INTEGER,
    posted_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS answers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    pair_id INTEGER NOT NULL,
    label INTEGER NOT NULL,
    annotator TEXT NOT NULL,
    created_at TEXT NOT NULL,
    seconds REAL
);
CREATE INDEX IF NOT EXISTS answers_pair ON answers (pair_id, id);
CREATE TABLE IF NOT EXISTS status (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS agreement (
    pair_id INTEGER PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS claims (
    pair_id INTEGER PRIMARY KEY,
    page TEXT NOT NULL,
    annotator TEXT NOT NULL,
    until REAL NOT NULL
);
"""
# each person's answer to a pair is their latest row of it; an undo row withdraws it
_LIVE = (
    f"SELECT pair_id, annotator, label FROM answers WHERE id IN (SELECT MAX(id) FROM answers "
    f"GROUP BY pair_id, annotator) AND label != {WITHDRAWN}"
)
# a pair's answer: its people's yes and no by majority, unsure where they tie (a third person's
# answer settles it) or where nobody said yes or no; a pair without a live answer has none
_CURRENT = (
    "SELECT pair_id, CASE WHEN SUM(label = 1) > SUM(label = 0) THEN 1 WHEN SUM(label = 0) > "
    f"SUM(label = 1) THEN 0 ELSE {NO_ANSWER} END AS label FROM ({_LIVE}) GROUP BY pair_id"
)
# per pair: its yes and no answers, and whether the person asking has answered it
_SAID = (
    "SELECT pair_id, SUM(label = 1) AS yes, SUM(label = 0) AS no, MAX(annotator = ?) AS mine "
    f"FROM ({_LIVE}) GROUP BY pair_id"
)
_INSERT = "INSERT INTO answers (pair_id, label, annotator, created_at, seconds) VALUES"


@dataclass(frozen=True)
class QueueItem:
    """One queued pair: its id and why it is asked (one of :data:`KINDS`)."""

    pair_id: int
    kind: str


class SessionStore(DurableStore):
    """The queue and the answers of one labelling session in the SQLite file at ``path``."""

    SCHEMA = _SCHEMA

    # -- the loop's side ----------------------------------------------------------------------

    def post(self, round: int, pair_ids, kinds, *, strata=None, agreement: float = 0.0) -> int:
        """Queue ``pair_ids`` in order for ``round`` (``kinds``: one of :data:`KINDS` or one per
        pair); a pair queued before keeps its place. ``agreement``: the share of pairs asked of
        two people (:func:`agreement_pairs`). Returns how many pairs were new."""
        ids = np.asarray(pair_ids, dtype=np.int64).ravel()
        kinds = [kinds] * len(ids) if isinstance(kinds, str) else list(kinds)
        strata = [None] * len(ids) if strata is None else [int(s) for s in strata]
        if len(kinds) != len(ids) or len(strata) != len(ids):
            raise ValueError(f"{len(ids)} pairs but {len(kinds)} kinds and {len(strata)} strata")
        if bad := sorted(set(kinds) - set(KINDS)):
            raise ValueError(f"kinds must be among {KINDS}, got {bad}")
        now = _utc_now()
        rows = [(int(p), int(round), k, s, now) for p, k, s in zip(ids, kinds, strata)]
        twice = [(int(p),) for p in agreement_pairs(ids, agreement)]
        with self._lock, self._conn:
            self._conn.executemany("INSERT OR IGNORE INTO agreement VALUES (?)", twice)
            return self._conn.executemany(
                "INSERT OR IGNORE INTO queue (pair_id, round, kind, stratum, "
                "posted_at) VALUES (?, ?, ?, ?, ?)",
                rows,
            ).rowcount  # the rows inserted, not those ignored

    def answers(self, pair_ids) -> np.ndarray:
        """(n,) int8 current answers of ``pair_ids``: 1, 0, -1 (unsure) or :data:`UNANSWERED`."""
        ids = np.asarray(pair_ids, dtype=np.int64).ravel()
        current = self._read(_CURRENT).set_index("pair_id")["label"]
        return current.reindex(ids, fill_value=UNANSWERED).to_numpy(np.int8)

    def labelled(self) -> tuple[np.ndarray, np.ndarray]:
        """The pairs answered yes or no now (sorted int64 ids) and their 0/1 labels (int8); an
        unsure or undone answer is not one."""
        current = self._read(_CURRENT)
        current = current[current["label"].isin((0, 1))].sort_values("pair_id")
        return current["pair_id"].to_numpy(np.int64), current["label"].to_numpy(np.int8)

    def set_status(self, key: str, value: str) -> None:
        """What the worker is doing (``key`` "worker"), or any other state worth showing."""
        self._write("INSERT OR REPLACE INTO status VALUES (?, ?, ?)", (key, str(value), _utc_now()))

    # -- the person's side --------------------------------------------------------------------

    def next_pair(
        self,
        *,
        annotator: str = "person",
        page: str | None = None,
        lease: float = 120,
        spares: bool = True,
    ) -> QueueItem | None:
        """The first queued pair that needs ``annotator``'s answer (a round's own pairs before
        the spares, each in queue order, so a backlog of spares never holds a round up): one
        without an answer, an agreement pair with one person's yes or no, or a pair whose yes
        and no tie; never one ``annotator`` has answered (``spares`` False: nor a spare, once
        the rounds are over).
        ``page``: one that no other page holds, then held for ``page`` (``annotator``'s) for
        ``lease`` seconds or until answered, in place of the pair it held: pages in several
        processes never get one pair at once, and a closed page's pair comes back."""
        # called per key press: 8 ms at 20,000 queued pairs and 3,000 answers
        held = "AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.pair_id = q.pair_id AND c.page != ?"
        held = f"{held} AND c.until > ?)" if page is not None else ""
        held += "" if spares else " AND q.kind != 'spare'"  # and the spares, where asked
        now = time.time()
        args = (annotator,) + ((page, now) if page is not None else ())
        with self._lock, self._claiming(page is not None), self._conn:
            if page is not None:  # the choice and the claim in one write transaction
                self._conn.execute("BEGIN IMMEDIATE")
            row = self._conn.execute(
                f"SELECT q.pair_id, q.kind FROM queue q LEFT JOIN ({_SAID}) s "
                "USING (pair_id) WHERE (s.pair_id IS NULL OR (NOT s.mine AND ((s.yes + s.no = 1 "
                "AND q.pair_id IN (SELECT pair_id FROM agreement)) OR (s.yes = s.no AND s.yes > 0)"
                f"))) {held} ORDER BY q.kind = 'spare', q.seq LIMIT 1",
                args,
            ).fetchone()
            if page is not None:
                self._conn.execute("DELETE FROM claims WHERE page = ?", (page,))
            if page is not None and row is not None:
                self._conn.execute(
                    "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?)",
                    (row[0], page, annotator, now + float(lease)),
                )
        return None if row is None else QueueItem(*row)

    @contextlib.contextmanager
    def _claiming(self, claim: bool):
        """A claim's transaction unsynced (``synchronous=NORMAL``): a claim lost to a power cut
        only frees a pair early, and the next answer's commit syncs the log before it, so every
        answer stays as durable as before; one fsync fewer on a key press's path."""
        if claim:
            self._conn.execute("PRAGMA synchronous = NORMAL")
        try:
            yield
        finally:
            if claim:
                self._conn.execute("PRAGMA synchronous = FULL")

    def release(self, *, annotator: str) -> None:
        """Free the pairs ``annotator``'s pages hold: a new page of that person (a restarted
        kernel, a reloaded page) takes over."""
        self._write("DELETE FROM claims WHERE annotator = ?", (annotator,))

    def answer(self, pair_id, label: int, *, annotator: str, seconds: float | None = None) -> int:
        """Append and commit the answer ``label`` (1, 0, -1: unsure) of ``pair_id``, freeing the
        pair's claim; the answer's row id."""
        if label not in (1, 0, NO_ANSWER):
            raise ValueError(f"label must be 1, 0 or {NO_ANSWER} (unsure), got {label!r}")
        check_name("annotator", annotator)
        seconds = None if seconds is None else float(seconds)
        row = (int(pair_id), int(label), annotator, _utc_now(), seconds)
        with self._lock, self._conn:  # committed (and fsynced) on exit
            self._conn.execute("DELETE FROM claims WHERE pair_id = ?", (int(pair_id),))
            return int(self._conn.execute(f"{_INSERT} (?, ?, ?, ?, ?)", row).lastrowid)

    def annotators(self) -> dict[str, int]:
        """Each annotator's current answers (yes, no or unsure), most first."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT annotator, COUNT(*) FROM ({_LIVE}) GROUP BY annotator "
                "ORDER BY COUNT(*) DESC, annotator"
            ).fetchall()
        return dict(rows)

    def answered_since(self, when: float) -> int:
        """The answer rows written since ``when`` (seconds since the epoch)."""
        since = datetime.fromtimestamp(when, timezone.utc).isoformat(timespec="microseconds")
        with self._lock:
            return self._conn.execute(
                "SELECT COUNT(*) FROM answers WHERE created_at >= ?", (since,)
            ).fetchone()[0]

    def agreement(self) -> dict:
        """How the pairs answered yes or no by two people agree: ``pairs`` (their count, each
        person's first answer), ``kappa`` (Cohen's) and its 95% bootstrap ``kappa_ci`` (None
        below 2 pairs or where every answer is one label), ``disagree`` (``pair_id, first,
        first_label, second, second_label, label`` of the pairs they disagree on, ``label``
        their answer now: -1 while a tie waits for a third person)."""
        live = self._read(f"SELECT * FROM ({_LIVE}) WHERE label IN (0, 1)")
        current = self._read(_CURRENT).set_index("pair_id")["label"]
        twice = live[live.duplicated("pair_id", keep=False)].groupby("pair_id").head(2)
        first, second = twice.drop_duplicates("pair_id"), twice[twice.duplicated("pair_id")]
        both = first.merge(second, on="pair_id", suffixes=("", "_2"))  # in first's order
        a, b = both["label"].to_numpy(), both["label_2"].to_numpy()
        out = {"pairs": len(a), "kappa": None, "kappa_ci": None}
        if len(a) >= 2 and len(set(a) | set(b)) > 1:
            out["kappa"], out["kappa_ci"] = cohen_kappa(a, b)
        disagree = both[a != b].reset_index(drop=True)
        disagree.columns = ["pair_id", "first", "first_label", "second", "second_label"]
        disagree["label"] = current.reindex(disagree["pair_id"]).to_numpy()
        out["disagree"] = disagree
        return out

    def undo(self, *, annotator: str) -> int | None:
        """Withdraw ``annotator``'s latest current answer (never another's), so the pair is asked
        again; returns its pair id, or None."""
        check_name("annotator", annotator)
        with self._lock, self._conn:  # the choice and the withdrawal in one transaction
            row = self._conn.execute(
                "SELECT pair_id FROM answers WHERE id IN (SELECT MAX(id) FROM answers WHERE "
                "annotator = ? GROUP BY pair_id) AND label != ? ORDER BY id DESC LIMIT 1",
                (annotator, WITHDRAWN),
            ).fetchone()
            if row is None:
                return None
            self._conn.execute(
                f"{_INSERT} (?, ?, ?, ?, NULL)", (row[0], WITHDRAWN, annotator, _utc_now())
            )
        return int(row[0])

    def counts(self) -> dict:
        """Answers so far: ``labels`` (yes or no), ``positives``, ``unsure``, ``queued``."""
        with self._lock:  # in SQL: the widget shows these after every key press
            row = self._conn.execute(
                "SELECT COALESCE(SUM(a.label IN (0, 1)), 0), COALESCE(SUM(a.label = 1), 0), "
                "COALESCE(SUM(a.label = ?), 0), (SELECT COUNT(*) FROM queue) - COUNT(q.pair_id) "
                f"FROM ({_CURRENT}) a LEFT JOIN queue q USING (pair_id)",
                (NO_ANSWER,),
            ).fetchone()
        return dict(zip(("labels", "positives", "unsure", "queued"), map(int, row)))

    def spent(self) -> dict:
        """The budget's use (the pairs known before the session aside): ``answered`` (an answer
        now, unsure included), ``asked`` (a round's own or audit pairs without one), ``held``
        and ``free`` (spares without one, held by a page now or not), ``audit`` (audit pairs
        queued)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT COALESCE(SUM(a.pair_id IS NOT NULL), 0), COALESCE(SUM(a.pair_id IS NULL "
                "AND q.kind != 'spare'), 0), COALESCE(SUM(a.pair_id IS NULL AND q.kind = 'spare' "
                "AND c.pair_id IS NOT NULL), 0), COALESCE(SUM(a.pair_id IS NULL AND q.kind = "
                "'spare' AND c.pair_id IS NULL), 0), COALESCE(SUM(q.kind = 'audit'), 0) FROM "
                f"queue q LEFT JOIN ({_CURRENT}) a USING (pair_id) LEFT JOIN (SELECT pair_id FROM "
                "claims WHERE until > ?) c USING (pair_id) WHERE q.kind != 'given'",
                (time.time(),),
            ).fetchone()
        return dict(zip(("answered", "asked", "held", "free", "audit"), map(int, row)))

    def withdraw_spares(self) -> int:
        """Take the spares nobody has answered or holds out of the queue (the budget is spent
        on the last round's pairs); how many."""
        with self._lock, self._conn:
            return self._conn.execute(
                "DELETE FROM queue WHERE kind = 'spare' AND pair_id NOT IN (SELECT pair_id FROM "
                "answers) AND pair_id NOT IN (SELECT pair_id FROM claims WHERE until > ?)",
                (time.time(),),
            ).rowcount

    def history(self) -> pd.DataFrame:
        """Every answer row, undos included, oldest first, with the pair's round and kind."""
        return self._read(
            "SELECT a.id, a.pair_id, a.label, a.annotator, a.created_at, a.seconds, q.round, "
            "q.kind FROM answers a LEFT JOIN queue q USING (pair_id) ORDER BY a.id"
        )

    def queue(self) -> pd.DataFrame:
        """Every queued pair in queue order."""
        return self._read("SELECT * FROM queue ORDER BY seq")

    def status(self) -> dict:
        with self._lock:
            rows = self._conn.execute("SELECT key, value, updated_at FROM status").fetchall()
        return {key: {"value": value, "updated_at": at} for key, value, at in rows}


class PersonAnnotator(Annotator):
    """A labelling session's annotator: each round posts the batch with ``audits[r - 1]`` audit
    pairs mixed in (``audit(round, state, batch, n) -> (pair_ids, strata)``, held out of
    training) and ``spares`` candidates to label while the model trains (``None``: none posted
    with the round; :meth:`top_up` keeps the queue from running dry from :attr:`reserve`, the
    candidates nearest the boundary, best first); :meth:`annotate` polls until the batch is
    answered. ``budget``: the answers the session asks for, the spares' included, so that a
    team answering faster than the rounds run spends it in fewer rounds (:meth:`room`).
    ``oracle``: a pool whose truth answers at once (a simulation)."""

    name = "person"

    def __init__(
        self,
        store: SessionStore,
        *,
        who: str = "person",
        oracle=None,
        audits=(),
        spares: int | None = 0,
        audit=None,
        one_to_one: bool = False,
        space=None,
        agreement: float = 0.0,
        budget: int | None = None,
    ):
        self.store, self.who, self.oracle, self.budget = store, who, oracle, budget
        self.audits, self.spares, self.audit = tuple(map(int, audits)), spares, audit
        self.one_to_one = bool(one_to_one)  # spares skip the records of a labelled match, too
        self.space, self.reserve, self.closed = space, np.empty(0, np.int64), False
        self.round, self.agreement = 0, float(agreement)  # the share asked of two people
        self.state, self.since = None, time.time()  # the last round's state; its pairs' end

    def params(self) -> dict:  # not the oracle's pool, nor the audit's function
        return {"store": str(self.store.path), "who": self.who}

    def room(self, round: int, n: int, *, free: bool = False) -> int:
        """At most ``n`` (``round``: the loop's, unused): the budget less the answers given or
        asked (the spares' held by a page included; ``free``: and those queued) and the audit
        pairs still to come."""
        return int(np.clip(self._left(free=free), 0, n))

    def _left(self, *, free: bool = True, to_come: bool = True) -> int:
        """The budget not spent or asked for, less the audit pairs still to come (``free``:
        less the spares queued and not held, too; no budget: unbounded)."""
        if self.budget is None:
            return np.iinfo(np.int64).max
        s = self.store.spent()
        used = s["answered"] + s["asked"] + s["held"] + (s["free"] if free else 0)
        return self.budget - used - (max(sum(self.audits) - s["audit"], 0) if to_come else 0)

    def start_round(self, round: int, state, batch) -> None:
        """Post round ``round``'s pairs: the batch with the audit sample shuffled in (seeded by
        the round), then the spare candidates. Posting again (a restarted worker) is a no-op.
        The round whose batch spends the budget is the last: the rest of the audit comes with
        it, and the spares nobody holds are withdrawn."""
        batch = np.asarray(batch, np.int64)
        queue = self.store.queue()
        if state.model is None and self.state is not None and self.state.model is not None:
            state = self._now(self.state, queue)  # a round that chose nothing: the last model
        self.round, self.state = round, state
        posted = int(((queue["kind"] == "audit") & (queue["round"] < round)).sum())
        reposted = int(((queue["kind"] == "batch") & (queue["round"] == round)).sum())
        if self.budget is not None and self._left(free=False) + reposted <= len(batch):
            self.closed = True
            self.store.withdraw_spares()
        # the audit pairs planned up to this round (the last: all) less those posted before it
        # (a round whose model could not stratify an audit passes its pairs on)
        planned = self.audits if self.closed else self.audits[:round]
        n_audit = max(sum(planned) - posted, 0)
        if self.closed:  # within the budget: a page may have taken a spare since the batch's size
            new = np.setdiff1d(batch, self.store.queue()["pair_id"].to_numpy(np.int64)).size
            n_audit = max(min(n_audit, self._left(to_come=False) - new), 0)
        audit, strata = (
            self.audit(round, state, batch, n_audit)
            if n_audit and self.audit
            else (np.empty(0, np.int64), np.empty(0, np.int64))
        )
        shown = np.concatenate([batch, audit])
        kinds = np.array(["batch"] * len(batch) + ["audit"] * len(audit))
        stratum = np.concatenate([np.full(len(batch), -1), strata]).astype(np.int64)
        order = np.random.default_rng([round, 7919]).permutation(len(shown))
        self.store.post(
            round,
            shown[order],
            kinds[order].tolist(),
            strata=stratum[order],
            agreement=self.agreement,
        )
        self.space = state.pool.space
        if self.spares is None:  # none posted now: top_up queues them from the reserve
            self.reserve = _spares(state, shown, len(state.candidates), self.one_to_one)
        else:
            spare = _spares(state, shown, self.room(round, self.spares, free=True), self.one_to_one)
            self.store.post(round, spare, "spare", agreement=self.agreement)
        if self.closed and 0 < len(audit) < n_audit:  # drawn short: no wait for the final model
            self.spend_rest(state)
        if self.oracle is not None:
            self._answer_as_oracle(self.store.queue()["pair_id"].to_numpy(np.int64))

    def annotate(self, pool, pair_ids) -> np.ndarray:
        ids = check_pair_ids(pool, pair_ids)
        self.store.post(self.round, ids, "batch")  # already there when start_round posted them
        if self.oracle is not None:
            self._answer_as_oracle(ids)
        while True:
            answers = self.store.answers(ids)
            if (answers != UNANSWERED).all():
                # the last round's: no spares after
                self.closed = self.closed or self.round >= len(self.audits)
                self._audit_ahead()
                return answers.astype(np.int8)
            time.sleep(0.2)  # a person answers in seconds

    def top_up(self, low: int = 12, chunk: int = 16, pace: float = 30.0) -> int:
        """With fewer than ``low`` pairs left to answer, or than the answers of the last
        ``pace`` seconds (a team answers faster than one person), and rounds to come, queue the
        next ``chunk`` (or that many) of :attr:`reserve` (not queued before; ``one_to_one``: nor
        of a record in a labelled match) as spares of the round; returns how many were queued."""
        recent = self.store.answered_since(time.time() - pace)
        low, chunk = max(low, recent), self.room(self.round, max(chunk, recent), free=True)
        if self.closed or not chunk or self.store.counts()["queued"] >= low:
            return 0
        free = self.reserve[~np.isin(self.reserve, self.store.queue()["pair_id"])]
        if self.one_to_one and len(free):
            free = free[~of_matched_records(self.space, free, *self.store.labelled())]
        return self.store.post(max(self.round, 1), free[:chunk], "spare", agreement=self.agreement)

    def trained(self, score, shortlist: int = 1024) -> None:
        """Rank the reserve's next ``shortlist`` pairs by the model just trained (nearest its
        boundary first; only their records embedded, seconds not minutes), so that the spares
        asked while the next round embeds the records are the newest model's, not the last."""
        if self.spares is not None or self.closed:
            return
        free = self.reserve[~np.isin(self.reserve, self.store.queue()["pair_id"])]
        head = free[:shortlist]
        if not len(head):
            return
        order = np.argsort(np.abs(score(head)), kind="stable")
        self.reserve = np.concatenate([head[order], free[len(head) :]])

    def _audit_ahead(self) -> None:
        """Where the answers of the last round's time (its pairs, the model's training, the
        records' embedding) would spend what the budget leaves to spares, post the audit pairs
        still to come now, drawn under the last model as the next round's: the team answers
        them while the last round embeds, instead of waiting for it."""
        since, self.since = self.since, time.time()
        topped = self.spares is None and self.budget is not None and not self.closed
        if topped and self.state is not None and self._left() <= self.store.answered_since(since):
            self.last_audit(replace(self.state, round=self.round + 1))

    def last_audit(self, state) -> int:
        """Post the audit pairs still to come, drawn under ``state``'s model as round
        ``state.round``'s; how many. After the last round (a team's spares spent the budget
        before a trained model could draw them) with the final model's state: the pages answer
        them before the session finishes, so every answer of the budget is asked."""
        queue = self.store.queue()
        to_come = min(
            sum(self.audits) - int((queue["kind"] == "audit").sum()), self._left(to_come=False)
        )
        if to_come <= 0 or self.audit is None:
            return 0
        round = state.round
        ids, strata = self.audit(round, self._now(state, queue), np.empty(0, np.int64), to_come)
        order = np.random.default_rng([round, 7919]).permutation(len(ids))
        self.store.post(round, ids[order], "audit", strata=strata[order], agreement=self.agreement)
        return len(ids)

    def spend_rest(self, state) -> int:
        """Post what the budget leaves unasked after the last audit (one no model could draw:
        every answer so far the same) as ``state``'s candidates nearest the final model's
        boundary, so that every answer of the budget is asked; how many (once: a restarted
        worker finds none left)."""
        if self.budget is None:
            return 0
        queue = self.store.queue()
        queued = queue["pair_id"].to_numpy(np.int64)
        ids = _spares(self._now(state, queue), queued, self._left(to_come=False), self.one_to_one)
        return self.store.post(state.round, ids, "batch", agreement=self.agreement)

    def _now(self, state, queue):
        """``state`` (a round's, its model's) with the answers now, every queued pair held out."""
        asked = np.union1d(state.held_out, queue["pair_id"].to_numpy(np.int64))
        labelled, labels = self.store.labelled()
        return replace(state, labelled=labelled, labels=labels, held_out=asked)

    def held_out(self) -> np.ndarray:
        """The pairs no batch may pick (sorted int64): the audit pairs posted, which no model
        trains on, and the spares answered (while a round embedded: a pick would ask nothing).
        A round's own answered pairs are not: after a restart, the round picks them again."""
        queue = self.store.queue()
        ids, kind = queue["pair_id"].to_numpy(np.int64), queue["kind"].to_numpy()
        answered = self.store.answers(ids) != UNANSWERED
        return np.unique(ids[(kind == "audit") | ((kind == "spare") & answered)])

    def answered_beyond(self, labelled) -> tuple[np.ndarray, np.ndarray]:
        """Pairs answered (yes or no) outside ``labelled`` (sorted int64) and their labels: the
        spares, never the audit pairs (no model trains on those)."""
        queue = self.store.queue()
        queued = queue.loc[queue["kind"] != "audit", "pair_id"].to_numpy(np.int64)
        ids = np.setdiff1d(queued, labelled)
        labels = self.store.answers(ids)
        keep = labels >= 0
        return ids[keep], labels[keep].astype(np.int8)

    def _answer_as_oracle(self, ids) -> None:
        missing = ids[self.store.answers(ids) == UNANSWERED]
        for pair_id, label in zip(missing, self.oracle.labels(missing)):
            self.store.answer(int(pair_id), int(label), annotator=self.who)


def _spares(state, shown, n: int, one_to_one: bool = False) -> np.ndarray:
    """The ``n`` candidates of ``state`` nearest the model's decision boundary (smallest |logit|;
    by cosine, highest first, under the pretrained encoder) outside ``shown`` (``one_to_one``:
    and with neither record in a labelled match)."""
    score = np.abs(state.logits) if state.logits is not None else -np.asarray(state.cosine)
    order = np.argsort(score, kind="stable")  # none over a whole-pool strategy (no candidates)
    free = order[~np.isin(state.candidates[order], shown)]
    if one_to_one:
        matched = of_matched_records(
            state.pool.space, state.candidates[free], state.labelled, state.labels
        )
        free = free[~matched]
    return state.candidates[free[: max(n, 0)]]


def cohen_kappa(a, b, *, n_boot: int = 2000, seed: int = 0) -> tuple[float, tuple]:
    """Cohen's kappa of two people's 0/1 answers to the same pairs and its 95% percentile
    interval over ``n_boot`` resamples of the pairs."""
    from scipy.stats import bootstrap

    def kappa(x, y, axis=-1):  # binary answers, vectorised over resamples
        agree = (x == y).mean(axis)
        px, py = x.mean(axis), y.mean(axis)
        chance = px * py + (1 - px) * (1 - py)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(chance < 1, (agree - chance) / (1 - chance), 1.0)

    a, b = np.asarray(a, float), np.asarray(b, float)
    low, high = bootstrap(
        (a, b),
        kappa,
        paired=True,
        vectorized=True,
        n_resamples=n_boot,
        method="percentile",
        rng=np.random.default_rng(seed),
    ).confidence_interval
    return float(kappa(a, b)), (float(low), float(high))


def agreement_pairs(pair_ids, share: float) -> np.ndarray:
    """The ``share`` of ``pair_ids`` asked of two people: a fixed pseudo-random draw per pair id
    (the same pairs in every process and on every restart)."""
    ids = np.asarray(pair_ids, dtype=np.int64)
    with np.errstate(over="ignore"):
        key = ids.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return ids[(key >> np.uint64(11)) / 2.0**53 < share]


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")
