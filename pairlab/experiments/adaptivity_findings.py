"""What notebook 09 measured, line by line from its metrics file (the notebook and RESULTS.md
print them): for the budget regime, per seed, uncertainty sampling against static retrieval,
the factor in labels and the budget from which the intervals separate; for the encoders, the
gap per depth and budget and whether it grows as the encoder weakens. Whether each prediction
held is a finding record (:func:`.findings.adaptivity`). No number is typed in."""

from __future__ import annotations

import pandas as pd

from . import data_efficiency

__all__ = [
    "findings",
    "budget_findings",
    "encoder_findings",
    "recall_findings",
    "overlap_findings",
    "budget_table",
    "encoder_summary",
]

A, B = "uncertainty", "static_retrieval"


def findings(metrics: dict) -> list[str]:
    """Every finding of a notebook-09 metrics file, one line each."""
    return (
        budget_findings(metrics)
        + encoder_findings(metrics)
        + recall_findings(metrics)
        + overlap_findings(metrics)
    )


def _finals(curve: dict) -> dict:
    return dict(zip(curve["dev_ap"]["seeds"], (row[-1] for row in curve["dev_ap"]["per_seed"])))


def budget_findings(metrics: dict) -> list[str]:
    lines = []
    for task, curves in metrics.get("budget", {}).items():
        regime = metrics.get("regime", {}).get(task, {})
        if regime:
            paper = regime.get("paper_labels_per_positive")
            lines.append(
                f"{task}: {regime['labels']:,} labels over {regime['rounds']} rounds for "
                f"{regime['positives']:,} training positives: {regime['labels_per_positive']:.1f} "
                f"labels per positive at the last round"
                + (f" (the paper: {paper:.1f})" if paper is not None else "")
            )
        if A in curves and B in curves:
            lines.append(f"  final dev AP, {A} vs {B}: {_final_by_seed(curves[A], curves[B])}")
        lines += data_efficiency.lines(metrics.get("efficiency", {}).get(task))
        lines += _separation_lines(metrics.get("separation", {}).get(task))
    return lines


def _final_by_seed(a: dict, b: dict) -> str:
    ours, theirs = _finals(a), _finals(b)
    parts = [
        f"seed {s} {ours[s]:.3f} vs {theirs[s]:.3f} ({ours[s] - theirs[s]:+.3f})"
        for s in ours
        if s in theirs and None not in (ours[s], theirs[s])
    ]
    wins = sum(
        ours[s] > theirs[s] for s in ours if s in theirs and None not in (ours[s], theirs[s])
    )
    return "; ".join(parts) + f"; {A} higher on {wins} of {len(parts)} seeds"


def _separation_lines(sep: dict | None) -> list[str]:
    if not sep:
        return []

    def when(row, who):
        value = row.get(f"{who}_above_from")
        return "never" if value is None else f"from {value:,.0f} labels"

    seeds = [k for k in sep if k != "mean"]
    lines = []
    for who, other in ((A, B), (B, A)):
        per_seed = "; ".join(f"seed {s} {when(sep[s], who)}" for s in seeds)
        overall = f"mean curves {when(sep['mean'], who)}" if "mean" in sep else ""
        lines.append(
            f"  {who}'s 95% interval above {other}'s to the last budget: "
            + "; ".join(p for p in (overall, per_seed) if p)
        )
    return lines


def encoder_findings(metrics: dict) -> list[str]:
    lines = []
    for n, entry in _deepest_first(metrics.get("encoder", {})):
        lines.append(
            f"{n} layers: zero-shot test AP {entry['zero_shot_ap']:.3f} "
            f"[{entry['zero_shot_ap_ci'][0]:.3f}, {entry['zero_shot_ap_ci'][1]:.3f}], static "
            f"retrieval's first {entry['static_labels']:,} pairs {entry['static_precision']:.0%} positive"
        )
        gap = entry["gap"]
        for k, labels in enumerate(gap["labels"]):
            seeds = ", ".join(
                f"seed {s} {d:+.3f}" for s, d in zip(gap["seeds"][k], gap["per_seed"][k])
            )
            lines.append(
                f"  {labels:,} labels: test AP {entry[A]['test_ap']['mean'][k]:.3f} vs "
                f"{entry[B]['test_ap']['mean'][k]:.3f}, gap {gap['mean'][k]:+.3f} ({seeds}); "
                f"{gap['judged'][k]}"
            )
    for labels, trend in metrics.get("encoder_trend", {}).items():
        rho = trend["spearman_rho"]
        seeds = ", ".join(f"seed {s} {d:+.3f}" for s, d in zip(trend["seeds"], trend["per_seed"]))
        lines.append(
            f"does the gap grow as the encoder weakens, at {int(labels):,} labels? Spearman rho "
            f"(zero-shot AP, gap) = "
            + ("n/a (fewer than 3 encoders)" if rho is None else f"{rho:+.2f}")
            + f" over {trend['encoders']} encoders (negative: it grows); weakest "
            f"({trend['weakest']} layers) minus strongest ({trend['strongest']} layers): "
            f"{trend['weakest_minus_strongest']:+.3f} ({seeds})"
        )
    return lines


