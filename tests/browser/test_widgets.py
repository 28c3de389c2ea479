"""Every pairlab widget driven in a real JupyterLab by a real Chromium, checked where it matters:
the rows in the SQLite file, the position and summary text, the plotly points, the progress bar
and JupyterLab's log console.

The tests share one page (the widget notebook run once) and run in file order; each reads the
state it starts from rather than assuming a fresh one.

Where the callbacks run: JupyterLab (default settings) sends each comm message with the id of
one subshell per comm target, and ipykernel 7 routes a comm's message to the subshell named in
the header of the message it last published on that comm from. A comm that has published
nothing since its cell built it stays on the main thread: a button's clicks and the keys box run
there until something re-renders the button (the stratum filter disabling it). A value widget
(slider, toggle buttons, dropdown) echoes each change, so from its second change on it runs on
the subshell thread. Hence the slider, stratum and run-picker tests change their widget at least
twice and read or mark afterwards: that is where a label store bound to one thread failed.
"""

from __future__ import annotations

import re
import sqlite3
import time
from contextlib import closing

import pytest

from .conftest import menu

HUMAN, FAST = 150, 0  # milliseconds between key presses


def rows(page, annotator: str) -> list[tuple[int, str]]:
    """``(pair_id, mark)`` of every mark of ``annotator`` in the label store, oldest first."""
    with closing(sqlite3.connect(page.store)) as conn:
        return conn.execute(
            "SELECT pair_id, mark FROM marks WHERE annotator = ? ORDER BY id", (annotator,)
        ).fetchall()


