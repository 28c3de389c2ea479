"""Active learning over all pairs: the strategies and candidate search (:mod:`.strategies`),
committees (:mod:`.committee`), a run's settings (:mod:`.config`), the learner it trains
(:mod:`.learner`), the round loop (:mod:`.loop`), its run folder (:mod:`.store`) with the
strategy's code digest (:mod:`.behaviour`) and committed archive (:mod:`.archive`), and active
learning at the query level for rankers (:mod:`.queries`).

What notebooks and sweeps use is importable from here (``from pairlab.active import PrintLog``)."""

from .config import ActiveConfig, schedule
from .learner import CosineBERTLearner
from .loop import STAGES, ActiveRun, PrintLog, reliability
from .queries import QUERY_STRATEGIES, QueryConfig, QueryRun
from .store import load_result, run_folder, run_labels
from .strategies import STRATEGIES, make_strategy, register_strategy

__all__ = [
    "ActiveConfig",
    "ActiveRun",
    "CosineBERTLearner",
    "PrintLog",
    "QUERY_STRATEGIES",
    "QueryConfig",
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
