"""The paper's claims about Augmented SBERT checked on notebook 06's metrics (finding records,
:func:`.findings.augsbert`, in the macros' words), and silver's gain over gold only, for the
stated and the adaptively collected gold."""

from __future__ import annotations

from ..augment import samplers as smp

__all__ = ["findings", "silver_gain"]


def findings(metrics: dict) -> list[str]:
    """The claims judged (:func:`.findings.augsbert`, one line each in the macros' words), then
    per task silver's gain over gold only for each gold source."""
    from . import findings as records

    text = records.render(records.augsbert(metrics))
    lines = [line.removeprefix("- ") for line in text.splitlines()] if text else []
    for task, by_source in metrics.items():
        if len(by_source) > 1:
            gains = {source: silver_gain(rows) for source, rows in by_source.items()}
            gains = {source: g for source, g in gains.items() if g is not None}
            if len(gains) > 1:
                lines.append(
                    f"{task}: silver's gain over gold only (each source's best sampler minus its "
                    "gold-only SBERT, AP; per seed): "
                    + "; ".join(
                        f"{source} {g[0]:+.3f} ({', '.join(f'{x:+.3f}' for x in g[1])})"
                        for source, g in gains.items()
                    )
                )
    return lines


def silver_gain(rows: dict) -> tuple[float, list[float]] | None:
    """The best sampler's AP minus the gold-only SBERT's, as a mean and per seed (None without
    samplers)."""
    samplers = [r for r in smp.SAMPLERS if r in rows]
    if not samplers or "sbert" not in rows:
        return None
    best = max(samplers, key=lambda r: rows[r]["ap"])
    per_seed = [
        a - b
        for a, b in zip(
            (rows[best].get("per_seed") or {}).get("ap", []),
            (rows["sbert"].get("per_seed") or {}).get("ap", []),
        )
    ]
    return rows[best]["ap"] - rows["sbert"]["ap"], per_seed
