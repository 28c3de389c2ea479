"""Reviewing a model's putative false positives (paper eq. 14): pure functions the browser
widget and the static report share.

At the threshold of a recall, every ``D_near`` and ``D_rand`` negative scoring at least the
threshold is a *putative* false positive: its label was imputed, and some are real positives
missed by the data set. The share of real errors per stratum, judged by hand, corrects the
estimated precision. :func:`report` is the static view for papermill runs, where widgets have
no state. The public functions validate and raise ``ValueError``; the ``compute_*`` cores do
not (the widget calls them after validating once).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..data.loaders import Pool
from ..evaluation import metrics
from ..evaluation.strata import EvalSet
from .labels import STRATA, LabelStore

__all__ = [
    "threshold_at_recall",
    "putative_false_positives",
    "corrected_summary",
    "highlight_differences",
    "report",
    "compute_threshold",
    "compute_putative",
    "compute_corrected",
    "with_texts_and_marks",
    "check_recall",
    "check_scores",
]


_WORD = re.compile(r"(\w+)")


# ---------------------------------------------------------------------------------------------
# Pure functions


def threshold_at_recall(pos_scores, recall: float) -> float:
    """The score threshold where recall reaches ``recall``: the k-th highest positive score,
    k = ceil(recall * n_pos) (a pair counts when its score >= the threshold)."""
    check_recall(recall)
    pos = metrics.as_scores("pos_scores", pos_scores)
    if len(pos) == 0:
        raise ValueError("pos_scores is empty: no threshold reaches any recall")
    return compute_threshold(pos, recall)


def putative_false_positives(eval_set: EvalSet, scores: Mapping, threshold: float) -> pd.DataFrame:
    """Near and rand negatives scoring >= ``threshold``, highest score first.

    ``scores`` is ``evaluate(...)["scores"]``. Returns columns ``pair_id`` (int64),
    ``stratum`` ("near"/"rand") and ``score`` (float64).
    """
    checked = check_scores(eval_set, scores)
    if not _is_number(threshold) or not np.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    return compute_putative(eval_set, checked, float(threshold))


def corrected_summary(eval_set: EvalSet, scores: Mapping, recall: float, counts: Mapping) -> dict:
    """Imputed and corrected precision at ``recall``, given manual ``counts``.

    ``counts`` is ``LabelStore.counts(...)``: ``{"near": (real_errors, judged), "rand": ...}``.
    Returns :func:`pairlab.evaluation.metrics.corrected_precision`'s dict plus ``threshold``, ``tp``,
    ``fp_near`` and ``fp_rand`` (the weighted estimate from the random stratum).
    """
    check_recall(recall)
    checked = check_scores(eval_set, scores)
    missing = [s for s in STRATA if s not in counts]
    if missing:
        raise ValueError(f"counts must have keys {STRATA} (LabelStore.counts), missing {missing}")
    return compute_corrected(eval_set, checked, recall, counts)


def highlight_differences(left: str, right: str) -> tuple[str, str]:
    """Both texts HTML-escaped, with ``<mark>`` around words (case-insensitive) missing from the
    other text."""
    left_words, right_words = _words(left), _words(right)
    return _highlight(left, right_words), _highlight(right, left_words)


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
    """The top-``n`` putative false positives of each stratum (near, then rand) with texts and
    current marks (any annotator); prints the corrected-precision line. The static stand-in
    for the browser under papermill."""
    check_recall(recall)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    checked = check_scores(eval_set, scores)
    where = {"task": pool.task, "split": pool.split, "model_id": model_id}
    putative = compute_putative(eval_set, checked, compute_threshold(checked["positive"], recall))
    counts = store.counts(**where, pair_ids=putative["pair_id"])
    summary = compute_corrected(eval_set, checked, recall, counts)
    print(_summary_line(summary, recall, counts))
    top = putative.groupby("stratum", sort=False).head(int(n))
    top = top.sort_values(["stratum", "score"], ascending=[True, False], kind="stable")
    return with_texts_and_marks(pool, top, store.marks(**where))


# ---------------------------------------------------------------------------------------------
# The widget


def compute_threshold(pos: np.ndarray, recall: float) -> float:
    k = max(1, math.ceil(recall * len(pos) - 1e-9))  # the tolerance keeps 0.7 * 10 at 7
    return float(np.partition(pos, len(pos) - k)[len(pos) - k])


def compute_putative(eval_set: EvalSet, scores: dict, threshold: float) -> pd.DataFrame:
    near, rand = scores["near"] >= threshold, scores["rand"] >= threshold
    ids = np.r_[eval_set.near[near], eval_set.rand[rand]].astype(np.int64)
    score = np.r_[scores["near"][near], scores["rand"][rand]]
    stratum = np.repeat(np.array(STRATA, dtype=object), [near.sum(), rand.sum()])
    order = np.lexsort((ids, -score))  # score descending, ties by pair id
    return pd.DataFrame({"pair_id": ids[order], "stratum": stratum[order], "score": score[order]})


def compute_corrected(eval_set: EvalSet, scores: dict, recall: float, counts: Mapping) -> dict:
    threshold = compute_threshold(scores["positive"], recall)
    tp = int((scores["positive"] >= threshold).sum())
    fp_near = int((scores["near"] >= threshold).sum())
    fp_rand = float(eval_set.w_rand * (scores["rand"] >= threshold).sum())
    out = metrics.corrected_precision(
        tp, fp_near, fp_rand, near_marks=tuple(counts["near"]), rand_marks=tuple(counts["rand"])
    )
    return {**out, "threshold": threshold, "tp": tp, "fp_near": fp_near, "fp_rand": fp_rand}


def with_texts_and_marks(pool: Pool, pairs: pd.DataFrame, marks: pd.DataFrame) -> pd.DataFrame:
    """``pairs`` with ``left``, ``right`` and the latest current ``mark`` of each pair."""
    left, right = pool.texts(pairs["pair_id"].to_numpy(np.int64))
    latest = marks.drop_duplicates("pair_id", keep="last").set_index("pair_id")["mark"]
    mark = pairs["pair_id"].map(latest).astype(object)
    return pairs.assign(left=left, right=right, mark=mark.where(mark.notna(), None)).reset_index(
        drop=True
    )


def _summary_line(s: dict, recall: float, counts: Mapping) -> str:
    low, high = s["ci"]
    return (
        f"corrected precision at recall {recall:.2f}: {s['precision']:.4f} "
        f"[{low:.4f}, {high:.4f}] (imputed {s['imputed_precision']:.4f}, threshold "
        f"{s['threshold']:.4f}; real errors / judged: near {counts['near'][0]}/"
        f"{counts['near'][1]}, rand {counts['rand'][0]}/{counts['rand'][1]})"
    )


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _highlight(text: str, other_words: set[str]) -> str:
    parts = _WORD.split(text)  # odd positions are words, even ones what lies between
    return "".join(
        f"<mark>{html.escape(p)}</mark>"
        if k % 2 and p.lower() not in other_words
        else html.escape(p)
        for k, p in enumerate(parts)
    )


# ---------------------------------------------------------------------------------------------
# Validation


def check_recall(recall) -> None:
    if not _is_number(recall) or not 0.0 < recall <= 1.0:
        raise ValueError(f"recall must be a number in (0, 1], got {recall!r}")


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def check_scores(eval_set: EvalSet, scores) -> dict[str, np.ndarray]:
    """Each stratum's scores as float64, finite and aligned with ``eval_set``'s pair ids."""
    strata = eval_set.strata()
    if not isinstance(scores, Mapping) or any(name not in scores for name in strata):
        keys = list(scores) if isinstance(scores, Mapping) else type(scores).__name__
        raise ValueError(
            f"scores must map {list(strata)} to score arrays (evaluate(...)['scores']), got {keys}"
        )
    out = {}
    for name, ids in strata.items():
        out[name] = metrics.as_scores(f"scores[{name!r}]", scores[name])
        if len(out[name]) != len(ids):
            raise ValueError(
                f"scores[{name!r}] has {len(out[name])} scores for {len(ids)} "
                f"{name} pairs of the evaluation set"
            )
    if len(out["positive"]) == 0:
        raise ValueError("the evaluation set has no positives: no threshold reaches any recall")
    return out
