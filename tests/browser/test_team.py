"""Issue 58: a labelling session served as a page (``python -m pairlab.label serve``) and
labelled by three people at once, each in their own Chromium page (and Voilà kernel), on
127.0.0.2, so the server asks for a token. Every record text carries markup that would run if
it were rendered as HTML, and one person's name is markup too.

The tests share one server and run in file order.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import closing

import pandas as pd
import pytest

from .conftest import ROOT, SCREENSHOTS, _free_port

HOST = "127.0.0.2"  # loopback, but not 127.0.0.1: the server must ask for the token
NAMES = ("ann", "bo", "<img src=x onerror=window.__xss=3>")
HOSTILE = ("<script>window.__xss=1</script>", "<img src=x onerror=window.__xss=2>")
PER_PERSON = 10


def sql(folder, query: str):
    with closing(sqlite3.connect(folder / "labels.sqlite")) as conn:
        return conn.execute(query).fetchall()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``(address with the token, folder)`` of a served session of the ticket table, each text
    ending in markup; the server is stopped by its process group afterwards."""
    from pairlab.models.truncate import truncated_model

    work = tmp_path_factory.mktemp("team")
    items = pd.read_csv(ROOT / "fixtures" / "records" / "tickets.csv")
    items["body"] = [f"{body} {HOSTILE[i % 2]}" for i, body in enumerate(items["body"])]
    items.to_csv(work / "tickets.csv", index=False)
    folder, log = work / "session", work / "serve.log"
    command = [sys.executable, "-m", "pairlab.label", "serve", str(work / "tickets.csv")]
    command += ["--text", "body", "--id", "id", "--folder", str(folder), "--host", HOST]
    command += ["--port", str(_free_port()), "--budget", "64", "--batch", "32"]
    command += ["--model", truncated_model(None, 2)]  # MiniLM cut to 2 layers: quick rounds
    with open(log, "w") as out:
        server = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 120
        while not (found := re.search(r"open (http\S+token=\S+)", log.read_text())):
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        address = found.group(1)
        while True:  # Voilà listens a moment after the address is printed
            try:
                urllib.request.urlopen(address, timeout=5).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.3)
        yield address, folder
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)


def status(url: str, headers=None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {})) as r:
            return r.status
    except urllib.error.HTTPError as error:
        return error.code


def test_without_the_token_pages_and_websockets_are_refused(served):
    address, _ = served
    base, token = address.split("?token=")
    upgrade = {
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    }
    channels = f"{base}api/kernels/00000000-0000-0000-0000-000000000000/channels"
    refused = {
        url: status(url, head)
        for url, head in [
            (base, None),
            (f"{base}?token=wrong", None),
            (f"{base}voila/render/page.ipynb", None),
            (f"{base}api/kernels", None),
            (channels, upgrade),
        ]
    }
    assert set(refused.values()) == {403}, refused
    assert status(address) == 200
    assert status(f"{channels}?token={token}", upgrade) == 404  # let in: no such kernel


def test_three_people_label_at_once(served, chromium):
    address, folder = served
    pages = []
    for name in NAMES:
        page = chromium.new_page(viewport={"width": 1300, "height": 900})
        page.goto(f"{address}&annotator={urllib.parse.quote(name)}")
        pages.append(page)
    try:
        for page in pages:
            page.locator(".pairlab-label-view").first.wait_for(timeout=120_000)
            page.locator(".pairlab-label-keys input").first.click()
        for _ in range(PER_PERSON):  # in turn, a key each, 0.1 s apart: three at once
            for page in pages:
                view = page.locator(".pairlab-label-pair .pairlab-label-view").first
                shown = view.get_attribute("data-view")
                page.keyboard.press("n")
                page.wait_for_function(
                    "old => { const v = document.querySelector('.pairlab-label-pair "
                    ".pairlab-label-view'); return !v || v.dataset.view !== old; }",
                    arg=shown,
                    timeout=30_000,
                )
                time.sleep(0.1)
        rows = sql(folder, "SELECT pair_id, annotator FROM answers WHERE annotator != 'given'")
        assert len(rows) == PER_PERSON * len(NAMES)
        assert len({pair for pair, _ in rows}) == len(rows), "a pair went to two people"
        assert pd.Series([who for _, who in rows]).value_counts().to_dict() == {
            name: PER_PERSON for name in NAMES
        }  # names stored as given
        for page, name in zip(pages, NAMES):
            assert name in page.locator(".pairlab-team-who").first.inner_text()  # shown as text
            text = page.locator(".pairlab-label-view").first.inner_text()
            assert any(h in text for h in HOSTILE), text  # the markup's characters
            assert page.evaluate("window.__xss") is None, "a record's or name's markup ran"
            assert (
                page.locator(
                    ".pairlab-label-record img, .pairlab-label-record script, .pairlab-team-who img"
                ).count()
                == 0
            )
            counts = page.locator(".pairlab-label-counts").first.inner_text()
            assert f"{len(rows)} labels" in counts or "answered by" in counts, counts
    except Exception:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for k, page in enumerate(pages):
            page.screenshot(path=str(SCREENSHOTS / f"team-page-{k}.png"), full_page=True)
        raise
    finally:
        for page in pages:
            page.close()
