"""Nearest-neighbour candidate pairs (paper section 4.2.2): each left item's top-m right items by
cosine, via faiss (or torch's :class:`TorchFlat` on a GPU faiss cannot use)."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import numpy as np

from ..data.pairs import PairSpace, as_id_set, check_id_set, isin_sorted

__all__ = [
    "neighbour_pairs",
    "build_index",
    "search",
    "faiss_gpus",
    "TorchFlat",
    "first_m_per_row",
    "candidate_recall",
]


def faiss_gpus() -> int:
    """GPUs faiss can use: 0 with faiss-cpu, without a GPU, or with ``PAIRLAB_FAISS_GPU=0``."""
    import faiss

    off = os.environ.get("PAIRLAB_FAISS_GPU", "1") == "0"
    return 0 if off or not hasattr(faiss, "StandardGpuResources") else int(faiss.get_num_gpus())


def _torch_gpu_for_exact_search() -> bool:
    """True where torch sees a GPU and faiss cannot use one (faiss-cpu, or no faiss)."""
    if "torch" not in sys.modules and _torch_is_a_cpu_build():
        return False
    import torch

    try:
        return torch.cuda.is_available() and faiss_gpus() == 0
    except ImportError:  # no faiss at all
        return True


def _torch_is_a_cpu_build() -> bool:
    """Whether torch is a CPU-only wheel (``2.13.0+cpu``), read without importing it (seconds)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch").endswith("+cpu")
    except PackageNotFoundError:  # not installed: `import torch` says so
        return False


class TorchFlat:
    """Exact inner-product search in torch: blocks of queries times every vector, then top-k;
    faiss' ``"Flat"`` hits up to the order of equal scores. Float32 without TF32, as faiss."""

    def __init__(self, vectors: np.ndarray, *, device: str = "cuda", block: int = 4096):
        import torch

        self.device, self.block = device, block
        self.vectors = torch.from_numpy(_as_vectors("vectors", vectors)).to(device)
        self.ntotal = len(vectors)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        import torch

        k_found = min(k, self.ntotal)
        scores = np.full((len(queries), k), np.finfo(np.float32).min, dtype=np.float32)  # as faiss
        hits = np.full((len(queries), k), -1, dtype=np.int64)
        tf32 = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        try:
            for start in range(0, len(queries), self.block):
                q = torch.from_numpy(np.ascontiguousarray(queries[start : start + self.block]))
                top = torch.topk(q.to(self.device) @ self.vectors.T, k_found, dim=1)
                scores[start : start + len(q), :k_found] = top.values.cpu().numpy()
                hits[start : start + len(q), :k_found] = top.indices.cpu().numpy()
        finally:
            torch.backends.cuda.matmul.allow_tf32 = tf32
        return scores, hits


def build_index(vectors: np.ndarray, *, index: str = "Flat", nprobe: int = 10):
    """A faiss inner-product index over unit vectors (float32, (n, dim)), on every GPU faiss
    sees; ``index`` a faiss index-factory string (``"Flat"`` exact, ``"IVF1000,Flat"`` the
    original code's). An exact search where only torch sees a GPU is :class:`TorchFlat`."""
    vectors = _as_vectors("vectors", vectors)
    if index == "Flat" and _torch_gpu_for_exact_search():
        return TorchFlat(vectors, device="cuda")
    import faiss

    built = faiss.index_factory(vectors.shape[1], index, faiss.METRIC_INNER_PRODUCT)
    if not built.is_trained:
        with _one_faiss_thread():
            built.train(vectors)
    built.add(vectors)
    gpus = faiss_gpus() > 0
    if gpus:
        built = faiss.index_cpu_to_all_gpus(built)
    if "IVF" in index:  # nprobe applies to IVF indexes only
        space = faiss.GpuParameterSpace() if gpus else faiss.ParameterSpace()
        space.set_index_parameter(built, "nprobe", nprobe)
    return built


