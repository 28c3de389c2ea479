"""Notebook 08 (Althammer et al. 2023): query-level runs, their curves and per-question test
values, paired tests against random and the metrics file (tables: :mod:`.ranker_tables`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..active.queries import COST_STAGES, QUERY_STRATEGIES, QueryRun, QuerySettings, ranking_record
from ..active.store import run_folder
from ..annotators.scan import scan_to_first_relevant
from ..evaluation.ranking import answerable
from ..evaluation.significance import ALPHA, bonferroni, paired_test
from ..evaluation.strata import EvalConfig, pretrained_eval_set
from ..models.embed import embed_pool
from .budget import Budget, round_hours
from .sweeps import run_progress

__all__ = [
    "RankerSettings",
    "prepare_rankers",
    "scale",
    "protocol_example",
    "query_sweep",
    "pretrained_baseline",
    "curves",
    "with_costs",
    "per_query",
    "verdict",
    "ranker_metrics",
]

ACTIVE = ("uncertainty", "qbc", "diversity")  # the paper's three strategies, compared with random
METRICS = {"ndcg10": "ndcg", "mrr10": "mrr"}  # metrics-file name -> the run records' key
COSTS = ("annotation_cost", "compute_cost", "total_cost")  # dollars, by :func:`with_costs`


@dataclass(frozen=True)
class RankerSettings:
    """Notebook 08's settings, built once from its parameters: the test strata, the runs'
    shared :class:`QuerySettings` (the encoder and bootstrap replicates among them) and the
    sweep's groups ``((strategy, seeds), ...)``, random with ``random_seeds`` first."""

    strata: EvalConfig
    query: QuerySettings
    groups: tuple

    @classmethod
    def from_params(cls, params: dict) -> RankerSettings:
        per_round, rounds = params["questions_per_round"], int(params["query_rounds"])
        if isinstance(per_round, dict):
            batches = {task: (int(n),) * rounds for task, n in per_round.items()}
        else:
            batches = (int(per_round),) * rounds
        active, choices = list(params["active_strategies"]), set(QUERY_STRATEGIES) - {"random"}
        if not set(active) <= choices or len(set(active)) != len(active):
            raise ValueError(
                f"active_strategies must name distinct strategies other than random, of "
                f"{sorted(choices)}; got {active!r}"
            )
        if not params["random_seeds"] or not params["active_seeds"]:
            raise ValueError("random_seeds and active_seeds each need at least one seed")
        groups = (("random", [int(s) for s in params["random_seeds"]]),) + tuple(
            (s, [int(k) for k in params["active_seeds"]]) for s in active
        )
        query = QuerySettings.from_params(
            params,
            batches=batches,
            top_k=params["top_k"],
            members=params["committee_members"],
            share=params["committee_share"],
        )
        return cls(EvalConfig.from_params(params), query, groups)


def prepare_rankers(tasks: dict, settings: RankerSettings) -> dict:
    """``{task: (pools, eval_set)}``: the ``train`` and ``test`` pools of each of ``tasks``
    (:func:`pairlab.data.tasks_for`) and the test split's strata, from pretrained embeddings."""
    q = settings.query
    return {
        name: (
            {"train": task["train"], "test": task["test"]},
            pretrained_eval_set(
                task["test"], settings.strata, model=q.model, max_seq_length=q.max_seq_length
            )[0],
        )
        for name, task in tasks.items()
    }


def scale(prepared: dict, settings: QuerySettings) -> pd.DataFrame:
    """Per task: the questions annotatable and measured, the items they rank, the rounds."""
    rows = []
    for task, (pools, _) in prepared.items():
        train, test = pools["train"], pools["test"]
        batches = settings.config(task, "random").schedule()
        rows.append(
            {
                "task": task,
                "train questions": len(train.left_texts),
                "with a relevant item": len(answerable(train)),
                "right-hand side (train)": train.space.n_right - int(train.symmetric),
                "test questions measured": len(answerable(test)),
                "right-hand side (test)": test.space.n_right - int(test.symmetric),
                "questions per round": ", ".join(map(str, batches)),
            }
        )
    return pd.DataFrame(rows).set_index("task")


