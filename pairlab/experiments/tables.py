"""The tables and frames notebooks 03-05 show: the paper's Tables 3-6 beside ours, curves and
candidate recall per round, the noise between equally good runs and the cost of labels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..active.loop import STAGES
from ..data.paper import A, B
from .budget import Budget
from .summaries import by_seed, spread
from .sweeps import ZERO_SHOT

__all__ = [
    "curves",
    "stage_times",
    "calibration",
    "table3",
    "table4",
    "table5",
    "table6",
    "seed_set_rounds",
    "noise",
    "costs",
    "interval_table",
    "recall_table",
    "curve_table",
]


def _rounds(results: dict):
    """``(task, strategy, seed, round record)`` of every run of a sweep's results."""
    for (task, strategy, seed), result in results.items():
        for r in result["records"]:
            yield task, strategy, seed, r


def curves(results: dict) -> pd.DataFrame:
    """One row per evaluated round of every run (candidate recall NaN where none was searched)."""
    return pd.DataFrame(
        [
            {
                "task": task,
                "strategy": strategy,
                "seed": seed,
                "round": r["round"],
                "labels": r["labels"],
                "positives_found": r["positives_found"],
                "positive_share": r["positives_found"] / r["labels"],
                "ap": r["dev"]["ap"],
                "ap_lo": r["dev"]["ap_ci"][0],
                "ap_hi": r["dev"]["ap_ci"][1],
                "p_at_r20": r["dev"]["p_at_r20"],
                "candidate_recall": np.nan
                if r.get("candidate_recall") is None
                else float(r["candidate_recall"]),
            }
            for task, strategy, seed, r in _rounds(results)
            if r.get("dev") is not None
        ]
    )


def stage_times(results: dict) -> pd.DataFrame:
    """Mean seconds per stage and round, by task and strategy."""
    frame = pd.DataFrame(
        [
            {"task": t, "strategy": s, "round": r["round"], "labels": r["labels"], **r["seconds"]}
            for t, s, _, r in _rounds(results)
        ]
    ).fillna(0.0)
    stages = [s for s in STAGES if s in frame]
    return frame.groupby(["task", "strategy", "round"])[["labels", *stages]].mean().round(1)


def calibration(results: dict) -> pd.DataFrame:
    """Per round of each run whose batch was chosen by a trained model: the mean predicted p of
    the batch and the share of it that was positive (calibrated: the two agree)."""
    columns = ["task", "strategy", "round", "batch", "mean p", "positive share"]
    rows = [
        [t, s, r["round"], r["batch"], c["mean_p"], c["positive_share"]]
        for t, s, _, r in _rounds(results)
        if (c := r.get("calibration"))
    ]
    return pd.DataFrame(rows, columns=columns).groupby(columns[:3]).mean().round(3)


def _pm(spread: dict) -> str:
    """Mean ± std over seeds, in percent; a single model's value with its 95% interval where
    there are no seeds (the zero-shot row) or one (a std of one value would read as no spread)."""
    one = spread.get("ci_per_seed") if len(spread["per_seed"]) == 1 else None
    if (not spread["per_seed"] and "ci" in spread) or one:
        low, high = one[0] if one else spread["ci"]
        return f"{100 * spread['mean']:.1f} [{100 * low:.1f}, {100 * high:.1f}]"
    return f"{100 * spread['mean']:.1f} ± {100 * spread['std']:.1f}"


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def table3(summary: dict, paper: dict, names=None) -> pd.DataFrame:
    """Test P@R20 and AP, mean ± std over seeds, beside the paper's Table 3, per task and
    strategy: those in ``names`` (with their positives), else all, the zero-shot row first."""
    rows = []
    for task, strategies in summary.items():
        for name in names or sorted(strategies, key=lambda n: n != ZERO_SHOT):
            if name not in strategies:
                continue
            entry, ref = strategies[name], paper.get(task, {}).get(name, {})
            found = f"{entry['positives_found']['mean']:,.0f}"
            rows.append(
                {
                    "task": task,
                    "strategy": name,
                    "labels": entry["labels"],
                    **({"positives": found} if names else {}),
                    "P@R20": _pm(entry["p_at_r20"]),
                    "P@R20 (paper)": _pct(ref.get("p_at_r20")),
                    "AP": _pm(entry["ap"]),
                    "AP (paper)": _pct(ref.get("ap")),
                }
            )
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def table5(summary: dict, paper: dict) -> pd.DataFrame:
    """Stratified sampling (oracle positives) against active learning, and the paper's Table 5."""
    names = ("stratified_match", "stratified_all_positives", "adaptive_retrieval", "uncertainty")
    return table3(summary, paper, names)


