"""Sweeps of active-learning runs (tasks x strategies x seeds) and their summaries: the pieces
notebooks 03-05 call."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .active import ActiveConfig, ActiveRun, run_folder
from .data import Task
from .evaluation import EvalConfig, pretrained_eval_set

__all__ = ["prepare", "sweep", "summarise", "curves", "stage_times", "table3", "table4"]

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
        own = {k: (v[task] if isinstance(v, dict) and task in v else v) for k, v in settings.items()}
        for strategy in strategies:
            for seed in seeds:
                config = ActiveConfig(task=task, strategy=strategy, seed=int(seed), **own)
                folder = run_folder(root, config, pools, eval_sets)
                results[(task, strategy, int(seed))] = ActiveRun(
                    config, pools, eval_sets, folder, callbacks=callbacks).run()
    return results


def summarise(results: dict) -> dict:
    """The metrics file's ``{task: {strategy: {labels, positives_found, ap, p_at_r20}}}``: test
    metrics as mean, std (over seeds, ddof 0: the paper's three runs) and per seed."""
    out: dict = {}
    for (task, strategy, seed), result in sorted(results.items()):
        entry = out.setdefault(task, {}).setdefault(strategy, {"seeds": [], "labels": [],
                                                                "positives_found": [], "ap": [],
                                                                "p_at_r20": []})
        entry["seeds"].append(seed)
        entry["labels"].append(result["labels"])
        entry["positives_found"].append(result["positives_found"])
        entry["ap"].append(result["test"]["ap"])
        entry["p_at_r20"].append(result["test"]["p_at_r20"])
    for task in out.values():
        for name, entry in task.items():
            task[name] = {"seeds": entry["seeds"], "labels": int(np.mean(entry["labels"])),
                          "positives_found": _spread(entry["positives_found"]),
                          "ap": _spread(entry["ap"]), "p_at_r20": _spread(entry["p_at_r20"])}
    return out


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
    stages = [s for s in ("embed", "search", "select", "train", "evaluate") if s in frame]
    return frame.groupby(["task", "strategy", "round"])[["labels", *stages]].mean().round(1)


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


def table4(summary: dict, paper: dict) -> pd.DataFrame:
    """Positives found per strategy (mean over seeds) with the same budget, beside the paper's
    Table 4."""
    rows = []
    for task, strategies in summary.items():
        for name, entry in strategies.items():
            rows.append({"task": task, "strategy": name, "labels": entry["labels"],
                         "positives found": f"{entry['positives_found']['mean']:,.0f}",
                         "share": f"{entry['positives_found']['mean'] / entry['labels']:.1%}",
                         "paper": paper.get(task, {}).get(name, "-")})
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def _pm(spread: dict) -> str:
    return f"{100 * spread['mean']:.1f} ± {100 * spread['std']:.1f}"


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}"
