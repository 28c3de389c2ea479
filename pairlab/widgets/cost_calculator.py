"""Notebook 08's cost calculator (the web tool Althammer et al. 2023 describe): sliders for the
prices of a :class:`Budget`, and the budget-aware figure redrawn live from the runs' measured
assessments and hours (under papermill: at the prices it was built with)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ..experiments.budget import Budget
from ..experiments.rankers import with_costs
from . import Shown
from .ranker_plots import cost_figure

__all__ = ["CostCalculator", "SLIDERS"]

# Budget field -> (label, min, max, step)
SLIDERS = {
    "assessments_per_hour": ("assessments / h", 5.0, 300.0, 5.0),
    "annotator_per_hour": ("annotator $ / h", 0.0, 200.0, 1.0),
    "gpu_per_hour": ("GPU $ / h", 0.0, 10.0, 0.01),
    "cpu_per_hour": ("CPU $ / h", 0.0, 2.0, 0.001),
}


class CostCalculator(Shown):
    """Sliders over a :class:`Budget` and the cost figure of ``frame``, redrawn on every change."""

    def __init__(self, frame: pd.DataFrame, budget: Budget = Budget()):
        import ipywidgets as w

        self.frame = frame
        self.sliders = {
            name: w.FloatSlider(
                value=getattr(budget, name),
                min=low,
                max=high,
                step=step,
                description=label,
                continuous_update=False,
                style={"description_width": "110px"},
            )
            for name, (label, low, high, step) in SLIDERS.items()
        }
        self.figure = go.FigureWidget(cost_figure(with_costs(frame, budget)))
        self.summary = w.HTML(self._summary(budget))
        for slider in self.sliders.values():
            slider.observe(self.redraw, names="value")
        rows = [w.HBox(list(self.sliders.values())[k : k + 2]) for k in (0, 2)]
        self.widget = w.VBox([*rows, self.summary, self.figure])
        self.widget.add_class("pairlab-cost-calculator")

    @property
    def budget(self) -> Budget:
        return Budget(**{name: float(s.value) for name, s in self.sliders.items()})

    def redraw(self, change=None) -> None:
        """Recompute every cost at the sliders' prices and move the figure's traces to them."""
        self.figure.update(data=cost_figure(with_costs(self.frame, self.budget)).data)
        self.summary.value = self._summary(self.budget)

    def _summary(self, budget: Budget) -> str:
        """Each task's total cost at the largest size per strategy (mean over seeds)."""
        costed = with_costs(self.frame, budget)
        last = costed[costed["round"] == costed.groupby("task")["round"].transform("max")]
        totals = last.groupby(["task", "strategy"], sort=False)["total_cost"].mean()
        parts = [
            f"<b>{task}</b>: " + ", ".join(f"{s} ${v:,.0f}" for (_, s), v in rows.items())
            for task, rows in totals.groupby(level=0, sort=False)
        ]
        hour = f"<i>(at {budget.assessments_per_hour:g} assessments an hour)</i>"
        return f"total cost at the largest size · {' · '.join(parts)} {hour}"