def protocol_example(prepared: dict, task: str, settings: RankerSettings) -> pd.DataFrame:
    """The annotation protocol on 3 random training questions of ``task`` under the pretrained
    ranker: each one's cost (the rank of its first relevant item) and what was read."""
    train = prepared[task][0]["train"]
    q = settings.query
    left, right = embed_pool(train, q.model, max_seq_length=q.max_seq_length, show_progress=False)
    questions = np.sort(
        np.random.default_rng(settings.strata.seed).choice(answerable(train), 3, replace=False)
    )
    scan = scan_to_first_relevant(train, left, right, questions)
    ends = np.cumsum(scan.assessments)
    return pd.DataFrame(
        {
            "question": train.left_texts[questions],
            "assessments": scan.assessments,
            "ranked first": train.right_texts[scan.items[ends - scan.assessments]],
            "first relevant": train.right_texts[scan.items[ends - 1]],
        }
    )


def query_sweep(
    prepared: dict,
    groups,
    settings: QuerySettings,
    root,
    *,
    callbacks=(),
    learner: Callable | None = None,
) -> dict:
    """``{(task, strategy, seed): result}`` of ``groups`` (``[(strategy, seeds)]``), read back."""
    results = {}
    keys = [(t, s, int(seed)) for t in prepared for s, seeds in groups for seed in seeds]
    with run_progress(len(keys)) as progress:
        for task, strategy, seed in keys:
            pools, eval_set = prepared[task]
            config = settings.config(task, strategy, seed)
            results[(task, strategy, seed)] = QueryRun(
                config,
                pools,
                eval_set,
                run_folder(root, config, pools, {"test": eval_set}),
                callbacks=[*callbacks, progress],
                learner=learner(config) if learner else None,
            ).run()
    return results


def pretrained_baseline(prepared: dict, settings: RankerSettings) -> dict:
    """The untrained encoder on each task's test split (training size 0): ``{task: {"ndcg",
    "mrr", "ap", "ap_ci", "per_query"}}``, shaped like a run record's ``test``."""
    q = settings.query
    return {
        task: ranking_record(
            pools["test"],
            eval_set,
            *embed_pool(
                pools["test"], q.model, max_seq_length=q.max_seq_length, show_progress=False
            ),
            k=10,
            n_boot=q.n_boot,
            seed=settings.strata.seed,
        )
        for task, (pools, eval_set) in prepared.items()
    }


def curves(results: dict, budget: Budget) -> pd.DataFrame:
    """One row per round of every run: questions annotated, assessments and pairs so far, the
    test metrics, and the cumulative GPU/CPU hours and dollars of annotation and compute."""
    rows = []
    for (task, strategy, seed), result in results.items():
        assessments = gpu = cpu = 0.0
        for r in result["records"]:
            hours = round_hours(r["seconds"], r.get("device", "cpu"), COST_STAGES)
            assessments += sum(r["assessments"])
            gpu, cpu = gpu + hours[0], cpu + hours[1]
            rows.append(
                {
                    "task": task,
                    "strategy": strategy,
                    "seed": seed,
                    "round": r["round"],
                    "questions": r["n_questions"],
                    "assessments": assessments,
                    "pairs": r["labels"],
                    **{key: r["test"][key] for key in ("ndcg", "mrr", "ap")},
                    "ap_lo": r["test"]["ap_ci"][0],
                    "ap_hi": r["test"]["ap_ci"][1],
                    "gpu_hours": gpu,
                    "cpu_hours": cpu,
                }
            )
    return with_costs(pd.DataFrame(rows), budget)


def with_costs(frame: pd.DataFrame, budget: Budget) -> pd.DataFrame:
    """``frame`` (:func:`curves`) with its dollars recomputed at ``budget``'s prices."""
    out = frame.copy()
    out["annotation_cost"] = budget.annotation(out["assessments"])
    out["compute_cost"] = budget.compute(out["gpu_hours"], out["cpu_hours"])
    out["total_cost"] = out["annotation_cost"] + out["compute_cost"]
    return out


