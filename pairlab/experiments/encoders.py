"""Notebook 09's second experiment: does adaptivity pay more when the starting encoder is
weaker? One model cut to fewer transformer layers (:mod:`pairlab.models.truncate`) gives
encoders of graded strength; each one's zero-shot all-pairs AP and static-retrieval precision
come first (:func:`zero_shot`), then uncertainty sampling against static retrieval from each
(:func:`encoder_sweep`), read as the gap between them against the zero-shot AP
(:func:`encoder_table`, :func:`gap_trend`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..active.config import LoopSettings
from ..data.paper import A, B
from ..evaluation.candidates import neighbour_pairs
from ..evaluation.strata import evaluate
from ..models.embed import embed_pool, load_encoder, resolve_model
from ..models.scoring import CosineScorer
from ..models.truncate import layer_count, truncated_model
from .summaries import judge
from .sweeps import Variant, sweep, total_rounds

__all__ = [
    "GAP",
    "encoder_layers",
    "zero_shot",
    "encoder_sweep",
    "encoder_rounds",
    "encoder_runs",
    "encoder_table",
    "gap_trend",
]

GAP = (A, B)  # the gap is the first's test AP minus the second's


def encoder_layers(model, layers) -> dict[int, int | None]:
    """``{depth: encoder_layers setting}`` for the depths asked of ``model``: ``None`` for its
    own depth (the whole model, whose runs are notebook 03's), the depth otherwise."""
    depth = layer_count(load_encoder(model, device="cpu"))
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
    prepared: dict,
    layers: dict,
    settings: LoopSettings,
    *,
    rounds: int,
    split: str = "test",
    seed: int = 0,
) -> pd.DataFrame:
    """Each encoder before any training, one row per depth: its all-pairs AP on ``split`` (the
    cosine, with a 95% bootstrap interval) and the share of positives among the pairs static
    retrieval would label with it in ``rounds`` rounds (the top pairs by its cosine among every
    item's m nearest neighbours, ties by pair id: the pairs a static-retrieval run collects)."""
    from tqdm.auto import tqdm

    ((task, (pools, eval_sets)),) = _one_task(prepared).items()
    own = settings.for_task(task)
    budget = settings.config(task, "static_retrieval", rounds=rounds).budget
    rows = []
    for n, setting in tqdm(layers.items(), desc=f"{task}: zero-shot encoders"):
        model = truncated_model(own["model"], setting)
        left, right = embed_pool(
            pools["train"], model, max_seq_length=own["max_seq_length"], show_progress=False
        )
        ids, cosine = neighbour_pairs(pools["train"].space, left, right, m=own["candidate_m"])
        top = ids[np.lexsort((ids, -cosine.astype(np.float64)))[:budget]]
        left, right = embed_pool(
            pools[split], model, max_seq_length=own["max_seq_length"], show_progress=False
        )
        scored = evaluate(
            eval_sets[split],
            CosineScorer(pools[split].space, left, right),
            n_boot=own["n_boot"],
            seed=seed,
        )
        rows.append(
            {
                "layers": n,
                "zero-shot AP": scored["ap"],
                "AP lo": scored["ap_ci"][0],
                "AP hi": scored["ap_ci"][1],
                "static precision": float(pools["train"].labels(top).mean()),
                "static labels": int(len(top)),
            }
        )
    return pd.DataFrame(rows).set_index("layers")


def _variants(layers: dict, rounds, strategies) -> list[tuple[int, Variant]]:
    return [
        (n, Variant(s, s, {"encoder_layers": setting, "rounds": int(r)}))
        for n, setting in layers.items()
        for r in rounds
        for s in strategies
    ]


def encoder_sweep(
    prepared: dict,
    layers: dict,
    rounds,
    strategies,
    seeds,
    settings: LoopSettings,
    root,
    *,
    callbacks=(),
    learner=None,
    **backend,
) -> dict:
    """Every (depth, round count, strategy, seed) run on the one task of ``prepared``
    (:func:`~.sweeps.sweep`, with its ``backend`` arguments; finished runs are read back,
    notebook 03's among them). Returns ``{(depth, labels, strategy, seed): result}``."""
    _one_task(prepared)
    out = {}
    for n, variant in _variants(layers, rounds, strategies):
        found = sweep(
            prepared,
            [variant],
            seeds,
            settings,
            root,
            callbacks=callbacks,
            learner=learner,
            **backend,
        )
        for (_, label, seed), result in found.items():
            out[(n, int(result["labels"]), label, seed)] = result
    return out


