"""Label your own pairs: :class:`LabelingSession`, a person in notebook 03's loop (run in a
worker process, :mod:`.worker`). The session folder holds ``labels.sqlite`` (every answer,
committed before the next pair shows), ``run/`` (the loop's run folder, resumed after a killed
kernel), ``audit/``, ``cache/`` (the export's cross-encoder scores) and ``export/``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..active.config import ActiveConfig
from ..active.store import differing_keys, load_result
from ..active.strategies import make_strategy
from ..annotators.person import UNANSWERED, SessionStore
from ..data.items import Records
from ..data.pairs import of_matched_records
from ..data.recordpool import RecordPool, record_pairs
from ..io import read_json, to_json, write_json
from ..progress import listening
from .audit import SessionAudit
from .export import export_session, label_frame, match_quality, read_matches
from .settings import SessionSettings
from .worker import Job, first_pairs, log_estimate, run_job, sentence, spawn

__all__ = ["LabelingSession", "one_to_one_advice", "session_config"]

SETTINGS_FILE = "session.json"  # the settings a session's loop last ran with (a grown budget)
ONE_TO_ONE_EVIDENCE = 20  # labelled matches, all on distinct records, before suggesting one_to_one


def session_config(
    pool: RecordPool, settings: SessionSettings, batches, *, model=None, precision=None
) -> ActiveConfig:
    """The loop's settings for a session: the strategy picks ``batches`` pairs a round (the
    pairs shown less the audit's), the final model kept, trained in ``precision`` (None:
    bfloat16 where the CPU does it natively, twice as fast, so that the rounds keep up with a
    team) unless ``train`` says."""
    from ..models.training import native_bf16

    one_to_one = {"strategy_params": {"one_to_one": True}} if settings.one_to_one else {}
    precision = precision or ("bf16" if native_bf16() else "fp32")
    return ActiveConfig(
        task=pool.task,
        strategy=settings.strategy,
        seed=settings.seed,
        batches=tuple(int(b) for b in batches),
        candidate_m=settings.candidate_m,
        model=model,
        epochs=settings.epochs,
        max_seq_length=settings.max_seq_length,
        n_boot=2,
        curve=False,
        keep_model=True,
        annotator={
            "kind": "person",
            "name": settings.annotator,
            "audit_share": settings.audit_share,
        },
        **one_to_one,
        **{"precision": precision, **settings.train},
    )


def planned_rounds(folder: Path, settings: SessionSettings, *, audited: bool):
    """``(shown, audit)`` per round (:meth:`SessionSettings.rounds`); where ``folder`` holds this
    session's run with a smaller budget, that run's rounds first, then the rest in rounds of
    ``batch``, so the loop goes on from its last finished round."""
    path = folder / SETTINGS_FILE
    old = read_json(path) if path.is_file() and (folder / "run" / "config.json").is_file() else {}
    grown = isinstance(old, dict) and differing_keys(old, to_json(asdict(settings))) == ["budget"]
    # no run, the same budget, or a change the run folder's check refuses: the plan from scratch
    done = int(old["budget"]) if grown and old["budget"] < settings.budget else 0
    return settings.rounds(audited=audited, done=done)


def one_to_one_advice(use: dict, one_to_one: bool) -> str:
    """Whether the counts of :meth:`LabelingSession.record_use` say ``one_to_one`` is set the
    wrong way: "several_matches" (set, and a record is in two matches), "distinct_records" (not
    set, enough matches all on distinct records, and non-matches of matched records), else ""."""
    several, spent = use["records_in_several"], use["non_matches_of_matched"]
    if one_to_one and several:
        return "several_matches"
    if not one_to_one and not several and spent and use["matches"] >= ONE_TO_ONE_EVIDENCE:
        return "distinct_records"
    return ""


_FIELDS = tuple(f.name for f in fields(SessionSettings))


class LabelingSession:
    """A person labels the pairs an active learner picks among ``items``' records.

    ``items``: :class:`~pairlab.data.items.Records` (``load_items``) of one table, duplicates
    within it; ``right``: a second table's to match against (``None``: one table). ``positives``
    and ``negatives``: pairs already known (files or frames of id pairs); ``oracle_pairs``: every
    true pair, for ``annotator="oracle"``. The settings are a :class:`SessionSettings`
    (``settings``) or its fields as keywords; other keywords are the loop's
    :class:`~pairlab.active.config.ActiveConfig` fields. A larger budget on the same folder goes
    on from its last round; other changed settings need a new folder."""

    def __init__(
        self,
        items: Records,
        folder,
        *,
        right: Records | None = None,
        model=None,
        oracle_pairs=None,
        positives=None,
        negatives=None,
        name: str | None = None,
        settings: SessionSettings | None = None,
        **options,
    ):
        given = {k: options.pop(k) for k in list(options) if k in _FIELDS}
        base = settings or SessionSettings()
        train = {**base.train, **given.pop("train", {}), **options}  # the loop's other fields
        self.settings = replace(base, **given, train=train)
        if self.settings.annotator == "oracle" and oracle_pairs is None:
            raise ValueError(
                "annotator='oracle' needs oracle_pairs: the file of every true pair "
                "(first two columns: left id, right id)"
            )
        self.items = items
        known = dict(positives=positives, negatives=negatives, name=name)
        self.data = dict(right=right, model=model, oracle_pairs=oracle_pairs, **known)  # sibling()
        self.pool = record_pairs(items, right, all_positives=oracle_pairs, **known)
        if self.settings.budget > self.pool.n_pairs:  # before any round is planned
            raise ValueError(
                f"a budget of {self.settings.budget:,} labels exceeds the "
                f"{self.pool.n_pairs:,} pairs of {self.pool.task}: lower it"
            )
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        # an audit needs a share asked for and a strategy training the model that stratifies it
        audited = self.settings.audit_share > 0 and make_strategy(self.settings.strategy).adaptive
        # the same session with a larger budget: its run goes on when run() or start() is called
        self.shown, self.audits = planned_rounds(self.folder, self.settings, audited=audited)
        batches = np.subtract(self.shown, self.audits)
        run = self.folder / "run" / "config.json"  # a run goes on in its own arithmetic
        precision = read_json(run).get("precision") if run.is_file() else None
        self.config = session_config(
            self.pool, self.settings, batches, model=model, precision=precision
        )
        self.store = SessionStore(self.folder / "labels.sqlite")
        self.process = None
        self._give_known()

    def sibling(self, folder, **changes) -> LabelingSession:
        """A session on the same records and known pairs in ``folder``, with ``changes`` to
        the settings (the oracle's comparisons and coverage checks)."""
        settings = replace(self.settings, **changes)
        return LabelingSession(self.items, folder, **self.data, settings=settings)

    def _give_known(self) -> None:
        """The pairs known before the session (``positives``, ``negatives``) as answers of
        "given": never asked, trained on from the first round (they join its labels)."""
        positives, negatives = self.pool.known_positives, self.pool.stated_negatives
        known = np.concatenate([positives, negatives])
        labels = np.repeat([1, 0], [len(positives), len(negatives)])
        self.store.post(0, known, "given")
        new = self.store.answers(known) == UNANSWERED  # given once: a reopened session has them
        for pair_id, label in zip(known[new], labels[new]):
            self.store.answer(int(pair_id), int(label), annotator="given")

    # -- running ------------------------------------------------------------------------------

    @property
    def job(self) -> Job:
        return Job(self.config, self.pool, self.folder, self.settings, self.audits)

    def run(self, *, callbacks=(), learner=None) -> dict:
        """Run the loop here to its end (the oracle answers at once); returns the run's result.
        ``learner`` replaces CosineBERT (tests)."""
        if self.settings.annotator == "person":
            raise RuntimeError(
                "a person's session runs in the background: call start(), then label in widget()"
            )
        self._ready_to_run()
        with listening():  # each step's bar, for a kernel's output and a papermill log
            return run_job(self.job, callbacks=callbacks, learner=learner)

    def _ready_to_run(self) -> None:
        """Before the loop runs: a grown budget (rounds after the run's own, nothing else
        changed) written to the run folder, whose result is then no longer final; a clear error
        here, not in the worker, where the folder's run has other settings."""
        path, config = self.folder / "run" / "config.json", to_json(self.config.to_dict())
        old = read_json(path) if path.is_file() else {}
        differ = differing_keys(old, config) if old else []
        done, planned = tuple(old.get("batches") or ()), tuple(config["batches"])
        if differ == ["batches"] and done and planned[: len(done)] == done != planned:
            (self.folder / "run" / "result.json").unlink(missing_ok=True)
            write_json(path, config)
        elif differ:
            raise ValueError(
                f"{self.folder} holds a session run with other settings (differing in {differ}): "
                "a session goes on with the same settings or a larger budget only. For other "
                "settings, start a new folder and bring the answers: labels = LabelingSession("
                "<the old settings>).labels(); positives=labels[labels.label == 1][['left_id', "
                "'right_id']], and negatives= likewise"
            )
        write_json(self.folder / SETTINGS_FILE, to_json(asdict(self.settings)))

    def start(self) -> LabelingSession:
        """Start (or resume) the loop in a worker process (one still running is kept); the person
        labels in :meth:`widget` meanwhile, from the first pairs (:meth:`_first_pairs`) on."""
        if self.process is None or not self.process.is_alive():
            self._ready_to_run()
            self._first_pairs()
            self.process = spawn(self.job)
        return self

    def _first_pairs(self) -> None:
        """A new session's first pairs, to label while round 1 embeds the records (minutes for
        25,000 records on 2 cores): :func:`.worker.first_pairs` of ``batch`` records, queued as
        spares (they join round 1's labels); the worker tops them up as they are answered."""
        queue = self.store.queue()
        if (queue["kind"] != "given").any():
            return  # the session has begun: its queue goes on
        pairs = first_pairs(self.pool, self.settings.seed, self.settings.batch, queue["pair_id"])
        self.store.post(1, pairs, "spare", agreement=self.settings.agreement_share)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the worker (every answer is already saved; the run resumes on start())."""
        if self.process is not None and self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout)
        self.process = None

    def wait(self, *, timeout: float | None = None) -> dict | None:
        """Block until the worker has finished the run; returns the result (None on timeout)."""
        if self.process is not None:
            self.process.join(timeout)
            if self.process.is_alive():
                return None
        return self.result()

    def result(self) -> dict | None:
        return load_result(self.folder / "run")

    # -- the person's side --------------------------------------------------------------------

    def texts(self, pair_id: int) -> tuple[str, str]:
        left, right = self.pool.texts(np.array([pair_id], np.int64))
        return str(left[0]), str(right[0])

    def widget(self, **kwargs):
        """The labelling widget on this session's store (:mod:`pairlab.widgets.labeller`)."""
        from ..widgets.labeller import LabellingWidget

        right = self.pool.left if self.pool.symmetric else self.pool.right
        titles = {"left_title": self.pool.left.name, "right_title": right.name}
        options = {"annotator": self.settings.annotator, **titles, **kwargs}
        return LabellingWidget(self.store, self.texts, **options)

    def counts(self) -> dict:
        return self.store.counts()

    # -- how far am I? ------------------------------------------------------------------------

    def estimate(self) -> dict:
        """The audit's estimate now (:meth:`.audit.SessionAudit.estimate`) and its ``sentence``;
        before there is one, ``total`` None and ``waiting`` says why ("no_audit", "one_class",
        "first_model" or "answers")."""
        audit = SessionAudit(
            self.folder / "audit", matches_per_record=self.settings.matches_per_record
        )
        estimate = log_estimate(self.folder, audit, self.store, self.pool.space)
        if estimate is not None:
            return estimate
        skipped, counts = audit.skipped(), self.counts()
        why = "answers" if audit.rounds() else "one_class" if skipped else "first_model"
        waiting = {
            "found": counts["positives"],
            "labels": counts["labels"],
            "total": None,
            "waiting": why if self.settings.audit_share else "no_audit",
            "skipped_round": skipped[-1]["round"] if skipped else None,
            "audit_answers": audit.audit_answers(self.store),
            "n_strata": audit.n_strata,
        }
        return {**waiting, "sentence": sentence(waiting)}

    def record_use(self) -> dict:
        """How the labelled matches sit on the records: ``matches``, ``records_in_several``
        (records in more than one), ``non_matches_of_matched`` (non-match answers pairing a
        matched record: what ``one_to_one`` spares), ``advice`` (:func:`one_to_one_advice`) and
        its ``sentence``."""
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
        use["advice"] = one_to_one_advice(use, bool(self.settings.one_to_one))
        return {**use, "sentence": sentence(use, "one_to_one")}

    def estimate_table(self):
        """The estimates logged so far, one row each (after every round, and every call of
        :meth:`estimate`)."""
        path = self.folder / "estimates.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        columns = (
            "round labels found total total_ci recall_found recall_found_ci precision recall "
            "audit_labels"
        ).split()
        return pd.DataFrame([{c: r.get(c) for c in columns} for r in rows], columns=columns)

    def labels(self):
        """Every current answer with its pair's records (:func:`.export.label_frame`)."""
        return label_frame(self.pool, self.store)

    # -- out ----------------------------------------------------------------------------------

    def export(self, folder=None, **options) -> dict:
        """:func:`.export.export_session` to ``folder`` (default: the session's ``export/``)."""
        with listening():
            return export_session(
                self, Path(folder) if folder else self.folder / "export", **options
            )

    def largest_clusters(self, folder=None, *, n: int = 5):
        """The records of the ``n`` largest clusters of an export (one table)."""
        table = pd.read_csv(
            Path(folder or self.folder / "export") / "clusters.csv", dtype={"id": str}
        )
        return table[(table["cluster"] < n) & (table["size"] > 1)]

    def matches_frame(self, folder=None):
        """An export's matches with both records' texts, highest score first."""
        matches, ids = read_matches(folder or self.folder / "export", self.pool)
        matches["left"], matches["right"] = self.pool.texts(ids)
        return matches.sort_values("score", ascending=False, na_position="first")

    def metrics(self, exported: dict, *, oracle_pairs: bool = False) -> dict:
        """The session's figures for the notebook's metrics file (``exported``: the export's
        record, empty before it); with the truth known (``oracle_pairs``), the exported matches'
        precision, recall and F1 against it and the recall the labels reached."""
        counts, estimate = self.counts(), self.estimate()
        out = {
            **{k: counts[k] for k in ("labels", "positives", "unsure")},
            "rounds": len((self.result() or {}).get("records", [])),
            **{k: exported.get(k) for k in ("matches", "clusters", "threshold")},
            "matcher": exported.get("chosen"),
            "matcher_estimates": exported.get("estimates"),
            "audit_labels": SessionAudit(self.folder / "audit").audit_answers(self.store),
            "est_positives": {"point": estimate["total"], "ci": estimate.get("total_ci")},
            "est_recall": {
                "point": estimate.get("recall_found"),
                "ci": estimate.get("recall_found_ci"),
            },
            "est_sentence": estimate["sentence"],
        }
        if oracle_pairs and self.pool.truth_known and exported:
            out.update(match_quality(self, exported))
        return out

    def coverage_checks(self) -> list[dict]:
        """With the oracle and ``coverage`` > 0: each audit round's check of its intervals."""
        return SessionAudit(self.folder / "audit").coverage_rounds()

    def __repr__(self) -> str:
        return (
            f"LabelingSession({self.pool.task}: {self.settings.annotator}, {self.config.strategy}, "
            f"{self.settings.budget:,} answers in {len(self.shown)} rounds, {self.folder})"
        )
