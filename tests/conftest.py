"""Shared fixtures: the real data folder, and small synthetic pools with known answers."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from pairlab.data import Pool
from pairlab.pairs import PairSpace, as_id_set

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real data (../shared/data beside the clone, or $PAIRLAB_DATA_DIR). Its absence is a
    failure, not a skip: CI always has it."""
    path = Path(os.environ.get("PAIRLAB_DATA_DIR") or ROOT.parent / "shared" / "data")
    if not path.is_absolute():
        path = (ROOT / path).resolve()
    assert path.is_dir(), f"real data folder missing: {path} (set PAIRLAB_DATA_DIR)"
    return path


def clustered_pool(n_items=400, dim=8, noise=0.35, seed=0, symmetric=True) -> tuple[Pool, np.ndarray]:
    """A symmetric pool whose positives are pairs inside small clusters, with unit embeddings
    placed near each cluster's centre (so the cosine is an informative but imperfect scorer)."""
    rng = np.random.default_rng(seed)
    sizes = rng.choice([1, 1, 1, 2, 2, 3, 4], size=n_items)
    cluster = np.repeat(np.arange(len(sizes)), sizes)[:n_items]
    centres = rng.normal(size=(cluster.max() + 1, dim))
    emb = centres[cluster] + noise * rng.normal(size=(n_items, dim)) * np.sqrt(dim)
    emb = (emb / np.linalg.norm(emb, axis=1, keepdims=True)).astype(np.float32)
    space = PairSpace(n_items, n_items, True)
    i, j = np.triu_indices(n_items, k=1)
    same = cluster[i] == cluster[j]
    positives = as_id_set(space.encode(i[same], j[same]))
    texts = np.array([f"item {k} of cluster {c}" for k, c in enumerate(cluster)], dtype=object)
    pool = Pool("synthetic", "dev", texts, texts, True, positives, np.empty(0, dtype=np.int64))
    return pool, emb
