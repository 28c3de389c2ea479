"""Sweeps of active-learning runs (tasks x strategies x seeds): what notebooks 03-05 prepare
and run, from their parameters to the results of every run (read back when finished)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..active.config import ActiveConfig, LoopSettings
from ..active.loop import ActiveRun
from ..active.store import run_folder, run_labels
from ..data.loaders import Task
from ..evaluation.strata import EvalConfig, evaluate, pretrained_eval_set

__all__ = [
    "MAIN_STRATEGIES",
    "BACKENDS",
    "Run",
    "RunProgress",
    "Variant",
    "pools_and_strata",
    "zero_shot",
    "with_zero_shot",
    "ZERO_SHOT",
    "prepare_active",
    "scale",
    "sweep",
    "sweep_groups",
    "total_rounds",
    "group_rounds",
    "stratified_variants",
    "transfer",
    "COLLAPSED_SPREAD",
]

MAIN_STRATEGIES = ("random", "static_retrieval", "adaptive_retrieval", "uncertainty")


def pools_and_strata(task: Task, eval_config: EvalConfig, *, model=None, max_seq_length: int = 128):
    """The pools (train, dev, test) and the dev and test evaluation strata of ``task``, drawn
    from pretrained embeddings (cached): the same strata for every run of the sweep."""
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
    """The pretrained encoder's cosine with no labels at all, per task: its test all-pairs
    metrics on the very strata every run is measured on, as a summary entry (:func:`summarise`'s
    layout, no seeds and 0 labels; ``ci``: the 95% bootstrap interval). What labelling must beat."""
    from ..evaluation import CosineScorer, evaluate
    from ..models.embed import embed_pool

    out = {}
    for task, (pools, eval_sets) in prepared.items():
        test = pools["test"]
        left, right = embed_pool(test, model, max_seq_length=max_seq_length, show_progress=False)
        result = evaluate(
            eval_sets["test"], CosineScorer(test.space, left, right), n_boot=n_boot, seed=seed
        )
        out[task] = {
            "seeds": [],
            "labels": 0,
            "positives_found": {"mean": 0.0, "std": 0.0, "per_seed": []},
            **{
                key: {
                    "mean": float(result[key]),
                    "std": 0.0,
                    "per_seed": [],
                    "ci": [float(v) for v in result[f"{key}_ci"]],
                }
                for key in ("ap", "p_at_r20")
            },
            "dev_ap_per_round": [],
            "rounds_per_seed": [],
            "seconds_per_run": {},
            "runs": [],
        }
    return out


def with_zero_shot(summary: dict, zero: dict) -> dict:
    """``summary`` with each task's :func:`zero_shot` entry first, under :data:`ZERO_SHOT`."""
    return {
        task: ({ZERO_SHOT: zero[task], **strategies} if task in zero else strategies)
        for task, strategies in summary.items()
    }


def prepare_active(params: dict, *, show: bool = True):
    """Everything notebooks 03-05 share before their sweeps, from their parameters: each task's
    pools and evaluation strata (:func:`pools_and_strata`) and the loop settings (:meth:`LoopSettings.from_params`).
    ``show`` displays this run's sizes beside the paper's (:func:`scale`).
    Returns ``(prepared, settings)``."""
    from ..data import loaders, paper

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

        display(scale(prepared, settings, paper.BUDGET))
    return prepared, settings


@dataclass(frozen=True)
class Variant:
    """A strategy run with other settings, under its own name in the results and tables:
    ``overrides`` are :class:`ActiveConfig` fields, or a callable ``(task, seed) -> fields``
    (e.g. stratified sampling matching each uncertainty run's counts)."""

    label: str
    strategy: str
    overrides: dict | Callable[[str, int], dict] = field(default_factory=dict)

    def fields(self, task: str, seed: int) -> dict:
        return dict(self.overrides(task, seed) if callable(self.overrides) else self.overrides)


def _variant(entry) -> Variant:
    return entry if isinstance(entry, Variant) else Variant(str(entry), str(entry))


BACKENDS = ("local", "ray")


class Run(NamedTuple):
    """One run of a sweep: its key in the results, its config and its folder."""

    key: tuple  # (task, label, seed)
    config: ActiveConfig
    folder: Path

    @property
    def task(self) -> str:
        return self.config.task


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
    """Run every (task, strategy, seed); ``prepared`` maps task -> :func:`pools_and_strata`'s output and
    ``settings`` holds the other :class:`ActiveConfig` fields (a per-task dict is allowed for
    any of them, e.g. ``{"rounds": {"qqp": 5, "wikiqa": 4}}``). A strategy is a name or a
    :class:`Variant`; ``seeds`` are every strategy's, or a dict of each one's own (by label).
    Finished runs are read back; ``learner(config)`` replaces CosineBERT (tests).

    ``backend="local"`` runs them one after another in this process; ``"ray"`` makes each run a
    Ray task of ``cpus_per_run`` CPUs and ``gpus_per_run`` GPUs on the cluster at ``address``
    (None: a local Ray instance; :mod:`.distributed`), with the same run folders and results.
    ``archive`` (a folder, local backend): each run's small record is kept there after every
    round and restored from there on a machine without the run folder (:mod:`pairlab.active.archive`).
    A progress bar counts the finished runs. Returns ``{(task, label, seed): result}``."""
    return _execute(
        _runs(prepared, strategies, seeds, settings, root),
        prepared,
        callbacks,
        learner or sharing(settings),
        backend=backend,
        address=address,
        cpus_per_run=cpus_per_run,
        gpus_per_run=gpus_per_run,
        archive=_archives(root, archive),
    )


