"""The QQP and WikiQA tasks, pinned: every split's members (texts, in order), positives, stated
negatives and notes. The digests were recorded with the builders as they were before QQP and
WikiQA became :func:`pairlab.data.load_pairs` with their column names (issue 18), so a change in
any split, pair id or count fails here. The synthetic cases run on any clone; the real-data cases
skip without the data."""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from pairlab.data import SPLITS, build_qqp, build_wikiqa, load_task
from pairlab.io import to_json


def digest(task) -> str:
    h = hashlib.sha256()
    for split in SPLITS:
        pool = task[split]
        for texts in (pool.left_texts, pool.right_texts):
            h.update("\x1f".join(map(str, texts)).encode())
        h.update(np.asarray(pool.positives, dtype=np.int64).tobytes())
        h.update(np.asarray(pool.stated_negatives, dtype=np.int64).tobytes())
        h.update(repr((pool.task, pool.split, pool.symmetric)).encode())
    h.update(json.dumps(to_json(task.notes), sort_keys=True).encode())
    return h.hexdigest()[:16]


def synthetic_qqp(seed: int = 7, n_rows: int = 600) -> pd.DataFrame:
    """Duplicate clusters, repeated qids, a qid with two texts, a self pair, two qids sharing a
    text, and a stated negative the closure contradicts: every case the builder counts."""
    rng = np.random.default_rng(seed)
    qid1 = rng.integers(1, 1500, n_rows)
    qid2 = rng.integers(1, 1500, n_rows)
    label = (rng.random(n_rows) < 0.35).astype(np.int8)
    qid1[:3], qid2[:3], label[:3] = (10, 11, 10), (11, 12, 12), (1, 1, 0)  # the closure flips row 3
    text = np.array([f"question {q // 3 if q % 50 == 0 else q}" for q in range(1500)], dtype=object)
    q1, q2 = text[qid1], text[qid2].copy()
    q2[5] = "a second text for a qid"
    qid2[9] = qid1[9]
    return pd.DataFrame(
        {"qid1": qid1, "qid2": qid2, "question1": q1, "question2": q2, "is_duplicate": label}
    ).astype({"qid1": "int64", "qid2": "int64", "is_duplicate": "int8"})


def synthetic_wikiqa(seed: int = 7, titles: bool = True) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for s, split in enumerate(SPLITS):
        n = 300 - 80 * s
        q = rng.integers(0, 60 - 15 * s, n)
        sentence = rng.integers(0, 150, n)
        out[split] = pd.DataFrame(
            {
                "question": [
                    f"q{k}" if k < 3 else f"{split} q{k}" for k in q
                ],  # q0-q2 in every split
                "title": [f"doc {k % 17}" for k in sentence] if titles else [None] * n,
                "sentence": [f"sentence {k}" for k in sentence],
                "label": (rng.random(n) < 0.12).astype(int),
            }
        )
    return out


SYNTHETIC = {  # case -> digest
    "qqp seed 0": "ca1dbe46f3cb9567",
    "qqp seed 3 capped": "624e4421dedcfea4",
    "qqp fractions 0.6/0.2/0.2": "46b34ecab6275717",
    "wikiqa titles": "e4143ee712b4a6ff",
    "wikiqa no titles capped": "aae46db28f9c4e0d",
}


def synthetic_task(case: str):
    if case == "qqp seed 0":
        return build_qqp(synthetic_qqp())
    if case == "qqp seed 3 capped":
        return build_qqp(synthetic_qqp(), seed=3, max_items={"train": 60, "dev": 30, "test": 30})
    if case == "qqp fractions 0.6/0.2/0.2":
        return build_qqp(synthetic_qqp(1), fractions=(0.6, 0.2, 0.2), max_items=80)
    if case == "wikiqa titles":
        return build_wikiqa(synthetic_wikiqa())
    return build_wikiqa(
        synthetic_wikiqa(3, titles=False), seed=5, max_items={"train": 20, "dev": 9, "test": 9}
    )


@pytest.mark.parametrize("case", sorted(SYNTHETIC))
def test_synthetic_tasks_are_pinned(case):
    assert digest(synthetic_task(case)) == SYNTHETIC[case], case


REAL = {  # (task, seed, max_items) -> digest
    ("qqp", 0, None): "20fbb77202edb1e3",
    ("qqp", 1, None): "098f6d4529788d37",
    ("qqp", 0, "smoke"): "871eb8b831fd42e4",
    ("wikiqa", 0, None): "31b88e0ba56ba78e",
    ("wikiqa", 0, "smoke"): "934b9c2e73018155",
}
SMOKE = {
    "qqp": {"train": 300, "dev": 150, "test": 150},
    "wikiqa": {"train": 120, "dev": 50, "test": 50},
}


@pytest.mark.parametrize("key", sorted(REAL, key=str))
def test_real_tasks_are_pinned(data_dir, key):
    name, seed, cap = key
    task = load_task(name, data_dir, seed=seed, max_items=SMOKE[name] if cap else None)
    assert digest(task) == REAL[key], key
