"""The metrics files of notebooks 03-05: a sweep's results summarised per task and strategy
(mean, std over seeds and per seed), as plain JSON values tests and readers check."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..active.loop import STAGES
from ..io import json_row, plain
from ..templating import markdown
from . import data_efficiency

__all__ = [
    "summarise",
    "spread",
    "by_seed",
    "seed_means_by",
    "compare",
    "mean_std",
    "cell",
    "in_order",
    "judge",
    "seed_set_means",
    "ablation_metrics",
    "budget_metrics",
]


def summarise(results: dict) -> dict:
    """Notebook 03's metrics file (its layout: :mod:`pairlab.metrics_files`), stds ddof 0."""
    return nest({key: _summary(runs) for key, runs in by_seed(results).items()})


def by_seed(runs: dict) -> dict:
    """``{(*key, seed): value}`` as ``{key: [(seed, value), ...]}``, in the runs' order."""
    out: dict = {}
    for (*key, seed), value in runs.items():
        out.setdefault(tuple(key), []).append((seed, value))
    return out


def nest(flat: dict) -> dict:
    """``{(a, b, c): value}`` as ``{a: {b: {c: value}}}``, in the keys' order."""
    out: dict = {}
    for (*outer, last), value in flat.items():
        inner = out
        for key in outer:
            inner = inner.setdefault(key, {})
        inner[last] = value
    return out


