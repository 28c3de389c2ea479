"""Evaluation on all pairs: :mod:`.strata` (importable from here), :mod:`.metrics`,
:mod:`.candidates`, :mod:`.heuristic`, :mod:`.stats`, :mod:`.ranking`, :mod:`.significance`,
and the audit (:mod:`.audit`, :mod:`.audit_prior`, :mod:`.audit_estimate`)."""

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
