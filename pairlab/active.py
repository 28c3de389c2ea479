"""Active learning over all pairs (paper section 4): the round loop and its run folder.

Round i picks a batch of n_i = n1 * growth^(i-1) pairs (:func:`schedule`). The seed round uses
``config.seed_set`` (static retrieval by default) for adaptive strategies and the strategy
itself otherwise. Each round: embed the training split with the selection model, take every
item's top-m faiss neighbours as candidates ``D_close`` minus the labelled pairs, let the
strategy pick, label the batch with the pool's imputed-label oracle, retrain CosineBERT from the
pretrained checkpoint on everything labelled, and evaluate it on the dev strata.

A run folder holds ``config.json``, ``rounds/round_XX.npz`` (the batch: ids, labels) and
``rounds/round_XX.json`` (the round's record, written last: a round without it is not
finished), ``labels.csv`` (round, left, right, label), the latest round's model while the run
is unfinished, and ``result.json`` once it is done. A killed run resumes after its last
finished round; a finished run with the same config is read back, not recomputed.

The loop emits events to callbacks (``callback(event, **payload)``): ``run_started``,
``stage`` (round, stage, seconds), ``round_finished`` (record), ``run_finished`` (result). The
dashboard (:mod:`pairlab.dashboard`) and the printed log subscribe; the loop has no widget code.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from .data import Pool
from .embed import model_fingerprint
from .evaluation import CosineScorer, EvalSet, embed_pool, evaluate
from .io import to_json, write_json
from .pairs import isin_sorted, union_sorted
from .paths import cache_dir
from .strategies import RoundState, Strategy, make_strategy
from .training import quiet_progress

__all__ = ["ActiveConfig", "ActiveRun", "CosineBERTLearner", "schedule", "run_folder",
           "load_result", "run_labels", "reliability", "PrintLog", "STAGES"]

STAGES = ("embed", "search", "select", "train", "evaluate")


def schedule(n1: int, rounds: int, growth: float = 1.5) -> list[int]:
    """Batch sizes n_i = floor(n1 * growth^(i-1)), exact for ratios such as 3/2 (2048 and 10
    rounds give the paper's 232,100 labels; 4 rounds give WikiQA's 16,640)."""
    if not isinstance(n1, (int, np.integer)) or n1 < 1:
        raise ValueError(f"n1 must be a positive integer, got {n1!r}")
    if not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    if not growth >= 1:
        raise ValueError(f"growth must be >= 1, got {growth!r}")
    ratio = Fraction(growth).limit_denominator(1000)
    return [int(n1 * ratio ** i) for i in range(rounds)]


@dataclass(frozen=True)
class ActiveConfig:
    """One active-learning run: what is collected, how the model is trained and measured."""

    task: str
    strategy: str
    seed: int = 0
    strategy_params: dict = field(default_factory=dict)
    n1: int = 2048  # seed-set size
    rounds: int = 10  # k
    growth: float = 1.5
    batches: tuple | None = None  # explicit batch sizes (overrides n1, rounds, growth)
    seed_set: str = "static_retrieval"  # round 1 of adaptive strategies ("stated": the ablation)
    candidate_m: int = 100  # m: candidates per left item (D_close)
    index: str = "Flat"  # faiss index-factory string
    model: str | None = None  # None: the offline all-MiniLM-L6-v2
    epochs: float = 2.0
    learning_rate: float = 2e-5
    batch_size: int = 16
    max_seq_length: int = 128
    n_boot: int = 1000  # bootstrap replicates for the per-round intervals
    curve: bool = True  # train and evaluate every round (False: non-adaptive ones train once)
    keep_model: bool = False  # keep the final model in the run folder

    def __post_init__(self):
        self.make_strategy()  # fails early on a bad name or parameters
        if self.seed_set not in ("static_retrieval", "stated"):
            raise ValueError(f"seed_set must be 'static_retrieval' or 'stated', got {self.seed_set!r}")
        if self.batches is not None:
            object.__setattr__(self, "batches", tuple(int(b) for b in self.batches))
            if not self.batches or min(self.batches) < 1:
                raise ValueError(f"batches must be positive sizes, got {self.batches!r}")
        self.schedule()

    def make_strategy(self, name: str | None = None) -> Strategy:
        """The strategy ``name`` (default: this run's, with its parameters), its candidate search
        set to this config's ``candidate_m`` and faiss ``index``."""
        params = self.strategy_params if name is None else {}
        return make_strategy(name or self.strategy, candidate_m=self.candidate_m, index=self.index,
                             **params)

    def schedule(self) -> list[int]:
        return list(self.batches) if self.batches else schedule(self.n1, self.rounds, self.growth)

    @property
    def budget(self) -> int:
        return sum(self.schedule())

    def to_dict(self) -> dict:
        return asdict(self)


class CosineBERTLearner:
    """Trains CosineBERT from the pretrained checkpoint (the paper: a fresh model each round).

    A model trained in one of ``shared_rounds`` (default: the seed round) is kept in the cache
    folder under a digest of everything its training reads: the model, the training settings,
    the labelled texts and labels. Strategies and variants that share a seed set (uncertainty,
    adaptive retrieval and static retrieval all start from static retrieval's first batch) then
    load that model instead of training it again, and its item embeddings come from the
    embedding cache. Training is deterministic on a device, so the loaded model is the one
    training would give. ``PAIRLAB_SHARE_MODELS=0`` turns this off.
    """

    VERSION = "cosinebert-1"  # part of the digest: bump when training changes

    def __init__(self, config: ActiveConfig, *, shared_rounds=(1,)):
        self.config = config
        self.shared_rounds = () if os.environ.get("PAIRLAB_SHARE_MODELS") == "0" else tuple(shared_rounds)

    def pretrained_embeddings(self, pool: Pool) -> tuple[np.ndarray, np.ndarray]:
        return embed_pool(pool, self.config.model, max_seq_length=self.config.max_seq_length,
                          show_progress=False)

    def train(self, pool: Pool, ids: np.ndarray, labels: np.ndarray, *, round: int):
        from .cosinebert import CosineBERT
        from .training import TrainConfig

        c = self.config
        train_config = TrainConfig(learning_rate=c.learning_rate, epochs=c.epochs,
                                   batch_size=c.batch_size, max_seq_length=c.max_seq_length,
                                   seed=c.seed * 1000 + round)
        left, right = pool.texts(ids)
        if round not in self.shared_rounds:
            return CosineBERT.train(left, right, labels, model=c.model, config=train_config,
                                    quiet=True)
        key = self._digest(train_config, left, right, labels)
        path = cache_dir() / "models" / key
        if path.is_dir():
            model = CosineBERT.load(path)
        else:
            model = CosineBERT.train(left, right, labels, model=c.model, config=train_config,
                                     quiet=True)
            tmp = path.with_name(f"{key}.{os.getpid()}.tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            model.save(tmp)
            try:
                os.replace(tmp, path)  # atomic: a crash never leaves a half-written model
            except OSError:  # another process saved the same model first
                shutil.rmtree(tmp, ignore_errors=True)
        model.cache_key = key
        return model

    def _digest(self, train_config, left, right, labels) -> str:
        digest = hashlib.sha256(json.dumps([self.VERSION, model_fingerprint(self.config.model),
                                            train_config.to_dict()]).encode())
        for text in (*left, *right):
            digest.update(str(text).encode("utf-8", "surrogatepass") + b"\x00")
        digest.update(np.asarray(labels, dtype=np.int8).tobytes())
        return digest.hexdigest()[:32]

    @staticmethod
    def embed(model, texts) -> np.ndarray:
        return model.embed(texts, show_progress=False, cache_key=model.cache_key)

    @staticmethod
    def save(model, path: Path) -> None:
        model.save(path)

    @staticmethod
    def load(path: Path):
        from .cosinebert import CosineBERT

        return CosineBERT.load(path)


def run_folder(root, config: ActiveConfig, pools: dict[str, Pool], eval_sets: dict[str, EvalSet]) -> Path:
    """``<root>/<task>/<strategy>-seed<k>-<digest>``: the digest covers the config, the pools'
    items and positives, and the evaluation strata, so a changed input never reuses a run."""
    digest = hashlib.sha256(json.dumps(to_json(config.to_dict()), sort_keys=True).encode())
    for name in sorted(pools):
        pool = pools[name]
        digest.update(f"{name}|{pool.n_pairs}|{pool.symmetric}".encode())
        digest.update("\x00".join(map(str, pool.left_texts)).encode())
        digest.update(pool.positives.tobytes())
    for name in sorted(eval_sets):
        digest.update(eval_sets[name].near.tobytes() + eval_sets[name].rand.tobytes())
    return Path(root) / config.task / f"{config.strategy}-seed{config.seed}-{digest.hexdigest()[:10]}"


def load_result(folder) -> dict | None:
    """The finished run's result, or None if the run is not finished."""
    path = Path(folder) / "result.json"
    return json.loads(path.read_text()) if path.is_file() else None


def run_labels(folder) -> tuple[np.ndarray, np.ndarray]:
    """The sorted pair ids a finished run labelled and their labels, read from its rounds (what
    another model trains on, e.g. ConcatBERT on data CosineBERT collected)."""
    folder = Path(folder)
    result = load_result(folder)
    if result is None:
        raise FileNotFoundError(f"{folder} holds no finished run (no result.json)")
    ids, labels, rounds = _empty_labels()
    n_rounds = len(result["records"])
    for i in range(1, n_rounds + 1):
        with np.load(folder / "rounds" / f"round_{i:02d}.npz") as f:
            ids, labels, rounds = _append(ids, labels, rounds, f["ids"], f["labels"], i)
    if len(ids) != result["labels"] or int(labels.sum()) != result["positives_found"]:
        raise ValueError(f"{folder}: the rounds hold {len(ids)} labels ({int(labels.sum())} "
                         f"positive) but result.json says {result['labels']} "
                         f"({result['positives_found']})")
    return ids, labels


class ActiveRun:
    """One run of ``config`` on ``pools`` (``train``; ``dev`` and ``test`` for evaluation)."""

    def __init__(self, config: ActiveConfig, pools: dict[str, Pool], eval_sets: dict[str, EvalSet],
                 folder, *, learner=None, callbacks=()):
        _check_inputs(config, pools, eval_sets)
        self.config, self.pools, self.eval_sets = config, pools, eval_sets
        self.pool = pools["train"]
        self.folder = Path(folder)
        self.learner = learner if learner is not None else CosineBERTLearner(config)
        self.strategy = config.make_strategy()
        # a strategy that selects with the trained model has none before round 1: the seed set
        self.seed_strategy = (config.make_strategy(config.seed_set) if self.strategy.adaptive
                              else self.strategy)
        self.callbacks = list(callbacks)
        self._pretrained = None
        self._embedded = (None, {})

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> dict:
        """Run (or resume, or read back) the whole run; returns its result."""
        result = load_result(self.folder)
        if result is not None and result["config"] == to_json(self.config.to_dict()):
            self._emit("run_reused", result=result, folder=self.folder)
            return result
        self._write_config()
        records, ids, labels, rounds = self._resume()
        sizes = self.config.schedule()
        self._emit("run_started", config=self.config, schedule=sizes, resumed=len(records),
                   folder=self.folder)
        with quiet_progress():
            model = self._load_model(len(records), ids, labels) if records else None
            for i in range(len(records) + 1, len(sizes) + 1):
                model, record, batch, batch_labels = self._round(i, sizes[i - 1], model, ids)
                ids, labels, rounds = _append(ids, labels, rounds, batch, batch_labels, i)
                records.append(record)
                self._emit("round_finished", record=record)
            return self._finish(model, records, ids, labels, rounds)

    def _round(self, i: int, n: int, model, labelled: np.ndarray):
        strategy = self.strategy if i > 1 else self.seed_strategy
        stages = _Stages(self, i)
        seen = []  # the candidates a CandidateSearch restricted the pool to, if any
        state = RoundState(round=i, pool=self.pool, labelled=labelled, budget=self.config.budget,
                           rng=np.random.default_rng([self.config.seed, i]), model=model,
                           pretrained_cosine=self._pretrained_cosine, embeddings=self._embeddings,
                           stage=stages, observe=seen.append)
        with stages("select"):
            batch = np.asarray(strategy.select(state, n), dtype=np.int64)
            _check_batch(self.pool, labelled, batch, n, strategy)
            batch_labels = self.pool.labels(batch)
        searched = seen[-1] if seen else state
        _save_batch(self.folder, i, batch, batch_labels)
        record = {"round": i, "strategy": strategy.name, "batch": n,
                  "labels": int(len(labelled) + n),
                  "positives_in_batch": int(batch_labels.sum()),
                  "candidates": int(len(searched.candidates)),
                  "calibration": _batch_calibration(searched, batch, batch_labels)}
        all_ids = union_sorted(labelled, batch)
        if self._trains(i):
            with stages("train"):
                model = self.learner.train(self.pool, all_ids, self.pool.labels(all_ids), round=i)
            if getattr(model, "cache_key", None):  # trained or loaded as a shared seed-round model
                record["shared_model"] = model.cache_key
            with stages("evaluate"):
                record["dev"] = self._evaluate(model, "dev")
            shutil.rmtree(self._model_path(i), ignore_errors=True)  # a crash's leftover
            self.learner.save(model, self._model_path(i))
        record["positives_found"] = int(isin_sorted(all_ids, self.pool.positives).sum())
        record["seconds"] = stages.times
        write_json(self.folder / "rounds" / f"round_{i:02d}.json", record)  # the round is done
        self._drop_models(keep=i)
        return model, record, batch, batch_labels

    def _trains(self, i: int) -> bool:
        """Adaptive runs train every round (the next round selects with the model); others
        only where a curve point or the final model is wanted."""
        last = i == len(self.config.schedule())
        return last or self.config.curve or self.strategy.adaptive

    def _evaluate(self, model, split: str) -> dict:
        left, right = self._embed(model, self.pools[split])
        scorer = CosineScorer(self.pools[split].space, left, right)  # ranks as p: w >= 0
        result = evaluate(self.eval_sets[split], scorer, n_boot=self.config.n_boot,
                          seed=self.config.seed)
        return {k: result[k] for k in ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")}

    def _finish(self, model, records, ids, labels, rounds) -> dict:
        test = self._evaluate(model, "test") if "test" in self.pools else None
        result = {"config": to_json(self.config.to_dict()), "folder": self.folder.name,
                  "records": records,
                  "labels": int(len(ids)), "positives_found": int(labels.sum()),
                  "test": test, "final_dev": records[-1].get("dev"),
                  "model_info": {k: v for k, v in getattr(model, "info", {}).items()
                                 if k in ("calibration", "trained_on")}}
        _write_labels_csv(self.folder, self.pool, ids, labels, rounds)
        if self.config.keep_model:
            self.learner.save(model, self.folder / "model")
        write_json(self.folder / "result.json", result)
        self._drop_models(keep=None)
        self._emit("run_finished", result=result, folder=self.folder)
        return result

    # -- resuming -----------------------------------------------------------------------------

    def _write_config(self) -> None:
        path = self.folder / "config.json"
        config = to_json(self.config.to_dict())
        if path.is_file() and json.loads(path.read_text()) != config:
            raise ValueError(f"{self.folder} holds a run of another config; use a new folder")
        write_json(path, config)

    def _resume(self):
        """Finished rounds' records and labels; an unfinished round's batch is dropped."""
        records, ids, labels, rounds = [], *_empty_labels()
        for i in range(1, len(self.config.schedule()) + 1):
            record_path = self.folder / "rounds" / f"round_{i:02d}.json"
            if not record_path.is_file():
                break
            with np.load(self.folder / "rounds" / f"round_{i:02d}.npz") as f:
                ids, labels, rounds = _append(ids, labels, rounds, f["ids"], f["labels"], i)
            records.append(json.loads(record_path.read_text()))
        for stale in (self.folder / "rounds").glob("round_*.npz"):
            if int(stale.stem.split("_")[1]) > len(records):
                stale.unlink()
        return records, ids, labels, rounds

    def _load_model(self, i: int, ids, labels):
        """Round ``i``'s model, saved when the round finished; retrained (deterministically,
        from the same labels and seed) if it was deleted."""
        path = self._model_path(i)
        if path.exists():
            return self.learner.load(path)
        if not (self.strategy.adaptive or i == len(self.config.schedule())):
            return None  # a non-adaptive run selects with the pretrained encoder
        with _Stages(self, i)("train"):
            return self.learner.train(self.pool, ids, labels, round=i)

    def _model_path(self, i: int) -> Path:
        return self.folder / f"model_round_{i:02d}"

    def _drop_models(self, keep: int | None) -> None:
        for path in self.folder.glob("model_round_*"):
            if keep is None or int(path.name.rsplit("_", 1)[1]) != keep:
                shutil.rmtree(path, ignore_errors=True)

    # -- helpers ------------------------------------------------------------------------------

    def _embed(self, model, pool: Pool) -> tuple[np.ndarray, np.ndarray]:
        """Item embeddings under ``model``; texts the splits share (WikiQA's sentences) are
        embedded once per model."""
        if self._embedded[0] is not model:
            self._embedded = (model, {})
        cache = self._embedded[1]
        for texts in (pool.left_texts, pool.right_texts):
            if id(texts) not in cache:
                cache[id(texts)] = (texts, self.learner.embed(model, texts))  # texts pin the id
        left = cache[id(pool.left_texts)][1]
        return left, cache[id(pool.right_texts)][1]

    def _embeddings(self, model) -> tuple[np.ndarray, np.ndarray]:
        """The training pool's item embeddings under ``model`` (None: the pretrained encoder)."""
        return self._embed(model, self.pool) if model is not None else self._pretrained_embeddings()

    def _pretrained_embeddings(self):
        if self._pretrained is None:
            self._pretrained = self.learner.pretrained_embeddings(self.pool)
        return self._pretrained

    def _pretrained_cosine(self, ids) -> np.ndarray:
        left, right = self._pretrained_embeddings()
        return CosineScorer(self.pool.space, left, right)(ids).astype(np.float64)

    def _emit(self, event: str, **payload) -> None:
        for callback in self.callbacks:
            callback(event, task=self.config.task, strategy=self.config.strategy,
                     seed=self.config.seed, **payload)


class _Stages:
    """Wall time per stage of one round, each emitted as a ``stage`` event. A stage inside
    another (the candidate search inside the selection) counts once: the outer stage keeps only
    its own time."""

    def __init__(self, run: ActiveRun, round: int):
        self.run, self.round, self.times, self._inner = run, round, {}, [0.0]

    @contextmanager
    def __call__(self, stage: str):
        start, finished = time.perf_counter(), False
        self._inner.append(0.0)
        try:
            yield
            finished = True
        finally:
            total = time.perf_counter() - start
            seconds = total - self._inner.pop()
            self._inner[-1] += total
            self.times[stage] = self.times.get(stage, 0.0) + seconds
            if finished:
                self.run._emit("stage", round=self.round, stage=stage, seconds=seconds)


def reliability(proba: np.ndarray, labels: np.ndarray, *, bins: int = 10) -> list[dict]:
    """Reliability table of predicted p against labels: one row per non-empty bin of p."""
    proba, labels = np.asarray(proba, np.float64), np.asarray(labels, np.float64)
    which = np.clip((proba * bins).astype(int), 0, bins - 1)
    rows = []
    for b in np.unique(which):
        mask = which == b
        rows.append({"bin": [b / bins, (b + 1) / bins], "n": int(mask.sum()),
                     "mean_p": float(proba[mask].mean()), "positive_share": float(labels[mask].mean())})
    return rows


def _batch_calibration(state: RoundState, batch, batch_labels) -> dict | None:
    """How the selection model's p compares with the labels the batch got."""
    if state.logits is None:
        return None
    p = 1.0 / (1.0 + np.exp(-state.logits[np.searchsorted(state.candidates, batch)]))
    return {"mean_p": float(p.mean()), "positive_share": float(np.mean(batch_labels)),
            "table": reliability(p, batch_labels)}


def _check_inputs(config: ActiveConfig, pools, eval_sets) -> None:
    if "train" not in pools:
        raise ValueError(f"pools need a 'train' split, got {sorted(pools)}")
    for split in ("dev",) + (("test",) if "test" in pools else ()):
        if split not in pools or split not in eval_sets:
            raise ValueError(f"the {split!r} split needs both a pool and an evaluation set")
    pool = pools["train"]
    if pool.task != config.task:
        raise ValueError(f"config is for task {config.task!r} but the pool is {pool.task!r}")
    if config.budget > pool.n_pairs:
        raise ValueError(f"a budget of {config.budget:,} labels exceeds the {pool.n_pairs:,} "
                         f"pairs of {pool.task}/train")


def _check_batch(pool: Pool, labelled, batch, n: int, strategy: Strategy) -> None:
    """The loop's invariant: n distinct valid pairs, none labelled before, no self pair."""
    where = f"strategy {strategy.name!r}"
    if batch.shape != (n,):
        raise RuntimeError(f"{where} returned {batch.shape} ids for a batch of {n}")
    pool.space.check(batch)
    if len(np.unique(batch)) != n:
        raise RuntimeError(f"{where} returned a pair twice in one batch")
    if isin_sorted(batch, labelled).any():
        raise RuntimeError(f"{where} returned {int(isin_sorted(batch, labelled).sum())} "
                           "already-labelled pairs")
    left, right = pool.space.decode(batch)
    if pool.symmetric and (left == right).any():
        raise RuntimeError(f"{where} returned a self pair")


def _empty_labels():
    return np.empty(0, np.int64), np.empty(0, np.int8), np.empty(0, np.int16)


def _append(ids, labels, rounds, batch, batch_labels, i):
    """Labelled ids kept sorted, with their labels and rounds alongside."""
    ids = np.concatenate([ids, batch])
    labels = np.concatenate([labels, np.asarray(batch_labels, np.int8)])
    rounds = np.concatenate([rounds, np.full(len(batch), i, np.int16)])
    order = np.argsort(ids, kind="stable")
    return ids[order], labels[order], rounds[order]


def _save_batch(folder: Path, i: int, batch, batch_labels) -> None:
    path = folder / "rounds" / f"round_{i:02d}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
    np.savez(tmp, ids=batch, labels=batch_labels)
    os.replace(tmp, path)


def _write_labels_csv(folder: Path, pool: Pool, ids, labels, rounds) -> None:
    order = np.lexsort((ids, rounds))
    left, right = pool.texts(ids[order])
    frame = pd.DataFrame({"round": rounds[order], "left": left, "right": right,
                          "label": labels[order]})
    tmp = folder / f"labels.{os.getpid()}.tmp"
    frame.to_csv(tmp, index=False)
    os.replace(tmp, folder / "labels.csv")


class PrintLog:
    """A callback printing one line per round: what a papermill log or a terminal shows."""

    def __call__(self, event: str, **p) -> None:
        who = f"{p['task']}/{p['strategy']}/seed {p['seed']}"
        if event == "run_reused":
            print(f"{who}: finished earlier, read back from {p['folder'].name}")
        elif event == "run_started" and p["resumed"]:
            print(f"{who}: resuming after round {p['resumed']} of {len(p['schedule'])}")
        elif event == "round_finished":
            r = p["record"]
            dev = r.get("dev")
            ap = f"dev AP {dev['ap']:.3f} [{dev['ap_ci'][0]:.3f}, {dev['ap_ci'][1]:.3f}]" if dev else "not evaluated"
            secs = " ".join(f"{k} {v:.0f}s" for k, v in r["seconds"].items())
            print(f"{who} round {r['round']}: {r['labels']:,} labels, "
                  f"{r['positives_found']:,} positives; {ap}; {secs}")
