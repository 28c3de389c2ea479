"""The query-level round loop (Althammer et al. 2023, Algorithm 1): each round picks questions
(:mod:`.queries`; round 1 the same random questions for every strategy of a seed), has each one
annotated by scanning the current ranker's ranking to its first relevant item
(:func:`~pairlab.annotators.scan.scan_to_first_relevant`: every scanned pair is labelled, the
scan's length is the assessments it cost), retrains CosineBERT from the pretrained checkpoint on
every pair labelled so far (the paper retrains each iteration from scratch), and measures it on
the test split: nDCG@k and MRR@k over the whole right-hand side, per question, and the suite's
all-pairs AP with its interval.

A run lives in a run folder as the pair-level runs do (:mod:`.store`): ``config.json``,
``rounds/round_XX.npz`` (the new pairs and their labels, the questions and their assessments),
``rounds/round_XX.json`` (the round's record, with the per-question test values and seconds per
stage), ``labels.csv`` and ``result.json``; a killed run resumes after its last finished round
and a finished one is read back. A pair two questions both scanned (QQP's questions rank each
other) is trained on once but was assessed, and is counted, in both scans.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..annotators.scan import scan_to_first_relevant
from ..data.pairs import isin_sorted, setdiff_sorted, union_sorted
from ..data.tasks import Pool
from ..evaluation.ranking import answerable, rank_metrics, top_items
from ..evaluation.strata import EvalSet, evaluate
from ..io import to_json, write_atomic, write_json
from ..models.scoring import CosineScorer
from ..models.training import default_device
from . import store
from .committee import member_scores, train_members
from .learner import CosineBERTLearner
from .log import PrintLog
from .queries import QueryConfig, QueryState, RandomQuestions
from .runfolder import RunFolderRun
from .stages import Stages

__all__ = ["QueryRun", "QueryLog", "COST_STAGES", "ranking_record"]

COST_STAGES = (
    "embed",
    "select",
    "annotate",
    "train",
)  # what collecting the data costs (not evaluate)


class QueryRun(RunFolderRun):
    """One query-level run of ``config`` on ``pools`` (``train``, ``test``), measured on the
    test split's all-pairs strata ``eval_set`` and its rankings."""

    def __init__(
        self,
        config: QueryConfig,
        pools: dict[str, Pool],
        eval_set: EvalSet,
        folder,
        *,
        learner=None,
        callbacks=(),
    ):
        _check_inputs(config, pools)
        self.config, self.pools, self.eval_set = config, pools, eval_set
        self.pool, self.folder = pools["train"], Path(folder)
        self.questions = answerable(self.pool)
        if config.budget > len(self.questions):
            raise ValueError(
                f"{config.task}/train has {len(self.questions)} questions with a "
                f"relevant item, fewer than the {config.budget} the batches "
                f"{config.schedule()} annotate: lower them or keep more questions"
            )
        self.learner = learner if learner is not None else CosineBERTLearner(config)
        self.strategy, self.first = config.make_strategy(), RandomQuestions()
        self.callbacks = list(callbacks)

    def _round(self, i: int, n: int, model, ids, labels, records):
        done = union_sorted(*[np.asarray(r["questions"], np.int64) for r in records])
        stages = Stages(self._emit, i)
        with stages("embed"):
            left, right = self._embeddings(model)
        state = QueryState(
            round=i,
            pool=self.pool,
            questions=setdiff_sorted(self.questions, done),
            labelled=ids,
            labels=labels,
            rng=np.random.default_rng([self.config.seed, i]),
            model=model,
            embeddings=(left, right),
        )
        strategy = self.strategy if i > 1 else self.first  # round 1: the same random questions
        if "member_scores" in strategy.reads:
            state = replace(state, member_scores=self._committee(strategy, state, stages))
        with stages("select"):
            picked = np.asarray(strategy.select(state, n), dtype=np.int64)
            _check_picked(state, picked, n, strategy)
        with stages("annotate"):
            scan = scan_to_first_relevant(self.pool, left, right, picked)
        batch, first = np.unique(
            scan.pair_ids, return_index=True
        )  # a pair scanned twice counts once
        fresh = ~isin_sorted(batch, ids)
        batch, batch_labels = batch[fresh], scan.labels[first][fresh]
        write_atomic(
            self.folder / "rounds" / f"round_{i:02d}.npz",
            lambda tmp: np.savez(
                tmp, ids=batch, labels=batch_labels, questions=picked, assessments=scan.assessments
            ),
        )
        all_ids, all_labels, _ = store.append_batch(
            ids, labels, np.zeros(len(ids), np.int16), batch, batch_labels, i
        )
        with stages("train"):
            model = self.learner.train(self.pool, all_ids, all_labels, round=i)
        with stages("evaluate"):
            test = self._evaluate(model)
        if i < len(self.config.schedule()):  # the next round (or a resumed run) selects with it
            shutil.rmtree(store.model_path(self.folder, i), ignore_errors=True)
            self.learner.save(model, store.model_path(self.folder, i))
        record = {
            "round": i,
            "strategy": strategy.name,
            "questions": picked.tolist(),
            "assessments": scan.assessments.tolist(),
            "n_questions": int(len(done) + n),
            "labels": int(len(all_ids)),
            "positives_found": int(all_labels.sum()),
            "test": test,
            "seconds": stages.times,
            "device": default_device(),
        }
        write_json(self.folder / "rounds" / f"round_{i:02d}.json", record)  # the round is done
        store.drop_models(self.folder, keep=i)
        return model, record, batch, batch_labels

    def _committee(self, strategy, state: QueryState, stages) -> np.ndarray:
        """(members, n_free, top_k) float64: each member's scores of every free question's top-k
        candidates under the current ranker, the members trained as the round's model is."""
        items = top_items(self.pool, *state.embeddings, state.questions, strategy.top_k)
        with stages("train"):
            members = train_members(self.learner, self.pool, state, strategy)
        unique, where = np.unique(items, return_inverse=True)  # embed only the texts scored
        rows = np.broadcast_to(np.arange(len(items))[:, None], items.shape)
        scores = []
        for member in members:
            questions = self.learner.embed(member, self.pool.left_texts[state.questions])
            candidates = self.learner.embed(member, self.pool.right_texts[unique])
            scores.append(
                member_scores(member, questions, candidates, rows, where.reshape(items.shape))
            )
        return np.stack(scores)

    def _evaluate(self, model) -> dict:
        left, right = self._embed(model, self.pools["test"])
        c = self.config
        return ranking_record(
            self.pools["test"], self.eval_set, left, right, k=c.eval_k, n_boot=c.n_boot, seed=c.seed
        )

    def _finish(self, model, records, ids, labels, rounds) -> dict:
        result = {
            "config": to_json(self.config.to_dict()),
            "folder": self.folder.name,
            "records": records,
            "labels": int(len(ids)),
            "questions": int(sum(len(r["questions"]) for r in records)),
            "assessments": int(sum(sum(r["assessments"]) for r in records)),
            "test": {k: v for k, v in records[-1]["test"].items() if k != "per_query"},
        }
        store.write_labels_csv(self.folder, self.pool, ids, labels, rounds)
        write_json(self.folder / "result.json", result)
        store.drop_models(self.folder, keep=None)
        self._emit("run_finished", result=result, folder=self.folder)
        return result

    def _load_model(self, i: int, ids, labels):
        """Round ``i``'s model, saved when the round finished; retrained (deterministically) if
        it was deleted."""
        path = store.model_path(self.folder, i)
        if path.exists():
            return self.learner.load(path)
        return self.learner.train(self.pool, ids, labels, round=i)

    def _embeddings(self, model) -> tuple[np.ndarray, np.ndarray]:
        """The training pool's item embeddings under ``model`` (None: the pretrained encoder)."""
        if model is None:
            return self.learner.pretrained_embeddings(self.pool)
        return self._embed(model, self.pool)

    def _emit(self, event: str, **payload) -> None:
        for callback in self.callbacks:
            callback(
                event,
                task=self.config.task,
                strategy=self.config.strategy,
                seed=self.config.seed,
                **payload,
            )


