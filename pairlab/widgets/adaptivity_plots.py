"""Notebook 09's figures: candidate recall per round, and the adaptive-static gap against the
starting encoder's zero-shot AP."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .plots import COLOURS, TEMPLATE

__all__ = ["recall_figure", "encoder_gap_figure"]

DASHES = ("solid", "dash", "dot", "dashdot")


def recall_figure(recall: pd.DataFrame) -> go.Figure:
    """Candidate recall against the round, one panel a task: each run label's mean over seeds
    (line) and the seeds (faint points). The recall bounds what any strategy over the
    candidates can still find; a falling line says m neighbours per item reach fewer of the
    positives that are left."""
    tasks = list(dict.fromkeys(recall["task"]))
    fig = make_subplots(
        rows=1,
        cols=max(len(tasks), 1),
        subplot_titles=[t.upper() for t in tasks],
        shared_yaxes=True,
    )
    for col, task in enumerate(tasks, start=1):
        part = recall[recall["task"] == task]
        variants = list(dict.fromkeys(_variant(name) for name in part["strategy"]))  # e.g. depths
        for name, rows in part.groupby("strategy", sort=False):
            colour = COLOURS.get(name.split(",")[0])
            dash = DASHES[variants.index(_variant(name)) % len(DASHES)]
            mean = rows.groupby("round")[["candidate_recall", "labels"]].mean().reset_index()
            fig.add_scatter(
                x=mean["round"],
                y=mean["candidate_recall"],
                mode="lines+markers",
                name=name,
                legendgroup=name,
                line=dict(color=colour, dash=dash),
                hovertext=[f"{n:,.0f} labels after the round" for n in mean["labels"]],
                row=1,
                col=col,
            )
            fig.add_scatter(
                x=rows["round"],
                y=rows["candidate_recall"],
                mode="markers",
                legendgroup=name,
                showlegend=False,
                marker=dict(color=colour, opacity=0.35, size=5),
                hovertext=[f"seed {s}" for s in rows["seed"]],
                row=1,
                col=col,
            )
        fig.update_xaxes(title="round", dtick=1, row=1, col=col)
    fig.update_yaxes(
        title="unlabelled positives among the candidates",
        tickformat=".0%",
        range=[0, 1.02],
        row=1,
        col=1,
    )
    return fig.update_layout(
        template=TEMPLATE,
        height=420,
        title="Candidate recall: what a strategy over the candidates could still find",
    )


def _variant(name: str) -> str:
    """What follows the strategy in a run label (``"uncertainty, 2 layers"``: ``"2 layers"``)."""
    return name.split(", ", 1)[1] if ", " in name else ""


def encoder_gap_figure(
    table: pd.DataFrame, *, gap=("uncertainty", "static_retrieval")
) -> go.Figure:
    """Left: each strategy's test AP (mean over seeds, bars: the seeds' mean 95% interval)
    against the starting encoder's zero-shot AP, one line style per budget. Right: the gap
    between them (bars: ± its std over seeds; faint points: each seed), labelled by depth. The
    paper's mechanism predicts the gap grows towards the left (weaker encoders)."""
    frame = table.reset_index().sort_values("zero-shot AP")
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("Test AP by starting encoder", f"Gap: {gap[0]} - {gap[1]}")
    )
    for k, (labels, rows) in enumerate(frame.groupby("labels")):
        dash = DASHES[k % len(DASHES)]
        for s in gap:
            ap, ci = rows[f"{s} AP"].to_numpy(), np.array(rows[f"{s} CI"].tolist())
            fig.add_scatter(
                x=rows["zero-shot AP"],
                y=ap,
                mode="lines+markers",
                name=f"{s}, {labels:,} labels",
                line=dict(color=COLOURS.get(s), dash=dash),
                error_y=dict(
                    type="data", symmetric=False, array=ci[:, 1] - ap, arrayminus=ap - ci[:, 0]
                ),
                row=1,
                col=1,
            )
        fig.add_scatter(
            x=rows["zero-shot AP"],
            y=rows["gap"],
            mode="lines+markers+text",
            name=f"gap, {labels:,} labels",
            line=dict(color="black", dash=dash),
            text=[f"{n} layers" for n in rows["layers"]],
            textposition="top center",
            cliponaxis=False,
            error_y=dict(type="data", array=rows["gap std"]),
            row=1,
            col=2,
        )
        seeds = rows.explode("gap per seed")
        fig.add_scatter(
            x=seeds["zero-shot AP"],
            y=seeds["gap per seed"].astype(float),
            mode="markers",
            showlegend=False,
            marker=dict(color="black", opacity=0.3, size=6),
            row=1,
            col=2,
        )
    fig.add_hline(y=0, line=dict(color="grey", width=1), row=1, col=2)
    fig.update_xaxes(title="zero-shot all-pairs test AP of the starting encoder")
    fig.update_yaxes(title="all-pairs test AP after collection", row=1, col=1)
    fig.update_yaxes(title="test AP gap", row=1, col=2)
    return fig.update_layout(
        template=TEMPLATE, height=460, title="Does adaptivity pay more from a weaker encoder?"
    )