def _summary(runs) -> dict:
    results = [result for _, result in runs]
    rounds = [(seed, r) for seed, result in runs for r in result["records"]]
    dev = pd.DataFrame(
        [{"labels": r["labels"], "ap": r["dev"]["ap"]} for _, r in rounds if r.get("dev")]
    )
    timed = [s for s in STAGES if any(s in r["seconds"] for _, r in rounds)]
    seconds = pd.DataFrame(
        [
            {s: sum(r["seconds"].get(s, 0.0) for r in result["records"]) for s in timed}
            for result in results
        ]
    )
    test = {k: [r["test"][k] for r in results] for k in ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")}
    return {
        "seeds": [seed for seed, _ in runs],
        "labels": int(np.mean([r["labels"] for r in results])),
        "positives_found": spread([r["positives_found"] for r in results]),
        **{k: spread(test[k], cis=test[f"{k}_ci"]) for k in ("ap", "p_at_r20")},
        "dev_ap_per_round": dev.groupby("labels")["ap"].mean().reset_index().to_dict("records"),
        "rounds_per_seed": [_round_entry(seed, r) for seed, r in rounds],
        "seconds_per_run": seconds.mean().round(1).to_dict(),
        "runs": [r["folder"] for r in results if "folder" in r],
    }


def _round_entry(seed, record: dict) -> dict:
    """One round of one seed's run, as the metrics file keeps it."""
    dev = record.get("dev") or {}
    recall = record.get("candidate_recall")
    return {
        "seed": int(seed),
        "round": int(record["round"]),
        "labels": int(record["labels"]),
        "positives_found": int(record["positives_found"]),
        "candidate_recall": None if recall is None or recall != recall else float(recall),
        "dev_ap": dev.get("ap"),
        "dev_ap_ci": dev.get("ap_ci"),
    }


def spread(values, *, cis=None) -> dict:
    """Mean, std (ddof 0) and values per seed (``cis``, each one's interval: ``ci_per_seed``)."""
    values = [float(v) for v in values]
    out = {"mean": float(np.mean(values)), "std": float(np.std(values)), "per_seed": values}
    if cis is not None:
        out["ci_per_seed"] = [[float(lo), float(hi)] for lo, hi in cis]
    return out


def seed_means(seeded: list, names=None, *, std_of=None, skip_absent: bool = False) -> dict:
    """``{"seeds", "per_seed": {name: [value per seed]}, name: mean, f"{name}_std": std (ddof
    1)}`` from ``[(seed, {name: value})]``, for ``names`` (default: the first row's). None is
    left out of a mean (a field no seed has: None, or absent with ``skip_absent``); lists are
    averaged element-wise; a std where two seeds have a number (only ``std_of``'s if given)."""
    rows = [row for _, row in seeded]
    out: dict = {"seeds": [int(s) for s, _ in seeded], "per_seed": {}}
    for name in list(rows[0]) if names is None else names:
        values = [row.get(name) for row in rows]
        present = [v for v in values if v is not None]
        if not present and skip_absent:
            continue
        out["per_seed"][name] = values
        if not present:
            out[name] = None
        elif isinstance(present[0], (list, tuple)):
            out[name] = [float(np.mean([v[i] for v in present])) for i in range(len(present[0]))]
        elif isinstance(present[0], (int, float, np.number)):
            out[name] = float(np.mean(present))
            if len(present) > 1 and (std_of is None or name in std_of):
                out[f"{name}_std"] = float(np.std(present, ddof=1))
    return out


def seed_means_by(runs: dict, names=None, **options) -> dict:
    """``{(*key, seed): row}`` as nested ``{key...: seed_means(rows of its seeds)}``."""
    return nest({k: seed_means(v, names, **options) for k, v in by_seed(runs).items()})


def cell(value, spec: str = ".3f") -> str:
    """``value`` as a table cell formatted by ``spec``, ``-`` for None."""
    return "-" if value is None else format(value, spec)


def mean_std(row: dict, name: str) -> str:
    """A :func:`seed_means` row's ``name`` as a table cell: ``0.512 ± 0.013`` (the std where two
    or more seeds gave one), ``-`` where no seed has it."""
    if row.get(name) is None:
        return "-"
    std = row.get(f"{name}_std")
    return f"{row[name]:.3f}" + ("" if std is None else f" ± {std:.3f}")


def in_order(metrics: dict, order):
    """``(key, row name, row)`` of ``{key: {row name: row}}``, each key's rows in ``order``."""
    for key, rows in metrics.items():
        for name in order:
            if name in rows:
                yield key, name, rows[name]


def compare(a: dict, b: dict, key: str) -> dict:
    """Whether record ``a``'s ``key`` is above ``b``'s beyond the noise: by both 95% intervals
    (``key_ci``), else by the seeds' std (ddof 1), else not told. ``{"a", "b", "above",
    "separated" (None: not told), "basis" ("intervals", "seeds", "one seed"), "spread"}``."""
    x, y = float(a[key]), float(b[key])
    ci_a, ci_b = a.get(f"{key}_ci"), b.get(f"{key}_ci")
    seeds = [[v for v in (r.get("per_seed") or {}).get(key, []) if v is not None] for r in (a, b)]
    out = {"a": x, "b": y, "above": x > y, "separated": None, "basis": "one seed", "spread": None}
    if ci_a and ci_b:
        out.update(basis="intervals", separated=bool(ci_a[0] > ci_b[1] or ci_b[0] > ci_a[1]))
    elif min(map(len, seeds)) > 1:
        std = max(float(np.std(v, ddof=1)) for v in seeds)
        out.update(basis="seeds", spread=std, separated=abs(x - y) > std)
    return out


def judge(a: dict, b: dict, key: str) -> str:
    """:func:`compare` as a line, in the words of ``findings.md.j2``'s ``judged``."""
    return markdown("judged", compare(a, b, key))


def seed_set_means(seed_rounds: pd.DataFrame) -> pd.DataFrame:
    """:func:`seed_set_rounds` averaged over seeds: one row per task, seed set and round."""
    return seed_rounds.groupby(["task", "seed set", "round"])[
        ["labels", "dev AP", "batch positive share", "mean p", "positives found"]
    ].mean()


def ablation_metrics(summary: dict, seed_rounds: pd.DataFrame, transferred: dict) -> dict:
    """Notebook 04's metrics file (its layout: :mod:`pairlab.metrics_files`)."""
    out = {task: {"strategies": s, "seed_set": {}, "transfer": {}} for task, s in summary.items()}
    means = seed_set_means(seed_rounds)
    for (task, seed_set), rows in seed_rounds.groupby(["task", "seed set"], sort=False):
        out[task]["seed_set"][seed_set] = {
            "seeds": sorted(set(int(s) for s in rows["seed"])),
            "rounds": [
                {
                    "round": int(r),
                    "labels": int(m["labels"]),
                    "dev_ap": plain(m["dev AP"]),
                    "batch_positive_share": plain(m["batch positive share"]),
                    "mean_p": plain(m["mean p"]),
                }
                for r, m in means.loc[(task, seed_set)].iterrows()
            ],
        }
    for (task, source), runs in by_seed(transferred).items():
        per_seed = {k: [m[k] for _, m in runs] for k in runs[0][1]}
        out[task]["transfer"][source] = {
            "seeds": [s for s, _ in runs],
            "labels": per_seed["labels"][0],
            **{k: spread(per_seed[k]) for k in ("positives", "ap", "p_at_r20")},
            **{f"{k}_per_seed": per_seed[k] for k in ("ap_ci", "score_std", "collapsed")},
            "n_scored": per_seed["n_scored"][0],
            "seconds_per_model": float(np.mean(per_seed["seconds"])),
            "model_ids": per_seed["model_id"],
        }
    return out


def budget_metrics(
    curves_frame: pd.DataFrame,
    efficiency_frame: pd.DataFrame,
    summary: dict,
    noise_frame: pd.DataFrame,
    cost_frame: pd.DataFrame,
) -> dict:
    """Notebook 05's metrics file (its layout: :mod:`pairlab.metrics_files`)."""
    out: dict = {}
    efficiency = data_efficiency.record(efficiency_frame)
    undefined = dict(per_seed=[], factor_mean=None, factor_std=None, seeds_defined=0, seeds=0)
    for task in summary:
        frame = curves_frame[curves_frame["task"] == task]
        columns = ["ap", "ap_lo", "ap_hi", "positives_found"]
        curves_out = {
            strategy: [
                {
                    "labels": int(n),
                    "dev_ap": float(m["ap"]),
                    "dev_ap_ci": [float(m["ap_lo"]), float(m["ap_hi"])],
                    "positive_share": float(m["positives_found"] / n),
                }
                for n, m in rows.groupby("labels")[columns].mean().iterrows()
            ]
            for strategy, rows in frame.groupby("strategy", sort=False)
        }
        out[task] = {
            "curves": curves_out,
            "efficiency": efficiency.get(task, undefined),
            "strategies": summary[task],
            "noise": _records(noise_frame, task),
            "costs": _records(cost_frame, task),
        }
    return plain(out)


def _records(frame: pd.DataFrame, task: str) -> list[dict]:
    """``task``'s rows of a table indexed by task, as a metrics file's records."""
    if task not in frame.index.get_level_values(0):
        return []
    return [json_row(plain(row)) for row in frame.loc[task].reset_index().to_dict("records")]
