"""The data-efficiency factor: how many times fewer labels uncertainty sampling needs than static
retrieval to reach static retrieval's final dev AP (the paper's 14x on QQP, appendix B.1), per
task and seed from the budget curves, over seeds, and as the metrics files record it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.paper import A, B
from ..io import json_row
from .budget import labels_to_reach

__all__ = ["factors", "summary", "record", "table"]


def factors(curves: pd.DataFrame) -> pd.DataFrame:
    """Per task and seed: the labels uncertainty sampling (A) and static retrieval (B) need to
    first reach B's full-budget dev AP, and the factor, their ratio. ``bound``: exact, a lower
    bound (A's first point already passed it), both at the first point, or not reached."""
    rows = []
    for (task, seed), frame in curves.groupby(["task", "seed"], sort=False):
        mine = frame[frame["strategy"] == A].sort_values("labels")
        ref = frame[frame["strategy"] == B].sort_values("labels")
        if mine.empty or ref.empty:
            continue
        target = float(ref["ap"].iloc[-1])
        ref_needed = labels_to_reach(ref["labels"], ref["ap"], target)
        needed = labels_to_reach(mine["labels"], mine["ap"], target)
        bound = "exact"
        if np.isnan(needed):
            bound = "not reached"
        elif needed <= mine["labels"].iloc[0]:
            both = ref_needed <= ref["labels"].iloc[0]
            bound = "both at the first point" if both else "lower bound"
        rows.append(
            {
                "task": task,
                "seed": seed,
                f"{B} labels": int(ref["labels"].iloc[-1]),
                f"{B} dev AP": target,
                f"{B} labels needed": ref_needed,
                f"{A} final dev AP": float(mine["ap"].iloc[-1]),
                "labels needed": needed,
                "factor": float(ref_needed / needed),
                "bound": bound,
            }
        )
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per task of :func:`factors`: the factor's mean and std (ddof 0) over the seeds with one."""
    rows = []
    for task, eff in frame.groupby("task") if len(frame) else ():
        finite = eff["factor"][np.isfinite(eff["factor"])]
        spread = (float(finite.mean()), float(finite.std(ddof=0))) if len(finite) else (None, None)
        rows.append((task, *spread, int(len(finite)), int(len(eff))))
    columns = ["task", "factor_mean", "factor_std", "seeds_defined", "seeds"]
    return pd.DataFrame(rows, columns=columns).set_index("task")


def record(frame: pd.DataFrame) -> dict:
    """The metrics files' ``efficiency``: ``{task: {"per_seed": [rows], **summary row}}``."""
    if frame.empty:
        return {}
    means = summary(frame).to_dict("index")
    return {
        task: {
            "per_seed": [json_row(r) for r in rows.drop(columns="task").to_dict("records")],
            **means[task],
        }
        for task, rows in frame.groupby("task", sort=False)
    }


def table(metrics: dict) -> pd.DataFrame:
    """A metrics file's factors per task and seed as a table."""
    rows = [
        {
            "task": task,
            "seed": row["seed"],
            f"{B} dev AP": row.get(f"{B}_dev_ap"),
            f"{B} labels needed": row.get(f"{B}_labels_needed"),
            f"{A} labels needed": row.get("labels_needed"),
            "factor": row["factor"],
            "bound": row["bound"],
        }
        for task, eff in metrics.get("efficiency", {}).items()
        for row in eff["per_seed"]
    ]
    return pd.DataFrame(rows)
