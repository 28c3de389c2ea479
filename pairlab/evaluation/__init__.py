"""Evaluation on all pairs: the strata and the estimator's entry points (:mod:`.strata`), the
estimator (:mod:`.metrics`), faiss neighbour pairs (:mod:`.candidates`), balanced-data metrics
(:mod:`.heuristic`), dataset statistics (:mod:`.stats`), ranking metrics (:mod:`.ranking`),
paired significance (:mod:`.significance`), and the audit over all pairs: strata and draws
(:mod:`.audit`), each stratum's rate prior (:mod:`.audit_prior`) and the estimates of how far
the labelling is (:mod:`.audit_estimate`). The strata's names are importable from here."""

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
from .audit import Audit, AuditStrata, draw_audit, stratify
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
    "Audit",
    "AuditStrata",
    "draw_audit",
    "stratify",
    *_strata,
]
