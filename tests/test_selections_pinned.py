"""Every registered strategy's selections through the whole loop, pinned: a refactoring of the
loop or the strategies that changes any batch (or how often the model is trained) fails here.
The digests were recorded before the candidate search became a wrapper."""

import hashlib

import numpy as np
import pytest
from conftest import VECTORS, FakeLearner, run

PINNED = {  # case: (digest of every batch and its labels, (round, labels) of each training,
    #         candidates per round, test AP)
    "adaptive_retrieval": (
        "78ea8c73bc630e92",
        [(1, 12), (2, 30), (3, 57)],
        [595, 584, 571],
        0.0884812844,
    ),
    "random": ("0b62c2d6e5079f3c", [(1, 12), (2, 30), (3, 57)], [0, 0, 0], 0.0884812844),
    "random_candidates": (
        "6446e9413a096d3a",
        [(1, 12), (2, 30), (3, 57)],
        [595, 583, 565],
        0.0884812844,
    ),
    "random_seed_1": ("e103b0f01ba776aa", [(1, 12), (2, 30), (3, 57)], [0, 0, 0], 0.0884812844),
    "stated": ("423fa21b20f40e94", [(1, 12), (2, 30), (3, 57)], [0, 0, 0], 0.0884812844),
    "static_retrieval": (
        "a610ca360ed3c721",
        [(1, 12), (2, 30), (3, 57)],
        [595, 583, 565],
        0.0884812844,
    ),
    "static_retrieval_no_curve": ("a610ca360ed3c721", [(3, 57)], [595, 583, 565], 0.0884812844),
    "stratified_all_positives": ("d47b14bbdb7d5ae4", [(1, 200)], [0], 0.0884812844),
    "stratified_match": ("d0766fd68f80251b", [(1, 12), (2, 30), (3, 57)], [0, 0, 0], 0.0884812844),
    "uncertainty": ("78ea8c73bc630e92", [(1, 12), (2, 30), (3, 57)], [595, 584, 571], 0.0884812844),
    "uncertainty_no_curve": (
        "78ea8c73bc630e92",
        [(1, 12), (2, 30), (3, 57)],
        [595, 584, 571],
        0.0884812844,
    ),
}


def _digest(folder, rounds):
    h = hashlib.sha256()
    for i in range(1, rounds + 1):
        with np.load(folder / "rounds" / f"round_{i:02d}.npz") as f:
            h.update(f["ids"].tobytes() + f["labels"].tobytes())
    return h.hexdigest()[:16]


CASES = {
    "random": {},
    "static_retrieval": {},
    "adaptive_retrieval": {},
    "uncertainty": {},
    "random_candidates": {},
    "stated": {},
    "stratified_match": {"strategy_params": {"n_positive": 10, "n_negative": 47}},
    "stratified_all_positives": {"batches": (200,), "curve": False},
    "uncertainty_no_curve": {"strategy": "uncertainty", "curve": False, "seed": 3},
    "static_retrieval_no_curve": {"strategy": "static_retrieval", "curve": False, "seed": 1},
    "random_seed_1": {"strategy": "random", "seed": 1},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_selections_and_trainings_are_pinned(tmp_path, case):
    extra = dict(CASES[case])
    strategy = extra.pop("strategy", case)
    learner = FakeLearner(VECTORS)
    active, folder = run(tmp_path, strategy=strategy, learner=learner, **extra)
    result = active.run()
    got = (
        _digest(folder, len(result["records"])),
        learner.trained,
        [r["candidates"] for r in result["records"]],
        round(result["test"]["ap"], 10),
    )
    assert got == PINNED[case], f"{case}: {got!r}"
