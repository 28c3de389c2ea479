"""The pair samplers of Augmented SBERT (Thakur et al. 2021, section 3.1): which unlabelled pairs
of a pool a cross-encoder labels as "silver" training data for a bi-encoder. Each returns sorted
int64 pair ids without those in ``exclude`` (the gold pairs): RS :func:`random_pairs`, BM25
:func:`lexical_pairs`, SS :func:`semantic_pairs`, KDE :func:`balanced_pairs`; BM25+SS is
``union_sorted(lexical, semantic)``."""

from __future__ import annotations

import numpy as np

from ..data.loaders import Pool
from ..data.pairs import as_id_set, isin_sorted
from ..evaluation.candidates import first_m_per_row, neighbour_pairs

__all__ = [
    "SAMPLERS",
    "query_items",
    "random_pairs",
    "lexical_pairs",
    "semantic_pairs",
    "balanced_pairs",
    "gold_ratio",
]

SAMPLERS = ("rs", "kde", "bm25", "ss", "bm25_ss")


def query_items(pool: Pool, gold_ids, max_items: int | None = None, *, seed: int = 0) -> np.ndarray:
    """The items the neighbour samplers query: those of the gold pairs (both sides of a symmetric
    pool, else the left), at most ``max_items`` (a seeded subset). Sorted int64 item indices."""
    left, right = pool.space.decode(as_id_set(gold_ids))
    items = np.union1d(left, right) if pool.symmetric else np.unique(left)
    if max_items is not None and len(items) > max_items:
        if max_items < 1:
            raise ValueError(f"max_items must be >= 1 or None, got {max_items!r}")
        items = np.sort(np.random.default_rng(seed).choice(items, size=max_items, replace=False))
    return items.astype(np.int64)


def random_pairs(pool: Pool, n: int, *, seed: int = 0, exclude=None) -> np.ndarray:
    """RS: ``n`` distinct pairs drawn uniformly from the pool minus ``exclude``."""
    return pool.space.sample(int(n), np.random.default_rng(seed), exclude=exclude)


def lexical_pairs(pool: Pool, k: int, *, items=None, exclude=None) -> np.ndarray:
    """BM25: each query item's (default: every left item) top-``k`` right items by bm25s."""
    import bm25s

    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k (neighbours per item) must be a positive integer, got {k!r}")
    items = np.arange(pool.space.n_left, dtype=np.int64) if items is None else as_id_set(items)
    retriever = bm25s.BM25()  # k1 = 1.5, b = 0.75
    retriever.index(
        bm25s.tokenize(list(pool.right_texts), stopwords="en", show_progress=False),
        show_progress=False,
    )
    depth = min(k + int(pool.symmetric), pool.space.n_right)  # one more: the item itself
    queries = bm25s.tokenize(list(pool.left_texts[items]), stopwords="en", show_progress=False)
    hits, scores = retriever.retrieve(queries, k=depth, show_progress=False, n_threads=1)
    rows = np.repeat(items, depth)
    cols = np.asarray(hits, dtype=np.int64).ravel()  # each row's best first
    keep = np.asarray(scores).ravel() > 0
    if pool.symmetric:
        keep &= cols != rows
    keep &= first_m_per_row(rows, keep, k)
    ids = as_id_set(pool.space.encode(rows[keep], cols[keep]))
    return ids if exclude is None else ids[~isin_sorted(ids, as_id_set(exclude))]


def semantic_pairs(
    pool: Pool,
    k: int,
    left_emb: np.ndarray,
    right_emb: np.ndarray | None = None,
    *,
    items=None,
    exclude=None,
) -> np.ndarray:
    """SS: each query item's top-``k`` right items by cosine of unit embeddings (exact faiss)."""
    return neighbour_pairs(pool.space, left_emb, right_emb, m=k, items=items, exclude=exclude)[0]


def gold_ratio(gold_labels) -> float:
    """Positives per negative in the gold set (the ratio :func:`balanced_pairs` matches)."""
    y = np.asarray(gold_labels)
    n_pos, n_neg = int((y == 1).sum()), int((y == 0).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError(
            f"the gold set needs positives and negatives to set a ratio; it has "
            f"{n_pos} positive and {n_neg} negative labels"
        )
    return n_pos / n_neg


def balanced_pairs(ids, silver_labels, ratio: float, *, seed: int = 0) -> np.ndarray:
    """KDE for a classification task: every silver positive of ``ids`` and a seeded subset of
    ``round(positives / ratio)`` negatives, matching the gold ``ratio`` (:func:`gold_ratio`)."""
    ids, y = np.asarray(ids, dtype=np.int64), np.asarray(silver_labels)
    if ids.shape != y.shape:
        raise ValueError(f"{len(ids)} ids but {len(y)} silver labels")
    positives, negatives = ids[y == 1], ids[y == 0]
    n_neg = min(len(negatives), int(round(len(positives) / ratio)))
    kept = np.random.default_rng(seed).choice(negatives, size=n_neg, replace=False)
    return as_id_set(np.concatenate([positives, kept]))
