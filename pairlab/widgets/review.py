"""Reviewing a model's putative false positives (paper eq. 14): every ``D_near`` and ``D_rand``
negative scoring at least the threshold of a recall, whose share of real errors, judged by hand
in the :class:`FalsePositiveBrowser` (or :func:`report` under papermill), corrects precision."""

from __future__ import annotations

import html
import math
import re
import threading
from collections.abc import Mapping
from numbers import Real

import numpy as np
import pandas as pd

from ..data.loaders import Pool
from ..evaluation import metrics
from ..evaluation.strata import EvalSet
from ..io import check_name
from . import Shown
from .labels import STRATA, LabelStore

__all__ = [
    "FalsePositiveBrowser",
    "RunPicker",
    "threshold_at_recall",
    "putative_false_positives",
    "corrected_summary",
    "marked",
    "words",
    "report",
    "with_texts_and_marks",
]

_WORD = re.compile(r"(\w+)")
_LABELS = {
    "real_error": ("real error", "danger"),  # mark: (button text, button style)
    "actually_positive": ("actually positive", "success"),
    "unsure": ("unsure", ""),
}
_KEYS = {"e": "real_error", "p": "actually_positive", "u": "unsure", "n": 1, "b": -1}
_KEYS_HELP = "keys: e = real error, p = actually positive, u = unsure, n = next, b = back"


def threshold_at_recall(pos_scores, recall: float) -> float:
    """The score threshold where recall reaches ``recall``: the k-th highest positive score,
    k = ceil(recall * n_pos) (a pair counts when its score >= the threshold)."""
    _check_recall(recall)
    pos = metrics.as_scores("pos_scores", pos_scores)
    if len(pos) == 0:
        raise ValueError("pos_scores is empty: no threshold reaches any recall")
    k = max(1, math.ceil(recall * len(pos) - 1e-9))  # the tolerance keeps 0.7 * 10 at 7
    return float(np.partition(pos, len(pos) - k)[len(pos) - k])


def putative_false_positives(eval_set: EvalSet, scores: Mapping, threshold: float) -> pd.DataFrame:
    """Near and rand negatives scoring >= ``threshold``, highest score first (ties by pair id):
    ``pair_id`` (int64), ``stratum`` and ``score`` (float64); ``scores``: ``evaluate``'s."""
    scores = _check_scores(eval_set, scores)
    if isinstance(threshold, bool) or not isinstance(threshold, Real) or not np.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    near, rand = scores["near"] >= threshold, scores["rand"] >= threshold
    ids = np.r_[eval_set.near[near], eval_set.rand[rand]].astype(np.int64)
    score = np.r_[scores["near"][near], scores["rand"][rand]]
    stratum = np.repeat(np.array(STRATA, dtype=object), [near.sum(), rand.sum()])
    order = np.lexsort((ids, -score))
    return pd.DataFrame({"pair_id": ids[order], "stratum": stratum[order], "score": score[order]})


def corrected_summary(eval_set: EvalSet, scores: Mapping, recall: float, counts: Mapping) -> dict:
    """:func:`~pairlab.evaluation.metrics.corrected_precision` at ``recall`` from
    ``LabelStore.counts``' ``counts``, plus ``threshold``, ``tp``, ``fp_near`` and ``fp_rand``."""
    scores = _check_scores(eval_set, scores)
    threshold = threshold_at_recall(scores["positive"], recall)
    tp = int((scores["positive"] >= threshold).sum())
    fp_near = int((scores["near"] >= threshold).sum())
    fp_rand = float(eval_set.w_rand * (scores["rand"] >= threshold).sum())
    out = metrics.corrected_precision(
        tp, fp_near, fp_rand, near_marks=tuple(counts["near"]), rand_marks=tuple(counts["rand"])
    )
    return {**out, "threshold": threshold, "tp": tp, "fp_near": fp_near, "fp_rand": fp_rand}


def marked(text: str, chosen: set[str], *, missing: bool = False) -> str:
    """``text`` HTML-escaped, the words in (``missing``: not in) ``chosen`` in ``<mark>``."""
    parts = _WORD.split(text)  # odd positions are words, even ones what lies between
    return "".join(
        f"<mark>{html.escape(p)}</mark>"
        if k % 2 and (p.lower() in chosen) != missing
        else html.escape(p)
        for k, p in enumerate(parts)
    )