def recall_findings(metrics: dict) -> list[str]:
    lines = []
    for task, by_strategy in metrics.get("candidate_recall", {}).items():
        known = {name: [v for v in values if v is not None] for name, values in by_strategy.items()}
        parts = [
            f"{name} {values[0]:.0%} -> {values[-1]:.0%}"
            for name, values in known.items()
            if values
        ]
        if parts:
            lines.append(f"candidate recall, {task} (first -> last round): " + "; ".join(parts))
    return lines


def overlap_findings(metrics: dict) -> list[str]:
    lines = []
    for task, by_run in metrics.get("overlap", {}).items():
        for label, entry in by_run.items():
            seeds = ", ".join(
                f"seed {s} {row[-1]:.0%}"
                for s, row in zip(entry["seeds"], entry["per_seed"])
                if row[-1] is not None
            )
            lines.append(
                f"{task}, {label}: of its {entry['labels'][-1]:,.0f} labels, static retrieval also "
                f"collected {entry['mean'][-1]:.0%} ({seeds})"
            )
    return lines


def budget_table(metrics: dict) -> pd.DataFrame:
    """Per task and strategy of the budget experiment: the seeds, the last budget, the final dev
    AP (mean over seeds, its mean 95% interval, each seed's) and the share of positives among
    the labels collected after the first round and at the end."""
    rows = []
    for task, curves in metrics.get("budget", {}).items():
        for name, c in curves.items():
            dev = c["dev_ap"]
            rows.append(
                {
                    "task": task,
                    "strategy": name,
                    "seeds": len(dev["seeds"]),
                    "labels": c["labels"][-1],
                    "final dev AP": dev["mean"][-1],
                    "95% interval": _interval(dev["ci"][-1]),
                    "per seed": ", ".join(_num(row[-1]) for row in dev["per_seed"]),
                    "positive share, round 1": c["positive_share"][0],
                    "positive share, end": c["positive_share"][-1],
                }
            )
    return pd.DataFrame(rows)


def encoder_summary(metrics: dict) -> pd.DataFrame:
    """Per encoder depth and budget: zero-shot test AP with its interval, static retrieval's
    precision, each strategy's test AP (mean over seeds) and the gap, with each seed's gap."""
    rows = []
    for n, e in _deepest_first(metrics.get("encoder", {})):
        gap = e["gap"]
        for k, labels in enumerate(gap["labels"]):
            rows.append(
                {
                    "layers": int(n),
                    "zero-shot AP": e["zero_shot_ap"],
                    "95% interval": _interval(e["zero_shot_ap_ci"]),
                    "static precision": e["static_precision"],
                    "labels": labels,
                    f"{A} AP": e[A]["test_ap"]["mean"][k],
                    f"{B} AP": e[B]["test_ap"]["mean"][k],
                    "gap": gap["mean"][k],
                    "gap per seed": ", ".join(f"{d:+.3f}" for d in gap["per_seed"][k]),
                }
            )
    return pd.DataFrame(rows)


def _deepest_first(encoder: dict) -> list:
    """The encoder entries by depth, the whole model first (a metrics file sorts its keys)."""
    return sorted(encoder.items(), key=lambda kv: -int(kv[0]))


def _interval(ci) -> str:
    return f"{_num(ci[0])}-{_num(ci[1])}"


def _num(value) -> str:
    return "–" if value is None else f"{value:.3f}"
