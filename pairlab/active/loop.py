"""The round loop over a run folder (paper section 4): each round embeds the pool with the
selection model, searches the candidates, lets the strategy pick, has the batch labelled,
retrains CosineBERT and evaluates it; a killed run resumes after its last finished round.
Events go to callbacks (``callback(event, task=, strategy=, seed=, **payload)``):
``run_started``, ``stage_started``, ``stage`` (round, stage, seconds), ``round_finished``
(record), ``run_finished``, ``run_reused`` (result), ``run_waiting``; Ray adds ``run_placed``.
"""

from __future__ import annotations

import resource
import shutil
import time
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

from ..data.loaders import Pool
from ..data.pairs import isin_sorted
from ..evaluation.candidates import candidate_recall
from ..evaluation.strata import EvalSet, evaluate
from ..io import locked, remove_stale, to_json, write_json
from ..models.inference import backend, recording_exports
from ..models.scoring import CosineScorer
from ..models.training import quiet_progress
from . import store
from .archive import restore, save
from .committee import member_scores, train_committee
from .config import ActiveConfig
from .learner import CosineBERTLearner
from .strategies import CandidateSearch, RoundState, Strategy

__all__ = [
    "ActiveRun",
    "RunFolderRun",
    "PrintLog",
    "Stages",
    "STAGES",
    "emit",
    "strategy_label",
    "reliability",
]

STAGES = ("embed", "search", "select", "annotate", "train", "export", "evaluate")


class Stages:
    """Wall time per stage of one round (the stages follow one another), each emitted as a
    ``stage`` event."""

    def __init__(self, emit, round: int):
        self.emit, self.round, self.times = emit, round, {}

    @contextmanager
    def __call__(self, stage: str):
        start = time.perf_counter()
        self.emit("stage_started", round=self.round, stage=stage)
        yield
        seconds = time.perf_counter() - start
        self.times[stage] = self.times.get(stage, 0.0) + seconds
        self.emit("stage", round=self.round, stage=stage, seconds=seconds)  # a finished stage

    @contextmanager
    def exports_out_of(self, stage: str):
        """Stage ``stage``, less the inference exports made meanwhile, counted as ``export``."""
        with recording_exports() as made, self(stage):
            yield
        seconds = sum(e["seconds"] for e in made)
        if seconds:
            self.times[stage] -= seconds
            self.times["export"] = self.times.get("export", 0.0) + seconds
            self.emit("stage", round=self.round, stage="export", seconds=seconds)


class PrintLog:
    """A callback printing a line per event worth one in a papermill log or a terminal."""

    def __call__(self, event: str, **p) -> None:
        who = f"{p['task']}/{p['strategy']}/seed {p['seed']}"
        if event == "run_reused":
            print(f"{who}: finished earlier, read back from {p['folder'].name}")
        elif event == "run_placed":
            print(f"{who}: runs on {p['host']} (Ray node {p['node'][:8]}, pid {p['pid']})")
        elif event == "run_waiting":
            print(f"{who}: another process is running it in {p['folder'].name}; waiting for it")
        elif event == "run_started" and (p["resumed"] or p["removed_temporaries"]):
            removed = p["removed_temporaries"]
            print(
                f"{who}: resuming after round {p['resumed']} of {len(p['schedule'])}"
                + (f" ({removed} temporary file(s) of a killed run removed)" if removed else "")
            )
        elif event == "round_finished":
            print(f"{who} round {p['record']['round']}: {self.round_line(p['record'])}")

    @staticmethod
    def round_line(r: dict) -> str:
        """What a finished round's line says after its run and round number."""
        if "n_questions" in r:  # a query-level round (:class:`~.queries.QueryRun`)
            test = r["test"]
            return (
                f"{r['n_questions']} questions, {sum(r['assessments'])} assessments this round, "
                f"{r['labels']:,} pairs; test nDCG {test['ndcg']:.3f}, MRR {test['mrr']:.3f}, "
                f"AP {test['ap']:.3f}"
            )
        ap = "not evaluated"
        if dev := r.get("dev"):
            ap = f"dev AP {dev['ap']:.3f} [{dev['ap_ci'][0]:.3f}, {dev['ap_ci'][1]:.3f}]"
        secs = " ".join(f"{k} {v:.0f}s" for k, v in r["seconds"].items())
        return f"{r['labels']:,} labels, {r['positives_found']:,} positives; {ap}; {secs}"


