"""EAGLE's case study (Bansal and Sharma 2023, section 3.2; notebook 07): stated training pairs
split by the pretrained model's error (both 30% ends the target, the middle the labelled source);
each strategy picks from the target for an annotator, and a bi-encoder trained on source +
annotated pairs is measured by AUC on the stated test pairs (all, high- and low-error)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..active import strategies as st
from ..active.strategies import RoundState
from ..annotators import ErrorDependentOracle, LLMAnnotator, Oracle
from ..annotators.factory import base_error, error_edges
from ..data.loaders import Pool
from ..data.pairs import isin_sorted, union_sorted
from ..data.paper import EAGLE_TABLE1, EAGLE_TABLE4
from ..data.tasks import BUILT_IN, like
from ..evaluation import heuristic
from ..models.embed import embed_pool
from ..models.scoring import CosineScorer
from .baselines import TrainSettings, sample_pairs, stated_pairs, train_or_load, trained_metrics
from .summaries import cell, in_order, mean_std, seed_means_by

__all__ = [
    "CaseSettings",
    "CaseStudy",
    "case_metrics",
    "case_table",
    "run_case_study",
    "llm_section",
]

CASE_STRATEGIES = {
    "random": st.RandomCandidates,
    "uncertainty": st.Uncertainty,
    "base_consistent": st.BaseConsistent,
    "base_inconsistent": st.BaseInconsistent,
    "conditional_informativeness": st.ConditionalInformativeness,
}
CASE_ROWS = ("initial", "full_target", *CASE_STRATEGIES)
PARTS = ("all", "high_error", "low_error")


def split_by_error(ids: np.ndarray, error: np.ndarray, *, share: float = 0.3) -> dict:
    """``{"low": ids, "middle": ids, "high": ids}`` (each sorted): the ``share`` of lowest and
    of highest ``error`` and the rest; ties broken by pair id."""
    if not 0 < share < 0.5:
        raise ValueError(f"share must be in (0, 0.5), got {share!r}")
    order = np.lexsort((ids, error))
    k = int(round(share * len(ids)))
    if k == 0:
        raise ValueError(f"{len(ids)} pairs are too few to split {share:.0%} off each end")
    return {
        "low": np.sort(ids[order[:k]]),
        "middle": np.sort(ids[order[k : len(ids) - k]]),
        "high": np.sort(ids[order[len(ids) - k :]]),
    }


def auc(labels: np.ndarray, scores: np.ndarray) -> float | None:
    """:func:`~pairlab.evaluation.heuristic.roc_auc`, or None when the pairs hold one class only."""
    return heuristic.roc_auc(labels, scores) if len(np.unique(labels)) > 1 else None


@dataclass(frozen=True)
class CaseSettings:
    """Notebook 07's case study, built once from its ``case_*`` parameters, the LLM-like
    annotator's accuracy per base-error bin, the encoder and the bi-encoder's training."""

    task: str
    seeds: tuple
    pairs: int
    test_pairs: int
    share: float
    budget: float
    error_accuracy: tuple
    model: str | None
    max_seq_length: int
    train: TrainSettings

    @classmethod
    def from_params(cls, params: dict, prepared: dict) -> CaseSettings:
        """The task is ``case_task``, or with a pair file as the dataset (one task, not built
        in), that file's task; it must be one of ``prepared``."""
        case = {k: params[f"case_{k}"] for k in ("task", "pairs", "test_pairs", "share", "budget")}
        if len(prepared) == 1 and next(iter(prepared)) not in BUILT_IN:
            case["task"] = next(iter(prepared))
        if case["task"] not in prepared:
            raise ValueError(
                f"the case study runs on {case['task']!r}, which this run did not load "
                f"(dataset: {sorted(prepared)}); set case_task or dataset"
            )
        return cls(
            seeds=tuple(int(s) for s in params["seeds"]),
            error_accuracy=tuple(params["error_accuracy"]),
            model=params["model"],
            max_seq_length=params["max_seq_length"],
            train=TrainSettings.from_params(params, "cosinebert"),
            **case,
        )