def per_query(results: dict) -> dict:
    """``{(task, strategy, seed): {"questions": (n_q,), "ndcg": (rounds, n_q), "mrr": ...}}``:
    every run's per-question test values (the same questions in a task's runs, checked)."""
    out, questions = {}, {}
    for (task, strategy, seed), result in results.items():
        records = [r["test"]["per_query"] for r in result["records"]]
        asked = np.asarray(records[0]["questions"], dtype=np.int64)
        if not np.array_equal(questions.setdefault(task, asked), asked):
            raise ValueError(
                f"the {task} runs measured different test questions: they are not paired"
            )
        out[(task, strategy, seed)] = {
            "questions": asked,
            **{key: np.array([r[key] for r in records]) for key in ("ndcg", "mrr")},
        }
    return out


def _mean_over_seeds(queries: dict, task: str, strategy: str, key: str) -> np.ndarray:
    """(rounds, n_q): a strategy's per-question values averaged over its seeds."""
    runs = [v[key] for (t, s, _), v in queries.items() if (t, s) == (task, strategy)]
    if not runs:
        raise KeyError(f"no {strategy!r} run of {task}")
    return np.mean(runs, axis=0)


def versus_random(
    queries: dict, task: str, strategy: str, *, key: str = "ndcg", n_comparisons: int = len(ACTIVE)
) -> dict:
    """Per round (lists): the paired t-test over test questions of ``strategy`` against random
    (each the mean of its seeds per question, as the paper's Random is the mean of 4 runs) and
    the Bonferroni-adjusted p."""
    ours, theirs = (_mean_over_seeds(queries, task, s, key) for s in (strategy, "random"))
    tests = [_tested(a, b, n_comparisons) for a, b in zip(ours, theirs)]
    return {k: [t[k] for t in tests] for k in ("difference", "p", "p_adjusted", "significant")}


def _tested(ours, theirs, n_comparisons: int) -> dict:
    """The paired t-test of ``ours`` against ``theirs`` with its Bonferroni-adjusted p."""
    test = paired_test(ours, theirs)
    adjusted = float(bonferroni(test["p"], n_comparisons))
    return {
        **{k: test[k] for k in ("difference", "p")},
        "p_adjusted": adjusted,
        "significant": adjusted < ALPHA,
    }


def random_spread(frame: pd.DataFrame, queries: dict, task: str) -> list[dict]:
    """The paper's RQ1 per round: the best and the worst random subset (by mean test nDCG) and
    whether they differ (paired t-test over questions, no correction: one test per size)."""
    key = "ndcg"
    runs = frame[(frame["task"] == task) & (frame["strategy"] == "random")]
    out = []
    for round_, rows in runs.groupby("round"):
        best, worst = rows.loc[rows[key].idxmax()], rows.loc[rows[key].idxmin()]
        test = paired_test(
            queries[(task, "random", int(best["seed"]))][key][round_ - 1],
            queries[(task, "random", int(worst["seed"]))][key][round_ - 1],
        )
        out.append(
            {
                "round": int(round_),
                "questions": int(best["questions"]),
                "best_seed": int(best["seed"]),
                "worst_seed": int(worst["seed"]),
                "best": float(best[key]),
                "worst": float(worst[key]),
                "range": float(best[key] - worst[key]),
                "p": test["p"],
                "significant": bool(test["p"] < ALPHA),
            }
        )
    return out


