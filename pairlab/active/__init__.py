"""Active learning over all pairs: strategies (:mod:`.strategies`), committees, a run's
settings (:mod:`.config`), its learner, the round loop (:mod:`.loop`), its run folder
(:mod:`.store`) with the code digest (:mod:`.behaviour`) and archive, and active learning at the
query level for rankers (:mod:`.queries`)."""

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
