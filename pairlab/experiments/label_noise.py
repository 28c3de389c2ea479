"""Notebook 03's runs under annotator noise (notebook 07; the annotator is in the run's config).
A noise level is a flip rate (0: the oracle) or ``"error_dependent"``: right as often as an LLM
was at the pair's base-model error (Bansal and Sharma 2023, Appendix B)."""

from __future__ import annotations

from functools import partial

import pandas as pd

from .summaries import cell, mean_std, seed_means_by
from .sweeps import Variant

__all__ = ["noise_name", "noise_spec", "noise_variants", "noise_metrics", "noise_table"]

ERROR_DEPENDENT = "error_dependent"


def noise_name(noise) -> str:
    """``"10%"`` for 0.1, ``"error_dependent"`` as is."""
    return ERROR_DEPENDENT if noise == ERROR_DEPENDENT else f"{float(noise):.0%}"


def noise_spec(
    noise, seed: int, *, accuracy=None, model=None, max_seq_length: int = 128
) -> dict | None:
    """The annotator spec of a noise level for a run of ``seed`` (None: the oracle);
    ``accuracy`` per base-error bin for the error-dependent level."""
    if noise == ERROR_DEPENDENT:
        if not accuracy:
            raise ValueError("the error-dependent noise level needs an accuracy per base-error bin")
        return {
            "kind": ERROR_DEPENDENT,
            "accuracy": [float(a) for a in accuracy],
            "seed": int(seed),
            "model": model,
            "max_seq_length": max_seq_length,
        }
    rate = float(noise)
    if not 0 <= rate <= 0.5:
        raise ValueError(
            f"a noise level is a flip rate in [0, 0.5] or {ERROR_DEPENDENT!r}, got {noise!r}"
        )
    if rate == 0:
        return None
    return {"kind": "noisy", "flip_positive": rate, "flip_negative": rate, "seed": int(seed)}


def noise_variants(
    strategies, noises, *, accuracy=None, model=None, max_seq_length: int = 128
) -> list[Variant]:
    """One :class:`Variant` per strategy and noise level, labelled ``"<strategy>|<noise>"``."""

    spec = partial(noise_spec, accuracy=accuracy, model=model, max_seq_length=max_seq_length)
    return [
        Variant(f"{s}|{noise_name(n)}", s, lambda task, seed, n=n: {"annotator": spec(n, seed)})
        for n in noises
        for s in strategies
    ]


def noise_metrics(results: dict) -> dict:
    """``{task: {noise: {strategy: seed_means}}}`` of a sweep of :func:`noise_variants` (the
    oracle's accuracy is 1 by definition)."""
    rows = {}
    for (task, label, seed), result in results.items():  # the sweep's order: noise levels as given
        strategy, noise = label.split("|")
        note = result.get("annotation") or {"accuracy": 1.0, "no_answer": 0}
        rows[(task, noise, strategy, seed)] = {
            **{k: result["test"][k] for k in ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")},
            "annotator_accuracy": note["accuracy"],
            "no_answer": note["no_answer"],
            **{k: result[k] for k in ("positives_found", "labels")},
        }
    return seed_means_by(rows, std_of=("ap", "p_at_r20", "annotator_accuracy"))


def noise_table(by_noise: dict):
    """One task's table: a row per noise level and strategy."""
    records = [
        {
            "noise": level,
            "strategy": strategy,
            "AP": mean_std(m, "ap"),
            "AP 95% CI": "[{:.3f}, {:.3f}]".format(*m["ap_ci"]),
            "P@R20": f"{m['p_at_r20']:.3f}",
            "annotator accuracy": cell(m["annotator_accuracy"], ".1%"),
            "positives found": f"{m['positives_found']:.1f}",
            "labels": int(m["labels"]),
        }
        for level, by_strategy in by_noise.items()
        for strategy, m in by_strategy.items()
    ]
    return pd.DataFrame(records).set_index(["noise", "strategy"])
