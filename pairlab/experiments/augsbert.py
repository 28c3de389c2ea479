"""Augmented SBERT on the all-pairs tasks (notebook 06): a cross-encoder trained on gold labels
labels sampled pairs ("silver") for the bi-encoder, measured on all pairs and on the stated
(balanced) test pairs the paper reports.

One run is a task, a gold source and a seed: :class:`AugRun` trains the cross-encoder and the
gold-only bi-encoder, samples and labels silver pairs with each sampler, trains one AugSBERT per
sampler on gold + silver and measures every model. Models and silver scores are cached in a
folder, so a re-run trains and scores nothing again.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..active.config import LoopSettings
from ..active.store import load_result, run_folder, run_labels
from ..augment import samplers as smp
from ..augment.silver import SilverLabeller
from ..data.pairs import union_sorted
from ..evaluation import heuristic
from ..evaluation.strata import EvalConfig, evaluate
from ..models.cosinebert import CosineBERT
from .baselines import TrainSettings, model_id, sample_pairs, stated_pairs, train_or_load
from .summaries import in_order, mean_std, seed_means
from .sweeps import COLLAPSED_SPREAD

__all__ = [
    "GOLD_SOURCES",
    "ROWS",
    "AugSBERT",
    "gold_set",
    "collected_labels",
    "dev_threshold",
    "stated_f1",
    "silver_sets",
    "AugSettings",
    "AugTraining",
    "AugRun",
    "augsbert_metrics",
    "augsbert_table",
    "silver_frame",
    "best_sampler",
    "silver_gains",
    "silver_gain",
    "run_all",
    "size_curves",
]

GOLD_SOURCES = ("stated", "uncertainty")
ROWS = ("sbert", "cross_encoder", *smp.SAMPLERS)
FIELDS = (
    "ap",
    "ap_ci",
    "p_at_r20",
    "p_at_r20_ci",
    "f1",
    "n_gold",
    "n_silver",
    "silver_positive_share",
    "true_positive_share",
    "silver_precision",
)


@dataclass
class AugSBERT:
    """What one AugSBERT model was trained on: the sampler, k, the gold and silver sizes, the
    silver positive share and the seconds spent sampling and training."""

    sampler: str
    k: int
    n_gold: int
    n_silver: int
    silver_positive_share: float | None
    model_id: str
    seconds: dict = field(default_factory=dict)


def collected_labels(
    prepared: dict,
    settings: LoopSettings,
    root,
    task: str,
    seed: int,
    strategy: str = "uncertainty",
) -> tuple[np.ndarray, np.ndarray]:
    """The labels a finished notebook-03 run collected (read back from its run folder under
    ``root``, never recomputed); a clear error when that run is missing."""
    pools, eval_sets = prepared[task]
    config = settings.config(task, strategy, seed)
    folder = run_folder(root, config, pools, eval_sets)
    if load_result(folder) is None:
        raise FileNotFoundError(
            f"no finished {strategy} run of {task} (seed {seed}) at {folder}: run notebook 03 "
            f"with the same profile first (notebooks 04-07 read its runs back)"
        )
    return run_labels(folder)


def gold_set(
    source: str,
    prepared: dict,
    settings: LoopSettings,
    root,
    task: str,
    seed: int,
    *,
    max_pairs: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Gold training pairs and labels: ``stated`` (the heuristically balanced training data,
    ``max_pairs`` of it) or ``uncertainty`` (what uncertainty sampling collected in notebook 03)."""
    train = prepared[task][0]["train"]
    if source == "stated":
        ids = sample_pairs(stated_pairs(train)[0], max_pairs, seed=seed)
        return ids, train.labels(ids)
    if source == "uncertainty":
        return collected_labels(prepared, settings, root, task, seed)
    raise ValueError(f"gold source must be one of {GOLD_SOURCES}, got {source!r}")


def dev_threshold(score, dev) -> float:
    """The paper's threshold for classification: best F1 on the stated dev pairs.
    ``score(pool, ids)`` gives scores (e.g. a model's ``score_pairs``)."""
    ids, y = stated_pairs(dev)
    return heuristic.best_threshold(y, score(dev, ids), metric="f1")


def stated_f1(score, threshold: float, test) -> float:
    """F1 of the positive class on the stated test pairs at ``threshold`` (the paper's metric)."""
    ids, y = stated_pairs(test)
    return heuristic.accuracy_f1(y, score(test, ids), threshold)["f1"]


