"""Sweeps of active-learning runs (tasks x strategies x seeds): what notebooks 03-05 prepare
and run, from their parameters to the results of every run (read back when finished)."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..active.config import LoopSettings
from ..active.loop import ActiveRun
from ..active.store import run_folder, run_labels
from ..data import loaders, paper
from ..data.loaders import Task
from ..evaluation.strata import EvalConfig, evaluate, pretrained_eval_set
from ..models.embed import embed_pool
from ..models.scoring import CosineScorer
from .baselines import train_or_load

__all__ = [
    "Variant",
    "pools_and_strata",
    "zero_shot",
    "with_zero_shot",
    "ZERO_SHOT",
    "prepare_active",
    "scale",
    "sweep",
    "total_rounds",
    "stratified_variants",
    "transfer",
]


def pools_and_strata(task: Task, eval_config: EvalConfig, *, model=None, max_seq_length: int = 128):
    """``(pools, eval_sets)`` of ``task``: its splits and dev and test strata (every run's)."""
    pools = {split: task[split] for split in ("train", "dev", "test")}
    eval_sets = {
        split: pretrained_eval_set(
            pools[split], eval_config, model=model, max_seq_length=max_seq_length
        )[0]
        for split in ("dev", "test")
    }
    return pools, eval_sets


ZERO_SHOT = "zero_shot"  # Table 3's row of the pretrained encoder with no labels


def zero_shot(
    prepared: dict, *, model=None, max_seq_length: int = 128, n_boot: int = 200, seed: int = 0
) -> dict:
    """The pretrained encoder's cosine with no labels, per task: its test metrics on the strata
    every run is measured on, as a :func:`summarise` entry with no seeds and a 95% ``ci``."""
    out = {}
    for task, (pools, eval_sets) in prepared.items():
        test = pools["test"]
        left, right = embed_pool(test, model, max_seq_length=max_seq_length, show_progress=False)
        scorer = CosineScorer(test.space, left, right)
        result = evaluate(eval_sets["test"], scorer, n_boot=n_boot, seed=seed)
        none = {"mean": 0.0, "std": 0.0, "per_seed": []}
        out[task] = {
            "seeds": [],
            "labels": 0,
            "positives_found": dict(none),
            **{
                k: {**none, "mean": float(result[k]), "ci": [float(v) for v in result[f"{k}_ci"]]}
                for k in ("ap", "p_at_r20")
            },
            "dev_ap_per_round": [],
            "rounds_per_seed": [],
            "seconds_per_run": {},
            "runs": [],
        }
    return out


def with_zero_shot(summary: dict, zero: dict) -> dict:
    """``summary`` with each task's :func:`zero_shot` entry first, under :data:`ZERO_SHOT`."""
    return {task: {ZERO_SHOT: zero[task], **strategies} for task, strategies in summary.items()}


def prepare_active(params: dict, *, show: bool = True):
    """``(prepared, settings)`` of notebooks 03-07: each task's :func:`pools_and_strata` and the
    :class:`LoopSettings`; ``show`` displays this run's sizes beside the paper's (:func:`scale`)."""
    tasks = loaders.tasks_for(params)  # a file's task gains the per-task settings of its kind
    eval_config, settings = EvalConfig.from_params(params), LoopSettings.from_params(params)
    prepared = {
        name: pools_and_strata(
            task, eval_config, model=settings.model, max_seq_length=settings.max_seq_length
        )
        for name, task in tasks.items()
    }
    if show:
        from IPython.display import display

        display(scale(prepared, settings))
    return prepared, settings


@dataclass(frozen=True)
class Variant:
    """A strategy run with other settings, under its own label: ``overrides`` are
    :class:`ActiveConfig` fields, or a callable ``(task, seed) -> fields``."""

    label: str
    strategy: str
    overrides: dict | Callable[[str, int], dict] = field(default_factory=dict)

    def fields(self, task: str, seed: int) -> dict:
        return dict(self.overrides(task, seed) if callable(self.overrides) else self.overrides)


def sweep(
    prepared: dict,
    strategies,
    seeds,
    settings: LoopSettings,
    root,
    *,
    callbacks=(),
    learner: Callable | None = None,
    backend: str = "local",
    address: str | None = None,
    cpus_per_run: float = 1,
    gpus_per_run: float | None = None,
    archive=None,
) -> dict:
    """Run every (task, strategy, seed) of ``prepared`` (task -> :func:`pools_and_strata`);
    returns ``{(task, label, seed): result}``, finished runs read back. A strategy is a name or
    a :class:`Variant`; ``seeds`` every strategy's, or each one's by label. ``archive``: a
    folder keeping each run's small record (:mod:`pairlab.active.archive`)."""
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be one of ('local', 'ray'), got {backend!r}")
    if backend == "local" and address is not None:
        raise ValueError(f"address {address!r} is for backend='ray'; the local backend has none")
    if backend == "ray" and archive is not None:
        raise ValueError("run archives are kept by the local backend only: set archive=None on Ray")
    learner = learner or sharing(settings)
    runs = [  # (key, config, folder)
        (key, config, run_folder(root, config, *prepared[config.task]))
        for key, config in _configs(prepared, strategies, seeds, settings)
    ]
    with run_progress(len(runs)) as progress:
        callbacks = [*callbacks, progress]
        if backend == "ray":
            from .distributed import run_on_ray

            return run_on_ray(
                runs,
                prepared,
                callbacks=callbacks,
                learner=learner,
                address=address,
                cpus_per_run=cpus_per_run,
                gpus_per_run=gpus_per_run,
            )
        return {
            key: ActiveRun(
                config,
                *prepared[config.task],
                folder,
                callbacks=callbacks,
                learner=learner(config) if learner else None,
                archive=None if archive is None else Path(archive) / folder.relative_to(root),
            ).run()
            for key, config, folder in runs
        }


def sharing(settings: LoopSettings) -> Callable | None:
    """The learner factory ``settings.share_models`` asks for: None (the default, sharing the seed
    round) or, with ``all``, one sharing every round's model through the cache."""
    if settings.share_models != "all":
        return None
    from ..active.learner import CosineBERTLearner

    return lambda config: CosineBERTLearner(
        config, shared_rounds=range(1, len(config.schedule()) + 1)
    )


def _configs(prepared: dict, strategies, seeds, settings: LoopSettings):
    """``((task, label, seed), config)`` of every run: by task, then strategy, then seed."""
    for task in prepared:
        for entry in (s if isinstance(s, Variant) else Variant(str(s), str(s)) for s in strategies):
            for seed in map(int, seeds[entry.label] if isinstance(seeds, dict) else seeds):
                config = settings.config(task, entry.strategy, seed, **entry.fields(task, seed))
                yield (task, entry.label, seed), config


@contextmanager
def run_progress(total: int):
    """A callback counting finished runs on a tqdm bar (text where ``$PAIRLAB_PROGRESS`` is
    ``text``, as the runner sets it for papermill)."""
    if os.environ.get("PAIRLAB_PROGRESS") == "text":
        from tqdm import tqdm
    else:
        from tqdm.auto import tqdm
    with tqdm(total=total, desc="runs finished", unit="run") as bar:

        def count(event: str, **payload) -> None:
            if event in ("run_finished", "run_reused"):
                bar.update()

        yield count


def total_rounds(prepared: dict, strategies, seeds, settings: LoopSettings) -> int:
    """Rounds :func:`sweep` will run (for a progress bar)."""
    return sum(
        len(config.schedule()) for _, config in _configs(prepared, strategies, seeds, settings)
    )


def scale(prepared: dict, settings: LoopSettings) -> pd.DataFrame:
    """Per task: this run's sizes beside the paper's (:data:`pairlab.data.paper.BUDGET`), labels
    per positive among them (the regime notebook 09 reads)."""
    rows = []
    for task, (pools, _) in prepared.items():
        config, train = settings.config(task, "random"), pools["train"]
        ref = paper.BUDGET.get(task, {})
        positives = paper.TABLE1.get(task, {}).get("train", {}).get("positives", np.nan)
        rows.append(
            {
                "task": task,
                "train items": f"{len(train.left_texts):,} x {len(train.right_texts):,}",
                "train pairs": train.n_pairs,
                "positives": train.n_positives,
                "n1": config.schedule()[0],
                "rounds": len(config.schedule()),
                "labels": config.budget,
                "paper labels": ref.get("labels", 0),
                "labels per positive": config.budget / train.n_positives,
                "paper labels per positive": ref.get("labels", 0) / positives,
                "neighbours m": config.candidate_m,
                "paper m": ref.get("neighbours"),
                "max seq length": config.max_seq_length,
                "epochs": config.epochs,
            }
        )
    return pd.DataFrame(rows).set_index("task")


def stratified_variants(results: dict, prepared: dict, settings: LoopSettings) -> list[Variant]:
    """The paper's two oracle baselines (section 5.4), as variants trained once on one batch:
    ``stratified_match``, uniform positives and negatives in the counts the uncertainty run of
    the same task and seed collected; ``stratified_all_positives``, every positive of the pool
    plus as many uniform negatives, or up to the active-learning budget if that is larger."""
    budget = {task: settings.config(task, "random").budget for task in prepared}

    def matched(task, seed):
        if (task, "uncertainty", seed) not in results:
            raise KeyError(f"stratified_match needs the 'uncertainty' run of {task} seed {seed}")
        found = int(results[(task, "uncertainty", seed)]["positives_found"])
        return {
            "strategy_params": {"n_positive": found, "n_negative": budget[task] - found},
            "batches": (budget[task],),
            "curve": False,
        }

    def all_positives(task, seed):
        positives = prepared[task][0]["train"].n_positives
        return {"batches": (max(2 * positives, budget[task]),), "curve": False}

    return [
        Variant("stratified_match", "stratified_match", matched),
        Variant("stratified_all_positives", "stratified_all_positives", all_positives),
    ]


COLLAPSED_SPREAD = 0.05  # logit std over the scored pairs below which a model ranks nothing


def transfer(
    prepared: dict,
    results: dict,
    sources,
    seeds,
    root,
    *,
    eval_config: EvalConfig,
    train_config: Callable,
    folder,
    model=None,
    max_seq_length: int = 128,
    n_boot: int = 1000,
) -> dict:
    """``{(task, source, seed): metrics}`` of ConcatBERT trained on the labels each source run
    collected (Table 6), on its own smaller test strata (``eval_config``); cached in ``folder``."""
    out = {}
    for task, (pools, _) in prepared.items():
        test = pools["test"]
        eval_set = pretrained_eval_set(
            test, eval_config, model=model, max_seq_length=max_seq_length
        )[0]
        for source, seed in itertools.product(sources, map(int, seeds)):
            if (task, source, seed) not in results:
                raise KeyError(f"no {source!r} run of {task} seed {seed} to transfer from")
            ids, labels = run_labels(Path(root) / task / results[(task, source, seed)]["folder"])
            start = time.perf_counter()
            trained, name = train_or_load(
                "concatbert",
                pools["train"],
                ids,
                train_config(task, seed),
                folder=folder,
                model=model,
            )
            scored = evaluate(eval_set, trained.scorer(test), n_boot=n_boot, seed=seed)
            seconds = time.perf_counter() - start
            spread = float(np.std(np.concatenate(list(scored["scores"].values()))))
            out[(task, source, seed)] = {
                "labels": int(len(ids)),
                "positives": int(labels.sum()),
                "model_id": name,
                "seconds": round(seconds, 1),
                "n_scored": int(sum(len(v) for v in eval_set.strata().values())),
                "score_std": spread,
                "collapsed": spread < COLLAPSED_SPREAD,
                **{k: scored[k] for k in ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")},
            }
            print(
                f"{task}/concatbert on {source} data, seed {seed}: AP {scored['ap']:.3f} "
                f"[{scored['ap_ci'][0]:.3f}, {scored['ap_ci'][1]:.3f}], score std {spread:.3f} "
                f"({seconds:.0f} s)" + ("; COLLAPSED" if spread < COLLAPSED_SPREAD else "")
            )
    return out
