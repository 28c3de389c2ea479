"""The labelling widget: a person answers the pairs a labelling session asks, one key a pair,
each committed before the next; a background thread refreshes the counts, a sparkline, the
worker's status and the latest recall estimate. Keys arrive on any thread: what is shown
changes under one lock, and the key path does only the answer and the next pair."""

from __future__ import annotations

import html
import json
import re
import threading
import time
import uuid
import weakref
from datetime import datetime, timezone

import numpy as np

from ..annotators.person import ANSWERS, SAID, QueueItem, SessionStore
from . import Shown
from .review import marked, words

__all__ = ["LabellingWidget", "record_html", "shared_words", "sparkline_svg", "elapsed"]

KEYS_HELP = "click here, then keys: y match · n not a match · u unsure · p previous"
_BUTTONS = (
    ("y", "match (y)", "success"),
    ("n", "not a match (n)", "danger"),
    ("u", "unsure (u)", ""),
    ("p", "previous (p)", "info"),
)
_NAME = r"[^\s:|][^:|]{0,39}: "  # "title: ..." as items.load_items writes a field
_FIELD, _NEXT_FIELD = re.compile(f"^{_NAME}"), re.compile(f" \\| (?={_NAME})")  # items.SEPARATOR
_BOX = (
    "flex:1 1 0;min-width:0;box-sizing:border-box;border:1px solid #bbb;border-radius:4px;"
    "padding:0.4em 0.6em;max-height:22em;overflow-y:auto;overflow-wrap:anywhere"
)
_GREY = "<span style='color:#555'>{}</span>"
_FIRST_ESTIMATE = (
    "how far: the first estimate of the matches found comes once enough audit pairs (mixed in "
    "from round 2 on) are answered"
)
_SETTLE = 0.05  # seconds the refresher lets an answer's burst settle before it reads the counts
_BEAT = 2.0  # seconds between the kernel's heartbeats to the page
_AGREEMENT_EVERY = 5.0  # seconds at least between two computations of the agreement (~20 ms)
_LIVE: weakref.WeakValueDictionary[tuple, LabellingWidget] = weakref.WeakValueDictionary()


