"""The core paper's headline as tables: Tables 3 and 4 per seed with their 95% intervals beside
the paper's, and the candidate recall per round, from a notebook-03 metrics entry. The verdict
itself is a finding (:func:`.findings.adaptive_vs_static`); notebook 03 and RESULTS.md show
both."""

from __future__ import annotations

import pandas as pd

__all__ = ["curve_table", "interval_table", "recall_table"]


def interval_table(
    strategies: dict, paper_table3: dict | None = None, paper_table4: dict | None = None
) -> pd.DataFrame:
    """Tables 3 and 4 at once, per strategy and seed: test AP and P@R20 with their 95% bootstrap
    intervals and the positives found, then the mean over seeds beside the paper's values."""
    rows = []
    for name, entry in strategies.items():
        ap, p20 = entry["ap"], entry["p_at_r20"]
        for i, seed in enumerate(entry["seeds"]):
            rows.append(
                {
                    "strategy": name,
                    "seed": str(seed),
                    "labels": entry["labels"],
                    "AP": _with_ci(ap["per_seed"][i], ap.get("ci_per_seed"), i),
                    "P@R20": _with_ci(p20["per_seed"][i], p20.get("ci_per_seed"), i),
                    "positives": f"{entry['positives_found']['per_seed'][i]:,.0f}",
                    "AP (paper)": "",
                    "positives (paper)": "",
                }
            )
        ref3 = (paper_table3 or {}).get(name, {})
        ref4 = (paper_table4 or {}).get(name)
        one = not entry["seeds"]  # the zero-shot row: one model, its own interval
        rows.append(
            {
                "strategy": name,
                "seed": "-" if one else "mean",
                "labels": entry["labels"],
                "AP": _with_ci(ap["mean"], [ap["ci"]], 0) if one else _mean_std(ap),
                "P@R20": _with_ci(p20["mean"], [p20["ci"]], 0) if one else _mean_std(p20),
                "positives": f"{entry['positives_found']['mean']:,.0f}",
                "AP (paper)": "-" if ref3.get("ap") is None else f"{ref3['ap']:.3f}",
                "positives (paper)": "-" if ref4 is None else f"{ref4:,}",
            }
        )
    return pd.DataFrame(rows).set_index(["strategy", "seed"])


def _mean_std(spread: dict) -> str:
    """The mean ± std over seeds; with one seed, its value alone (its interval is in its row)."""
    if len(spread["per_seed"]) == 1:
        return f"{spread['mean']:.3f} (one seed)"
    return f"{spread['mean']:.3f} ± {spread['std']:.3f}"


def _with_ci(value: float, cis, i: int) -> str:
    if not cis:
        return f"{value:.3f}"
    low, high = cis[i]
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def _rounds(strategies: dict, key: str):
    """``(strategy, round entry)`` of every seed's rounds that recorded ``key``."""
    for name, entry in strategies.items():
        for r in entry.get("rounds_per_seed", []):
            if r.get(key) is not None:
                yield name, r


def recall_table(strategies: dict) -> pd.DataFrame:
    """Candidate recall per round (rows) and strategy (columns), the mean over seeds: the share
    of the pool's not yet labelled positives that the round's candidate search held."""
    rows = [
        {
            "strategy": name,
            "round": r["round"],
            "labels": r["labels"],
            "candidate recall": r["candidate_recall"],
        }
        for name, r in _rounds(strategies, "candidate_recall")
    ]
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows)
    return frame.pivot_table(
        index=["round", "labels"], columns="strategy", values="candidate recall", aggfunc="mean"
    ).round(3)


def curve_table(strategies: dict) -> pd.DataFrame:
    """The Figure 4 analog's numbers, per strategy and seed (rows) and labels (columns): dev
    AP after the round with its 95% bootstrap interval, and the positive share of the labels
    collected so far."""
    rows = [
        {
            "strategy": name,
            "seed": str(r["seed"]),
            "labels": f"{r['labels']:,}",
            "cell": _with_ci(r["dev_ap"], [r["dev_ap_ci"]] if r.get("dev_ap_ci") else None, 0)
            + f" · {r['positives_found'] / r['labels']:.1%}",
        }
        for name, r in _rounds(strategies, "dev_ap")
    ]
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows)
    order = list(dict.fromkeys(frame["labels"]))  # the rounds' order, not the strings'
    table = frame.pivot(index=["strategy", "seed"], columns="labels", values="cell")
    return table[sorted(order, key=lambda n: int(n.replace(",", "")))]
