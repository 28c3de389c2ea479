"""What notebook 09 found, in sentences computed from its metrics file (the notebook's closing
note and RESULTS.md print them): for the budget regime, per seed, whether uncertainty sampling
beat static retrieval, by what factor in labels and from which budget on; for the encoders, the
gap per depth and budget and whether it grows as the encoder weakens. No number is typed in."""
from __future__ import annotations

import pandas as pd

__all__ = ["findings", "verdicts", "headline", "budget_findings", "encoder_findings", "recall_findings",
           "overlap_findings", "budget_table",
           "efficiency_table", "encoder_summary"]

A, B = "uncertainty", "static_retrieval"


def findings(metrics: dict) -> list[str]:
    """Every finding of a notebook-09 metrics file, one line each."""
    return (budget_findings(metrics) + encoder_findings(metrics) + recall_findings(metrics)
            + overlap_findings(metrics))


def verdicts(metrics: dict) -> list[str]:
    """Each prediction judged from the metrics file, a sentence each. The budget regime *held*
    on a task where uncertainty sampling's final dev AP is higher on every seed and the mean
    curves' intervals separate, *held in part* where it is higher on most seeds and the mean
    data-efficiency factor (where there is one) is above 1 (a higher final AP that took more
    labels to reach static retrieval's is no saving); the encoder
    prediction held at a budget where the gap is larger at the weakest encoder than at the
    strongest on every seed, Spearman's rho is negative and at the weakest encoder uncertainty
    sampling's 95% interval lies above static retrieval's (adaptivity pays there, beyond noise),
    in part where the gap is larger on some seeds without that."""
    out = []
    for task, curves in metrics.get("budget", {}).items():
        if A not in curves or B not in curves:
            continue
        ours, theirs = _finals(curves[A]), _finals(curves[B])
        seeds = [s for s in ours if s in theirs and None not in (ours[s], theirs[s])]
        wins = sum(ours[s] > theirs[s] for s in seeds)
        above = metrics.get("separation", {}).get(task, {}).get("mean", {}).get(f"{A} above from")
        factor = metrics.get("efficiency", {}).get(task, {}).get("factor_mean")
        regime = metrics.get("regime", {}).get(task, {})
        verdict = ("held" if seeds and wins == len(seeds) and above is not None else
                   "held in part" if wins > len(seeds) / 2 and (factor is None or factor > 1)
                   else "did not hold")
        out.append(f"The budget regime on {task} ({regime.get('labels_per_positive', float('nan')):.1f} labels "
                   f"per positive) {verdict}: uncertainty sampling's final dev AP is above static "
                   f"retrieval's on {wins} of {len(seeds)} seeds, "
                   + (f"its 95% interval above from {above:,.0f} labels" if above is not None
                      else "the mean curves' 95% intervals never separate")
                   + (f", data-efficiency factor {factor:.2f}x." if factor is not None else "."))
    for labels, trend in metrics.get("encoder_trend", {}).items():
        rho, diff = trend["spearman rho"], trend["weakest minus strongest"]
        per_seed = [d for d in trend["per seed"] if d is not None]
        grows = sum(d > 0 for d in per_seed)
        apart = _separated_above(metrics.get("encoder", {}), int(labels))
        pays = str(trend["weakest"]) in apart
        verdict = ("held" if pays and per_seed and grows == len(per_seed) and rho is not None and rho < 0
                   else "held in part" if grows else "did not hold")
        out.append(f"The starting-encoder prediction at {int(labels):,} labels {verdict}: the gap at the "
                   f"weakest encoder ({trend['weakest']} layers) minus at the strongest ({trend['strongest']}) "
                   f"is {diff:+.3f}, positive on {grows} of {len(per_seed)} seeds; Spearman rho "
                   + ("n/a" if rho is None else f"{rho:+.2f}") + f" over {trend['encoders']} encoders; "
                   + (f"uncertainty sampling's 95% interval above static retrieval's at "
                      f"{', '.join(apart)} layers." if apart else
                      "uncertainty sampling's 95% interval above static retrieval's at no depth "
                      "(adaptivity pays beyond noise nowhere)."))
    return out


def headline(metrics: dict) -> str:
    """The README's sentence on the paper's headline claim: the verdicts' first clauses, and
    how much of uncertainty sampling's data static retrieval also collected."""
    parts = [line.split(":")[0] for line in verdicts(metrics)]
    shares = [f"{entry['mean'][-1]:.0%} on {task}" for task, by_run in metrics.get("overlap", {}).items()
              for label, entry in by_run.items() if label == A]
    parts = parts[:1] + [p[0].lower() + p[1:] for p in parts[1:]]
    return "; ".join(parts) + "." + (f" Of uncertainty sampling's labels, static retrieval also "
                                     f"collected {' and '.join(shares)}." if shares else "")