class LabellingWidget(Shown):
    """Shows a :class:`SessionStore`'s queued pairs one at a time and records a person's answers
    (``texts(pair_id) -> (left, right)``); a second one on the same store closes the first.
    The pair on show is held for ``lease`` seconds or until answered: pages of other annotators
    (in other kernels too) get other pairs. After ``quiet`` seconds without the kernel's
    heartbeat the page says the kernel is gone."""

    def __init__(
        self,
        store: SessionStore,
        texts,
        *,
        annotator: str = "person",
        left_title: str = "left",
        right_title: str = "right",
        poll: float = 0.25,
        quiet: float = 10.0,
        lease: float = 120.0,
    ):
        if isinstance(poll, bool) or not isinstance(poll, (int, float)) or not 0 < poll <= 60:
            raise ValueError(f"poll must be a number of seconds in (0, 60], got {poll!r}")
        self.store, self.texts, self.annotator, self.poll = store, texts, annotator, float(poll)
        self.titles = (str(left_title), str(right_title))
        self._lock = threading.RLock()
        self._item: QueueItem | None = None  # the pair on show, None while waiting
        self.page, self.lease = uuid.uuid4().hex, float(lease)  # the pair on show is held
        self._who: dict = {}  # the answers per person the agreement was last shown for
        self._agreed = -np.inf  # when (time.monotonic())
        self._shown_at, self._views = 0.0, 0  # when the pair on show came; a number a view
        self._points = _curve(store.history())  # (labels, positives) after each change
        self._wake, self._stop = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, name="pairlab-labeller", daemon=True)
        self._build(float(quiet))
        key = (str(store.path.resolve()), annotator)
        if (earlier := _LIVE.get(key)) is not None:
            earlier.close()
        _LIVE[key] = self
        store.release(annotator=annotator)  # this person's earlier page (a restarted kernel)
        self._refresh()  # shows the first pair
        self._thread.start()

    def press(self, key: str) -> int | None:
        """Act on one key: y/n/u answer, p takes the last answer back; returns the pair id."""
        key = key.lower() if isinstance(key, str) and not self._stop.is_set() else ""
        if key == "p":
            return self.undo()
        return self.answer(ANSWERS[key]) if key in ANSWERS else None

    def answer(self, label: int) -> int | None:
        """Record ``label`` (1, 0 or -1: unsure) for the pair on show (its id; None: none)."""
        with self._lock:
            item = self._item
            if item is None:
                return None
            seconds = time.monotonic() - self._shown_at
            self.store.answer(item.pair_id, label, annotator=self.annotator, seconds=seconds)
            self._show(self._next())
        self._wake.set()  # counts and plot: the refresher's, off the key's path
        return item.pair_id

    def undo(self) -> int | None:
        """Withdraw the last answer and show its pair again; returns its id (None: none)."""
        with self._lock:
            pair_id = self.store.undo(annotator=self.annotator)
            if pair_id is None:
                return None
            self._show(self._next())
        self._wake.set()
        return pair_id

    def close(self) -> None:
        """Stop the refresher thread and close the widgets (every answer is already stored)."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=max(5.0, 4 * self.poll))
        _close(self.widget)

    def _next(self) -> QueueItem | None:
        """The next pair no other page holds, now held for this one; once the rounds are over,
        no spare (the finished screen, not a model's leftovers)."""
        over = _worker(self.store.status()).startswith("finished")
        return self.store.next_pair(
            page=self.page, annotator=self.annotator, lease=self.lease, spares=not over
        )

    def _show(self, item: QueueItem | None) -> None:
        """Put ``item`` on show (caller holds the lock); None: the waiting message."""
        self._item = None
        if item is None:
            worker = _worker(self.store.status())
            text = "waiting for the next pairs" + (f": {worker}" if worker else "")
            if worker.startswith("finished"):
                text = "finished: every pair is answered; session.export() writes the matches"
            elif worker.startswith("stopped"):
                text = "the rounds stopped: session.start() goes on from the last round"
            elif "(the last)" in worker or worker.startswith("preparing the export"):
                text = f"no more pairs: the budget is asked ({worker})"
            self.pair.value = (
                "<div class='pairlab-label-waiting' style='padding:2em;color:#555;"
                f"font-style:italic'>{html.escape(text)}</div>"
            )
            return
        try:
            left, right = self.texts(item.pair_id)
            markup = pair_html(str(left), str(right), titles=self.titles)
        except Exception as error:  # nothing on show, so no key can answer a pair not shown
            self.pair.value = (
                f"<div class='pairlab-label-error' style='color:#b00'>the texts of pair "
                f"{int(item.pair_id)} could not be read: {html.escape(repr(error))}</div>"
            )
            return
        self._views += 1
        self._item, self._shown_at = item, time.monotonic()
        self.pair.value = (
            f"<div class='pairlab-label-view' data-pair='{int(item.pair_id)}' "
            f"data-view='{self._views}'>{markup}</div>"
        )

    def _refresh(self) -> None:
        counts, status, who = self.store.counts(), self.store.status(), self.store.annotators()
        worker, estimate = _worker(status), status.get("estimate")
        with self._lock:
            over = worker.startswith("finished")  # a spare on show is no longer asked
            if not self._stop.is_set() and (
                self._item is None or over and self._item.kind == "spare"
            ):
                self._show(self._next())
            _extend(self._points, counts)
            line = (
                f"<div style='margin-right:1.5em'><b>{counts['labels']:,}</b> labels · "
                f"<b>{counts['positives']:,}</b> positives · {counts['unsure']:,} unsure · "
                f"{counts['queued']:,} queued</div>"
            )
            if who != self._who and time.monotonic() - self._agreed > _AGREEMENT_EVERY:
                self._who, self._agreed = dict(who), time.monotonic()  # an answer came since
                self.agreement.value = self._agreement()
            who.pop("given", None)  # the pairs known before the session
            team = ", ".join(f"{html.escape(name)} {n:,}" for name, n in who.items())
            answered = _GREY.format(f"answered by {team}") if len(who) > 1 else ""
            self.counts_html.value = line + answered  # at once: never the line without its team
            self.plot.value = sparkline_svg(self._points)
            self.status.value = _GREY.format(f"worker: {html.escape(worker)}") if worker else ""
            self._progress(status.get("progress"))
            pending = status.get("estimate_pending")
            self.guide.value = (
                f"<b>how far</b> (estimated {elapsed(_age(estimate))} ago, from the audit "
                f"pairs): {html.escape(estimate['value'])}"
                if estimate
                else _GREY.format(html.escape(pending["value"] if pending else _FIRST_ESTIMATE))
            )

    def _agreement(self) -> str:
        """The pairs two people answered: Cohen's kappa and the pairs they disagree on."""
        found = self.store.agreement()
        if not found["pairs"]:
            return ""
        kappa, (low, high) = found["kappa"], found["kappa_ci"] or (None, None)
        kappa = (
            "" if kappa is None else f"Cohen's kappa <b>{kappa:.2f}</b> [{low:.2f}, {high:.2f}] · "
        )
        disagree = found["disagree"]
        rows = []
        for row in disagree.head(10).itertuples():
            left, right = (html.escape(_short(t)) for t in self.texts(row.pair_id))
            said = f"{html.escape(row.first)} {SAID[row.first_label]}, "
            said += f"{html.escape(row.second)} {SAID[row.second_label]}"
            now = "waiting for a third answer" if row.label < 0 else f"now {SAID[row.label]}"
            rows.append(f"<li>pair {row.pair_id} ({said}: {now}): {left} ↔ {right}</li>")
        more = f"<li>and {len(disagree) - 10} more</li>" if len(disagree) > 10 else ""
        return (
            f"<b>agreement</b>: {found['pairs']:,} pairs answered by two people · {kappa}"
            f"{len(disagree)} disagreements (a tie counts as unsure until a third person's "
            f"answer settles it){'<ul>' + ''.join(rows) + more + '</ul>' if rows else ''}"
        )

    def _progress(self, status: dict | None) -> None:
        """The worker's step as a bar with the work done and time left (hidden between steps)."""
        step = json.loads(status["value"]) if status and status["value"] else None
        self.bar.layout.display = None if step else "none"
        if step:
            self.bar.value = step["done"] / max(step["total"], 1)
            left = f", about {elapsed(step['left'])} left" if step["left"] is not None else ""
            self.bar_text.value = _GREY.format(
                f"{step['done']:,} of {step['total']:,} {html.escape(step['unit'])}{left}"
            )
        else:
            self.bar_text.value = ""

    def _run(self) -> None:
        beaten = 0.0
        while not self._stop.is_set():
            if time.monotonic() - beaten >= _BEAT:  # from this thread: a busy kernel beats too
                self.keys.beat()
                beaten = time.monotonic()
            if self._wake.wait(self.poll):
                self._stop.wait(_SETTLE)  # keys typed in a burst: one refresh after them
            self._wake.clear()  # an answer from here on wakes the next round
            if self._stop.is_set():
                return
            try:
                self._refresh()
            except Exception as error:  # a texts() or store error: shown, and tried again
                failed = html.escape(f"refresh failed: {error!r}")
                self.status.value = f"<span style='color:#b00'>{failed}</span>"
                if self._stop.wait(self.poll):
                    return

    def _build(self, quiet: float) -> None:
        import ipywidgets as w  # optional dependency: only the widget needs it

        from .keycatcher import KeyCatcher

        tag = "pairlab-label-{}".format  # stable handles for the browser tests
        self.status, self.guide, self.counts_html, self.plot, self.agreement = (
            w.HTML().add_class(tag(name))
            for name in ("status", "guide", "counts", "plot", "agreement")
        )
        self.pair = w.HTML(layout=w.Layout(width="auto")).add_class(tag("pair"))
        self.bar = w.FloatProgress(min=0.0, max=1.0, layout=w.Layout(display="none"))
        self.bar_text = w.HTML().add_class(tag("progress"))
        self.keys = KeyCatcher(placeholder=KEYS_HELP, quiet=quiet, layout=w.Layout(width="34em"))
        self.keys.add_class(tag("keys")).on_key(self.press)
        self.buttons = {}
        for key, text, style in _BUTTONS:
            button = w.Button(description=text, button_style=style, tooltip=text)
            button.on_click(lambda _, key=key: self.press(key))
            self.buttons[key] = button.add_class(tag(f"button-{key}"))
            button.layout.width = "auto"
        rows = [
            w.HBox([*self.buttons.values(), self.keys]),
            w.HBox([self.counts_html, self.plot], layout=w.Layout(align_items="center")),
        ]
        progress = w.HBox([self.bar, self.bar_text], layout=w.Layout(align_items="center"))
        self.widget = w.VBox([self.status, progress, self.pair, *rows, self.guide, self.agreement])
        self.widget.add_class("pairlab-label")


def _short(text, most: int = 80) -> str:
    text = str(text)
    return text if len(text) <= most else text[: most - 1] + "…"


def _close(widget) -> None:
    for child in getattr(widget, "children", ()):
        _close(child)
    widget.close()


def shared_words(left: str, right: str) -> set[str]:
    """Lower-cased word tokens found in both texts' values (field names left out)."""
    left, right = (" ".join(v for _, v in _fields(t) or [("", t)]) for t in (left, right))
    return words(left) & words(right)


def record_html(text: str, shared: set[str]) -> str:
    """One record as HTML: a ``name: value`` field a line, the words in ``shared`` marked."""
    fields = _fields(text)
    if fields is None:
        return marked(text, shared)
    return "".join(
        f"<div><b>{html.escape(name)}</b>: {marked(value, shared)}</div>" for name, value in fields
    )


def pair_html(left: str, right: str, *, titles=("left", "right")) -> str:
    """Both records side by side, each in a box that scrolls when long, shared words marked."""
    shared = shared_words(left, right)
    boxes = "".join(
        f"<div class='pairlab-label-record' style='{_BOX}'><div style='color:#666;font-size:85%'>"
        f"{html.escape(title)}</div>{record_html(text, shared)}</div>"
        for title, text in zip(titles, (left, right))
    )
    return (
        f"<div style='display:flex;gap:0.8em;align-items:stretch;width:100%;"
        f"line-height:1.45'>{boxes}</div>"
    )


def sparkline_svg(points, *, width: int = 260, height: int = 70, most: int = 300) -> str:
    """A small SVG line of positives against labels through ``points`` [(labels, positives)],
    at most ``most`` of them (evenly kept, the last always)."""
    points = np.array(list(points) or [(0, 0)])
    kept = points[np.linspace(0, len(points) - 1, min(len(points), most)).round().astype(int)]
    pad, (labels, positives) = 4, points[-1]
    x, y = (kept / np.maximum(points.max(axis=0), 1)).T  # each in [0, 1]
    x, y = pad + (width - 2 * pad) * x, height - pad - (height - 2 * pad) * y
    xy = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(x, y))
    return (
        f"<svg class='pairlab-label-sparkline' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' aria-label='positives found against "
        f"labels'><rect x='0.5' y='0.5' width='{width - 1}' height='{height - 1}' "
        "fill='none' stroke='#ddd'/>"
        f"<polyline points='{xy}' fill='none' stroke='#2a7ab9' stroke-width='1.5'/>"
        f"<text x='{pad + 2}' y='14' font-size='11' fill='#555'>{positives} positives</text>"
        f"<text x='{width - pad - 2}' y='{height - pad - 2}' font-size='11' fill='#555' "
        f"text-anchor='end'>{labels} labels</text></svg>"
    )


