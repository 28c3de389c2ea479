"""The core paper's headline, judged from the metrics: does adaptive collection (uncertainty
sampling) beat static retrieval? One rule, read from a notebook-03 metrics file (test AP per
seed with its 95% interval, positives found) and notebook 05's data-efficiency factor per seed;
notebook 03 and RESULTS.md both show what it returns.

The rule: **yes** where uncertainty sampling's test AP is above static retrieval's on every
seed and its 95% bootstrap interval lies wholly above static retrieval's on every seed;
**above, within noise** where its AP is above on most seeds but not every interval separates;
**no** otherwise."""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["A", "B", "judge", "sentence", "interval_table", "recall_table"]

A, B = "uncertainty", "static_retrieval"
ANSWERS = ("yes", "above, within noise", "no")


def judge(strategies: dict, efficiency: dict | None = None, *, a: str = A, b: str = B) -> dict | None:
    """The verdict for one task: ``strategies`` is a notebook-03 metrics entry (``{strategy:
    summary}``), ``efficiency`` notebook 05's (``{"per_seed": [{"seed", "factor", "bound"}]}``).
    None where either strategy is missing or they share no seed."""
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
    separated = (None if a_ci is None or b_ci is None else
                 sum(u[0] > v[1] for u, v in zip(a_ci, b_ci)))
    reverse = (None if a_ci is None or b_ci is None else
               sum(v[0] > u[1] for u, v in zip(a_ci, b_ci)))
    factors = {int(row["seed"]): (row.get("factor"), row.get("bound"))
               for row in (efficiency or {}).get("per_seed", [])}
    zero = strategies.get("zero_shot")
    n = len(seeds)
    answer = ("yes" if above == n and separated == n else
              "above, within noise" if above > n / 2 else "no")
    return {"seeds": seeds, "a": a, "b": b, "labels": int(x["labels"]),
            "a_ap": a_ap, "b_ap": b_ap, "a_ci": a_ci, "b_ci": b_ci,
            "a_ap_mean": float(np.mean(a_ap)), "b_ap_mean": float(np.mean(b_ap)),
            "above": above, "separated": separated, "reverse_separated": reverse,
            "a_positives": float(x["positives_found"]["mean"]),
            "b_positives": float(y["positives_found"]["mean"]),
            "factors": [factors.get(int(s), (None, None))[0] for s in seeds],
            "factor_bounds": [factors.get(int(s), (None, None))[1] for s in seeds],
            "zero_shot_ap": None if zero is None else float(zero["ap"]["mean"]),
            "zero_shot_ap_ci": None if zero is None else zero["ap"].get("ci"),
            "answer": answer}


def sentence(task: str, verdict: dict) -> str:
    """The verdict in plain words, every number from ``verdict``."""
    v, n = verdict, len(verdict["seeds"])
    names = {A: "uncertainty sampling", B: "static retrieval"}
    a, b = names.get(v["a"], v["a"]), names.get(v["b"], v["b"])
    seeds = ", ".join(f"{u:.3f} vs {w:.3f}" for u, w in zip(v["a_ap"], v["b_ap"]))
    parts = [f"On {task} at {v['labels']:,} labels, {a}'s test AP was {v['a_ap_mean']:.3f} "
             f"against {b}'s {v['b_ap_mean']:.3f} (per seed: {seeds}), above it on {v['above']} "
             f"of {n} seeds"]
    if v["separated"] is not None:
        parts.append(f"its 95% interval wholly above on {v['separated']} of {n}"
                     + (f" and wholly below on {v['reverse_separated']}" if v["reverse_separated"] else ""))
    parts.append(f"it found {v['a_positives']:,.0f} positives against {v['b_positives']:,.0f}")
    known = [(f, bound) for f, bound in zip(v["factors"], v["factor_bounds"]) if f is not None]
    if known:
        parts.append("data-efficiency factor per seed " + ", ".join(
            f"{f:.2f}x" + (" (a lower bound)" if bound == "lower bound" else "") for f, bound in known))
    missing = sum(f is None for f in v["factors"])
    if missing and any(b is not None for b in v["factor_bounds"]):
        parts.append(f"no factor on {missing} seed{'s' if missing > 1 else ''} (static retrieval's "
                     "final AP not reached)")
    if v.get("zero_shot_ap") is not None:
        ci = v["zero_shot_ap_ci"]
        parts.append(f"the pretrained encoder with no labels scored {v['zero_shot_ap']:.3f}"
                     + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""))
    answer = {"yes": "adaptive collection beat static retrieval",
              "above, within noise": "adaptive collection came out above static retrieval, but "
                                     "not beyond the intervals' noise",
              "no": "adaptive collection did not beat static retrieval"}[v["answer"]]
    return "; ".join(parts) + f". In short: {answer}."


def interval_table(strategies: dict, paper_table3: dict | None = None,
                   paper_table4: dict | None = None) -> pd.DataFrame:
    """Tables 3 and 4 at once, per strategy and seed: test AP and P@R20 with their 95% bootstrap
    intervals and the positives found, then the mean over seeds beside the paper's values."""
    rows = []
    for name, entry in strategies.items():
        ap, p20 = entry["ap"], entry["p_at_r20"]
        for i, seed in enumerate(entry["seeds"]):
            rows.append({"strategy": name, "seed": str(seed), "labels": entry["labels"],
                         "AP": _with_ci(ap["per_seed"][i], ap.get("ci_per_seed"), i),
                         "P@R20": _with_ci(p20["per_seed"][i], p20.get("ci_per_seed"), i),
                         "positives": f"{entry['positives_found']['per_seed'][i]:,.0f}",
                         "AP (paper)": "", "positives (paper)": ""})
        ref3 = (paper_table3 or {}).get(name, {})
        ref4 = (paper_table4 or {}).get(name)
        one = not entry["seeds"]  # the zero-shot row: one model, its own interval
        rows.append({"strategy": name, "seed": "-" if one else "mean", "labels": entry["labels"],
                     "AP": _with_ci(ap["mean"], [ap["ci"]], 0) if one else f"{ap['mean']:.3f} ± {ap['std']:.3f}",
                     "P@R20": (_with_ci(p20["mean"], [p20["ci"]], 0) if one else
                               f"{p20['mean']:.3f} ± {p20['std']:.3f}"),
                     "positives": f"{entry['positives_found']['mean']:,.0f}",
                     "AP (paper)": "-" if ref3.get("ap") is None else f"{ref3['ap']:.3f}",
                     "positives (paper)": "-" if ref4 is None else f"{ref4:,}"})
    return pd.DataFrame(rows).set_index(["strategy", "seed"])


def _with_ci(value: float, cis, i: int) -> str:
    if not cis:
        return f"{value:.3f}"
    low, high = cis[i]
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def recall_table(strategies: dict) -> pd.DataFrame:
    """Candidate recall per round (rows) and strategy (columns), the mean over seeds: the share
    of the pool's not yet labelled positives that the round's candidate search held."""
    rows = [{"strategy": name, "round": r["round"], "labels": r["labels"],
             "candidate recall": r["candidate_recall"]}
            for name, entry in strategies.items() for r in entry.get("rounds_per_seed", [])
            if r.get("candidate_recall") is not None]
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows)
    return frame.pivot_table(index=["round", "labels"], columns="strategy",
                             values="candidate recall", aggfunc="mean").round(3)
