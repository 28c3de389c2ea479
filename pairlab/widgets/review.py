"""Reviewing a model's putative false positives (paper eq. 14): the functions the browser widget
and the static report share.

At the threshold of a recall, every ``D_near`` and ``D_rand`` negative scoring at least the
threshold is a *putative* false positive: its label was imputed, and some are real positives the
data set missed. The share of real errors per stratum, judged by hand, corrects the estimated
precision. :func:`report` is the static view for papermill runs, where widgets have no state.
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
    "marked",
    "words",
    "report",
    "with_texts_and_marks",
    "check_recall",
    "check_scores",
]

_WORD = re.compile(r"(\w+)")


def threshold_at_recall(pos_scores, recall: float) -> float:
    """The score threshold where recall reaches ``recall``: the k-th highest positive score,
    k = ceil(recall * n_pos) (a pair counts when its score >= the threshold)."""
    check_recall(recall)
    pos = metrics.as_scores("pos_scores", pos_scores)
    if len(pos) == 0:
        raise ValueError("pos_scores is empty: no threshold reaches any recall")
    k = max(1, math.ceil(recall * len(pos) - 1e-9))  # the tolerance keeps 0.7 * 10 at 7
    return float(np.partition(pos, len(pos) - k)[len(pos) - k])


def putative_false_positives(eval_set: EvalSet, scores: Mapping, threshold: float) -> pd.DataFrame:
    """Near and rand negatives scoring >= ``threshold``, highest score first (ties by pair id).

    ``scores`` is ``evaluate(...)["scores"]``. Returns columns ``pair_id`` (int64),
    ``stratum`` ("near"/"rand") and ``score`` (float64)."""
    scores = check_scores(eval_set, scores)
    if not _is_number(threshold) or not np.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    near, rand = scores["near"] >= threshold, scores["rand"] >= threshold
    ids = np.r_[eval_set.near[near], eval_set.rand[rand]].astype(np.int64)
    score = np.r_[scores["near"][near], scores["rand"][rand]]
    stratum = np.repeat(np.array(STRATA, dtype=object), [near.sum(), rand.sum()])
    order = np.lexsort((ids, -score))
    return pd.DataFrame({"pair_id": ids[order], "stratum": stratum[order], "score": score[order]})


def corrected_summary(eval_set: EvalSet, scores: Mapping, recall: float, counts: Mapping) -> dict:
    """Imputed and corrected precision at ``recall``, given manual ``counts``.

    ``counts`` is ``LabelStore.counts(...)``: ``{"near": (real_errors, judged), "rand": ...}``.
    Returns :func:`pairlab.evaluation.metrics.corrected_precision`'s dict plus ``threshold``,
    ``tp``, ``fp_near`` and ``fp_rand`` (the weighted estimate from the random stratum)."""
    scores = check_scores(eval_set, scores)
    missing = [s for s in STRATA if s not in counts]
    if missing:
        raise ValueError(f"counts must have keys {STRATA} (LabelStore.counts), missing {missing}")
    threshold = threshold_at_recall(scores["positive"], recall)
    tp = int((scores["positive"] >= threshold).sum())
    fp_near = int((scores["near"] >= threshold).sum())
    fp_rand = float(eval_set.w_rand * (scores["rand"] >= threshold).sum())
    out = metrics.corrected_precision(
        tp, fp_near, fp_rand, near_marks=tuple(counts["near"]), rand_marks=tuple(counts["rand"])
    )
    return {**out, "threshold": threshold, "tp": tp, "fp_near": fp_near, "fp_rand": fp_rand}


def marked(text: str, chosen: set[str], *, missing: bool = False) -> str:
    """``text`` HTML-escaped, with ``<mark>`` around each word whose lower case is in ``chosen``
    (``missing``: is not in it)."""
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


def highlight_differences(left: str, right: str) -> tuple[str, str]:
    """Both texts HTML-escaped, with ``<mark>`` around words (case-insensitive) missing from the
    other text."""
    return marked(left, words(right), missing=True), marked(right, words(left), missing=True)


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
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    scores = check_scores(eval_set, scores)
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
    out = {name: metrics.as_scores(f"scores[{name!r}]", scores[name]) for name in strata}
    for name, ids in strata.items():
        if len(out[name]) != len(ids):
            raise ValueError(
                f"scores[{name!r}] has {len(out[name])} scores for {len(ids)} "
                f"{name} pairs of the evaluation set"
            )
    if len(out["positive"]) == 0:
        raise ValueError("the evaluation set has no positives: no threshold reaches any recall")
    return out
