"""Shared fixtures: the real data folder, small synthetic pools with known answers, and a fast,
deterministic stand-in learner for the active-learning loop (used by the unit tests and the
browser tests' widget notebook)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pairlab.active import ActiveConfig, ActiveRun, run_folder
from pairlab.data import Pool
from pairlab.data.pairs import PairSpace, as_id_set
from pairlab.evaluation import EvalConfig, build_eval_set
from pairlab.models.cosinebert import Calibration

ROOT = Path(__file__).resolve().parents[1]


FIXTURES = ROOT / "fixtures"  # synthetic files made by fixtures/make_fixtures.py


def pytest_configure(config):
    """Under ``pytest -n N`` each worker gets its share of the cores for torch's thread pool
    (and the processes it starts, for theirs), as the notebook runner gives its kernels. N
    workers each with a pool of every core oversubscribe the machine, and a pool whose threads
    wait on descheduled ones turns a millisecond op into tens: on 2 cores with 2 workers, two
    model tests of test_models.py take 55 s with 2 threads a worker and 15 s with 1."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers < 2 or "OMP_NUM_THREADS" in os.environ:
        return
    import torch

    from pairlab.runner import threads_per_job

    threads = threads_per_job(workers)
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(threads)
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def _no_models_from_an_earlier_test():
    """Each test starts with no models held in memory from another test's training (the
    learner's :data:`~pairlab.active.learner.RECENT`), so a test that counts trainings counts
    its own."""
    from pairlab.active.learner import EMBEDDINGS, RECENT

    RECENT.clear()
    EMBEDDINGS.clear()


def real_data_dir() -> Path:
    """Where the real data is looked for: $PAIRLAB_DATA_DIR, else ../shared/data beside the
    clone, else ./data (where `make data` puts it)."""
    if os.environ.get("PAIRLAB_DATA_DIR"):
        path = Path(os.environ["PAIRLAB_DATA_DIR"])
        return path if path.is_absolute() else (ROOT / path).resolve()
    shared = ROOT.parent / "shared" / "data"
    return shared if shared.is_dir() else ROOT / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real data (QQP and WikiQA). Without it the tests that need it skip, and say how to get
    it; CI always has it, and the loaders' own tests run on the synthetic fixture anyway."""
    path = real_data_dir()
    if not ((path / "qqp").is_dir() and (path / "wikiqa").is_dir()):
        pytest.skip(
            f"real data not found in {path} (no qqp/ and wikiqa/ there): run `make data`, "
            "or set PAIRLAB_DATA_DIR to a folder holding QQP and WikiQA"
        )
    return path


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> str:
    """A sentence-transformers folder holding a 2-layer, 32-wide BERT with MiniLM's tokenizer,
    randomly initialised (seeded): for tests of mechanics (saving, loading, caching, sharing
    models), where the real model's 90 MB of weights cost seconds per save, load and training
    step and what it has learnt is not what the test checks. Tests of learning keep the real
    model."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules
    from transformers import AutoTokenizer, BertConfig, BertModel

    from pairlab.models.embed import resolve_model

    path = tmp_path_factory.mktemp("tiny-model")
    tokenizer = AutoTokenizer.from_pretrained(resolve_model(None))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    encoder = SentenceTransformer(
        modules=[
            modules.Transformer(str(path), max_seq_length=64),
            modules.Pooling(32, "mean"),
            modules.Normalize(),
        ]
    )
    encoder.save(str(path))
    return str(path)


def clustered_pool(
    n_items=400, dim=8, noise=0.35, seed=0, symmetric=True
) -> tuple[Pool, np.ndarray]:
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


class FakeModel:
    def __init__(self, vectors: dict, calibration, info=None):
        self.vectors, self.calibration, self.info = vectors, calibration, info or {}

    def embed(self, texts):
        return np.stack([self.vectors[t] for t in texts]).astype(np.float32)


class FakeLearner:
    """ "Training" pulls each labelled positive pair's vectors together and fits the
    calibration on the cosines: adaptive enough to change later rounds' candidates."""

    def __init__(self, vectors: dict, *, crash_at_round=None):
        self.vectors, self.crash_at_round, self.trained = vectors, crash_at_round, []
        self.members = []  # (round, member, labels) of each committee member trained

    def pretrained_embeddings(self, pool):
        left = np.stack([self.vectors[t] for t in pool.left_texts])
        return left, left if pool.symmetric else np.stack(
            [self.vectors[t] for t in pool.right_texts]
        )

    def train(self, pool, ids, labels, *, round, member=None):
        if round == self.crash_at_round:
            raise KeyboardInterrupt(f"killed in round {round}")
        if member is None:
            self.trained.append((round, len(ids)))
        else:
            self.members.append((round, member, len(ids)))
        vectors = dict(self.vectors)
        i, j = pool.space.decode(ids[labels == 1])
        for a, b in zip(pool.left_texts[i], pool.right_texts[j]):
            mid = vectors[a] + vectors[b]
            vectors[a] = vectors[b] = mid / np.linalg.norm(mid)
        left, right = pool.texts(ids)
        cosine = np.einsum(
            "nd,nd->n", np.stack([vectors[t] for t in left]), np.stack([vectors[t] for t in right])
        )
        if len(np.unique(labels)) == 2:
            return FakeModel(vectors, Calibration.fit(cosine, labels))
        # as CosineBERT says of a model that saw one answer only (the audit skips its round)
        return FakeModel(vectors, Calibration(0.0, 1.0, 1.0, 0.0), {"calibration": "one class"})

    @staticmethod
    def embed(model, texts):
        return model.embed(texts)

    @staticmethod
    def save(model, path):
        path.mkdir(parents=True, exist_ok=True)
        keys = sorted(model.vectors)
        np.savez(
            path / "model.npz",
            keys=np.array(keys),
            vectors=np.stack([model.vectors[k] for k in keys]),
        )
        (path / "calibration.json").write_text(json.dumps(model.calibration.__dict__))

    @staticmethod
    def load(path):
        with np.load(path / "model.npz") as f:
            vectors = dict(zip(f["keys"].tolist(), f["vectors"]))
        return FakeModel(
            vectors, Calibration(**json.loads((path / "calibration.json").read_text()))
        )


