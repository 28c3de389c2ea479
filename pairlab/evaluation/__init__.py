"""Evaluation on all pairs: the strata and the estimator's entry points (:mod:`.strata`), the
estimator itself (:mod:`.metrics`), faiss neighbour pairs (:mod:`.candidates`: ``D_near`` here,
``D_close`` for active learning), balanced-data metrics (:mod:`.heuristic`), dataset
statistics against the strata (:mod:`.stats`), ranking metrics over the whole right-hand side
(:mod:`.ranking`: nDCG@10, MRR@10) and paired significance over queries (:mod:`.significance`).

The strata's names are importable from here (``from pairlab.evaluation import EvalConfig``)."""
from . import candidates, heuristic, metrics, ranking, significance, stats, strata
from ..models.embed import embed_pool
from ..models.scoring import CosineScorer
from .strata import *  # noqa: F401,F403
from .strata import __all__ as _strata

__all__ = ["candidates", "heuristic", "metrics", "ranking", "significance", "stats", "strata",
           "CosineScorer", "embed_pool", *_strata]
