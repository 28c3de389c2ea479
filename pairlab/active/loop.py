"""Active learning over all pairs (paper section 4): the round loop and its run folder.

Round i picks a batch of n_i = n1 * growth^(i-1) pairs (:func:`schedule`). The seed round uses
``config.seed_set`` (static retrieval by default) for adaptive strategies and the strategy
itself otherwise. Each round: embed the training split with the selection model, take every
item's top-m faiss neighbours as candidates ``D_close`` minus the labelled pairs, let the
strategy pick, have the batch labelled by the run's annotator (the pool's imputed-label oracle
unless ``config.annotator`` or the ``annotator`` argument says otherwise; :mod:`pairlab.annotators`),
retrain CosineBERT from the pretrained checkpoint on every answered label, and evaluate it on the
dev strata. With another annotator the round record says how its labels compare with the oracle's.
A strategy over candidates records its round's candidate recall: the share of the positives not
yet labelled that its candidates held (the oracle's view, for analysis only).

Each round's batch and record go to the run folder (:mod:`pairlab.active.store`): a killed run
resumes after its last finished round; a finished run with the same config is read back, not
recomputed. The strategy is composed (:mod:`pairlab.active.strategies`): a criterion, wrapped
in a :class:`~pairlab.active.candidate_search.CandidateSearch` where it ranks candidates.

The loop emits events to callbacks (``callback(event, **payload)``): ``run_started``,
``stage_started`` (round, stage), ``stage`` (round, stage, seconds), ``round_finished``
(record), ``run_finished`` (result), ``run_reused`` (result) and ``run_waiting`` (another
process holds the run folder); a sweep on Ray adds ``run_placed`` (node, host, pid: where the
run executes). The
dashboard (:mod:`pairlab.widgets.dashboard`) and the printed log subscribe; the loop has no widget code.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..data.loaders import Pool
from ..data.pairs import isin_sorted
from ..evaluation.candidates import candidate_recall
from ..evaluation.strata import EvalSet, evaluate
from ..io import to_json, write_json
from ..models.inference import backend
from ..models.scoring import CosineScorer
from . import store
from .base import RoundState, Strategy
from .calibration import batch_calibration
from .candidate_search import CandidateSearch
from .committee import member_scores, train_members
from .config import ActiveConfig
from .learner import CosineBERTLearner
from .runfolder import RunFolderRun
from .stages import Stages

__all__ = ["ActiveRun", "emit", "strategy_label", "STAGES"]

STAGES = ("embed", "search", "select", "annotate", "train", "export", "evaluate")


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
        self.annotator = _annotator(config, annotator)
        self.config, self.pools, self.eval_sets = config, pools, eval_sets
        self.pool = pools["train"]
        self.folder = Path(folder)
        self.learner = learner if learner is not None else CosineBERTLearner(config)
        self.strategy = config.make_strategy()
        # a strategy that selects with the trained model has none before round 1: the seed set
        self.seed_strategy = (
            config.make_strategy(config.seed_set) if self.strategy.adaptive else self.strategy
        )
        self.callbacks = list(callbacks)
        self.archive = None if archive is None else Path(archive)
        self._pretrained = None

    # -- the run ------------------------------------------------------------------------------

    def _round(self, i: int, n: int, model, labelled: np.ndarray, labels: np.ndarray, records):
        strategy = self.strategy if i > 1 else self.seed_strategy
        stages = Stages(self._emit, i)
        state = self._state(strategy, i, model, labelled, labels, stages)
        with stages("select"):
            batch = np.asarray(strategy.select(state, n), dtype=np.int64)
        _check_batch(self.pool, state.unavailable, batch, n, strategy)
        truth = _truth(self.pool, batch)  # None: no one knows it (a person's own records)
        batch_labels, annotation = self._ask(state, batch, truth, stages)
        known = truth if truth is not None else (batch_labels == 1).astype(np.int8)
        record = {
            "round": i,
            "strategy": strategy.name,
            "batch": n,
            "positives_in_batch": int(known.sum()),
            "candidates": int(len(state.candidates)),
            "calibration": batch_calibration(state, batch, known),
        }
        if annotation is not None:  # a person's answers beyond the batch are this round's too
            batch, batch_labels, truth = self._beyond(labelled, batch, batch_labels, truth)
            annotation["beyond_batch"] = int(len(batch) - n)
        record["labels"] = int(len(labelled) + len(batch))
        store.save_batch(self.folder, i, batch, batch_labels, None if annotation is None else truth)
        if isinstance(strategy, CandidateSearch) and truth is not None:  # what was left in reach
            record["candidate_recall"] = _recall(state.candidates, self.pool.positives, labelled)
        if annotation is not None:
            record["annotation"] = annotation
        ids, all_labels, _ = store.append_batch(
            labelled, labels, np.zeros(len(labelled), np.int16), batch, batch_labels, i
        )
        if self._trains(i):
            model = self._train(i, ids, all_labels, stages, record)
        record.update(
            positives_found=self._positives_found(ids, all_labels),
            seconds=stages.times,
            peak_rss_mb=_peak_rss_mb(),
        )
        write_json(self.folder / "rounds" / f"round_{i:02d}.json", record)  # the round is done
        store.drop_models(self.folder, keep=i)
        return model, record, batch, batch_labels

    def _ask(self, state: RoundState, batch, truth, stages):
        """The batch's labels and how they compare with the oracle's (None: the oracle's own,
        ``truth``, taken as they are)."""
        if self.config.annotator is None:
            return truth, None
        self.annotator.start_round(state.round, state, batch)  # a session posts its pairs
        with stages("annotate"):
            return _annotate(self.annotator, self.pool, batch, truth)

    def _state(self, strategy: Strategy, i: int, model, labelled, labels, stages) -> RoundState:
        """Round ``i``'s plain data for ``strategy``. For a criterion over candidates the loop
        embeds the pool with the selection model, searches ``D_close``, and adds what the
        criterion ``reads``: the pretrained cosines, a committee's logits."""
        state = RoundState(
            round=i,
            pool=self.pool,
            labelled=labelled,
            budget=self.config.budget,
            rng=np.random.default_rng([self.config.seed, i]),
            labels=labels,
            held_out=self.annotator.held_out(),  # a session's audit pairs
        )
        if not isinstance(strategy, CandidateSearch):
            return state  # it chooses from the whole pool
        model = model if strategy.adaptive else None
        with stages("embed"):
            left, right = self._embeddings(model)
        with stages("search"):
            state = strategy.restrict(state, left, right, model)
        reads = strategy.criterion.reads
        if "base_cosine" in reads:
            state = replace(state, base_cosine=self._pretrained_cosine(state.candidates))
        if "member_logits" in reads:
            state = replace(state, member_logits=self._committee(strategy.criterion, state, stages))
        return state

    def _committee(self, criterion, state: RoundState, stages) -> np.ndarray:
        """(members, n_candidates) logits of ``criterion``'s committee: each member trained
        like round ``state.round``'s model on its own share of the answered labels, its time
        counted as training."""

        with stages.exports_out_of("train"):
            members = train_members(self.learner, self.pool, state, criterion)
            rows, cols = self.pool.space.decode(state.candidates)
            return np.stack([member_scores(m, *self._embeddings(m), rows, cols) for m in members])

    def _train(self, i: int, ids, labels, stages, record: dict):
        """Round ``i``'s model, trained on every answered label (a pair without an answer is
        asked no more, and not trained on), exported, measured on dev and saved."""
        answered = labels >= 0
        with stages.exports_out_of("train"):
            model = self.learner.train(self.pool, ids[answered], labels[answered], round=i)
        if getattr(model, "cache_key", None):  # trained or loaded as a shared seed-round model
            record["shared_model"] = model.cache_key
        self._export_for_inference(model, stages, record)
        if "dev" in self.pools:
            with stages("evaluate"):
                record["dev"] = self._evaluate(model, "dev")
        shutil.rmtree(store.model_path(self.folder, i), ignore_errors=True)  # a crash's leftover
        self.learner.save(model, store.model_path(self.folder, i))
        return model

    def _export_for_inference(self, model, stages, record: dict) -> None:
        """Under an inference backend other than torch, the round's model exported for it (a
        learner's ``export_for_inference``), timed as its own stage: the export costs what embedding and
        evaluating with the faster copy saves."""
        name, export = backend(), getattr(self.learner, "export_for_inference", None)
        if name != "torch" and export is not None:
            record["inference"] = name
            with stages("export"):
                export(model)

    def _trains(self, i: int) -> bool:
        """Adaptive runs train every round (the next round selects with the model); others
        only where a curve point or the final model is wanted."""
        last = i == len(self.config.schedule())
        return last or self.config.curve or self.strategy.adaptive

    def _evaluate(self, model, split: str) -> dict:
        left, right = self._embed(model, self.pools[split])
        scorer = CosineScorer(self.pools[split].space, left, right)  # ranks as p: w >= 0
        result = evaluate(
            self.eval_sets[split], scorer, n_boot=self.config.n_boot, seed=self.config.seed
        )
        return {k: result[k] for k in ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")}

    def _finish(self, model, records, ids, labels, rounds) -> dict:
        test = self._evaluate(model, "test") if "test" in self.pools else None
        result = {
            "config": to_json(self.config.to_dict()),
            "folder": self.folder.name,
            "records": records,
            "labels": int(len(ids)),
            "positives_found": self._positives_found(ids, labels),
            "test": test,
            "final_dev": records[-1].get("dev"),
            "model_info": {
                k: v
                for k, v in getattr(model, "info", {}).items()
                if k in ("calibration", "trained_on")
            },
        }
        if self.config.annotator is not None and _truth_known(self.pool):
            result["annotation"] = _agreement(labels, self.pool.labels(ids))
        store.write_labels_csv(self.folder, self.pool, ids, labels, rounds)
        if self.config.keep_model:
            self.learner.save(model, self.folder / "model")
        write_json(self.folder / "result.json", result)
        store.drop_models(self.folder, keep=None)
        self._archived()
        self._emit("run_finished", result=result, folder=self.folder)
        return result

    def _beyond(self, labelled, batch, batch_labels, truth):
        """The batch with the answers the annotator gave beyond it (a person's spare candidates,
        labelled while the model trained), which count as labels of this round."""
        ids, labels = self.annotator.answered_beyond(np.union1d(labelled, batch))
        if not len(ids):
            return batch, batch_labels, truth
        order = np.argsort(np.concatenate([batch, ids]), kind="stable")
        truth = None if truth is None else np.concatenate([truth, _truth(self.pool, ids)])[order]
        return (
            np.concatenate([batch, ids])[order],
            np.concatenate([batch_labels, labels]).astype(np.int8)[order],
            truth,
        )

    def _positives_found(self, ids, labels) -> int:
        """Positives among the labelled pairs: the truth's where it is known, else the answers'."""
        if _truth_known(self.pool):
            return int(isin_sorted(ids, self.pool.positives).sum())
        return int((np.asarray(labels) == 1).sum())

    # -- resuming -----------------------------------------------------------------------------

    def _load_model(self, i: int, ids, labels):
        """Round ``i``'s model, saved when the round finished; retrained (deterministically,
        from the same labels and seed) if it was deleted."""
        path = store.model_path(self.folder, i)
        if path.exists():
            return self.learner.load(path)
        if not (self.strategy.adaptive or i == len(self.config.schedule())):
            return None  # a non-adaptive run selects with the pretrained encoder
        with Stages(self._emit, i)("train"):
            return self.learner.train(self.pool, ids[labels >= 0], labels[labels >= 0], round=i)

    def _embeddings(self, model) -> tuple[np.ndarray, np.ndarray]:
        """The training pool's item embeddings under ``model`` (None: the pretrained encoder)."""
        return self._embed(model, self.pool) if model is not None else self._pretrained_embeddings()

    def _pretrained_embeddings(self):
        if self._pretrained is None:
            self._pretrained = self.learner.pretrained_embeddings(self.pool)
        return self._pretrained

    def _pretrained_cosine(self, ids) -> np.ndarray:
        left, right = self._pretrained_embeddings()
        return CosineScorer(self.pool.space, left, right)(ids).astype(np.float64)

    def _emit(self, event: str, **payload) -> None:
        emit(self.callbacks, self.config, event, **payload)


def emit(callbacks, config: ActiveConfig, event: str, /, **payload) -> None:
    """Send ``event`` about ``config``'s run to every callback, with the run's task, strategy
    (:func:`strategy_label`) and seed beside ``payload`` (which may hold a ``config`` of its own:
    ``run_started``'s)."""
    label = strategy_label(config.to_dict())
    for callback in callbacks:
        callback(event, task=config.task, strategy=label, seed=config.seed, **payload)


def strategy_label(config: dict) -> str:
    """A run's strategy as events and dashboards name it: with the encoder's depth when the
    model was cut (``"uncertainty, 2 layers"``), so runs from different encoders stay apart."""
    layers = config.get("encoder_layers")
    return config["strategy"] if layers is None else f"{config['strategy']}, {layers} layers"


def _peak_rss_mb() -> float:
    """The process's peak resident memory so far, in MB (Linux reports kB)."""
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _recall(candidates, positives, labelled) -> float | None:
    """:func:`candidate_recall` as a JSON value (None when no positive is left to find)."""
    recall = candidate_recall(candidates, positives, labelled)
    return None if np.isnan(recall) else recall


def _annotator(config: ActiveConfig, annotator):
    """The run's annotator: ``annotator`` if given (then ``config.annotator`` must describe it,
    so the run folder records who labelled), else the one ``config.annotator`` specifies."""
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


def _truth_known(pool: Pool) -> bool:
    """Whether ``pool`` knows every label (a task's split, a simulation's records); a person's
    own records do not (:class:`~pairlab.data.recordpool.RecordPool`)."""
    return getattr(pool, "truth_known", True)


def _truth(pool: Pool, batch: np.ndarray) -> np.ndarray | None:
    return pool.labels(batch) if _truth_known(pool) else None


def _annotate(annotator, pool: Pool, batch: np.ndarray, truth: np.ndarray | None):
    """The annotator's labels of ``batch`` (1, 0, -1: no answer) and how they compare with the
    oracle's ``truth`` (with the tokens and cost the annotator spent on them, if it counts)."""
    before = dict(annotator.usage)
    labels = np.asarray(annotator.annotate(pool, batch), np.int8)
    if labels.shape != batch.shape or not np.isin(labels, (-1, 0, 1)).all():
        raise RuntimeError(
            f"{annotator!r} returned {labels.shape} labels outside (1, 0, -1) "
            f"for a batch of {len(batch)}"
        )
    note = (
        _agreement(labels, truth) if truth is not None else {"no_answer": int((labels < 0).sum())}
    )
    after = annotator.usage
    spent = {
        k: after[k] - before.get(k, 0)
        for k in ("requests", "prompt_tokens", "completion_tokens", "cost")
        if k in after
    }
    return labels, {**note, **spent}


def _agreement(labels: np.ndarray, truth: np.ndarray) -> dict:
    """Accuracy of the answered labels against the oracle's, the flips each way and the pairs
    left unanswered."""
    answered = labels >= 0
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
        if split not in pools or split not in eval_sets:
            raise ValueError(f"the {split!r} split needs both a pool and an evaluation set")
    pool = pools["train"]
    if pool.task != config.task:
        raise ValueError(f"config is for task {config.task!r} but the pool is {pool.task!r}")
    if config.annotator is None and not _truth_known(pool):
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


def _check_batch(pool: Pool, labelled, batch, n: int, strategy: Strategy) -> None:
    """The loop's invariant: n distinct valid pairs, none labelled before (nor held out:
    ``labelled`` is the state's ``unavailable``), no self pair."""
    where = f"strategy {strategy.name!r}"
    if batch.shape != (n,):
        raise RuntimeError(f"{where} returned {batch.shape} ids for a batch of {n}")
    pool.space.check(batch)
    if len(np.unique(batch)) != n:
        raise RuntimeError(f"{where} returned a pair twice in one batch")
    if isin_sorted(batch, labelled).any():
        raise RuntimeError(
            f"{where} returned {int(isin_sorted(batch, labelled).sum())} already-labelled or "
            "held-out pairs"
        )
    left, right = pool.space.decode(batch)
    if pool.symmetric and (left == right).any():
        raise RuntimeError(f"{where} returned a self pair")