def wait_rows(page, annotator: str, n: int, timeout: float = 20) -> list[tuple[int, str]]:
    """The rows once there are ``n`` (fails if there are more, or fewer after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        got = rows(page, annotator)
        if len(got) > n:
            pytest.fail(f"{len(got)} marks of {annotator}, expected {n}: {got}")
        if len(got) == n:
            time.sleep(0.5)  # a duplicate would arrive now
            got = rows(page, annotator)
            assert len(got) == n, f"a key press was applied twice: {got}"
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"{len(got)} marks of {annotator} after {timeout} s, expected {n}: {got}")
        time.sleep(0.1)


class Browser:
    """One FalsePositiveBrowser on the page, read through its DOM."""

    def __init__(self, root):
        self.root = root

    def part(self, name: str):
        return self.root.locator(f".pairlab-fp-{name}").first

    def shown(self) -> tuple[int, str] | None:
        """``(pair_id, stratum)`` of the pair on show, or None when none is listed."""
        found = re.search(r"pair (\d+) · (near|rand)", self.part("pair").inner_text())
        return (int(found.group(1)), found.group(2)) if found else None

    def pair(self, timeout: float = 20) -> int:
        """The pair on show (waits for one: the position and the pair are two widgets, updated
        by two messages, so one can be on screen a moment before the other)."""
        deadline = time.monotonic() + timeout
        while (shown := self.shown()) is None:
            if time.monotonic() > deadline:
                pytest.fail(f"no pair on show after {timeout} s: {self.part('pair').inner_text()}")
            time.sleep(0.1)
        return shown[0]

    def position(self) -> tuple[int, int]:
        here, total = re.fullmatch(r"(\d+) of (\d+)", self.part("position").inner_text()).groups()
        return int(here), int(total)

    def wait_position(self, here: int, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while self.position()[0] != here:
            if time.monotonic() > deadline:
                pytest.fail(f"position {self.position()}, expected {here}")
            time.sleep(0.1)

    def click(self, name: str) -> None:
        self.part(name).click()

    def type(self, keys: str, delay: int) -> None:
        box = self.part("keys").locator("input").first
        box.click()
        box.press_sequentially(keys, delay=delay)

    def summary(self) -> dict:
        text = self.part("summary").inner_text()
        found = re.search(
            r"recall ([\d.]+).*corrected precision ([\d.]+) \[([\d.]+), ([\d.]+)\]", text, re.S
        )
        recall, point, low, high = map(float, found.groups())
        return {"recall": recall, "precision": point, "ci": (low, high), "text": text}


@pytest.fixture(scope="module")
def browser(page):
    return Browser(page.locator(".pairlab-fp-browser").first)


def test_mark_buttons_write_one_row_each_and_move_on(page, browser):
    """Three marks, each one row for the pair on show; back and next move one pair a click."""
    first = browser.pair()
    browser.click("mark-real_error")
    browser.wait_position(2)
    second = browser.pair()
    browser.click("mark-actually_positive")
    browser.wait_position(3)
    browser.click("back")
    browser.wait_position(2)
    assert browser.pair() == second
    browser.click("mark-unsure")
    browser.wait_position(3)
    for button, here in (("next", 4), ("next", 5), ("back", 4), ("next", 5), ("back", 4)):
        browser.click(button)
        browser.wait_position(here)
    assert wait_rows(page, "browser-test", 3) == [
        (first, "real_error"),
        (second, "actually_positive"),
        (second, "unsure"),
    ]


def test_summary_interval_holds_its_point(page, browser):
    """One real-error mark gave 'corrected precision 0.1152 [0.1153, 0.4717]'."""
    s = browser.summary()
    assert s["ci"][0] <= s["precision"] <= s["ci"][1], s["text"]
    assert "marked pairs: near" in s["text"]


@pytest.mark.parametrize("delay", [HUMAN, FAST], ids=["human speed", "fast"])
def test_each_key_press_is_one_action(page, browser, delay):
    """Typed fast into a synced text box, "ep" became real error, real error, actually positive
    and "nn" moved three pairs."""
    before = rows(page, "browser-test")
    here = browser.position()[0]
    browser.type("nn", delay)
    browser.wait_position(here + 2)
    time.sleep(0.5)
    assert browser.position()[0] == here + 2
    first = browser.pair()
    browser.type("ep", delay)
    browser.wait_position(here + 4)
    after = wait_rows(page, "browser-test", len(before) + 2)
    assert after[len(before) :] == [(first, "real_error"), (after[-1][0], "actually_positive")]
    assert after[-1][0] != first
    browser.type("b", delay)
    browser.wait_position(here + 3)
    assert browser.pair() == after[-1][0]


def test_an_empty_stratum_and_back_keeps_the_place(page, browser):
    """Through a filter that lists nothing and back to "all": the same pair at the same place
    (it went back to the first pair). The filter's second and third changes run on the subshell
    thread, and so do the mark buttons' clicks once the empty list disabled them: the mark at
    the end must still land in the store."""
    shown, (here, total) = browser.pair(), browser.position()
    counts = {}
    for stratum in ("near", "rand"):
        browser.part("stratum").get_by_role("button", name=stratum, exact=True).click()
        deadline = time.monotonic() + 20
        while True:  # until the page shows this stratum's list: one of its pairs, or none
            on_show, (_, n) = browser.shown(), browser.position()
            if (on_show is None and n == 0) or (on_show is not None and on_show[1] == stratum):
                break
            assert time.monotonic() < deadline, (stratum, on_show, n)
            time.sleep(0.1)
        counts[stratum] = n
    browser.part("stratum").get_by_role("button", name="all", exact=True).click()
    browser.wait_position(here)
    assert browser.pair() == shown and browser.position() == (here, total)
    assert sum(counts.values()) == total and 0 in counts.values(), counts
    before = rows(page, "browser-test")
    browser.click("mark-real_error")
    browser.wait_position(here + 1)
    assert wait_rows(page, "browser-test", len(before) + 1)[-1] == (shown, "real_error")


def set_recall(page, browser, value: float, timeout: float = 20) -> None:
    """Type ``value`` into the recall slider's readout; returns once the summary shows it and the
    list's length has changed. The kernel writes the position last, but the page applies each
    widget's update on its own promise chain, so the summary may show first (CI, 2026-11-29)."""
    listed = browser.position()[1]
    browser.part("recall").locator(".widget-readout").click()
    page.keyboard.press("Control+A")
    page.keyboard.type(str(value))
    page.keyboard.press("Enter")
    deadline = time.monotonic() + timeout
    while browser.summary()["recall"] != value or browser.position()[1] == listed:
        assert time.monotonic() < deadline, (browser.summary()["text"], browser.position())
        time.sleep(0.1)


def test_recall_slider_relists_and_marking_still_works(page, browser):
    """Each recall moves the threshold, so the list and the summary change; the second change
    runs on the subshell thread, where the summary reads the store. A button mark and a key mark
    afterwards land on the pairs on show."""
    listed = {browser.summary()["recall"]: browser.position()[1]}
    for recall in (0.6, 0.4):
        set_recall(page, browser, recall)
        listed[recall] = browser.position()[1]
    assert listed[0.2] < listed[0.4] < listed[0.6], listed
    before, (here, _) = rows(page, "browser-test"), browser.position()
    first = browser.pair()
    browser.click("mark-unsure")
    browser.wait_position(here + 1)
    second = browser.pair()
    browser.type("p", HUMAN)
    browser.wait_position(here + 2)
    assert wait_rows(page, "browser-test", len(before) + 2)[len(before) :] == [
        (first, "unsure"),
        (second, "actually_positive"),
    ]


