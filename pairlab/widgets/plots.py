"""Plotly figures for the notebooks: one function a figure, data in, ``go.Figure`` out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

__all__ = [
    "growth_figure",
    "cluster_figure",
    "yield_figure",
    "pr_figure",
    "active_curves_figure",
    "collection_figure",
    "positives_figure",
    "seed_set_figure",
    "budget_curves_figure",
    "noise_figure",
    "cost_figure",
    "silver_figure",
    "silver_size_figure",
    "annotator_noise_figure",
    "case_study_figure",
]

TEMPLATE = "plotly_white"
COLOURS = {
    "qqp": "#1f77b4",
    "wikiqa": "#d62728",
    "static retrieval": "#2ca02c",
    "random (one draw)": "#ff7f0e",
    "random (expected)": "#7f7f7f",
    "random": "#7f7f7f",
    "static_retrieval": "#2ca02c",
    "adaptive_retrieval": "#9467bd",
    "uncertainty": "#d62728",
    "stated": "#8c564b",
    "stratified_match": "#e377c2",
    "stratified_all_positives": "#17becf",
    "random_candidates": "#bcbd22",
    "static retrieval seed": "#d62728",
    "stated seed": "#8c564b",
    "conditional_informativeness": "#ff7f0e",
}


def growth_figure(curves: dict[str, pd.DataFrame]) -> go.Figure:
    """Pairs and positives (left) and pairs per positive (right) against items in the split."""
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(
            "The pool grows quadratically, positives linearly",
            "Imbalance: pairs per positive",
        ),
    )
    for name, frame in curves.items():
        colour = COLOURS.get(name)
        fig.add_scatter(
            x=frame["items"],
            y=frame["pairs"],
            name=f"{name}: pairs",
            row=1,
            col=1,
            mode="lines+markers",
            line=dict(color=colour),
        )
        fig.add_scatter(
            x=frame["items"],
            y=frame["positives"],
            name=f"{name}: positives",
            row=1,
            col=1,
            mode="lines+markers",
            line=dict(color=colour, dash="dot"),
        )
        fig.add_scatter(
            x=frame["items"],
            y=frame["ratio"],
            name=f"{name}: 1 : ratio",
            row=1,
            col=2,
            mode="lines+markers",
            line=dict(color=colour),
            showlegend=False,
        )
    fig.update_xaxes(type="log", title="left items in the training split")
    fig.update_yaxes(type="log", title="count", row=1, col=1)
    fig.update_yaxes(type="log", title="pairs per positive", row=1, col=2)
    return fig.update_layout(template=TEMPLATE, height=420)


def cluster_figure(sizes: dict[str, pd.Series]) -> go.Figure:
    """Items by number of positive partners (QQP: duplicate cluster size - 1)."""
    fig = go.Figure()
    for name, series in sizes.items():
        fig.add_bar(x=series.index, y=series.values, name=name, marker_color=COLOURS.get(name))
    fig.update_yaxes(type="log", title="left items")
    fig.update_xaxes(title="positive partners per item")
    return fig.update_layout(
        template=TEMPLATE,
        barmode="group",
        height=380,
        title="Most items have no positive partner at all",
    )


def yield_figure(yields: dict[str, pd.DataFrame]) -> go.Figure:
    """Positives found against labels spent: static retrieval vs uniform random labelling."""
    fig = make_subplots(rows=1, cols=len(yields), subplot_titles=list(yields))
    for col, (name, frame) in enumerate(yields.items(), start=1):
        for method in ("static retrieval", "random (one draw)", "random (expected)"):
            fig.add_scatter(
                x=frame["labels"],
                y=frame[method],
                name=method,
                row=1,
                col=col,
                mode="lines+markers",
                line=dict(color=COLOURS[method]),
                showlegend=col == 1,
            )
    fig.update_xaxes(type="log", title="labels spent")
    fig.update_yaxes(title="positives found")
    return fig.update_layout(
        template=TEMPLATE, height=400, title="Why random labelling finds almost no positives"
    )


def pr_figure(curves: dict[str, dict], title: str = "All-pairs precision-recall") -> go.Figure:
    """Estimated all-pairs precision-recall curves (``metrics.pr_curve`` outputs) by name."""
    fig = go.Figure()
    for name, curve in curves.items():
        fig.add_scatter(
            x=curve["recall"], y=curve["precision"], name=name, mode="lines", line_shape="hv"
        )
    fig.add_vline(x=0.2, line_dash="dot", annotation_text="R = 20%")
    fig.update_xaxes(title="recall", range=[0, 1])
    fig.update_yaxes(title="precision (all pairs, estimated)", range=[0, 1.02])
    return fig.update_layout(template=TEMPLATE, height=420, title=title)


def active_curves_figure(
    curves: pd.DataFrame, *, paper: dict | None = None, value: str = "ap"
) -> go.Figure:
    """Dev ``value`` against labels collected, one panel a task: each strategy's mean over
    seeds (line) and the seeds themselves (faint points); ``paper`` adds the paper's final
    test numbers ``{task: {strategy: {value: x}}}`` as dotted levels."""
    tasks = list(dict.fromkeys(curves["task"]))
    fig = make_subplots(rows=1, cols=len(tasks), subplot_titles=[t.upper() for t in tasks])
    for col, task in enumerate(tasks, start=1):
        frame = curves[curves["task"] == task]
        for strategy, rows in frame.groupby("strategy", sort=False):
            colour = COLOURS.get(strategy)
            mean = rows.groupby("labels")[value].agg(["mean", "std"]).reset_index()
            once = len(mean) == 1  # trained once, at the full budget: a point, drawn large
            fig.add_scatter(
                x=mean["labels"],
                y=mean["mean"],
                mode="markers" if once else "lines+markers",
                name=strategy,
                legendgroup=strategy,
                showlegend=col == 1,
                line=dict(color=colour),
                marker=dict(size=12 if once else 7, symbol="diamond" if once else "circle"),
                error_y=dict(type="data", array=mean["std"].fillna(0), thickness=1),
                row=1,
                col=col,
            )
            fig.add_scatter(
                x=rows["labels"],
                y=rows[value],
                mode="markers",
                legendgroup=strategy,
                showlegend=False,
                marker=dict(color=colour, opacity=0.35, size=5),
                hovertext=[f"seed {s}" for s in rows["seed"]],
                row=1,
                col=col,
            )
            ref = (paper or {}).get(task, {}).get(strategy, {}).get(value)
            if ref is not None:
                fig.add_hline(y=ref, line=dict(color=colour, dash="dot", width=1), row=1, col=col)
        fig.update_xaxes(title="labels collected", row=1, col=col)
    label = {"ap": "dev all-pairs AP", "p_at_r20": "dev precision at 20% recall"}.get(value, value)
    fig.update_yaxes(title=label, row=1, col=1)
    title = f"{label} per round (mean ± std over seeds" + (
        "; dotted: the paper's test value)" if paper else ")"
    )
    return fig.update_layout(template=TEMPLATE, height=420, title=title)


def collection_figure(curves: pd.DataFrame) -> go.Figure:
    """The paper's Figure 4 per task (a column each): dev AP against labels collected, every seed
    of every strategy as its own line with its 95% bootstrap interval per round (top), and the
    share of the collected labels that are positive (bottom). Strategies trained only at the
    full budget are single points."""
    tasks = list(dict.fromkeys(curves["task"]))
    titles = [
        f"{t.upper()}: {what}" for what in ("dev AP", "positive share of the labels") for t in tasks
    ]
    fig = make_subplots(
        rows=2, cols=len(tasks), subplot_titles=titles, shared_xaxes=True, vertical_spacing=0.08
    )
    for col, task in enumerate(tasks, start=1):
        frame = curves[curves["task"] == task]
        for strategy, rows in frame.groupby("strategy", sort=False):
            colour = COLOURS.get(strategy)
            for i, (seed, run) in enumerate(rows.groupby("seed", sort=True)):
                run = run.sort_values("labels")
                first = col == 1 and i == 0
                hover = [f"{strategy}, seed {seed}" for _ in range(len(run))]
                fig.add_scatter(
                    x=run["labels"],
                    y=run["ap"],
                    mode="lines+markers",
                    name=strategy,
                    legendgroup=strategy,
                    showlegend=first,
                    hovertext=hover,
                    line=dict(color=colour, width=1.5),
                    marker=dict(size=6),
                    error_y=dict(
                        type="data",
                        symmetric=False,
                        thickness=1,
                        array=run["ap_hi"] - run["ap"],
                        arrayminus=run["ap"] - run["ap_lo"],
                    ),
                    row=1,
                    col=col,
                )
                fig.add_scatter(
                    x=run["labels"],
                    y=run["positive_share"],
                    mode="lines+markers",
                    legendgroup=strategy,
                    showlegend=False,
                    hovertext=hover,
                    line=dict(color=colour, width=1.5),
                    marker=dict(size=6),
                    row=2,
                    col=col,
                )
        fig.update_xaxes(title="labels collected", row=2, col=col)
    fig.update_yaxes(title="dev all-pairs AP (95% interval)", row=1, col=1)
    fig.update_yaxes(title="positives / labels", tickformat=".0%", row=2, col=1)
    title = "What each strategy collects: dev AP and positive share per round, one line a seed"
    return fig.update_layout(template=TEMPLATE, height=640, title=title)


def positives_figure(summary: dict, *, paper: dict | None = None) -> go.Figure:
    """Share of collected labels that are positive, per strategy and task (Table 4 as bars);
    ``paper`` adds the paper's shares as hollow markers."""
    fig = go.Figure()
    for task, strategies in summary.items():
        names = [n for n in strategies if strategies[n]["labels"]]  # not the zero-shot row
        share = [strategies[n]["positives_found"]["mean"] / strategies[n]["labels"] for n in names]
        fig.add_bar(
            x=[f"{task}: {n}" for n in names],
            y=share,
            name=task,
            marker_color=[COLOURS.get(n) for n in names],
            text=[f"{strategies[n]['positives_found']['mean']:,.0f}" for n in names],
        )
        if paper and task in paper:
            fig.add_scatter(
                x=[f"{task}: {n}" for n in names if n in paper[task]["positives"]],
                y=[
                    paper[task]["positives"][n] / paper[task]["labels"]
                    for n in names
                    if n in paper[task]["positives"]
                ],
                mode="markers",
                marker=dict(symbol="circle-open", size=12, color="black"),
                name=f"paper ({task})",
            )
    fig.update_yaxes(title="share of labels that are positive", tickformat=".0%")
    return fig.update_layout(
        template=TEMPLATE,
        height=400,
        showlegend=True,
        title="Positives among the collected labels (bar text: mean count)",
    )


