"""Active learning over all pairs: the strategy contract (:mod:`.base`), the criteria and their
registry (:mod:`.strategies`), candidate search as a wrapper (:mod:`.candidate_search`), a run's
settings (:mod:`.config`), the round loop (:mod:`.loop`) with its stage timer (:mod:`.stages`),
the learner it trains (:mod:`.learner`), the run folder (:mod:`.store`, :mod:`.runfolder`) and
its committed archive (:mod:`.archive`); the batch's calibration (:mod:`.calibration`); committees and their vote entropy
(:mod:`.committee`) and k-means diversity (:mod:`.diversity`), which both levels use; and active
learning at the query level for rankers: its strategies and settings (:mod:`.queries`) and its
loop (:mod:`.query_loop`).

What notebooks and sweeps use is importable from here (``from pairlab.active import PrintLog``)."""

from . import (
    archive,
    base,
    calibration,
    candidate_search,
    committee,
    config,
    diversity,
    learner,
    loop,
    queries,
    query_loop,
    stages,
    store,
    strategies,
)
from .calibration import reliability
from .config import ActiveConfig, schedule
from .learner import CosineBERTLearner
from .log import PrintLog
from .loop import STAGES, ActiveRun
from .queries import QUERY_STRATEGIES, QueryConfig
from .query_loop import QueryLog, QueryRun
from .store import load_result, run_folder, run_labels
from .strategies import STRATEGIES, make_strategy, register_strategy

__all__ = [
    "archive",
    "base",
    "calibration",
    "candidate_search",
    "committee",
    "config",
    "diversity",
    "learner",
    "loop",
    "queries",
    "query_loop",
    "stages",
    "store",
    "strategies",
    "ActiveConfig",
    "ActiveRun",
    "CosineBERTLearner",
    "PrintLog",
    "QUERY_STRATEGIES",
    "QueryConfig",
    "QueryLog",
    "QueryRun",
    "STAGES",
    "STRATEGIES",
    "load_result",
    "make_strategy",
    "register_strategy",
    "reliability",
    "run_folder",
    "run_labels",
    "schedule",
]