def sweep_groups(prepared: dict, groups, settings: LoopSettings, root, **options) -> dict:
    """:func:`sweep` over ``groups`` of ``(strategy, seeds)``, each strategy with its own seeds,
    in the order given (on Ray, all at once)."""
    return sweep(prepared, [s for s, _ in groups], _by_label(groups), settings, root, **options)


@dataclass(frozen=True)
class SharedRounds:
    """The learner of a run (:class:`CosineBERTLearner`) sharing every round's model through the
    cache (``share_models: all``): a run whose labels up to a round are another's (same seed,
    same training) loads that round's model instead of training it."""

    def __call__(self, config: ActiveConfig):
        from ..active.learner import CosineBERTLearner

        return CosineBERTLearner(config, shared_rounds=range(1, len(config.schedule()) + 1))


def sharing(settings: LoopSettings) -> Callable | None:
    """The learner factory ``settings.share_models`` asks for: None (the default learner,
    sharing the seed round) or :class:`SharedRounds`."""
    return SharedRounds() if settings.share_models == "all" else None


def _runs(prepared: dict, strategies, seeds, settings: LoopSettings, root) -> list[Run]:
    """The sweep's runs, task by task, strategy by strategy, seed by seed."""
    runs = []
    for task, (pools, eval_sets) in prepared.items():
        for entry in map(_variant, strategies):
            for seed in _seeds(seeds, entry):
                config = settings.config(
                    task, entry.strategy, seed, **entry.fields(task, int(seed))
                )
                runs.append(
                    Run(
                        (task, entry.label, int(seed)),
                        config,
                        run_folder(root, config, pools, eval_sets),
                    )
                )
    return runs


def _by_label(groups) -> dict:
    """``groups`` of ``(strategy, seeds)`` as each strategy's seeds by its label."""
    return {_variant(strategy).label: list(seeds) for strategy, seeds in groups}


def _seeds(seeds, entry: Variant) -> list:
    """The seeds of ``entry``: ``seeds``, or its own where ``seeds`` is a dict by label."""
    return seeds[entry.label] if isinstance(seeds, dict) else seeds


def _archives(root, archive) -> Callable[[Path], Path] | None:
    """Where each run folder under ``root`` keeps its archive under ``archive`` (None: none)."""
    if archive is None:
        return None
    return lambda folder: Path(archive) / Path(folder).relative_to(root)


def _execute(
    runs: list[Run],
    prepared: dict,
    callbacks,
    learner,
    *,
    backend: str,
    address: str | None,
    archive=None,
    **resources,
) -> dict:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "local" and address is not None:
        raise ValueError(f"address {address!r} is for backend='ray'; the local backend has none")
    if backend == "ray" and archive is not None:
        raise ValueError("run archives are kept by the local backend only: set archive=None on Ray")
    with RunProgress(len(runs)) as progress:
        callbacks = [*callbacks, progress]
        if backend == "ray":
            from .distributed import run_on_ray

            return run_on_ray(
                runs, prepared, callbacks=callbacks, learner=learner, address=address, **resources
            )
        return {
            run.key: ActiveRun(
                run.config,
                *prepared[run.task],
                run.folder,
                callbacks=callbacks,
                learner=learner(run.config) if learner else None,
                archive=archive(run.folder) if archive else None,
            ).run()
            for run in runs
        }


class RunProgress:
    """A callback counting finished runs (computed or read back) on a tqdm bar: a widget in
    JupyterLab, text on a terminal, and text in any kernel when ``$PAIRLAB_PROGRESS`` is
    ``text`` (the runner sets it, so a papermill run shows it)."""

    def __init__(self, total: int):
        if os.environ.get("PAIRLAB_PROGRESS") == "text":
            from tqdm import tqdm
        else:
            from tqdm.auto import tqdm
        self.bar = tqdm(total=total, desc="runs finished", unit="run")

    def __call__(self, event: str, **payload) -> None:
        if event in ("run_finished", "run_reused"):
            self.bar.update()

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc) -> None:
        self.bar.close()


def group_rounds(prepared: dict, groups, settings: LoopSettings) -> int:
    """Rounds :func:`sweep_groups` will run (for a progress bar)."""
    return total_rounds(prepared, [s for s, _ in groups], _by_label(groups), settings)