def seed_set_figure(rounds: pd.DataFrame) -> go.Figure:
    """The paper's Figure 3 per task (columns): dev AP per round for each seed set (top), and
    the share of each round's queried pairs that were positive beside the model's mean p for
    them (bottom: a calibrated model queries pairs that are positive about as often as it says)."""
    tasks = list(dict.fromkeys(rounds["task"]))
    fig = make_subplots(
        rows=2,
        cols=len(tasks),
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=[f"{t.upper()}: dev AP" for t in tasks]
        + [f"{t.upper()}: queried pairs that were positive" for t in tasks],
    )
    for col, task in enumerate(tasks, start=1):
        frame = rounds[rounds["task"] == task]
        for seed_set, rows in frame.groupby("seed set", sort=False):
            colour = COLOURS.get(seed_set)
            mean = (
                rows.groupby("round")[["dev AP", "batch positive share", "mean p"]]
                .mean()
                .reset_index()
            )
            show = col == 1
            fig.add_scatter(
                x=mean["round"],
                y=mean["dev AP"],
                mode="lines+markers",
                name=seed_set,
                legendgroup=seed_set,
                showlegend=show,
                line=dict(color=colour),
                row=1,
                col=col,
            )
            fig.add_scatter(
                x=rows["round"],
                y=rows["dev AP"],
                mode="markers",
                legendgroup=seed_set,
                showlegend=False,
                marker=dict(color=colour, opacity=0.35, size=5),
                hovertext=[f"seed {s}" for s in rows["seed"]],
                row=1,
                col=col,
            )
            fig.add_scatter(
                x=mean["round"],
                y=mean["batch positive share"],
                mode="lines+markers",
                name=f"{seed_set}: positive share",
                legendgroup=seed_set,
                showlegend=False,
                line=dict(color=colour),
                row=2,
                col=col,
            )
            fig.add_scatter(
                x=mean["round"],
                y=mean["mean p"],
                mode="lines",
                legendgroup=seed_set,
                name=f"{seed_set}: mean p",
                showlegend=False,
                line=dict(color=colour, dash="dot"),
                row=2,
                col=col,
            )
        fig.update_xaxes(title="round", dtick=1, row=2, col=col)
    fig.update_yaxes(title="dev all-pairs AP", row=1, col=1)
    fig.update_yaxes(tickformat=".0%", row=2)
    fig.update_yaxes(title="share (solid) / mean p (dotted)", row=2, col=1)
    return fig.update_layout(
        template=TEMPLATE,
        height=620,
        title="Uncertainty sampling from two seed sets (round 1 is the seed set)",
    )


