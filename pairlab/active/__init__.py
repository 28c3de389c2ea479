"""Active learning over all pairs: the strategy contract (:mod:`.base`), the criteria and their
registry (:mod:`.strategies`), candidate search as a wrapper (:mod:`.candidate_search`), a run's
settings (:mod:`.config`), the round loop (:mod:`.loop`), the learner it trains
(:mod:`.learner`) and the run folder (:mod:`.store`).

What notebooks and sweeps use is importable from here (``from pairlab.active import PrintLog``)."""
from . import base, candidate_search, config, learner, loop, store, strategies
from .config import ActiveConfig, schedule
from .learner import CosineBERTLearner
from .loop import STAGES, ActiveRun, PrintLog, reliability
from .store import load_result, run_folder, run_labels
from .strategies import STRATEGIES, make_strategy

__all__ = ["base", "candidate_search", "config", "learner", "loop", "store", "strategies",
           "ActiveConfig", "ActiveRun", "CosineBERTLearner", "PrintLog", "STAGES", "STRATEGIES",
           "load_result", "make_strategy", "reliability", "run_folder", "run_labels", "schedule"]
