"""Notebook 08's tables, read from its metrics file (:func:`.rankers.ranker_metrics`) so that
the notebook and RESULTS.md show the same thing."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data import paper
from .rankers import ACTIVE

__all__ = [
    "table1",
    "effort_table",
    "spread_table",
    "verdict_table",
    "paper_table",
    "comparison_table",
]

ORDER = ("pretrained", "random", *ACTIVE)
NAMES = {"ndcg10": "nDCG@10", "mrr10": "MRR@10", "ap": "all-pairs AP"}


def _strategies(by_strategy: dict) -> list[str]:
    return [s for s in ORDER if s in by_strategy] + [s for s in by_strategy if s not in ORDER]


def table1(metrics: dict, task: str, *, metric: str = "ndcg10") -> pd.DataFrame:
    """The paper's Table 1 on our data: ``metric`` per strategy (rows) and questions annotated
    (columns; 0 is the pretrained encoder), means over seeds. ``*`` marks a cell that differs
    from random's (paired t-test over test questions, p < 0.05 after Bonferroni over the
    strategies); random's cells give the min-max of its subsets."""
    by_strategy = metrics[task]
    sizes = sorted({n for entry in by_strategy.values() for n in entry["sizes"]})
    rows = {}
    for strategy in _strategies(by_strategy):
        entry = by_strategy[strategy]
        cells = dict.fromkeys(sizes, "")
        tests = entry.get("vs_random", {}).get(metric)
        for k, size in enumerate(entry["sizes"]):
            cell = f"{entry[metric]['mean'][k]:.3f}"
            if strategy == "random" and len(entry["seeds"]) > 1:
                seeds = [run[k] for run in entry[metric]["per_seed"]]
                cell += f" ({min(seeds):.3f}-{max(seeds):.3f})"
            if tests and tests["significant"][k]:
                cell += "*"
            cells[size] = cell
        rows[strategy] = cells
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.columns = [f"{n} questions" for n in frame.columns]
    return frame.rename_axis(f"{task}: {NAMES.get(metric, metric)}")


def effort_table(metrics: dict, task: str) -> pd.DataFrame:
    """At the largest size: assessments (mean over seeds) and per question, against random's,
    the pairs labelled, and the dollars of annotation, compute and both (metrics' prices)."""
    by_strategy = metrics[task]
    random = by_strategy["random"]
    per_question_random = random["assessments"][-1] / random["sizes"][-1]
    rows = []
    for strategy in (s for s in _strategies(by_strategy) if s != "pretrained"):
        entry = by_strategy[strategy]
        per_question = entry["assessments"][-1] / entry["sizes"][-1]
        rows.append(
            {
                "strategy": strategy,
                "questions": entry["sizes"][-1],
                "assessments": entry["assessments"][-1],
                "per question": per_question,
                "x random": per_question / per_question_random,
                "pairs labelled": entry["pairs"][-1],
                "annotation $": entry["annotation_cost"][-1],
                "compute $": entry["compute_cost"][-1],
                "total $": entry["total_cost"][-1],
                "nDCG@10": entry["ndcg10"]["mean"][-1],
            }
        )
    return pd.DataFrame(rows).set_index("strategy")


def spread_table(metrics: dict, task: str) -> pd.DataFrame:
    """The paper's RQ1: the best and worst random subset at each size, and whether they differ."""
    rows = [
        {
            "questions": s["questions"],
            "best seed": s["best_seed"],
            "worst seed": s["worst_seed"],
            "best nDCG@10": s["best"],
            "worst nDCG@10": s["worst"],
            "range": s["range"],
            "p": s["p"],
            "differ (p < 0.05)": "yes" if s["significant"] else "no",
        }
        for s in metrics[task]["random"]["spread"]
    ]
    return pd.DataFrame(rows).set_index("questions")


def verdict_table(metrics: dict) -> pd.DataFrame:
    """Per task and strategy: the verdicts against random at equal questions and at equal cost."""
    rows = []
    for task, by_strategy in metrics.items():
        for strategy in _strategies(by_strategy):
            v = by_strategy[strategy].get("verdict")
            if v is None:
                continue
            q, c = v["equal_questions"], v["equal_cost"]
            rows.append(
                {
                    "task": task,
                    "strategy": strategy,
                    "questions": q["questions"],
                    "Δ nDCG@10": q["difference"],
                    "p (Bonferroni)": q["p_adjusted"],
                    "at equal questions": q["verdict"],
                    "equal cost $": c["cost"],
                    "Δ nDCG@10 at equal cost": c["difference"],
                    "p at equal cost": c["p_adjusted"],
                    "at equal cost": c["verdict"],
                }
            )
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def paper_table() -> pd.DataFrame:
    """Althammer et al.'s DPR rows of Table 1 (nDCG@10; ``*``: significantly different from
    Random, every such cell lower)."""
    rows = []
    for test_set, by_strategy in paper.ALTHAMMER_DPR.items():
        for strategy, values in by_strategy.items():
            row = {
                "test set": test_set,
                "strategy": strategy,
                "0": f"{paper.ALTHAMMER_DPR_ZERO[test_set]:.3f}" if strategy == "random" else "",
            }
            for size, value in zip(paper.ALTHAMMER_SIZES, values):
                mark = "*" if (test_set, strategy, size) in paper.ALTHAMMER_SIGNIFICANT else ""
                row[f"{size // 1000}k"] = f"{value:.4f}{mark}"
            rows.append(row)
    return pd.DataFrame(rows).set_index(["test set", "strategy"])


def comparison_table(metrics: dict) -> pd.DataFrame:
    """Per strategy and test set (the paper's and ours): nDCG@10 minus random's at the largest
    size and how many sizes differed significantly."""
    columns = {}
    for test_set, by_strategy in paper.ALTHAMMER_DPR.items():
        column = columns[f"paper (DPR), {test_set}"] = {}
        for s in ACTIVE:
            marked = [
                (test_set, s, n) in paper.ALTHAMMER_SIGNIFICANT for n in paper.ALTHAMMER_SIZES
            ]
            column[s] = _compared(np.subtract(by_strategy[s], by_strategy["random"]), marked)
    for task, by_strategy in metrics.items():
        for s in (s for s in ACTIVE if s in by_strategy):
            tests = by_strategy[s]["vs_random"]["ndcg10"]
            diff, marked = tests["difference"], tests["significant"]
            columns.setdefault(f"ours, {task}", {})[s] = _compared(diff, marked)
    return pd.DataFrame(columns).rename_axis("strategy")


def _compared(diff, significant) -> str:
    """The difference from random at the largest size; the sizes where it was significant."""
    diff, significant = np.asarray(diff), np.asarray(significant, dtype=bool)
    better, worse = int((significant & (diff > 0)).sum()), int((significant & (diff < 0)).sum())
    return f"{diff[-1]:+.3f} (significantly better at {better}, worse at {worse} sizes)"