def elapsed(seconds: float) -> str:
    """``seconds`` for a person: "12 s", "1 min 12 s", "2 h 5 min"."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def _fields(text: str) -> list[list[str]] | None:
    """``[[name, value], ...]`` of a ``name: value | name: value`` text; None if not fields."""
    return [p.split(": ", 1) for p in _NEXT_FIELD.split(text)] if _FIELD.match(text) else None


def _curve(history) -> list[tuple[int, int]]:
    """(labels, positives) after each answer row of ``history`` (undos step back)."""
    label = history["label"]
    before = label.groupby(history["pair_id"]).shift()  # the pair's answer this row replaces
    labels = (label.isin((0, 1)).astype(int) - before.isin((0, 1))).cumsum()
    positives = ((label == 1).astype(int) - (before == 1)).cumsum()
    points = [(0, 0)]
    for count, positive in zip(labels, positives):
        _extend(points, {"labels": count, "positives": positive})
    return points


def _extend(points: list, counts: dict) -> None:
    """Append ``counts``' point; an undo (fewer labels) first drops the points it went past."""
    point = (int(counts["labels"]), int(counts["positives"]))
    while len(points) > 1 and points[-1][0] >= point[0] and points[-1] != point:
        points.pop()
    if points[-1] != point:
        points.append(point)


def _worker(status: dict) -> str:
    """The worker's status and its age ("" before the worker's first)."""
    worker = status.get("worker")
    return f"{worker['value']} ({elapsed(_age(worker))})" if worker else ""


def _age(status: dict) -> float:
    """Seconds since a status row's ``updated_at`` (the store writes it, in UTC ISO-8601)."""
    then = datetime.fromisoformat(status["updated_at"])
    return (datetime.now(timezone.utc) - then).total_seconds()
