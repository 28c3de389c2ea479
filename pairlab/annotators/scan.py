"""Annotating a question by scanning a ranking (Althammer et al. 2023, section 6): the ranker's
ranking of every right item, from the top down to the first relevant one, every scanned pair
labelled; that item's rank is what the question costs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix

from ..data.tasks import Pool

__all__ = ["Scan", "scan_to_first_relevant"]


@dataclass(frozen=True, eq=False)
class Scan:
    """What annotating ``questions`` produced; the scanned pairs question by question, in rank
    order: ``sum(assessments)`` of each of ``items``, ``pair_ids`` and ``labels``."""

    questions: np.ndarray  # (n_questions,) int64 left items, in the order given
    assessments: np.ndarray  # (n_questions,) int64: rank of each one's first relevant item
    items: np.ndarray  # int64 right items scanned
    pair_ids: np.ndarray  # int64 the scanned pairs
    labels: np.ndarray  # int8 imputed labels: 1 exactly at each question's last


def scan_to_first_relevant(
    pool: Pool, left: np.ndarray, right: np.ndarray, questions, *, block: int = 256
) -> Scan:
    """Scan each question's cosine ranking (``left``, ``right``: unit-norm item embeddings) down
    to its first relevant item, ``block`` questions at a time; ties rank the lower item first, a
    symmetric pool never a question itself. A question with no relevant item is a ValueError."""
    questions = np.asarray(questions, dtype=np.int64)
    if questions.ndim != 1 or len(np.unique(questions)) != len(questions):
        raise ValueError("questions must be a 1-d array of distinct left-item indices")
    if len(questions) and (questions.min() < 0 or questions.max() >= pool.space.n_left):
        raise ValueError(f"question indices must lie in [0, {pool.space.n_left})")
    if left.shape[0] != pool.space.n_left or right.shape[0] != pool.space.n_right:
        raise ValueError(
            f"embeddings of {left.shape[0]} x {right.shape[0]} items do not match "
            f"the pool's {pool.space.n_left} x {pool.space.n_right}"
        )
    rows, cols = pool.space.decode(pool.positives)
    if pool.symmetric:  # a positive pair is relevant to both its questions
        rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
    shape = (pool.space.n_left, pool.space.n_right)
    relevant = csr_matrix((np.ones(len(rows), bool), (rows, cols)), shape=shape)
    assessments, items = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for first in range(0, len(questions), block):  # (block, n_right) scores at a time
        part = questions[first : first + block]
        scores = left[part].astype(np.float32) @ right.astype(np.float32).T
        if pool.symmetric:
            scores[np.arange(len(part)), part] = -np.inf  # never itself
        order = np.argsort(-scores, axis=1, kind="stable")  # rank order, ties by item index
        ranked = np.take_along_axis(relevant[part].toarray(), order, axis=1)
        if not (found := ranked.any(axis=1)).all():
            raise ValueError(
                f"question(s) {part[~found][:5].tolist()} of {pool.task}/{pool.split} have no "
                "relevant item: scanning to the first relevant one would never stop"
            )
        assessments.append(np.argmax(ranked, axis=1).astype(np.int64) + 1)
        scanned = np.arange(order.shape[1])[None, :] < assessments[-1][:, None]
        items.append(order[scanned].astype(np.int64))  # row-major: question by question
    assessments, items = np.concatenate(assessments), np.concatenate(items)
    ids = pool.space.encode(np.repeat(questions, assessments), items)
    return Scan(questions, assessments, items, ids, pool.labels(ids))
