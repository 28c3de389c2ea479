"""Evaluation on all pairs: the strata and the estimator's entry points (:mod:`.strata`), the
estimator itself (:mod:`.metrics`), faiss neighbour pairs (:mod:`.candidates`: ``D_near`` here,
``D_close`` for active learning), balanced-data metrics (:mod:`.heuristic`), dataset
statistics against the strata (:mod:`.stats`), ranking metrics over the whole right-hand side
(:mod:`.ranking`: nDCG@10, MRR@10), paired significance over queries (:mod:`.significance`),
and the audit over all pairs: score strata and stratified draws (:mod:`.audit`), the prior of
each stratum's match rate (:mod:`.audit_prior`) and the estimates of how far the labelling is
(:mod:`.audit_estimate`).

The strata's names are importable from here (``from pairlab.evaluation import EvalConfig``)."""

from ..models.embed import embed_pool
from ..models.scoring import CosineScorer
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
    "CosineScorer",
    "embed_pool",
    *_strata,
]
