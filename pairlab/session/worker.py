"""A labelling session's round loop, notebook 03's :class:`~pairlab.active.loop.ActiveRun` with a
:class:`~pairlab.annotators.person.PersonAnnotator`, run in its own process (``nice``: the
kernel answering the widget comes first), which exits when the kernel that started it is gone."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from .. import templating
from ..active.committee import member_scores
from ..active.config import ActiveConfig
from ..active.loop import ActiveRun
from ..active.strategies import RoundState
from ..annotators.person import PersonAnnotator, SessionStore
from ..progress import Progress, listened, listening
from .audit import MIN_ROUND, SessionAudit
from .export import candidates, final_model
from .settings import SessionSettings

__all__ = ["Job", "run_job", "log_estimate", "spawn", "first_pairs"]

STAGES = {  # the loop's stages as the widget's status line shows them
    "embed": "embedding the records",
    "search": "searching candidate pairs",
    "select": "choosing pairs",
    "annotate": "waiting for your answers",
    "train": "training the model",
    "export": "exporting the model",
    "evaluate": "evaluating",
}


@dataclass(frozen=True)
class Job:
    """What the worker runs: the loop's config, pool, folder, settings and audits per round."""

    config: ActiveConfig
    pool: object  # a RecordPool
    folder: Path
    settings: SessionSettings = SessionSettings()
    audits: tuple[int, ...] = ()


def run_job(job: Job, *, callbacks=(), learner=None) -> dict:
    """Run (or resume) the session's loop in this process; returns the run's result."""
    store, s = SessionStore(job.folder / "labels.sqlite"), job.settings
    oracle = s.annotator == "oracle"  # the truth answers
    audit = SessionAudit(  # coverage: checked where the truth is known (a simulated person too)
        job.folder / "audit",
        seed=job.config.seed,
        coverage=int(s.coverage) if job.pool.truth_known else 0,
        matches_per_record=s.matches_per_record,
    )
    annotator = PersonAnnotator(
        store,
        who=s.annotator,
        oracle=job.pool if oracle else None,
        audits=job.audits,
        spares=0 if oracle else s.spares,
        audit=audit,
        one_to_one=s.one_to_one,
        space=job.pool.space,
        agreement=s.agreement_share,
        budget=s.budget,
    )

    def status(event: str, **p) -> None:
        """The loop's progress in the store's status, for the widget; the estimate each round."""
        if event == "stage_started":
            stage = STAGES.get(p["stage"], p["stage"])
            last = " (the last)" if annotator.closed else ""  # the budget is asked
            store.set_status("worker", f"round {p['round']}{last}: {stage}")
            store.set_status("progress", "")  # the stage's own comes as it works
        elif event == "round_finished":
            r = p["record"]
            done = f"{r['labels']:,} labels, {r['positives_found']:,} matches"
            store.set_status("worker", f"round {r['round']} done: {done}")
            if log_estimate(job.folder, audit, store, job.pool.space, round=r["round"]) is None:
                answered = {"answered": audit.audit_answers(store), "needed": audit.n_strata}
                pending = {**answered, "share": s.audit_share, "first_round": MIN_ROUND}
                pending["skipped"] = bool(audit.skipped()) and not audit.rounds()
                store.set_status("estimate_pending", sentence(pending, "estimate_pending"))

    run = SessionRun(
        job.config,
        {"train": job.pool},
        {},
        job.folder / "run",
        annotator=annotator,
        learner=learner,
        callbacks=[status, *callbacks],
    )
    stop = threading.Event()
    if annotator.spares is None:  # the person never waits for a round: the queue kept topped up
        annotator.reserve = first_pairs(job.pool, s.seed, 16 * s.batch)
        threading.Thread(target=_top_up, args=(annotator, stop), daemon=True).start()
    try:
        with contextlib.nullcontext() if listened() else listening(_progress(store)):
            result = run.run()
            stop.set()
            if s.annotator == "person" and job.config.keep_model:  # the export reads them back
                _last_audit(job, annotator, audit, round=len(result["records"]) + 1)
        return result
    finally:
        stop.set()
        done = (job.folder / "run" / "result.json").is_file()
        store.set_status("worker", "finished" if done else "stopped")
        store.set_status("progress", "")


def _last_audit(job: Job, annotator: PersonAnnotator, audit, *, round: int):
    """The audit pairs the rounds could not draw (the budget spent before a trained model),
    drawn under the final model (its embeddings are the export's), and the session's last
    estimate once the pages have answered them. An audit the final model cannot draw either
    (every answer the same) leaves its labels to the model's candidates."""
    store, pool = annotator.store, job.pool
    store.set_status("worker", "preparing the export: the final model embeds the records")
    model = final_model(job.folder)
    found = candidates(pool, model, job.settings.candidate_m)
    left = model.embed(pool.left_texts)  # read back: the candidates embedded them
    right = left if pool.symmetric else model.embed(pool.right_texts)
    labelled, labels = store.labelled()
    state = RoundState(
        round,
        pool,
        labelled,
        job.settings.budget,
        None,
        labels,
        model=model,
        candidates=found.ids,
        cosine=found.cosine,
        logits=model.calibration.logits(found.cosine),
        embeddings=(left, right),
    )
    annotator.last_audit(state)
    annotator.spend_rest(state)
    if audit.skipped() and not audit.rounds():
        pending = {"share": job.settings.audit_share, "skipped": True, "last": True}
        store.set_status("estimate_pending", sentence(pending, "estimate_pending"))
    if store.spent()["asked"]:  # (a restarted worker: posted before, maybe answered)
        store.set_status("worker", f"round {round} (the last): waiting for the audit's answers")
        while store.spent()["asked"]:
            time.sleep(0.2)
        log_estimate(job.folder, audit, store, pool.space, round=round)


