"""Label your own pairs: a person in the loop (:mod:`.session`, :mod:`.settings`, :mod:`.worker`),
the audit's estimate (:mod:`.audit`), :mod:`.export` and, with the oracle, :mod:`.comparison`."""

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
