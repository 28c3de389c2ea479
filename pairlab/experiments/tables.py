"""The tables and frames notebooks 03-05 show: the paper's Tables 3-6 beside ours, curves per
round, the data-efficiency factor, the noise between equally good runs and the cost of labels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..active.loop import STAGES
from ..data.paper import A, B
from . import budget as budget_views
from .summaries import spread
from .sweeps import ZERO_SHOT

__all__ = [
    "curves",
    "stage_times",
    "calibration",
    "table3",
    "table4",
    "table5",
    "table6",
    "seed_set_rounds",
    "noise",
    "costs",
]


def curves(results: dict) -> pd.DataFrame:
    """One row per evaluated round: task, strategy, seed, round, labels, positives found and
    their share of the labels, dev AP / P@R20 with their intervals, and the candidate recall
    (the share of the pool's positives not yet labelled that the round's candidates held; NaN
    where the strategy searched no candidates)."""
    rows = []
    for (task, strategy, seed), result in results.items():
        for r in result["records"]:
            if r.get("dev") is None:
                continue
            dev = r["dev"]
            recall = r.get("candidate_recall")
            rows.append(
                {
                    "task": task,
                    "strategy": strategy,
                    "seed": seed,
                    "round": r["round"],
                    "labels": r["labels"],
                    "positives_found": r["positives_found"],
                    "positive_share": r["positives_found"] / r["labels"],
                    "ap": dev["ap"],
                    "ap_lo": dev["ap_ci"][0],
                    "ap_hi": dev["ap_ci"][1],
                    "p_at_r20": dev["p_at_r20"],
                    "candidate_recall": np.nan if recall is None else float(recall),
                }
            )
    return pd.DataFrame(rows)


def stage_times(results: dict) -> pd.DataFrame:
    """Mean seconds per stage and round, by task and strategy."""
    rows = [
        {
            "task": task,
            "strategy": strategy,
            "seed": seed,
            "round": r["round"],
            "labels": r["labels"],
            **r["seconds"],
        }
        for (task, strategy, seed), result in results.items()
        for r in result["records"]
    ]
    frame = pd.DataFrame(rows).fillna(0.0)
    stages = [s for s in STAGES if s in frame]
    return frame.groupby(["task", "strategy", "round"])[["labels", *stages]].mean().round(1)


def calibration(results: dict) -> pd.DataFrame:
    """Per round of each run whose batch was chosen by a trained model: the mean predicted p of
    the batch and the share of it that was positive (calibrated: the two agree)."""
    rows = [
        {
            "task": task,
            "strategy": strategy,
            "seed": seed,
            "round": r["round"],
            "batch": r["batch"],
            "mean p": r["calibration"]["mean_p"],
            "positive share": r["calibration"]["positive_share"],
        }
        for (task, strategy, seed), result in results.items()
        for r in result["records"]
        if r.get("calibration")
    ]
    if not rows:
        return pd.DataFrame(
            columns=["task", "strategy", "round", "batch", "mean p", "positive share"]
        )
    frame = pd.DataFrame(rows)
    return (
        frame.groupby(["task", "strategy", "round"])[["batch", "mean p", "positive share"]]
        .mean()
        .round(3)
    )


def _zero_shot_first(strategies: dict) -> list:
    """A task's ``(strategy, entry)`` pairs with the zero-shot row first (what labelling must
    beat), the rest in their order (a metrics file keeps its keys sorted)."""
    return sorted(strategies.items(), key=lambda item: item[0] != ZERO_SHOT)


def table3(summary: dict, paper: dict) -> pd.DataFrame:
    """Test P@R20 and AP per strategy, mean +- std over seeds, beside the paper's Table 3."""
    rows = []
    for task, strategies in summary.items():
        for name, entry in _zero_shot_first(strategies):
            ref = paper.get(task, {}).get(name, {})
            rows.append(
                {
                    "task": task,
                    "strategy": name,
                    "labels": entry["labels"],
                    "P@R20": _pm(entry["p_at_r20"]),
                    "P@R20 (paper)": _pct(ref.get("p_at_r20")),
                    "AP": _pm(entry["ap"]),
                    "AP (paper)": _pct(ref.get("ap")),
                }
            )
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def table4(summary: dict, paper: dict, budget: dict) -> pd.DataFrame:
    """Positives found per strategy (mean over seeds) with the same budget, beside the paper's
    Table 4 (positives among its 232,100 QQP / 16,640 WikiQA labels)."""
    rows = []
    for task, strategies in summary.items():
        for name, entry in _zero_shot_first(strategies):
            ref = paper.get(task, {}).get(name)
            rows.append(
                {
                    "task": task,
                    "strategy": name,
                    "labels": entry["labels"],
                    "positives found": f"{entry['positives_found']['mean']:,.1f}",
                    "share": (
                        f"{entry['positives_found']['mean'] / entry['labels']:.1%}"
                        if entry["labels"]
                        else "-"
                    ),
                    "paper": "-" if ref is None else f"{ref:,}",
                    "paper share": "-" if ref is None else f"{ref / budget[task]['labels']:.1%}",
                }
            )
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def _pm(spread: dict) -> str:
    """Mean ± std over seeds, in percent; a single model's value with its 95% interval where
    there are no seeds (the zero-shot row) or one (a std of one value would read as no spread)."""
    one = spread.get("ci_per_seed") if len(spread["per_seed"]) == 1 else None
    if (not spread["per_seed"] and "ci" in spread) or one:
        low, high = one[0] if one else spread["ci"]
        return f"{100 * spread['mean']:.1f} [{100 * low:.1f}, {100 * high:.1f}]"
    return f"{100 * spread['mean']:.1f} ± {100 * spread['std']:.1f}"


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


