"""A live dashboard of active-learning runs (ipywidgets and a plotly figure), a callback of
:class:`pairlab.active.ActiveRun`: each finished round moves the progress bar and adds to its
run's dev-AP curve, the status line, the candidate-recall and the stage-time tables.
``RunDashboard.open(folder)`` shows finished (or half-finished) run folders the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..active.loop import STAGES, strategy_label
from ..active.store import load_result
from . import Shown

__all__ = ["RunDashboard"]


class RunDashboard(Shown):
    """Round, labels, positives, dev AP per round and time per stage of one or more runs."""

    def __init__(self, total_rounds: int = 0, *, title: str = "active learning"):
        import ipywidgets as w
        import plotly.graph_objects as go

        self.progress = w.IntProgress(
            max=max(total_rounds, 1), description="rounds", bar_style="info"
        )
        self.status = w.HTML(f"<b>{title}</b>: waiting for the first round")
        self.times, self.recall = w.HTML(), w.HTML()
        self.curves = go.Figure().update_layout(
            height=360,
            margin=dict(l=50, r=20, t=40, b=40),
            title="dev AP after each round",
            xaxis_title="labels collected",
            yaxis_title="dev all-pairs AP",
            template="plotly_white",
        )
        # The figure is shown whole in an Output widget, drawn by JupyterLab's plotly renderer,
        # after each round. A plotly FigureWidget sends its changes as messages instead, which a
        # page whose plotly code loads after them (a busy machine) never applies: the live curve
        # stayed empty in 3 of 5 make test runs on a loaded machine (plotly/plotly.py#4956).
        self.figure = w.Output()
        self._draw()
        self.widget = w.VBox([self.status, self.progress, self.figure, self.recall, self.times])
        for name in ("status", "progress", "figure", "recall", "times"):
            getattr(self, name).add_class(f"pairlab-dashboard-{name}")  # for the browser tests
        self.widget.add_class("pairlab-dashboard")
        self.title = title
        self._recalls: dict[str, dict[int, float | None]] = {}  # run -> round -> recall
        self._totals = dict.fromkeys(STAGES, 0.0)

    def __call__(self, event: str, **p) -> None:
        key = (p.get("task"), p.get("strategy"), p.get("seed"))
        if event == "round_finished":
            self._add_round(key, p["record"])
        elif event == "run_reused":
            for record in p["result"]["records"]:
                self._add_round(key, record)
        elif event == "stage":
            took = f"round {p['round']}: {p['stage']} took {p['seconds']:.1f} s"
            self.status.value = f"<b>{self.title}</b> · {_name(key)} · {took}"
        elif event == "run_finished":
            done = self.progress.value >= self.progress.max
            self.progress.bar_style = "success" if done else "info"

    def _add_round(self, key, record: dict) -> None:
        self.progress.value = min(self.progress.value + 1, self.progress.max)
        seconds = record.get("seconds", {})
        for stage, took in seconds.items():
            self._totals[stage] = self._totals.get(stage, 0.0) + took
        dev, recall = record.get("dev"), record.get("candidate_recall")
        scored = f"dev AP {dev['ap']:.3f}" if dev else "not evaluated this round"
        reach = "" if recall is None else f" · candidate recall {recall:.0%}"
        self.status.value = (
            f"<b>{self.title}</b> · {_name(key)} · round {record['round']} · "
            f"{record['labels']:,} labels · {record['positives_found']:,} positives found · "
            f"{scored}{reach}"
        )
        times = {
            "last round": [f"{seconds.get(s, 0.0):.1f}" for s in STAGES],
            "all rounds": [f"{self._totals[s]:.0f}" for s in STAGES],
        }
        self.times.value = _table(pd.DataFrame(times, index=list(STAGES)).T, "seconds")
        if "candidate_recall" in record:  # runs from before it was recorded have none
            self._recalls.setdefault(_name(key), {})[record["round"]] = recall
            recalls = pd.DataFrame(self._recalls).T.sort_index(axis=1)
            percent = recalls.map(lambda v: "–" if pd.isna(v) else f"{v:.0%}")
            self.recall.value = _table(percent, "candidate recall, round")
        if dev is None:
            return
        ap, (low, high) = dev["ap"], dev["ap_ci"]
        trace = next(self.curves.select_traces(dict(name=_name(key))), None)
        if trace is None:  # the run's first evaluated round
            bars = dict(type="data", symmetric=False, array=[], arrayminus=[])
            self.curves.add_scatter(x=[], y=[], mode="lines+markers", name=_name(key), error_y=bars)
            trace = self.curves.data[-1]
        trace.x = (*trace.x, record["labels"])
        trace.y = (*trace.y, ap)
        trace.error_y.array = (*(trace.error_y.array or ()), high - ap)
        trace.error_y.arrayminus = (*(trace.error_y.arrayminus or ()), ap - low)
        self._draw()

    def _draw(self) -> None:
        import plotly.io as pio

        data = pio.renderers["plotly_mimetype"].to_mimebundle(self.curves.to_dict())
        data["text/plain"] = "dev AP after each round"
        self.figure.outputs = ({"output_type": "display_data", "data": data, "metadata": {}},)

    @classmethod
    def open(cls, folder, *, title: str | None = None) -> RunDashboard:
        """A dashboard of the run folder ``folder``, or of every run folder under it."""
        folder = Path(folder)
        runs = sorted(p.parent.parent for p in folder.glob("**/rounds/round_01.json"))
        if not runs:
            raise FileNotFoundError(f"no active-learning run folder at or under {folder}")
        configs = {run: json.loads((run / "config.json").read_text()) for run in runs}
        board = cls(sum(c["rounds"] for c in configs.values()), title=title or folder.name)
        for run, config in configs.items():
            key = (config["task"], strategy_label(config), config["seed"])
            for path in sorted((run / "rounds").glob("round_[0-9][0-9].json")):
                board._add_round(key, json.loads(path.read_text()))
        finished = sum(load_result(run) is not None for run in runs)
        board.progress.bar_style = "success" if finished == len(runs) else "info"
        board.status.value += f" · {finished} of {len(runs)} runs finished"
        return board


def _name(key: tuple) -> str:
    return "/".join(map(str, key))


def _table(frame: pd.DataFrame, corner: str) -> str:
    """``frame`` as a borderless HTML table, ``corner`` naming its rows."""
    return frame.rename_axis(columns=corner).to_html(border=0, justify="center")
