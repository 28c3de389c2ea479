"""Query by committee (Seung et al. 1992; for rankers Althammer et al. 2023 section 5.2): vote
entropy ``-sum_c (V_c / M) log(V_c / M)`` (V_c of M members vote outcome c) on labels, or summed
over every pair of a question's candidates (who ranks which higher: Althammer et al.'s eq. 4).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = [
    "vote_entropy",
    "label_vote_entropy",
    "ordering_vote_entropy",
    "check_committee",
    "train_committee",
    "member_scores",
]


def vote_entropy(votes) -> np.ndarray:
    """(...,) float64 vote entropy from ``votes`` (..., n_outcomes): how many members voted for
    each outcome (every row sums to the committee size)."""
    from scipy.stats import entropy

    votes = np.asarray(votes, dtype=np.float64)
    if votes.ndim < 1 or votes.shape[-1] < 2 or (votes < 0).any():
        raise ValueError(
            f"votes must be non-negative counts over >= 2 outcomes, got shape {votes.shape}"
        )
    if not (votes.sum(axis=-1) > 0).all():
        raise ValueError("every decision needs at least one vote")
    return entropy(votes, axis=-1)  # of the shares V_c / M, with 0 log 0 = 0


def label_vote_entropy(logits) -> np.ndarray:
    """(n,) vote entropy of the members' labels (logit >= 0) from logits (n_members, n)."""
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 2 or len(logits) < 2:
        raise ValueError(f"logits must be (n_members >= 2, n), got shape {logits.shape}")
    positive = (logits >= 0).sum(axis=0)
    return vote_entropy(np.stack([positive, len(logits) - positive], axis=-1))


def ordering_vote_entropy(scores, *, block: int = 256) -> np.ndarray:
    """(n_questions,) vote entropy of the members' orderings of each question's candidates
    (``scores`` (n_members, n_questions, k), higher first, ties by position), summed over every
    pair of candidates: 0 when all agree, ``log(2) * k * (k - 1) / 2`` for two reversed."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 3 or scores.shape[0] < 2 or scores.shape[2] < 2:
        raise ValueError(
            f"scores must be (n_members >= 2, n_questions, k >= 2), got shape {scores.shape}"
        )
    if not np.isfinite(scores).all():
        raise ValueError("member scores must be finite")
    order = np.argsort(-scores, axis=2, kind="stable")
    rank = np.argsort(order, axis=2)  # (M, Q, k): position of each candidate in each ordering
    upper = np.triu(np.ones((scores.shape[2],) * 2, dtype=bool), k=1)  # each pair i < j once
    out = np.empty(scores.shape[1])
    for start in range(0, scores.shape[1], block):  # bounds the (M, block, k, k) comparisons
        r = rank[:, start : start + block]
        above = (r[:, :, :, None] < r[:, :, None, :]).sum(axis=0)[:, upper]  # votes for i over j
        votes = np.stack([above, scores.shape[0] - above], axis=-1)
        out[start : start + block] = vote_entropy(votes).sum(axis=-1)
    return out


def check_committee(members, share) -> tuple[int, float]:
    """``(members, share)`` as an int >= 2 and a float in (0, 1], or a ValueError naming it."""
    if not isinstance(members, (int, np.integer)) or members < 2:
        raise ValueError(f"a committee needs at least 2 members (an integer), got {members!r}")
    if not 0 < share <= 1:
        raise ValueError(f"share must be in (0, 1], got {share!r}")
    return int(members), float(share)


def train_committee(
    train: Callable,
    ids: np.ndarray,
    labels: np.ndarray,
    rng: np.random.Generator,
    *,
    members: int = 2,
    share: float = 0.8,
) -> list:
    """``members`` models, member k trained by ``train(ids, labels, member=k)`` on its own uniform
    ``share`` (at least one) of the answered labels (-1, no answer, is never trained on)."""
    ids, labels = np.asarray(ids, np.int64), np.asarray(labels, np.int8)
    if ids.shape != labels.shape:
        raise ValueError(f"{len(ids)} labelled ids but {len(labels)} labels")
    answered = labels >= 0
    ids, labels = ids[answered], labels[answered]
    if not len(ids):
        raise ValueError("a committee needs labelled data to train on")
    size = max(1, int(round(share * len(ids))))
    parts = [np.sort(rng.choice(len(ids), size=size, replace=False)) for _ in range(members)]
    return [train(ids[part], labels[part], member=k) for k, part in enumerate(parts)]


def member_scores(
    model, left: np.ndarray, right: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """A member's calibrated logits (its cosines where it has no calibration) of the item pairs
    ``(rows[i], cols[i])``, from its item embeddings ``left`` and ``right``."""
    cosine = np.einsum("...d,...d->...", left[rows], right[cols]).astype(np.float64)
    calibration = getattr(model, "calibration", None)
    return calibration.logits(cosine) if calibration is not None else cosine