def silver_sets(
    train,
    gold_ids,
    gold_labels,
    labeller: SilverLabeller,
    left_emb,
    right_emb=None,
    *,
    samplers=smp.SAMPLERS,
    k: int = 3,
    max_items: int | None = None,
    kde_pairs: int = 10_000,
    seed: int = 0,
) -> dict:
    """``{sampler: (ids, silver labels, seconds to sample)}`` for each of ``samplers``. The
    neighbour samplers query the gold pairs' items (at most ``max_items``); RS draws as many
    pairs as BM25 and SS aim at (k per item); KDE labels ``kde_pairs`` random pairs and keeps
    every silver positive with negatives at the gold ratio."""
    unknown = set(samplers) - set(smp.SAMPLERS)
    if unknown:
        raise ValueError(f"unknown samplers {sorted(unknown)}; choose from {smp.SAMPLERS}")
    items = smp.query_items(train, gold_ids, max_items, seed=seed)
    found, seconds = {}, {}

    def timed(name, make):
        start = time.perf_counter()
        found[name] = make()
        seconds[name] = time.perf_counter() - start

    if {"bm25", "bm25_ss"} & set(samplers):
        timed("bm25", lambda: smp.lexical_pairs(train, k, items=items, exclude=gold_ids))
    if {"ss", "bm25_ss"} & set(samplers):
        timed(
            "ss",
            lambda: smp.semantic_pairs(
                train, k, left_emb, right_emb, items=items, exclude=gold_ids
            ),
        )
    if "bm25_ss" in samplers:
        found["bm25_ss"] = union_sorted(found["bm25"], found["ss"])
        seconds["bm25_ss"] = seconds["bm25"] + seconds["ss"]
    if "rs" in samplers:
        timed("rs", lambda: smp.random_pairs(train, k * len(items), seed=seed, exclude=gold_ids))
    if "kde" in samplers:
        ratio = smp.gold_ratio(gold_labels)
        timed(
            "kde",
            lambda: smp.balanced_pairs(
                *labeller.label(
                    smp.random_pairs(train, kde_pairs, seed=seed + 1, exclude=gold_ids)
                ),
                ratio,
                seed=seed,
            ),
        )
    return {name: (*labeller.label(found[name]), seconds[name]) for name in samplers}


@dataclass(frozen=True)
class AugTraining:
    """How notebook 06 trains its two models: the cross-encoder and the bi-encoder
    (:class:`TrainSettings`), the bi-encoders trained here taking ``augsbert_epochs`` when set
    (notebook 03's runs, found by ``cosine_epochs``, are not affected)."""

    concat: TrainSettings
    cosine: TrainSettings
    augsbert_epochs: int | None = None

    @classmethod
    def from_params(cls, params: dict) -> AugTraining:
        return cls(
            TrainSettings.from_params(params, "concatbert"),
            TrainSettings.from_params(params, "cosinebert"),
            params.get("augsbert_epochs") or None,
        )

    def configs(self, task: str, seed: int) -> dict:
        """``{"concatbert": TrainConfig, "cosinebert": TrainConfig}`` for ``task`` and ``seed``."""
        configs = {
            "concatbert": self.concat.config(task, seed),
            "cosinebert": self.cosine.config(task, seed),
        }
        if self.augsbert_epochs:
            configs["cosinebert"] = replace(configs["cosinebert"], epochs=self.augsbert_epochs)
        return configs


@dataclass(frozen=True)
class AugSettings:
    """Notebook 06's settings, built once from its parameters (:meth:`from_params`): the
    silver samplers (``samplers``, ``k``, ``silver_items``, ``kde_pairs``), the gold sets
    (``gold_sources``, ``train_max_pairs``), the seeds and silver-size fractions, the two
    models' training (:class:`AugTraining`), the cross-encoder's test strata and the encoder."""

    samplers: tuple
    k: int
    silver_items: int | None
    kde_pairs: int
    gold_sources: tuple
    train_max_pairs: int | None
    seeds: tuple
    size_fractions: tuple
    training: AugTraining
    concat_strata: EvalConfig
    model: str | None
    max_seq_length: int
    n_boot: int

    @classmethod
    def from_params(cls, params: dict) -> AugSettings:
        return cls(
            samplers=tuple(params["samplers"]),
            k=int(params["k"]),
            silver_items=params["silver_items"],
            kde_pairs=params["kde_pairs"],
            gold_sources=tuple(params["gold_sources"]),
            train_max_pairs=params["train_max_pairs"],
            seeds=tuple(int(s) for s in params["seeds"]),
            size_fractions=tuple(params["size_fractions"]),
            training=AugTraining.from_params(params),
            concat_strata=EvalConfig(
                params["concat_near_m"], params["concat_n_random"], params["seed"]
            ),
            model=params["model"],
            max_seq_length=params["max_seq_length"],
            n_boot=params["n_boot"],
        )


