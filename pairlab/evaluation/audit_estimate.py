"""How far am I? The pool's positives, the share found and the model's precision and recall,
each with a 95% interval, from an audit drawn by :func:`.audit.draw_audit`.

Stratum h holds labelled pairs (``known`` positives) and ``M_h`` unlabelled ones, ``n_h`` of
them audited with ``k_h`` positives; the other ``M_h - n_h`` hold ``Binomial(M_h - n_h, p_h)``
positives, ``p_h`` from the rate prior's posterior (:mod:`.audit_prior`): a finite-population
beta-binomial posterior, which covers recall at the nominal level (Webber 2012). Intervals are
quantiles of joint draws of all strata (``T >= found`` in each). A flat prior leaves a huge
all-zero stratum unbounded above; the calibrated prior pins it down, and ``prior_weight`` is the
share of the unseen positives resting on it. :func:`estimate_wald` undercovers at these rates."""

from __future__ import annotations

import time

import numpy as np

from ..data.pairs import isin_sorted
from .audit import Audit, AuditStrata, draw_audit
from .audit_prior import rate_prior

__all__ = [
    "estimate",
    "estimate_wald",
    "combine_rounds",
    "coverage",
    "replay_coverage",
    "replay_combined",
]


def estimate(
    audit: Audit, labels, *, found=None, level: float = 0.95, n_draws: int = 10_000, seed: int = 0
) -> dict:
    """Posterior estimates from one audit's 0/1 ``labels`` (aligned with ``audit.ids``);
    ``found``: the positives labelled so far (default: known at draw time plus the audit's).
    Returns the total, the share found and the model's precision and recall (None without a
    threshold), each with its ``_ci``, and ``total_draws``, ``audited``, ``audit_positives``,
    ``prior_weight``, ``level``."""
    k, found = _checked(audit, labels, found, level)
    if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 2:
        raise ValueError(f"n_draws must be an integer >= 2, got {n_draws!r}")
    n = audit.allocation
    rest = audit.unlabelled - n
    options = dict(prior=audit.prior, strength=audit.strength, max_positives=audit.max_positives)
    belief = rate_prior(audit.rates, sizes=audit.unlabelled, **options)
    post = belief.posterior(k, n)
    rng = np.random.default_rng(seed)
    positives = audit.known + k + rng.binomial(rest, post.draw(n_draws, rng))  # (n_draws, H)
    unseen = rest * post.mean()
    point = audit.known + k + unseen  # (H,)
    s = belief.pseudo_pairs()
    prior_weight = float(np.sum(unseen * s / (s + n)) / max(unseen.sum(), 1e-300))
    total = max(float(point.sum()), found)
    t_draws = np.maximum(positives.sum(axis=1), found)  # T >= the positives already found
    t_ci = _interval(t_draws, level)
    out = _fields(total, t_ci, found, _interval(found / np.maximum(t_draws, 1e-300), level))
    pred = audit.predicted
    if audit.sizes[pred].sum() > 0:  # no pair above the threshold: precision is undefined
        n_pred = int(audit.sizes[pred].sum())
        tp_draws = positives[:, pred].sum(axis=1)
        out.update(
            precision=float(point[pred].sum() / n_pred),
            predicted_pairs=n_pred,
            precision_ci=_interval(tp_draws / n_pred, level),
            recall=float(point[pred].sum() / total),
            recall_ci=_interval(tp_draws / np.maximum(t_draws, 1e-300), level),
        )
    return {
        **out,
        "total_draws": t_draws,
        "audited": int(n.sum()),
        "audit_positives": int(k.sum()),
        "prior_weight": prior_weight,
        "level": level,
    }


