"""Evaluation on all pairs, its modules below; :mod:`.strata`'s names are importable from here."""

from . import (
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
from .strata import __all__ as _strata

__all__ = [
    "audit",
    "audit_estimate",
    "audit_prior",
    "candidates",
    "heuristic",
    "metrics",
    "ranking",
    "significance",
    "stats",
    "strata",
    *_strata,
]
