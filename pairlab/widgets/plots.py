"""Plotly figures for the notebooks: data in, ``go.Figure`` out. A quantity over seeds is drawn by
:func:`seed_curves`: the mean a line, each seed a faint point, an interval as bars or a band."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import hex_to_rgb
from plotly.subplots import make_subplots

from ..data.paper import A, B

__all__ = [
    "seed_curves",
    "panels",
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
    "qbc": "#17becf",
    "diversity": "#2ca02c",
    "pretrained": "#000000",
    "gap": "#000000",
}
DASHES = ("solid", "dot", "dash", "dashdot")  # the second a dotted line, as notebook 04 reads it


def seed_curves(
    fig: go.Figure,
    frame: pd.DataFrame,
    x: str,
    y: str,
    *,
    by: str | list[str] = "strategy",
    interval: str | tuple[str, str] | None = None,
    band: bool = False,
    seeds: bool = True,
    facet: str | None = "task",
    row: int = 1,
    col: int = 1,
    colour: str | None = None,
    dash: str | None = None,
    hover: str | None = None,
) -> go.Figure:
    """Draw ``y`` against ``x`` per ``by`` value into ``fig``: the mean over the rows at each ``x``
    (the seeds) a line (a lone ``x``: a large point), each row a faint point (``seeds``) and
    ``interval`` as error bars or a ``band``: ``"std"`` (± the seeds' std), ``"range"`` (min to
    max) or columns ``(low, high)`` averaged like ``y``. ``by``'s first column names the legend
    entry and the colour, others split it into lines; ``facet``'s values take a column each from
    ``col`` on; ``colour`` and ``dash`` name columns picking the COLOURS key and the DASHES;
    ``hover`` a column whose mean the hover shows."""
    keys = [by] if isinstance(by, str) else list(by)
    facets = list(dict.fromkeys(frame[facet])) if facet else []
    dashes = list(dict.fromkeys(frame[dash])) if dash else []
    shown = {t.legendgroup for t in fig.data if t.showlegend}
    for _, rows in frame.groupby([facet, *keys] if facet else keys, sort=False):
        first = rows.iloc[0]
        name = str(first[keys[0]])
        cell = dict(row=row, col=col + (facets.index(first[facet]) if facet else 0))
        tint = COLOURS.get(first[colour or keys[0]], "#7f7f7f")
        style = DASHES[dashes.index(first[dash]) % len(DASHES)] if dash else None
        mean = _over_seeds(rows, x, y, interval, hover)
        label = ", ".join([name] + [f"{k} {first[k]}" for k in keys[1:]])
        once = len(mean) == 1  # measured once (at the full budget, say): a point, drawn large
        fig.add_scatter(
            x=mean[x],
            y=mean["y"],
            mode="markers" if once else "lines+markers",
            name=name,
            legendgroup=name,
            showlegend=name not in shown,
            line=dict(color=tint, dash=style),
            marker=dict(size=12 if once else 7, symbol="diamond" if once else "circle"),
            error_y=_interval(fig, mean, tint, band=band, legendgroup=name, **cell),
            hovertext=[f"{label}, {v:,.0f} {hover}" for v in mean["hover"]] if hover else label,
            **cell,
        )
        shown.add(name)
        if seeds:
            fig.add_scatter(
                x=rows[x],
                y=rows[y],
                mode="markers",
                marker=dict(color=tint, opacity=0.35, size=5),
                hovertext=[f"seed {s}" for s in rows["seed"]],
                legendgroup=name,
                showlegend=False,
                **cell,
            )
    return fig


def _over_seeds(rows: pd.DataFrame, x: str, y: str, interval, hover) -> pd.DataFrame:
    """Per ``x`` (sorted where numeric): the mean ``y``, ``lo``, ``hi`` and mean ``hover``."""
    at = rows.groupby(x, sort=pd.api.types.is_numeric_dtype(rows[x]))
    mean = pd.DataFrame({"y": at[y].mean()})
    if interval == "std":
        spread = at[y].std().fillna(0)  # one seed: no spread
        mean["lo"], mean["hi"] = mean["y"] - spread, mean["y"] + spread
    elif interval == "range":
        mean["lo"], mean["hi"] = at[y].min(), at[y].max()
    elif interval is not None:
        mean["lo"], mean["hi"] = at[interval[0]].mean(), at[interval[1]].mean()
    if hover:
        mean["hover"] = at[hover].mean()
    return mean.reset_index()


def _interval(fig: go.Figure, mean: pd.DataFrame, colour: str, *, band: bool, **where):
    """``mean``'s ``lo`` to ``hi`` as error bars (returned) or a band drawn into ``fig``."""
    if "lo" not in mean or not (mean["hi"] > mean["lo"]).any():
        return None
    if not band:
        high, low = mean["hi"] - mean["y"], mean["y"] - mean["lo"]
        return dict(type="data", symmetric=False, thickness=1, array=high, arrayminus=low)
    x = mean.iloc[:, 0]
    fig.add_scatter(
        x=list(x) + list(x[::-1]),
        y=list(mean["hi"]) + list(mean["lo"][::-1]),
        fill="toself",
        mode="lines",
        fillcolor=_rgba(colour, 0.15),
        line=dict(width=0),
        hoverinfo="skip",
        showlegend=False,
        **where,
    )
    return None


