"""A live dashboard of active-learning runs (ipywidgets + a plotly FigureWidget).

It is a callback of :class:`pairlab.active.ActiveRun`: pass it in ``callbacks`` and display it;
each finished round moves the progress bar, adds a point to the dev-AP curve of its run and
updates the status line, the candidate-recall table (runs over candidates: the share of the
positives still unlabelled that the round's candidates held) and the stage-time table. ``RunDashboard.open(folder)`` shows finished
(or half-finished) run folders the same way. Without a widget frontend (papermill, a terminal)
it is harmless: the notebook prints and saves static figures alongside.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..active.loop import STAGES, strategy_label
from ..active.store import load_result

__all__ = ["RunDashboard"]


class RunDashboard:
    """Round, labels, positives, dev AP per round and time per stage of one or more runs."""

    def __init__(self, total_rounds: int = 0, *, title: str = "active learning"):
        import ipywidgets as w
        import plotly.graph_objects as go

        self.progress = w.IntProgress(
            value=0, min=0, max=max(total_rounds, 1), description="rounds", bar_style="info"
        )
        self.status = w.HTML(f"<b>{title}</b>: waiting for the first round")
        self.times = w.HTML()
        self.recall = w.HTML()
        self.figure = go.FigureWidget(
            layout=dict(
                height=360,
                margin=dict(l=50, r=20, t=40, b=40),
                title="dev AP after each round",
                xaxis_title="labels collected",
                yaxis_title="dev all-pairs AP",
                template="plotly_white",
            )
        )
        self.widget = w.VBox([self.status, self.progress, self.figure, self.recall, self.times])
        for widget, name in (
            (self.widget, ""),
            (self.status, "-status"),
            (self.progress, "-progress"),
            (self.figure, "-figure"),
            (self.recall, "-recall"),
            (self.times, "-times"),
        ):
            widget.add_class(f"pairlab-dashboard{name}")  # stable handles for the browser tests
        self.title = title
        self._traces: dict[tuple, int] = {}
        self._recalls: dict[tuple, dict[int, float | None]] = {}  # run -> round -> candidate recall
        self._totals = {stage: 0.0 for stage in STAGES}
        self._stage_now = ""

    def __call__(self, event: str, **p) -> None:
        key = (p.get("task"), p.get("strategy"), p.get("seed"))
        if event == "round_finished":
            self._add_round(key, p["record"])
        elif event == "run_reused":
            for record in p["result"]["records"]:
                self._add_round(key, record)
        elif event == "stage":
            self._stage_now = f" · round {p['round']}: {p['stage']} took {p['seconds']:.1f} s"
            self.status.value = self._status(key, None)
        elif event == "run_finished":
            self.progress.bar_style = (
                "success" if self.progress.value >= self.progress.max else "info"
            )

    def _add_round(self, key, record: dict) -> None:
        self.progress.value = min(self.progress.value + 1, self.progress.max)
        for stage, seconds in record.get("seconds", {}).items():
            self._totals[stage] = self._totals.get(stage, 0.0) + seconds
        self.status.value = self._status(key, record)
        self.times.value = _times_table(record.get("seconds", {}), self._totals)
        if "candidate_recall" in record:  # runs from before it was recorded have none
            self._recalls.setdefault(key, {})[record["round"]] = record["candidate_recall"]
            self.recall.value = _recall_table(self._recalls)
        if record.get("dev") is None:
            return
        dev = record["dev"]
        if key not in self._traces:
            self.figure.add_scatter(
                x=[],
                y=[],
                mode="lines+markers",
                name="/".join(map(str, key)),
                error_y=dict(type="data", symmetric=False, array=[], arrayminus=[]),
            )
            self._traces[key] = len(self.figure.data) - 1
        trace = self.figure.data[self._traces[key]]
        with self.figure.batch_update():
            trace.x = tuple(trace.x) + (record["labels"],)
            trace.y = tuple(trace.y) + (dev["ap"],)
            trace.error_y.array = tuple(trace.error_y.array or ()) + (dev["ap_ci"][1] - dev["ap"],)
            trace.error_y.arrayminus = tuple(trace.error_y.arrayminus or ()) + (
                dev["ap"] - dev["ap_ci"][0],
            )

    def _status(self, key, record) -> str:
        who = "/".join(map(str, key))
        if record is None:
            return f"<b>{self.title}</b> · {who}{self._stage_now}"
        dev = record.get("dev")
        ap = f"dev AP {dev['ap']:.3f}" if dev else "not evaluated this round"
        recall = record.get("candidate_recall")
        reach = "" if recall is None else f" · candidate recall {recall:.0%}"
        return (
            f"<b>{self.title}</b> · {who} · round {record['round']} · "
            f"{record['labels']:,} labels · {record['positives_found']:,} positives found · "
            f"{ap}{reach}"
        )

    @classmethod
    def open(cls, folder, *, title: str | None = None) -> RunDashboard:
        """A dashboard of the run folder ``folder``, or of every run folder under it: the bar
        counts the rounds done of those the runs' configs plan, and turns green when every
        run has finished (its ``result.json`` written)."""
        folder = Path(folder)
        runs = sorted(p.parent.parent for p in folder.glob("**/rounds/round_01.json"))
        if not runs:
            raise FileNotFoundError(f"no active-learning run folder at or under {folder}")
        configs = {run: json.loads((run / "config.json").read_text()) for run in runs}
        board = cls(sum(c["rounds"] for c in configs.values()), title=title or folder.name)
        finished = 0
        for run, config in configs.items():
            key = (config["task"], strategy_label(config), config["seed"])
            for path in sorted((run / "rounds").glob("round_[0-9][0-9].json")):
                board._add_round(key, json.loads(path.read_text()))
            finished += load_result(run) is not None
        board.progress.bar_style = "success" if finished == len(runs) else "info"
        board.status.value += f" · {finished} of {len(runs)} runs finished"
        return board

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)


def _recall_table(recalls: dict) -> str:
    """Candidate recall per run (rows) and round (columns), in percent."""
    rounds = sorted({r for by_round in recalls.values() for r in by_round})
    head = "".join(f"<th style='padding:0 8px'>{r}</th>" for r in rounds)
    rows = "".join(
        f"<tr><td>{'/'.join(map(str, key))}</td>"
        + "".join(f"<td style='padding:0 8px'>{_percent(by_round.get(r))}</td>" for r in rounds)
        + "</tr>"
        for key, by_round in recalls.items()
    )
    return f"<table><tr><th>candidate recall, round</th>{head}</tr>{rows}</table>"


def _percent(value) -> str:
    return "–" if value is None else f"{value:.0%}"


def _times_table(last: dict, totals: dict) -> str:
    stages = [s for s in STAGES if s in totals]
    head = "".join(f"<th style='padding:0 8px'>{s}</th>" for s in stages)
    row_last = "".join(f"<td style='padding:0 8px'>{last.get(s, 0.0):.1f}</td>" for s in stages)
    row_total = "".join(f"<td style='padding:0 8px'>{totals[s]:.0f}</td>" for s in stages)
    return (
        f"<table><tr><th>seconds</th>{head}</tr><tr><td>last round</td>{row_last}</tr>"
        f"<tr><td>all rounds</td>{row_total}</tr></table>"
    )
