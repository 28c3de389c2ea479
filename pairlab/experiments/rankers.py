"""Notebook 08 (Althammer et al. 2023, *current active learning strategies are not better than
random selection* for rankers): the query-level runs on both tasks, their curves and per-query
test values, the budget of each run, the paired tests against random, and the metrics file.

Every function takes what the one before returned: :func:`prepare_rankers` (pools and strata)
-> :func:`query_sweep` (run results) -> :func:`curves` and :func:`per_query` -> :func:`ranker_metrics`
(the metrics file, which :mod:`.ranker_tables` turns into tables for the notebook and RESULTS.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..active.queries import COST_STAGES, QueryRun, QuerySettings, ranking_record
from ..active.store import run_folder
from ..annotators.scan import scan_to_first_relevant
from ..evaluation.ranking import answerable
from ..evaluation.significance import ALPHA, bonferroni, paired_test
from ..evaluation.strata import EvalConfig, pretrained_eval_set
from ..models.embed import embed_pool
from .budget import Budget, round_hours

__all__ = [
    "ACTIVE",
    "METRICS",
    "RankerSettings",
    "prepare_rankers",
    "scale",
    "protocol_example",
    "RoundBar",
    "query_sweep",
    "total_query_rounds",
    "pretrained_baseline",
    "curves",
    "with_costs",
    "per_query",
    "versus_random",
    "random_spread",
    "at_equal_cost",
    "verdict",
    "ranker_metrics",
]

ACTIVE = ("uncertainty", "qbc", "diversity")  # the paper's three strategies, compared with random
METRICS = {"ndcg10": "ndcg", "mrr10": "mrr"}  # metrics-file name -> the run records' key


@dataclass(frozen=True)
class RankerSettings:
    """Notebook 08's settings, built once from its parameters (:meth:`from_params`): the test
    strata (``near_m``, ``n_random``, ``seed``), the encoder, the bootstrap replicates, the
    query-level runs' shared config fields (:class:`QuerySettings`: ``questions_per_round`` x
    ``query_rounds``, ``top_k``, the committee's ``committee_members`` and
    ``committee_share``, the training) and the sweep's groups ``[(strategy, seeds), ...]``:
    random with ``random_seeds``, each of ``active_strategies`` with ``active_seeds``."""

    strata: EvalConfig
    model: str | None
    max_seq_length: int
    n_boot: int
    query: QuerySettings
    groups: tuple

    @property
    def seed(self) -> int:
        return self.strata.seed

    @classmethod
    def from_params(cls, params: dict) -> RankerSettings:
        per_round, rounds = params["questions_per_round"], params["query_rounds"]
        if isinstance(per_round, dict):
            batches = {task: (int(n),) * int(rounds) for task, n in per_round.items()}
        else:
            batches = (int(per_round),) * int(rounds)
        query = QuerySettings.from_params(
            params,
            batches=batches,
            top_k=params["top_k"],
            members=params["committee_members"],
            share=params["committee_share"],
        )
        groups = _groups(
            params["active_strategies"], params["random_seeds"], params["active_seeds"]
        )
        return cls(
            EvalConfig.from_params(params),
            params["model"],
            params["max_seq_length"],
            params["n_boot"],
            query,
            groups,
        )


def _groups(active_strategies, random_seeds, active_seeds) -> tuple:
    from ..active.queries import QUERY_STRATEGIES

    active = list(active_strategies)
    unknown = [s for s in active if s not in QUERY_STRATEGIES or s == "random"]
    if unknown or len(set(active)) != len(active):
        raise ValueError(
            f"active_strategies must name distinct strategies other than random, of "
            f"{sorted(set(QUERY_STRATEGIES) - {'random'})}; got {active!r}"
        )
    if not random_seeds or not active_seeds:
        raise ValueError("random_seeds and active_seeds each need at least one seed")
    return (("random", [int(s) for s in random_seeds]),) + tuple(
        (s, [int(k) for k in active_seeds]) for s in active
    )


def prepare_rankers(tasks: dict, settings: RankerSettings) -> dict:
    """Each task's ``train`` and ``test`` pools and the test split's all-pairs strata, drawn
    from pretrained embeddings: ``{task: (pools, eval_set)}``. ``tasks`` are what the notebook's
    ``dataset`` names (:func:`pairlab.data.tasks_for`, which gives a pair file's task the
    per-task settings of its kind)."""
    out = {}
    for name, task in tasks.items():
        pools = {"train": task["train"], "test": task["test"]}
        eval_set = pretrained_eval_set(
            pools["test"],
            settings.strata,
            model=settings.model,
            max_seq_length=settings.max_seq_length,
        )[0]
        out[name] = (pools, eval_set)
    return out


def scale(prepared: dict, settings: QuerySettings) -> pd.DataFrame:
    """Per task: the questions that can be annotated, the right-hand side each one ranks, the
    test questions measured and the questions annotated per round."""
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


def protocol_example(
    prepared: dict, task: str, settings: RankerSettings, *, n: int = 3
) -> pd.DataFrame:
    """The annotation protocol on ``n`` random training questions of ``task`` under the
    pretrained ranker: what each one cost (the rank of its first relevant item) and what the
    annotator read at the top and at the first relevant item."""
    train = prepared[task][0]["train"]
    left, right = embed_pool(
        train, settings.model, max_seq_length=settings.max_seq_length, show_progress=False
    )
    questions = np.sort(
        np.random.default_rng(settings.seed).choice(answerable(train), n, replace=False)
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


class RoundBar:
    """A tqdm progress bar over the rounds of a sweep (finished runs read back count at once)."""

    def __init__(self, total: int, desc: str = "rounds"):
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc=desc)

    def __call__(self, event: str, **p) -> None:
        if event == "round_finished":
            self.bar.update(1)
        elif event == "run_reused":
            self.bar.update(len(p["result"]["records"]))
        elif event == "run_started" and p["resumed"]:
            self.bar.update(p["resumed"])


def query_sweep(
    prepared: dict,
    groups,
    settings: QuerySettings,
    root,
    *,
    callbacks=(),
    learner: Callable | None = None,
) -> dict:
    """Run every (task, strategy, seed) of ``groups`` (``[(strategy, seeds), ...]``); finished
    runs are read back. Returns ``{(task, strategy, seed): result}``."""
    results = {}
    for task, (pools, eval_set) in prepared.items():
        for strategy, seeds in groups:
            for seed in seeds:
                config = settings.config(task, strategy, seed)
                folder = run_folder(root, config, pools, {"test": eval_set})
                results[(task, strategy, int(seed))] = QueryRun(
                    config,
                    pools,
                    eval_set,
                    folder,
                    callbacks=callbacks,
                    learner=learner(config) if learner else None,
                ).run()
    return results


def total_query_rounds(prepared: dict, groups, settings: QuerySettings) -> int:
    """Rounds :func:`query_sweep` will run (for a progress bar)."""
    return sum(
        len(settings.config(task, "random").schedule()) * len(seeds)
        for task in prepared
        for _, seeds in groups
    )


def pretrained_baseline(
    prepared: dict, settings: RankerSettings, *, embed: Callable | None = None
) -> dict:
    """The untrained encoder on each task's test split (training size 0): ``{task: {"ndcg",
    "mrr", "ap", "ap_ci", "per_query"}}``, shaped like a run record's ``test``. ``embed(pool)
    -> (left, right)`` replaces the pretrained encoder (tests)."""
    embed = embed or (
        lambda pool: embed_pool(
            pool, settings.model, show_progress=False, max_seq_length=settings.max_seq_length
        )
    )
    return {
        task: ranking_record(
            pools["test"],
            eval_set,
            *embed(pools["test"]),
            k=10,
            n_boot=settings.n_boot,
            seed=settings.seed,
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
            assessments, gpu, cpu = (
                assessments + sum(r["assessments"]),
                gpu + hours[0],
                cpu + hours[1],
            )
            test = r["test"]
            rows.append(
                {
                    "task": task,
                    "strategy": strategy,
                    "seed": seed,
                    "round": r["round"],
                    "questions": r["n_questions"],
                    "assessments": assessments,
                    "pairs": r["labels"],
                    "ndcg": test["ndcg"],
                    "mrr": test["mrr"],
                    "ap": test["ap"],
                    "ap_lo": test["ap_ci"][0],
                    "ap_hi": test["ap_ci"][1],
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
    every run's per-question test values after each round. The questions are the test split's
    questions with a relevant item, the same for every run of a task (checked)."""
    out, questions = {}, {}
    for (task, strategy, seed), result in results.items():
        records = [r["test"]["per_query"] for r in result["records"]]
        asked = np.asarray(records[0]["questions"], dtype=np.int64)
        if task in questions and not np.array_equal(questions[task], asked):
            raise ValueError(
                f"the {task} runs measured different test questions: they are not paired"
            )
        questions[task] = asked
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
    """Per round: the paired t-test over test questions of ``strategy`` (its seeds' mean per
    question) against random (the mean of the random seeds per question, as the paper's Random
    is the mean of 4 runs), with the Bonferroni-adjusted p. Lists, one entry per round."""
    ours, theirs = (_mean_over_seeds(queries, task, s, key) for s in (strategy, "random"))
    tests = [paired_test(a, b) for a, b in zip(ours, theirs)]
    p = [t["p"] for t in tests]
    adjusted = bonferroni(np.array(p), n_comparisons).tolist()
    return {
        "difference": [t["difference"] for t in tests],
        "p": p,
        "p_adjusted": adjusted,
        "significant": [bool(a < ALPHA) for a in adjusted],
    }


