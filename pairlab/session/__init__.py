"""Label your own pairs: a person in the active-learning loop (:mod:`.session`), the loop's
worker process (:mod:`.worker`), what the session exports (:mod:`.export`) and, with the oracle,
the session against other strategies (:mod:`.comparison`); its settings (:mod:`.settings`). Above the widgets (a session shows
the labelling widget), below the notebook helpers."""

from . import audit, comparison, export, guide, session, settings, worker
from .comparison import compare_strategies, comparison_record, coverage_sessions, coverage_table
from .session import LabelingSession
from .settings import SessionSettings

__all__ = [
    "audit",
    "comparison",
    "export",
    "guide",
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
