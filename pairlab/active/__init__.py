"""Active learning over all pairs: strategies (:mod:`.strategies`), committees, a run's
settings (:mod:`.config`), its learner, the round loop (:mod:`.loop`), its run folder
(:mod:`.store`) with the code digest (:mod:`.behaviour`) and archive, and active learning at the
query level for rankers (:mod:`.queries`)."""

from .config import ActiveConfig, schedule
from .learner import CosineBERTLearner
from .loop import ActiveRun, PrintLog, reliability
from .queries import QueryConfig, QueryRun
from .store import run_folder, run_labels

__all__ = [
    "ActiveConfig",
    "ActiveRun",
    "CosineBERTLearner",
    "PrintLog",
    "QueryConfig",
    "QueryRun",
    "reliability",
    "run_folder",
    "run_labels",
    "schedule",
]
