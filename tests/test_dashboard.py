"""The run dashboard follows the loop's events, and opens finished run folders."""

import re

import pytest
from conftest import run

from pairlab.widgets.dashboard import RunDashboard


def test_dashboard_follows_a_live_run(tmp_path):
    board = RunDashboard(total_rounds=3, title="toy")
    active, _ = run(tmp_path, callbacks=[board])
    result = active.run()
    assert board.progress.value == 3 and board.progress.bar_style == "success"
    (trace,) = board.curves.data
    assert list(trace.x) == [r["labels"] for r in result["records"]]
    assert list(trace.y) == pytest.approx([r["dev"]["ap"] for r in result["records"]])
    assert "57 labels" in board.status.value and "train" in board.times.value
    # the figure shown holds every point in the widget's state, which a page draws whole
    ((shown,),) = [
        o["data"]["application/vnd.plotly.v1+json"]["data"] for o in board.figure.outputs
    ]
    assert shown["x"] == list(trace.x) and shown["y"] == pytest.approx(list(trace.y))


def test_dashboard_opens_finished_run_folders(tmp_path):
    for strategy in ("uncertainty", "random"):
        run(tmp_path, strategy=strategy)[0].run()
    board = RunDashboard.open(tmp_path)
    assert board.progress.max == 6 and board.progress.value == 6
    assert board.progress.bar_style == "success" and "2 of 2 runs finished" in board.status.value
    assert sorted(t.name for t in board.curves.data) == ["toy/random/0", "toy/uncertainty/0"]
    with pytest.raises(FileNotFoundError, match="no active-learning run folder"):
        RunDashboard.open(tmp_path / "nothing")


def test_dashboard_of_a_half_finished_run_is_not_green(tmp_path):
    run(tmp_path, strategy="uncertainty")[0].run()
    active, _ = run(tmp_path, strategy="random", rounds=4)
    active.run()
    (next(tmp_path.glob("toy/random-*")) / "result.json").unlink()  # as if killed before the end
    (next(tmp_path.glob("toy/random-*")) / "rounds" / "round_04.json").unlink()
    board = RunDashboard.open(tmp_path)
    assert (board.progress.value, board.progress.max) == (6, 7)
    assert board.progress.bar_style == "info" and "1 of 2 runs finished" in board.status.value


def test_dashboard_shows_candidate_recall_per_round_and_reads_folders_without_it(tmp_path):
    import json

    result = run(tmp_path, strategy="uncertainty")[0].run()
    run(tmp_path, strategy="random")[0].run()
    recalls = [f"{r['candidate_recall']:.0%}" for r in result["records"]]
    board = RunDashboard.open(tmp_path)
    row = next(line for line in board.recall.value.split("<tr>") if "toy/uncertainty/0" in line)
    assert re.findall(r"<td>(.*?)</td>", row) == recalls
    assert "toy/random/0" not in board.recall.value  # random sampling searches no candidates
    # a run folder written before candidate recall was recorded still opens
    for path in tmp_path.glob("toy/uncertainty-*/rounds/round_*.json"):
        record = json.loads(path.read_text())
        del record["candidate_recall"]
        path.write_text(json.dumps(record))
    old = RunDashboard.open(tmp_path)
    assert old.progress.value == 6 and old.recall.value == ""