def dashboard(page, n: int):
    return page.locator(".pairlab-dashboard").nth(n)


def points(board) -> int:
    return board.locator(".scatterlayer .points path").count()


def wait_points(board, n: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while points(board) != n:
        assert time.monotonic() < deadline, f"{points(board)} points, expected {n}"
        time.sleep(0.1)


def wait_finished(board, status: str, timeout: float = 60_000) -> None:
    """Wait until the board's bar is full and green and its status reads ``status`` (the page
    may still be drawing the run's messages when the last cell has printed)."""
    from playwright.sync_api import expect  # here: without playwright the tests are skipped

    bar = board.locator(".pairlab-dashboard-progress .progress-bar").first
    expect(board.locator(".pairlab-dashboard-status")).to_contain_text(status, timeout=timeout)
    expect(bar).to_have_class(re.compile(r"\bprogress-bar-success\b"), timeout=timeout)
    expect(bar).to_have_attribute("style", re.compile(r"\bwidth: 100%"), timeout=timeout)


def x_range(board) -> list[float]:
    return board.locator(".js-plotly-plot").first.evaluate("el => el._fullLayout.xaxis.range")


def test_live_dashboard_followed_the_run_and_turned_green(page):
    """Three rounds: a full green bar, round 3 in the status, three dev-AP points, the stage
    times; a box zoom narrows the x axis and a double click restores it, the three points still
    drawn."""
    board = dashboard(page, 0)
    board.scroll_into_view_if_needed()
    wait_finished(board, "round 3")
    wait_points(board, 3)  # one dev-AP point per round
    assert "train" in board.locator(".pairlab-dashboard-times").inner_text()
    full = x_range(board)
    box = board.locator(".nsewdrag").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.1, box["y"] + box["height"] * 0.2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.8, steps=10)
    page.mouse.up()
    deadline = time.monotonic() + 10
    while x_range(board) == full:
        assert time.monotonic() < deadline, "the box zoom left the x axis as it was"
        time.sleep(0.1)
    zoomed = x_range(board)
    assert full[0] < zoomed[0] < zoomed[1] < full[1], (full, zoomed)
    board.locator(".nsewdrag").first.dblclick()
    deadline = time.monotonic() + 10
    while x_range(board) != full:
        assert time.monotonic() < deadline, f"x axis {x_range(board)} after reset, was {full}"
        time.sleep(0.1)
    wait_points(board, 3)


def test_opened_dashboard_is_green_and_its_legend_hides_a_run(page):
    """Two finished runs of three rounds: a full green bar and six points; the legend hides one
    run's three points and shows them again."""
    board = dashboard(page, 1)
    board.scroll_into_view_if_needed()
    wait_finished(board, "2 of 2 runs finished")
    wait_points(board, 6)
    legend = board.locator(".legend .traces", has_text="toy/random/0").locator(".legendtoggle")
    legend.click()
    wait_points(board, 3)  # the random run hidden
    legend.click()
    wait_points(board, 6)


def test_run_picker_switches_runs_and_keeps_each_place(page):
    picker = page.locator(".pairlab-run-picker").first
    select = picker.locator(".pairlab-run-picker-dropdown select")
    inner = Browser(picker.locator(".pairlab-fp-browser").first)
    inner.click("next")
    inner.wait_position(2)
    select.select_option("model b")
    inner.wait_position(1)
    inner.type("nn", FAST)
    inner.wait_position(3)
    shown = inner.pair()
    inner.type("e", HUMAN)
    inner.wait_position(4)
    assert wait_rows(page, "picker-test", 1) == [(shown, "real_error")]
    select.select_option("model a")
    inner.wait_position(2)
    select.select_option("model b")
    inner.wait_position(4)


def test_no_traceback_anywhere(page):
    """Widget callbacks fail silently for the user: their tracebacks go to the log console."""
    outputs = page.locator(".jp-OutputArea-output")
    assert not any("Traceback" in t or "Error" in t for t in outputs.all_inner_texts())
    menu(page, "View", "Show Log Console")
    console = page.locator(".jp-LogConsolePanel").first
    console.wait_for()
    page.wait_for_timeout(1000)
    entries = console.locator(".jp-OutputArea-output").all_inner_texts()
    assert entries == [], "\n".join(entries)
    assert "No log messages." in console.inner_text()