# -- notebook 04: stratified sampling, seed sets, transfer to ConcatBERT ----------------------


def table5(summary: dict, paper: dict) -> pd.DataFrame:
    """Stratified sampling (with oracle access to the positives) against the active-learning
    strategies: labels, positives, test P@R20 and AP, mean +- std, beside the paper's Table 5."""
    rows = []
    for task, strategies in summary.items():
        for name in (
            "stratified_match",
            "stratified_all_positives",
            "adaptive_retrieval",
            "uncertainty",
        ):
            if name not in strategies:
                continue
            entry, ref = strategies[name], paper.get(task, {}).get(name, {})
            rows.append(
                {
                    "task": task,
                    "strategy": name,
                    "labels": entry["labels"],
                    "positives": f"{entry['positives_found']['mean']:,.0f}",
                    "P@R20": _pm(entry["p_at_r20"]),
                    "P@R20 (paper)": _pct(ref.get("p_at_r20")),
                    "AP": _pm(entry["ap"]),
                    "AP (paper)": _pct(ref.get("ap")),
                }
            )
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def seed_set_rounds(results: dict, labels: dict) -> pd.DataFrame:
    """Per round of each run: dev AP, and the queried batch's positive share beside the model's
    mean p for it (the calibration story of the paper's Figure 3b). ``labels`` maps a results
    label (e.g. ``"uncertainty"``) to the seed set's name shown."""
    rows = []
    for (task, label, seed), result in results.items():
        if label not in labels:
            continue
        for r in result["records"]:
            calibration = r.get("calibration") or {}
            rows.append(
                {
                    "task": task,
                    "seed set": labels[label],
                    "seed": seed,
                    "round": r["round"],
                    "labels": r["labels"],
                    "dev AP": (r.get("dev") or {}).get("ap"),
                    "batch positive share": r["positives_in_batch"] / r["batch"],
                    "mean p": calibration.get("mean_p"),
                    "positives found": r["positives_found"],
                }
            )
    return pd.DataFrame(rows)