def random_spread(
    frame: pd.DataFrame, queries: dict, task: str, *, key: str = "ndcg"
) -> list[dict]:
    """The paper's RQ1 per round: the best and the worst random subset (by mean test value) and
    whether they differ (paired t-test over questions, no correction: one test per size)."""
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


def _interpolate(x: np.ndarray, values: np.ndarray, at: float) -> np.ndarray:
    """Each column of ``values`` (rounds, n_q) linearly interpolated at ``x = at`` (``x`` the
    rounds' increasing costs; clamped to the first or last round outside them)."""
    if len(x) == 1:
        return values[0]
    k = int(np.clip(np.searchsorted(x, at), 1, len(x) - 1))
    span = x[k] - x[k - 1]
    w = float(np.clip((at - x[k - 1]) / span, 0.0, 1.0)) if span > 0 else 1.0
    return values[k - 1] * (1 - w) + values[k] * w


def at_equal_cost(
    frame: pd.DataFrame,
    queries: dict,
    task: str,
    strategy: str,
    *,
    key: str = "ndcg",
    cost: str = "total_cost",
    n_comparisons: int = len(ACTIVE),
) -> dict:
    """``strategy`` against random at the same spend: the largest ``cost`` both reached (the
    smaller of their final mean costs), each one's per-question values interpolated there
    between rounds, and the paired t-test with the Bonferroni-adjusted p."""
    mean_cost = {
        s: frame[(frame["task"] == task) & (frame["strategy"] == s)]
        .groupby("round")[cost]
        .mean()
        .to_numpy()
        for s in (strategy, "random")
    }
    at = float(min(mean_cost[strategy][-1], mean_cost["random"][-1]))
    ours, theirs = (
        _interpolate(mean_cost[s], _mean_over_seeds(queries, task, s, key), at)
        for s in (strategy, "random")
    )
    test = paired_test(ours, theirs)
    adjusted = bonferroni(test["p"], n_comparisons)
    return {
        "cost": at,
        "value": float(ours.mean()),
        "random": float(theirs.mean()),
        "difference": test["difference"],
        "p": test["p"],
        "p_adjusted": float(adjusted),
        "significant": bool(adjusted < ALPHA),
    }