def _rgba(colour: str | None, alpha: float) -> str:
    """``#rrggbb`` (grey when None) as a translucent ``rgba(...)``."""
    return "rgba({},{},{},{})".format(*hex_to_rgb(colour or "#7f7f7f"), alpha)


def panels(tasks, *rows: str, title: str, height: int = 420, **options) -> go.Figure:
    """A figure of one column a task (none: one untitled panel) and one row per title in ``rows``
    (``"dev AP"`` titles a panel ``"QQP: dev AP"``); ``options`` go to ``make_subplots``."""
    titles = [f"{t.upper()}: {what}" if what else t.upper() for what in rows or [""] for t in tasks]
    grid = dict(shared_xaxes=True, vertical_spacing=0.08) if len(rows) > 1 else {}
    fig = make_subplots(
        rows=max(len(rows), 1), cols=max(len(tasks), 1), subplot_titles=titles, **(grid | options)
    )
    return fig.update_layout(template=TEMPLATE, height=height, title=title)


def _axes(fig: go.Figure, x: str | None, *ys: str, **xaxes) -> go.Figure:
    """Title the bottom x axes ``x`` (``xaxes`` go to all) and the first column's y axes ``ys``."""
    fig.update_xaxes(**xaxes).update_xaxes(title=x, row=max(len(ys), 1))
    for row, y in enumerate(ys, start=1):
        fig.update_yaxes(title=y, row=row, col=1)
    return fig


def _tasks(frame: pd.DataFrame) -> list[str]:
    """The frame's tasks in the order they first appear."""
    return list(dict.fromkeys(frame["task"]))


def _long(frames: dict[str, pd.DataFrame], x: str, values, *, var_name: str) -> pd.DataFrame:
    """``{task: frame}`` as one long frame: ``task``, ``x``, ``var_name`` and ``value``."""
    both = pd.concat(frames, names=["task"]).reset_index(level=0)
    return both.melt(["task", x], list(values), var_name=var_name)


def growth_figure(curves: dict[str, pd.DataFrame]) -> go.Figure:
    """Pairs and positives (left) and pairs per positive (right) against items in the split."""
    long = _long(curves, "items", ["pairs", "positives", "ratio"], var_name="what")
    long["line"] = long["task"] + ": " + long["what"].replace({"ratio": "1 : ratio"})
    long["panel"] = long["what"] == "ratio"
    titles = ("The pool grows quadratically, positives linearly", "Imbalance: pairs per positive")
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles).update_layout(template=TEMPLATE)
    draw = dict(by="line", colour="task", dash="what", seeds=False, facet="panel")
    seed_curves(fig, long, "items", "value", **draw).update_yaxes(type="log")
    fig.update_layout(height=420, yaxis_title="count", yaxis2_title="pairs per positive")
    return _axes(fig, "left items in the training split", type="log")


def cluster_figure(sizes: dict[str, pd.Series]) -> go.Figure:
    """Items by number of positive partners (QQP: duplicate cluster size - 1)."""
    fig = panels([], title="Most items have no positive partner at all", height=380)
    for name, series in sizes.items():
        fig.add_bar(x=series.index, y=series.values, name=name, marker_color=COLOURS.get(name))
    fig.update_layout(barmode="group").update_yaxes(type="log")
    return _axes(fig, "positive partners per item", "left items")


def yield_figure(yields: dict[str, pd.DataFrame]) -> go.Figure:
    """Positives found against labels spent: static retrieval vs uniform random labelling."""
    methods = ("static retrieval", "random (one draw)", "random (expected)")
    long = _long(yields, "labels", methods, var_name="method")
    title = "Why random labelling finds almost no positives"
    fig = panels(list(yields), title=title, height=400)
    seed_curves(fig, long, "labels", "value", by="method", seeds=False)
    return _axes(fig, "labels spent", "positives found", type="log")


def pr_figure(curves: dict[str, dict], title: str = "All-pairs precision-recall") -> go.Figure:
    """Estimated all-pairs precision-recall curves (``metrics.pr_curve`` outputs) by name."""
    fig = panels([], title=title)
    for name, c in curves.items():
        fig.add_scatter(x=c["recall"], y=c["precision"], name=name, mode="lines", line_shape="hv")
    fig.add_vline(x=0.2, line_dash="dot", annotation_text="R = 20%")
    fig.update_xaxes(range=[0, 1]).update_yaxes(range=[0, 1.02])
    return _axes(fig, "recall", "precision (all pairs, estimated)")


