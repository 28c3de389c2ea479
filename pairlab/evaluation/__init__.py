"""Evaluation on all pairs, its modules below; :mod:`.strata`'s names are importable from here."""

from . import (  # noqa: F401 (exported: __all__ below)
    audit,
    audit_estimate,
    audit_prior,
    candidates,
    heuristic,
    metrics,
    ranking,
    significance,
    stats,
    strata,
)
from .strata import *  # noqa: F401,F403

__all__ = sorted(name for name in globals() if not name.startswith("_"))
