"""Augmented SBERT (notebook 06): a cross-encoder trained on gold labels labels sampled
("silver") pairs for the bi-encoder, measured on all pairs and on the stated test pairs. An
:class:`AugRun` keeps its models, silver scores and metrics in a folder: a re-run trains nothing."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd

from ..active.config import LoopSettings
from ..active.store import load_result, run_folder, run_labels
from ..augment import samplers as smp
from ..augment.silver import SilverLabeller
from ..data.pairs import union_sorted
from ..data.paper import AUGSBERT_QQP_F1
from ..evaluation import heuristic
from ..evaluation.strata import EvalConfig, evaluate, pretrained_eval_set
from .baselines import TrainSettings, sample_pairs, stated_pairs, train_or_load, trained_metrics
from .summaries import cell, in_order, mean_std, seed_means_by
from .sweeps import COLLAPSED_SPREAD

__all__ = [
    "AugSettings",
    "AugRun",
    "augsbert_metrics",
    "augsbert_table",
    "silver_frame",
    "silver_gains",
    "run_all",
    "size_curves",
]

GOLD_SOURCES = ("stated", "uncertainty")
ROWS = ("sbert", "cross_encoder", *smp.SAMPLERS)
SCORES = ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")
SILVER = ("silver_positive_share", "true_positive_share", "silver_precision")
LABELLER = ("label_seconds", "pairs_per_second", "threshold", "silver_logit_std", "collapsed")
FLAT = " (flat calibration: on its training pairs the cosine does not rise with the label)"
FIELDS = (*SCORES, "f1", "n_gold", "n_silver", *SILVER, *LABELLER, "seconds")  # in the metrics


@dataclass(frozen=True)
class AugSettings:
    """Notebook 06's settings, built once from its parameters; ``augsbert_epochs``, when set,
    replaces the bi-encoders' epochs here only (notebook 03's runs keep ``cosine_epochs``)."""

    samplers: tuple
    k: int
    silver_items: int | None
    kde_pairs: int
    gold_sources: tuple
    train_max_pairs: int | None
    seeds: tuple
    size_fractions: tuple
    concat: TrainSettings
    cosine: TrainSettings
    augsbert_epochs: int | None
    concat_strata: EvalConfig
    model: str | None
    max_seq_length: int
    n_boot: int

    @classmethod
    def from_params(cls, params: dict) -> AugSettings:
        unknown = set(params["samplers"]) - set(smp.SAMPLERS)
        if unknown:
            raise ValueError(f"unknown samplers {sorted(unknown)}; choose from {smp.SAMPLERS}")
        same = ("silver_items", "kde_pairs", "train_max_pairs", "model", "max_seq_length", "n_boot")
        return cls(
            samplers=tuple(params["samplers"]),
            k=int(params["k"]),
            gold_sources=tuple(params["gold_sources"]),
            seeds=tuple(int(s) for s in params["seeds"]),
            size_fractions=tuple(params["size_fractions"]),
            concat=TrainSettings.from_params(params, "concatbert"),
            cosine=TrainSettings.from_params(params, "cosinebert"),
            augsbert_epochs=params.get("augsbert_epochs") or None,
            concat_strata=EvalConfig(
                params["concat_near_m"], params["concat_n_random"], params["seed"]
            ),
            **{name: params[name] for name in same},
        )

    def configs(self, task: str, seed: int) -> dict:
        """``{"concatbert": TrainConfig, "cosinebert": TrainConfig}`` for ``task`` and ``seed``."""
        cosine = self.cosine.config(task, seed)
        if self.augsbert_epochs:
            cosine = replace(cosine, epochs=self.augsbert_epochs)
        return {"concatbert": self.concat.config(task, seed), "cosinebert": cosine}


class AugRun:
    """A task, gold source and seed of notebook 06: its models (kept in ``folder``) and labeller."""

    def __init__(
        self, task, source, seed, prepared, aug: AugSettings, settings, *, runs_root, folder
    ):
        self.task, self.source, self.seed, self.aug = task, source, int(seed), aug
        pools, self.eval_sets = prepared[task]
        self.train, self.dev, self.test = pools["train"], pools["dev"], pools["test"]
        self.folder = Path(folder)
        self.gold_ids, self.gold_y = self._gold(pools, settings, runs_root)
        self.configs = aug.configs(task, self.seed)
        (self.cross, cross_id), (self.sbert, _) = (
            train_or_load(
                kind, self.train, self.gold_ids, self.configs[kind], folder=folder, model=aug.model
            )
            for kind in ("concatbert", "cosinebert")
        )
        self.labeller = SilverLabeller(
            self.cross,
            self.train,
            self.threshold(self.cross),
            gold=self.gold_ids,
            path=self.folder / f"{cross_id}.silver.npz",
        )

    def _gold(self, pools: dict, settings: LoopSettings, root) -> tuple[np.ndarray, np.ndarray]:
        """Gold pairs and labels: ``stated`` (``train_max_pairs`` of the heuristically balanced
        training data) or ``uncertainty`` (read back from notebook 03's run under ``root``)."""
        task, source, seed = self.task, self.source, self.seed
        if source == "stated":
            ids = sample_pairs(stated_pairs(self.train)[0], self.aug.train_max_pairs, seed=seed)
            return ids, self.train.labels(ids)
        if source != "uncertainty":
            raise ValueError(f"gold source must be one of {GOLD_SOURCES}, got {source!r}")
        folder = run_folder(root, settings.config(task, source, seed), pools, self.eval_sets)
        if load_result(folder) is None:
            raise FileNotFoundError(
                f"no finished {source} run of {task} (seed {seed}) at {folder}: run notebook 03 "
                f"with the same profile first (notebooks 04-07 read its runs back)"
            )
        return run_labels(folder)

    def threshold(self, model) -> float:
        """The paper's threshold for classification: ``model``'s best F1 on the stated dev pairs."""
        ids, y = stated_pairs(self.dev)
        return heuristic.best_threshold(y, model.score_pairs(self.dev, ids), metric="f1")

    @cached_property
    def silver(self) -> dict:
        """``{sampler: (ids, silver labels, seconds to sample)}``, drawn once. The neighbour
        samplers query the gold pairs' items (at most ``silver_items``); RS draws as many pairs
        as BM25 and SS aim at (k per item); KDE labels ``kde_pairs`` random pairs and keeps every
        silver positive with negatives at the gold ratio."""
        p, train, gold, seed = self.aug, self.train, self.gold_ids, self.seed
        wanted = p.samplers
        emb = self.sbert.scorer(train)
        items = smp.query_items(train, gold, p.silver_items, seed=seed)
        draw = {}  # sampler -> what draws its pairs, in the order they are drawn
        if {"bm25", "bm25_ss"} & set(wanted):
            draw["bm25"] = lambda: smp.lexical_pairs(train, p.k, items=items, exclude=gold)
        if {"ss", "bm25_ss"} & set(wanted):
            right = None if train.symmetric else emb.right
            draw["ss"] = lambda: smp.semantic_pairs(
                train, p.k, emb.left, right, items=items, exclude=gold
            )
        if "rs" in wanted:
            draw["rs"] = lambda: smp.random_pairs(train, p.k * len(items), seed=seed, exclude=gold)
        if "kde" in wanted:
            ratio = smp.gold_ratio(self.gold_y)
            draw["kde"] = lambda: smp.balanced_pairs(
                *self.labeller.label(
                    smp.random_pairs(train, p.kde_pairs, seed=seed + 1, exclude=gold)
                ),
                ratio,
                seed=seed,
            )
        found, seconds = {}, {}
        for name, make in draw.items():
            start = time.perf_counter()
            found[name] = make()
            seconds[name] = time.perf_counter() - start
        if "bm25_ss" in wanted:
            found["bm25_ss"] = union_sorted(found["bm25"], found["ss"])
            seconds["bm25_ss"] = seconds["bm25"] + seconds["ss"]
        return {name: (*self.labeller.label(found[name]), seconds[name]) for name in wanted}

    def augmented(self, ids, y) -> dict:
        """The bi-encoder trained on gold + silver ``ids`` with labels ``y``, measured (cached)."""

        def measure(trained, seconds):
            flat = {"calibration_flat": bool(trained.info.get("calibration_flat"))}
            return {**self.measure(trained), "train_seconds": round(seconds, 1), **flat}

        return trained_metrics(
            self.train,
            np.r_[self.gold_ids, ids],
            np.r_[self.gold_y, y],
            self.configs["cosinebert"],
            model=self.aug.model,
            folder=self.folder / "augsbert",
            measure=measure,
        )

    def measure(self, model, eval_set=None) -> dict:
        """All-pairs AP and P@R20 on ``eval_set``, stated test F1 at the model's dev threshold."""
        scorer = model.scorer(self.test)  # embeds every test item once, the stated pairs' too
        eval_set = eval_set or self.eval_sets["test"]
        scored = evaluate(eval_set, scorer, n_boot=self.aug.n_boot, seed=self.seed)
        ids, y = stated_pairs(self.test)
        f1 = heuristic.accuracy_f1(y, scorer(ids), self.threshold(model))["f1"]
        return {**{k: scored[k] for k in SCORES}, "f1": f1}

    def rows(self, concat_eval_set) -> dict:
        """``{row: metrics}`` of the rows the samplers ask for, and ``"_silver"`` (each sampler's
        ids, labels and margins); ``concat_eval_set``: the cross-encoder's test strata."""
        name = f"{self.task}/{self.source} seed {self.seed}"
        gold = {"n_gold": int(len(self.gold_ids)), "n_silver": 0}
        rows = {
            "sbert": {**self.measure(self.sbert), **gold},
            "cross_encoder": {**self.measure(self.cross, concat_eval_set), **gold},
        }
        for sampler, (ids, y, sample_seconds) in self.silver.items():
            measured, truth = self.augmented(ids, y), self.train.labels(ids)
            share = float(y.mean()) if len(y) else None
            rows[sampler] = {
                **measured,
                **gold,
                "n_silver": int(len(ids)),
                "silver_positive_share": share,
                "seconds": {"sample": round(sample_seconds, 2), "train": measured["train_seconds"]},
                "true_positive_share": float(truth.mean()) if len(ids) else None,
                "silver_precision": float(truth[y == 1].mean()) if (y == 1).any() else None,
            }
            print(
                f"{name} {sampler}: {len(ids):,} silver pairs ({share or 0:.1%} positive), "
                f"AP {measured['ap']:.3f}, F1 {measured['f1']:.3f}"
                + (FLAT if measured.get("calibration_flat") else "")
            )
        labeller = self.labeller
        spread = float(np.std(labeller.logits)) if len(labeller.logits) else 0.0
        rows["cross_encoder"].update(
            label_seconds=round(labeller.seconds, 1),
            pairs_per_second=labeller.pairs_per_second,
            threshold=labeller.threshold,
            silver_logit_std=spread,
            collapsed=spread < COLLAPSED_SPREAD,
        )
        if spread < COLLAPSED_SPREAD:
            print(
                f"{name}: the cross-encoder gives every silver pair about the same score (logit "
                f"std {spread:.3f}): its silver labels are noise, so the AugSBERT rows measure "
                "training on noise"
            )
        rows["_silver"] = {
            sampler: {"ids": ids, "labels": y, "margin": labeller.score(ids) - labeller.threshold}
            for sampler, (ids, y, _) in self.silver.items()
        }
        return rows

    def size_curve(self, sampler: str, fractions) -> list[dict]:
        """AP against silver-set size: the bi-encoder on gold + a uniform, seeded ``fraction`` of
        ``sampler``'s silver pairs, for each fraction (0 is gold only)."""
        ids, y, _ = self.silver[sampler]
        key = {"task": self.task, "gold": self.source, "seed": self.seed, "sampler": sampler}
        out = []
        for fraction in fractions:
            n = int(round(float(fraction) * len(ids)))
            keep = np.sort(np.random.default_rng(self.seed).permutation(len(ids))[:n])
            scored = self.measure(self.sbert) if n == 0 else self.augmented(ids[keep], y[keep])
            size, (low, high) = {"fraction": float(fraction), "n_silver": n}, scored["ap_ci"]
            out.append({**key, **size, **scored, "ap_low": low, "ap_high": high})
        return out


def run_all(prepared: dict, params: dict, settings: LoopSettings, *, runs_root, folder) -> dict:
    """:meth:`AugRun.rows` for every task, gold source and seed of notebook 06's parameters; the
    cross-encoder's test strata are drawn once per task. Returns ``{(task, source, seed): rows}``."""
    from tqdm.auto import tqdm

    aug = AugSettings.from_params(params)
    concat_eval = {
        task: pretrained_eval_set(
            pools["test"], aug.concat_strata, model=aug.model, max_seq_length=aug.max_seq_length
        )[0]
        for task, (pools, _) in prepared.items()
    }
    runs = {}
    for key in tqdm(list(product(prepared, aug.gold_sources, aug.seeds)), desc="AugSBERT runs"):
        run = AugRun(*key, prepared, aug, settings, runs_root=runs_root, folder=folder)
        runs[key] = run.rows(concat_eval[key[0]])
    return runs


def size_curves(
    metrics: dict, prepared: dict, params: dict, settings: LoopSettings, *, runs_root, folder
) -> pd.DataFrame:
    """:meth:`AugRun.size_curve` of each task's best sampler on the first gold source, per seed."""
    from tqdm.auto import tqdm

    aug = AugSettings.from_params(params)
    source, rows = aug.gold_sources[0], []
    for task in prepared:
        best = best_sampler(metrics, task, source)
        for seed in tqdm(aug.seeds, desc=f"{task}: {best} by silver size"):
            run = AugRun(
                task, source, seed, prepared, aug, settings, runs_root=runs_root, folder=folder
            )
            rows += run.size_curve(best, aug.size_fractions)
    return pd.DataFrame(rows)


def augsbert_metrics(runs: dict) -> dict:
    """Notebook 06's metrics file ``{task: {source: {row: seed_means}}}`` from ``{(task, source,
    seed): AugRun.rows}``; an interval is the mean of the seeds' bounds."""
    flat = {
        (task, source, row, seed): m
        for (task, source, seed), rows in sorted(runs.items())
        for row, m in rows.items()
        if not row.startswith("_")
    }
    return seed_means_by(flat, FIELDS, skip_absent=True)


def augsbert_table(metrics: dict, task: str) -> pd.DataFrame:
    """One task's rows by gold source, means ± std over seeds, with the paper's Quora-QP F1."""
    records = []
    for source, row, m in in_order(metrics[task], ROWS):
        rec = {
            "gold": source,
            "model": row,
            "AP": mean_std(m, "ap"),
            "AP 95% CI": "[{:.3f}, {:.3f}]".format(*m["ap_ci"]),
            "P@R20": mean_std(m, "p_at_r20"),
            "F1 (stated)": mean_std(m, "f1"),
            "silver": int(round(m.get("n_silver", 0))),
            "silver positive": cell(m.get("silver_positive_share"), ".1%"),
            "silver precision": cell(m.get("silver_precision"), ".1%"),
        }
        if task == "qqp":
            paper = AUGSBERT_QQP_F1.get(row)
            rec["paper F1 (Quora-QP)"] = (
                "-" if paper is None else f"{paper[0] / 100:.3f} ± {paper[1] / 100:.3f}"
            )
        records.append(rec)
    return pd.DataFrame(records).set_index(["gold", "model"])


def silver_frame(runs: dict) -> pd.DataFrame:
    """Every silver pair's cross-encoder margin (logit minus the dev threshold) and label."""
    columns = ["task", "gold", "seed", "sampler", "margin", "label"]
    frames = [
        pd.DataFrame(dict(zip(columns, (*key, name, s["margin"], s["labels"]))))
        for key, rows in runs.items()
        for name, s in rows["_silver"].items()
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def best_sampler(metrics: dict, task: str, source: str = "stated") -> str:
    """The sampler whose AugSBERT reached the highest mean all-pairs test AP."""
    rows = {r: m for r, m in metrics[task][source].items() if r in smp.SAMPLERS}
    if not rows:
        raise ValueError(f"no AugSBERT rows for {task}/{source}")
    return max(rows, key=lambda r: rows[r]["ap"])


def silver_gains(metrics: dict) -> dict:
    """``{task: {source: (mean, per seed)}}``: the best sampler's AP minus the gold-only SBERT's,
    for the tasks where two or more gold sources have both."""
    out = {}
    for task, by_source in metrics.items():
        gains = {}
        for source, rows in by_source.items():
            if "sbert" in rows and set(smp.SAMPLERS) & set(rows):
                best = best_sampler(metrics, task, source)
                ours, gold = (
                    (rows[r].get("per_seed") or {}).get("ap", []) for r in (best, "sbert")
                )
                gain = rows[best]["ap"] - rows["sbert"]["ap"]
                gains[source] = gain, [a - b for a, b in zip(ours, gold)]
        if len(gains) > 1:
            out[task] = gains
    return out
