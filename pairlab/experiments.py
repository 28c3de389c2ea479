"""Sweeps of active-learning runs (tasks x strategies x seeds) and their summaries: the pieces
notebooks 03-05 call."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from . import budget as budget_views
from .active import STAGES, ActiveConfig, ActiveRun, run_folder, run_labels
from .data import Task
from .evaluation import EvalConfig, evaluate, pretrained_eval_set

__all__ = ["Variant", "prepare", "prepare_active", "loop_settings", "sweep", "summarise", "curves", "stage_times", "calibration",
           "scale", "sweep_groups", "group_rounds", "efficiency_summary", "efficiency_report",
           "seed_set_means", "ablation_metrics", "budget_metrics", "table3", "table4", "total_rounds", "stratified_variants", "table5",
           "seed_set_rounds", "transfer", "table6", "efficiency", "noise", "costs"]

MAIN_STRATEGIES = ("random", "static_retrieval", "adaptive_retrieval", "uncertainty")


def prepare(task: Task, eval_config: EvalConfig, *, model=None, max_seq_length: int = 128):
    """The pools (train, dev, test) and the dev and test evaluation strata of ``task``, drawn
    from pretrained embeddings (cached): the same strata for every run of the sweep."""
    pools = {split: task[split] for split in ("train", "dev", "test")}
    eval_sets = {split: pretrained_eval_set(pools[split], eval_config, model=model,
                                            max_seq_length=max_seq_length)[0]
                 for split in ("dev", "test")}
    return pools, eval_sets


def loop_settings(params: dict) -> dict:
    """The :class:`ActiveConfig` fields a sweep shares, from an active-learning notebook's
    parameters (``candidate_m``: the loop's candidate count m; ``n_boot``: its replicates)."""
    return dict(n1=params["n1"], rounds=params["rounds"], growth=params["growth"],
                candidate_m=params["candidate_m"], model=params["model"],
                epochs=params["cosine_epochs"], learning_rate=params["learning_rate"],
                batch_size=params["batch_size"], max_seq_length=params["max_seq_length"],
                n_boot=params["n_boot"], curve=params["curve"])


def prepare_active(params: dict, *, show: bool = True):
    """Everything notebooks 03-05 share before their sweeps, from their parameters: each task's
    pools and evaluation strata (:func:`prepare`) and the loop settings (:func:`loop_settings`).
    ``show`` displays this run's sizes beside the paper's (:func:`scale`).
    Returns ``(prepared, settings)``."""
    from . import data, paper

    tasks = data.load_tasks(params["dataset"], params["data_dir"], seed=params["seed"],
                            fractions=params["fractions"], max_items=params["max_items"])
    eval_config = EvalConfig(params["near_m"], params["n_random"], params["seed"])
    prepared = {name: prepare(task, eval_config, model=params["model"],
                              max_seq_length=params["max_seq_length"])
                for name, task in tasks.items()}
    settings = loop_settings(params)
    if show:
        from IPython.display import display

        display(scale(prepared, settings, paper.BUDGET))
    return prepared, settings


@dataclass(frozen=True)
class Variant:
    """A strategy run with other settings, under its own name in the results and tables:
    ``overrides`` are :class:`ActiveConfig` fields, or a callable ``(task, seed) -> fields``
    (e.g. stratified sampling matching each uncertainty run's counts)."""

    label: str
    strategy: str
    overrides: dict | Callable[[str, int], dict] = field(default_factory=dict)

    def fields(self, task: str, seed: int) -> dict:
        return dict(self.overrides(task, seed) if callable(self.overrides) else self.overrides)


def _variant(entry) -> Variant:
    return entry if isinstance(entry, Variant) else Variant(str(entry), str(entry))


def sweep(prepared: dict, strategies, seeds, settings: dict, root, *, callbacks=(),
          learner: Callable | None = None) -> dict:
    """Run every (task, strategy, seed); ``prepared`` maps task -> :func:`prepare`'s output and
    ``settings`` holds the other :class:`ActiveConfig` fields (a per-task dict is allowed for
    any of them, e.g. ``{"rounds": {"qqp": 5, "wikiqa": 4}}``). A strategy is a name or a
    :class:`Variant`. Finished runs are read back; ``learner(config)`` replaces CosineBERT (tests).
    Returns ``{(task, label, seed): result}``."""
    results = {}
    for task, (pools, eval_sets) in prepared.items():
        own = _for_task(settings, task)
        for entry in map(_variant, strategies):
            for seed in seeds:
                fields = {**own, **entry.fields(task, int(seed))}
                config = ActiveConfig(task=task, strategy=entry.strategy, seed=int(seed), **fields)
                folder = run_folder(root, config, pools, eval_sets)
                results[(task, entry.label, int(seed))] = ActiveRun(
                    config, pools, eval_sets, folder, callbacks=callbacks,
                    learner=learner(config) if learner else None).run()
    return results


def sweep_groups(prepared: dict, groups, settings: dict, root, *, callbacks=(),
                 learner: Callable | None = None) -> dict:
    """:func:`sweep` over ``groups`` of ``(strategy, seeds)``, each strategy with its own seeds,
    in the order given; returns the merged results."""
    results = {}
    for strategy, seeds in groups:
        results.update(sweep(prepared, [strategy], seeds, settings, root, callbacks=callbacks,
                             learner=learner))
    return results


def group_rounds(prepared: dict, groups, settings: dict) -> int:
    """Rounds :func:`sweep_groups` will run (for a progress bar)."""
    return sum(total_rounds(prepared, [strategy], seeds, settings) for strategy, seeds in groups)


def _for_task(settings: dict, task: str) -> dict:
    """``settings`` with any per-task dict (``{"qqp": 5, "wikiqa": 4}``) resolved for ``task``."""
    return {k: (v[task] if isinstance(v, dict) and task in v else v) for k, v in settings.items()}


def total_rounds(prepared: dict, strategies, seeds, settings: dict) -> int:
    """Rounds the sweep will run (for a progress bar)."""
    total = 0
    for task in prepared:
        own = _for_task(settings, task)
        for entry in map(_variant, strategies):
            for seed in seeds:
                fields = {**own, **entry.fields(task, int(seed))}
                total += len(ActiveConfig(task=task, strategy=entry.strategy, seed=int(seed),
                                          **fields).schedule())
    return total


def summarise(results: dict) -> dict:
    """The metrics file's ``{task: {strategy: {labels, positives_found, ap, p_at_r20, ...}}}``:
    test metrics as mean, std (over seeds, ddof 0: the paper's three runs) and per seed, the
    mean dev AP after each round, and the mean seconds per stage of a run."""
    grouped: dict = {}
    for (task, strategy, seed), result in results.items():  # the sweep's order
        grouped.setdefault(task, {}).setdefault(strategy, []).append((seed, result))
    return {task: {name: _summary(runs) for name, runs in strategies.items()}
            for task, strategies in grouped.items()}


def _summary(runs) -> dict:
    seeds = [seed for seed, _ in runs]
    results = [result for _, result in runs]
    dev = pd.DataFrame([{"labels": r["labels"], "ap": r["dev"]["ap"]}
                        for result in results for r in result["records"] if r.get("dev")])
    seconds = pd.DataFrame([{stage: sum(r["seconds"].get(stage, 0.0) for r in result["records"])
                             for stage in STAGES}
                            for result in results])
    return {"seeds": seeds, "labels": int(np.mean([r["labels"] for r in results])),
            "positives_found": _spread([r["positives_found"] for r in results]),
            "ap": _spread([r["test"]["ap"] for r in results]),
            "p_at_r20": _spread([r["test"]["p_at_r20"] for r in results]),
            "dev_ap_per_round": dev.groupby("labels")["ap"].mean().reset_index().to_dict("records"),
            "seconds_per_run": seconds.mean().round(1).to_dict(),
            "runs": [r["folder"] for r in results if "folder" in r]}


def _spread(values) -> dict:
    values = [float(v) for v in values]
    return {"mean": float(np.mean(values)), "std": float(np.std(values)), "per_seed": values}


def curves(results: dict) -> pd.DataFrame:
    """One row per evaluated round: task, strategy, seed, round, labels, positives found and
    dev AP / P@R20 with their intervals."""
    rows = []
    for (task, strategy, seed), result in results.items():
        for r in result["records"]:
            if r.get("dev") is None:
                continue
            dev = r["dev"]
            rows.append({"task": task, "strategy": strategy, "seed": seed, "round": r["round"],
                         "labels": r["labels"], "positives_found": r["positives_found"],
                         "ap": dev["ap"], "ap_lo": dev["ap_ci"][0], "ap_hi": dev["ap_ci"][1],
                         "p_at_r20": dev["p_at_r20"]})
    return pd.DataFrame(rows)


def stage_times(results: dict) -> pd.DataFrame:
    """Mean seconds per stage and round, by task and strategy."""
    rows = [{"task": task, "strategy": strategy, "seed": seed, "round": r["round"],
             "labels": r["labels"], **r["seconds"]}
            for (task, strategy, seed), result in results.items() for r in result["records"]]
    frame = pd.DataFrame(rows).fillna(0.0)
    stages = [s for s in STAGES if s in frame]
    return frame.groupby(["task", "strategy", "round"])[["labels", *stages]].mean().round(1)


def calibration(results: dict) -> pd.DataFrame:
    """Per round of each run whose batch was chosen by a trained model: the mean predicted p of
    the batch and the share of it that was positive (calibrated: the two agree)."""
    rows = [{"task": task, "strategy": strategy, "seed": seed, "round": r["round"],
             "batch": r["batch"], "mean p": r["calibration"]["mean_p"],
             "positive share": r["calibration"]["positive_share"]}
            for (task, strategy, seed), result in results.items() for r in result["records"]
            if r.get("calibration")]
    if not rows:
        return pd.DataFrame(columns=["task", "strategy", "round", "batch", "mean p", "positive share"])
    frame = pd.DataFrame(rows)
    return frame.groupby(["task", "strategy", "round"])[["batch", "mean p", "positive share"]].mean().round(3)


def scale(prepared: dict, settings: dict, budget: dict) -> pd.DataFrame:
    """This run's sizes beside the paper's: training items and pairs, positives, labels,
    rounds and neighbours per item."""
    rows = []
    for task, (pools, _) in prepared.items():
        own = _for_task(settings, task)
        config = ActiveConfig(task=task, strategy="random", **own)
        train = pools["train"]
        ref = budget.get(task, {})
        rows.append({"task": task, "train items": f"{len(train.left_texts):,} x {len(train.right_texts):,}",
                     "train pairs": f"{train.n_pairs:,}", "positives": f"{train.n_positives:,}",
                     "n1": config.schedule()[0], "rounds": len(config.schedule()),
                     "labels": f"{config.budget:,}", "paper labels": f"{ref.get('labels', 0):,}",
                     "neighbours m": config.candidate_m, "paper m": ref.get("neighbours"),
                     "max seq length": config.max_seq_length, "epochs": config.epochs})
    return pd.DataFrame(rows).set_index("task")


def table3(summary: dict, paper: dict) -> pd.DataFrame:
    """Test P@R20 and AP per strategy, mean +- std over seeds, beside the paper's Table 3."""
    rows = []
    for task, strategies in summary.items():
        for name, entry in strategies.items():
            ref = paper.get(task, {}).get(name, {})
            rows.append({"task": task, "strategy": name, "labels": entry["labels"],
                         "P@R20": _pm(entry["p_at_r20"]), "P@R20 (paper)": _pct(ref.get("p_at_r20")),
                         "AP": _pm(entry["ap"]), "AP (paper)": _pct(ref.get("ap"))})
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def table4(summary: dict, paper: dict, budget: dict) -> pd.DataFrame:
    """Positives found per strategy (mean over seeds) with the same budget, beside the paper's
    Table 4 (positives among its 232,100 QQP / 16,640 WikiQA labels)."""
    rows = []
    for task, strategies in summary.items():
        for name, entry in strategies.items():
            ref = paper.get(task, {}).get(name)
            rows.append({"task": task, "strategy": name, "labels": entry["labels"],
                         "positives found": f"{entry['positives_found']['mean']:,.1f}",
                         "share": f"{entry['positives_found']['mean'] / entry['labels']:.1%}",
                         "paper": "-" if ref is None else f"{ref:,}",
                         "paper share": "-" if ref is None else f"{ref / budget[task]['labels']:.1%}"})
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def _pm(spread: dict) -> str:
    return f"{100 * spread['mean']:.1f} ± {100 * spread['std']:.1f}"


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


# -- notebook 04: stratified sampling, seed sets, transfer to ConcatBERT ----------------------

def stratified_variants(results: dict, prepared: dict, settings: dict, *,
                        match: str = "uncertainty") -> list[Variant]:
    """The paper's two oracle baselines (section 5.4), as variants trained once on one batch:

    - ``stratified_match``: uniform positives and negatives in the counts the ``match`` run of
      the same task and seed collected (its positives; the rest of its budget negative);
    - ``stratified_all_positives``: every positive of the training pool plus uniform negatives,
      as many as the positives or up to the active-learning budget, whichever is larger (QQP:
      a slightly larger set than the budget; WikiQA: the budget).
    """
    def budget(task):
        return ActiveConfig(task=task, strategy="random", **_for_task(settings, task)).budget

    def matched(task, seed):
        key = (task, match, seed)
        if key not in results:
            raise KeyError(f"stratified_match needs the {match!r} run of {task} seed {seed}")
        found = int(results[key]["positives_found"])
        return {"strategy_params": {"n_positive": found, "n_negative": budget(task) - found},
                "batches": (budget(task),), "curve": False}

    def all_positives(task, seed):
        positives = prepared[task][0]["train"].n_positives
        return {"batches": (max(2 * positives, budget(task)),), "curve": False}

    return [Variant("stratified_match", "stratified_match", matched),
            Variant("stratified_all_positives", "stratified_all_positives", all_positives)]


def table5(summary: dict, paper: dict) -> pd.DataFrame:
    """Stratified sampling (with oracle access to the positives) against the active-learning
    strategies: labels, positives, test P@R20 and AP, mean +- std, beside the paper's Table 5."""
    rows = []
    for task, strategies in summary.items():
        for name in ("stratified_match", "stratified_all_positives", "adaptive_retrieval",
                     "uncertainty"):
            if name not in strategies:
                continue
            entry, ref = strategies[name], paper.get(task, {}).get(name, {})
            rows.append({"task": task, "strategy": name, "labels": entry["labels"],
                         "positives": f"{entry['positives_found']['mean']:,.0f}",
                         "P@R20": _pm(entry["p_at_r20"]), "P@R20 (paper)": _pct(ref.get("p_at_r20")),
                         "AP": _pm(entry["ap"]), "AP (paper)": _pct(ref.get("ap"))})
    return pd.DataFrame(rows).set_index(["task", "strategy"])


def seed_set_rounds(results: dict, labels: dict) -> pd.DataFrame:
    """Per round of each run: dev AP, and the queried batch's positive share beside the model's
    mean p for it (the calibration story of the paper's Figure 3b). ``labels`` maps a results
    label (e.g. ``"uncertainty"``) to the seed set's name shown."""
    rows = []
    for (task, label, seed), result in results.items():
        if label not in labels:
            continue
        for r in result["records"]:
            calibration = r.get("calibration") or {}
            rows.append({"task": task, "seed set": labels[label], "seed": seed, "round": r["round"],
                         "labels": r["labels"], "dev AP": (r.get("dev") or {}).get("ap"),
                         "batch positive share": r["positives_in_batch"] / r["batch"],
                         "mean p": calibration.get("mean_p"),
                         "positives found": r["positives_found"]})
    return pd.DataFrame(rows)


def seed_set_means(seed_rounds: pd.DataFrame) -> pd.DataFrame:
    """:func:`seed_set_rounds` averaged over seeds: one row per task, seed set and round."""
    return seed_rounds.groupby(["task", "seed set", "round"])[
        ["labels", "dev AP", "batch positive share", "mean p", "positives found"]].mean()


COLLAPSED_SPREAD = 0.05  # logit std over the scored pairs below which a model ranks nothing


def transfer(prepared: dict, results: dict, sources, seeds, root, *, kind: str = "concatbert",
             eval_config: EvalConfig, train_config: Callable, folder, model=None,
             max_seq_length: int = 128, n_boot: int = 1000, log=print) -> dict:
    """Train another model (ConcatBERT) on the labels each source run collected and measure it on
    all test pairs (the paper's Table 6). ``train_config(task, seed)`` gives its
    :class:`TrainConfig`; the test strata are drawn once per task with ``eval_config`` (a
    cross-encoder scores every pair, so they are smaller than CosineBERT's). Trained models are
    cached under ``folder``. Returns ``{(task, source, seed): metrics}``."""
    from .baselines import train_or_load

    out = {}
    for task, (pools, _) in prepared.items():
        test = pools["test"]
        eval_set = pretrained_eval_set(test, eval_config, model=model, max_seq_length=max_seq_length)[0]
        for source in sources:
            for seed in seeds:
                key = (task, source, int(seed))
                if key not in results:
                    raise KeyError(f"no {source!r} run of {task} seed {seed} to transfer from")
                ids, labels = run_labels(Path(root) / task / results[key]["folder"])
                start = time.perf_counter()
                trained, name = train_or_load(kind, pools["train"], ids, train_config(task, int(seed)),
                                              folder=folder, model=model)
                scored = evaluate(eval_set, trained.scorer(test), n_boot=n_boot, seed=int(seed))
                seconds = time.perf_counter() - start
                spread = float(np.std(np.concatenate(list(scored["scores"].values()))))
                out[key] = {"labels": int(len(ids)), "positives": int(labels.sum()), "model_id": name,
                            "seconds": round(seconds, 1), "n_scored": int(sum(len(v) for v in eval_set.strata().values())),
                            "score_std": spread, "collapsed": spread < COLLAPSED_SPREAD,
                            **{k: scored[k] for k in ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")}}
                log(f"{task}/{kind} on {source} data, seed {seed}: AP {scored['ap']:.3f} "
                    f"[{scored['ap_ci'][0]:.3f}, {scored['ap_ci'][1]:.3f}], score std {spread:.3f} "
                    f"({seconds:.0f} s)" + ("; COLLAPSED: it gives every pair about the same "
                                            "score, so its AP is the base rate" if out[key]["collapsed"] else ""))
    return out


def table6(summary: dict, transferred: dict, paper: dict) -> pd.DataFrame:
    """CosineBERT (the run's own model) beside ConcatBERT trained on the same collected labels:
    test P@R20 and AP, mean +- std over seeds, with the paper's Table 6 (QQP only)."""
    grouped: dict = {}
    for (task, source, _), m in transferred.items():
        grouped.setdefault((task, source), []).append(m)
    rows = []
    for (task, source), runs in grouped.items():
        cosine, ref = summary[task][source], paper.get(task, {}).get(source, {})
        rows.append({"task": task, "data": source, "labels": runs[0]["labels"],
                     "CosineBERT P@R20": _pm(cosine["p_at_r20"]), "CosineBERT AP": _pm(cosine["ap"]),
                     "ConcatBERT P@R20": _pm(_spread([m["p_at_r20"] for m in runs])),
                     "ConcatBERT AP": _pm(_spread([m["ap"] for m in runs])),
                     "ConcatBERT collapsed": f"{sum(m['collapsed'] for m in runs)} of {len(runs)}",
                     "paper CosineBERT AP": _pct(ref.get("cosine_ap")),
                     "paper ConcatBERT AP": _pct(ref.get("concat_ap"))})
    return pd.DataFrame(rows).set_index(["task", "data"])


# -- notebook 05: budget curves, data efficiency, noise and cost ------------------------------

def efficiency(curves: pd.DataFrame, *, strategy: str = "uncertainty",
               reference: str = "static_retrieval") -> pd.DataFrame:
    """Per task and seed: the labels ``strategy`` needs to reach ``reference``'s full-budget dev
    AP (same seed), the labels ``reference`` itself needed to first reach it (its full budget
    when its curve rises, as in the paper; fewer when it peaked earlier), and the
    data-efficiency factor, their ratio (the paper's 14x on QQP). ``bound`` says whether the
    factor is exact, a lower bound (``strategy``'s first point already passed the target), not
    measurable (both passed it at their first point) or undefined (never passed it)."""
    rows = []
    for (task, seed), frame in curves.groupby(["task", "seed"], sort=False):
        mine = frame[frame["strategy"] == strategy].sort_values("labels")
        ref = frame[frame["strategy"] == reference].sort_values("labels")
        if mine.empty or ref.empty:
            continue
        target = float(ref["ap"].iloc[-1])
        ref_needed = budget_views.labels_to_reach(ref["labels"], ref["ap"], target)
        needed = budget_views.labels_to_reach(mine["labels"], mine["ap"], target)
        factor = budget_views.efficiency_factor(mine["labels"], mine["ap"], ref_needed, target)
        first = needed <= mine["labels"].iloc[0]
        bound = ("not reached" if np.isnan(needed) else
                 "both at the first point" if first and ref_needed <= ref["labels"].iloc[0] else
                 "lower bound" if first else "exact")
        rows.append({"task": task, "seed": seed, f"{reference} labels": int(ref["labels"].iloc[-1]),
                     f"{reference} dev AP": target, f"{reference} labels needed": ref_needed,
                     f"{strategy} final dev AP": float(mine["ap"].iloc[-1]),
                     "labels needed": needed, "factor": factor, "bound": bound})
    return pd.DataFrame(rows)


def efficiency_summary(efficiency_frame: pd.DataFrame) -> pd.DataFrame:
    """Per task: the factor's mean and std (ddof 0) over the seeds where it is defined, how many
    seeds those are and how many there were (:func:`efficiency`'s rows)."""
    rows = []
    for task, eff in efficiency_frame.groupby("task") if len(efficiency_frame) else ():
        finite = eff["factor"][np.isfinite(eff["factor"])]
        rows.append({"task": task, "factor_mean": _num(finite.mean()) if len(finite) else None,
                     "factor_std": _num(finite.std(ddof=0)) if len(finite) else None,
                     "seeds_defined": int(len(finite)), "seeds": int(len(eff))})
    columns = ["task", "factor_mean", "factor_std", "seeds_defined", "seeds"]
    return pd.DataFrame(rows, columns=columns).set_index("task")


def efficiency_report(efficiency_frame: pd.DataFrame, paper_factors: dict) -> str:
    """One line per task: the factor's mean ± std over the seeds where it is defined, beside the
    paper's (``paper.DATA_EFFICIENCY``)."""
    lines = []
    for task, row in efficiency_summary(efficiency_frame).to_dict("index").items():
        ref = paper_factors.get(task)
        mean, std = (float("nan") if v is None else v for v in (row["factor_mean"], row["factor_std"]))
        lines.append(f"{task}: factor {mean:.2f} ± {std:.2f} over {row['seeds_defined']} of "
                     f"{row['seeds']} seeds" + (
                         f"; paper {ref['factor']}x ({ref['static_labels']:,} static labels vs "
                         f"{ref['uncertainty_labels']:,})" if ref else "; the paper has no WikiQA factor"))
    return "\n".join(lines)


def noise(summary: dict, groups, *, gap=("uncertainty", "static_retrieval")) -> pd.DataFrame:
    """How far test AP moves between runs that should be equally good (random label sets of the
    same size, training seeds), beside the gap between the two strategies of ``gap``: one row
    per task and group with the runs' mean, std, min, max and range of test AP."""
    rows = []
    for task, strategies in summary.items():
        for name in groups:
            if name not in strategies:
                continue
            values = np.asarray(strategies[name]["ap"]["per_seed"])
            rows.append({"task": task, "runs of": name, "n": len(values), "mean AP": values.mean(),
                         "std": values.std(), "min": values.min(), "max": values.max(),
                         "range": values.max() - values.min()})
        if all(g in strategies for g in gap):
            diff = strategies[gap[0]]["ap"]["mean"] - strategies[gap[1]]["ap"]["mean"]
            rows.append({"task": task, "runs of": f"gap: {gap[0]} - {gap[1]} (means)", "n": None,
                         "mean AP": diff, "std": None, "min": None, "max": None, "range": None})
    frame = pd.DataFrame(rows)
    frame["n"] = frame["n"].astype("Int64")
    return frame.set_index(["task", "runs of"])


def costs(summary: dict, efficiency_frame: pd.DataFrame | None = None, *, per_hour: float = 75.0,
          dollars_per_hour: float = 50.0) -> pd.DataFrame:
    """What each strategy's labels cost to annotate (``per_hour`` judgements at
    ``dollars_per_hour``) beside the compute one run took (measured); with ``efficiency_frame``
    also what reaching the reference's full-budget dev AP costs."""
    rows = []
    for task, strategies in summary.items():
        for name, entry in strategies.items():
            compute = sum(entry["seconds_per_run"].values())
            cost = budget_views.annotation_cost([entry["labels"]], per_hour=per_hour,
                                                dollars_per_hour=dollars_per_hour,
                                                compute_seconds=compute)
            rows.append({"task": task, "strategy": name, "labels": entry["labels"],
                         "annotator hours": float(cost["annotator_hours"][0]),
                         "annotation $": float(cost["dollars"][0]),
                         "compute hours (measured)": cost["compute_hours"],
                         "test AP": entry["ap"]["mean"]})
    frame = pd.DataFrame(rows).set_index(["task", "strategy"])
    if efficiency_frame is not None and not efficiency_frame.empty:
        needed = efficiency_frame.groupby("task")["labels needed"].mean()
        for task, labels in needed.items():
            if np.isfinite(labels):
                cost = budget_views.annotation_cost([labels], per_hour=per_hour,
                                                    dollars_per_hour=dollars_per_hour)
                frame.loc[(task, "uncertainty to static's AP"), ["labels", "annotator hours", "annotation $"]] = (
                    round(labels), float(cost["annotator_hours"][0]), float(cost["dollars"][0]))
    return frame.round(3)


def ablation_metrics(summary: dict, seed_rounds: pd.DataFrame, transferred: dict) -> dict:
    """Notebook 04's metrics file: ``{task: {"strategies": summary, "seed_set": {name: per-round
    means}, "transfer": {source: {"labels", "ap", "p_at_r20", ...}}}}``."""
    out = {task: {"strategies": strategies, "seed_set": {}, "transfer": {}}
           for task, strategies in summary.items()}
    means = seed_set_means(seed_rounds)
    for (task, seed_set), rows in seed_rounds.groupby(["task", "seed set"], sort=False):
        mean = means.loc[(task, seed_set)]
        out[task]["seed_set"][seed_set] = {
            "seeds": sorted(set(int(s) for s in rows["seed"])),
            "rounds": [{"round": int(r), "labels": int(m["labels"]), "dev_ap": _num(m["dev AP"]),
                        "batch_positive_share": _num(m["batch positive share"]),
                        "mean_p": _num(m["mean p"])} for r, m in mean.iterrows()]}
    grouped: dict = {}
    for (task, source, seed), m in transferred.items():
        grouped.setdefault((task, source), []).append((seed, m))
    for (task, source), runs in grouped.items():
        out[task]["transfer"][source] = {
            "seeds": [s for s, _ in runs], "labels": runs[0][1]["labels"],
            "positives": _spread([m["positives"] for _, m in runs]),
            "ap": _spread([m["ap"] for _, m in runs]), "p_at_r20": _spread([m["p_at_r20"] for _, m in runs]),
            "ap_ci_per_seed": [m["ap_ci"] for _, m in runs], "n_scored": runs[0][1]["n_scored"],
            "score_std_per_seed": [m["score_std"] for _, m in runs],
            "collapsed_per_seed": [m["collapsed"] for _, m in runs],
            "seconds_per_model": float(np.mean([m["seconds"] for _, m in runs])),
            "model_ids": [m["model_id"] for _, m in runs]}
    return out


def budget_metrics(curves_frame: pd.DataFrame, efficiency_frame: pd.DataFrame, summary: dict,
                   noise_frame: pd.DataFrame, cost_frame: pd.DataFrame) -> dict:
    """Notebook 05's metrics file: per task the mean curve of each strategy (labels, dev AP and
    interval, share of collected pairs positive), the efficiency factor per seed with its mean
    and std over the seeds where it is defined, the test AP spreads and the cost table."""
    out: dict = {}
    for task in summary:
        frame = curves_frame[curves_frame["task"] == task]
        curves_out = {}
        for strategy, rows in frame.groupby("strategy", sort=False):
            mean = rows.groupby("labels")[["ap", "ap_lo", "ap_hi", "positives_found"]].mean()
            curves_out[strategy] = [{"labels": int(n), "dev_ap": float(m["ap"]),
                                     "dev_ap_ci": [float(m["ap_lo"]), float(m["ap_hi"])],
                                     "positive_share": float(m["positives_found"] / n)}
                                    for n, m in mean.iterrows()]
        eff = efficiency_frame[efficiency_frame["task"] == task] if not efficiency_frame.empty else efficiency_frame
        factor = (efficiency_summary(eff).to_dict("index")[task] if len(eff) else
                  {"factor_mean": None, "factor_std": None, "seeds_defined": 0, "seeds": 0})
        out[task] = {
            "curves": curves_out,
            "efficiency": {"per_seed": eff.replace({np.nan: None}).to_dict("records"),
                           **{k: _plain(v) for k, v in factor.items()}},
            "strategies": summary[task],
            "noise": _records(noise_frame, task), "costs": _records(cost_frame, task)}
    return out


def _records(frame: pd.DataFrame, task: str) -> list[dict]:
    if task not in frame.index.get_level_values(0):
        return []
    part = frame.loc[task].reset_index()
    return [{k: _plain(v) for k, v in row.items()} for row in part.to_dict("records")]


def _plain(value):
    """A JSON value for a table cell: NaN and pandas' NA become None, numpy scalars Python's."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, (float, np.floating)):
        return _num(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _num(value):
    value = float(value)
    return None if np.isnan(value) else value