def _separated_above(encoder: dict, labels: int) -> list[str]:
    """The depths (as the metrics file's keys) where uncertainty sampling's mean 95% interval of
    test AP lies above static retrieval's at ``labels``."""
    out = []
    for n, entry in encoder.items():
        if A in entry and B in entry and labels in entry[A]["labels"] and labels in entry[B]["labels"]:
            ours = entry[A]["test_ap"]["ci"][entry[A]["labels"].index(labels)]
            theirs = entry[B]["test_ap"]["ci"][entry[B]["labels"].index(labels)]
            if None not in (*ours, *theirs) and ours[0] > theirs[1]:
                out.append(n)
    return sorted(out, key=int)


def _finals(curve: dict) -> dict:
    return dict(zip(curve["dev_ap"]["seeds"], (row[-1] for row in curve["dev_ap"]["per_seed"])))


def budget_findings(metrics: dict) -> list[str]:
    lines = []
    for task, curves in metrics.get("budget", {}).items():
        regime = metrics.get("regime", {}).get(task, {})
        if regime:
            paper = regime.get("paper_labels_per_positive")
            lines.append(f"{task}: {regime['labels']:,} labels over {regime['rounds']} rounds for "
                         f"{regime['positives']:,} training positives: {regime['labels_per_positive']:.1f} "
                         f"labels per positive at the last round"
                         + (f" (the paper: {paper:.1f})" if paper is not None else ""))
        if A in curves and B in curves:
            lines.append(f"  final dev AP, {A} vs {B}: {_final_by_seed(curves[A], curves[B])}")
        lines += _efficiency_lines(metrics.get("efficiency", {}).get(task))
        lines += _separation_lines(metrics.get("separation", {}).get(task))
    return lines


def _final_by_seed(a: dict, b: dict) -> str:
    ours, theirs = _finals(a), _finals(b)
    parts = [f"seed {s} {ours[s]:.3f} vs {theirs[s]:.3f} ({ours[s] - theirs[s]:+.3f})"
             for s in ours if s in theirs and None not in (ours[s], theirs[s])]
    wins = sum(ours[s] > theirs[s] for s in ours if s in theirs and None not in (ours[s], theirs[s]))
    return "; ".join(parts) + f"; {A} higher on {wins} of {len(parts)} seeds"


def _efficiency_lines(eff: dict | None) -> list[str]:
    if not eff:
        return []
    parts = [f"seed {row['seed']} " + (f"{row['factor']:.2f}x" if row["factor"] is not None else "none")
             + f" ({row['bound']})" for row in eff["per_seed"]]
    mean = (f"mean {eff['factor_mean']:.2f}x ± {eff['factor_std']:.2f} over {eff['seeds_defined']} of "
            f"{eff['seeds']} seeds" if eff["factor_mean"] is not None else "defined on no seed")
    return [f"  data-efficiency factor ({B}'s labels to its final dev AP over {A}'s labels to the "
            f"same AP): {'; '.join(parts)}; {mean} (the paper, QQP: 14x)"]


def _separation_lines(sep: dict | None) -> list[str]:
    if not sep:
        return []

    def when(row, who):
        value = row.get(f"{who} above from")
        return "never" if value is None else f"from {value:,.0f} labels"

    seeds = [k for k in sep if k != "mean"]
    lines = []
    for who, other in ((A, B), (B, A)):
        per_seed = "; ".join(f"seed {s} {when(sep[s], who)}" for s in seeds)
        overall = f"mean curves {when(sep['mean'], who)}" if "mean" in sep else ""
        lines.append(f"  {who}'s 95% interval above {other}'s to the last budget: "
                     + "; ".join(p for p in (overall, per_seed) if p))
    return lines


