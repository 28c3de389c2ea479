import numpy as np
import pytest

from pairlab.data.pairs import PairSpace, as_id_set
from pairlab.evaluation import candidates
from pairlab.evaluation.candidates import neighbour_pairs


def unit(rng, n, d=16):
    x = rng.normal(size=(n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_symmetric_matches_brute_force_and_has_each_pair_once():
    rng = np.random.default_rng(0)
    emb = unit(rng, 300)
    emb[1] = emb[0]  # an exact duplicate: its self hit may not come first
    space = PairSpace(300, 300, True)
    ids, scores = neighbour_pairs(space, emb, m=7)
    sims = emb @ emb.T
    np.fill_diagonal(sims, -np.inf)
    top = np.argsort(-sims, axis=1, kind="stable")[:, :7]
    brute = as_id_set(space.encode(np.repeat(np.arange(300), 7), top.ravel()))
    assert np.array_equal(ids, brute)
    left, right = space.decode(ids)
    assert (left < right).all() and len(np.unique(ids)) == len(ids)
    assert np.allclose(scores, np.einsum("nd,nd->n", emb[left], emb[right]), atol=1e-5)


def test_asymmetric_matches_brute_force():
    rng = np.random.default_rng(1)
    q, s = unit(rng, 40), unit(rng, 500)
    space = PairSpace(40, 500, False)
    ids, _ = neighbour_pairs(space, q, s, m=5)
    top = np.argsort(-(q @ s.T), axis=1)[:, :5]
    assert np.array_equal(ids, as_id_set(space.encode(np.repeat(np.arange(40), 5), top.ravel())))


def test_tied_neighbours_do_not_depend_on_the_thread_count():
    """Every item has a twin (the same text twice): the m-th place is a tie that faiss'
    multi-threaded inner products broke by the thread count, so candidates, strata and run
    digests changed with $OMP_NUM_THREADS (QQP's test stratum differed by one pair)."""
    import faiss

    rng = np.random.default_rng(4)
    emb = unit(rng, 2000, d=384)
    emb[1000:] = emb[:1000]
    space = PairSpace(2000, 2000, True)
    before = faiss.omp_get_max_threads()
    found = {}
    try:
        for threads in (1, 2, 4):
            faiss.omp_set_num_threads(threads)
            found[threads] = neighbour_pairs(space, emb, m=10)[0]
            assert faiss.omp_get_max_threads() == threads  # the caller's setting is restored
    finally:
        faiss.omp_set_num_threads(before)
    assert np.array_equal(found[1], found[2]) and np.array_equal(found[1], found[4])


def test_exclusion_removes_labelled_pairs():
    rng = np.random.default_rng(2)
    emb = unit(rng, 100)
    space = PairSpace(100, 100, True)
    ids, _ = neighbour_pairs(space, emb, m=5)
    labelled = ids[::3]
    kept, _ = neighbour_pairs(space, emb, m=5, exclude=labelled)
    assert np.array_equal(kept, np.setdiff1d(ids, labelled))


def test_ivf_index_finds_most_exact_neighbours():
    rng = np.random.default_rng(3)
    emb = unit(rng, 2000)
    space = PairSpace(2000, 2000, True)
    exact, _ = neighbour_pairs(space, emb, m=10)
    approx, _ = neighbour_pairs(space, emb, m=10, index="IVF10,Flat")
    assert np.array_equal(approx, exact)  # build_index's nprobe 10 = nlist: exhaustive


def test_bad_input():
    space = PairSpace(10, 10, True)
    emb = unit(np.random.default_rng(0), 10)
    with pytest.raises(ValueError, match="positive integer"):
        neighbour_pairs(space, emb, m=0)
    with pytest.raises(ValueError, match="do not match"):
        neighbour_pairs(PairSpace(11, 11, True), emb, m=2)
    bad = emb.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        neighbour_pairs(space, bad, m=2)


def test_index_moves_to_the_gpus_faiss_sees(monkeypatch):
    """With faiss-gpu and a GPU (simulated here: this machine has neither), the built index is
    handed to ``index_cpu_to_all_gpus`` and searched there; ``PAIRLAB_FAISS_GPU=0`` opts out."""
    import faiss

    from pairlab.evaluation import candidates

    moved = []
    monkeypatch.setattr(faiss, "StandardGpuResources", object, raising=False)
    monkeypatch.setattr(faiss, "get_num_gpus", lambda: 1)
    monkeypatch.setattr(
        faiss, "index_cpu_to_all_gpus", lambda index: moved.append(index) or index, raising=False
    )
    rng = np.random.default_rng(3)
    emb = unit(rng, 50)
    ids, _ = neighbour_pairs(PairSpace(50, 50, True), emb, m=3)
    assert len(moved) == 1 and moved[0].ntotal == 50 and len(ids) > 0
    monkeypatch.setenv("PAIRLAB_FAISS_GPU", "0")
    assert candidates.faiss_gpus() == 0
    neighbour_pairs(PairSpace(50, 50, True), emb, m=3)
    assert len(moved) == 1


def test_dedup_keeps_each_id_once_with_its_highest_score():
    from pairlab.evaluation.candidates import _dedup

    rng = np.random.default_rng(5)
    ids = rng.integers(0, 300, 2000)
    scores = np.round(rng.random(2000), 2).astype(np.float32)  # ties included
    out_ids, out_scores = _dedup(ids, scores)
    assert np.array_equal(out_ids, np.unique(ids))
    best = {}
    for i, s in zip(ids.tolist(), scores.tolist()):
        best[i] = max(best.get(i, -1.0), s)
    assert np.array_equal(out_scores, np.array([best[i] for i in out_ids.tolist()], np.float32))
    empty = _dedup(np.empty(0, np.int64), np.empty(0, np.float32))
    assert len(empty[0]) == len(empty[1]) == 0


def test_candidate_recall_counts_the_positives_still_to_find():
    from pairlab.evaluation.candidates import candidate_recall

    positives = np.array([2, 5, 7, 9, 11])
    # 5 is labelled already: of 2, 7, 9 and 11 the candidates hold 2 and 9
    assert candidate_recall([1, 2, 3, 9, 50], positives, [5, 100]) == 0.5
    assert candidate_recall([2, 7, 9, 11], positives) == 0.8  # nothing labelled yet: 4 of 5
    assert candidate_recall(np.empty(0, np.int64), positives, [5]) == 0.0
    assert np.isnan(candidate_recall([1, 2], positives, positives))  # nothing left to find
    for bad in ([3, 2], [2, 2], [0.5, 1.0], [[1, 2]]):
        with pytest.raises(ValueError, match="candidates must be"):
            candidate_recall(bad, positives)


def test_torch_exact_search_finds_faiss_exact_hits():
    """The torch search (the exact search on a GPU faiss-cpu cannot use), run here on the CPU in
    blocks smaller than the queries, returns faiss' exact hits and scores; k above the vectors
    pads with -1 as faiss does."""
    import faiss

    from pairlab.evaluation.candidates import TorchFlat

    rng = np.random.default_rng(5)
    right, left = unit(rng, 300), unit(rng, 70)
    exact = faiss.IndexFlatIP(16)
    exact.add(right)
    want_scores, want_hits = exact.search(left, 12)
    scores, hits = TorchFlat(right, device="cpu", block=32).search(left, 12)
    np.testing.assert_array_equal(hits, want_hits)
    np.testing.assert_allclose(scores, want_scores, rtol=1e-5, atol=1e-6)
    small = TorchFlat(right[:5], device="cpu")
    scores, hits = small.search(left, 8)
    assert (hits[:, 5:] == -1).all() and (hits[:, :5] >= 0).all()
    assert (scores[:, 5:] == np.finfo(np.float32).min).all()


def test_exact_search_runs_in_torch_where_a_gpu_has_no_faiss(monkeypatch):
    """Where torch sees a GPU and faiss cannot use it (simulated: the GPU is this CPU), the exact
    candidate search runs in torch and finds the pairs faiss finds; approximate indexes stay
    with faiss."""
    import torch

    from pairlab.evaluation import candidates

    rng = np.random.default_rng(6)
    emb = unit(rng, 120)
    want = neighbour_pairs(PairSpace(120, 120, True), emb, m=4)
    built = []

    class OnThisCpu(candidates.TorchFlat):
        def __init__(self, vectors, *, device, block=4096):
            built.append(device)
            super().__init__(vectors, device="cpu", block=block)

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(candidates, "TorchFlat", OnThisCpu)
    got = neighbour_pairs(PairSpace(120, 120, True), emb, m=4)
    assert built == ["cuda"]
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    neighbour_pairs(PairSpace(120, 120, True), emb, m=4, index="IVF4,Flat")
    assert built == ["cuda"]


def test_a_cpu_build_of_torch_is_not_imported_to_learn_it_has_no_gpu():
    """The exact search asks whether torch sees a GPU; a process with no torch model (a
    reliability test's stand-in) does not pay torch's import for the answer where torch is a
    CPU build."""
    import subprocess
    import sys

    if not candidates._torch_is_a_cpu_build():
        pytest.skip("torch here is not a CPU build")
    code = (
        "import sys; from pairlab.evaluation import candidates as c; "
        "print(c._torch_gpu_for_exact_search(), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_the_build_is_read_from_the_installed_version(monkeypatch):
    import importlib.metadata as metadata

    def version(v):
        def read(name):
            if v is None:
                raise metadata.PackageNotFoundError(name)
            return v

        return read

    for installed, cpu in (("2.13.0+cpu", True), ("2.13.0+cu121", False), ("2.13.0", False)):
        monkeypatch.setattr(metadata, "version", version(installed))
        assert candidates._torch_is_a_cpu_build() is cpu
    monkeypatch.setattr(metadata, "version", version(None))
    assert candidates._torch_is_a_cpu_build() is False