def budget_curves_figure(
    curves: pd.DataFrame,
    strategies=("uncertainty", "static_retrieval"),
    *,
    reference: dict | None = None,
) -> go.Figure:
    """The paper's Figure 4 per task (columns): dev AP against labels with the mean bootstrap
    interval as a band (top), and the share of all collected pairs that are positive (bottom).
    ``reference`` ``{task: labels}`` marks where a strategy passed the other's full budget."""
    tasks = list(dict.fromkeys(curves["task"]))
    fig = make_subplots(
        rows=2,
        cols=len(tasks),
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=[f"{t.upper()}: dev AP" for t in tasks]
        + [f"{t.upper()}: collected pairs that are positive" for t in tasks],
    )
    for col, task in enumerate(tasks, start=1):
        frame = curves[(curves["task"] == task) & curves["strategy"].isin(strategies)]
        for strategy, rows in frame.groupby("strategy", sort=False):
            colour = COLOURS.get(strategy)
            mean = (
                rows.groupby("labels")[["ap", "ap_lo", "ap_hi", "positives_found"]]
                .mean()
                .reset_index()
            )
            fig.add_scatter(
                x=list(mean["labels"]) + list(mean["labels"][::-1]),
                y=list(mean["ap_hi"]) + list(mean["ap_lo"][::-1]),
                fill="toself",
                mode="lines",
                fillcolor=_rgba(colour, 0.12),
                line=dict(width=0),
                hoverinfo="skip",
                legendgroup=strategy,
                showlegend=False,
                row=1,
                col=col,
            )
            fig.add_scatter(
                x=mean["labels"],
                y=mean["ap"],
                mode="lines+markers",
                name=strategy,
                legendgroup=strategy,
                showlegend=col == 1,
                line=dict(color=colour),
                row=1,
                col=col,
            )
            fig.add_scatter(
                x=rows["labels"],
                y=rows["ap"],
                mode="markers",
                legendgroup=strategy,
                showlegend=False,
                marker=dict(color=colour, opacity=0.35, size=5),
                hovertext=[f"seed {s}" for s in rows["seed"]],
                row=1,
                col=col,
            )
            fig.add_scatter(
                x=mean["labels"],
                y=mean["positives_found"] / mean["labels"],
                mode="lines+markers",
                legendgroup=strategy,
                showlegend=False,
                line=dict(color=colour),
                row=2,
                col=col,
            )
        if reference and reference.get(task) is not None and pd.notna(reference[task]):
            fig.add_vline(
                x=reference[task], line=dict(dash="dot", color="black", width=1), row=1, col=col
            )
        fig.update_xaxes(title="labels collected", row=2, col=col)
    fig.update_yaxes(title="dev all-pairs AP", row=1, col=1)
    fig.update_yaxes(tickformat=".0%", row=2)
    fig.update_yaxes(title="positive share", row=2, col=1)
    return fig.update_layout(
        template=TEMPLATE,
        height=620,
        title="Adaptive vs static labels at equal budgets (band: mean 95% bootstrap interval)",
    )


