"""A labelling session's round loop, notebook 03's :class:`~pairlab.active.loop.ActiveRun` with a
:class:`~pairlab.annotators.person.PersonAnnotator`, run in its own process (``nice``: the
kernel answering the widget comes first), which exits when the kernel that started it is gone."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .. import templating
from ..active.config import ActiveConfig
from ..active.loop import ActiveRun
from ..annotators.person import PersonAnnotator, SessionStore
from .audit import MIN_ROUND, SessionAudit
from .settings import SessionSettings

__all__ = ["Job", "run_job", "log_estimate", "spawn"]

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
    oracle = s.annotator == "oracle"  # the truth answers; only it can check the coverage
    audit = SessionAudit(
        job.folder / "audit",
        seed=job.config.seed,
        coverage=int(s.coverage) if oracle else 0,
        matches_per_record=s.matches_per_record,
    )
    spares = 0 if oracle else s.batch if s.spares is None else int(s.spares)
    annotator = PersonAnnotator(
        store,
        who=s.annotator,
        oracle=job.pool if oracle else None,
        audits=job.audits,
        spares=spares,
        audit=audit,
        one_to_one=s.one_to_one,
    )

    def status(event: str, **p) -> None:
        """The loop's progress in the store's status, for the widget; the estimate each round."""
        if event == "stage_started":
            stage = STAGES.get(p["stage"], p["stage"])
            store.set_status("worker", f"round {p['round']}: {stage}")
        elif event == "round_finished":
            r = p["record"]
            done = f"{r['labels']:,} labels, {r['positives_found']:,} matches"
            store.set_status("worker", f"round {r['round']} done: {done}")
            if log_estimate(job.folder, audit, store, job.pool.space, round=r["round"]) is None:
                answered = {"answered": audit.audit_answers(store), "needed": audit.n_strata}
                pending = {**answered, "share": s.audit_share, "first_round": MIN_ROUND}
                store.set_status("estimate_pending", sentence(pending, "estimate_pending"))
        elif event == "run_finished":
            store.set_status("worker", "finished: every round is labelled")

    run = ActiveRun(
        job.config,
        {"train": job.pool},
        {},
        job.folder / "run",
        annotator=annotator,
        learner=learner,
        callbacks=[status, *callbacks],
    )
    try:
        return run.run()
    finally:
        done = (job.folder / "run" / "result.json").is_file()
        store.set_status("worker", "finished" if done else "stopped")


def log_estimate(
    folder: Path, audit: SessionAudit, store: SessionStore, space, *, round=None
) -> dict | None:
    """The estimate now (None before one can be made), with the last 50 answers' matches and its
    sentence (``session.md.j2``), appended to ``estimates.jsonl`` and shown by the widget."""
    estimate = audit.estimate(store, space)
    if estimate is None:
        return None
    history = store.history().drop_duplicates("pair_id", keep="last")
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
