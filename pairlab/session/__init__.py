"""Label your own pairs: a person in the active-learning loop (:mod:`.session`), the loop's
worker process (:mod:`.worker`) and what the session exports (:mod:`.export`). Above the widgets:
a session shows the labelling widget; below the notebook helpers."""
from . import export, session, worker
from .session import LabelingSession

__all__ = ["export", "session", "worker", "LabelingSession"]