def estimate_wald(audit: Audit, labels, *, found=None, level: float = 0.95) -> dict:
    """Stratified estimator ``known_h + M_h k_h / n_h`` with its normal interval (finite
    population correction; recall of the model by the delta method). Same keys as
    :func:`estimate`, without draws or ``prior_weight``."""
    from scipy.stats import norm

    k, found = _checked(audit, labels, found, level)
    n, m = audit.allocation, audit.unlabelled
    empty = (n == 0) & (m > 0)
    if empty.any():
        h = int(np.flatnonzero(empty)[0])
        raise ValueError(
            f"stratum {h} has {m[h]} unlabelled pairs and no audit pair: the "
            "stratified estimator needs at least one per stratum (floor >= 1)"
        )
    rate = np.where(n > 0, k / np.maximum(n, 1), 0.0)
    point = audit.known + m * rate
    fpc = 1 - n / np.maximum(m, 1)  # finite population correction
    var = m.astype(np.float64) ** 2 * fpc * rate * (1 - rate) / np.maximum(n - 1, 1)
    z = norm.ppf(0.5 + level / 2)
    total, v_total = max(point.sum(), found), var.sum()
    t_lo, t_hi = max(total - z * np.sqrt(v_total), found, 1e-300), total + z * np.sqrt(v_total)
    recall_ci = [found / t_hi if t_hi else float("nan"), min(found / t_lo, 1.0)]
    out = _fields(float(total), [float(t_lo), float(t_hi)], found, recall_ci)
    pred = audit.predicted
    if audit.sizes[pred].sum() > 0:  # no pair above the threshold: precision is undefined
        tp, v_tp, n_pred = point[pred].sum(), var[pred].sum(), int(audit.sizes[pred].sum())
        r = tp / total
        sd_r = np.sqrt(max(v_tp * (1 - 2 * r) + r * r * v_total, 0.0)) / total
        tp_lo, tp_hi = max(tp - z * np.sqrt(v_tp), 0), min(tp + z * np.sqrt(v_tp), n_pred)
        out.update(
            precision=float(tp / n_pred),
            predicted_pairs=n_pred,
            precision_ci=[float(tp_lo / n_pred), float(tp_hi / n_pred)],
            recall=float(r),
            recall_ci=[float(max(r - z * sd_r, 0)), float(min(r + z * sd_r, 1))],
        )
    return {**out, "audited": int(n.sum()), "audit_positives": int(k.sum()), "level": level}


def combine_rounds(
    audits, labels, *, found: int, level: float = 0.95, n_draws: int = 10_000, seed: int = 0
) -> dict:
    """The total and the share found from several audit rounds (each with its own strata):
    estimates and each round's sorted posterior draws averaged with weights
    ``1 / design_variance``. Sorted, since the rounds share their models' calibration errors:
    averaged as independent, six rounds on the many-to-many catalogues put the truth below the
    interval 17% of the time; sorted, the interval is the weighted mean of the rounds' own."""
    audits, labels = list(audits), list(labels)
    if not audits or len(audits) != len(labels):
        raise ValueError(f"need one label array per audit, got {len(audits)} and {len(labels)}")
    rng = np.random.default_rng(seed)
    rounds = [
        estimate(a, y, found=found, level=level, n_draws=n_draws, seed=rng)
        for a, y in zip(audits, labels)
    ]
    var = np.array([a.design_variance for a in audits])
    w = (var == 0).astype(np.float64) if (var == 0).any() else 1.0 / var
    w /= w.sum()
    draws = np.sum([wr * np.sort(est["total_draws"]) for wr, est in zip(w, rounds)], axis=0)
    total = max(float(np.sum([wr * est["total"] for wr, est in zip(w, rounds)])), found)
    lo, hi = _interval(np.maximum(draws, found), level)
    return {
        "total": total,
        "total_ci": [lo, hi],
        "found": found,
        "recall_found": found / total if total else float("nan"),
        "recall_found_ci": [found / hi if hi else float("nan"), found / lo if lo else float("nan")],
        "weights": w.tolist(),
        "rounds": rounds,
    }


