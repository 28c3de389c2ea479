"""The data-efficiency factor, in one place: how many times fewer labels uncertainty sampling
needs than static retrieval to reach static retrieval's final dev AP (the paper's 14x on QQP,
appendix B.1). Computed per task and seed from the budget curves (:func:`factors`), summarised
over seeds (:func:`summary`), written to the metrics files (:func:`record`), shown as a table
(:func:`table`; the line beside the paper's is the ``efficiency`` macro of
``pairlab/templates/findings.md.j2``); whether the paper's claim held is
:func:`.findings.data_efficiency`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.paper import A, B
from ..io import json_row
from .budget import labels_to_reach

__all__ = ["factor", "factors", "summary", "record", "table"]


def factor(labels, values, reference_labels: float, reference_value: float) -> float:
    """``reference_labels`` over the labels the curve (``labels``, ``values``) needs to reach
    ``reference_value``: how many times fewer labels it needs than the reference (``nan`` if it
    never reaches it)."""
    if not reference_labels > 0:
        raise ValueError(f"reference_labels must be positive, got {reference_labels!r}")
    return float(reference_labels / labels_to_reach(labels, values, reference_value))


def factors(curves: pd.DataFrame, *, strategy: str = A, reference: str = B) -> pd.DataFrame:
    """Per task and seed: the labels ``strategy`` needs to reach ``reference``'s full-budget dev
    AP (same seed), the labels ``reference`` itself needed to first reach it (its full budget
    when its curve rises, as in the paper; fewer when it peaked earlier), and the factor, their
    ratio. ``bound`` says whether the factor is exact, a lower bound (``strategy``'s first point
    already passed the target), not measurable (both passed it at their first point) or
    undefined (never passed it)."""
    rows = []
    for (task, seed), frame in curves.groupby(["task", "seed"], sort=False):
        mine = frame[frame["strategy"] == strategy].sort_values("labels")
        ref = frame[frame["strategy"] == reference].sort_values("labels")
        if mine.empty or ref.empty:
            continue
        target = float(ref["ap"].iloc[-1])
        ref_needed = labels_to_reach(ref["labels"], ref["ap"], target)
        needed = labels_to_reach(mine["labels"], mine["ap"], target)
        first = needed <= mine["labels"].iloc[0]
        bound = (
            "not reached"
            if np.isnan(needed)
            else "both at the first point"
            if first and ref_needed <= ref["labels"].iloc[0]
            else "lower bound"
            if first
            else "exact"
        )
        rows.append(
            {
                "task": task,
                "seed": seed,
                f"{reference} labels": int(ref["labels"].iloc[-1]),
                f"{reference} dev AP": target,
                f"{reference} labels needed": ref_needed,
                f"{strategy} final dev AP": float(mine["ap"].iloc[-1]),
                "labels needed": needed,
                "factor": factor(mine["labels"], mine["ap"], ref_needed, target),
                "bound": bound,
            }
        )
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per task: the factor's mean and std (ddof 0) over the seeds where it is defined, how many
    seeds those are and how many there were (:func:`factors`' rows)."""
    rows = []
    for task, eff in frame.groupby("task") if len(frame) else ():
        finite = eff["factor"][np.isfinite(eff["factor"])]
        rows.append(
            {
                "task": task,
                "factor_mean": float(finite.mean()) if len(finite) else None,
                "factor_std": float(finite.std(ddof=0)) if len(finite) else None,
                "seeds_defined": int(len(finite)),
                "seeds": int(len(eff)),
            }
        )
    columns = ["task", "factor_mean", "factor_std", "seeds_defined", "seeds"]
    return pd.DataFrame(rows, columns=columns).set_index("task")


def record(frame: pd.DataFrame) -> dict:
    """The metrics files' ``efficiency`` entry: ``{task: {"per_seed": [rows], "factor_mean",
    "factor_std", "seeds_defined", "seeds"}}``."""
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