def words(text: str) -> set[str]:
    """The lower-cased word tokens of ``text``."""
    return {w.lower() for w in _WORD.findall(text)}


def report(
    pool: Pool,
    eval_set: EvalSet,
    scores: Mapping,
    *,
    model_id: str,
    store: LabelStore,
    recall: float = 0.2,
    n: int = 10,
) -> pd.DataFrame:
    """The top-``n`` putative false positives of each stratum with texts and current marks, and
    the corrected precision printed: the browser's stand-in under papermill."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    scores = _check_scores(eval_set, scores)
    where = {"task": pool.task, "split": pool.split, "model_id": model_id}
    threshold = threshold_at_recall(scores["positive"], recall)
    putative = putative_false_positives(eval_set, scores, threshold)
    counts = store.counts(**where, pair_ids=putative["pair_id"])
    s = corrected_summary(eval_set, scores, recall, counts)
    (low, high), (near, rand) = s["ci"], (counts["near"], counts["rand"])
    print(
        f"corrected precision at recall {recall:.2f}: {s['precision']:.4f} [{low:.4f}, "
        f"{high:.4f}] (imputed {s['imputed_precision']:.4f}, threshold {threshold:.4f}; real "
        f"errors / judged: near {near[0]}/{near[1]}, rand {rand[0]}/{rand[1]})"
    )
    top = putative.groupby("stratum", sort=False).head(int(n))
    top = top.sort_values(["stratum", "score"], ascending=[True, False], kind="stable")
    return with_texts_and_marks(pool, top, store.marks(**where))


def with_texts_and_marks(pool: Pool, pairs: pd.DataFrame, marks: pd.DataFrame) -> pd.DataFrame:
    """``pairs`` with ``left``, ``right`` and the latest current ``mark`` of each pair."""
    left, right = pool.texts(pairs["pair_id"].to_numpy(np.int64))
    latest = marks.drop_duplicates("pair_id", keep="last").set_index("pair_id")["mark"]
    mark = pairs["pair_id"].map(latest).astype(object)
    mark = mark.where(mark.notna(), None)
    return pairs.assign(left=left, right=right, mark=mark).reset_index(drop=True)


def _check_recall(recall) -> None:
    if isinstance(recall, bool) or not isinstance(recall, Real) or not 0.0 < recall <= 1.0:
        raise ValueError(f"recall must be a number in (0, 1], got {recall!r}")


def _check_scores(eval_set: EvalSet, scores) -> dict[str, np.ndarray]:
    """Each stratum's scores as float64, finite and aligned with ``eval_set``'s pair ids."""
    strata = eval_set.strata()
    if not isinstance(scores, Mapping) or any(name not in scores for name in strata):
        keys = list(scores) if isinstance(scores, Mapping) else type(scores).__name__
        raise ValueError(
            f"scores must map {list(strata)} to score arrays (evaluate(...)['scores']), got {keys}"
        )
    out = {name: metrics.as_scores(f"scores[{name!r}]", scores[name]) for name in strata}
    for name, ids in strata.items():
        if len(out[name]) != len(ids):
            raise ValueError(
                f"scores[{name!r}] has {len(out[name])} scores for {len(ids)} "
                f"{name} pairs of the evaluation set"
            )
    return out


class FalsePositiveBrowser(Shown):
    """Walks one model's putative false positives at a recall and records manual marks. The
    pairs come in a fixed pseudo-random order, so the marked pairs are a uniform sample of each
    stratum's (eq. 14); callbacks may run on a subshell thread, so each action holds a lock."""

    def __init__(
        self,
        pool: Pool,
        eval_set: EvalSet,
        scores: Mapping,
        *,
        model_id: str,
        store: LabelStore,
        annotator: str = "anonymous",
        recall: float = 0.2,
    ):
        _check_recall(recall)
        check_name("model_id", model_id)
        check_name("annotator", annotator)
        self.pool, self.eval_set, self.store = pool, eval_set, store
        self.model_id, self.annotator = model_id, annotator
        self._scores = _check_scores(eval_set, scores)
        self._where = {"task": pool.task, "split": pool.split, "model_id": model_id}
        self._pos, self._shown = 0, None  # the pair last on show: kept through an empty filter
        self._lock = threading.RLock()
        self._build(recall)
        self._refresh()

    def current(self) -> dict | None:
        """The pair on show: ``pair_id, stratum, score, left, right, mark`` (None if none)."""
        if not len(self._pairs):
            return None
        row = self.table([self._pos]).iloc[0]
        return {**row, "pair_id": int(row["pair_id"]), "score": float(row["score"])}

    def table(self, rows=slice(None)) -> pd.DataFrame:
        """The pairs being browsed (those at positions ``rows``) with their texts and this
        annotator's current marks."""
        mine = self.store.marks(**self._where, annotator=self.annotator)
        return with_texts_and_marks(self.pool, self._pairs.iloc[rows], mine)

    def summary_dict(self) -> dict:
        """:func:`corrected_summary` at the slider's recall, plus ``recall`` and ``marked``."""
        recall, putative = self.slider.value, self._putative["pair_id"]
        counts = self.store.counts(**self._where, pair_ids=putative)
        summary = corrected_summary(self.eval_set, self._scores, recall, counts)
        marks = self.store.marks(**self._where)
        marks = marks[marks["pair_id"].isin(putative)]  # the pairs the correction counts
        marked = {s: int(marks["pair_id"][marks["stratum"] == s].nunique()) for s in STRATA}
        return {**summary, "recall": float(recall), "marked": marked}

    def mark(self, mark: str) -> int | None:
        """Record ``mark`` for the pair on show and move to the next; returns the row id."""
        with self._lock:
            pair = self.current()
            if pair is None:
                return None
            row = self.store.add(
                pair["pair_id"],
                **self._where,
                stratum=pair["stratum"],
                mark=mark,
                annotator=self.annotator,
                left_text=pair["left"],
                right_text=pair["right"],
            )
            self.step(1)
            return row

    def step(self, delta: int) -> None:
        """Move ``delta`` pairs forward (negative: back), staying inside the list."""
        with self._lock:
            self._pos = int(np.clip(self._pos + delta, 0, max(len(self._pairs) - 1, 0)))
            self._render()

    def press(self, key: str) -> None:
        """Act on one key as if pressed in the keys box (e/p/u mark, n/b move; others ignored)."""
        action = _KEYS.get(key.lower())
        with self._lock:
            if isinstance(action, str):
                self.mark(action)
            elif action is not None:
                self.step(action)

    def _build(self, recall: float) -> None:
        import ipywidgets as w  # optional dependency: only the widget needs it

        from .keycatcher import KeyCatcher

        tag = "pairlab-fp-{}".format  # stable handles for the browser tests
        self.slider = w.FloatSlider(
            value=recall, min=min(0.05, recall), max=1.0, step=0.05, continuous_update=False
        )
        self.slider.description = "recall"
        self.stratum = w.ToggleButtons(options=["all", *STRATA], description="stratum")
        self.prev_button = w.Button(description="◀ back", tooltip="back (b)").add_class(tag("back"))
        self.next_button = w.Button(description="next ▶", tooltip="next (n)").add_class(tag("next"))
        self.position = w.Label().add_class(tag("position"))
        self.pair = w.HTML().add_class(tag("pair"))
        self.summary = w.HTML().add_class(tag("summary"))
        self.keys = KeyCatcher(placeholder=_KEYS_HELP, layout=w.Layout(width="60%"))
        self.keys.add_class(tag("keys")).on_key(self.press)
        self.slider.add_class(tag("recall")).observe(lambda _: self._refresh(), names="value")
        self.stratum.add_class(tag("stratum")).observe(lambda _: self._refresh(), names="value")
        self.prev_button.on_click(lambda _: self.step(-1))
        self.next_button.on_click(lambda _: self.step(1))
        key_of = {action: key for key, action in _KEYS.items()}
        self.buttons = {}
        for m, (text, style) in _LABELS.items():
            button = w.Button(description=text, button_style=style, tooltip=f"{text} ({key_of[m]})")
            button.on_click(lambda _, m=m: self.mark(m))
            self.buttons[m] = button.add_class(tag(f"mark-{m}"))
        self.widget = w.VBox(
            [
                w.HBox([self.slider, self.stratum]),
                w.HBox([self.prev_button, self.position, self.next_button]),
                self.pair,
                w.HBox(list(self.buttons.values())),
                self.keys,
                self.summary,
            ]
        ).add_class(tag("browser"))

    def _refresh(self) -> None:
        """Recompute the list, staying on the pair last shown where it is listed."""
        with self._lock:
            threshold = threshold_at_recall(self._scores["positive"], self.slider.value)
            pairs = self._putative = putative_false_positives(
                self.eval_set, self._scores, threshold
            )
            if self.stratum.value != "all":
                pairs = pairs[pairs["stratum"] == self.stratum.value]
            with np.errstate(over="ignore"):  # a fixed pseudo-random key per pair id
                key = pairs["pair_id"].to_numpy(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
            pairs = pairs.iloc[np.argsort(key)]
            self._pairs = pairs.reset_index(drop=True)
            at = np.flatnonzero(self._pairs["pair_id"].to_numpy() == self._shown)
            self._pos = int(at[0]) if len(at) else 0
            self._render()

    def _render(self) -> None:
        pair, n = self.current(), len(self._pairs)
        if pair is not None:
            self._shown = pair["pair_id"]
        for button in (*self.buttons.values(), self.prev_button, self.next_button):
            button.disabled = n == 0
        self.pair.value = _pair_html(pair) if pair else "<i>no putative false positive here</i>"
        self.summary.value = _summary_html(self.summary_dict())
        # last: once the position reads the new place, the pair and summary already show it
        self.position.value = f"{self._pos + 1 if n else 0} of {n}"


class RunPicker(Shown):
    """A dropdown of scored runs ``{name: (pool, eval_set, scores, model_id)}``; picking one
    shows its :class:`FalsePositiveBrowser`, built on the first pick and kept."""

    def __init__(
        self, runs: Mapping, *, store: LabelStore, annotator: str = "anonymous", recall: float = 0.2
    ):
        import ipywidgets as w

        if not runs:
            raise ValueError("runs is empty: nothing to browse")
        self.runs, self._options = dict(runs), dict(store=store, annotator=annotator, recall=recall)
        self.browsers: dict[str, FalsePositiveBrowser] = {}
        self.dropdown = w.Dropdown(options=list(self.runs), description="run")
        self.widget = w.VBox([self.dropdown.add_class("pairlab-run-picker-dropdown")])
        self.widget.add_class("pairlab-run-picker")
        self.dropdown.observe(lambda _: self._show(), names="value")
        self._show()

    def _show(self) -> None:
        name = self.dropdown.value
        if name not in self.browsers:
            *data, model_id = self.runs[name]  # pool, eval set, scores
            self.browsers[name] = FalsePositiveBrowser(*data, model_id=model_id, **self._options)
        self.widget.children = [self.dropdown, self.browsers[name].widget]


def _pair_html(pair: dict) -> str:
    left, right = pair["left"], pair["right"]  # each with the words the other lacks marked
    left, right = marked(left, words(right), missing=True), marked(right, words(left), missing=True)
    box = "flex:1;border:1px solid #ccc;border-radius:4px;padding:0.5em"
    mark = _LABELS[pair["mark"]][0] if pair["mark"] else "not marked"
    return (
        f"<div style='display:flex;gap:1em'><div style='{box}'>{left}</div>"
        f"<div style='{box}'>{right}</div></div>"
        f"<div style='color:#666'>pair {pair['pair_id']} · {pair['stratum']} · "
        f"score {pair['score']:.4f} · {html.escape(mark)}</div>"
    )


def _summary_html(s: dict) -> str:
    low, high = s["ci"]
    return (
        f"recall {s['recall']:.2f} · threshold {s['threshold']:.4f} · putative false "
        f"positives: {s['fp_near']} near, {s['fp_rand']:.1f} estimated from rand<br>"
        f"imputed precision <b>{s['imputed_precision']:.4f}</b> · corrected precision "
        f"<b>{s['precision']:.4f}</b> [{low:.4f}, {high:.4f}] (95%)<br>"
        f"marked pairs: near {s['marked']['near']}, rand {s['marked']['rand']} · "
        f"real-error share: near {s['p_near']:.2f}, rand {s['p_rand']:.2f}"
    )