class CaseStudy:
    """One seed of the case study on its task's train and test pools; the source-trained model
    is kept in ``folder``, the others only as their metrics."""

    def __init__(self, prepared: dict, case: CaseSettings, seed: int, folder):
        pools = prepared[case.task][0]
        self.train, self.test, self.case = pools["train"], pools["test"], case
        self.config = case.train.config(case.task, seed)
        self.seed, self.folder = int(seed), Path(folder)
        self._base, self._picks = {}, {}

        def by_error(pool: Pool, n: int | None):
            ids = sample_pairs(stated_pairs(pool)[0], n, seed=self.seed)
            error = base_error(pool, ids, self.base_cosine(pool, ids))
            return ids, split_by_error(ids, error, share=case.share)

        # sorted ids: ``source`` (the middle of the base error), ``target`` (both ends), ``high``
        # (the high end) and ``parts``, the test pairs by part
        _, train = by_error(self.train, case.pairs)
        ids, test = by_error(self.test, case.test_pairs)
        self.source, self.high = train["middle"], train["high"]
        self.target = union_sorted(train["low"], train["high"])
        self.parts = {"all": ids, "high_error": test["high"], "low_error": test["low"]}
        self.budget = int(round(case.budget * (len(self.source) + len(self.target))))
        if not 0 < self.budget <= len(self.target):
            raise ValueError(f"a budget of {self.budget} pairs for a target of {len(self.target)}")
        self.initial, _ = train_or_load(
            "cosinebert", self.train, self.source, self.config, folder=self.folder, model=case.model
        )
        self.target_cosine = self.initial.cosine(*self.train.texts(self.target)).astype(np.float64)

    def base_cosine(self, pool: Pool, ids) -> np.ndarray:
        """(n,) cosines of ``ids`` under the pretrained encoder (embeddings cached on disk)."""
        if pool.split not in self._base:
            c = self.case
            embedded = embed_pool(
                pool, c.model, max_seq_length=c.max_seq_length, show_progress=False
            )
            self._base[pool.split] = CosineScorer(pool.space, *embedded)
        return self._base[pool.split](np.asarray(ids, np.int64)).astype(np.float64)

    def pick(self, strategy: str) -> np.ndarray:
        """The ``budget`` target pairs ``strategy`` (of :data:`CASE_STRATEGIES`) picks."""
        if strategy not in self._picks:
            target, chosen = self.target, CASE_STRATEGIES[strategy]()
            state = RoundState(
                round=2,
                pool=self.train,
                labelled=self.source,
                budget=self.budget,
                rng=np.random.default_rng([self.seed, 7]),
                candidates=target,
                cosine=self.target_cosine,
                logits=self.initial.calibration.logits(self.target_cosine),
                model=self.initial,
                base_cosine=(
                    self.base_cosine(self.train, target) if "base_cosine" in chosen.reads else None
                ),
            )
            self._picks[strategy] = chosen.select(state, self.budget)
        return self._picks[strategy]

    def measure(self, model) -> dict:
        """AUC of ``model`` on each test part."""
        every = self.parts["all"]  # sorted, the other parts its subsets: its pairs scored once
        scores = model.score_pairs(self.test, every)
        return {
            f"auc_{part}": auc(self.test.labels(ids), scores[np.searchsorted(every, ids)])
            for part, ids in self.parts.items()
        }

    def row(self, picked: np.ndarray, annotator) -> dict:
        """Train on source + ``picked`` labelled by ``annotator`` (pairs left unanswered are
        dropped) and measure; the metrics are kept by model id, so a re-run trains nothing."""
        given = np.asarray(annotator.annotate(self.train, picked), np.int8)
        truth = self.train.labels(picked)
        answered = given >= 0
        metrics = trained_metrics(
            self.train,
            np.r_[self.source, picked[answered]],
            np.r_[self.train.labels(self.source), given[answered]],
            self.config,
            model=self.case.model,
            folder=self.folder / "case_study",
            measure=lambda trained, _: self.measure(trained),
        )
        accuracy = float((given[answered] == truth[answered]).mean()) if answered.any() else None
        return {
            **metrics,
            "n_annotated": int(len(picked)),
            "no_answer": int((~answered).sum()),
            "annotator_accuracy": accuracy,
            "high_error_share": float(isin_sorted(np.sort(picked), self.high).mean()),
        }

    def rows(self, annotator) -> dict:
        """``{row: metrics}``: source only, source + the whole target, and each strategy's picks."""
        initial = {**self.measure(self.initial), "n_annotated": 0}
        for part, ids in self.parts.items():
            initial[f"test_pairs_{part}"] = len(ids)
            initial[f"test_positives_{part}"] = int(self.test.labels(ids).sum())
        out = {"initial": initial, "full_target": self.row(self.target, annotator)}
        return out | {s: self.row(self.pick(s), annotator) for s in CASE_STRATEGIES}


