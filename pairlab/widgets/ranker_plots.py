"""Notebook 08's plotly figures (Althammer et al. 2023's Figures 2 and 3 on our data): test
effectiveness against questions annotated, assessments or dollars, with random as the mean of
its subsets and their min-max band, and the cost of every size as stacked bars."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .plots import COLOURS, TEMPLATE, _rgba

__all__ = ["effectiveness_figure", "cost_figure", "AXES"]

AXES = {
    "questions": "questions annotated",
    "assessments": "assessments (pairs judged)",
    "total_cost": "total cost ($: annotation + compute)",
    "ndcg": "test nDCG@10",
    "mrr": "test MRR@10",
    "ap": "test all-pairs AP",
}
RANKER_COLOURS = {**COLOURS, "qbc": "#17becf", "diversity": "#2ca02c", "pretrained": "#000000"}


def _tasks(frame: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(frame["task"]))


def _curves(fig, rows: pd.DataFrame, x: str, y: str, *, row: int, col: int, legend: bool) -> None:
    """Random as its mean with a min-max band over the seeds, every other strategy as its mean."""
    for strategy, own in rows.groupby("strategy", sort=False):
        colour = RANKER_COLOURS.get(strategy)
        by_round = own.groupby("round").agg(
            x=(x, "mean"), y=(y, "mean"), lo=(y, "min"), hi=(y, "max")
        )
        if strategy == "random" and own["seed"].nunique() > 1:
            fig.add_scatter(
                x=list(by_round["x"]) + list(by_round["x"][::-1]),
                y=list(by_round["hi"]) + list(by_round["lo"][::-1]),
                fill="toself",
                mode="lines",
                line=dict(width=0),
                fillcolor=_rgba(colour, 0.18),
                hoverinfo="skip",
                legendgroup=strategy,
                showlegend=False,
                row=row,
                col=col,
            )
        name = f"random (mean of {own['seed'].nunique()})" if strategy == "random" else strategy
        fig.add_scatter(
            x=by_round["x"],
            y=by_round["y"],
            mode="lines+markers",
            name=name,
            legendgroup=strategy,
            showlegend=legend,
            line=dict(color=colour),
            row=row,
            col=col,
        )


def effectiveness_figure(
    frame: pd.DataFrame, baseline: dict | None = None, *, x: str = "questions", y: str = "ndcg"
) -> go.Figure:
    """``y`` against ``x`` per task (columns), from :func:`~pairlab.experiments.rankers.curves`;
    ``baseline`` ``{task: value}`` draws the pretrained encoder at 0."""
    tasks = _tasks(frame)
    fig = make_subplots(rows=1, cols=len(tasks), subplot_titles=[t.upper() for t in tasks])
    for col, task in enumerate(tasks, start=1):
        _curves(fig, frame[frame["task"] == task], x, y, row=1, col=col, legend=col == 1)
        if baseline and task in baseline:
            fig.add_scatter(
                x=[0],
                y=[baseline[task]],
                mode="markers",
                name="pretrained",
                legendgroup="pretrained",
                showlegend=col == 1,
                marker=dict(color="black", symbol="star", size=11),
                row=1,
                col=col,
            )
        fig.update_xaxes(title=AXES.get(x, x), row=1, col=col)
    fig.update_yaxes(title=AXES.get(y, y), row=1, col=1)
    title = {
        "questions": "Effectiveness against training size (band: min-max of the random subsets)",
        "assessments": "Effectiveness against the assessments the annotation took (Figure 3 analog)",
        "total_cost": "Effectiveness against what it cost",
    }.get(x, f"{y} against {x}")
    return fig.update_layout(template=TEMPLATE, height=430, title=title)


def cost_figure(frame: pd.DataFrame, *, y: str = "ndcg") -> go.Figure:
    """The budget-aware view per task (columns): ``y`` against total cost (top; random with its
    band), and each strategy's cost at every size as annotation + compute stacked (bottom)."""
    tasks = _tasks(frame)
    fig = make_subplots(
        rows=2,
        cols=len(tasks),
        vertical_spacing=0.14,
        subplot_titles=[f"{t.upper()}: {AXES[y]} against total cost" for t in tasks]
        + [f"{t.upper()}: cost by training size" for t in tasks],
    )
    for col, task in enumerate(tasks, start=1):
        rows = frame[frame["task"] == task]
        _curves(fig, rows, "total_cost", y, row=1, col=col, legend=col == 1)
        for strategy, own in rows.groupby("strategy", sort=False):
            mean = (
                own.groupby("questions")[["annotation_cost", "compute_cost"]].mean().reset_index()
            )
            colour = RANKER_COLOURS.get(strategy)
            fig.add_bar(
                x=mean["questions"],
                y=mean["annotation_cost"],
                offsetgroup=strategy,
                name=f"{strategy}: annotation",
                legendgroup=strategy,
                showlegend=False,
                marker_color=colour,
                row=2,
                col=col,
            )
            fig.add_bar(
                x=mean["questions"],
                y=mean["compute_cost"],
                base=mean["annotation_cost"],
                offsetgroup=strategy,
                name=f"{strategy}: compute",
                legendgroup=strategy,
                showlegend=False,
                marker=dict(color=_rgba(colour, 0.35), line=dict(color=colour, width=1)),
                row=2,
                col=col,
            )
        fig.update_xaxes(title=AXES["total_cost"], tickprefix="$", row=1, col=col)
        fig.update_xaxes(title=AXES["questions"], row=2, col=col)
    fig.update_yaxes(title=AXES[y], row=1, col=1)
    fig.update_yaxes(tickprefix="$", row=2)
    fig.update_yaxes(title="$ (solid: annotation, light: compute)", row=2, col=1)
    return fig.update_layout(
        template=TEMPLATE,
        height=700,
        barmode="group",
        title="Budget-aware evaluation: effectiveness and cost (Figure 2 analog)",
    )
