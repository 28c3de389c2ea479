"""Experiments behind notebooks 02-09: sweeps (:mod:`.sweeps`; on Ray, :mod:`.distributed`), their
tables and metrics files (:mod:`.tables`, :mod:`.summaries`, :mod:`.budget`,
:mod:`.data_efficiency`; importable from here), and each notebook's experiment: 02
:mod:`.baselines`, 06 :mod:`.augsbert`, 07 :mod:`.eagle` and
:mod:`.label_noise`, 08 :mod:`.rankers` (:mod:`.ranker_tables`), 09 :mod:`.adaptivity` and
:mod:`.encoders`. A claim checked is a record (:mod:`.findings`), put in words only by
``pairlab/templates/findings.md.j2``."""

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
