"""Experiments: sweeps of active-learning runs (:mod:`.sweeps`), the tables and frames notebooks
show (:mod:`.tables`), the metrics files they record (:mod:`.summaries`), budget views of curves
(:mod:`.budget`; the data-efficiency factor, :mod:`.data_efficiency`), models trained on stated data (:mod:`.baselines`, notebook 02), Augmented
SBERT (:mod:`.augsbert`, notebook 06), EAGLE's case study (:mod:`.eagle`), runs under
annotator noise (:mod:`.label_noise`, notebook 07), query-level active learning for rankers
against random (:mod:`.rankers`, its tables :mod:`.ranker_tables`, notebook 08) and when
adaptivity pays (notebook 09: the budget regime, :mod:`.adaptivity`; the starting encoder,
:mod:`.encoders`). Each claim checked on
our metrics is a record, judged by one rule (:mod:`.findings`); its words are written once, in
``pairlab/templates/findings.md.j2``.

Sweeps, tables and summaries are importable from here (``experiments.sweep(...)``,
``experiments.table3(...)``, ``experiments.budget_metrics(...)``)."""

from . import (
    adaptivity,
    augsbert,
    baselines,
    budget,
    data_efficiency,
    eagle,
    encoders,
    findings,
    label_noise,
    ranker_tables,
    rankers,
    summaries,
    sweeps,
    tables,
)
from .summaries import *  # noqa: F401,F403
from .summaries import __all__ as _summaries
from .sweeps import *  # noqa: F401,F403
from .sweeps import __all__ as _sweeps
from .tables import *  # noqa: F401,F403
from .tables import __all__ as _tables

__all__ = [
    "adaptivity",
    "augsbert",
    "baselines",
    "budget",
    "data_efficiency",
    "eagle",
    "encoders",
    "findings",
    "label_noise",
    "ranker_tables",
    "rankers",
    "summaries",
    "sweeps",
    "tables",
    *_sweeps,
    *_tables,
    *_summaries,
]
