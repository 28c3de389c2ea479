"""Notebook 09, when adaptivity pays: the budget experiment (its runs, :func:`budget_runs`, on a
pool of many labels per positive, :func:`~.sweeps.scale`), what it shares with the encoder
experiment (:mod:`.encoders`), and the metrics file (:func:`adaptivity_metrics`) and its tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..active.store import round_ids
from ..io import json_row, plain
from . import data_efficiency
from .budget import separation_budget
from .encoders import GAP
from .summaries import cell, nest
from .sweeps import Variant, prepare_active

__all__ = [
    "BUDGET_STRATEGIES",
    "load_experiment",
    "budget_runs",
    "separation",
    "recall_frame",
    "overlap_frame",
    "adaptivity_metrics",
    "budget_table",
    "encoder_summary",
]

EXPERIMENT_TASKS = {"budget": "wikiqa", "encoder": "qqp"}  # with dataset "all"
BUDGET_STRATEGIES = ("uncertainty", "static_retrieval", "adaptive_retrieval", "random_candidates")
# the columns of :func:`~.sweeps.scale` the metrics file keeps as its ``regime``
REGIME = ["positives", "labels", "rounds", "labels per positive", "paper labels per positive"]


def load_experiment(params: dict, experiment: str, *, show: bool = True):
    """``(prepared, settings)`` of the ``budget`` experiment (WikiQA with dataset ``"all"``; its
    own ``budget_n1``, ``budget_rounds``, ``budget_max_items``) or the ``encoder`` one (QQP)."""
    if experiment not in EXPERIMENT_TASKS:
        raise ValueError(
            f"experiment must be one of {sorted(EXPERIMENT_TASKS)}, got {experiment!r}"
        )
    dataset = EXPERIMENT_TASKS[experiment] if params["dataset"] == "all" else params["dataset"]
    own = {**params, "dataset": dataset}
    if experiment == "budget":
        own.update(n1=params["budget_n1"], rounds=params["budget_rounds"])
        if params.get("budget_max_items") is not None:
            own["max_items"] = params["budget_max_items"]
    return prepare_active(own, show=show)


def budget_runs(seeds, other_seeds) -> tuple[list, dict]:
    """``(strategies, seeds by label)`` for :func:`~.sweeps.sweep`: uncertainty sampling and
    static retrieval on ``seeds``, adaptive retrieval (right after uncertainty sampling, to take
    its models where they pick alike) and random candidates on ``other_seeds``."""
    order = ("uncertainty", "adaptive_retrieval", "static_retrieval", "random_candidates")
    strategies = [s if s in order[:2] else Variant(s, s, {"curve": True}) for s in order]
    return strategies, {s: list(seeds if s in GAP else other_seeds) for s in order}


def separation(curves: pd.DataFrame) -> pd.DataFrame:
    """Per task, for each seed both ran and their mean: the labels from which one strategy's 95%
    interval stays above the other's (NaN: never), each way, and the final gap."""
    a, b = GAP
    rows = []
    for task, frame in curves.groupby("task", sort=False):
        runs = {s: frame[frame["strategy"] == s] for s in (a, b)}
        seeds = sorted(set(runs[a]["seed"]) & set(runs[b]["seed"]))
        for seed in [*seeds, "mean"] if seeds else []:
            chosen = seeds if seed == "mean" else [seed]
            x, y = (
                runs[s][runs[s]["seed"].isin(chosen)]
                .groupby("labels")[["ap", "ap_lo", "ap_hi"]]
                .mean()
                for s in (a, b)
            )
            both = x.merge(y, left_index=True, right_index=True, suffixes=("_a", "_b"))
            labels = both.index.to_numpy()
            rows.append(
                {
                    "task": task,
                    "seed": seed,
                    "budgets": len(labels),
                    f"{a} above from": separation_budget(labels, both["ap_lo_a"], both["ap_hi_b"]),
                    f"{b} above from": separation_budget(labels, both["ap_lo_b"], both["ap_hi_a"]),
                    "final gap": float(both["ap_a"].iloc[-1] - both["ap_b"].iloc[-1]),
                }
            )
    return pd.DataFrame(rows)


def recall_frame(results: dict) -> pd.DataFrame:
    """Candidate recall per round of every run that searched candidates (NaN: no positive left)."""
    rows = [
        (task, label, seed, r["round"], r["labels"], r.get("candidate_recall"))
        for (task, label, seed), result in results.items()
        for r in result["records"]
        if r.get("candidates")
    ]
    columns = ["task", "strategy", "seed", "round", "labels", "candidate_recall"]
    return pd.DataFrame(rows, columns=columns).astype({"candidate_recall": float})


def overlap_frame(results: dict, root, a: str = GAP[0], b: str = GAP[1]) -> pd.DataFrame:
    """Per run of ``a`` (a label starting with ``a``) and round: the share of its labels so far
    that the matching run of ``b`` (``b`` for ``a`` in the label) had collected by then."""
    rows = []
    for (task, label, seed), result in results.items():
        other = results.get((task, label.replace(a, b, 1), seed))
        if not label.startswith(a) or other is None:
            continue
        ours, theirs = (round_ids(Path(root) / task / r["folder"]) for r in (result, other))
        mine, both = np.empty(0, np.int64), np.empty(0, np.int64)
        for i, (x, y) in enumerate(zip(ours, theirs), start=1):
            mine, both = np.union1d(mine, x), np.union1d(both, y)
            shared = len(np.intersect1d(mine, both, assume_unique=True))
            rows.append((task, label, seed, i, len(mine), shared / max(len(mine), 1)))
    return pd.DataFrame(rows, columns=["task", "strategy", "seed", "round", "labels", "overlap"])