def table4(summary: dict, paper: dict, budget: dict) -> pd.DataFrame:
    """Positives found per strategy (mean over seeds) with the same budget, beside the paper's
    Table 4 (positives among its 232,100 QQP / 16,640 WikiQA labels)."""
    rows = []
    for task, strategies in summary.items():
        for name in sorted(strategies, key=lambda n: n != ZERO_SHOT):
            entry, ref = strategies[name], paper.get(task, {}).get(name)
            found = entry["positives_found"]["mean"]
            rows.append(
                {
                    "task": task,
                    "strategy": name,
                    "labels": entry["labels"],
                    "positives found": f"{found:,.1f}",
                    "share": f"{found / entry['labels']:.1%}" if entry["labels"] else "-",
                    "paper": "-" if ref is None else f"{ref:,}",
                    "paper share": "-" if ref is None else f"{ref / budget[task]['labels']:.1%}",
                }
            )
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def seed_set_rounds(results: dict, labels: dict) -> pd.DataFrame:
    """Per round of each run labelled in ``labels`` (label -> seed set's name): dev AP, the batch's
    positive share and the model's mean p for it (the paper's Figure 3b)."""
    return pd.DataFrame(
        [
            {
                "task": task,
                "seed set": labels[label],
                "seed": seed,
                "round": r["round"],
                "labels": r["labels"],
                "dev AP": (r.get("dev") or {}).get("ap"),
                "batch positive share": r["positives_in_batch"] / r["batch"],
                "mean p": (r.get("calibration") or {}).get("mean_p"),
                "positives found": r["positives_found"],
            }
            for task, label, seed, r in _rounds(results)
            if label in labels
        ]
    )


def table6(summary: dict, transferred: dict, paper: dict) -> pd.DataFrame:
    """CosineBERT beside ConcatBERT trained on the same labels, with the paper's Table 6."""
    rows = []
    for (task, source), seeded in by_seed(transferred).items():
        runs = [m for _, m in seeded]
        cosine, ref = summary[task][source], paper.get(task, {}).get(source, {})
        rows.append(
            {
                "task": task,
                "data": source,
                "labels": runs[0]["labels"],
                "CosineBERT P@R20": _pm(cosine["p_at_r20"]),
                "CosineBERT AP": _pm(cosine["ap"]),
                "ConcatBERT P@R20": _pm(spread([m["p_at_r20"] for m in runs])),
                "ConcatBERT AP": _pm(spread([m["ap"] for m in runs])),
                "ConcatBERT collapsed": f"{sum(m['collapsed'] for m in runs)} of {len(runs)}",
                "paper CosineBERT AP": _pct(ref.get("cosine_ap")),
                "paper ConcatBERT AP": _pct(ref.get("concat_ap")),
            }
        )
    return pd.DataFrame(rows).set_index(["task", "data"])


