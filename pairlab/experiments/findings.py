"""Each claim of the papers, judged on our metrics, as a :class:`Finding` record (the claim,
where, a status and the values), by one rule per claim; the words, rules included, are in
``pairlab/templates/findings.md.j2``. Statuses: ``held`` (beyond the noise the rule states),
``in part`` (the paper's direction, within noise or on some seeds), ``not held``."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data.paper import BUDGET, A, B
from .summaries import compare

__all__ = [
    "CLAIMS",
    "Finding",
    "adaptive_vs_static",
    "budget_regime",
    "starting_encoder",
    "data_efficiency",
    "adaptivity",
    "augsbert",
    "comparison",
    "eagle",
    "label_noise",
    "rankers",
]

STATUSES = ("held", "in part", "not held")
# the claims that one row beats another on a metric: claim -> (row a, row b, metric key)
COMPARISONS = {
    "eagle_inconsistent_vs_random": ("base_inconsistent", "random", "auc_high_error"),
    "eagle_inconsistent_vs_consistent": ("base_inconsistent", "base_consistent", "auc_all"),
    "eagle_ci_vs_uncertainty": ("conditional_informativeness", "uncertainty", "auc_all"),
    "eagle_ci_vs_random": ("conditional_informativeness", "random", "auc_all"),
    "eagle_uncertainty_vs_random": ("uncertainty", "random", "auc_all"),
    "noise_ci_vs_uncertainty": ("conditional_informativeness", "uncertainty", "ap"),
}
CLAIMS = (
    "adaptive_vs_static",
    "budget_regime",
    "starting_encoder",
    "data_efficiency",
    "silver_helps",
    "bm25_above_rs",
    "sampler_ranking",
    "no_better_than_random",
    *COMPARISONS,
)


@dataclass(frozen=True)
class Finding:
    """One claim judged on one task (or budget): ``values`` holds ours (means, per seed,
    intervals) and the paper's under named keys the claim's macro reads."""

    claim: str
    task: str
    status: str
    values: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.claim not in CLAIMS:
            raise ValueError(f"unknown claim {self.claim!r}; known: {sorted(CLAIMS)}")
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")


def _status(every: bool, part: bool) -> str:
    return "held" if every else "in part" if part else "not held"


def adaptive_vs_static(task: str, strategies: dict, efficiency: dict | None = None):
    """The core paper's headline on one task, from a notebook-03 metrics entry (``{strategy:
    summary}``) and notebook 05's factor per seed (``{"per_seed": [{"seed", "factor",
    "bound"}]}``). None where either strategy is missing or they share no seed."""
    if A not in strategies or B not in strategies:
        return None
    x, y = strategies[A], strategies[B]
    seeds = [s for s in x["seeds"] if s in y["seeds"]]
    if not seeds:
        return None
    (a_ap, a_ci), (b_ap, b_ci) = (_at_seeds(entry["ap"], entry["seeds"], seeds) for entry in (x, y))
    above = sum(u > v for u, v in zip(a_ap, b_ap))
    both = a_ci is not None and b_ci is not None
    separated = sum(u[0] > v[1] for u, v in zip(a_ci, b_ci)) if both else None
    factors = {int(row["seed"]): row for row in (efficiency or {}).get("per_seed", [])}
    zero = strategies.get("zero_shot")
    values = {
        "seeds": seeds,
        "a": A,
        "b": B,
        "labels": int(x["labels"]),
        "a_ap": a_ap,
        "b_ap": b_ap,
        "a_ap_mean": float(np.mean(a_ap)),
        "b_ap_mean": float(np.mean(b_ap)),
        "above": above,
        "separated": separated,
        "reverse_separated": sum(v[0] > u[1] for u, v in zip(a_ci, b_ci)) if both else None,
        "a_positives": float(x["positives_found"]["mean"]),
        "b_positives": float(y["positives_found"]["mean"]),
        "factors": [factors.get(int(s), {}).get("factor") for s in seeds],
        "factor_bounds": [factors.get(int(s), {}).get("bound") for s in seeds],
        "zero_shot_ap": None if zero is None else float(zero["ap"]["mean"]),
        "zero_shot_ap_ci": None if zero is None else zero["ap"].get("ci"),
        "paper_labels": BUDGET.get(task, {}).get("labels"),
    }
    n = len(seeds)
    return Finding(
        "adaptive_vs_static", task, _status(above == n and separated == n, above > n / 2), values
    )


def _at_seeds(spread: dict, seeds: list, at: list) -> tuple:
    """``spread``'s values and 95% intervals (None: none recorded) of the seeds ``at``."""
    i = [seeds.index(s) for s in at]
    cis = spread.get("ci_per_seed")
    return [spread["per_seed"][k] for k in i], None if cis is None else [cis[k] for k in i]


