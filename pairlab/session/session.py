"""Label your own pairs: :class:`LabelingSession`, a person in notebook 03's active-learning loop.

The session is the simulation's loop (:class:`~pairlab.active.loop.ActiveRun`: the same
strategies, candidate search, CosineBERT retrained from the pretrained checkpoint each round,
and run folder) with a person for its annotator. The loop runs in a worker process
(:mod:`.worker`); the person answers in a widget in the kernel; both share one SQLite file
(:class:`~pairlab.annotators.person.SessionStore`), where every answer is committed before the
next pair shows. A killed kernel loses nothing: running the cell again starts a worker that
resumes the run folder, and the widget shows the first pair without an answer.

The session folder holds ``labels.sqlite`` (the queue and every answer), ``run/`` (the loop's
run folder: config, rounds, models), ``audit/`` (the audit rounds' designs), ``cache/`` (the
export's cross-encoder scores, read back while the answers stay the same) and, after
:meth:`LabelingSession.export`, what the person came for (:mod:`.export`).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..active.config import ActiveConfig
from ..active.store import differing_keys
from ..annotators.person import UNANSWERED, SessionStore
from ..data.items import Records
from ..data.recordpool import RecordPool, record_pairs
from ..io import read_json, to_json, write_json
from .worker import Job, run_job, spawn

__all__ = ["LabelingSession", "session_config", "ANNOTATORS"]

ANNOTATORS = ("person", "oracle")  # oracle: the truth plays the person (papermill, CI, coverage)


def session_config(
    pool: RecordPool,
    *,
    strategy: str,
    batch: int,
    budget: int,
    seed: int,
    model,
    candidate_m: int,
    epochs,
    max_seq_length: int,
    who: str,
    audit_share: float,
    **extra,
) -> ActiveConfig:
    """The loop's settings for a session: ``budget`` labels in rounds of ``batch`` pairs (the
    last round takes the rest), the first from static retrieval, the final model kept."""
    for name, value in (("batch", batch), ("budget", budget)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if budget > pool.n_pairs:
        raise ValueError(
            f"a budget of {budget:,} labels exceeds the {pool.n_pairs:,} pairs of "
            f"{pool.task}: lower it"
        )
    rounds, rest = divmod(budget, batch)
    batches = (batch,) * rounds + ((rest,) if rest else ())
    return ActiveConfig(
        task=pool.task,
        strategy=strategy,
        seed=seed,
        batches=batches,
        candidate_m=candidate_m,
        model=model,
        epochs=epochs,
        max_seq_length=max_seq_length,
        n_boot=2,
        curve=False,
        keep_model=True,
        annotator={"kind": "person", "name": who, "audit_share": audit_share},
        **extra,
    )


def grown_config(run_folder: Path, config: ActiveConfig, batch: int) -> ActiveConfig | None:
    """A larger budget for a session: where ``run_folder`` holds this session's run with fewer
    labels and every other setting the same, ``config`` with that run's rounds first and the
    labels added in rounds of ``batch`` after them, so the loop goes on from its last finished
    round; None where there is no run yet, or it differs in more than its budget (then the run
    folder's own check says what differs)."""
    path = run_folder / "config.json"
    if not path.is_file():
        return None
    old, new = read_json(path), to_json(config.to_dict())
    if not isinstance(old, dict) or differing_keys(old, new) != ["batches"]:
        return None
    done = tuple(old.get("batches") or ())
    extra = sum(config.batches) - sum(done)
    if not done or extra < 0:
        return None
    rounds, rest = divmod(extra, batch)
    return replace(config, batches=done + (batch,) * rounds + ((rest,) if rest else ()))


def _rounds_added(old: dict, new: dict) -> bool:
    """Run configs (JSON): ``new`` is ``old`` with rounds after its own, nothing else changed."""
    done, more = tuple(old.get("batches") or ()), tuple(new.get("batches") or ())
    return (
        differing_keys(old, new) == ["batches"]
        and bool(done)
        and len(more) > len(done)
        and more[: len(done)] == done
    )


def _same_settings(folder: Path, config: ActiveConfig) -> None:
    """A clear error, in the kernel rather than in the worker, where ``folder`` holds a session
    run with other settings than ``config`` (a larger budget aside: :func:`grown_config`)."""
    path = folder / "run" / "config.json"
    old = read_json(path) if path.is_file() else None
    differ = [] if old is None else differing_keys(old, to_json(config.to_dict()))
    if not differ:
        return
    raise ValueError(
        f"{folder} holds a session run with other settings (differing in {differ}): a session "
        "goes on with the same settings or a larger budget only. For other settings, start a "
        "new folder and bring the answers: labels = LabelingSession(<the old settings>).labels(); "
        "positives=labels[labels.label == 1][['left_id', 'right_id']], and negatives= likewise"
    )


class LabelingSession:
    """A person labels the pairs an active learner picks among ``items``' records.

    ``items``: :class:`~pairlab.data.items.Records` (``load_items``) of one table, duplicates
    within it; ``right``: a second table's to match against (``None``: one table). ``positives``
    and ``negatives``: pairs already known (files or frames of id pairs). ``annotator``:
    ``"person"`` (the widget, :meth:`widget`) or ``"oracle"`` (``oracle_pairs``, every true pair,
    answers: a simulation, run to the end by :meth:`run`). ``batch`` pairs a round, ``budget``
    labels in all (a larger budget on the same folder goes on from its last round; other
    changed settings need a new folder), ``audit_share`` of the pairs shown drawn for the recall estimate, ``spares``
    candidates beyond each batch to label while the model retrains (person only).
    ``matches_per_record``: the recall estimate's stated assumption, at most that many matches a
    record of the smaller table (one table: a record) are left to find (the ``"bounded"`` audit
    prior); ``None`` lets the estimate rest on the model's calibration alone, whose tail can be
    far off (notebook 10, section 6 checks both against the truth). ``one_to_one``: every
    record matches at most one other (two catalogues of distinct products), so a pair of a record
    already matched is never asked (:class:`~pairlab.active.strategies.OneToOne`)."""

    def __init__(
        self,
        items: Records,
        folder,
        *,
        right: Records | None = None,
        model=None,
        strategy: str = "uncertainty",
        batch: int = 64,
        budget: int = 1408,
        annotator: str = "person",
        oracle_pairs=None,
        positives=None,
        negatives=None,
        audit_share: float = 0.1,
        spares: int | None = None,
        candidate_m: int = 20,
        seed: int = 0,
        epochs=2,
        max_seq_length: int = 128,
        name: str | None = None,
        coverage: int = 0,
        matches_per_record: float | None = 1.0,
        one_to_one: bool = False,
        **train,
    ):
        if annotator not in ANNOTATORS:
            raise ValueError(f"annotator must be one of {ANNOTATORS}, got {annotator!r}")
        if annotator == "oracle" and oracle_pairs is None:
            raise ValueError(
                "annotator='oracle' needs oracle_pairs: the file of every true pair "
                "(first two columns: left id, right id)"
            )
        self.pool = record_pairs(
            items,
            right,
            positives=positives,
            negatives=negatives,
            all_positives=oracle_pairs,
            name=name,
        )
        self.folder = Path(folder)
        self.annotator = annotator
        self.who = "oracle" if annotator == "oracle" else "person"
        self.config = session_config(
            self.pool,
            strategy=strategy,
            batch=batch,
            budget=budget,
            seed=seed,
            model=model,
            candidate_m=candidate_m,
            epochs=epochs,
            max_seq_length=max_seq_length,
            who=self.who,
            audit_share=audit_share,
            **({"strategy_params": {"one_to_one": True}} if one_to_one else {}),
            **train,
        )
        self.options = dict(
            right=right,
            model=model,
            strategy=strategy,
            batch=batch,
            budget=budget,
            annotator=annotator,
            oracle_pairs=oracle_pairs,
            positives=positives,
            negatives=negatives,
            audit_share=audit_share,
            spares=spares,
            candidate_m=candidate_m,
            seed=seed,
            epochs=epochs,
            max_seq_length=max_seq_length,
            name=name,
            coverage=coverage,
            matches_per_record=matches_per_record,
            one_to_one=one_to_one,
            **train,
        )
        if matches_per_record is not None and not matches_per_record > 0:
            raise ValueError(f"matches_per_record must be > 0, got {matches_per_record!r}")
        self.matches_per_record = matches_per_record
        self.audit_share, self.coverage = audit_share, (coverage if annotator == "oracle" else 0)
        self.spares = (batch if spares is None else spares) if annotator == "person" else 0
        self.folder.mkdir(parents=True, exist_ok=True)
        # the same session with a larger budget: its run goes on when run() or start() is called
        self.config = grown_config(self.folder / "run", self.config, batch) or self.config
        self.store = SessionStore(self.folder / "labels.sqlite")
        self.process = None
        self._give_known()

    def _give_known(self) -> None:
        """The pairs known before the session (``positives``, ``negatives``) as answers of
        "given": never asked, trained on from the first round (they join its labels)."""
        known = np.concatenate([self.pool.known_positives, self.pool.stated_negatives])
        if not len(known):
            return
        labels = np.concatenate(
            [
                np.ones(len(self.pool.known_positives), np.int8),
                np.zeros(len(self.pool.stated_negatives), np.int8),
            ]
        )
        self.store.post(0, known, "given")
        new = self.store.answers(known) == UNANSWERED  # given once: a reopened session has them
        for pair_id, label in zip(known[new], labels[new]):
            self.store.answer(int(pair_id), int(label), annotator="given")

    # -- running ------------------------------------------------------------------------------

    @property
    def job(self) -> Job:
        return Job(
            self.config,
            self.pool,
            self.folder,
            who=self.who,
            oracle=self.annotator == "oracle",
            audit_share=self.audit_share,
            spares=self.spares,
            coverage=self.coverage,
            matches_per_record=self.matches_per_record,
        )

    def run(self, *, callbacks=(), learner=None) -> dict:
        """Run the loop here to its end (the oracle answers at once); returns the run's result.
        ``learner`` replaces CosineBERT (tests)."""
        if self.annotator == "person":
            raise RuntimeError(
                "a person's session runs in the background: call start(), then label in widget()"
            )
        self._ready_to_run()
        return run_job(self.job, callbacks=callbacks, learner=learner)

    def _ready_to_run(self) -> None:
        """Before the loop runs: a grown budget written to the run folder (whose finished
        result is then no longer final), or a clear error here where the folder's run has other
        settings. Opening a session to export or look at it changes and checks nothing."""
        path, config = self.folder / "run" / "config.json", to_json(self.config.to_dict())
        old = read_json(path) if path.is_file() else None
        if old is not None and _rounds_added(old, config):
            (self.folder / "run" / "result.json").unlink(missing_ok=True)
            write_json(path, config)
        _same_settings(self.folder, self.config)

    def start(self) -> LabelingSession:
        """Start (or resume) the loop in a worker process; the person labels in :meth:`widget`
        meanwhile. A worker still running is kept."""
        if self.process is None or not self.process.is_alive():
            self._ready_to_run()
            self.process = spawn(self.job)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the worker (every answer is already saved; the run resumes on start())."""
        if self.process is not None and self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout)
        self.process = None

    def wait(self, *, poll: float = 1.0, timeout: float | None = None) -> dict | None:
        """Block until the worker has finished the run; returns the result (None on timeout)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.process is not None and self.process.is_alive():
            if deadline is not None and time.monotonic() > deadline:
                return None
            time.sleep(poll)
        return self.result()

    def result(self) -> dict | None:
        from ..active.store import load_result

        return load_result(self.folder / "run")

    # -- the person's side --------------------------------------------------------------------

    def texts(self, pair_id: int) -> tuple[str, str]:
        left, right = self.pool.texts(np.array([pair_id], np.int64))
        return str(left[0]), str(right[0])

    def widget(self, **kwargs):
        """The labelling widget on this session's store (:mod:`pairlab.widgets.labeller`)."""
        from ..widgets.labeller import LabellingWidget

        titles = {
            "left_title": self.pool.left.name,
            "right_title": self.pool.left.name if self.pool.symmetric else self.pool.right.name,
        }
        return LabellingWidget(self.store, self.texts, annotator=self.who, **{**titles, **kwargs})

    def counts(self) -> dict:
        return self.store.counts()

    # -- how far am I? ------------------------------------------------------------------------

    def estimate(self) -> dict:
        """The audit's estimate now: the matching pairs in the whole collection, the share found
        and the model's precision and recall, each with a 95% interval, and a plain sentence
        (:mod:`.audit`, :mod:`.guide`). Before any audit answer, what is known and why no
        estimate yet."""
        from .audit import SessionAudit
        from .worker import log_estimate

        estimate = log_estimate(self.folder, SessionAudit(self.folder / "audit"), self.store)
        if estimate is not None:
            return estimate
        counts = self.counts()
        audit = SessionAudit(self.folder / "audit")
        skipped = audit.skipped()
        why = (
            "audit_share is 0: no audit pairs are drawn"
            if not self.audit_share
            else f"no audit yet: in round {skipped[-1]['round']}, {skipped[-1]['why']}"
            if skipped and not audit.rounds()
            else "the audit starts in round 2, with the first trained model"
            if not audit.rounds()
            else f"{audit.audit_answers(self.store)} audit answers so far; the estimate needs "
            f"{audit.n_strata}, one for each score stratum"
        )
        return {
            "found": counts["positives"],
            "labels": counts["labels"],
            "total": None,
            "sentence": f"{counts['positives']:,} matches found in {counts['labels']:,} "
            f"labels; no estimate of how many remain yet ({why})",
        }

    def record_use(self) -> dict:
        """How the matches labelled so far sit on the records: ``matches``; ``records_in_several``,
        records in more than one labelled match (in one table a record counts on either side);
        ``non_matches_of_matched``, non-match answers that pair a record in a labelled match (the
        labels ``one_to_one`` spares where no record has two matches); and ``advice``, a sentence
        when these counts say ``one_to_one`` is probably set the wrong way (else "")."""
        from ..active.strategies import of_matched_records
        from .guide import one_to_one_sentence

        ids, labels = self.store.labelled()
        space = self.pool.space
        left, right = space.decode(ids[labels == 1])
        sides = [np.concatenate([left, right])] if space.symmetric else [left, right]
        use = {
            "matches": int(labels.sum()),
            "records_in_several": sum(int((np.bincount(s) > 1).sum()) for s in sides),
            "non_matches_of_matched": int(
                of_matched_records(space, ids[labels == 0], ids, labels).sum()
            ),
        }
        return {**use, "advice": one_to_one_sentence(use, bool(self.options["one_to_one"]))}

    def estimate_table(self):
        """The estimates logged so far, one row each (after every round, and every call of
        :meth:`estimate`)."""
        import json

        import pandas as pd

        path = self.folder / "estimates.jsonl"
        rows = (
            [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []
        )
        columns = [
            "round",
            "labels",
            "found",
            "total",
            "total_ci",
            "recall_found",
            "recall_found_ci",
            "precision",
            "recall",
            "audit_labels",
        ]
        return pd.DataFrame([{c: r.get(c) for c in columns} for r in rows], columns=columns)

    def labels(self):
        """Every current answer with its pair's records (:func:`.export.label_frame`)."""
        from .export import label_frame

        return label_frame(self.pool, self.store)

    # -- out ----------------------------------------------------------------------------------

    def export(self, folder=None, **options) -> dict:
        """Write labels.csv, the model, matches.csv and (one table) clusters.csv to ``folder``
        (default: the session folder's ``export/``); returns what was written
        (:func:`.export.export_session`)."""
        from .export import export_session

        return export_session(self, Path(folder) if folder else self.folder / "export", **options)

    def largest_clusters(self, folder=None, *, n: int = 5):
        """The records of the ``n`` largest clusters of an export (one table)."""
        import pandas as pd

        table = pd.read_csv(
            Path(folder or self.folder / "export") / "clusters.csv", dtype={"id": str}
        )
        return table[(table["cluster"] < n) & (table["size"] > 1)]

    def matches_frame(self, folder=None):
        """An export's matches with both records' texts, highest score first."""
        import pandas as pd

        matches = pd.read_csv(
            Path(folder or self.folder / "export") / "matches.csv",
            dtype={"left_id": str, "right_id": str},
        )
        ids = self.pool.pair_ids(
            matches["left_id"].to_numpy(object), matches["right_id"].to_numpy(object)
        )
        matches["left"], matches["right"] = self.pool.texts(ids)
        return matches.sort_values("score", ascending=False, na_position="first")

    def metrics(self, exported: dict, *, oracle_pairs: bool = False) -> dict:
        """The session's figures for the notebook's metrics file; with the truth known
        (``oracle_pairs``), the exported matches' precision, recall and F1 against it and the
        recall the labels reached."""
        from .export import match_quality

        result = self.result() or {}
        counts = self.counts()
        out = {
            "labels": counts["labels"],
            "positives": counts["positives"],
            "unsure": counts["unsure"],
            "rounds": len(result.get("records", [])),
            "matches": exported.get("matches"),
            "clusters": exported.get("clusters"),
            "threshold": exported.get("threshold"),
            "matcher": exported.get("chosen"),
            "matcher_estimates": exported.get("estimates"),
        }
        from .audit import SessionAudit

        estimate = self.estimate()
        out["audit_labels"] = SessionAudit(self.folder / "audit").audit_answers(self.store)
        out["est_positives"] = {"point": estimate["total"], "ci": estimate.get("total_ci")}
        out["est_recall"] = {
            "point": estimate.get("recall_found"),
            "ci": estimate.get("recall_found_ci"),
        }
        out["est_sentence"] = estimate["sentence"]
        if oracle_pairs and self.pool.truth_known:
            out.update(match_quality(self, exported))
        return out

    def coverage_checks(self) -> list[dict]:
        """With the oracle and ``coverage`` > 0: each audit round's check of its intervals."""
        from .audit import SessionAudit

        return SessionAudit(self.folder / "audit").coverage_rounds()

    def __repr__(self) -> str:
        return (
            f"LabelingSession({self.pool.task}: {self.annotator}, {self.config.strategy}, "
            f"{self.config.budget:,} labels in {len(self.config.schedule())} rounds, "
            f"{self.folder})"
        )