class AugRun:
    """One task, gold source and seed of notebook 06: the gold set, the cross-encoder and the
    gold-only bi-encoder trained on it (or loaded from ``folder``), the silver labeller, and the
    silver sets of each sampler, with notebook 06's settings (:class:`AugSettings`)."""

    def __init__(
        self,
        task: str,
        source: str,
        seed: int,
        prepared: dict,
        aug: AugSettings,
        settings: LoopSettings,
        *,
        runs_root,
        folder,
    ):
        self.task, self.source, self.seed, self.aug = task, source, int(seed), aug
        pools, self.eval_sets = prepared[task]
        self.train, self.dev, self.test = pools["train"], pools["dev"], pools["test"]
        self.folder = Path(folder)
        self.gold_ids, self.gold_y = gold_set(
            source,
            prepared,
            settings,
            runs_root,
            task,
            self.seed,
            max_pairs=aug.train_max_pairs,
        )
        self.configs = aug.training.configs(task, self.seed)
        self.cross, cross_id = self._train("concatbert", self.gold_ids)
        self.sbert, _ = self._train("cosinebert", self.gold_ids)
        self.labeller = SilverLabeller(
            self.cross,
            self.train,
            dev_threshold(self.cross.score_pairs, self.dev),
            gold=self.gold_ids,
            path=self.folder / f"{cross_id}.silver.npz",
        )
        self._silver = None

    def _train(self, kind, ids, labels=None):
        return train_or_load(
            kind,
            self.train,
            ids,
            self.configs[kind],
            folder=self.folder,
            model=self.aug.model,
            labels=labels,
        )

    def silver(self) -> dict:
        """``{sampler: (ids, labels, seconds to sample)}`` (:func:`silver_sets`), drawn once."""
        if self._silver is None:
            emb = self.sbert.scorer(self.train)
            p = self.aug
            self._silver = silver_sets(
                self.train,
                self.gold_ids,
                self.gold_y,
                self.labeller,
                emb.left,
                None if self.train.symmetric else emb.right,
                samplers=list(p.samplers),
                k=p.k,
                max_items=p.silver_items,
                kde_pairs=p.kde_pairs,
                seed=self.seed,
            )
        return self._silver

    def augmented(self, ids, y) -> tuple[dict, str, float]:
        """The bi-encoder trained on gold + the silver ``ids`` with labels ``y``, measured
        (:meth:`measure`): (metrics, model id, seconds). The metrics are kept in the folder under
        the model's id, so a re-run reads them back instead of training again (the model itself,
        90 MB, is not kept)."""
        from ..io import write_json

        order = np.argsort(np.r_[self.gold_ids, ids], kind="stable")
        all_ids = np.r_[self.gold_ids, ids][order]
        all_y = np.r_[self.gold_y, y].astype(np.int8)[order]
        config, model = self.configs["cosinebert"], self.aug.model
        name = model_id("cosinebert", self.train, all_ids, config, model, all_y)
        path = self.folder / "augsbert" / f"{name}.json"
        if path.is_file():
            return json.loads(path.read_text()), name, 0.0
        start = time.perf_counter()
        left, right = self.train.texts(all_ids)
        trained = CosineBERT.train(left, right, all_y, model=model, config=config)
        seconds = time.perf_counter() - start
        metrics = {
            **self.measure(trained),
            "train_seconds": round(seconds, 1),
            "calibration_flat": bool(trained.info.get("calibration_flat")),
        }
        write_json(path, metrics)
        return metrics, name, seconds

    def measure(self, model, eval_set=None) -> dict:
        """All-pairs AP and P@R20 on ``eval_set`` (default: the bi-encoder's test strata) and the
        stated test F1 at the model's own dev threshold."""
        scorer = model.scorer(
            self.test
        )  # every test item embedded once: the stated test pairs are among them
        scored = evaluate(
            eval_set or self.eval_sets["test"], scorer, n_boot=self.aug.n_boot, seed=self.seed
        )
        threshold = dev_threshold(model.score_pairs, self.dev)
        return {
            **{k: scored[k] for k in ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")},
            "f1": stated_f1(lambda pool, ids: scorer(ids), threshold, self.test),
        }

    def rows(self, concat_eval_set, *, log=print) -> dict:
        """``{row: metrics}`` for every row of :data:`ROWS` the samplers ask for, plus
        ``"_silver"`` (each sampler's silver ids, labels and logits, for the figures);
        ``concat_eval_set``: the cross-encoder's (smaller) test strata."""
        n_gold = int(len(self.gold_ids))
        rows = {
            "sbert": {**self.measure(self.sbert), "n_gold": n_gold, "n_silver": 0},
            "cross_encoder": {
                **self.measure(self.cross, concat_eval_set),
                "n_gold": n_gold,
                "n_silver": 0,
            },
        }
        for name, (ids, y, sample_seconds) in self.silver().items():
            measured, aug_id, _ = self.augmented(ids, y)
            record = AugSBERT(
                name,
                self.aug.k,
                n_gold,
                int(len(ids)),
                float(y.mean()) if len(y) else None,
                aug_id,
                {"sample": round(sample_seconds, 2), "train": measured["train_seconds"]},
            )
            truth = self.train.labels(ids)
            rows[name] = {
                **measured,
                **asdict(record),
                "true_positive_share": float(truth.mean()) if len(ids) else None,
                "silver_precision": float(truth[y == 1].mean()) if (y == 1).any() else None,
            }
            log(
                f"{self.task}/{self.source} seed {self.seed} {name}: {len(ids):,} silver pairs "
                f"({record.silver_positive_share or 0:.1%} positive), AP {rows[name]['ap']:.3f}, "
                f"F1 {rows[name]['f1']:.3f}"
                + (
                    " (flat calibration: on its training pairs the cosine "
                    "does not rise with the label)"
                    if measured.get("calibration_flat")
                    else ""
                )
            )
        labeller = self.labeller
        spread = float(np.std(labeller.logits)) if len(labeller.logits) else 0.0
        rows["cross_encoder"].update(
            label_seconds=round(labeller.seconds, 1),
            labelled=labeller.n_scored,
            pairs_per_second=labeller.pairs_per_second,
            threshold=labeller.threshold,
            silver_logit_std=spread,
            collapsed=spread < COLLAPSED_SPREAD,
        )
        if spread < COLLAPSED_SPREAD:
            log(
                f"{self.task}/{self.source} seed {self.seed}: the cross-encoder gives every silver pair "
                f"about the same score (logit std {spread:.3f}): its silver labels are noise, so the "
                "AugSBERT rows measure training on noise"
            )
        rows["_silver"] = {
            name: {"ids": ids, "labels": y, "margin": labeller.score(ids) - labeller.threshold}
            for name, (ids, y, _) in self.silver().items()
        }
        return rows

    def size_curve(self, sampler: str, fractions) -> list[dict]:
        """AP against silver-set size: the bi-encoder on gold + a uniform, seeded ``fraction`` of
        ``sampler``'s silver pairs, for each fraction (0 is gold only)."""
        ids, y, _ = self.silver()[sampler]
        out = []
        for fraction in fractions:
            n = int(round(float(fraction) * len(ids)))
            keep = np.sort(np.random.default_rng(self.seed).permutation(len(ids))[:n])
            scored = self.measure(self.sbert) if n == 0 else self.augmented(ids[keep], y[keep])[0]
            out.append(
                {
                    "task": self.task,
                    "gold": self.source,
                    "seed": self.seed,
                    "sampler": sampler,
                    "fraction": float(fraction),
                    "n_silver": n,
                    **scored,
                    "ap_low": scored["ap_ci"][0],
                    "ap_high": scored["ap_ci"][1],
                }
            )
        return out


def run_all(
    prepared: dict, params: dict, settings: LoopSettings, *, runs_root, folder, log=print
) -> dict:
    """:meth:`AugRun.rows` for every task, gold source (``params["gold_sources"]``) and seed
    (``params["seeds"]``), with a progress bar; the cross-encoder's test strata are drawn once
    per task (``concat_near_m``, ``concat_n_random``). Returns ``{(task, source, seed): rows}``."""
    from itertools import product

    from tqdm.auto import tqdm

    from ..evaluation.strata import pretrained_eval_set

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
        runs[key] = run.rows(concat_eval[key[0]], log=log)
    return runs


def size_curves(
    metrics: dict, prepared: dict, params: dict, settings: LoopSettings, *, runs_root, folder
):
    """:meth:`AugRun.size_curve` of each task's best sampler (:func:`best_sampler`) on the first
    gold source, over ``params["seeds"]`` and ``params["size_fractions"]``: one frame."""
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
    """Notebook 06's metrics file from ``{(task, source, seed): AugRun(...).rows(...)}``:
    ``{task: {source: {row: {field: mean over seeds, ..., "per_seed": {field: [...]}}}}}``.
    Intervals are the mean of the seeds' interval bounds (each seed's own is in ``per_seed``)."""
    grouped: dict = {}
    for (task, source, seed), rows in sorted(runs.items()):
        for row, m in rows.items():
            if row.startswith("_"):
                continue
            grouped.setdefault(task, {}).setdefault(source, {}).setdefault(row, []).append(
                (seed, m)
            )
    out: dict = {}
    for task, by_source in grouped.items():
        for source, by_row in by_source.items():
            for row, seeded in by_row.items():
                out.setdefault(task, {}).setdefault(source, {})[row] = _summary(seeded)
    return out


def _summary(seeded: list) -> dict:
    return seed_means(
        seeded,
        FIELDS
        + (
            "label_seconds",
            "pairs_per_second",
            "threshold",
            "silver_logit_std",
            "collapsed",
            "seconds",
        ),
        skip_absent=True,
    )


def augsbert_table(metrics: dict, task: str):
    """One task's table: rows x (gold source, measure), means +- std over seeds, with the paper's
    Quora-QP F1 (Table 5) beside QQP's."""
    from ..data.paper import AUGSBERT_QQP_F1

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
            "silver positive": _share(m.get("silver_positive_share")),
            "silver precision": _share(m.get("silver_precision")),
        }
        if task == "qqp":
            paper = AUGSBERT_QQP_F1.get(row)
            rec["paper F1 (Quora-QP)"] = (
                "-" if paper is None else f"{paper[0] / 100:.3f} ± {paper[1] / 100:.3f}"
            )
        records.append(rec)
    return pd.DataFrame(records).set_index(["gold", "model"])