def budget_regime(task: str, metrics: dict) -> Finding | None:
    """Notebook 09's budget-regime prediction on ``task`` (its metrics file)."""
    curves = metrics.get("budget", {}).get(task, {})
    if A not in curves or B not in curves:
        return None
    dev = [curves[k]["dev_ap"] for k in (A, B)]
    ours, theirs = ({s: row[-1] for s, row in zip(d["seeds"], d["per_seed"])} for d in dev)
    seeds = [s for s in ours if s in theirs and None not in (ours[s], theirs[s])]
    wins = sum(ours[s] > theirs[s] for s in seeds)
    above = metrics.get("separation", {}).get(task, {}).get("mean", {}).get(f"{A}_above_from")
    factor = metrics.get("efficiency", {}).get(task, {}).get("factor_mean")
    regime = metrics.get("regime", {}).get(task, {})
    saves = factor is None or factor > 1  # a higher final AP that took more labels saves nothing
    status = _status(
        bool(seeds) and wins == len(seeds) and above is not None and saves,
        wins > len(seeds) / 2 and saves,
    )
    values = {
        "seeds": seeds,
        "wins": wins,
        "above_from": above,
        "factor": factor,
        "a_final": [ours[s] for s in seeds],
        "b_final": [theirs[s] for s in seeds],
        "labels_per_positive": regime.get("labels_per_positive"),
        "paper_labels_per_positive": regime.get("paper_labels_per_positive"),
    }
    return Finding("budget_regime", task, status, values)


def starting_encoder(labels, metrics: dict) -> Finding | None:
    """Notebook 09's starting-encoder prediction at ``labels`` (a key of ``encoder_trend``)."""
    trend = metrics.get("encoder_trend", {}).get(labels)
    if trend is None:
        return None
    rho = trend["spearman_rho"]
    per_seed = [d for d in trend["per_seed"] if d is not None]
    grows = sum(d > 0 for d in per_seed)
    apart = _separated_above(metrics.get("encoder", {}), int(labels))
    every = bool(per_seed) and grows == len(per_seed) and rho is not None and rho < 0
    status = _status(str(trend["weakest"]) in apart and every, grows > 0)
    values = {
        "labels": int(labels),
        "rho": rho,
        "difference": trend["weakest_minus_strongest"],
        "grows": grows,
        "seeds": len(per_seed),
        "encoders": trend["encoders"],
        "weakest": trend["weakest"],
        "strongest": trend["strongest"],
        "apart": apart,
    }
    return Finding("starting_encoder", "qqp", status, values)


def _separated_above(encoder: dict, labels: int) -> list[str]:
    """The depths where uncertainty sampling's mean 95% interval of test AP lies above static
    retrieval's at ``labels``."""
    out = []
    for n, entry in encoder.items():
        if A in entry and B in entry and all(labels in entry[k]["labels"] for k in (A, B)):
            ours, theirs = (
                entry[k]["test_ap"]["ci"][entry[k]["labels"].index(labels)] for k in (A, B)
            )
            if None not in (*ours, *theirs) and ours[0] > theirs[1]:
                out.append(n)
    return sorted(out, key=int)


def data_efficiency(
    task: str, efficiency: dict | None, paper: float | None = None
) -> Finding | None:
    """The data-efficiency claim from an efficiency entry (``{"per_seed": [{"seed", "factor",
    "bound"}], ...}``); ``paper``: the paper's factor on this task, if it gives one."""
    if not efficiency or not efficiency.get("per_seed"):
        return None
    rows = efficiency["per_seed"]
    factors = [row["factor"] for row in rows]
    defined = [f for f in factors if f is not None]
    mean = float(np.mean(defined)) if defined else None
    status = _status(
        len(defined) == len(rows) and all(f > 1 for f in defined), mean is not None and mean > 1
    )
    values = {
        "seeds": [row["seed"] for row in rows],
        "factors": factors,
        "bounds": [row.get("bound") for row in rows],
        "mean": mean,
        "paper": paper,
    }
    return Finding("data_efficiency", task, status, values)