def active_curves_figure(curves: pd.DataFrame) -> go.Figure:
    """Dev AP against labels, a panel a task: each strategy's mean (± the seeds' std) and seeds
    (the paper's test values are on another scale: its table, not this figure)."""
    title = "dev all-pairs AP per round (mean ± std over seeds)"
    fig = seed_curves(panels(_tasks(curves), title=title), curves, "labels", "ap", interval="std")
    return _axes(fig, "labels collected", "dev all-pairs AP")


def collection_figure(curves: pd.DataFrame) -> go.Figure:
    """The paper's Figure 4, a column a task: dev AP against labels collected, a line a seed of
    each strategy (top), and the share of the labels that are positive (bottom)."""
    title = "What each strategy collects: dev AP and positive share per round, one line a seed"
    fig = panels(_tasks(curves), "dev AP", "positive share of the labels", height=640, title=title)
    runs = dict(by=["strategy", "seed"], seeds=False)
    seed_curves(fig, curves, "labels", "ap", interval=("ap_lo", "ap_hi"), **runs)
    seed_curves(fig, curves, "labels", "positive_share", row=2, **runs)
    fig.update_yaxes(tickformat=".0%", row=2)
    return _axes(fig, "labels collected", "dev all-pairs AP (95% interval)", "positives / labels")


def positives_figure(summary: dict, *, paper: dict | None = None) -> go.Figure:
    """Table 4 as bars: the collected labels' positive share per strategy (``paper``: hollow)."""
    title = "Positives among the collected labels (bar text: mean count)"
    fig = panels([], title=title, height=400).update_layout(showlegend=True)
    for task, strategies in summary.items():
        names = [n for n in strategies if strategies[n]["labels"]]  # not the zero-shot row
        found = [strategies[n]["positives_found"]["mean"] for n in names]
        fig.add_bar(
            x=[f"{task}: {n}" for n in names],
            y=[f / strategies[n]["labels"] for f, n in zip(found, names)],
            name=task,
            marker_color=[COLOURS.get(n) for n in names],
            text=[f"{f:,.0f}" for f in found],
        )
        ref = (paper or {}).get(task)
        if ref:
            named = [n for n in names if n in ref["positives"]]
            fig.add_scatter(
                x=[f"{task}: {n}" for n in named],
                y=[ref["positives"][n] / ref["labels"] for n in named],
                mode="markers",
                marker=dict(symbol="circle-open", size=12, color="black"),
                name=f"paper ({task})",
            )
    fig.update_yaxes(tickformat=".0%")
    return _axes(fig, None, "share of labels that are positive")


def seed_set_figure(rounds: pd.DataFrame) -> go.Figure:
    """The paper's Figure 3, a column a task: dev AP per round for each seed set (top), and the
    share of each round's queried pairs that were positive beside their mean p (bottom)."""
    title = "Uncertainty sampling from two seed sets (round 1 is the seed set)"
    rows = ("dev AP", "queried pairs that were positive")
    fig = panels(_tasks(rounds), *rows, height=620, title=title)
    seed_curves(fig, rounds, "round", "dev AP", by="seed set")
    ids = ["task", "seed set", "seed", "round"]
    shares = rounds.melt(ids, ["batch positive share", "mean p"], var_name="what")
    lines = dict(by=["seed set", "what"], dash="what", seeds=False, row=2)
    seed_curves(fig, shares, "round", "value", **lines)
    fig.update_yaxes(tickformat=".0%", row=2)
    return _axes(fig, "round", "dev all-pairs AP", "share (solid) / mean p (dotted)", dtick=1)


def budget_curves_figure(
    curves: pd.DataFrame, *, strategies=(A, B), reference: dict | None = None
) -> go.Figure:
    """Dev AP against labels (top) and the collected pairs' positive share (bottom), a column a
    task, of ``strategies``; ``reference`` ``{task: labels}`` marks where a strategy passed the
    other's budget."""
    frame = curves[curves["strategy"].isin(strategies)]
    tasks = _tasks(frame)
    title = "Adaptive vs static labels at equal budgets (band: mean 95% bootstrap interval)"
    fig = panels(tasks, "dev AP", "collected pairs that are positive", height=620, title=title)
    seed_curves(fig, frame, "labels", "ap", interval=("ap_lo", "ap_hi"), band=True)
    seed_curves(fig, frame, "labels", "positive_share", seeds=False, row=2)
    for col, task in enumerate(tasks, start=1):
        if pd.notna((reference or {}).get(task)):
            dotted = dict(dash="dot", color="black", width=1)
            fig.add_vline(x=reference[task], line=dotted, row=1, col=col)
    fig.update_yaxes(tickformat=".0%", row=2)
    return _axes(fig, "labels collected", "dev all-pairs AP", "positive share")