def case_metrics(runs: dict) -> dict:
    """``{annotation: {row: seed_means}}`` from ``{(annotation, seed): CaseStudy.rows(...)}``."""
    flat = {
        (a, row, seed): m for (a, seed), rows in sorted(runs.items()) for row, m in rows.items()
    }
    return seed_means_by(flat)


def case_table(metrics: dict):
    """The Table 1 / Table 4 analog: AUC (all, high and low base error; mean ± std over seeds)
    per annotation and row, beside the paper's AUC: gpt-3.5-turbo's (Table 1; conditional
    informativeness from Table 4) for the noisy rows, the ground truth's (Table 4) for the clean."""
    records = []
    for annotation, row, m in in_order(metrics, CASE_ROWS):
        if annotation == "clean":
            paper = EAGLE_TABLE4["clean"].get(row)
        else:
            paper = EAGLE_TABLE1.get(row) or EAGLE_TABLE4["llm"].get(row)
        if paper is not None:
            mean, std = paper[0] if isinstance(paper[0], tuple) else paper
        records.append(
            {
                "annotation": annotation,
                "row": row,
                **{f"AUC {p.replace('_', ' ')}": mean_std(m, f"auc_{p}") for p in PARTS},
                "annotated": int(m.get("n_annotated", 0)),
                "annotator accuracy": cell(m.get("annotator_accuracy"), ".1%"),
                "high-error share": cell(m.get("high_error_share"), ".0%"),
                "paper AUC (all)": "-" if paper is None else f"{mean / 100:.3f} ± {std / 100:.3f}",
            }
        )
    return pd.DataFrame(records).set_index(["annotation", "row"])


def run_case_study(prepared: dict, params: dict, *, folder) -> dict:
    """``{(annotation, seed): CaseStudy.rows}``: ``clean`` (the oracle) and ``llm_like``, right as
    often as ``error_accuracy`` says per base-error bin (assumed: the paper prints no numbers)."""
    from tqdm.auto import tqdm

    case = CaseSettings.from_params(params, prepared)
    task, runs, accuracy = case.task, {}, list(case.error_accuracy)
    for seed in tqdm(case.seeds, desc=f"{task} case study"):
        study = CaseStudy(prepared, case, seed, folder)
        noisy = ErrorDependentOracle(
            lambda pool, ids: base_error(pool, ids, study.base_cosine(pool, ids)),
            accuracy,
            error_edges(len(accuracy)),
            seed=study.seed,
        )
        for name, annotator in {"clean": Oracle(), "llm_like": noisy}.items():
            runs[(name, int(seed))] = rows = study.rows(annotator)
            best = max(CASE_STRATEGIES, key=lambda r: rows[r]["auc_all"] or 0.0)
            print(
                f"{task} seed {seed}, {name}: source-only AUC {mean_std(rows['initial'], 'auc_all')}, "
                f"best {best} {mean_std(rows[best], 'auc_all')} ({len(study.source)} source, "
                f"{len(study.target)} target, {study.budget} annotated)"
            )
    return runs


def llm_section(prepared: dict, params: dict, *, cache, folder) -> dict | None:
    """The first seed's conditional-informativeness picks (at most ``llm_max_pairs``) labelled by
    the ``llm_base_url`` endpoint after printing the cost estimate: the row's metrics with the
    endpoint's usage, or None when no endpoint is set."""
    if not params.get("llm_base_url"):
        print("no LLM endpoint set (llm_base_url): section skipped; nothing was sent")
        return None
    if not params.get("llm_model"):
        raise ValueError("llm_base_url is set but llm_model is not: name the endpoint's model")
    case = CaseSettings.from_params(params, prepared)
    study = CaseStudy(prepared, case, case.seeds[0], folder)
    picked = study.pick("conditional_informativeness")[: int(params["llm_max_pairs"])]
    annotator = LLMAnnotator(
        base_url=params["llm_base_url"],
        model=params["llm_model"],
        api_key=os.environ.get(params["llm_api_key_env"]) or None,
        cache=cache,
        task=like(case.task, study.train.symmetric),  # a file: its kind's prompt
        price_per_1k_input=params["llm_price_per_1k_input"],
        price_per_1k_output=params["llm_price_per_1k_output"],
    )
    print(f"before sending anything: {annotator.estimate_cost(*study.train.texts(picked))}")
    row = study.row(picked, annotator)
    print(
        f"{params['llm_model']} on {len(picked)} pairs: accuracy {row['annotator_accuracy']}, "
        f"{row['no_answer']} unanswered, AUC {mean_std(row, 'auc_all')}; usage {annotator.usage}"
    )
    return {**row, "usage": dict(annotator.usage), "model": params["llm_model"]}
