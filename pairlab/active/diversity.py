"""Diversity sampling (Xu et al. 2007; Althammer et al. 2023 section 5.3): k-means of the
representations under the current model, k = the batch size, and one uniformly random member
of each cluster. The clustering is scikit-learn's KMeans with k-means++ seeding, seeded from the
round's generator so a seed gives the same picks (faiss' k-means seeds with random rows, which
on well-separated clusters often starts two centroids in one cluster and never recovers)."""

from __future__ import annotations

import numpy as np

from ..data.pairs import PairSpace

__all__ = ["kmeans_pick", "pair_features"]


def kmeans_pick(vectors, k: int, rng: np.random.Generator, *, max_iter: int = 100) -> np.ndarray:
    """(k,) sorted int64 row indices of ``vectors`` (n, dim): k-means into ``k`` clusters, one
    random row of each. Where the clustering leaves clusters empty (fewer distinct rows than
    ``k``), the remaining picks are uniform among the rows not picked."""
    import warnings

    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or not np.isfinite(vectors).all():
        raise ValueError(f"vectors must be a finite 2-d array, got shape {vectors.shape}")
    n = len(vectors)
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise ValueError(f"k must be an integer in [1, {n}] (one pick per cluster), got {k!r}")
    seed = int(rng.integers(2**31 - 1))
    if k == n:
        return np.arange(n, dtype=np.int64)
    with warnings.catch_warnings():  # fewer distinct rows than k: handled below
        warnings.simplefilter("ignore", ConvergenceWarning)
        cluster = (
            KMeans(
                n_clusters=int(k), init="k-means++", n_init=1, max_iter=max_iter, random_state=seed
            )
            .fit(vectors)
            .labels_
        )
    order = np.lexsort((rng.random(n), cluster))  # within a cluster, a random member first
    firsts = order[np.r_[True, cluster[order][1:] != cluster[order][:-1]]]
    if len(firsts) < k:
        rest = np.setdiff1d(np.arange(n), firsts)
        firsts = np.concatenate([firsts, rng.choice(rest, size=k - len(firsts), replace=False)])
    return np.sort(firsts).astype(np.int64)


def pair_features(space: PairSpace, left: np.ndarray, right: np.ndarray, pair_ids) -> np.ndarray:
    """(n, 2 * dim) float32 order-free representation of pairs: ``[u * v, |u - v|]`` of their
    two items' embeddings (the features Sentence-BERT's classifier reads, without the order)."""
    i, j = space.decode(pair_ids)
    u, v = left[i], right[j]
    return np.concatenate([u * v, np.abs(u - v)], axis=1).astype(np.float32)
