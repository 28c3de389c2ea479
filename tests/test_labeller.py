"""The labelling widget without a browser: its key handler driven directly, the store read back."""

import json
import re
import threading
import time

import numpy as np
import pytest

from pairlab.annotators.person import UNANSWERED, WITHDRAWN, SessionStore
from pairlab.widgets.labeller import (
    LabellingWidget,
    elapsed,
    pair_html,
    record_html,
    shared_words,
    sparkline_svg,
)

TEXTS = {
    i: (f"title: apple iphone {i} | brand: apple", f"title: iphone {i} case | brand: acme")
    for i in range(3000)
}


@pytest.fixture
def store(tmp_path):
    store = SessionStore(tmp_path / "session.sqlite")
    yield store
    store.close()


@pytest.fixture
def make(store):
    made = []

    def make(**kwargs):
        widget = LabellingWidget(store, TEXTS.__getitem__, poll=0.05, **kwargs)
        made.append(widget)
        return widget

    yield make
    for widget in made:
        widget.close()


def wait_for(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def answer_rows(store) -> list[tuple[int, int]]:
    history = store.history()
    return list(zip(history["pair_id"].tolist(), history["label"].tolist()))


def test_keys_answer_in_queue_order_one_row_each(store, make):
    store.post(0, [10, 11, 12, 13], ["batch", "audit", "batch", "spare"])
    widget = make()
    assert widget._item.pair_id == 10
    for key in "ynuY":
        widget.press(key)
    assert answer_rows(store) == [(10, 1), (11, 0), (12, -1), (13, 1)]
    assert widget._item is None  # nothing queued: the waiting message
    assert "waiting for the next pairs" in widget.pair.value
    history = store.history()
    assert (history["annotator"] == "person").all() and (history["seconds"] >= 0).all()
    wait_for(lambda: "3</b> labels" in widget.counts_html.value)
    assert store.counts() == {"labels": 3, "positives": 2, "unsure": 1, "queued": 0}
    assert "<b>2</b> positives" in widget.counts_html.value
    assert widget.press("y") is None and widget.press("x") is None  # nothing on show, no key
    assert len(store.history()) == 4


def test_seconds_is_the_time_the_pair_was_on_show(store, make):
    store.post(0, [1, 2], "batch")
    widget = make()
    time.sleep(0.3)
    widget.press("n")
    widget.press("y")
    seconds = store.history()["seconds"].tolist()
    assert seconds[0] >= 0.3 and seconds[1] < 0.3, seconds


def test_previous_shows_the_withdrawn_pair_again(store, make):
    store.post(0, [5, 6, 7], "batch")
    widget = make(annotator="ann")
    widget.press("y")
    widget.press("n")
    assert widget._item.pair_id == 7
    assert widget.press("p") == 6
    assert widget._item.pair_id == 6 and "data-pair='6'" in widget.pair.value
    assert widget.press("p") == 5
    assert widget._item.pair_id == 5
    widget.press("n")
    assert widget._item.pair_id == 6  # then 6 again, then 7: nothing skipped
    widget.press("y")
    assert widget._item.pair_id == 7
    assert answer_rows(store) == [(5, 1), (6, 0), (6, WITHDRAWN), (5, WITHDRAWN), (5, 0), (6, 1)]
    assert store.answers([5, 6, 7]).tolist() == [0, 1, UNANSWERED]
    wait_for(lambda: store.counts() == {"labels": 2, "positives": 1, "unsure": 0, "queued": 1})


def test_previous_while_waiting_shows_the_last_pair_again(store, make):
    store.post(0, [1, 2], "batch")
    widget = make()
    widget.press("y")
    widget.press("n")
    assert widget._item is None  # all answered: waiting for the worker
    assert widget.press("p") == 2 and widget._item.pair_id == 2
    assert "data-pair='2'" in widget.pair.value
    widget.press("y")
    assert answer_rows(store) == [(1, 1), (2, 0), (2, WITHDRAWN), (2, 1)]
    assert store.history()["seconds"].isna().tolist() == [False, False, True, False]


def test_a_finished_or_stopped_session_says_what_comes_next(store, make):
    """Issue 60: the finished screen points to the export, a stopped worker to start()."""
    store.set_status("worker", "finished")
    widget = make()
    assert "finished: every pair is answered; session.export() writes the matches" in (
        widget.pair.value
    )
    store.set_status("worker", "stopped")
    wait_for(lambda: "session.start() goes on from the last round" in widget.pair.value)
    store.set_status("worker", "round 4 (the last): training the model")  # the budget asked
    wait_for(lambda: "no more pairs: the budget is asked (round 4" in widget.pair.value)


def test_once_the_rounds_are_over_no_spare_is_asked(store, make):
    """A spare on show when the worker finishes gives way to the finished screen (spares are
    for the wait between rounds); a round's own pairs left unanswered are still asked."""
    store.post(1, [5, 6], "spare")
    widget = make()
    assert widget._item.pair_id == 5
    store.set_status("worker", "finished")
    wait_for(lambda: "finished: every pair is answered" in widget.pair.value)
    store.post(2, [7], "batch")
    wait_for(lambda: widget._item is not None and widget._item.pair_id == 7)


def test_the_agreement_of_two_people_shows_with_the_pairs_they_disagree_on(store, make):
    """Issue 58: kappa with its interval, and each disagreement with its texts (escaped)."""
    for pair in range(6):
        store.answer(pair, pair % 2, annotator="ann")
        store.answer(pair, 0 if pair == 3 else pair % 2, annotator="<b>bo</b>")
    widget = make()
    text = widget.agreement.value
    assert "6 pairs answered by two people" in text and "Cohen's kappa <b>0.67</b> [" in text
    assert "1 disagreements" in text
    assert "pair 3 (ann match, &lt;b&gt;bo&lt;/b&gt; no match: " in text
    assert "waiting for a third answer" in text


def test_the_workers_step_shows_as_a_bar_with_the_time_left(store, make):
    """Issue 60: "round 2: embedding the records (8 min 12 s)" said nothing of how far along."""
    widget = make()
    assert widget.bar.layout.display == "none"
    step = {"unit": "records embedded", "done": 12800, "total": 24622, "left": 130.0}
    store.set_status("progress", json.dumps(step))
    wait_for(
        lambda: "12,800 of 24,622 records embedded, about 2 min 10 s left" in widget.bar_text.value
    )
    assert widget.bar.layout.display is None and abs(widget.bar.value - 12800 / 24622) < 1e-9
    store.set_status("progress", "")  # the next stage began
    wait_for(lambda: widget.bar.layout.display == "none" and not widget.bar_text.value)


def test_the_guide_says_when_the_first_estimate_comes(store, make):
    """Issue 60: the guide said "from round 2 on" and the first estimate came after about 290
    labels: the worker now states the audit answers it needs and has after each round."""
    from pairlab.session.worker import sentence

    pending = {"answered": 5, "needed": 12, "share": 0.1, "first_round": 2}
    said = sentence(pending, "estimate_pending")
    assert said == (
        "how far: the first estimate of the matches found comes once 12 audit pairs are "
        "answered (5 so far; from round 2 on, about 10% of the pairs shown are audit pairs)"
    )
    assert "audit_share=0" in sentence({**pending, "share": 0.0}, "estimate_pending")
    # a model of one answer draws no audit: the line says so, not "once 12 are answered"
    skipped = sentence({**pending, "skipped": True}, "estimate_pending")
    assert "no estimate yet: every answer so far is the same" in skipped
    last = sentence({**pending, "skipped": True, "last": True}, "estimate_pending")
    assert "budget went to the model's candidates" in last and "12" not in last
    widget = make()
    store.set_status("estimate_pending", said)
    wait_for(lambda: "12 audit pairs are answered (5 so far" in widget.guide.value)


def test_the_kernel_beats_to_the_page_that_says_when_it_is_gone(store, make, monkeypatch):
    """Issue 60: a dead kernel's widget looked alive. The refresher thread sends a heartbeat
    every 2 s; the page disables the key box after ``quiet`` seconds without one (its script is
    checked in a browser, tests/browser/test_labeller.py)."""
    from pairlab.widgets.keycatcher import KeyCatcher

    beats = []
    monkeypatch.setattr(KeyCatcher, "send", lambda self, content: beats.append(content))
    widget = make(quiet=7.5)
    assert widget.keys.quiet == 7.5 and "kernel is gone" in widget.keys.gone
    wait_for(lambda: beats)
    assert beats[0] == {"beat": True}
    assert "quiet * 1000" in KeyCatcher._esm  # the page's clock


def test_keys_run_in_the_order_the_page_sent_them():
    """ipykernel 7 ran a burst's first keys on the main thread and the rest on a subshell thread,
    which answered two pairs with each other's keys (CI, 2026-11-29): a key that comes ahead of
    its turn waits, per page view."""
    from pairlab.widgets.keycatcher import KeyCatcher

    keys, seen = KeyCatcher(), []
    keys.on_key(seen.append)
    for view, seq, key in [
        ("a", 1, "n"),
        ("b", 0, "u"),
        ("a", 0, "y"),
        ("a", 3, "p"),
        ("a", 2, "u"),
    ]:
        keys._handle_custom_msg({"key": key, "view": view, "seq": seq}, [])
    assert seen == ["u", "y", "n", "u", "p"]
    keys._handle_custom_msg({"key": "y", "view": "a", "seq": 3}, [])  # sent once: not twice
    assert seen == ["u", "y", "n", "u", "p"]


def test_previous_with_nothing_answered_does_nothing(store, make):
    store.post(0, [1], "batch")
    widget = make()
    assert widget.press("p") is None
    assert widget._item.pair_id == 1 and len(store.history()) == 0


def test_a_pair_posted_later_is_picked_up_and_close_stops_the_thread(store, make):
    store.set_status("worker", "training round 1 on 40 labels")
    widget = make()
    assert widget._item is None
    assert "waiting for the next pairs: training round 1 on 40 labels (" in widget.pair.value
    store.post(1, [42], "batch")
    wait_for(lambda: widget._item is not None)
    assert "data-pair='42'" in widget.pair.value and "<mark>42</mark>" in widget.pair.value
    wait_for(lambda: "worker: training round 1 on 40 labels" in widget.status.value)
    widget.close()
    assert widget._stop.is_set() and not widget._thread.is_alive()
    assert widget.press("y") is None  # a closed widget records nothing
    assert len(store.history()) == 0


def test_the_stopping_guide_shows_the_latest_estimate_escaped(store, make):
    widget = make()
    assert "the first estimate of the matches found comes once enough audit pairs (mixed in " in (
        widget.guide.value
    )
    store.set_status("estimate", "about 85% (78-91%) of the matches found <b>")
    wait_for(lambda: "about 85% (78-91%) of the matches found &lt;b&gt;" in widget.guide.value)
    assert "how far" in widget.guide.value
    widget.close()


def test_a_new_widget_continues_at_the_first_unanswered_pair_and_closes_the_old(store, make):
    store.post(0, [1, 2, 3, 4], "batch")
    first = make()
    first.press("y")
    first.press("n")
    second = make()  # the cell run again, or the kernel restarted
    assert second._item.pair_id == 3
    assert first._stop.is_set() and not first._thread.is_alive()
    second.press("y")
    assert answer_rows(store) == [(1, 1), (2, 0), (3, 1)]


def test_concurrent_presses_answer_each_pair_once(store, make):
    """Keys from the comm's thread and clicks from another: no pair answered twice or lost."""
    store.post(0, range(100), "batch")
    widget = make()
    threads = [
        threading.Thread(target=lambda: [widget.press("y") for _ in range(30)]) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    history = store.history()
    assert history["pair_id"].tolist() == list(range(100))  # 120 presses, 100 pairs, in order
    wait_for(lambda: "100</b> labels" in widget.counts_html.value)


def test_no_score_and_audit_pairs_look_like_the_others(store):
    store.post(0, [1, 2], ["batch", "audit"])
    widget = LabellingWidget(store, lambda pair_id: ("a b", "b c"), poll=0.05)
    try:
        batch = widget.pair.value
        widget.press("n")
        audit = widget.pair.value
    finally:
        widget.close()
    unmarked = [re.sub(r"data-(pair|view)='\d+'", "", value) for value in (batch, audit)]
    assert unmarked[0] == unmarked[1]  # the same texts look the same, whatever the kind
    for word in ("audit", "batch", "score", "round"):
        assert word not in audit.lower()


def test_the_sparkline_follows_labels_and_undo(store, make):
    store.post(0, range(6), "batch")
    widget = make()
    for key in "yynu":
        widget.press(key)
    wait_for(lambda: "3 labels" in widget.plot.value)
    assert "2 positives" in widget.plot.value
    widget.press("p")  # the unsure answer: no label changes
    widget.press("p")  # the n
    wait_for(lambda: "2 labels" in widget.plot.value)
    assert widget._points[-1] == (2, 2) and max(x for x, _ in widget._points) == 2


def test_highlighting_escapes_html_and_marks_shared_words():
    left = "title: <script>alert('x')</script> Apple & Co | brand: APPLE"
    right = "title: apple <b>pie</b> | brand: co"
    out = pair_html(left, right, titles=("<i>a</i>", "b"))
    assert "<script>" not in out and "<b>pie</b>" not in out and "<i>a</i>" not in out
    assert "&lt;script&gt;" in out and "&amp;" in out and "&lt;i&gt;a&lt;/i&gt;" in out
    assert shared_words(left, right) == {"apple", "co"}  # not "title", "brand": names
    assert record_html(left, shared_words(left, right)).count("<mark>") == 3  # Apple Co APPLE
    assert "<div><b>title</b>: " in out and "<div><b>brand</b>: " in out  # a field a line


def test_fields_one_a_line_and_plain_texts_as_they_are():
    assert record_html("title: a | b c | brand: d", set()) == (
        "<div><b>title</b>: a | b c</div><div><b>brand</b>: d</div>"
    )  # "b c" continues title
    assert record_html("just a sentence | with a bar", {"bar"}) == (
        "just a sentence | with a <mark>bar</mark>"
    )


def test_sparkline_keeps_at_most_the_points_asked():
    points = [(k, k // 10) for k in range(5000)]
    svg = sparkline_svg(points, most=100)
    assert svg.count(",") - 0 <= 100 + 2 and "4999 labels" in svg and "499 positives" in svg
    assert "0 labels" in sparkline_svg([])


@pytest.mark.parametrize(
    "seconds, text",
    [(0, "0 s"), (59.9, "59 s"), (72, "1 min 12 s"), (7500, "2 h 5 min"), (-3, "0 s")],
)
def test_elapsed(seconds, text):
    assert elapsed(seconds) == text


@pytest.mark.parametrize(
    "kwargs, error",
    [({"poll": 0}, ValueError), ({"poll": True}, ValueError)],
)
def test_bad_arguments_are_named(store, kwargs, error):
    with pytest.raises(error, match=next(iter(kwargs))):
        LabellingWidget(store, TEXTS.__getitem__, **kwargs)


def test_the_key_path_stays_short_with_many_answers(store, make):
    """A join of the queue with every current answer took 290 ms a call at 1,000 answers: the
    key path must not grow with the session."""
    store.post(0, np.arange(3000), "batch")
    widget = make()
    for _ in range(1500):
        widget.press("y")
    took = []
    for _ in range(50):
        start = time.perf_counter()
        widget.press("n")
        took.append(time.perf_counter() - start)
    assert np.median(took) < 0.05, f"median key press {np.median(took) * 1e3:.1f} ms"


def test_a_pair_whose_texts_fail_is_not_on_show_so_no_key_answers_it(store):
    store.post(0, [1, 2], "batch")
    broken = {2}

    def texts(pair_id):
        if pair_id in broken:
            raise KeyError(pair_id)
        return "a", "b"

    widget = LabellingWidget(store, texts, poll=0.05)
    try:
        widget.press("y")
        assert widget._item is None and "could not be read" in widget.pair.value
        assert widget.press("y") is None
        broken.clear()  # the texts are back: the refresher shows the pair
        wait_for(lambda: widget._item is not None and widget._item.pair_id == 2)
    finally:
        widget.close()
    assert answer_rows(store) == [(1, 1)]