def verdict(difference: float, significant: bool) -> str:
    """``better than random``, ``worse than random`` or ``not different from random``."""
    if not significant:
        return "not different from random"
    return "better than random" if difference > 0 else "worse than random"


def ranker_metrics(frame: pd.DataFrame, queries: dict, baseline: dict, budget: Budget) -> dict:
    """The metrics file: ``{task: {strategy: {sizes, ndcg10: {mean, per_seed}, mrr10: ...,
    ap: ..., assessments, annotation_cost, compute_cost, p_value_vs_random, ...}}}`` with
    ``pretrained`` (training size 0) beside the strategies; random also holds the spread of its
    subsets and every active strategy its tests and verdicts against random."""
    out = {}
    for task, rows in frame.groupby("task", sort=False):
        entries = {"pretrained": _pretrained_entry(baseline[task])}
        n = max(
            rows["strategy"].nunique() - 1, 1
        )  # Bonferroni: each active strategy against random
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
                last = tests["ndcg10"]
                entry["verdict"] = {
                    "equal_questions": {
                        "questions": entry["sizes"][-1],
                        "difference": last["difference"][-1],
                        "p_adjusted": last["p_adjusted"][-1],
                        "verdict": verdict(last["difference"][-1], last["significant"][-1]),
                    },
                    "equal_cost": {
                        **cost,
                        "verdict": verdict(cost["difference"], cost["significant"]),
                    },
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
        "ndcg10": spread("ndcg"),
        "mrr10": spread("mrr"),
        "ap": {
            **spread("ap"),
            "ci_per_seed": [by_seed[s][["ap_lo", "ap_hi"]].values.tolist() for s in seeds],
        },
        "assessments": mean["assessments"].tolist(),
        "assessments_per_seed": [by_seed[s]["assessments"].astype(int).tolist() for s in seeds],
        "pairs": mean["pairs"].tolist(),
        "annotation_cost": mean["annotation_cost"].tolist(),
        "compute_cost": mean["compute_cost"].tolist(),
        "total_cost": mean["total_cost"].tolist(),
        "compute_hours": {"gpu": mean["gpu_hours"].tolist(), "cpu": mean["cpu_hours"].tolist()},
    }


def _pretrained_entry(test: dict) -> dict:
    """The untrained encoder as a curve of one point at size 0 (no assessment, no cost)."""

    def one(value):
        return {"mean": [value], "per_seed": [[value]]}

    return {
        "seeds": [0],
        "sizes": [0],
        "ndcg10": one(test["ndcg"]),
        "mrr10": one(test["mrr"]),
        "ap": {**one(test["ap"]), "ci_per_seed": [[test["ap_ci"]]]},
        "assessments": [0.0],
        "assessments_per_seed": [[0]],
        "pairs": [0.0],
        "annotation_cost": [0.0],
        "compute_cost": [0.0],
        "total_cost": [0.0],
        "compute_hours": {"gpu": [0.0], "cpu": [0.0]},
    }