def coverage(
    strata: AuditStrata,
    positives,
    labelled,
    n: int,
    *,
    repeats: int = 100,
    seed: int = 0,
    method: str = "bayes",
    prior: str = "recalibrated",
    strength: float = 1.0,
    floor: int = 1,
    n_draws: int = 4000,
    max_positives: float | None = None,
) -> dict:
    """How often fresh audits' intervals cover the truth on a pool whose ``positives`` (sorted
    int64 ids) are all known: ``repeats`` audits of ``n`` pairs, ``labelled`` (sorted ids)
    fixed. :func:`_tally` of ``total``, ``recall_found`` (and the model's precision, recall)."""
    if method not in ("bayes", "wald"):
        raise ValueError(f"method must be 'bayes' or 'wald', got {method!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    positives, labelled = np.asarray(positives, np.int64), np.asarray(labelled, np.int64)
    labels = isin_sorted(labelled, positives).astype(np.int64)
    found = int(labels.sum())
    truth = _truth_of(len(positives), found)
    pred = strata.predicted
    if strata.sizes[pred].sum() > 0:
        tp = int(pred[strata.stratum_of(positives)].sum())
        truth.update(precision=tp / int(strata.sizes[pred].sum()), recall=tp / len(positives))
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    options = dict(floor=floor, prior=prior, strength=strength, max_positives=max_positives)
    estimates = []
    for _ in range(repeats):
        audit = draw_audit(strata, n, labelled, labels, seed=rng, **options)
        y = isin_sorted(audit.ids, positives).astype(np.int64)
        estimates.append(
            estimate(audit, y, found=found, n_draws=n_draws, seed=rng)
            if method == "bayes"
            else estimate_wald(audit, y, found=found)
        )
    # per stratum, the design every fresh audit shares and the truth it samples from: enough
    # to replay the check without pairs (replay_coverage)
    shared = ("sizes", "unlabelled", "known", "rates", "predicted")
    frame = {name: getattr(audit, name).tolist() for name in shared}
    true = np.bincount(strata.stratum_of(positives), minlength=strata.n_strata)
    frame["positives_unlabelled"] = (true - audit.known).tolist()
    return {
        **_tally(truth, estimates),
        "repeats": repeats,
        "audit_size": n,
        **options,
        "max_positives": None if max_positives is None else float(max_positives),
        "strata": frame,
        "seconds": time.perf_counter() - start,
    }


def _tally(truth: dict, estimates: list, audits: bool = True) -> dict:
    """Per key of ``truth``: the share of ``estimates`` whose interval covered it, their mean
    width and mean point; with ``audits``, the mean audit positives and prior weight."""
    out = {"coverage": {}, "mean_width": {}, "mean_estimate": {}}
    for key, value in truth.items():
        lo, hi = np.array([est[f"{key}_ci"] for est in estimates], dtype=np.float64).T
        out["coverage"][key] = float(np.mean((lo - 1e-9 <= value) & (value <= hi + 1e-9)))
        out["mean_width"][key] = float(np.mean(hi - lo))
        out["mean_estimate"][key] = float(np.mean([est[key] for est in estimates]))
    out["truth"] = truth
    if audits:
        out["mean_audit_positives"] = float(np.mean([e["audit_positives"] for e in estimates]))
        out["mean_prior_weight"] = float(
            np.mean([e.get("prior_weight", np.nan) for e in estimates])
        )
    return out


def _truth_of(total, found) -> dict:
    total = float(total)
    return {"total": total, "recall_found": found / total if total else float("nan")}


def replay_coverage(
    frame: dict,
    n: int,
    *,
    repeats: int = 1000,
    seed: int = 0,
    prior: str = "recalibrated",
    strength: float = 1.0,
    floor: int | None = None,
    n_draws: int = 2000,
    max_positives: float | None = None,
) -> dict:
    """:func:`coverage` from a check's per-stratum record (its ``"strata"``): a fresh audit's
    hits per stratum are hypergeometric, the counts a draw of pairs gives, so a recorded check
    replays under another ``prior`` or size ``n`` without the pairs."""
    audit, p_unl = _replayed_design(frame, n, prior, strength, floor, max_positives)
    found = int(audit.known.sum())
    truth = _truth_of(found + p_unl.sum(), found)
    rng = np.random.default_rng(seed)
    estimates = [
        estimate(audit, _hits(audit, p_unl, rng), found=found, n_draws=n_draws, seed=rng)
        for _ in range(repeats)
    ]
    return {
        **_tally(truth, estimates),
        "repeats": repeats,
        "audit_size": int(audit.allocation.sum()),
    }


def _replayed_design(frame: dict, n: int, prior: str, strength, floor, max_positives=None):
    """A recorded frame's audit design of ``n`` pairs under ``prior`` (placeholder ids) and its
    true positives per stratum. ``floor`` None: one a stratum where ``n`` is enough, as sessions."""
    sizes, m = np.asarray(frame["sizes"], np.int64), np.asarray(frame["unlabelled"], np.int64)
    if floor is None:
        floor = 1 if n >= len(sizes) else 0
    floor = floor if floor * int((m > 0).sum()) <= n else 0  # too few pairs for every stratum
    options = dict(prior=prior, strength=strength, floor=floor, max_positives=max_positives)
    audit = Audit.planned(
        int(n), sizes, m, frame["known"], frame["rates"], frame["predicted"], **options
    )
    return audit, np.asarray(frame["positives_unlabelled"], np.int64)


def _hits(audit, p_unl, rng) -> np.ndarray:
    """A fresh audit's 0/1 answers: ``k_h`` hypergeometric hits at the start of each stratum."""
    alloc, m = audit.allocation, audit.unlabelled
    k = rng.hypergeometric(p_unl, m - p_unl, alloc) if alloc.sum() else np.zeros_like(alloc)
    return (
        np.arange(alloc.sum()) - np.repeat(np.cumsum(alloc) - alloc, alloc) < np.repeat(k, alloc)
    ).astype(np.int64)


def replay_combined(
    checks,
    *,
    repeats: int = 400,
    seed: int = 0,
    prior: str | None = None,
    strength: float = 1.0,
    floor: int | None = None,
    n_draws: int = 2000,
    max_positives: float | None = None,
) -> dict:
    """The coverage of what a session shows at its latest round: :func:`combine_rounds` over
    every round's audit, each redrawn from its recorded check (``checks``, in round order, each
    with ``"strata"`` and ``"audit_size"``). ``prior`` None: each round under its recorded prior
    (``"recalibrated"`` if none); a name: every round under it."""
    checks = list(checks)
    if not checks:
        raise ValueError("no recorded checks to replay")
    designs = []
    for c in checks:
        drawn = (c.get("prior", "recalibrated"), c.get("strength", 1.0), c.get("max_positives"))
        kind, pseudo, bound = drawn if prior is None else (prior, strength, max_positives)
        floor_c = c.get("floor", floor)
        designs.append(_replayed_design(c["strata"], c["audit_size"], kind, pseudo, floor_c, bound))
    last = checks[-1]["strata"]
    found = int(np.sum(last["known"]))
    truth = _truth_of(np.sum(last["known"]) + np.sum(last["positives_unlabelled"]), found)
    rng = np.random.default_rng(seed)
    audits = [a for a, _ in designs]
    estimates = []
    for _ in range(repeats):
        labels = [_hits(audit, p_unl, rng) for audit, p_unl in designs]
        estimates.append(combine_rounds(audits, labels, found=found, n_draws=n_draws, seed=rng))
    return {
        **_tally(truth, estimates, audits=False),
        "rounds": len(checks),
        "audit_pairs": int(sum(a.allocation.sum() for a in audits)),
        "repeats": repeats,
    }


def _fields(total, total_ci, found, recall_found_ci) -> dict:
    """An estimate's fields: the total and the share found with their intervals; precision and
    recall stay None until some pair is predicted positive."""
    recall_found = found / total if total else float("nan")
    out = {"total": total, "total_ci": total_ci, "found": found, "recall_found": recall_found}
    none = dict.fromkeys(("precision", "precision_ci", "recall", "recall_ci", "predicted_pairs"))
    return {**out, "recall_found_ci": recall_found_ci, **none}


def _interval(draws, level) -> list:
    lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return [float(lo), float(hi)]


def _checked(audit, labels, found, level):
    """Audit positives per stratum (H,) and the found count, validated."""
    if not isinstance(audit, Audit):
        raise TypeError(f"audit must be an Audit (draw_audit), got {type(audit).__name__}")
    y = np.asarray(labels)
    if y.shape != audit.ids.shape:
        raise ValueError(
            f"labels must be one 0/1 per audited pair ({len(audit.ids)}), got shape {y.shape}"
        )
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    k = np.bincount(audit.stratum, weights=y.astype(np.float64), minlength=len(audit.sizes))
    k = k.astype(np.int64)
    if found is None:
        found = int(audit.known.sum() + k.sum())
    if isinstance(found, bool) or not isinstance(found, (int, np.integer)) or found < 0:
        raise ValueError(f"found must be a non-negative integer count of positives, got {found!r}")
    return k, int(found)