def adaptivity(metrics: dict) -> list[Finding]:
    """Every finding of a notebook-09 metrics file: budget regime per task, encoder per budget."""
    out = [budget_regime(task, metrics) for task in metrics.get("budget", {})]
    out += [starting_encoder(labels, metrics) for labels in metrics.get("encoder_trend", {})]
    return [f for f in out if f is not None]


def _beyond(c: dict) -> str:
    """A :func:`.summaries.compare` as a status: above beyond the noise, within it, or not above."""
    return _status(c["above"] and bool(c["separated"]), c["above"])


def augsbert(metrics: dict) -> list[Finding]:
    """The Augmented SBERT claims per task and gold source of a notebook-06 metrics file."""
    from ..augment.samplers import SAMPLERS

    out = []
    for task, by_source in metrics.items():
        for source, rows in by_source.items():
            samplers = [r for r in SAMPLERS if r in rows]
            if not samplers or "sbert" not in rows:
                continue
            order = sorted(samplers, key=lambda r: rows[r]["ap"], reverse=True)
            where = f"{task}/{source}"
            best = compare(rows[order[0]], rows["sbert"], "ap")
            values = {
                "best": order[0],
                **best,
                "order": order,
                "ap": {r: rows[r]["ap"] for r in order},
                "cross_encoder_ap": rows.get("cross_encoder", {}).get("ap"),
            }
            out.append(Finding("silver_helps", where, _beyond(best), values))
            if {"bm25", "rs"} <= set(samplers):
                ap = compare(rows["bm25"], rows["rs"], "ap")
                f1 = compare(rows["bm25"], rows["rs"], "f1") if "f1" in rows["bm25"] else None
                out.append(Finding("bm25_above_rs", where, _beyond(ap), {**ap, "f1": f1}))
            if {"rs", "kde", "bm25"} <= set(samplers):
                top, last = set(order[:2]) == {"bm25", "kde"}, order[-1] == "rs"
                status = _status(top and last, top or last)
                values = {"order": order, "top_two": top, "rs_last": last}
                out.append(Finding("sampler_ranking", where, status, values))
    return out


def comparison(claim: str, where: str, rows: dict) -> Finding | None:
    """A :data:`COMPARISONS` claim judged on ``rows`` (``{row: record}``); None where either
    row or its metric is missing."""
    a, b, key = COMPARISONS[claim]
    if (rows.get(a) or {}).get(key) is None or (rows.get(b) or {}).get(key) is None:
        return None
    c = compare(rows[a], rows[b], key)
    return Finding(claim, where, _beyond(c), {**c, "a_name": a, "b_name": b, "metric": key})


def eagle(metrics: dict) -> list[Finding]:
    """EAGLE's case-study claims per annotation (notebook 07's ``case_study``)."""
    return [
        f
        for annotation, rows in metrics.items()
        for claim in COMPARISONS
        if claim.startswith("eagle_")
        and (f := comparison(claim, f"case study, {annotation}", rows))
    ]


def label_noise(metrics: dict) -> list[Finding]:
    """The noise claim per task and noise level of notebook 07's ``all_pairs``."""
    return [
        f
        for task, by_noise in metrics.items()
        for level, rows in by_noise.items()
        if (f := comparison("noise_ci_vs_uncertainty", f"{task} at {level} noise", rows))
    ]


def rankers(metrics: dict) -> list[Finding]:
    """Althammer et al.'s claim per task of a notebook-08 metrics file: each active strategy's
    verdicts against random at equal questions and at equal cost (:func:`.rankers.verdict`)."""
    out = []
    for task, by_strategy in metrics.items():
        verdicts = {s: entry["verdict"] for s, entry in by_strategy.items() if entry.get("verdict")}
        if not verdicts:
            continue
        better = [
            [v["verdict"] == "better than random" for v in s.values()] for s in verdicts.values()
        ]
        # the claim is that none is better: held where none is, not held where one is at both
        status = _status(not any(map(any, better)), not any(map(all, better)))
        questions = next(iter(verdicts.values()))["equal_questions"].get("questions")
        values = {"strategies": verdicts, "questions": questions}
        out.append(Finding("no_better_than_random", task, status, values))
    return out
