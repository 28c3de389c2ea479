"""Notebook 09's figures: candidate recall per round, and the adaptive-static gap against the
starting encoder's zero-shot AP."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..data.paper import A, B
from .plots import TEMPLATE, _axes, _tasks, panels, seed_curves

__all__ = ["recall_figure", "encoder_gap_figure"]


def recall_figure(recall: pd.DataFrame) -> go.Figure:
    """Candidate recall against the round, a panel a task: each run label's mean over seeds (the
    strategy's colour, a dash for what follows it: ``"uncertainty, 2 layers"``) and its seeds."""
    split = recall["strategy"].str.split(", ", n=1)
    runs = recall.assign(colour=split.str[0], variant=split.str[1].fillna(""))
    title = "Candidate recall: what a strategy over the candidates could still find"
    fig = panels(_tasks(recall), shared_yaxes=True, title=title)
    draw = dict(colour="colour", dash="variant", hover="labels")
    seed_curves(fig, runs, "round", "candidate_recall", **draw)
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    return _axes(fig, "round", "unlabelled positives among the candidates", dtick=1)


def encoder_gap_figure(table: pd.DataFrame) -> go.Figure:
    """Each strategy's test AP (left) and their gap (right, ± its std, each seed a point) against
    the starting encoder's zero-shot AP, a line style a budget, labelled by depth."""
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
        for s in (A, B)
    )
    seeds = frame.assign(
        line=[f"gap, {b}" for b in budget],
        colour="gap",
        seed=frame["seeds"],
        lo=frame["gap"] - frame["gap std"],
        hi=frame["gap"] + frame["gap std"],
    ).explode(["gap per seed", "seed"])
    seeds["gap per seed"] = seeds["gap per seed"].astype(float)
    titles = ("Test AP by starting encoder", f"Gap: {A} - {B}")
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles)
    where = dict(x="zero-shot AP", by="line", dash="labels", facet=None, interval=("lo", "hi"))
    seed_curves(fig, ap, y="ap", colour="strategy", seeds=False, **where)
    seed_curves(fig, seeds, y="gap per seed", colour="colour", col=2, **where)
    fig.add_scatter(
        x=frame["zero-shot AP"],
        y=frame["gap"],
        text=[f"{n} layers" for n in frame["layers"]],
        mode="text",
        textposition="top center",
        cliponaxis=False,
        showlegend=False,
        row=1,
        col=2,
    )
    fig.add_hline(y=0, line=dict(color="grey", width=1), row=1, col=2)
    title = "Does adaptivity pay more from a weaker encoder?"
    fig.update_layout(template=TEMPLATE, height=460, title=title, yaxis2_title="test AP gap")
    x = "zero-shot all-pairs test AP of the starting encoder"
    return _axes(fig, x, "all-pairs test AP after collection")
