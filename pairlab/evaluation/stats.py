"""Dataset statistics: the Table 1 analog, pool growth, and what random labelling finds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.loaders import SPLITS, Pool, Task
from ..data.pairs import isin_sorted
from ..data.paper import TABLE1, TABLE1_COLUMNS
from .candidates import neighbour_pairs
from .ranking import relevant_counts
from .strata import EvalSet, embed_pool

__all__ = [
    "split_stats",
    "table1",
    "growth",
    "cluster_sizes",
    "retrieval_yield",
    "static_retrieval_yield",
    "examples",
    "construction_metrics",
]


def split_stats(pool: Pool, eval_set: EvalSet | None = None) -> dict:
    """Counts of one split (JSON-ready): items, pairs, positives, stated and nearby negatives."""
    out = {
        "n_left": len(pool.left_texts),
        "n_right": len(pool.right_texts),
        "n_pairs": int(pool.n_pairs),
        "n_positives": int(pool.n_positives),
        "n_stated_negatives": int(len(pool.stated_negatives)),
        "ratio": float(pool.n_pairs / pool.n_positives) if pool.n_positives else None,
    }
    if eval_set is not None:
        out["n_nearby_negatives"] = int(len(eval_set.near))
        out["n_random_negatives"] = int(len(eval_set.rand))
        out["neighbours"] = int(eval_set.config.near_m)
    return out


def table1(tasks: dict[str, Task], eval_sets: dict | None = None) -> pd.DataFrame:
    """Table 1 of the paper, ours beside theirs: one row per task and split."""
    keys = ("n_positives", "n_pairs", "ratio", "n_stated_negatives", "n_nearby_negatives")
    columns = ("positives", "pairs", "ratio 1:", "stated neg.", "nearby neg.")  # in TABLE1's order
    rows = []
    for name, task in tasks.items():
        for split in SPLITS:
            ours = split_stats(task[split], (eval_sets or {}).get(name, {}).get(split))
            paper = TABLE1.get(name, {}).get(split, dict.fromkeys(TABLE1_COLUMNS))  # a file's
            row = {"task": name, "split": split}
            for key, column, theirs in zip(keys, columns, TABLE1_COLUMNS):
                row |= {column: ours.get(key), f"paper {column}": paper[theirs]}
            rows.append(row)
    return pd.DataFrame(rows).set_index(["task", "split"])


def growth(task: Task, sizes, *, split: str = "train") -> pd.DataFrame:
    """Pairs, positives and imbalance of ``split`` when only ``sizes`` left items are kept
    (:meth:`Task.resized`, as the small profiles subsample)."""
    rows = []
    for size in sorted(set(int(s) for s in sizes)):
        pool = task.resized(size)[split]
        items = {"items": len(pool.left_texts), "right_items": len(pool.right_texts)}
        ratio = pool.n_pairs / max(pool.n_positives, 1)
        rows.append({**items, "pairs": pool.n_pairs, "positives": pool.n_positives, "ratio": ratio})
    return pd.DataFrame(rows).drop_duplicates("items")


def cluster_sizes(pool: Pool) -> pd.Series:
    """How many left items have k positive partners, k = 0, 1, 2, ... (index k)."""
    partners = np.bincount(relevant_counts(pool))
    return pd.Series(partners, name="items").rename_axis("positive partners")


def retrieval_yield(
    pool: Pool, candidate_ids, candidate_scores, budgets=None, *, seed: int = 0
) -> pd.DataFrame:
    """Positives found labelling ``b`` pairs for each budget ``b`` (default: a geometric grid): the
    top-``b`` of the candidates (int64 pair ids) by score, ``b`` random pairs (one draw) and
    random labelling's mean."""
    if len(candidate_ids) == 0:
        raise ValueError("no candidate pairs to rank")
    if budgets is None:
        budgets = np.unique(np.geomspace(10, len(candidate_ids), 12).astype(np.int64))
    budgets = np.minimum(np.asarray(budgets, dtype=np.int64), len(candidate_ids))
    order = np.argsort(-np.asarray(candidate_scores), kind="stable")
    found = np.r_[0, np.cumsum(isin_sorted(candidate_ids[order], pool.positives))]
    # One uniform random labelling sequence; its prefixes are random label sets of each size.
    draw = np.random.default_rng(seed).permutation(
        pool.space.sample(int(budgets.max()), np.random.default_rng(seed))
    )
    random_found = np.r_[0, np.cumsum(pool.labels(draw))]
    return pd.DataFrame(
        {
            "labels": budgets,
            "static retrieval": found[budgets],
            "random (one draw)": random_found[budgets],
            "random (expected)": budgets * pool.n_positives / pool.n_pairs,
        }
    )


def examples(pool: Pool, n: int = 4, *, seed: int = 0) -> pd.DataFrame:
    """A few positives, stated negatives and uniformly random pairs of a pool, as text."""
    rng = np.random.default_rng(seed)
    parts = []
    for kind, ids in (
        ("positive", pool.positives),
        ("stated negative", pool.stated_negatives),
        ("random pair", pool.space.sample(n, rng)),
    ):
        chosen = np.sort(rng.choice(ids, size=min(n, len(ids)), replace=False)) if len(ids) else ids
        parts.append(pool.frame(chosen).assign(kind=kind))
    frame = pd.concat(parts, ignore_index=True)
    return frame[["kind", "left", "right", "label", "pair_id"]]


def construction_metrics(
    tasks: dict[str, Task], eval_sets: dict, results: dict, exact: dict | None = None
) -> dict:
    """Notebook 01's metrics file: per task and split, the counts and the pretrained AP."""
    out = {}
    for name, task in tasks.items():
        out[name] = {}
        for split in SPLITS:
            entry = split_stats(task[split], eval_sets.get(name, {}).get(split))
            result = results.get(name, {}).get(split)
            if result is not None:
                cosine = {k: result[k] for k in ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")}
                if point := (exact or {}).get(name, {}).get(split):
                    cosine |= {"exact_ap": point["ap"], "exact_p_at_r20": point["p_at_r"]}
                entry["pretrained_cosine"] = cosine
            out[name][split] = entry
        out[name]["notes"] = task.notes | {"malformed_rows_skipped": len(task.report.skipped)}
    return out


def static_retrieval_yield(
    pool: Pool, *, m: int, model=None, max_seq_length: int | None = None, seed: int = 0
) -> pd.DataFrame:
    """:func:`retrieval_yield` over each left item's top-``m`` pretrained neighbours."""
    left, right = embed_pool(pool, model, max_seq_length=max_seq_length)
    ids, scores = neighbour_pairs(pool.space, left, right, m=m)
    return retrieval_yield(pool, ids, scores, seed=seed)