def _share(value) -> str:
    return "-" if value is None else f"{value:.1%}"


def silver_frame(runs: dict):
    """Every silver pair's cross-encoder margin (logit minus the dev threshold) and label, per
    task, gold source, seed and sampler (for the silver label distribution figure)."""
    frames = [
        pd.DataFrame(
            {
                "task": task,
                "gold": source,
                "seed": seed,
                "sampler": name,
                "margin": s["margin"],
                "label": s["labels"],
            }
        )
        for (task, source, seed), rows in runs.items()
        for name, s in rows["_silver"].items()
    ]
    return (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["task", "gold", "seed", "sampler", "margin", "label"])
    )


def best_sampler(metrics: dict, task: str, source: str = "stated") -> str:
    """The sampler whose AugSBERT reached the highest mean all-pairs test AP."""
    rows = {r: m for r, m in metrics[task][source].items() if r in smp.SAMPLERS}
    if not rows:
        raise ValueError(f"no AugSBERT rows for {task}/{source}")
    return max(rows, key=lambda r: rows[r]["ap"])


# The paper's claims judged on notebook 06's metrics, and silver's gain over gold only


def silver_gains(metrics: dict) -> dict:
    """``{task: {source: (mean, per seed)}}``: each gold source's :func:`silver_gain`, for the
    tasks where two or more sources have one."""
    out = {}
    for task, by_source in metrics.items():
        gains = {s: g for s, rows in by_source.items() if (g := silver_gain(rows)) is not None}
        if len(gains) > 1:
            out[task] = gains
    return out


def silver_gain(rows: dict) -> tuple[float, list[float]] | None:
    """The best sampler's AP minus the gold-only SBERT's, as a mean and per seed (None without
    samplers)."""
    samplers = [r for r in smp.SAMPLERS if r in rows]
    if not samplers or "sbert" not in rows:
        return None
    best = max(samplers, key=lambda r: rows[r]["ap"])
    per_seed = [
        a - b
        for a, b in zip(
            (rows[best].get("per_seed") or {}).get("ap", []),
            (rows["sbert"].get("per_seed") or {}).get("ap", []),
        )
    ]
    return rows[best]["ap"] - rows["sbert"]["ap"], per_seed
