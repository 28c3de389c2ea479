"""``python -m pairlab.label serve``: bad input gets one line naming the fix, before any
server or worker starts (issue 58). The served page itself: tests/browser/test_team.py."""

import socket
from pathlib import Path

import pytest

from pairlab.label import TEAM_FILE, main

TICKETS = str(Path(__file__).parents[1] / "fixtures" / "records" / "tickets.csv")


def refused(tmp_path, *args) -> str:
    with pytest.raises(SystemExit) as stop:
        main(["serve", *args, "--folder", str(tmp_path / "s"), "--port", "0"])
    assert not (tmp_path / "s" / TEAM_FILE).exists(), "a refused session left its file"
    assert not (tmp_path / "s" / "labels.sqlite").exists(), "a refused session began"
    message = str(stop.value)
    assert message.startswith("error: ") and "\n" not in message, message
    return message


def test_a_missing_file(tmp_path):
    assert "not found" in refused(tmp_path, "nofile.csv", "--text", "body")


def test_a_text_column_that_does_not_exist(tmp_path):
    message = refused(tmp_path, TICKETS, "--text", "nosuch")
    assert "'nosuch'" in message and "'body'" in message  # the columns it has


def test_an_empty_table(tmp_path):
    (tmp_path / "empty.csv").write_text("id,body\n")
    assert "no rows" in refused(tmp_path, str(tmp_path / "empty.csv"), "--text", "body")


def test_a_port_in_use(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        with pytest.raises(SystemExit) as stop:
            main(["serve", TICKETS, "--text", "body", "--folder", str(tmp_path), "--port", port])
    assert f"127.0.0.1:{port}" in str(stop.value) and "--port" in str(stop.value)


def test_a_folder_of_another_session(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / TEAM_FILE).write_text('{"items": "other.csv"}')
    message = refused_keeping(tmp_path, TICKETS, "--text", "body")
    assert "other records or settings" in message


def refused_keeping(tmp_path, *args) -> str:
    with pytest.raises(SystemExit) as stop:
        main(["serve", *args, "--folder", str(tmp_path / "s"), "--port", "0"])
    assert (tmp_path / "s" / TEAM_FILE).read_text() == '{"items": "other.csv"}'
    return str(stop.value)


def test_export_of_a_folder_without_a_session(tmp_path):
    with pytest.raises(SystemExit) as stop:
        main(["export", "--folder", str(tmp_path)])
    assert str(stop.value).startswith("error: ") and "team.json" in str(stop.value)