def total_rounds(prepared: dict, strategies, seeds, settings: LoopSettings) -> int:
    """Rounds the sweep will run (for a progress bar)."""
    total = 0
    for task in prepared:
        for entry in map(_variant, strategies):
            for seed in _seeds(seeds, entry):
                config = settings.config(
                    task, entry.strategy, seed, **entry.fields(task, int(seed))
                )
                total += len(config.schedule())
    return total


def scale(prepared: dict, settings: LoopSettings, budget: dict) -> pd.DataFrame:
    """This run's sizes beside the paper's: training items and pairs, positives, labels,
    rounds and neighbours per item."""
    rows = []
    for task, (pools, _) in prepared.items():
        config = settings.config(task, "random")
        train = pools["train"]
        ref = budget.get(task, {})
        rows.append(
            {
                "task": task,
                "train items": f"{len(train.left_texts):,} x {len(train.right_texts):,}",
                "train pairs": f"{train.n_pairs:,}",
                "positives": f"{train.n_positives:,}",
                "n1": config.schedule()[0],
                "rounds": len(config.schedule()),
                "labels": f"{config.budget:,}",
                "paper labels": f"{ref.get('labels', 0):,}",
                "neighbours m": config.candidate_m,
                "paper m": ref.get("neighbours"),
                "max seq length": config.max_seq_length,
                "epochs": config.epochs,
            }
        )
    return pd.DataFrame(rows).set_index("task")


def stratified_variants(
    results: dict, prepared: dict, settings: LoopSettings, *, match: str = "uncertainty"
) -> list[Variant]:
    """The paper's two oracle baselines (section 5.4), as variants trained once on one batch:

    - ``stratified_match``: uniform positives and negatives in the counts the ``match`` run of
      the same task and seed collected (its positives; the rest of its budget negative);
    - ``stratified_all_positives``: every positive of the training pool plus uniform negatives,
      as many as the positives or up to the active-learning budget, whichever is larger (QQP:
      a slightly larger set than the budget; WikiQA: the budget).
    """

    def budget(task):
        return settings.config(task, "random").budget

    def matched(task, seed):
        key = (task, match, seed)
        if key not in results:
            raise KeyError(f"stratified_match needs the {match!r} run of {task} seed {seed}")
        found = int(results[key]["positives_found"])
        return {
            "strategy_params": {"n_positive": found, "n_negative": budget(task) - found},
            "batches": (budget(task),),
            "curve": False,
        }

    def all_positives(task, seed):
        positives = prepared[task][0]["train"].n_positives
        return {"batches": (max(2 * positives, budget(task)),), "curve": False}

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
    kind: str = "concatbert",
    eval_config: EvalConfig,
    train_config: Callable,
    folder,
    model=None,
    max_seq_length: int = 128,
    n_boot: int = 1000,
    log=print,
) -> dict:
    """Train another model (ConcatBERT) on the labels each source run collected and measure it on
    all test pairs (the paper's Table 6). ``train_config(task, seed)`` gives its
    :class:`TrainConfig`; the test strata are drawn once per task with ``eval_config`` (a
    cross-encoder scores every pair, so they are smaller than CosineBERT's). Trained models are
    cached under ``folder``. Returns ``{(task, source, seed): metrics}``."""
    from .baselines import train_or_load

    out = {}
    for task, (pools, _) in prepared.items():
        test = pools["test"]
        eval_set = pretrained_eval_set(
            test, eval_config, model=model, max_seq_length=max_seq_length
        )[0]
        for source in sources:
            for seed in seeds:
                key = (task, source, int(seed))
                if key not in results:
                    raise KeyError(f"no {source!r} run of {task} seed {seed} to transfer from")
                ids, labels = run_labels(Path(root) / task / results[key]["folder"])
                start = time.perf_counter()
                trained, name = train_or_load(
                    kind,
                    pools["train"],
                    ids,
                    train_config(task, int(seed)),
                    folder=folder,
                    model=model,
                )
                scored = evaluate(eval_set, trained.scorer(test), n_boot=n_boot, seed=int(seed))
                seconds = time.perf_counter() - start
                spread = float(np.std(np.concatenate(list(scored["scores"].values()))))
                out[key] = {
                    "labels": int(len(ids)),
                    "positives": int(labels.sum()),
                    "model_id": name,
                    "seconds": round(seconds, 1),
                    "n_scored": int(sum(len(v) for v in eval_set.strata().values())),
                    "score_std": spread,
                    "collapsed": spread < COLLAPSED_SPREAD,
                    **{k: scored[k] for k in ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")},
                }
                log(
                    f"{task}/{kind} on {source} data, seed {seed}: AP {scored['ap']:.3f} "
                    f"[{scored['ap_ci'][0]:.3f}, {scored['ap_ci'][1]:.3f}], score std {spread:.3f} "
                    f"({seconds:.0f} s)"
                    + (
                        "; COLLAPSED: it gives every pair about the same "
                        "score, so its AP is the base rate"
                        if out[key]["collapsed"]
                        else ""
                    )
                )
    return out