def search(built, queries: np.ndarray, k: int, *, batch_size: int = 16384):
    """Top-``k`` (scores, indices) of each query, (n_queries, k) each; -1 marks a missing hit."""
    queries = _as_vectors("queries", queries)
    with _one_faiss_thread():  # batches bound the result's memory
        parts = [
            built.search(queries[s : s + batch_size], k) for s in range(0, len(queries), batch_size)
        ]
    return tuple(np.concatenate(part) for part in zip(*parts))


@contextmanager
def _one_faiss_thread():
    """faiss on the CPU with one thread: more threads change inner products' last bit, reordering
    tied hits at the m-th place (and run folders' digests). 15 s against 12 s for QQP."""
    import faiss

    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(threads)


def neighbour_pairs(
    space: PairSpace,
    left: np.ndarray,
    right: np.ndarray | None = None,
    *,
    m: int,
    exclude=None,
    index: str = "Flat",
    items=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of each left item (or of ``items`` only) with its ``m`` nearest right items:
    sorted unique int64 pair ids and float32 cosines, without ``exclude``. ``left`` (n_left,
    dim), ``right`` (n_right, dim): unit-norm embeddings (``right`` is ``left`` if symmetric)."""
    if not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m (neighbours per item) must be a positive integer, got {m!r}")
    right = left if right is None else right
    if len(left) != space.n_left or len(right) != space.n_right:
        raise ValueError(
            f"embeddings of {len(left)} x {len(right)} items do not match the "
            f"pool's {space.n_left} x {space.n_right}"
        )
    queried = np.arange(len(left)) if items is None else np.unique(np.asarray(items, np.int64))
    if len(queried) and (queried[0] < 0 or queried[-1] >= len(left)):
        raise ValueError(f"items must lie in [0, {len(left)}), got {queried[0]}..{queried[-1]}")
    k = min(m + int(space.symmetric), space.n_right)  # one extra hit: the item itself
    scores, hits = search(build_index(right, index=index), left[queried], k)
    rows = np.repeat(queried, k)
    cols, scores = hits.ravel().astype(np.int64), scores.ravel()
    keep = cols >= 0
    if space.symmetric:
        keep &= cols != rows
        keep &= first_m_per_row(rows, keep, m)
    ids = space.encode(rows[keep], cols[keep])
    ids, scores = _dedup(ids, scores[keep])
    if exclude is not None:
        drop = isin_sorted(ids, as_id_set(exclude))
        ids, scores = ids[~drop], scores[~drop]
    return ids, scores


def candidate_recall(candidates, positives, labelled=None) -> float:
    """The share of the positives not yet ``labelled`` among ``candidates`` (all sorted, distinct
    int64 pair ids); ``nan`` when every positive is labelled already."""
    labelled = check_id_set("labelled", [] if labelled is None else labelled)
    candidates = check_id_set("candidates", candidates)
    positives = check_id_set("positives", positives)
    remaining = positives[~isin_sorted(positives, labelled)]
    return float(isin_sorted(remaining, candidates).mean()) if len(remaining) else float("nan")


def first_m_per_row(rows: np.ndarray, keep: np.ndarray, m: int) -> np.ndarray:
    """Within each row (``rows`` grouped, each row's hits in rank order), keep only the first
    ``m`` kept hits (the self hit of a symmetric search may be anywhere)."""
    rank = np.cumsum(keep) - 1
    row_start = np.searchsorted(rows, rows)
    before_row = np.where(row_start > 0, np.cumsum(keep)[np.maximum(row_start - 1, 0)], 0)
    return (rank - before_row) < m


def _dedup(ids: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique ids, each with its highest score ((i, j) and (j, i) can both be found)."""
    if len(ids) == 0:
        return ids, scores.astype(np.float32)
    order = np.argsort(ids, kind="stable")  # one integer key: 2x faster than a lexsort with scores
    ids, scores = ids[order], scores[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    return ids[starts], np.maximum.reduceat(scores, starts).astype(np.float32)


def _as_vectors(name: str, vectors) -> np.ndarray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) == 0:
        raise ValueError(f"{name} must be a non-empty 2-d array, got shape {vectors.shape}")
    if not np.isfinite(vectors).all():
        raise ValueError(f"{name} contain NaN or infinite values")
    return vectors
