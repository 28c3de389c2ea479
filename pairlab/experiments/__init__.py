"""Experiments behind notebooks 02-09: sweeps and their tables and metrics files (importable
from here), each notebook's own experiment in its module, and the papers' claims judged as
records (:mod:`.findings`), put in words only by ``pairlab/templates/findings.md.j2``."""

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
