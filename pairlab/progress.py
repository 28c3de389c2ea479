"""Work done and time left inside a long step (records embedded, training steps, pairs scored),
for whoever :func:`listening` names around it: a session's worker (for its widget), a kernel's
run (a text bar on stderr, which a papermill log keeps); else a bar only where asked (``show``)."""

from __future__ import annotations

import itertools
import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["Progress", "listening", "BARS"]

BARS = "bars"  # listening(BARS): a text bar for every step, asked for or not
_LISTENER: ContextVar = ContextVar("pairlab_progress", default=None)


@contextmanager
def listening(listener=BARS):
    """Within the block, each :class:`Progress` calls ``listener(progress)`` as it advances (or,
    with :data:`BARS`, draws its text bar)."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def listened() -> bool:
    """Whether a :func:`listening` block is open (steps that are quiet by default report)."""
    return _LISTENER.get() is not None


class Progress:
    """``total`` units of ``unit`` ("records embedded") done as :meth:`advance` says, with the
    seconds left at the rate so far (``cost``: each unit's work, in the order done, where units
    differ: the longest texts are embedded first); a context manager that closes its bar."""

    def __init__(self, total: int, unit: str, *, show: bool = False, cost=None):
        self.total, self.unit, self.done = int(total), unit, 0
        self.start = time.perf_counter()
        self.cost = None if cost is None else [0.0, *itertools.accumulate(map(float, cost))]
        listener = _LISTENER.get()
        self.listener = listener if callable(listener) else None
        self.bar = None
        if listener == BARS or (listener is None and show):
            from tqdm import tqdm  # text, not a widget: a papermill log keeps its lines

            self.bar = tqdm(total=self.total, desc=unit, mininterval=10, file=sys.stderr)

    def advance(self, n: int = 1) -> None:
        self.done += int(n)
        if self.bar is not None:
            self.bar.update(int(n))
        if self.listener is not None:
            self.listener(self)

    @property
    def seconds_left(self) -> float | None:
        done, left = self.done, max(self.total - self.done, 0)
        if self.cost is not None:
            done, left = self.cost[self.done], self.cost[-1] - self.cost[self.done]
        return (time.perf_counter() - self.start) / done * left if done else None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()
