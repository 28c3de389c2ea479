"""Notebook 09's figures: candidate recall per round, and the adaptive-static gap against the
starting encoder's zero-shot AP."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .plots import TEMPLATE, _tasks, panels, seed_curves

__all__ = ["recall_figure", "encoder_gap_figure"]


def recall_figure(recall: pd.DataFrame) -> go.Figure:
    """Candidate recall against the round, one panel a task: each run label's mean over seeds
    (line: the strategy's colour, a dash for what follows it, ``"uncertainty, 2 layers"``) and
    the seeds (faint points). The recall bounds what any strategy over the candidates can still
    find; a falling line says m neighbours per item reach fewer of the positives that are left."""
    split = recall["strategy"].str.split(", ", n=1)
    runs = recall.assign(colour=split.str[0], variant=split.str[1].fillna(""))
    fig = panels(
        _tasks(recall),
        shared_yaxes=True,
        title="Candidate recall: what a strategy over the candidates could still find",
    )
    seed_curves(
        fig, runs, "round", "candidate_recall", colour="colour", dash="variant", hover="labels"
    )
    fig.update_xaxes(title="round", dtick=1)
    fig.update_yaxes(
        title="unlabelled positives among the candidates",
        tickformat=".0%",
        range=[0, 1.02],
        row=1,
        col=1,
    )
    return fig


def encoder_gap_figure(
    table: pd.DataFrame, *, gap=("uncertainty", "static_retrieval")
) -> go.Figure:
    """Left: each strategy's test AP (mean over seeds, bars: the seeds' mean 95% interval)
    against the starting encoder's zero-shot AP, one line style per budget. Right: the gap
    between them (bars: ± its std over seeds; faint points: each seed), labelled by depth. The
    paper's mechanism predicts the gap grows towards the left (weaker encoders)."""
    frame = table.reset_index()
    budget = [f"{n:,} labels" for n in frame["labels"]]
    ap = pd.concat(
        frame.assign(
            line=[f"{s}, {b}" for b in budget],
            strategy=s,
            ap=frame[f"{s} AP"],
            lo=frame[f"{s} CI"].str[0],
            hi=frame[f"{s} CI"].str[1],
        )
        for s in gap
    )
    seeds = frame.assign(
        line=[f"gap, {b}" for b in budget],
        colour="gap",
        seed=frame["seeds"],
        lo=frame["gap"] - frame["gap std"],
        hi=frame["gap"] + frame["gap std"],
    ).explode(["gap per seed", "seed"])
    seeds["gap per seed"] = seeds["gap per seed"].astype(float)
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("Test AP by starting encoder", f"Gap: {gap[0]} - {gap[1]}")
    )
    where = dict(by="line", dash="labels", facet=None)
    seed_curves(
        fig,
        ap,
        "zero-shot AP",
        "ap",
        colour="strategy",
        interval=("lo", "hi"),
        seeds=False,
        **where,
    )
    seed_curves(
        fig,
        seeds,
        "zero-shot AP",
        "gap per seed",
        colour="colour",
        interval=("lo", "hi"),
        col=2,
        **where,
    )
    depth = dict(mode="text", textposition="top center", cliponaxis=False, showlegend=False)
    fig.add_scatter(
        x=frame["zero-shot AP"],
        y=frame["gap"],
        text=[f"{n} layers" for n in frame["layers"]],
        **depth,
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