class RunFolderRun:
    """The round loop over a run folder, for pairs (:class:`ActiveRun`) and questions
    (:class:`~.queries.QueryRun`), whose ``_round`` returns ``(model, record, batch, labels)``."""

    archive = None  # the folder of the run's committed copy (:mod:`.archive`), if any
    _pretrained = None

    def __init__(self, config, pools: dict[str, Pool], folder, *, learner=None, callbacks=()):
        if pools["train"].task != config.task:
            raise ValueError(
                f"config is for task {config.task!r} but the pool is {pools['train'].task!r}"
            )
        self.config, self.pools, self.pool = config, pools, pools["train"]
        self.folder, self.callbacks = Path(folder), list(callbacks)
        self.learner = learner if learner is not None else CosineBERTLearner(config)
        self.strategy = config.make_strategy()

    def run(self) -> dict:
        """Run, resume or read back the whole run under the folder's lock (another process
        waits, then reads it back), restoring an archive of more rounds first; its result."""
        result = None if self.archive else self._finished()
        if result is not None:
            return result
        with locked(
            self.folder / ".lock", on_wait=lambda: self._emit("run_waiting", folder=self.folder)
        ):
            if self.archive:
                restore(self.archive, self.folder, self.pool)
            return self._finished() or self._run()

    def _run(self) -> dict:
        store.write_config(self.folder, to_json(self.config.to_dict()))
        removed = remove_stale(self.folder, recursive=True)  # what a killed writer left
        sizes = self.config.schedule()
        records, ids, labels, rounds = store.resume(self.folder, len(sizes))
        self._emit(
            "run_started",
            config=self.config,
            schedule=sizes,
            resumed=len(records),
            folder=self.folder,
            removed_temporaries=len(removed),
        )
        with quiet_progress():
            model = self._load_model(len(records), ids, labels) if records else None
            for i in range(len(records) + 1, len(sizes) + 1):
                n = self._size(i, sizes[i - 1])  # a team's spare answers spend the budget, too
                if n == 0 and not len(self.annotator.answered_beyond(ids)[0]):
                    break  # the budget is spent, and trained on
                model, record, batch, batch_labels = self._round(i, n, model, ids, labels, records)
                write_json(self.folder / "rounds" / f"round_{i:02d}.json", record)  # round done
                store.drop_models(self.folder, keep=i)
                ids, labels, rounds = store.append_batch(
                    ids, labels, rounds, batch, batch_labels, i
                )
                records.append(record)
                self._archived()
                self._emit("round_finished", record=record)
                if record.get("batch", n) < sizes[i - 1]:  # pairs (a round of questions: n)
                    break  # the round that spent the budget
            result = {
                "config": to_json(self.config.to_dict()),
                "folder": self.folder.name,
                "records": records,
                "labels": int(len(ids)),
                **self._finish(model, records, ids, labels),  # the run's own fields
            }
        store.write_labels_csv(self.folder, self.pool, ids, labels, rounds)
        write_json(self.folder / "result.json", result)
        store.drop_models(self.folder, keep=None)
        self._archived()
        self._emit("run_finished", result=result, folder=self.folder)
        return result

    def _size(self, i: int, n: int) -> int:
        """Round ``i``'s batch: the schedule's ``n``, or less where the budget has less left."""
        return n

    def _archived(self) -> None:
        if self.archive:
            save(self.folder, self.archive)

    def _finished(self) -> dict | None:
        result = store.finished_run(self.config, self.folder)
        if result is not None:
            self._emit("run_reused", result=result, folder=self.folder)
        return result

    def _load_model(self, i: int, ids, labels):
        """Round ``i``'s model as saved when the round finished, else retrained (deterministic:
        the same labels and seed); None where no later round selects with it."""
        path = store.model_path(self.folder, i)
        if path.exists():
            return self.learner.load(path)
        if not (self.strategy.adaptive or i == len(self.config.schedule())):
            return None
        with Stages(self._emit, i)("train"):
            return self.learner.train(self.pool, ids[labels >= 0], labels[labels >= 0], round=i)

    def _save_model(self, model, i: int) -> None:
        shutil.rmtree(store.model_path(self.folder, i), ignore_errors=True)  # a crash's leftover
        self.learner.save(model, store.model_path(self.folder, i))

    def _members(self, state, c) -> list:
        """Round ``state.round``'s committee, each member trained as that round's model (with its
        own seed) on its own share ``c.share`` of the answered labels."""
        train = partial(self.learner.train, self.pool, round=state.round)
        return train_committee(
            train, state.labelled, state.labels, state.rng, members=c.members, share=c.share
        )

    def _embed(self, model, pool: Pool) -> tuple[np.ndarray, np.ndarray]:
        """Item embeddings of ``pool`` under ``model`` (the learner caches them)."""
        left = self.learner.embed(model, pool.left_texts)
        return left, left if pool.symmetric else self.learner.embed(model, pool.right_texts)

    def _embeddings(self, model) -> tuple[np.ndarray, np.ndarray]:
        """The training pool's item embeddings under ``model`` (None: the pretrained encoder)."""
        if model is not None:
            return self._embed(model, self.pool)
        if self._pretrained is None:
            self._pretrained = self.learner.pretrained_embeddings(self.pool)
        return self._pretrained

    def _emit(self, event: str, **payload) -> None:
        emit(self.callbacks, self.config, event, **payload)


