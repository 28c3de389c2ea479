"""pairlab.progress: who sees a step's work, and its time left."""

import pytest

from pairlab import progress
from pairlab.progress import Progress, listening


def test_time_left_follows_each_units_cost(monkeypatch):
    """The longest texts are embedded first: records alone would project 2x the time left."""
    now = [100.0]
    monkeypatch.setattr(progress.time, "perf_counter", lambda: now[0])
    plain, costed = Progress(4, "records"), Progress(4, "records", cost=[4, 2, 1, 1])
    assert plain.seconds_left is None
    now[0] += 8.0
    plain.advance(1)
    costed.advance(1)
    assert plain.seconds_left == pytest.approx(24.0)  # 8 s a record, 3 left
    assert costed.seconds_left == pytest.approx(8.0)  # 8 s for 4 of 8 units of work


def test_a_listener_hears_every_step_and_nothing_draws_unasked(capsys):
    heard = []
    with listening(lambda p: heard.append((p.unit, p.done, p.total))):
        with Progress(2, "pairs scored") as done:
            done.advance(2)
    with Progress(2, "quiet") as done:  # nobody listening, and not asked to show
        done.advance(2)
    assert heard == [("pairs scored", 2, 2)] and not capsys.readouterr().err
    with listening(), Progress(2, "shown") as done:  # a kernel's run: a text bar on stderr
        done.advance(2)
    assert "shown" in capsys.readouterr().err