def encoder_findings(metrics: dict) -> list[str]:
    lines = []
    for n, entry in _deepest_first(metrics.get("encoder", {})):
        lines.append(f"{n} layers: zero-shot test AP {entry['zero_shot_ap']:.3f} "
                     f"[{entry['zero_shot_ap_ci'][0]:.3f}, {entry['zero_shot_ap_ci'][1]:.3f}], static "
                     f"retrieval's first {entry['static_labels']:,} pairs {entry['static_precision']:.0%} positive")
        gap = entry["gap"]
        for k, labels in enumerate(gap["labels"]):
            seeds = ", ".join(f"seed {s} {d:+.3f}" for s, d in zip(gap["seeds"][k], gap["per_seed"][k]))
            lines.append(f"  {labels:,} labels: test AP {entry[A]['test_ap']['mean'][k]:.3f} vs "
                         f"{entry[B]['test_ap']['mean'][k]:.3f}, gap {gap['mean'][k]:+.3f} ({seeds}); "
                         f"{gap['judged'][k]}")
    for labels, trend in metrics.get("encoder_trend", {}).items():
        rho = trend["spearman rho"]
        seeds = ", ".join(f"seed {s} {d:+.3f}" for s, d in zip(trend["seeds"], trend["per seed"]))
        lines.append(f"does the gap grow as the encoder weakens, at {int(labels):,} labels? Spearman rho "
                     f"(zero-shot AP, gap) = " + ("n/a (fewer than 3 encoders)" if rho is None else f"{rho:+.2f}")
                     + f" over {trend['encoders']} encoders (negative: it grows); weakest "
                     f"({trend['weakest']} layers) minus strongest ({trend['strongest']} layers): "
                     f"{trend['weakest minus strongest']:+.3f} ({seeds})")
    return lines


def recall_findings(metrics: dict) -> list[str]:
    lines = []
    for task, by_strategy in metrics.get("candidate_recall", {}).items():
        known = {name: [v for v in values if v is not None] for name, values in by_strategy.items()}
        parts = [f"{name} {values[0]:.0%} -> {values[-1]:.0%}" for name, values in known.items() if values]
        if parts:
            lines.append(f"candidate recall, {task} (first -> last round): " + "; ".join(parts))
    return lines


def overlap_findings(metrics: dict) -> list[str]:
    lines = []
    for task, by_run in metrics.get("overlap", {}).items():
        for label, entry in by_run.items():
            seeds = ", ".join(f"seed {s} {row[-1]:.0%}" for s, row in zip(entry["seeds"], entry["per_seed"])
                              if row[-1] is not None)
            lines.append(f"{task}, {label}: of its {entry['labels'][-1]:,.0f} labels, static retrieval also "
                         f"collected {entry['mean'][-1]:.0%} ({seeds})")
    return lines


def budget_table(metrics: dict) -> pd.DataFrame:
    """Per task and strategy of the budget experiment: the seeds, the last budget, the final dev
    AP (mean over seeds, its mean 95% interval, each seed's) and the share of positives among
    the labels collected after the first round and at the end."""
    rows = []
    for task, curves in metrics.get("budget", {}).items():
        for name, c in curves.items():
            dev = c["dev_ap"]
            rows.append({"task": task, "strategy": name, "seeds": len(dev["seeds"]), "labels": c["labels"][-1],
                         "final dev AP": dev["mean"][-1], "95% interval": _interval(dev["ci"][-1]),
                         "per seed": ", ".join(_num(row[-1]) for row in dev["per_seed"]),
                         "positive share, round 1": c["positive_share"][0],
                         "positive share, end": c["positive_share"][-1]})
    return pd.DataFrame(rows)


def efficiency_table(metrics: dict) -> pd.DataFrame:
    """The data-efficiency factor per task and seed (notebook 05's definition)."""
    rows = [{"task": task, "seed": row["seed"], f"{B} dev AP": row.get(f"{B} dev AP"),
             f"{B} labels needed": row.get(f"{B} labels needed"), f"{A} labels needed": row.get("labels needed"),
             "factor": row["factor"], "bound": row["bound"]}
            for task, eff in metrics.get("efficiency", {}).items() for row in eff["per_seed"]]
    return pd.DataFrame(rows)


def encoder_summary(metrics: dict) -> pd.DataFrame:
    """Per encoder depth and budget: zero-shot test AP with its interval, static retrieval's
    precision, each strategy's test AP (mean over seeds) and the gap, with each seed's gap."""
    rows = []
    for n, e in _deepest_first(metrics.get("encoder", {})):
        gap = e["gap"]
        for k, labels in enumerate(gap["labels"]):
            rows.append({"layers": int(n), "zero-shot AP": e["zero_shot_ap"],
                         "95% interval": _interval(e["zero_shot_ap_ci"]), "static precision": e["static_precision"],
                         "labels": labels, f"{A} AP": e[A]["test_ap"]["mean"][k],
                         f"{B} AP": e[B]["test_ap"]["mean"][k], "gap": gap["mean"][k],
                         "gap per seed": ", ".join(f"{d:+.3f}" for d in gap["per_seed"][k])})
    return pd.DataFrame(rows)


def _deepest_first(encoder: dict) -> list:
    """The encoder entries by depth, the whole model first (a metrics file sorts its keys)."""
    return sorted(encoder.items(), key=lambda kv: -int(kv[0]))


def _interval(ci) -> str:
    return f"{_num(ci[0])}-{_num(ci[1])}"


def _num(value) -> str:
    return "–" if value is None else f"{value:.3f}"
