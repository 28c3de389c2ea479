"""The round loop of a labelling session, run where the person never waits on it: in its own
process (``nice``: the kernel answering the widget keeps the CPU it needs), exiting when the
kernel that started it is gone. It is the very :class:`~pairlab.active.loop.ActiveRun` of
notebook 03, with a :class:`~pairlab.annotators.person.PersonAnnotator` for an annotator."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..active.config import ActiveConfig
from ..active.loop import ActiveRun
from ..annotators.person import PersonAnnotator, SessionStore
from .audit import SessionAudit

__all__ = [
    "Job",
    "run_job",
    "StatusLog",
    "EstimateLog",
    "log_estimate",
    "recent_positives",
    "spawn",
]


@dataclass(frozen=True)
class Job:
    """What the worker runs: the loop's settings, the pool, the session folder, who labels."""

    config: ActiveConfig
    pool: object  # a RecordPool
    folder: Path
    who: str = "person"
    oracle: bool = False  # answer every posted pair from the pool's truth (a simulation)
    audits: tuple[int, ...] = ()  # audit pairs planned in each round (of the pairs shown)
    spares: int = 0  # pairs beyond each batch for the person while the model trains
    coverage: int = 0  # with the oracle: fresh audits redrawn each round to check the intervals
    matches_per_record: float | None = None  # the audit prior's bound (None: the default prior)


def run_job(job: Job, *, callbacks=(), learner=None) -> dict:
    """Run (or resume) the session's loop in this process; returns the run's result.
    ``learner`` replaces CosineBERT (tests)."""
    store = SessionStore(job.folder / "labels.sqlite")
    audit = SessionAudit(
        job.folder / "audit",
        seed=job.config.seed,
        coverage=job.coverage,
        matches_per_record=job.matches_per_record,
    )
    annotator = PersonAnnotator(
        store,
        who=job.who,
        oracle=job.pool if job.oracle else None,
        audits=job.audits,
        spares=job.spares,
        audit=audit,
    )
    log = EstimateLog(job.folder, audit, store)
    run = ActiveRun(
        job.config,
        {"train": job.pool},
        {},
        job.folder / "run",
        annotator=annotator,
        learner=learner,
        callbacks=[StatusLog(store), log, *callbacks],
    )
    try:
        return run.run()
    finally:
        store.set_status(
            "worker", "finished" if (job.folder / "run" / "result.json").is_file() else "stopped"
        )


class StatusLog:
    """A loop callback writing what the loop is doing to the session store, for the widget."""

    LABELS = {
        "embed": "embedding the records",
        "search": "searching candidate pairs",
        "select": "choosing pairs",
        "annotate": "waiting for your answers",
        "train": "training the model",
        "export": "exporting the model",
        "evaluate": "evaluating",
    }

    def __init__(self, store: SessionStore):
        self.store = store

    def __call__(self, event: str, **p) -> None:
        if event == "stage_started":
            self.store.set_status(
                "worker", f"round {p['round']}: {self.LABELS.get(p['stage'], p['stage'])}"
            )
        elif event == "round_finished":
            r = p["record"]
            self.store.set_status(
                "worker",
                f"round {r['round']} done: {r['labels']:,} labels, "
                f"{r['positives_found']:,} matches",
            )
        elif event == "run_finished":
            self.store.set_status("worker", "finished: every round is labelled")


class EstimateLog:
    """A loop callback: after each round, the audit's estimate so far, appended to
    ``<session>/estimates.jsonl`` and written to the store's status for the widget."""

    def __init__(self, folder: Path, audit: SessionAudit, store: SessionStore):
        self.folder, self.audit, self.store = Path(folder), audit, store

    def __call__(self, event: str, **p) -> None:
        if event == "round_finished":
            log_estimate(self.folder, self.audit, self.store, round=p["record"]["round"])


def log_estimate(
    folder: Path, audit: SessionAudit, store: SessionStore, *, round=None
) -> dict | None:
    """The estimate now (:meth:`SessionAudit.estimate`) with its stopping sentence, appended to
    ``estimates.jsonl`` and shown by the widget; None before any audit answer."""
    import json

    from .guide import stopping_sentence

    estimate = audit.estimate(store)
    if estimate is None:
        return None
    counts = store.counts()
    estimate = {
        "round": round,
        "labels": counts["labels"],
        **estimate,
        "recent": recent_positives(store),
    }
    estimate["sentence"] = stopping_sentence(estimate)
    with open(folder / "estimates.jsonl", "a") as out:
        out.write(json.dumps(estimate) + "\n")
    store.set_status("estimate", estimate["sentence"])
    return estimate


def recent_positives(store: SessionStore, last: int = 50) -> dict:
    """Matches among the last ``last`` yes/no answers (the person's recent yield)."""
    history = store.history()
    current = history.drop_duplicates("pair_id", keep="last")
    answered = current[current["label"].isin((0, 1)) & (current["annotator"] != "given")]
    tail = answered.sort_values("id").tail(last)
    return {"pairs": int(len(tail)), "positives": int((tail["label"] == 1).sum())}


def spawn(job: Job):
    """Start the loop in a child process (spawned: no state shared with the kernel but the
    folder); returns the ``multiprocessing.Process``."""
    import multiprocessing

    process = multiprocessing.get_context("spawn").Process(
        target=_work,
        args=(job, os.getpid()),
        name=f"pairlab-session-{job.folder.name}",
        daemon=True,
    )
    process.start()
    return process


def _work(job: Job, parent: int) -> None:
    try:
        os.nice(10)  # the kernel answering the person's keys comes first
    except OSError:
        pass
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()
    run_job(job)


def _exit_with(parent: int, every: float = 1.0) -> None:
    """End this process once ``parent`` (the kernel) is gone: a killed kernel leaves no worker
    holding the run folder's lock; the next one resumes the run."""
    while True:
        time.sleep(every)
        if os.getppid() != parent:
            os._exit(0)