def table6(summary: dict, transferred: dict, paper: dict) -> pd.DataFrame:
    """CosineBERT (the run's own model) beside ConcatBERT trained on the same collected labels:
    test P@R20 and AP, mean +- std over seeds, with the paper's Table 6 (QQP only)."""
    grouped: dict = {}
    for (task, source, _), m in transferred.items():
        grouped.setdefault((task, source), []).append(m)
    rows = []
    for (task, source), runs in grouped.items():
        cosine, ref = summary[task][source], paper.get(task, {}).get(source, {})
        rows.append(
            {
                "task": task,
                "data": source,
                "labels": runs[0]["labels"],
                "CosineBERT P@R20": _pm(cosine["p_at_r20"]),
                "CosineBERT AP": _pm(cosine["ap"]),
                "ConcatBERT P@R20": _pm(spread([m["p_at_r20"] for m in runs])),
                "ConcatBERT AP": _pm(spread([m["ap"] for m in runs])),
                "ConcatBERT collapsed": f"{sum(m['collapsed'] for m in runs)} of {len(runs)}",
                "paper CosineBERT AP": _pct(ref.get("cosine_ap")),
                "paper ConcatBERT AP": _pct(ref.get("concat_ap")),
            }
        )
    return pd.DataFrame(rows).set_index(["task", "data"])


# -- notebook 05: budget curves, data efficiency, noise and cost ------------------------------


def noise(summary: dict, groups, *, gap=(A, B)) -> pd.DataFrame:
    """How far test AP moves between runs that should be equally good (random label sets of the
    same size, training seeds), beside the gap between the two strategies of ``gap``: one row
    per task and group with the runs' mean, std, min, max and range of test AP."""
    rows = []
    for task, strategies in summary.items():
        for name in groups:
            if name not in strategies:
                continue
            values = np.asarray(strategies[name]["ap"]["per_seed"])
            rows.append(
                {
                    "task": task,
                    "runs of": name,
                    "n": len(values),
                    "mean AP": values.mean(),
                    "std": values.std(),
                    "min": values.min(),
                    "max": values.max(),
                    "range": values.max() - values.min(),
                }
            )
        if all(g in strategies for g in gap):
            diff = strategies[gap[0]]["ap"]["mean"] - strategies[gap[1]]["ap"]["mean"]
            rows.append(
                {
                    "task": task,
                    "runs of": f"gap: {gap[0]} - {gap[1]} (means)",
                    "n": None,
                    "mean AP": diff,
                    "std": None,
                    "min": None,
                    "max": None,
                    "range": None,
                }
            )
    frame = pd.DataFrame(rows)
    frame["n"] = frame["n"].astype("Int64")
    return frame.set_index(["task", "runs of"])


def costs(
    summary: dict,
    efficiency_frame: pd.DataFrame | None = None,
    *,
    per_hour: float = 75.0,
    dollars_per_hour: float = 50.0,
) -> pd.DataFrame:
    """What each strategy's labels cost to annotate (``per_hour`` judgements at
    ``dollars_per_hour``) beside the compute one run took (measured); with ``efficiency_frame``
    also what reaching the reference's full-budget dev AP costs."""
    rows = []
    for task, strategies in summary.items():
        for name, entry in strategies.items():
            compute = sum(entry["seconds_per_run"].values())
            cost = budget_views.annotation_cost(
                [entry["labels"]],
                per_hour=per_hour,
                dollars_per_hour=dollars_per_hour,
                compute_seconds=compute,
            )
            rows.append(
                {
                    "task": task,
                    "strategy": name,
                    "labels": entry["labels"],
                    "annotator hours": float(cost["annotator_hours"][0]),
                    "annotation $": float(cost["dollars"][0]),
                    "compute hours (measured)": cost["compute_hours"],
                    "test AP": entry["ap"]["mean"],
                }
            )
    frame = pd.DataFrame(rows).set_index(["task", "strategy"])
    if efficiency_frame is not None and not efficiency_frame.empty:
        needed = efficiency_frame.groupby("task")["labels needed"].mean()
        for task, labels in needed.items():
            if np.isfinite(labels):
                cost = budget_views.annotation_cost(
                    [labels], per_hour=per_hour, dollars_per_hour=dollars_per_hour
                )
                frame.loc[
                    (task, "uncertainty to static's AP"),
                    ["labels", "annotator hours", "annotation $"],
                ] = (round(labels), float(cost["annotator_hours"][0]), float(cost["dollars"][0]))
    return frame.round(3)