def encoder_rounds(
    prepared: dict, layers: dict, rounds, strategies, seeds, settings: LoopSettings
) -> int:
    """Rounds :func:`encoder_sweep` will run (for a progress bar)."""
    return sum(
        total_rounds(prepared, [v], seeds, settings)
        for _, v in _variants(layers, rounds, strategies)
    )


def encoder_runs(results: dict) -> dict:
    """:func:`encoder_sweep`'s results as a sweep's ``{(task, "strategy, n layers", seed):
    result}``, the largest budget of each (its first rounds are the smaller budget's)."""
    out = {}
    for (n, labels, strategy, seed), result in sorted(results.items(), key=lambda kv: kv[0][1]):
        out[(result["config"]["task"], f"{strategy}, {n} layers", seed)] = result
    return out


def encoder_table(results: dict, zero: pd.DataFrame, *, gap=GAP) -> pd.DataFrame:
    """One row per depth and budget: the zero-shot AP and static precision, each strategy's test
    AP (mean over the seeds both ran, the mean of their 95% intervals, each seed's) and the gap
    between them: its mean, its std over seeds (ddof 0), each seed's, and whether it can be told
    from noise by the strategies' mean 95% intervals (``judged``, :func:`~.summaries.judge`)."""
    a, b = gap
    rows = []
    for n, labels in sorted({k[:2] for k in results}, key=lambda k: (-k[0], k[1])):
        runs = {
            s: {
                seed: r
                for (m, k, name, seed), r in results.items()
                if (m, k, name) == (n, labels, s)
            }
            for s in gap
        }
        seeds = sorted(set(runs[a]) & set(runs[b]))
        if not seeds:
            continue
        record = {s: _test_record(runs[s], seeds) for s in gap}
        diffs = np.subtract(record[a]["per_seed"]["ap"], record[b]["per_seed"]["ap"])
        rows.append(
            {
                "layers": n,
                "labels": labels,
                "zero-shot AP": zero.loc[n, "zero-shot AP"],
                "static precision": zero.loc[n, "static precision"],
                **{
                    f"{s} {key}": value
                    for s in gap
                    for key, value in (
                        ("AP", record[s]["ap"]),
                        ("CI", record[s]["ap_ci"]),
                        ("per seed", record[s]["per_seed"]["ap"]),
                    )
                },
                "gap": float(diffs.mean()),
                "gap std": float(diffs.std()),
                "gap per seed": [float(d) for d in diffs],
                "seeds": seeds,
                "judged": f"{a} above {b}: {judge(record[a], record[b], 'ap')}",
            }
        )
    return pd.DataFrame(rows).set_index(["layers", "labels"])


def _test_record(runs: dict, seeds) -> dict:
    """Test AP over ``seeds`` as :func:`~.summaries.judge` reads it: the mean, the mean of the
    seeds' 95% intervals and the seeds' values."""
    values = [runs[s]["test"]["ap"] for s in seeds]
    ci = np.mean([runs[s]["test"]["ap_ci"] for s in seeds], axis=0)
    return {
        "ap": float(np.mean(values)),
        "ap_ci": [float(ci[0]), float(ci[1])],
        "per_seed": {"ap": [float(v) for v in values]},
    }


def gap_trend(table: pd.DataFrame) -> pd.DataFrame:
    """Per budget: whether the gap grows as the encoder weakens. Spearman's rho between the
    zero-shot AP and the gap over the encoders (negative: weaker encoders, larger gaps; NaN with
    fewer than three), and the gap at the weakest encoder minus at the strongest, per seed."""
    from scipy.stats import spearmanr

    rows = []
    for labels, part in table.reset_index().groupby("labels"):
        part = part.sort_values("zero-shot AP")
        weak, strong = part.iloc[0], part.iloc[-1]
        rho = (
            spearmanr(part["zero-shot AP"], part["gap"]).statistic
            if len(part) >= 3
            else float("nan")
        )
        shared = [s for s in weak["seeds"] if s in strong["seeds"]]
        per_seed = [
            weak["gap per seed"][weak["seeds"].index(s)]
            - strong["gap per seed"][strong["seeds"].index(s)]
            for s in shared
        ]
        rows.append(
            {
                "labels": int(labels),
                "encoders": len(part),
                "spearman rho": float(rho),
                "weakest": int(weak["layers"]),
                "strongest": int(strong["layers"]),
                "weakest minus strongest": float(weak["gap"] - strong["gap"]),
                "per seed": [float(d) for d in per_seed],
                "seeds": shared,
            }
        )
    return pd.DataFrame(rows).set_index("labels")


def _one_task(prepared: dict) -> dict:
    if len(prepared) != 1:
        raise ValueError(f"the encoder experiment runs on one task, got {sorted(prepared)}")
    return prepared