def make_task():
    pools, eval_sets, vectors = {}, {}, {}
    for seed, split in enumerate(("train", "dev", "test")):
        pool, emb = clustered_pool(n_items=160, seed=seed)
        texts = np.array([f"{split} {t}" for t in pool.left_texts], dtype=object)
        pool = replace(pool, task="toy", split=split, left_texts=texts, right_texts=texts)
        vectors.update(zip(texts, emb))
        pools[split] = pool
        if split != "train":
            eval_sets[split] = build_eval_set(pool, emb, emb, EvalConfig(near_m=5, n_random=800))
    return pools, eval_sets, vectors


POOLS, EVAL_SETS, VECTORS = make_task()
BASE = dict(task="toy", n1=12, rounds=3, candidate_m=6, n_boot=20)


def run(tmp_path, strategy="uncertainty", learner=None, callbacks=(), **extra):
    config = ActiveConfig(strategy=strategy, **{**BASE, **extra})
    folder = run_folder(tmp_path, config, POOLS, EVAL_SETS)
    learner = learner or FakeLearner(VECTORS)
    return ActiveRun(config, POOLS, EVAL_SETS, folder, learner=learner, callbacks=callbacks), folder


def compare_runs(a, b) -> dict:
    """Two sweeps' roots of run folders compared, wall times aside (``labels.csv`` byte for
    byte): the runs, rounds and files compared and the paths that differ or only one holds."""
    a, b = Path(a), Path(b)
    found = [{p.parent.relative_to(root) for p in root.glob("*/*/result.json")} for root in (a, b)]
    differ = sorted(str(run) for run in found[0] ^ found[1])
    both = sorted(found[0] & found[1])
    rounds = files = 0
    for run in both:
        names = ["labels.csv", "result.json"] + sorted(
            str(p.relative_to(a / run)) for p in (a / run / "rounds").glob("round_[0-9][0-9].*")
        )
        rounds += sum(name.endswith(".npz") for name in names)
        files += len(names)
        differ += [
            str(run / name) for name in names if not _same_file(a / run / name, b / run / name)
        ]
    return {"runs": len(both), "rounds": rounds, "files": files, "differ": differ}


def _same_file(x: Path, y: Path) -> bool:
    if not y.is_file():
        return False
    if x.suffix == ".npz":
        with np.load(x) as f, np.load(y) as g:
            return f.files == g.files and all(np.array_equal(f[k], g[k]) for k in f.files)
    if x.suffix == ".json":
        return timeless(json.loads(x.read_text())) == timeless(json.loads(y.read_text()))
    return x.read_bytes() == y.read_bytes()


def timeless(value):
    """A record or result without what the machine measured (``seconds``, ``peak_rss_mb``)."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in ("seconds", "peak_rss_mb")}
    return [timeless(v) for v in value] if isinstance(value, list) else value
