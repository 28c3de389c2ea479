"""The all-pairs evaluation set of a split (paper appendix A.2: every positive, ``D_near`` and
``D_rand``), and evaluating a scorer (``score(pair_ids) -> scores``) on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..data.loaders import Pool
from ..data.pairs import isin_sorted, setdiff_sorted, union_sorted
from ..models.embed import embed_pool
from ..models.scoring import CosineScorer
from . import metrics
from .candidates import neighbour_pairs

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EvalConfig",
    "EvalSet",
    "build_eval_set",
    "evaluate",
    "CosineScorer",
    "exact_all_pairs",
    "embed_pool",
    "pretrained_eval_set",
    "summary",
]


@dataclass(frozen=True)
class EvalConfig:
    """How an evaluation set is drawn."""

    near_m: int = 100  # m: pretrained neighbours per left item forming D_near
    n_random: int = 100_000  # |D_rand|
    seed: int = 0
    index: str = "Flat"  # faiss index-factory string for the neighbour search

    @classmethod
    def from_params(cls, params: dict) -> EvalConfig:
        """The test and dev strata of a notebook's parameters: ``near_m``, ``n_random``, ``seed``."""
        return cls(params["near_m"], params["n_random"], params["seed"])


@dataclass(frozen=True, eq=False)
class EvalSet:
    """The strata of one split: sorted int64 pair ids, and the pool's negative count."""

    positives: np.ndarray
    near: np.ndarray
    rand: np.ndarray
    n_neg_total: int
    config: EvalConfig

    @property
    def w_rand(self) -> float:
        """Pairs each random negative stands for."""
        return (self.n_neg_total - len(self.near)) / max(len(self.rand), 1)

    def strata(self) -> dict[str, np.ndarray]:
        return {"positive": self.positives, "near": self.near, "rand": self.rand}


def build_eval_set(
    pool: Pool,
    left_emb: np.ndarray,
    right_emb: np.ndarray | None = None,
    config: EvalConfig = EvalConfig(),
) -> EvalSet:
    """Draw the strata of ``pool`` from pretrained embeddings (unit-norm, (n_items, dim))."""
    if pool.n_positives == 0:
        raise ValueError(f"{pool.task}/{pool.split} has no positives: AP is undefined")
    if config.n_random < 0:
        raise ValueError(f"n_random must be >= 0, got {config.n_random}")
    right_emb = left_emb if pool.symmetric else right_emb
    candidates, _ = neighbour_pairs(
        pool.space, left_emb, right_emb, m=config.near_m, index=config.index
    )
    near = setdiff_sorted(candidates, pool.positives)
    n_random = min(config.n_random, pool.n_negatives - len(near))
    rng = np.random.default_rng(config.seed)
    rand = pool.space.sample(n_random, rng, exclude=union_sorted(near, pool.positives))
    return EvalSet(pool.positives, near, rand, pool.n_negatives, config)


def pretrained_eval_set(
    pool: Pool, config: EvalConfig = EvalConfig(), *, model=None, max_seq_length: int | None = None
) -> tuple[EvalSet, CosineScorer]:
    """The evaluation set of ``pool`` and the zero-shot cosine scorer, on pretrained embeddings."""
    left, right = embed_pool(pool, model, max_seq_length=max_seq_length)
    return build_eval_set(pool, left, right, config), CosineScorer(pool.space, left, right)


def evaluate(eval_set: EvalSet, score, *, n_boot: int = 1000, seed: int = 0) -> dict:
    """All-pairs metrics of ``score`` (pair ids -> float scores) on ``eval_set``: ``{"ap",
    "ap_ci", "p_at_r20", "p_at_r20_ci", "curve", "scores"}`` (each stratum's scores)."""
    scores = {}
    for name, ids in eval_set.strata().items():
        values = np.asarray(score(ids), dtype=np.float64) if len(ids) else np.empty(0)
        if values.shape != ids.shape:
            raise ValueError(f"scorer returned shape {values.shape} for {len(ids)} {name} pairs")
        scores[name] = values
    args = (scores["positive"], scores["near"], scores["rand"], eval_set.n_neg_total)
    boot = metrics.bootstrap(*args, n_boot=n_boot, recall=0.2, seed=seed)
    return {
        "ap": boot["ap"],
        "ap_ci": boot["ap_ci"],
        "p_at_r20": boot["p_at_r"],
        "p_at_r20_ci": boot["p_at_r_ci"],
        "curve": metrics.pr_curve(*args),
        "scores": scores,
    }


def exact_all_pairs(pool: Pool, left_emb: np.ndarray, right_emb: np.ndarray | None = None) -> dict:
    """Exact AP and P@R20 of cosine scores over every pair of a pool small enough to enumerate,
    scored blockwise (left items x all right items): ``{"ap", "p_at_r", "n_pairs"}``."""
    right_emb = left_emb if pool.symmetric else right_emb
    positive = np.sort(
        CosineScorer(pool.space, left_emb, right_emb)(pool.positives).astype(np.float64)
    )
    thresholds = np.unique(positive)[::-1]
    fp = np.zeros(len(thresholds))
    for start in range(0, pool.space.n_left, 2048):
        rows = np.arange(start, min(start + 2048, pool.space.n_left))
        sims = (left_emb[rows] @ right_emb.T).astype(np.float64)  # (block, n_right)
        valid = np.arange(pool.space.n_right)[None, :] > rows[:, None]  # symmetric: once a pair
        r, c = np.nonzero(valid if pool.symmetric else np.ones(sims.shape, dtype=bool))
        ids = pool.space.encode(rows[r], c)
        negatives = np.sort(sims[r, c][~isin_sorted(ids, pool.positives)])
        fp += metrics.count_at_least(negatives, thresholds)
    tp = metrics.count_at_least(positive, thresholds)
    return {
        "ap": metrics.ap_from_counts(tp, fp, pool.n_positives),
        "p_at_r": metrics.precision_at_recall_from_counts(tp, fp, pool.n_positives, 0.2),
        "n_pairs": pool.n_pairs,
    }


def summary(results: dict, exact: dict | None = None) -> pd.DataFrame:
    """AP and P@R20 with intervals (and ``exact``'s values) of ``{name: {split: evaluate()}}``."""
    import pandas as pd

    rows = []
    for name, by_split in results.items():
        for split, r in by_split.items():
            row = {"name": name, "split": split}
            for label, key in (("AP", "ap"), ("P@R20", "p_at_r20")):
                row[label] = r[key]
                row[f"{label} 95% CI"] = "[{:.4f}, {:.4f}]".format(*r[f"{key}_ci"])
            if point := (exact or {}).get(name, {}).get(split):
                row |= {"exact AP": point["ap"], "exact P@R20": point["p_at_r"]}
            rows.append(row)
    return pd.DataFrame(rows).set_index(["name", "split"])