class SessionRun(ActiveRun):
    """Notebook 03's loop sized by the session's budget: a team's spares spend it, too
    (:meth:`PersonAnnotator.room`), and each trained model ranks the next spares."""

    def _size(self, i: int, n: int) -> int:
        return self.annotator.room(i, n)

    def _train(self, i: int, ids, labels, stages, record: dict):
        model = super()._train(i, ids, labels, stages, record)
        self.annotator.trained(partial(self._score, model))
        return model

    def _score(self, model, pair_ids) -> np.ndarray:
        """Calibrated logits of ``pair_ids`` under ``model``, embedding only their records."""
        rows, cols = self.pool.space.decode(np.asarray(pair_ids, np.int64))
        left, rows = np.unique(rows, return_inverse=True)
        right, cols = np.unique(cols, return_inverse=True)
        texts = self.pool.left_texts, self.pool.right_texts
        embedded = [self.learner.embed(model, t[k]) for t, k in zip(texts, (left, right))]
        return member_scores(model, *embedded, rows, cols)


def first_pairs(pool, seed: int, n: int, exclude=()) -> np.ndarray:
    """Pairs to label before any model: the first ``n`` records of the left table in a seeded
    order, each with its most similar right record by BM25 (seconds, not minutes), in that
    order (the same first pairs for a larger ``n``)."""
    from ..augment.samplers import lexical_pairs

    order = np.random.default_rng([seed, 1]).permutation(pool.space.n_left)[:n]
    ids = lexical_pairs(pool, 1, items=order, exclude=np.sort(np.asarray(exclude, np.int64)))
    position = np.full(pool.space.n_left, len(order))
    position[order] = np.arange(len(order))
    left, right = pool.space.decode(ids)
    key = np.minimum(position[left], position[right]) if pool.symmetric else position[left]
    return ids[np.argsort(key, kind="stable")]


def _top_up(annotator: PersonAnnotator, stop: threading.Event, every: float = 1.0) -> None:
    """Every ``every`` seconds until ``stop``: :meth:`PersonAnnotator.top_up`; a failure is
    shown as the worker's status (the person would wait without saying why)."""
    while not stop.wait(every):
        try:
            annotator.top_up()
        except Exception as error:
            annotator.store.set_status("worker", f"spares stopped: {error!r}")
            raise


def _progress(store: SessionStore, every: float = 1.0):
    """A :func:`~pairlab.progress.listening` callback writing a step's work done and time left
    to the store's status "progress" (JSON), at most every ``every`` seconds, for the widget."""
    last = [0.0]

    def write(done: Progress) -> None:
        if time.monotonic() - last[0] >= every or done.done >= done.total:
            last[0] = time.monotonic()
            left = done.seconds_left
            value = {"unit": done.unit, "done": done.done, "total": done.total, "left": left}
            store.set_status("progress", json.dumps(value))

    return write


def log_estimate(
    folder: Path, audit: SessionAudit, store: SessionStore, space, *, round=None
) -> dict | None:
    """The estimate now (None before one can be made), with the last 50 answers' matches and its
    sentence (``session.md.j2``), appended to ``estimates.jsonl`` and shown by the widget."""
    estimate = audit.estimate(store, space)
    if estimate is None:
        return None
    history = store.history().drop_duplicates(["pair_id", "annotator"], keep="last")
    answered = history[history["label"].isin((0, 1)) & (history["annotator"] != "given")]
    tail = answered.sort_values("id").tail(50)
    recent = {"pairs": int(len(tail)), "positives": int((tail["label"] == 1).sum())}
    estimate = {"round": round, "labels": store.counts()["labels"], **estimate, "recent": recent}
    estimate["sentence"] = sentence(estimate)
    with open(folder / "estimates.jsonl", "a") as out:
        out.write(json.dumps(estimate) + "\n")
    store.set_status("estimate", estimate["sentence"])
    return estimate


def sentence(record: dict, macro: str = "estimate") -> str:
    """A session record (an estimate, a record use) in words: a macro of ``session.md.j2``."""
    return templating.markdown(macro, record, template="session.md.j2")


def spawn(job: Job):
    """Start the loop in a spawned child process; returns the ``multiprocessing.Process``."""
    process = multiprocessing.get_context("spawn").Process(
        target=_work,
        args=(job, os.getpid()),
        name=f"pairlab-session-{job.folder.name}",
        daemon=True,
    )
    process.start()
    return process


def _work(job: Job, parent: int) -> None:
    with contextlib.suppress(OSError):
        os.nice(10)  # the kernel answering the person's keys comes first
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()
    run_job(job)


def _exit_with(parent: int, every: float = 1.0) -> None:
    """End this process once ``parent`` (the kernel) is gone, releasing the run folder's lock."""
    while True:
        time.sleep(every)
        if os.getppid() != parent:
            os._exit(0)
