"""Which model decides the exported matches: the session's bi-encoder (CosineBERT), or a
cross-encoder (ConcatBERT) trained on the same labels re-scoring its candidates (each record's
``m`` nearest neighbours), each thresholded for the target precision
(:func:`precision_threshold`). The audit pairs, never trained on, judge both: a matcher's true
and false positives among the unlabelled pairs it predicts are estimated by inverse-probability
weighting (``M_h / n_h`` per stratum), the rounds averaged by their audit answers; the higher
estimated F1 of the export decides (without audit answers, the bi-encoder)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.pairs import isin_sorted

__all__ = [
    "MATCHERS",
    "Candidates",
    "Matcher",
    "precision_threshold",
    "candidates",
    "bi_encoder",
    "cross_encoder",
    "untrainable",
    "audit_counts",
    "choose",
]

MATCHERS = ("auto", "bi-encoder", "cross-encoder")


@dataclass(frozen=True)
class Candidates:
    """Each record's ``m`` nearest neighbours under the final bi-encoder: sorted pair ids and
    their cosines."""

    ids: np.ndarray
    cosine: np.ndarray
    m: int


@dataclass
class Matcher:
    """One matcher's view of the candidates: its probability of each, the threshold for the
    target precision, and what the audit estimates of its predictions (``estimate``)."""

    name: str
    proba: np.ndarray
    threshold: float
    estimate: dict | None = None

    def predicted(self, ids: np.ndarray) -> np.ndarray:
        return ids[self.proba >= self.threshold]


def precision_threshold(proba: np.ndarray, target: float) -> float:
    """The lowest probability t such that the pairs at or above t have an expected precision
    (their mean calibrated probability) of at least ``target``; 1.0 when none does."""
    if not 0.0 < target <= 1.0:
        raise ValueError(f"target precision must be in (0, 1], got {target!r}")
    p = np.sort(np.asarray(proba, np.float64))[::-1]
    if not len(p):
        return 1.0
    expected = np.cumsum(p) / np.arange(1, len(p) + 1)
    ok = np.nonzero(expected >= target)[0]
    return float(p[ok[-1]]) if len(ok) else 1.0


def candidates(pool, model, m: int) -> Candidates:
    from ..evaluation.candidates import neighbour_pairs

    left = model.embed(pool.left_texts, show_progress=False)
    right = left if pool.symmetric else model.embed(pool.right_texts, show_progress=False)
    ids, cosine = neighbour_pairs(pool.space, left, right, m=min(m, pool.space.n_right))
    return Candidates(ids, cosine, m)


def bi_encoder(model, found: Candidates, target_precision: float) -> Matcher:
    proba = model.calibration.proba(found.cosine)
    return Matcher("bi-encoder", proba, precision_threshold(proba, target_precision))


def cross_encoder(
    pool, found: Candidates, labels, target_precision: float, *, config, model=None, cache=None
) -> Matcher:
    """ConcatBERT trained on ``labels`` (a frame of ``pair_id``, ``label`` 0/1: the session's
    training labels, never the audit) with ``config`` (a :class:`TrainConfig`), scoring the
    candidates. With a ``cache`` folder, the scores are kept under a key of everything that
    decides them: exporting again after a restart reads them back instead of training."""
    from ..active.behaviour import code_digest
    from ..models.concatbert import ConcatBERT
    from ..models.embed import cached_array, model_fingerprint, text_digest
    from ..models.inference import backend, cache_tag

    ids = labels["pair_id"].to_numpy(np.int64)
    y = labels["label"].to_numpy()
    if (why := untrainable(y)) is not None:
        raise ValueError(why)
    train_texts, found_texts = pool.texts(ids), pool.texts(found.ids)

    def score() -> np.ndarray:
        trained = ConcatBERT.train(*train_texts, y, model=model, config=config)
        return trained.logits(*found_texts, batch_size=128, show_progress=True)

    key = cache and text_digest(
        *train_texts,
        *found_texts,
        head=[
            "export cross-encoder logits",
            code_digest(ConcatBERT, cross_encoder)[:12],
            model_fingerprint(model),
            config.to_dict(),
            np.asarray(y, dtype=np.int8).tolist(),
            *cache_tag(backend("cross-encoder")),
        ],
    )
    if key and (Path(cache) / f"{key}.npy").is_file():
        print(f"cross-encoder: scores read back from {Path(cache) / key}.npy (same labels)")
    logits = cached_array(cache, key, score)
    proba = 1.0 / (1.0 + np.exp(-logits))
    return Matcher("cross-encoder", proba, precision_threshold(proba, target_precision))


def untrainable(labels) -> str | None:
    """Why a cross-encoder cannot learn from these 0/1 ``labels`` (None: it can): it needs both
    answers (an easy table's first labels are often all matches)."""
    y = np.asarray(labels)
    if len(np.unique(y)) < 2:
        kind = "matches" if len(y) and y[0] == 1 else "non-matches"
        return f"the cross-encoder needs both answers to learn from: all {len(y)} training labels are {kind}"
    return None


def audit_counts(audit, store, predicted: np.ndarray, held: np.ndarray) -> dict | None:
    """Estimated true and false positives among ``predicted`` (sorted pair ids a matcher calls
    matches) from every audit round of ``audit`` (a :class:`~.audit.SessionAudit`) answered in
    ``store``, leaving out the audit pairs in ``held`` (sorted: pairs a model trained on). None
    without an audit answer."""
    estimates, weights = [], []
    for r in audit.rounds():
        design = audit.load(r)[0]
        answers = store.answers(design.ids)
        keep = (answers >= 0) & ~isin_sorted(design.ids, held)
        if not keep.any():
            continue
        stratum, y = design.stratum[keep], answers[keep].astype(np.float64)
        n = np.bincount(stratum, minlength=len(design.sizes))
        weight = np.divide(design.unlabelled, n, out=np.zeros(len(n)), where=n > 0)[stratum]
        hit = isin_sorted(design.ids[keep], predicted)
        estimates.append((float((weight * y * hit).sum()), float((weight * (1 - y) * hit).sum())))
        weights.append(int(keep.sum()))
    if not estimates:
        return None
    tp, fp = np.average(np.array(estimates), axis=0, weights=weights)
    return {
        "tp": float(tp),
        "fp": float(fp),
        "audit_answers": int(sum(weights)),
        "audit_rounds": len(weights),
    }


def choose(
    matchers: list[Matcher],
    found: Candidates,
    *,
    said_yes: np.ndarray,
    labelled: np.ndarray,
    trained: np.ndarray,
    audit,
    store,
    total: float | None,
) -> tuple[Matcher, dict]:
    """Estimate each matcher's export quality from the audit and pick the best F1 (the first
    matcher, the bi-encoder, where nothing can be estimated). ``said_yes``: the person's yes
    answers (all in the export), ``labelled``: every answered pair (sorted; the matchers'
    predictions among them are replaced by the answers), ``trained``: the pairs the models
    trained on (sorted), ``total``: the audit's estimated number of matching pairs."""
    for matcher in matchers:
        calls = matcher.predicted(found.ids)
        predicted = np.setdiff1d(calls, labelled)
        counts = audit_counts(audit, store, calls, trained)
        estimate = {
            "predicted": int(len(predicted)),
            "threshold": matcher.threshold,
            "exported": int(len(predicted) + len(said_yes)),
        }
        if counts is not None and total:
            seen = counts["tp"] + counts["fp"]
            precision = counts["tp"] / seen if seen > 0 else None
            tp = len(said_yes) + (precision or 0.0) * len(predicted)
            matching = max(total, tp)  # the estimated total cannot be below what is found
            estimate.update(
                counts,
                precision_unlabelled=precision,
                f1=2 * tp / (estimate["exported"] + matching),
                recall=tp / matching,
            )
        matcher.estimate = estimate
    scored = [m for m in matchers if m.estimate.get("f1") is not None]
    if not scored:
        return matchers[0], {
            "chosen": matchers[0].name,
            "why": "no audit estimate (no audit answers, or no estimated total): "
            "the bi-encoder is kept",
        }
    best = max(scored, key=lambda m: m.estimate["f1"])
    return best, {
        "chosen": best.name,
        "why": "the higher F1 the audit estimates: "
        + ", ".join(f"{m.name} {m.estimate['f1']:.3f}" for m in scored),
    }
