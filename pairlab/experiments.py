"""Sweeps of active-learning runs (tasks x strategies x seeds) and their summaries: the pieces
notebooks 03-05 call."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .active import STAGES, ActiveConfig, ActiveRun, run_folder
from .data import Task
from .evaluation import EvalConfig, pretrained_eval_set

__all__ = ["prepare", "sweep", "summarise", "curves", "stage_times", "calibration", "scale",
           "table3", "table4", "total_rounds"]

MAIN_STRATEGIES = ("random", "static_retrieval", "adaptive_retrieval", "uncertainty")


def prepare(task: Task, eval_config: EvalConfig, *, model=None, max_seq_length: int = 128):
    """The pools (train, dev, test) and the dev and test evaluation strata of ``task``, drawn
    from pretrained embeddings (cached): the same strata for every run of the sweep."""
    pools = {split: task[split] for split in ("train", "dev", "test")}
    eval_sets = {split: pretrained_eval_set(pools[split], eval_config, model=model,
                                            max_seq_length=max_seq_length)[0]
                 for split in ("dev", "test")}
    return pools, eval_sets


def sweep(prepared: dict, strategies, seeds, settings: dict, root, *, callbacks=()) -> dict:
    """Run every (task, strategy, seed); ``prepared`` maps task -> :func:`prepare`'s output and
    ``settings`` holds the other :class:`ActiveConfig` fields (a per-task dict is allowed for
    any of them, e.g. ``{"rounds": {"qqp": 5, "wikiqa": 4}}``). Finished runs are read back.
    Returns ``{(task, strategy, seed): result}``."""
    results = {}
    for task, (pools, eval_sets) in prepared.items():
        own = _for_task(settings, task)
        for strategy in strategies:
            for seed in seeds:
                config = ActiveConfig(task=task, strategy=strategy, seed=int(seed), **own)
                folder = run_folder(root, config, pools, eval_sets)
                results[(task, strategy, int(seed))] = ActiveRun(
                    config, pools, eval_sets, folder, callbacks=callbacks).run()
    return results


def _for_task(settings: dict, task: str) -> dict:
    """``settings`` with any per-task dict (``{"qqp": 5, "wikiqa": 4}``) resolved for ``task``."""
    return {k: (v[task] if isinstance(v, dict) and task in v else v) for k, v in settings.items()}


def total_rounds(prepared: dict, strategies, seeds, settings: dict) -> int:
    """Rounds the sweep will run (for a progress bar)."""
    total = 0
    for task in prepared:
        own = _for_task(settings, task)
        total += len(ActiveConfig(task=task, strategy="random", **own).schedule())
    return total * len(list(strategies)) * len(list(seeds))


def summarise(results: dict) -> dict:
    """The metrics file's ``{task: {strategy: {labels, positives_found, ap, p_at_r20, ...}}}``:
    test metrics as mean, std (over seeds, ddof 0: the paper's three runs) and per seed, the
    mean dev AP after each round, and the mean seconds per stage of a run."""
    grouped: dict = {}
    for (task, strategy, seed), result in results.items():  # the sweep's order
        grouped.setdefault(task, {}).setdefault(strategy, []).append((seed, result))
    return {task: {name: _summary(runs) for name, runs in strategies.items()}
            for task, strategies in grouped.items()}


def _summary(runs) -> dict:
    seeds = [seed for seed, _ in runs]
    results = [result for _, result in runs]
    dev = pd.DataFrame([{"labels": r["labels"], "ap": r["dev"]["ap"]}
                        for result in results for r in result["records"] if r.get("dev")])
    seconds = pd.DataFrame([{stage: sum(r["seconds"].get(stage, 0.0) for r in result["records"])
                             for stage in STAGES}
                            for result in results])
    return {"seeds": seeds, "labels": int(np.mean([r["labels"] for r in results])),
            "positives_found": _spread([r["positives_found"] for r in results]),
            "ap": _spread([r["test"]["ap"] for r in results]),
            "p_at_r20": _spread([r["test"]["p_at_r20"] for r in results]),
            "dev_ap_per_round": dev.groupby("labels")["ap"].mean().reset_index().to_dict("records"),
            "seconds_per_run": seconds.mean().round(1).to_dict(),
            "runs": [r["folder"] for r in results if "folder" in r]}


def _spread(values) -> dict:
    values = [float(v) for v in values]
    return {"mean": float(np.mean(values)), "std": float(np.std(values)), "per_seed": values}


def curves(results: dict) -> pd.DataFrame:
    """One row per evaluated round: task, strategy, seed, round, labels, positives found and
    dev AP / P@R20 with their intervals."""
    rows = []
    for (task, strategy, seed), result in results.items():
        for r in result["records"]:
            if r.get("dev") is None:
                continue
            dev = r["dev"]
            rows.append({"task": task, "strategy": strategy, "seed": seed, "round": r["round"],
                         "labels": r["labels"], "positives_found": r["positives_found"],
                         "ap": dev["ap"], "ap_lo": dev["ap_ci"][0], "ap_hi": dev["ap_ci"][1],
                         "p_at_r20": dev["p_at_r20"]})
    return pd.DataFrame(rows)


def stage_times(results: dict) -> pd.DataFrame:
    """Mean seconds per stage and round, by task and strategy."""
    rows = [{"task": task, "strategy": strategy, "seed": seed, "round": r["round"],
             "labels": r["labels"], **r["seconds"]}
            for (task, strategy, seed), result in results.items() for r in result["records"]]
    frame = pd.DataFrame(rows).fillna(0.0)
    stages = [s for s in STAGES if s in frame]
    return frame.groupby(["task", "strategy", "round"])[["labels", *stages]].mean().round(1)


def calibration(results: dict) -> pd.DataFrame:
    """Per round of each run whose batch was chosen by a trained model: the mean predicted p of
    the batch and the share of it that was positive (calibrated: the two agree)."""
    rows = [{"task": task, "strategy": strategy, "seed": seed, "round": r["round"],
             "batch": r["batch"], "mean p": r["calibration"]["mean_p"],
             "positive share": r["calibration"]["positive_share"]}
            for (task, strategy, seed), result in results.items() for r in result["records"]
            if r.get("calibration")]
    if not rows:
        return pd.DataFrame(columns=["task", "strategy", "round", "batch", "mean p", "positive share"])
    frame = pd.DataFrame(rows)
    return frame.groupby(["task", "strategy", "round"])[["batch", "mean p", "positive share"]].mean().round(3)


def scale(prepared: dict, settings: dict, budget: dict) -> pd.DataFrame:
    """This run's sizes beside the paper's: training items and pairs, positives, labels,
    rounds and neighbours per item."""
    rows = []
    for task, (pools, _) in prepared.items():
        own = _for_task(settings, task)
        config = ActiveConfig(task=task, strategy="random", **own)
        train = pools["train"]
        ref = budget.get(task, {})
        rows.append({"task": task, "train items": f"{len(train.left_texts):,} x {len(train.right_texts):,}",
                     "train pairs": f"{train.n_pairs:,}", "positives": f"{train.n_positives:,}",
                     "n1": config.schedule()[0], "rounds": len(config.schedule()),
                     "labels": f"{config.budget:,}", "paper labels": f"{ref.get('labels', 0):,}",
                     "neighbours m": config.neighbours, "paper m": ref.get("neighbours"),
                     "max seq length": config.max_seq_length, "epochs": config.epochs})
    return pd.DataFrame(rows).set_index("task")


def table3(summary: dict, paper: dict) -> pd.DataFrame:
    """Test P@R20 and AP per strategy, mean +- std over seeds, beside the paper's Table 3."""
    rows = []
    for task, strategies in summary.items():
        for name, entry in strategies.items():
            ref = paper.get(task, {}).get(name, {})
            rows.append({"task": task, "strategy": name, "labels": entry["labels"],
                         "P@R20": _pm(entry["p_at_r20"]), "P@R20 (paper)": _pct(ref.get("p_at_r20")),
                         "AP": _pm(entry["ap"]), "AP (paper)": _pct(ref.get("ap"))})
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def table4(summary: dict, paper: dict, budget: dict) -> pd.DataFrame:
    """Positives found per strategy (mean over seeds) with the same budget, beside the paper's
    Table 4 (positives among its 232,100 QQP / 16,640 WikiQA labels)."""
    rows = []
    for task, strategies in summary.items():
        for name, entry in strategies.items():
            ref = paper.get(task, {}).get(name)
            rows.append({"task": task, "strategy": name, "labels": entry["labels"],
                         "positives found": f"{entry['positives_found']['mean']:,.1f}",
                         "share": f"{entry['positives_found']['mean'] / entry['labels']:.1%}",
                         "paper": "-" if ref is None else f"{ref:,}",
                         "paper share": "-" if ref is None else f"{ref / budget[task]['labels']:.1%}"})
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def _pm(spread: dict) -> str:
    return f"{100 * spread['mean']:.1f} ± {100 * spread['std']:.1f}"


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}"