def at_equal_cost(
    frame: pd.DataFrame,
    queries: dict,
    task: str,
    strategy: str,
    *,
    n_comparisons: int = len(ACTIVE),
) -> dict:
    """``strategy`` against random at the same total cost: the largest both reached (the smaller
    of their final mean costs), each one's per-question nDCG interpolated there between rounds,
    and the paired t-test with the Bonferroni-adjusted p."""
    costs = frame[frame["task"] == task].groupby(["strategy", "round"])["total_cost"].mean()
    mean_cost = {s: costs.loc[s].to_numpy() for s in (strategy, "random")}
    at = float(min(mean_cost[strategy][-1], mean_cost["random"][-1]))
    ours, theirs = (  # each question's value linearly between the rounds' mean costs
        [np.interp(at, mean_cost[s], v) for v in _mean_over_seeds(queries, task, s, "ndcg").T]
        for s in (strategy, "random")
    )
    mean = {"cost": at, "value": float(np.mean(ours)), "random": float(np.mean(theirs))}
    return {**mean, **_tested(ours, theirs, n_comparisons)}


def verdict(difference: float, significant: bool) -> str:
    """``better than random``, ``worse than random`` or ``not different from random``."""
    if not significant:
        return "not different from random"
    return "better than random" if difference > 0 else "worse than random"


def ranker_metrics(frame: pd.DataFrame, queries: dict, baseline: dict) -> dict:
    """Notebook 08's metrics file (its layout: :mod:`pairlab.metrics_files`), ``pretrained`` first."""
    out = {}
    for task, rows in frame.groupby("task", sort=False):
        entries = {"pretrained": _pretrained_entry(baseline[task])}
        n = max(rows["strategy"].nunique() - 1, 1)  # Bonferroni: each active one against random
        for strategy, own in rows.groupby("strategy", sort=False):
            entry = _entry(own)
            if strategy == "random":
                entry["spread"] = random_spread(frame, queries, task)
            else:
                tests = {
                    name: versus_random(queries, task, strategy, key=key, n_comparisons=n)
                    for name, key in METRICS.items()
                }
                entry["p_value_vs_random"] = tests["ndcg10"]["p"]
                entry["vs_random"] = tests
                cost = at_equal_cost(frame, queries, task, strategy, n_comparisons=n)
                cost["verdict"] = verdict(cost["difference"], cost["significant"])
                last = {k: v[-1] for k, v in tests["ndcg10"].items()}
                entry["verdict"] = {
                    "equal_questions": {
                        "questions": entry["sizes"][-1],
                        "difference": last["difference"],
                        "p_adjusted": last["p_adjusted"],
                        "verdict": verdict(last["difference"], last["significant"]),
                    },
                    "equal_cost": cost,
                }
            entries[strategy] = entry
        out[task] = entries
    return out


def _entry(rows: pd.DataFrame) -> dict:
    """One strategy's curves: means over seeds per size, and each seed's values."""
    seeds = sorted(int(s) for s in rows["seed"].unique())
    by_seed = {s: rows[rows["seed"] == s].sort_values("round") for s in seeds}
    mean = rows.groupby("round").mean(numeric_only=True)

    def spread(column):
        return {
            "mean": mean[column].tolist(),
            "per_seed": [by_seed[s][column].tolist() for s in seeds],
        }

    return {
        "seeds": seeds,
        "sizes": [int(q) for q in mean["questions"]],
        **{name: spread(key) for name, key in METRICS.items()},
        "ap": {
            **spread("ap"),
            "ci_per_seed": [by_seed[s][["ap_lo", "ap_hi"]].values.tolist() for s in seeds],
        },
        **{key: mean[key].tolist() for key in (*COSTS, "assessments", "pairs")},
        "assessments_per_seed": [by_seed[s]["assessments"].astype(int).tolist() for s in seeds],
        "compute_hours": {"gpu": mean["gpu_hours"].tolist(), "cpu": mean["cpu_hours"].tolist()},
    }


def _pretrained_entry(test: dict) -> dict:
    """The untrained encoder as a curve of one point at size 0 (no assessment, no cost)."""
    row = {
        **dict.fromkeys(("seed", "round", "questions"), 0),
        **{key: test[key] for key in ("ndcg", "mrr", "ap")},
        "ap_lo": test["ap_ci"][0],
        "ap_hi": test["ap_ci"][1],
        **dict.fromkeys([*COSTS, "assessments", "pairs", "gpu_hours", "cpu_hours"], 0.0),
    }
    return _entry(pd.DataFrame([row]))
