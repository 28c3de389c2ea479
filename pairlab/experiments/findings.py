"""Findings as data: each claim of the papers, checked on our metrics, is a :class:`Finding`
record (the claim, where it was judged, a status and the values: the paper's and ours with
intervals and per seed). One rule per claim, here and nowhere else. No sentence is made here:
they are written once, as Jinja macros in ``pairlab/templates/findings.md.j2``, which the
notebooks (:func:`pairlab.report.markdown`) and the documents (``docs/*.j2``) render through
one environment (:func:`pairlab.report.environment`). Tests judge statuses and values.

The statuses: ``held`` (ours agrees with the paper beyond the noise the rule states), ``in
part`` (in the paper's direction, within noise or on some seeds only), ``not held``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ..data.paper import A, B

__all__ = [
    "STATUSES",
    "CLAIMS",
    "Finding",
    "adaptive_vs_static",
    "budget_regime",
    "starting_encoder",
    "data_efficiency",
    "adaptivity",
    "augsbert",
    "COMPARISONS",
    "comparison",
    "eagle",
    "label_noise",
    "rankers",
]

STATUSES = ("held", "in part", "not held")

CLAIMS = {  # per claim: its statement in the paper's terms, where the paper says it, and the rule that judges ours
    "adaptive_vs_static": {
        "statement": "adaptive collection (uncertainty sampling) beats static retrieval on all pairs",
        "source": "Mussmann et al. 2020, Table 3",
        "rule": "held: uncertainty sampling's test AP above static retrieval's on every seed, its 95% "
        "bootstrap interval wholly above on every seed; in part: above on most seeds; "
        "not held otherwise",
    },
    "budget_regime": {
        "statement": "at many labels per positive, uncertainty sampling ends above static retrieval",
        "source": "Mussmann et al. 2020, Figure 4 and appendix B.1",
        "rule": "held: final dev AP above on every seed, the mean curves' 95% intervals apart and "
        "the mean data-efficiency factor (where defined) above 1; in part: above on most "
        "seeds and the factor (where defined) above 1; not held otherwise",
    },
    "starting_encoder": {
        "statement": "the weaker the pretrained encoder, the more adaptive collection is worth",
        "source": "Mussmann et al. 2020, section 6 (our reading of its mechanism)",
        "rule": "held: the gap (uncertainty minus static retrieval, test AP) larger at the weakest "
        "encoder than at the strongest on every seed, Spearman's rho negative, and at the "
        "weakest encoder uncertainty sampling's 95% interval above static retrieval's; "
        "in part: larger on some seeds; not held otherwise",
    },
    "data_efficiency": {
        "statement": "uncertainty sampling reaches static retrieval's final AP with far fewer labels",
        "source": "Mussmann et al. 2020, appendix B.1: 14x on QQP",
        "rule": "held: a factor above 1 on every seed; in part: a mean factor above 1; not held "
        "otherwise (no seed where uncertainty sampling reaches static retrieval's AP)",
    },
    "silver_helps": {
        "statement": "a cross-encoder's silver labels improve the bi-encoder over gold labels alone",
        "source": "Thakur et al. 2021, Augmented SBERT, Table 2: up to 6 points",
        "rule": "held: the best sampler's AP above gold-only SBERT's, beyond the noise (95% "
        "intervals apart, else the seeds' spread); in part: above, within the noise; not "
        "held otherwise",
    },
    "bm25_above_rs": {
        "statement": "BM25-sampled silver pairs beat randomly sampled ones",
        "source": "Thakur et al. 2021, Table 2: 79.0 against 73.4 F1 on Quora-QP",
        "rule": "held: BM25's AP above RS's beyond the noise; in part: above within the noise; not "
        "held otherwise",
    },
    "sampler_ranking": {
        "statement": "BM25 and KDE are the best samplers and random sampling (RS) the worst",
        "source": "Thakur et al. 2021, Table 2",
        "rule": "held: BM25 and KDE the top two by AP and RS last; in part: one of the two; not "
        "held otherwise",
    },
}
CLAIMS["no_better_than_random"] = {
    "statement": "no active-learning strategy is significantly better than random selection",
    "source": "Althammer et al. 2023, Table 1: every significant difference was a loss",
    "rule": "held: no strategy significantly better than random (paired t-test over the test "
    "questions, Bonferroni) at equal questions nor at equal cost; in part: one "
    "strategy better at one of the two only; not held: one better at both",
}
_EAGLE = "Bansal and Sharma 2023, EAGLE"
COMPARISONS = {  # claims that one row beats another on a metric: (a, b, metric key, statement, source)
    "eagle_inconsistent_vs_random": (
        "base_inconsistent",
        "random",
        "auc_high_error",
        "base-inconsistent sampling beats random on the high-error test part",
        f"{_EAGLE}, Table 1",
    ),
    "eagle_inconsistent_vs_consistent": (
        "base_inconsistent",
        "base_consistent",
        "auc_all",
        "base-inconsistent sampling beats base-consistent sampling",
        f"{_EAGLE}, Table 1",
    ),
    "eagle_ci_vs_uncertainty": (
        "conditional_informativeness",
        "uncertainty",
        "auc_all",
        "conditional informativeness beats uncertainty sampling",
        f"{_EAGLE}, Table 4",
    ),
    "eagle_ci_vs_random": (
        "conditional_informativeness",
        "random",
        "auc_all",
        "conditional informativeness beats random sampling",
        f"{_EAGLE}, Table 4",
    ),
    "eagle_uncertainty_vs_random": (
        "uncertainty",
        "random",
        "auc_all",
        "uncertainty sampling beats random sampling",
        f"{_EAGLE}, Table 4",
    ),
    "noise_ci_vs_uncertainty": (
        "conditional_informativeness",
        "uncertainty",
        "ap",
        "under noisy labels, conditional informativeness beats uncertainty sampling on all pairs",
        f"{_EAGLE}, Table 4, read on all pairs",
    ),
}
for _claim, (_a, _b, _key, _statement, _source) in COMPARISONS.items():
    CLAIMS[_claim] = {
        "statement": _statement,
        "source": _source,
        "rule": f"held: {_a} above {_b} on {_key}, beyond the noise (95% intervals apart, "
        "else the seeds' spread); in part: above within the noise; not held otherwise",
    }


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

    @property
    def statement(self) -> str:
        return CLAIMS[self.claim]["statement"]

    @property
    def source(self) -> str:
        return CLAIMS[self.claim]["source"]

    @property
    def rule(self) -> str:
        return CLAIMS[self.claim]["rule"]

    def as_dict(self) -> dict:
        return {**asdict(self), **CLAIMS[self.claim]}


def _status(every: bool, part: bool) -> str:
    return "held" if every else "in part" if part else "not held"


def adaptive_vs_static(
    task: str,
    strategies: dict,
    efficiency: dict | None = None,
    *,
    paper_labels: int | None = None,
    a: str = A,
    b: str = B,
) -> Finding | None:
    """The core paper's headline on one task, from a notebook-03 metrics entry (``{strategy:
    summary}``, with ``zero_shot`` where recorded) and notebook 05's factor per seed
    (``{"per_seed": [{"seed", "factor", "bound"}]}``); ``paper_labels`` is the paper's budget on
    this task (default: :data:`pairlab.data.paper.BUDGET`'s). None where either strategy is
    missing or they share no seed."""
    from ..data.paper import BUDGET

    if paper_labels is None:
        paper_labels = BUDGET.get(task, {}).get("labels")
    if a not in strategies or b not in strategies:
        return None
    x, y = strategies[a], strategies[b]
    seeds = [s for s in x["seeds"] if s in y["seeds"]]
    if not seeds:
        return None

    def per_seed(entry, key):
        at = {s: i for i, s in enumerate(entry["seeds"])}
        values = [entry[key]["per_seed"][at[s]] for s in seeds]
        cis = entry[key].get("ci_per_seed")
        return values, None if cis is None else [cis[at[s]] for s in seeds]

    a_ap, a_ci = per_seed(x, "ap")
    b_ap, b_ci = per_seed(y, "ap")
    above = sum(u > v for u, v in zip(a_ap, b_ap))
    separated = (
        None if a_ci is None or b_ci is None else sum(u[0] > v[1] for u, v in zip(a_ci, b_ci))
    )
    reverse = None if a_ci is None or b_ci is None else sum(v[0] > u[1] for u, v in zip(a_ci, b_ci))
    factors = {
        int(row["seed"]): (row.get("factor"), row.get("bound"))
        for row in (efficiency or {}).get("per_seed", [])
    }
    zero = strategies.get("zero_shot")
    n = len(seeds)
    values = {
        "seeds": seeds,
        "a": a,
        "b": b,
        "labels": int(x["labels"]),
        "a_ap": a_ap,
        "b_ap": b_ap,
        "a_ci": a_ci,
        "b_ci": b_ci,
        "a_ap_mean": float(np.mean(a_ap)),
        "b_ap_mean": float(np.mean(b_ap)),
        "above": above,
        "separated": separated,
        "reverse_separated": reverse,
        "a_positives": float(x["positives_found"]["mean"]),
        "b_positives": float(y["positives_found"]["mean"]),
        "factors": [factors.get(int(s), (None, None))[0] for s in seeds],
        "factor_bounds": [factors.get(int(s), (None, None))[1] for s in seeds],
        "zero_shot_ap": None if zero is None else float(zero["ap"]["mean"]),
        "zero_shot_ap_ci": None if zero is None else zero["ap"].get("ci"),
        "paper_labels": paper_labels,
    }
    return Finding(
        "adaptive_vs_static", task, _status(above == n and separated == n, above > n / 2), values
    )


def _finals(curve: dict) -> dict:
    return dict(zip(curve["dev_ap"]["seeds"], (row[-1] for row in curve["dev_ap"]["per_seed"])))


def budget_regime(task: str, metrics: dict) -> Finding | None:
    """Notebook 09's budget-regime prediction on ``task`` (its metrics file)."""
    curves = metrics.get("budget", {}).get(task, {})
    if A not in curves or B not in curves:
        return None
    ours, theirs = _finals(curves[A]), _finals(curves[B])
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
    pays = str(trend["weakest"]) in apart
    status = _status(
        pays and bool(per_seed) and grows == len(per_seed) and rho is not None and rho < 0,
        grows > 0,
    )
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
        if (
            A in entry
            and B in entry
            and labels in entry[A]["labels"]
            and labels in entry[B]["labels"]
        ):
            ours = entry[A]["test_ap"]["ci"][entry[A]["labels"].index(labels)]
            theirs = entry[B]["test_ap"]["ci"][entry[B]["labels"].index(labels)]
            if None not in (*ours, *theirs) and ours[0] > theirs[1]:
                out.append(n)
    return sorted(out, key=int)


def data_efficiency(
    task: str, efficiency: dict | None, paper: float | None = None
) -> Finding | None:
    """The data-efficiency claim from an efficiency entry (``{"per_seed": [{"seed", "factor",
    "bound"}], "factor_mean", ...}``, notebooks 05 and 09 record it); ``paper`` the paper's
    factor on this task, where it gives one."""
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
    """Every finding of a notebook-09 metrics file: the budget regime per task, then the
    starting encoder per budget."""
    out = [budget_regime(task, metrics) for task in metrics.get("budget", {})]
    out += [starting_encoder(labels, metrics) for labels in metrics.get("encoder_trend", {})]
    return [f for f in out if f is not None]


def _beyond(comparison: dict) -> str:
    """A :func:`.summaries.compare` as a status: above beyond the noise, within it, or not above."""
    return _status(comparison["above"] and bool(comparison["separated"]), comparison["above"])


def augsbert(metrics: dict) -> list[Finding]:
    """The Augmented SBERT claims per task and gold source of a notebook-06 metrics file
    (``{task: {source: {row: record}}}``): silver helps (the best sampler against gold-only
    SBERT), BM25 above RS, and the paper's ranking of the samplers."""
    from ..augment.samplers import SAMPLERS
    from .summaries import compare

    out = []
    for task, by_source in metrics.items():
        for source, rows in by_source.items():
            samplers = [r for r in SAMPLERS if r in rows]
            if not samplers or "sbert" not in rows:
                continue
            order = sorted(samplers, key=lambda r: rows[r]["ap"], reverse=True)
            where = f"{task}/{source}"
            best = compare(rows[order[0]], rows["sbert"], "ap")
            out.append(
                Finding(
                    "silver_helps",
                    where,
                    _beyond(best),
                    {
                        "best": order[0],
                        **best,
                        "order": order,
                        "ap": {r: rows[r]["ap"] for r in order},
                        "cross_encoder_ap": rows.get("cross_encoder", {}).get("ap"),
                    },
                )
            )
            if {"bm25", "rs"} <= set(samplers):
                out.append(
                    Finding(
                        "bm25_above_rs",
                        where,
                        _beyond(compare(rows["bm25"], rows["rs"], "ap")),
                        {
                            **compare(rows["bm25"], rows["rs"], "ap"),
                            "f1": compare(rows["bm25"], rows["rs"], "f1")
                            if "f1" in rows["bm25"]
                            else None,
                        },
                    )
                )
            if {"rs", "kde", "bm25"} <= set(samplers):
                top, last = set(order[:2]) == {"bm25", "kde"}, order[-1] == "rs"
                out.append(
                    Finding(
                        "sampler_ranking",
                        where,
                        _status(top and last, top or last),
                        {"order": order, "top_two": top, "rs_last": last},
                    )
                )
    return out


def comparison(claim: str, where: str, rows: dict) -> Finding | None:
    """A :data:`COMPARISONS` claim judged on ``rows`` (``{row: record}``); None where either
    row or its metric is missing."""
    from .summaries import compare

    a, b, key, _, _ = COMPARISONS[claim]
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
    """Conditional informativeness against uncertainty sampling on all pairs, per task and
    noise level (notebook 07's ``all_pairs``)."""
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
        verdicts = {
            s: entry["verdict"]
            for s, entry in by_strategy.items()
            if isinstance(entry, dict) and entry.get("verdict")
        }
        if not verdicts:
            continue
        better = {
            s: [v[k]["verdict"] == "better than random" for k in ("equal_questions", "equal_cost")]
            for s, v in verdicts.items()
        }
        status = (
            "not held"
            if any(all(b) for b in better.values())
            else "in part"
            if any(any(b) for b in better.values())
            else "held"
        )
        values = {
            "strategies": {
                s: {
                    k: {
                        "verdict": v[k]["verdict"],
                        "difference": v[k]["difference"],
                        "p": v[k]["p_adjusted"],
                    }
                    for k in ("equal_questions", "equal_cost")
                }
                for s, v in verdicts.items()
            },
            "questions": next(iter(verdicts.values()))["equal_questions"].get("questions"),
        }
        out.append(Finding("no_better_than_random", task, status, values))
    return out
