"""Experiments behind notebooks 02-09: sweeps and their tables and metrics files (importable
from here), each notebook's own experiment in its module, and the papers' claims judged as
records (:mod:`.findings`), put in words only by ``pairlab/templates/findings.md.j2``."""

from . import (  # noqa: F401 (exported: __all__ below)
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
from .sweeps import *  # noqa: F401,F403
from .tables import *  # noqa: F401,F403

# the modules above and the public names of summaries, sweeps and tables
__all__ = sorted(name for name in globals() if not name.startswith("_"))
