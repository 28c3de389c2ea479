"""Active learning on all pairs under annotator noise (notebook 07): the same strategies, runs and
run folders as notebook 03, with each run's labels given by a noisy annotator
(:mod:`pairlab.annotators`) named in its config, so a noisy run never reuses a clean one's folder.

A noise level is a flip rate (both ways: a positive answered 0, a negative answered 1) or
``"error_dependent"``: the annotator is right as often as an LLM was at the pair's base-model
error (Bansal and Sharma 2023, Appendix B). Rate 0 is the oracle, so those runs are notebook
03's own.
"""

from __future__ import annotations

from .summaries import seed_means
from .sweeps import Variant

__all__ = [
    "NOISE_STRATEGIES",
    "noise_name",
    "noise_spec",
    "noise_variants",
    "noise_metrics",
    "noise_table",
]

NOISE_STRATEGIES = (
    "uncertainty",
    "conditional_informativeness",
    "static_retrieval",
    "random_candidates",
)
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

    def fields(noise):
        return lambda task, seed: {
            "annotator": noise_spec(
                noise, seed, accuracy=accuracy, model=model, max_seq_length=max_seq_length
            )
        }

    return [
        Variant(f"{strategy}|{noise_name(noise)}", strategy, fields(noise))
        for noise in noises
        for strategy in strategies
    ]


def noise_metrics(results: dict) -> dict:
    """``{task: {noise: {strategy: {ap, ap_ci, p_at_r20, p_at_r20_ci, annotator_accuracy,
    no_answer, positives_found, labels}}}}`` (means over seeds; ``per_seed`` beside) from the
    sweep of :func:`noise_variants`. The oracle's accuracy is 1 by definition."""
    grouped: dict = {}
    for (task, label, seed), result in results.items():  # the sweep's order: noise levels as given
        strategy, noise = label.split("|")
        note = result.get("annotation") or {"accuracy": 1.0, "no_answer": 0}
        row = {
            "ap": result["test"]["ap"],
            "ap_ci": result["test"]["ap_ci"],
            "p_at_r20": result["test"]["p_at_r20"],
            "p_at_r20_ci": result["test"]["p_at_r20_ci"],
            "annotator_accuracy": note["accuracy"],
            "no_answer": note["no_answer"],
            "positives_found": result["positives_found"],
            "labels": result["labels"],
        }
        grouped.setdefault(task, {}).setdefault(noise, {}).setdefault(strategy, []).append(
            (seed, row)
        )
    return {
        task: {
            noise: {strategy: _mean(seeded) for strategy, seeded in by_strategy.items()}
            for noise, by_strategy in by_noise.items()
        }
        for task, by_noise in grouped.items()
    }


def _mean(seeded: list) -> dict:
    return seed_means(seeded, std_of=("ap", "p_at_r20", "annotator_accuracy"))


def noise_table(by_noise: dict):
    """One task's table: rows (noise, strategy); AP ± std with its 95% interval, P@R20, the
    annotator's measured accuracy and the positives the run found."""
    import pandas as pd

    records = []
    for level, by_strategy in by_noise.items():
        for strategy, m in by_strategy.items():
            std = m.get("ap_std")
            records.append(
                {
                    "noise": level,
                    "strategy": strategy,
                    "AP": f"{m['ap']:.3f}" + ("" if std is None else f" ± {std:.3f}"),
                    "AP 95% CI": "[{:.3f}, {:.3f}]".format(*m["ap_ci"]),
                    "P@R20": f"{m['p_at_r20']:.3f}",
                    "annotator accuracy": "-"
                    if m["annotator_accuracy"] is None
                    else f"{m['annotator_accuracy']:.1%}",
                    "positives found": f"{m['positives_found']:.1f}",
                    "labels": int(m["labels"]),
                }
            )
    return pd.DataFrame(records).set_index(["noise", "strategy"])