def noise_figure(summary: dict, groups) -> go.Figure:
    """Test AP of every run (a point each) of the groups named, per task."""
    tasks = list(summary)
    fig = panels(tasks, title="Run-to-run spread: every point is one run of the same budget")
    for col, task in enumerate(tasks, start=1):
        for name in (g for g in groups if g in summary[task]):
            fig.add_box(
                y=summary[task][name]["ap"]["per_seed"],
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
    return _axes(fig, None, "test all-pairs AP")


def cost_figure(curves: pd.DataFrame, *, dollars_per_label: float) -> go.Figure:
    """Dev AP against what the labels cost to annotate, per task."""
    frame = curves[curves["strategy"].isin((A, B))]
    fig = active_curves_figure(frame.assign(labels=frame["labels"] * dollars_per_label))
    fig.update_xaxes(title="annotation cost ($)", tickprefix="$")
    title = f"dev AP against annotation cost (${dollars_per_label:.2f} a label)"
    return fig.update_layout(title=title)


def silver_figure(silver: pd.DataFrame) -> go.Figure:
    """Each sampler's silver pairs' cross-encoder logit minus its dev threshold, a panel a task."""
    tasks = _tasks(silver)
    title = "Silver labels per sampler: above the dotted line is a silver positive"
    fig = panels(tasks, shared_yaxes=True, height=440, title=title)
    for (task, sampler), frame in silver.groupby(["task", "sampler"], sort=False):
        fig.add_box(
            y=frame["margin"],
            name=f"{sampler}<br>{frame['label'].mean():.1%} positive",
            boxpoints=False,
            showlegend=False,
            marker_color=COLOURS.get(task),
            row=1,
            col=tasks.index(task) + 1,
        )
    fig.add_hline(y=0, line_dash="dot", line_color="black", row="all", col="all")
    return _axes(fig, None, "cross-encoder logit - dev threshold")


def silver_size_figure(curve: pd.DataFrame) -> go.Figure:
    """All-pairs test AP against the silver pairs added, a line per task and gold source."""
    lines = curve.assign(line=curve["task"] + " / " + curve["gold"] + " gold: " + curve["sampler"])
    fig = panels([], title="AP against silver-set size")
    draw = dict(by="line", colour="task", interval=("ap_low", "ap_high"), seeds=False, facet=None)
    seed_curves(fig, lines, "n_silver", "ap", **draw)
    return _axes(fig, "silver pairs added to the gold set", "all-pairs test AP")


def annotator_noise_figure(metrics: dict) -> go.Figure:
    """All-pairs test AP against the annotator's noise, a panel a task, from notebook 07's
    ``all_pairs`` metrics."""
    frame = pd.DataFrame(
        [
            (task, noise, s, r["ap"], *r["ap_ci"])
            for task, by_noise in metrics.items()
            for noise, row in by_noise.items()
            for s, r in row.items()
            if r
        ],
        columns=["task", "noise", "strategy", "ap", "lo", "hi"],
    )
    fig = panels(list(metrics), shared_yaxes=True, title="Active learning under annotator noise")
    seed_curves(fig, frame, "noise", "ap", interval=("lo", "hi"), seeds=False)
    return _axes(fig, "annotator noise (flip rate)", "all-pairs test AP", type="category")


def case_study_figure(metrics: dict) -> go.Figure:
    """Test AUC per part and strategy, a panel an annotation, from notebook 07's ``case_study``."""
    title = "Which target pairs to annotate (dashed: source only)"
    fig = make_subplots(rows=1, cols=len(metrics), subplot_titles=list(metrics), shared_yaxes=True)
    parts = {"high_error": "#d62728", "low_error": "#1f77b4", "all": "#444444"}
    for col, rows in enumerate(metrics.values(), start=1):
        names = [r for r in rows if r != "initial"]
        for part, colour in parts.items():
            fig.add_bar(
                x=names,
                y=[rows[n].get(f"auc_{part}") for n in names],
                name=part.replace("_", " "),
                legendgroup=part,
                showlegend=col == 1,
                marker_color=colour,
                row=1,
                col=col,
            )
            if rows["initial"].get(f"auc_{part}") is not None:
                dashed = dict(color=colour, dash="dash", width=1)
                fig.add_hline(y=rows["initial"][f"auc_{part}"], line=dashed, row=1, col=col)
    fig.update_layout(template=TEMPLATE, height=440, barmode="group", title=title)
    return _axes(fig, None, "test AUC")
