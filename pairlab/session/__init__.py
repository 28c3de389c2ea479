"""Label your own pairs: a person in the active-learning loop (:mod:`.session`, its settings
:mod:`.settings`, its worker process :mod:`.worker`), the audit's estimate (:mod:`.audit`), what
the session exports (:mod:`.export`) and, with the oracle, the session against
other strategies (:mod:`.comparison`). Above the widgets, below the notebook helpers."""

from . import audit, comparison, export, session, settings, worker
from .comparison import compare_strategies, comparison_record, coverage_sessions, coverage_table
from .session import LabelingSession
from .settings import SessionSettings

__all__ = [
    "audit",
    "comparison",
    "export",
    "session",
    "settings",
    "worker",
    "LabelingSession",
    "SessionSettings",
    "compare_strategies",
    "comparison_record",
    "coverage_sessions",
    "coverage_table",
]