def _rgba(colour: str | None, alpha: float) -> str:
    """``#rrggbb`` as a translucent ``rgba(...)`` (grey when the colour is unknown)."""
    colour = (colour or "#7f7f7f").lstrip("#")
    r, g, b = (int(colour[k : k + 2], 16) for k in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def noise_figure(summary: dict, groups) -> go.Figure:
    """Test AP of every run (one point each) for the groups named, per task: how far equally
    good label sets and training seeds move the result."""
    tasks = list(summary)
    fig = make_subplots(rows=1, cols=len(tasks), subplot_titles=[t.upper() for t in tasks])
    for col, task in enumerate(tasks, start=1):
        for name in groups:
            if name not in summary[task]:
                continue
            values = summary[task][name]["ap"]["per_seed"]
            fig.add_box(
                y=values,
                name=name,
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                marker_color=COLOURS.get(name),
                line=dict(width=1),
                showlegend=False,
                row=1,
                col=col,
            )
    fig.update_yaxes(title="test all-pairs AP", row=1, col=1)
    return fig.update_layout(
        template=TEMPLATE,
        height=420,
        title="Run-to-run spread: every point is one run of the same budget",
    )


def cost_figure(
    curves: pd.DataFrame,
    *,
    dollars_per_label: float,
    strategies=("uncertainty", "static_retrieval"),
) -> go.Figure:
    """Dev AP against what the labels cost to annotate, per task."""
    frame = curves[curves["strategy"].isin(strategies)].copy()
    frame["labels"] = frame["labels"] * dollars_per_label
    fig = active_curves_figure(frame)
    fig.update_xaxes(title="annotation cost ($)", tickprefix="$")
    return fig.update_layout(
        title=f"dev AP against annotation cost (${dollars_per_label:.2f} a label)"
    )


def silver_figure(silver: pd.DataFrame) -> go.Figure:
    """The cross-encoder's score of each sampler's silver pairs (logit minus its dev threshold:
    a pair above 0 is a silver positive), one panel per task, with each sampler's positive share."""
    tasks = list(dict.fromkeys(silver["task"]))
    fig = make_subplots(rows=1, cols=max(len(tasks), 1), subplot_titles=tasks, shared_yaxes=True)
    for col, task in enumerate(tasks, start=1):
        own = silver[silver["task"] == task]
        for sampler, frame in own.groupby("sampler", sort=False):
            share = frame["label"].mean() if len(frame) else 0.0
            fig.add_box(
                y=frame["margin"],
                name=f"{sampler}<br>{share:.1%} positive",
                row=1,
                col=col,
                boxpoints=False,
                showlegend=False,
                marker_color=COLOURS.get(task),
            )
        fig.add_hline(y=0, line_dash="dot", line_color="black", row=1, col=col)
    fig.update_yaxes(title="cross-encoder logit - dev threshold", row=1, col=1)
    return fig.update_layout(
        template=TEMPLATE,
        height=440,
        title="Silver labels per sampler: above the dotted line is a silver positive",
    )


def silver_size_figure(curve: pd.DataFrame) -> go.Figure:
    """All-pairs test AP (mean over seeds, with the seeds' mean 95% interval) against the number
    of silver pairs added to the gold set, one line per task and gold source."""
    fig = go.Figure()
    for (task, gold, sampler), frame in curve.groupby(["task", "gold", "sampler"], sort=False):
        mean = frame.groupby("n_silver", as_index=False)[["ap", "ap_low", "ap_high"]].mean()
        fig.add_scatter(
            x=mean["n_silver"],
            y=mean["ap"],
            mode="lines+markers",
            name=f"{task} / {gold} gold: {sampler}",
            line=dict(color=COLOURS.get(task)),
            error_y=dict(
                type="data",
                symmetric=False,
                array=mean["ap_high"] - mean["ap"],
                arrayminus=mean["ap"] - mean["ap_low"],
            ),
        )
    fig.update_xaxes(title="silver pairs added to the gold set")
    fig.update_yaxes(title="all-pairs test AP")
    return fig.update_layout(template=TEMPLATE, height=420, title="AP against silver-set size")


def annotator_noise_figure(metrics: dict) -> go.Figure:
    """All-pairs test AP (with the 95% interval) against the annotator's noise level, one panel
    per task and one line per strategy (notebook 07's ``all_pairs`` metrics)."""
    tasks = list(metrics)
    fig = make_subplots(rows=1, cols=len(tasks), subplot_titles=tasks, shared_yaxes=True)
    strategies = list(
        dict.fromkeys(s for by_noise in metrics.values() for row in by_noise.values() for s in row)
    )
    for col, task in enumerate(tasks, start=1):
        noises = list(metrics[task])
        for strategy in strategies:
            rows = [metrics[task][n].get(strategy) for n in noises]
            x = [n for n, r in zip(noises, rows) if r]
            ap = np.array([r["ap"] for r in rows if r])
            lo, hi = (np.array([r["ap_ci"][i] for r in rows if r]) for i in (0, 1))
            fig.add_scatter(
                x=x,
                y=ap,
                mode="lines+markers",
                name=strategy,
                legendgroup=strategy,
                showlegend=col == 1,
                line=dict(color=COLOURS.get(strategy)),
                error_y=dict(type="data", symmetric=False, array=hi - ap, arrayminus=ap - lo),
                row=1,
                col=col,
            )
        fig.update_xaxes(title="annotator noise (flip rate)", type="category", row=1, col=col)
    fig.update_yaxes(title="all-pairs test AP", row=1, col=1)
    return fig.update_layout(
        template=TEMPLATE, height=420, title="Active learning under annotator noise"
    )


def case_study_figure(metrics: dict) -> go.Figure:
    """AUC on the test set's high- and low-base-error parts per strategy, one panel per
    annotation (notebook 07's ``case_study`` metrics); the dashed line is the source-only model."""
    annotations = list(metrics)
    fig = make_subplots(
        rows=1, cols=len(annotations), subplot_titles=annotations, shared_yaxes=True
    )
    for col, annotation in enumerate(annotations, start=1):
        rows = metrics[annotation]
        names = [r for r in rows if r != "initial"]
        for part, colour in (
            ("high_error", "#d62728"),
            ("low_error", "#1f77b4"),
            ("all", "#444444"),
        ):
            key = f"auc_{part}"
            fig.add_bar(
                x=names,
                y=[rows[n].get(key) for n in names],
                name=part.replace("_", " "),
                legendgroup=part,
                showlegend=col == 1,
                marker_color=colour,
                row=1,
                col=col,
            )
            if rows["initial"].get(key) is not None:
                fig.add_hline(
                    y=rows["initial"][key],
                    line=dict(color=colour, dash="dash", width=1),
                    row=1,
                    col=col,
                )
    fig.update_yaxes(title="test AUC", row=1, col=1)
    return fig.update_layout(
        template=TEMPLATE,
        height=440,
        barmode="group",
        title="Which target pairs to annotate (dashed: source only)",
    )
