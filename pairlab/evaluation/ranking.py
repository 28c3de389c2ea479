"""nDCG@k and MRR@k of every question (left item) with a relevant item ranking every right item
by cosine (exact faiss), with binary relevance, as Althammer et al. 2023 evaluate nDCG@10."""

from __future__ import annotations

import numpy as np

from ..data.tasks import Pool
from .candidates import build_index, search

__all__ = ["ndcg_at_k", "mrr_at_k", "answerable", "relevant_counts", "top_items", "rank_metrics"]


def ndcg_at_k(rel: np.ndarray, n_rel: np.ndarray, k: int = 10) -> np.ndarray:
    """(n_questions,) float64 nDCG@k of binary ranked lists: ``rel`` (n_questions, >= k) bool,
    rank 1 first; ``n_rel`` (n_questions,) int64: relevant items in all (>= 1)."""
    discount = 1.0 / np.log2(np.arange(2, k + 2))  # rank r -> 1 / log2(r + 1)
    dcg = rel[:, :k].astype(np.float64) @ discount
    ideal = np.cumsum(discount)[np.minimum(n_rel, k) - 1]
    return dcg / ideal


def mrr_at_k(rel: np.ndarray, k: int = 10) -> np.ndarray:
    """(n_questions,) float64 reciprocal rank of the first relevant item within the top k (0
    when none is there), from ``rel`` (n_questions, >= k) bool."""
    top = rel[:, :k]
    first = np.argmax(top, axis=1)  # 0 where none is relevant; masked below
    return np.where(top.any(axis=1), 1.0 / (first + 1), 0.0)


def relevant_counts(pool: Pool) -> np.ndarray:
    """(n_left,) int64: how many right items are relevant to each left item (for a symmetric
    pool, a positive pair counts for both its questions)."""
    left, right = pool.space.decode(pool.positives)
    counts = np.bincount(left, minlength=len(pool.left_texts))
    if pool.symmetric:
        counts = counts + np.bincount(right, minlength=len(pool.left_texts))
    return counts.astype(np.int64)


def answerable(pool: Pool) -> np.ndarray:
    """Sorted int64 indices of the left items with at least one relevant right item."""
    return np.flatnonzero(relevant_counts(pool) > 0).astype(np.int64)


def top_items(pool: Pool, left: np.ndarray, right: np.ndarray, questions, k: int) -> np.ndarray:
    """(n_questions, k) int64: each question's k highest-cosine right items, best first (a
    symmetric pool leaves the question out); ``left``, ``right``: unit-norm item embeddings."""
    questions = np.asarray(questions, dtype=np.int64)
    symmetric = int(pool.symmetric)
    if not 1 <= k <= pool.space.n_right - symmetric:
        raise ValueError(
            f"k={k} right items per question, but {pool.task}/{pool.split} has "
            f"{pool.space.n_right - symmetric} to rank"
        )
    _, hits = search(build_index(right), left[questions], k + symmetric)
    if not symmetric:
        return hits.astype(np.int64)
    other = hits != questions[:, None]
    first = np.argsort(~other, axis=1, kind="stable")[:, :k]  # the hits that are not the question
    return np.take_along_axis(hits, first, axis=1).astype(np.int64)


def rank_metrics(pool: Pool, left: np.ndarray, right: np.ndarray, *, k: int = 10) -> dict:
    """nDCG@k and MRR@k of the cosine ranking on every question of ``pool`` with a relevant
    item: ``{"questions": (n,) int64, "ndcg": (n,), "mrr": (n,), "ndcg_mean", "mrr_mean"}``."""
    questions = answerable(pool)
    if len(questions) == 0:
        raise ValueError(f"{pool.task}/{pool.split} has no question with a relevant item")
    items = top_items(pool, left, right, questions, k)  # (n, k): is each ranked item relevant?
    rows = np.broadcast_to(questions[:, None], items.shape)
    rel = pool.labels(pool.space.encode(rows.ravel(), items.ravel())).reshape(items.shape) == 1
    ndcg = ndcg_at_k(rel, relevant_counts(pool)[questions], k)
    mrr = mrr_at_k(rel, k)
    return {
        "questions": questions,
        "ndcg": ndcg,
        "mrr": mrr,
        "ndcg_mean": float(ndcg.mean()),
        "mrr_mean": float(mrr.mean()),
    }