class ActiveRun(RunFolderRun):
    """One run of ``config`` on ``pools`` (``train``; ``dev`` and ``test`` for evaluation)."""

    def __init__(
        self,
        config: ActiveConfig,
        pools: dict[str, Pool],
        eval_sets: dict[str, EvalSet],
        folder,
        *,
        learner=None,
        annotator=None,
        callbacks=(),
        archive=None,
    ):
        _check_inputs(config, pools, eval_sets)
        super().__init__(config, pools, folder, learner=learner, callbacks=callbacks)
        self.annotator, self.eval_sets = _annotator(config, annotator), eval_sets
        # a strategy that selects with the trained model has none before round 1: the seed set
        self.seed_strategy = (
            config.make_strategy(config.seed_set) if self.strategy.adaptive else self.strategy
        )
        self.archive = None if archive is None else Path(archive)

    def _round(self, i: int, n: int, model, labelled: np.ndarray, labels: np.ndarray, records):
        strategy = self.strategy if i > 1 else self.seed_strategy
        stages = Stages(self._emit, i)
        # n 0: the budget went to a team's spares, which the round trains on, choosing nothing
        state = self._state(strategy, i, model, labelled, labels, stages, search=n > 0)
        n = self._size(i, n)  # again: a team's spare answers while the records embedded count
        with stages("select"):
            batch = np.asarray(strategy.select(state, n) if n else [], dtype=np.int64)
        _check_batch(self.pool, state.unavailable, batch, n, strategy)
        record = {"round": i, "strategy": strategy.name, "batch": n}
        record["candidates"] = int(len(state.candidates))
        batch, batch_labels, truth = self._ask(state, batch, stages, record)
        record["labels"] = int(len(labelled) + len(batch))
        oracle = truth if "annotation" in record else None  # beside another annotator's labels
        store.save_batch(self.folder, i, batch, batch_labels, oracle)
        if isinstance(strategy, CandidateSearch) and truth is not None:  # what was left in reach
            recall = candidate_recall(state.candidates, self.pool.positives, labelled)
            record["candidate_recall"] = None if np.isnan(recall) else recall
        ids, all_labels, _ = store.append_batch(labelled, labels, None, batch, batch_labels, i)
        # the last round trains, and every round of a curve or an adaptive run
        last = i == len(self.config.schedule()) or n < self.config.schedule()[i - 1]
        if last or self.config.curve or self.strategy.adaptive:
            model = self._train(i, ids, all_labels, stages, record)
        record.update(
            positives_found=self._positives_found(ids, all_labels),
            seconds=stages.times,
            peak_rss_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        )
        return model, record, batch, batch_labels

    def _state(
        self, strategy: Strategy, i: int, model, labelled, labels, stages, *, search=True
    ) -> RoundState:
        """Round ``i``'s plain data for ``strategy``: over candidates, those of ``D_close`` under
        the selection model and what the criterion ``reads``."""
        state = RoundState(
            round=i,
            pool=self.pool,
            labelled=labelled,
            budget=self.config.budget,
            rng=np.random.default_rng([self.config.seed, i]),
            labels=labels,
            held_out=self.annotator.held_out(),  # a session's audit pairs
        )
        if not isinstance(strategy, CandidateSearch) or not search:
            return state  # it chooses from the whole pool (or nothing)
        model = model if strategy.adaptive else None
        with stages("embed"):
            left, right = self._embeddings(model)
        state = replace(state, held_out=self.annotator.held_out())  # answered meanwhile, too
        with stages("search"):
            state = strategy.restrict(state, left, right, model)
        criterion = strategy.criterion
        if "base_cosine" in criterion.reads:
            left, right = self._embeddings(None)
            cosine = CosineScorer(self.pool.space, left, right)(state.candidates)
            state = replace(state, base_cosine=cosine.astype(np.float64))
        if "member_logits" in criterion.reads:
            with stages.exports_out_of("train"):  # the members train as the round's model does
                members = self._members(state, criterion)
                rows, cols = self.pool.space.decode(state.candidates)
                logits = [member_scores(m, *self._embeddings(m), rows, cols) for m in members]
            state = replace(state, member_logits=np.stack(logits))
        return state

    def _ask(self, state: RoundState, batch, stages, record: dict):
        """The batch and the pairs answered beyond it, their labels and the oracle's (None where
        unknown); ``record`` gets the batch's positives, calibration and annotation figures."""
        truth = self.pool.labels(batch) if self.pool.truth_known else None  # a person's records
        labels = truth
        if self.config.annotator is not None:
            self.annotator.start_round(state.round, state, batch)  # a session posts its pairs
            before = dict(self.annotator.usage)
            with stages("annotate"):
                labels = np.asarray(self.annotator.annotate(self.pool, batch), np.int8)
            if labels.shape != batch.shape or not np.isin(labels, (-1, 0, 1)).all():
                raise RuntimeError(
                    f"{self.annotator!r} returned {labels.shape} labels outside (1, 0, -1) "
                    f"for a batch of {len(batch)}"
                )
        known = truth if truth is not None else (labels == 1).astype(np.int8)
        record["positives_in_batch"] = int(known.sum())
        record["calibration"] = None  # the selection model's on the batch, where it has one
        if state.logits is not None and len(batch):
            p = 1.0 / (1.0 + np.exp(-state.logits[np.searchsorted(state.candidates, batch)]))
            record["calibration"] = {
                "mean_p": float(p.mean()),
                "positive_share": float(np.mean(known)),
                "table": reliability(p, known),
            }
        if self.config.annotator is None:
            return batch, labels, truth
        after = self.annotator.usage
        keys = ("requests", "prompt_tokens", "completion_tokens", "cost")
        spent = {k: after[k] - before.get(k, 0) for k in keys if k in after}
        # the answers given beyond the batch (a person's spare candidates) count as this round's
        ids, answers = self.annotator.answered_beyond(np.union1d(state.labelled, batch))
        record["annotation"] = {**_agreement(labels, truth), **spent, "beyond_batch": len(ids)}
        if truth is not None:
            truth = store.append_batch(batch, truth, None, ids, self.pool.labels(ids), 0)[1]
        batch, labels, _ = store.append_batch(batch, labels, None, ids, answers, 0)
        return batch, labels, truth

    def _train(self, i: int, ids, labels, stages, record: dict):
        """Round ``i``'s model, trained on every answered label, exported, measured and saved."""
        answered = labels >= 0
        with stages.exports_out_of("train"):
            model = self.learner.train(self.pool, ids[answered], labels[answered], round=i)
        if getattr(model, "cache_key", None):  # trained or loaded as a shared seed-round model
            record["shared_model"] = model.cache_key
        name, export = backend(), getattr(self.learner, "export_for_inference", None)
        if name != "torch" and export is not None:
            record["inference"] = name
            with stages("export"):
                export(model)
        if "dev" in self.pools:
            with stages("evaluate"):
                record["dev"] = self._evaluate(model, "dev")
        self._save_model(model, i)
        return model

    def _evaluate(self, model, split: str) -> dict:
        left, right = self._embed(model, self.pools[split])
        scorer = CosineScorer(self.pools[split].space, left, right)  # ranks as p: w >= 0
        result = evaluate(
            self.eval_sets[split], scorer, n_boot=self.config.n_boot, seed=self.config.seed
        )
        return {k: result[k] for k in ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")}

    def _finish(self, model, records, ids, labels) -> dict:
        info = model.info
        result = {
            "positives_found": self._positives_found(ids, labels),
            "test": self._evaluate(model, "test") if "test" in self.pools else None,
            "final_dev": records[-1].get("dev"),
            "model_info": {k: info[k] for k in ("calibration", "trained_on") if k in info},
        }
        if self.config.annotator is not None and self.pool.truth_known:
            result["annotation"] = _agreement(labels, self.pool.labels(ids))
        if self.config.keep_model:
            self.learner.save(model, self.folder / "model")
        return result

    def _positives_found(self, ids, labels) -> int:
        """Positives among the labelled pairs: the truth's where it is known, else the answers'."""
        if self.pool.truth_known:
            return int(isin_sorted(ids, self.pool.positives).sum())
        return int((np.asarray(labels) == 1).sum())


def emit(callbacks, config, event: str, /, **payload) -> None:
    """Send ``event`` about ``config``'s run (its task, strategy and seed) to every callback."""
    label = strategy_label(config.to_dict())
    for callback in callbacks:
        callback(event, task=config.task, strategy=label, seed=config.seed, **payload)


def strategy_label(config: dict) -> str:
    """A run's strategy as events and dashboards name it: with the encoder's depth when the
    model was cut (``"uncertainty, 2 layers"``), so runs from different encoders stay apart."""
    layers = config.get("encoder_layers")
    return config["strategy"] if layers is None else f"{config['strategy']}, {layers} layers"


def reliability(proba: np.ndarray, labels: np.ndarray, *, bins: int = 10) -> list[dict]:
    """Reliability table of predicted p against labels: one row per non-empty bin of p."""
    proba, labels = np.asarray(proba, np.float64), np.asarray(labels, np.float64)
    which = np.clip((proba * bins).astype(int), 0, bins - 1)
    return [
        {
            "bin": [b / bins, (b + 1) / bins],
            "n": int((which == b).sum()),
            "mean_p": float(proba[which == b].mean()),
            "positive_share": float(labels[which == b].mean()),
        }
        for b in np.unique(which)
    ]


def _annotator(config: ActiveConfig, annotator):
    """``annotator`` if given (``config.annotator`` describing it), else ``config.annotator``'s."""
    from ..annotators import Annotator, make_annotator

    if annotator is None:
        return make_annotator(config.annotator)
    if not isinstance(annotator, Annotator):
        raise TypeError(
            f"annotator must be a pairlab.annotators.Annotator (its contract says what the "
            f"loop asks of it), got {annotator!r}"
        )
    if config.annotator is None:
        raise ValueError(
            f"an annotator ({annotator!r}) was given but config.annotator is None: "
            "describe it there (e.g. {'kind': 'model', 'model_id': ...}) so the run "
            "folder records who labelled, and a clean run's folder is never reused"
        )
    return annotator


def _agreement(labels: np.ndarray, truth: np.ndarray | None) -> dict:
    """Accuracy of the answered labels against the oracle's, flips each way, no-answers (only
    these where the truth is unknown)."""
    answered = labels >= 0
    if truth is None:
        return {"no_answer": int((~answered).sum())}
    return {
        "accuracy": float((labels[answered] == truth[answered]).mean()) if answered.any() else None,
        "no_answer": int((~answered).sum()),
        "false_positives": int(((labels == 1) & (truth == 0)).sum()),
        "false_negatives": int(((labels == 0) & (truth == 1)).sum()),
    }


def _check_inputs(config: ActiveConfig, pools, eval_sets) -> None:
    if "train" not in pools:
        raise ValueError(f"pools need a 'train' split, got {sorted(pools)}")
    for split in [s for s in ("dev", "test") if s in pools]:  # a person's records have neither
        if split not in eval_sets:
            raise ValueError(f"the {split!r} split needs both a pool and an evaluation set")
    pool = pools["train"]
    if config.annotator is None and not pool.truth_known:
        raise ValueError(
            f"{pool.task}: no truth is known for these pairs, so the simulated "
            "oracle cannot label them: give an annotator (a person's session)"
        )
    if config.budget > pool.n_pairs:
        raise ValueError(
            f"a budget of {config.budget:,} labels exceeds the {pool.n_pairs:,} "
            f"pairs of {pool.task}/train: lower n1, rounds or growth (batches "
            f"{config.schedule()})"
        )


def _check_batch(pool: Pool, unavailable, batch, n: int, strategy: Strategy) -> None:
    """The loop's invariant: n distinct valid pairs, none labelled or held out, no self pair."""
    where = f"strategy {strategy.name!r}"
    if batch.shape != (n,):
        raise RuntimeError(f"{where} returned {batch.shape} ids for a batch of {n}")
    pool.space.check(batch)
    if len(np.unique(batch)) != n:
        raise RuntimeError(f"{where} returned a pair twice in one batch")
    if taken := int(isin_sorted(batch, unavailable).sum()):
        raise RuntimeError(f"{where} returned {taken} already-labelled or held-out pairs")
    left, right = pool.space.decode(batch)
    if pool.symmetric and (left == right).any():
        raise RuntimeError(f"{where} returned a self pair")