def noise(summary: dict, groups) -> pd.DataFrame:
    """How far test AP moves between runs that should be equally good (random label sets of the
    same size, training seeds), beside the gap between uncertainty sampling and static
    retrieval: one row per task and group with the runs' mean, std, min, max and range."""
    rows = []
    for task, strategies in summary.items():
        for name in (g for g in groups if g in strategies):
            v = np.asarray(strategies[name]["ap"]["per_seed"])
            rows.append([task, name, len(v), v.mean(), v.std(), v.min(), v.max(), np.ptp(v)])
        if A in strategies and B in strategies:
            diff = strategies[A]["ap"]["mean"] - strategies[B]["ap"]["mean"]
            rows.append([task, f"gap: {A} - {B} (means)", None, diff, *[None] * 4])
    columns = ["task", "runs of", "n", "mean AP", "std", "min", "max", "range"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["n"] = frame["n"].astype("Int64")
    return frame.set_index(["task", "runs of"])


def costs(
    summary: dict,
    efficiency_frame: pd.DataFrame | None = None,
    *,
    per_hour: float = 75.0,
    dollars_per_hour: float = 50.0,
) -> pd.DataFrame:
    """What each strategy's labels cost to annotate beside the compute one run took; with
    ``efficiency_frame`` also what reaching the reference's full-budget dev AP costs."""
    price = Budget(per_hour, dollars_per_hour)
    rows = [
        {
            "task": task,
            "strategy": name,
            "labels": entry["labels"],
            "annotator hours": entry["labels"] / per_hour,
            "annotation $": float(price.annotation(entry["labels"])),
            "compute hours (measured)": sum(entry["seconds_per_run"].values()) / 3600.0,
            "test AP": entry["ap"]["mean"],
        }
        for task, strategies in summary.items()
        for name, entry in strategies.items()
    ]
    frame = pd.DataFrame(rows).set_index(["task", "strategy"])
    if efficiency_frame is not None and not efficiency_frame.empty:
        needed = efficiency_frame.groupby("task")["labels needed"].mean()
        for task, labels in needed[np.isfinite(needed)].items():
            frame.loc[
                (task, "uncertainty to static's AP"), ["labels", "annotator hours", "annotation $"]
            ] = (round(labels), labels / per_hour, float(price.annotation(labels)))
    return frame.round(3)


# -- notebook 03 at the paper's scale: per seed, with each seed's 95% interval -----------------


def _with_ci(value: float, ci=None) -> str:
    return f"{value:.3f}" if not ci else f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def interval_table(
    strategies: dict, paper_table3: dict | None = None, paper_table4: dict | None = None
) -> pd.DataFrame:
    """Tables 3 and 4 at once, per strategy and seed: test AP and P@R20 with their 95% bootstrap
    intervals and the positives found, then the mean over seeds beside the paper's values."""
    rows = []
    for name, entry in strategies.items():
        ap, p20, found = entry["ap"], entry["p_at_r20"], entry["positives_found"]
        no_ci = [None] * len(entry["seeds"])
        ap_ci, p20_ci = ap.get("ci_per_seed") or no_ci, p20.get("ci_per_seed") or no_ci
        for i, seed in enumerate(entry["seeds"]):
            rows.append(
                {
                    "strategy": name,
                    "seed": str(seed),
                    "labels": entry["labels"],
                    "AP": _with_ci(ap["per_seed"][i], ap_ci[i]),
                    "P@R20": _with_ci(p20["per_seed"][i], p20_ci[i]),
                    "positives": f"{found['per_seed'][i]:,.0f}",
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
                "AP": _with_ci(ap["mean"], ap["ci"]) if one else _mean_std(ap),
                "P@R20": _with_ci(p20["mean"], p20["ci"]) if one else _mean_std(p20),
                "positives": f"{found['mean']:,.0f}",
                "AP (paper)": "-" if ref3.get("ap") is None else f"{ref3['ap']:.3f}",
                "positives (paper)": "-" if ref4 is None else f"{ref4:,}",
            }
        )
    return pd.DataFrame(rows).fillna("").set_index(["strategy", "seed"])  # no paper per seed


def _mean_std(spread: dict) -> str:
    """The mean ± std over seeds; with one seed, its value alone (its interval is in its row)."""
    if len(spread["per_seed"]) == 1:
        return f"{spread['mean']:.3f} (one seed)"
    return f"{spread['mean']:.3f} ± {spread['std']:.3f}"


def _seed_rounds(strategies: dict, key: str) -> pd.DataFrame:
    """Every seed's rounds that recorded ``key``, with their strategy."""
    return pd.DataFrame(
        [
            {"strategy": name, **r}
            for name, entry in strategies.items()
            for r in entry.get("rounds_per_seed", [])
            if r.get(key) is not None
        ]
    )


def recall_table(strategies: dict) -> pd.DataFrame:
    """Candidate recall per round (rows) and strategy (columns), the mean over seeds."""
    frame = _seed_rounds(strategies, "candidate_recall")
    if frame.empty:
        return frame
    return frame.pivot_table(
        index=["round", "labels"], columns="strategy", values="candidate_recall", aggfunc="mean"
    ).round(3)


def curve_table(strategies: dict) -> pd.DataFrame:
    """The Figure 4 analog per strategy and seed (rows) and labels (columns): dev AP with its 95%
    interval and the positive share of the labels so far."""
    frame = _seed_rounds(strategies, "dev_ap")
    if frame.empty:
        return frame
    frame["cell"] = [
        _with_ci(r.dev_ap, r.dev_ap_ci if isinstance(r.dev_ap_ci, list) else None)
        + f" · {r.positives_found / r.labels:.1%}"
        for r in frame.itertuples()
    ]
    frame["seed"], frame["labels"] = frame["seed"].astype(str), frame["labels"].map("{:,}".format)
    table = frame.pivot(index=["strategy", "seed"], columns="labels", values="cell")
    return table[sorted(frame["labels"].unique(), key=lambda n: int(n.replace(",", "")))]
