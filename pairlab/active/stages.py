"""Wall time per stage of one active-learning round (embed, search, select, annotate, train,
export, evaluate), each stage emitted as an event of the run."""

from __future__ import annotations

import time
from contextlib import contextmanager

from ..models.inference import recording_exports

__all__ = ["Stages"]


class Stages:
    """Wall time per stage of one round, each emitted as a ``stage`` event. A stage inside
    another (the candidate search inside the selection) counts once: the outer stage keeps only
    its own time."""

    def __init__(self, emit, round: int):
        """``emit(event, **payload)``: how the run sends its events (its callbacks)."""
        self.emit, self.round, self.times, self._inner = emit, round, {}, [0.0]

    @contextmanager
    def __call__(self, stage: str):
        start, finished = time.perf_counter(), False
        self.emit("stage_started", round=self.round, stage=stage)
        self._inner.append(0.0)
        try:
            yield
            finished = True
        finally:
            total = time.perf_counter() - start
            seconds = total - self._inner.pop()
            self._inner[-1] += total
            self.times[stage] = self.times.get(stage, 0.0) + seconds
            if finished:
                self.emit("stage", round=self.round, stage=stage, seconds=seconds)

    @contextmanager
    def exports_out_of(self, stage: str):
        """Stage ``stage``, less the exports for the inference backend made meanwhile (a
        CosineBERT calibrates on its own embeddings at the end of training, so its export happens
        there), which count as the ``export`` stage."""
        with recording_exports() as made, self(stage):
            yield
        seconds = sum(e["seconds"] for e in made)
        if seconds:
            self.times[stage] -= seconds
            self.times["export"] = self.times.get("export", 0.0) + seconds
            self.emit("stage", round=self.round, stage="export", seconds=seconds)