def ranking_record(test: Pool, eval_set: EvalSet, left, right, *, k: int, n_boot: int, seed: int):
    """A ranker's test record from its item embeddings ``left`` and ``right`` of ``test``:
    nDCG@k and MRR@k per question (every one with a relevant item), their means, and the
    all-pairs AP on ``eval_set`` with its bootstrap interval."""
    ranks = rank_metrics(test, left, right, k=k)
    ap = evaluate(eval_set, CosineScorer(test.space, left, right), n_boot=n_boot, seed=seed)
    return {
        "ndcg": ranks["ndcg_mean"],
        "mrr": ranks["mrr_mean"],
        "ap": ap["ap"],
        "ap_ci": ap["ap_ci"],
        "per_query": {
            "questions": ranks["questions"].tolist(),
            "ndcg": ranks["ndcg"].tolist(),
            "mrr": ranks["mrr"].tolist(),
        },
    }


def _check_inputs(config: QueryConfig, pools) -> None:
    missing = {"train", "test"} - set(pools)
    if missing:
        raise ValueError(
            f"a query-level run needs the 'train' and 'test' pools, missing {sorted(missing)}"
        )
    if pools["train"].task != config.task:
        raise ValueError(
            f"config is for task {config.task!r} but the pool is {pools['train'].task!r}"
        )


def _check_picked(state: QueryState, picked: np.ndarray, n: int, strategy) -> None:
    """The loop's invariant: ``n`` distinct questions, each still free to annotate."""
    where = f"query strategy {strategy.name!r}"
    if picked.shape != (n,) or len(np.unique(picked)) != n:
        raise RuntimeError(f"{where} returned {picked.shape} questions, not {n} distinct ones")
    if not isin_sorted(picked, state.questions).all():
        raise RuntimeError(
            f"{where} returned a question already annotated or without a relevant item"
        )


class QueryLog(PrintLog):
    """:class:`~.log.PrintLog` with a query run's round line: questions, assessments, pairs and
    the test ranking metrics."""

    @staticmethod
    def round_line(r: dict) -> str:
        test = r["test"]
        return (
            f"{r['n_questions']} questions, {sum(r['assessments'])} assessments this round, "
            f"{r['labels']:,} pairs; test nDCG {test['ndcg']:.3f}, MRR {test['mrr']:.3f}, "
            f"AP {test['ap']:.3f}"
        )
