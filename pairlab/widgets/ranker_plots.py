"""Notebook 08's figures (Althammer et al. 2023's Figures 2 and 3 on our data): test
effectiveness against questions annotated, assessments or dollars (random: the mean of its
subsets and their min-max band), and the cost of every size as stacked bars."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from .plots import COLOURS, _axes, _rgba, _tasks, panels, seed_curves

__all__ = ["effectiveness_figure", "cost_figure", "AXES"]

AXES = {
    "questions": "questions annotated",
    "assessments": "assessments (pairs judged)",
    "total_cost": "total cost ($: annotation + compute)",
    "ndcg": "test nDCG@10",
    "mrr": "test MRR@10",
    "ap": "test all-pairs AP",
}


def _curves(fig: go.Figure, frame: pd.DataFrame, x: str, y: str) -> None:
    """Each strategy's mean over seeds per round with their min-max band; ``x`` averaged too."""
    random = f"random (mean of {frame.loc[frame['strategy'] == 'random', 'seed'].nunique()})"
    named = frame.assign(
        **{x: frame.groupby(["task", "strategy", "round"])[x].transform("mean")},
        colour=frame["strategy"],
        strategy=frame["strategy"].replace("random", random),
    )
    seed_curves(fig, named, x, y, colour="colour", interval="range", band=True, seeds=False)


def effectiveness_figure(
    frame: pd.DataFrame, baseline: dict | None = None, *, x: str = "questions", y: str = "ndcg"
) -> go.Figure:
    """``y`` against ``x``, a column a task, from :func:`~pairlab.experiments.rankers.curves`;
    ``baseline`` ``{task: value}`` draws the pretrained encoder at 0."""
    title = {
        "questions": "Effectiveness against training size (band: min-max of the random subsets)",
        "assessments": "Effectiveness against the assessments the annotation took (Figure 3 analog)",
        "total_cost": "Effectiveness against what it cost",
    }.get(x, f"{y} against {x}")
    tasks = _tasks(frame)
    fig = panels(tasks, height=430, title=title)
    _curves(fig, frame, x, y)
    for task in (t for t in tasks if t in (baseline or {})):  # measured once: a large point
        zero = pd.DataFrame({"strategy": ["pretrained"], x: [0], y: [baseline[task]]})
        seed_curves(fig, zero, x, y, seeds=False, facet=None, col=tasks.index(task) + 1)
    return _axes(fig, AXES.get(x, x), AXES.get(y, y))


def cost_figure(frame: pd.DataFrame, *, y: str = "ndcg") -> go.Figure:
    """``y`` against total cost (top) and each strategy's cost per size (bottom), a column a task."""
    tasks, rows = _tasks(frame), (f"{AXES[y]} against total cost", "cost by training size")
    title = "Budget-aware evaluation: effectiveness and cost (Figure 2 analog)"
    fig = panels(tasks, *rows, vertical_spacing=0.14, height=700, title=title)
    fig.update_layout(barmode="group")
    _curves(fig, frame, "total_cost", y)
    costs = ["annotation_cost", "compute_cost"]
    means = frame.groupby(["task", "strategy", "questions"], sort=False)[costs].mean()
    for (task, strategy), mean in means.groupby(level=[0, 1], sort=False):
        mean, colour = mean.droplevel([0, 1]).sort_index(), COLOURS.get(strategy)
        light = dict(color=_rgba(colour, 0.35), line=dict(color=colour, width=1))
        for part, base, marker in (
            ("annotation", None, dict(color=colour)),
            ("compute", mean["annotation_cost"], light),
        ):
            fig.add_bar(
                x=mean.index,
                y=mean[f"{part}_cost"],
                base=base,
                offsetgroup=strategy,
                name=f"{strategy}: {part}",
                legendgroup=strategy,
                showlegend=False,
                marker=marker,
                row=2,
                col=tasks.index(task) + 1,
            )
    fig.update_xaxes(title=AXES["total_cost"], tickprefix="$", row=1)
    fig.update_yaxes(tickprefix="$", row=2)
    return _axes(fig, AXES["questions"], AXES[y], "$ (solid: annotation, light: compute)")
