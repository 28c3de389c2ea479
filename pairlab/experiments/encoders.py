"""Notebook 09's second experiment: does adaptivity pay more from a weaker starting encoder?
One model cut to fewer layers gives encoders of graded strength; the gap between uncertainty
sampling and static retrieval from each is read against its zero-shot AP."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..active.config import LoopSettings
from ..data.paper import A, B
from ..evaluation.candidates import neighbour_pairs
from ..evaluation.strata import evaluate
from ..models.embed import embed_pool, load_encoder, resolve_model
from ..models.scoring import CosineScorer
from ..models.truncate import transformer_layers, truncated_model
from .summaries import judge
from .sweeps import Variant

__all__ = [
    "GAP",
    "encoder_layers",
    "zero_shot",
    "encoder_variants",
    "by_depth",
    "encoder_runs",
    "encoder_table",
    "gap_trend",
]

GAP = (A, B)  # the gap is the first's test AP minus the second's


def encoder_layers(model, layers) -> dict[int, int | None]:
    """``{depth: encoder_layers setting}`` for the depths asked of ``model``: ``None`` for its
    own depth (the whole model, whose runs are notebook 03's), the depth otherwise."""
    depth = len(transformer_layers(load_encoder(model, device="cpu")))
    out = {}
    for n in layers:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= depth:
            raise ValueError(
                f"encoder_layers holds {n!r}, but {resolve_model(model)} has {depth} "
                f"transformer layers: give depths from 0 to {depth}"
            )
        out[int(n)] = None if n == depth else int(n)
    return out


def zero_shot(
    prepared: dict, layers: dict, settings: LoopSettings, *, rounds: int, seed: int = 0
) -> pd.DataFrame:
    """Each encoder before training, a row per depth: its test AP (95% interval) and the positive
    share of the pairs a static-retrieval run of ``rounds`` rounds would label with it."""
    from tqdm.auto import tqdm

    if len(prepared) != 1:
        raise ValueError(f"the encoder experiment runs on one task, got {sorted(prepared)}")
    ((task, (pools, eval_sets)),) = prepared.items()
    own = settings.for_task(task)
    budget = settings.config(task, "static_retrieval", rounds=rounds).budget
    train, test = pools["train"], pools["test"]
    embed = dict(max_seq_length=own["max_seq_length"], show_progress=False)
    rows = []
    for n, setting in tqdm(layers.items(), desc=f"{task}: zero-shot encoders"):
        model = truncated_model(own["model"], setting)
        ids, cosine = neighbour_pairs(
            train.space, *embed_pool(train, model, **embed), m=own["candidate_m"]
        )
        top = ids[np.lexsort((ids, -cosine.astype(np.float64)))[:budget]]
        scorer = CosineScorer(test.space, *embed_pool(test, model, **embed))
        scored = evaluate(eval_sets["test"], scorer, n_boot=own["n_boot"], seed=seed)
        (low, high), precision = scored["ap_ci"], float(train.labels(top).mean())
        row = {"layers": n, "zero-shot AP": scored["ap"], "AP lo": low, "AP hi": high}
        rows.append({**row, "static precision": precision, "static labels": int(len(top))})
    return pd.DataFrame(rows).set_index("layers")


def encoder_variants(layers: dict, rounds, strategies) -> list[Variant]:
    """One variant per depth, round count and strategy, labelled ``"strategy|depth|rounds"``, to
    :func:`~.sweeps.sweep` on the one task of the encoder experiment."""
    return [
        Variant(f"{s}|{n}|{r}", s, {"encoder_layers": setting, "rounds": int(r)})
        for n, setting in layers.items()
        for r in rounds
        for s in strategies
    ]


def by_depth(results: dict) -> dict:
    """A sweep of :func:`encoder_variants` as ``{(depth, labels, strategy, seed): result}``."""
    out = {}
    for (_, label, seed), result in results.items():
        strategy, n, _ = label.split("|")
        out[(int(n), int(result["labels"]), strategy, seed)] = result
    return out


def encoder_runs(results: dict) -> dict:
    """:func:`by_depth`'s results as a sweep's ``{(task, "strategy, n layers", seed):
    result}``, the largest budget of each (its first rounds are the smaller budget's)."""
    return {
        (result["config"]["task"], f"{strategy}, {n} layers", seed): result
        for (n, _, strategy, seed), result in sorted(results.items(), key=lambda kv: kv[0][1])
    }


def encoder_table(results: dict, zero: pd.DataFrame) -> pd.DataFrame:
    """One row per depth and budget: the zero-shot AP and static precision, each strategy's test
    AP over the seeds both ran (mean, mean 95% interval, per seed) and the gap between them (mean,
    std with ddof 0, per seed, and whether the intervals tell it from noise: ``judged``)."""
    a, b = GAP
    rows = []
    for n, labels in sorted({k[:2] for k in results}, key=lambda k: (-k[0], k[1])):
        runs = {s: {k[3]: r for k, r in results.items() if k[:3] == (n, labels, s)} for s in GAP}
        seeds = sorted(set(runs[a]) & set(runs[b]))
        if not seeds:
            continue
        row = {"layers": n, "labels": labels, **zero.loc[n, ["zero-shot AP", "static precision"]]}
        record = {}  # each strategy as :func:`.summaries.compare` reads it
        for s in GAP:
            values = [float(runs[s][seed]["test"]["ap"]) for seed in seeds]
            ci = np.mean([runs[s][seed]["test"]["ap_ci"] for seed in seeds], axis=0).tolist()
            record[s] = {"ap": float(np.mean(values)), "ap_ci": ci, "per_seed": {"ap": values}}
            row |= {f"{s} AP": record[s]["ap"], f"{s} CI": ci, f"{s} per seed": values}
        diffs = np.subtract(record[a]["per_seed"]["ap"], record[b]["per_seed"]["ap"])
        row.update(
            {
                "gap": float(diffs.mean()),
                "gap std": float(diffs.std()),
                "gap per seed": [float(d) for d in diffs],
                "seeds": seeds,
                "judged": f"{a} above {b}: {judge(record[a], record[b], 'ap')}",
            }
        )
        rows.append(row)
    return pd.DataFrame(rows).set_index(["layers", "labels"])


def gap_trend(table: pd.DataFrame) -> pd.DataFrame:
    """Per budget: whether the gap grows as the encoder weakens. Spearman's rho between the
    zero-shot AP and the gap over the encoders (negative: weaker encoders, larger gaps; NaN with
    fewer than three), and the gap at the weakest encoder minus at the strongest, per seed."""
    from scipy.stats import spearmanr

    rows = []
    for labels, part in table.reset_index().groupby("labels"):
        part = part.sort_values("zero-shot AP")
        weak, strong = part.iloc[0], part.iloc[-1]
        rho = spearmanr(part["zero-shot AP"], part["gap"]).statistic if len(part) >= 3 else np.nan
        shared = [s for s in weak["seeds"] if s in strong["seeds"]]
        gaps = [{s: g for s, g in zip(r["seeds"], r["gap per seed"])} for r in (weak, strong)]
        rows.append(
            {
                "labels": int(labels),
                "encoders": len(part),
                "spearman rho": float(rho),
                "weakest": int(weak["layers"]),
                "strongest": int(strong["layers"]),
                "weakest minus strongest": float(weak["gap"] - strong["gap"]),
                "per seed": [float(gaps[0][s] - gaps[1][s]) for s in shared],
                "seeds": shared,
            }
        )
    return pd.DataFrame(rows).set_index("labels")