def adaptivity_metrics(
    curves: pd.DataFrame,
    regime_frame: pd.DataFrame,
    efficiency_frame: pd.DataFrame,
    separation_frame: pd.DataFrame,
    zero: pd.DataFrame,
    table: pd.DataFrame,
    trend: pd.DataFrame,
    recall: list[pd.DataFrame],
    overlap: list[pd.DataFrame],
) -> dict:
    """Notebook 09's metrics file (its layout: :mod:`pairlab.metrics_files`)."""
    recall, overlap = pd.concat(recall, ignore_index=True), pd.concat(overlap, ignore_index=True)
    return plain(
        {
            "budget": {
                task: _budget_curves(frame) for task, frame in curves.groupby("task", sort=False)
            },
            "regime": {
                task: json_row(row[REGIME].to_dict()) for task, row in regime_frame.iterrows()
            },
            "efficiency": data_efficiency.record(efficiency_frame),
            "separation": nest(
                {
                    (row.pop("task"), str(row.pop("seed"))): json_row(row)
                    for row in separation_frame.to_dict("records")
                }
            ),
            "encoder": _encoder(zero, table),
            "encoder_trend": {
                str(labels): json_row(row.to_dict()) for labels, row in trend.iterrows()
            },
            "candidate_recall": {
                task: {
                    name: rows.groupby("round")["candidate_recall"].mean().tolist()
                    for name, rows in part.groupby("strategy", sort=False)
                }
                for task, part in recall.groupby("task", sort=False)
            },
            "overlap": _overlap(overlap),
        }
    )


def _overlap(frame: pd.DataFrame) -> dict:
    out: dict = {}
    for (task, label), rows in frame.groupby(["task", "strategy"], sort=False):
        per_seed = rows.pivot_table(index="seed", columns="round", values="overlap")
        out.setdefault(task, {})[label] = {
            "labels": rows.groupby("round")["labels"].mean().tolist(),
            "mean": per_seed.mean().tolist(),
            "seeds": per_seed.index.tolist(),
            "per_seed": per_seed.values.tolist(),
        }
    return out


def _budget_curves(frame: pd.DataFrame) -> dict:
    out = {}
    for strategy, rows in frame.groupby("strategy", sort=False):
        mean = rows.groupby("labels")[["ap", "ap_lo", "ap_hi", "positives_found"]].mean()
        per_seed = rows.pivot_table(index="seed", columns="labels", values="ap")
        out[strategy] = {
            "labels": mean.index.tolist(),
            "dev_ap": {
                "mean": mean["ap"].tolist(),
                "ci": mean[["ap_lo", "ap_hi"]].values.tolist(),
                "seeds": per_seed.index.tolist(),
                "per_seed": per_seed.values.tolist(),
            },
            "positive_share": (mean["positives_found"] / mean.index).tolist(),
        }
    return out


def _encoder(zero: pd.DataFrame, table: pd.DataFrame) -> dict:
    out = {}
    for n, z in zero.iterrows():
        rows = table[table.index.get_level_values("layers") == n].droplevel("layers")
        labels = rows.index.tolist()
        entry = {
            "zero_shot_ap": z["zero-shot AP"],
            "zero_shot_ap_ci": [z["AP lo"], z["AP hi"]],
            "static_precision": z["static precision"],
            "static_labels": int(z["static labels"]),
        }
        for s in GAP:  # a metrics file's key -> the table's column
            ap = {"mean": f"{s} AP", "ci": f"{s} CI", "seeds": "seeds", "per_seed": f"{s} per seed"}
            entry[s] = {"labels": labels, "test_ap": {k: rows[c].tolist() for k, c in ap.items()}}
        gap = {
            "mean": "gap",
            "std": "gap std",
            "seeds": "seeds",
            "per_seed": "gap per seed",
            "judged": "judged",
        }
        entry["gap"] = {"labels": labels, **{k: rows[c].tolist() for k, c in gap.items()}}
        out[str(n)] = entry
    return out


def budget_table(metrics: dict) -> pd.DataFrame:
    """Per task and strategy of the budget experiment: final dev AP, the labels' positive share."""
    rows = []
    for task, curves in metrics.get("budget", {}).items():
        for name, c in curves.items():
            dev = c["dev_ap"]
            rows.append(
                {
                    "task": task,
                    "strategy": name,
                    "seeds": len(dev["seeds"]),
                    "labels": c["labels"][-1],
                    "final dev AP": dev["mean"][-1],
                    "95% interval": "-".join(map(cell, dev["ci"][-1])),
                    "per seed": ", ".join(cell(row[-1]) for row in dev["per_seed"]),
                    "positive share, round 1": c["positive_share"][0],
                    "positive share, end": c["positive_share"][-1],
                }
            )
    return pd.DataFrame(rows)


def encoder_summary(metrics: dict) -> pd.DataFrame:
    """Per encoder depth and budget: zero-shot AP, each strategy's test AP and the gap per seed."""
    rows = []
    # the whole model first (a metrics file sorts its keys)
    for n, e in sorted(metrics.get("encoder", {}).items(), key=lambda kv: -int(kv[0])):
        gap = e["gap"]
        for k, labels in enumerate(gap["labels"]):
            rows.append(
                {
                    "layers": int(n),
                    "zero-shot AP": e["zero_shot_ap"],
                    "95% interval": "-".join(map(cell, e["zero_shot_ap_ci"])),
                    "static precision": e["static_precision"],
                    "labels": labels,
                    f"{GAP[0]} AP": e[GAP[0]]["test_ap"]["mean"][k],
                    f"{GAP[1]} AP": e[GAP[1]]["test_ap"]["mean"][k],
                    "gap": gap["mean"][k],
                    "gap per seed": ", ".join(f"{d:+.3f}" for d in gap["per_seed"][k]),
                }
            )
    return pd.DataFrame(rows)
