"""Plotly figures for the notebooks: one function a figure, data in, ``go.Figure`` out. Every
figure of a quantity over seeds draws it with :func:`seed_curves`: the mean a line, each seed a
faint point, an interval as error bars or a band."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

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
    """Draw ``y`` against ``x`` per ``by`` value into ``fig`` (a :func:`panels` grid): the mean of
    ``y`` over the rows at each ``x`` (the seeds) as a line (a lone ``x``: a large point), each
    row as a faint point (``seeds``; hover ``"seed s"``) and ``interval`` as error bars or a
    ``band``: ``"std"`` (± the seeds' std), ``"range"`` (their min to max) or two columns
    ``(low, high)`` averaged like ``y``; an interval of no width is not drawn.

    ``by`` may list columns: the first names the legend entry and the colour, the others split it
    into lines (one a seed, say). ``facet``'s values take a column each from ``col`` on, in the
    order they appear. ``colour`` and ``dash`` name columns that pick the line's COLOURS key and
    its DASHES (in order of appearance); ``hover`` a column whose mean the line's hover shows."""
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
        mean = _over_seeds(rows, x, y, interval, hover=hover)
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
            faint = dict(color=tint, opacity=0.35, size=5)
            seed = [f"seed {s}" for s in rows["seed"]]
            fig.add_scatter(
                x=rows[x],
                y=rows[y],
                mode="markers",
                marker=faint,
                hovertext=seed,
                legendgroup=name,
                showlegend=False,
                **cell,
            )
    return fig


def _over_seeds(rows: pd.DataFrame, x: str, y: str, interval, *, hover) -> pd.DataFrame:
    """Per ``x`` (sorted where numeric): the mean ``y``, the interval's ``lo`` and ``hi`` and the
    mean ``hover``."""
    at = rows.groupby(x, sort=pd.api.types.is_numeric_dtype(rows[x]))
    mean = pd.DataFrame({"y": at[y].mean()})
    if interval == "std":
        spread = at[y].std().fillna(0)  # one seed: no spread
        mean["lo"], mean["hi"] = mean["y"] - spread, mean["y"] + spread
    elif interval == "range":
        mean["lo"], mean["hi"] = at[y].min(), at[y].max()
    elif interval is not None:
        low, high = interval
        mean["lo"], mean["hi"] = at[low].mean(), at[high].mean()
    if hover:
        mean["hover"] = at[hover].mean()
    return mean.reset_index()


def _interval(fig: go.Figure, mean: pd.DataFrame, colour: str, *, band: bool, **where):
    """``mean``'s ``lo`` to ``hi`` as a translucent band drawn into ``fig``, or as the error bars
    returned; nothing where there is no interval or it has no width."""
    if "lo" not in mean or not (mean["hi"] > mean["lo"]).any():
        return None
    if not band:
        return dict(
            type="data",
            symmetric=False,
            thickness=1,
            array=mean["hi"] - mean["y"],
            arrayminus=mean["y"] - mean["lo"],
        )
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
    """``#rrggbb`` as a translucent ``rgba(...)`` (grey when the colour is unknown)."""
    colour = (colour or "#7f7f7f").lstrip("#")
    r, g, b = (int(colour[k : k + 2], 16) for k in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def panels(tasks, *rows: str, title: str, height: int = 420, **options) -> go.Figure:
    """A figure ``title``d of one column a task and one row per title in ``rows`` (``"dev AP"``
    titles the panels ``"QQP: dev AP"``; none: one row titled by the task); ``options`` (the
    ``shared_yaxes``, say) go to ``make_subplots``."""
    titles = [f"{t.upper()}: {what}" if what else t.upper() for what in rows or [""] for t in tasks]
    grid = dict(shared_xaxes=True, vertical_spacing=0.08) if len(rows) > 1 else {}
    fig = make_subplots(
        rows=max(len(rows), 1),
        cols=max(len(tasks), 1),
        subplot_titles=titles,
        **(grid | options),
    )
    return fig.update_layout(template=TEMPLATE, height=height, title=title)


def _tasks(frame: pd.DataFrame) -> list[str]:
    """The frame's tasks in the order they first appear."""
    return list(dict.fromkeys(frame["task"]))


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
    series = (("pairs", 1, None), ("positives", 1, "dot"), ("ratio", 2, None))
    for name, frame in curves.items():
        for what, col, dash in series:
            fig.add_scatter(
                x=frame["items"],
                y=frame[what],
                name=f"{name}: " + ("1 : ratio" if what == "ratio" else what),
                mode="lines+markers",
                line=dict(color=COLOURS.get(name), dash=dash),
                showlegend=col == 1,
                row=1,
                col=col,
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
    seeds (line, bars: ± the seeds' std) and the seeds themselves (faint points); ``paper`` adds
    the paper's final test numbers ``{task: {strategy: {value: x}}}`` as dotted levels."""
    label = {"ap": "dev all-pairs AP", "p_at_r20": "dev precision at 20% recall"}.get(value, value)
    title = f"{label} per round (mean ± std over seeds" + (
        "; dotted: the paper's test value)" if paper else ")"
    )
    tasks = _tasks(curves)
    fig = seed_curves(panels(tasks, title=title), curves, "labels", value, interval="std")
    for col, task in enumerate(tasks, start=1):
        ran = set(curves.loc[curves["task"] == task, "strategy"])
        for strategy, ref in (paper or {}).get(task, {}).items():
            if strategy in ran and ref.get(value) is not None:
                dotted = dict(color=COLOURS.get(strategy), dash="dot", width=1)
                fig.add_hline(y=ref[value], line=dotted, row=1, col=col)
    fig.update_xaxes(title="labels collected")
    fig.update_yaxes(title=label, row=1, col=1)
    return fig


def collection_figure(curves: pd.DataFrame) -> go.Figure:
    """The paper's Figure 4 per task (a column each): dev AP against labels collected, every seed
    of every strategy as its own line with its 95% bootstrap interval per round (top), and the
    share of the collected labels that are positive (bottom). Strategies trained only at the
    full budget are single points."""
    title = "What each strategy collects: dev AP and positive share per round, one line a seed"
    fig = panels(_tasks(curves), "dev AP", "positive share of the labels", height=640, title=title)
    runs = dict(by=["strategy", "seed"], seeds=False)
    seed_curves(fig, curves, "labels", "ap", interval=("ap_lo", "ap_hi"), **runs)
    seed_curves(fig, curves, "labels", "positive_share", row=2, **runs)
    fig.update_xaxes(title="labels collected", row=2)
    fig.update_yaxes(title="dev all-pairs AP (95% interval)", row=1, col=1)
    fig.update_yaxes(title="positives / labels", tickformat=".0%", row=2, col=1)
    return fig


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
    fig = panels(
        _tasks(rounds),
        "dev AP",
        "queried pairs that were positive",
        height=620,
        title="Uncertainty sampling from two seed sets (round 1 is the seed set)",
    )
    seed_curves(fig, rounds, "round", "dev AP", by="seed set")
    shares = rounds.melt(
        id_vars=["task", "seed set", "seed", "round"],
        value_vars=["batch positive share", "mean p"],
        var_name="what",
    )
    seed_curves(
        fig, shares, "round", "value", by=["seed set", "what"], dash="what", seeds=False, row=2
    )
    fig.update_xaxes(title="round", dtick=1, row=2)
    fig.update_yaxes(title="dev all-pairs AP", row=1, col=1)
    fig.update_yaxes(tickformat=".0%", row=2)
    fig.update_yaxes(title="share (solid) / mean p (dotted)", row=2, col=1)
    return fig


def budget_curves_figure(
    curves: pd.DataFrame,
    strategies=("uncertainty", "static_retrieval"),
    *,
    reference: dict | None = None,
) -> go.Figure:
    """The paper's Figure 4 per task (columns): dev AP against labels with the mean bootstrap
    interval as a band (top), and the share of all collected pairs that are positive (bottom).
    ``reference`` ``{task: labels}`` marks where a strategy passed the other's full budget."""
    frame = curves[curves["strategy"].isin(strategies)]
    tasks = _tasks(frame)
    fig = panels(
        tasks,
        "dev AP",
        "collected pairs that are positive",
        height=620,
        title="Adaptive vs static labels at equal budgets (band: mean 95% bootstrap interval)",
    )
    seed_curves(fig, frame, "labels", "ap", interval=("ap_lo", "ap_hi"), band=True)
    seed_curves(fig, frame, "labels", "positive_share", seeds=False, row=2)
    for col, task in enumerate(tasks, start=1):
        if reference and reference.get(task) is not None and pd.notna(reference[task]):
            dotted = dict(dash="dot", color="black", width=1)
            fig.add_vline(x=reference[task], line=dotted, row=1, col=col)
    fig.update_xaxes(title="labels collected", row=2)
    fig.update_yaxes(title="dev all-pairs AP", row=1, col=1)
    fig.update_yaxes(tickformat=".0%", row=2)
    fig.update_yaxes(title="positive share", row=2, col=1)
    return fig


def noise_figure(summary: dict, groups) -> go.Figure:
    """Test AP of every run (one point each) for the groups named, per task: how far equally
    good label sets and training seeds move the result."""
    tasks = list(summary)
    fig = panels(tasks, title="Run-to-run spread: every point is one run of the same budget")
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
    return fig


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
    fig = panels(
        tasks,
        shared_yaxes=True,
        height=440,
        title="Silver labels per sampler: above the dotted line is a silver positive",
    )
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
    return fig


def silver_size_figure(curve: pd.DataFrame) -> go.Figure:
    """All-pairs test AP (mean over seeds, with the seeds' mean 95% interval) against the number
    of silver pairs added to the gold set, one line per task and gold source."""
    lines = curve.assign(line=curve["task"] + " / " + curve["gold"] + " gold: " + curve["sampler"])
    fig = seed_curves(
        make_subplots(),
        lines,
        "n_silver",
        "ap",
        by="line",
        colour="task",
        interval=("ap_low", "ap_high"),
        seeds=False,
        facet=None,
    )
    fig.update_xaxes(title="silver pairs added to the gold set")
    fig.update_yaxes(title="all-pairs test AP")
    return fig.update_layout(template=TEMPLATE, height=420, title="AP against silver-set size")


def annotator_noise_figure(metrics: dict) -> go.Figure:
    """All-pairs test AP (with the 95% interval) against the annotator's noise level, one panel
    per task and one line per strategy (notebook 07's ``all_pairs`` metrics)."""
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
    fig.update_xaxes(title="annotator noise (flip rate)", type="category")
    fig.update_yaxes(title="all-pairs test AP", row=1, col=1)
    return fig


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
