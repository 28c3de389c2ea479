"""The paper's claims about Augmented SBERT checked on notebook 06's metrics (one line each), and
silver's gain over gold only, for the stated and the adaptively collected gold."""
from __future__ import annotations

from ..augment import samplers as smp
from .records import judge

__all__ = ["findings", "silver_gain"]


def findings(metrics: dict) -> list[str]:
    """The paper's claims, checked on our numbers (one line each, per task and gold source)."""
    lines = []
    for task, by_source in metrics.items():
        for source, rows in by_source.items():
            ap = {r: m["ap"] for r, m in rows.items()}
            samplers = [r for r in smp.SAMPLERS if r in ap]
            if not samplers:
                continue
            order = sorted(samplers, key=ap.get, reverse=True)
            best = order[0]
            lines.append(f"{task}/{source}: samplers by AP: " + " > ".join(f"{r} {ap[r]:.3f}" for r in order)
                         + f"; gold-only SBERT {ap['sbert']:.3f}, cross-encoder {ap['cross_encoder']:.3f}")
            lines.append(f"  silver helps the bi-encoder (best sampler {best} above gold only), AP: "
                         f"{judge(rows[best], rows['sbert'], 'ap')}")
            if {"bm25", "rs"} <= set(ap):
                lines.append("  BM25 above RS (the paper on Quora-QP: 79.0 vs 73.4 F1), AP: "
                             f"{judge(rows['bm25'], rows['rs'], 'ap')}; F1: {judge(rows['bm25'], rows['rs'], 'f1')}")
            if {"rs", "kde", "bm25"} <= set(ap):
                lines.append(f"  the paper's ranking (BM25 and KDE best, RS worst): RS last by AP: "
                             f"{'yes' if order[-1] == 'rs' else 'no'}; BM25 and KDE the top two: "
                             f"{'yes' if set(order[:2]) == {'bm25', 'kde'} else 'no'}")
        if len(by_source) > 1:
            gains = {source: silver_gain(rows) for source, rows in by_source.items()}
            gains = {source: g for source, g in gains.items() if g is not None}
            if len(gains) > 1:
                lines.append(f"{task}: silver's gain over gold only (each source's best sampler minus its "
                             "gold-only SBERT, AP; per seed): " + "; ".join(
                                 f"{source} {g[0]:+.3f} ({', '.join(f'{x:+.3f}' for x in g[1])})"
                                 for source, g in gains.items()))
    return lines


def silver_gain(rows: dict) -> tuple[float, list[float]] | None:
    """The best sampler's AP minus the gold-only SBERT's, as a mean and per seed (None without
    samplers)."""
    samplers = [r for r in smp.SAMPLERS if r in rows]
    if not samplers or "sbert" not in rows:
        return None
    best = max(samplers, key=lambda r: rows[r]["ap"])
    per_seed = [a - b for a, b in zip((rows[best].get("per_seed") or {}).get("ap", []),
                                      (rows["sbert"].get("per_seed") or {}).get("ap", []))]
    return rows[best]["ap"] - rows["sbert"]["ap"], per_seed
