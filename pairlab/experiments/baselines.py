"""Models trained on the stated (heuristic) data and their heuristic-balanced metrics (paper
section 3, notebook 02)."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..active.config import PerTask
from ..data.loaders import Pool
from ..data.pairs import union_sorted
from ..data.paper import TABLE2_BERT, TABLE3
from ..evaluation import heuristic
from ..io import write_json
from ..models.concatbert import ConcatBERT
from ..models.cosinebert import CosineBERT
from ..models.training import TrainConfig

__all__ = [
    "KINDS",
    "stated_pairs",
    "sample_pairs",
    "model_id",
    "train_or_load",
    "trained_metrics",
    "TrainSettings",
    "train_all",
    "heuristic_metrics",
    "failure_metrics",
    "table2",
]

KINDS = {"concatbert": ConcatBERT, "cosinebert": CosineBERT}
OUTPUTS = "outputs"  # a saved model's cached logits and embeddings


def stated_pairs(pool: Pool) -> tuple[np.ndarray, np.ndarray]:
    """D_heur of a split: every positive and every stated negative; (sorted ids, labels)."""
    ids = union_sorted(pool.positives, pool.stated_negatives)
    return ids, pool.labels(ids)


def sample_pairs(ids: np.ndarray, max_pairs: int | None, *, seed: int = 0) -> np.ndarray:
    """A uniform subsample of at most ``max_pairs`` ids (sorted), or all of them."""
    if max_pairs is None or max_pairs >= len(ids):
        return ids
    if max_pairs < 2:
        raise ValueError(f"max_pairs must be >= 2 or None, got {max_pairs!r}")
    return np.sort(np.random.default_rng(seed).choice(ids, size=max_pairs, replace=False))


def model_id(
    kind: str,
    pool: Pool,
    train_ids: np.ndarray,
    config: TrainConfig,
    model=None,
    labels: np.ndarray | None = None,
) -> str:
    """A stable name for a model from its kind, task, base model, training config, data and
    ``labels`` where they are not the pool's own (e.g. silver labels)."""
    digest = hashlib.sha256(json.dumps([kind, pool.task, str(model), config.to_dict()]).encode())
    digest.update(np.ascontiguousarray(train_ids, dtype=np.int64).tobytes())
    if labels is not None:
        digest.update(b"labels" + np.ascontiguousarray(labels, dtype=np.int8).tobytes())
    digest.update("\x00".join(pool.left_texts[:50]).encode())  # ties ids to this pool's items
    return f"{pool.task}-{kind}-{digest.hexdigest()[:12]}"


def train_or_load(
    kind: str, pool: Pool, train_ids: np.ndarray, config: TrainConfig, *, folder, model=None
):
    """``(model, model_id)``: ``kind`` trained on ``train_ids`` of ``pool`` with the pool's labels,
    or loaded where ``folder`` holds one of that id, its outputs cached beside."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {sorted(KINDS)}, got {kind!r}")
    name = model_id(kind, pool, train_ids, config, model)
    path = Path(folder) / name
    if (path / "pairlab_done").is_file():
        trained = KINDS[kind].load(path)
    else:
        left, right = pool.texts(train_ids)
        trained = KINDS[kind].train(left, right, pool.labels(train_ids), model=model, config=config)
        shutil.rmtree(path / OUTPUTS, ignore_errors=True)  # outputs of a half-saved earlier model
        trained.save(path)
        (path / "pairlab_done").write_text("saved\n")  # last: a half-saved model is retrained
    trained.output_cache = path / OUTPUTS  # a notebook run again reads its scores back
    return trained, name


@dataclass(frozen=True)
class TrainSettings(PerTask):
    """How a notebook trains one kind of model (:data:`KINDS`); epochs may be one per task.
    :meth:`config` is a task's and seed's :class:`TrainConfig`."""

    kind: str
    epochs: int | dict
    learning_rate: float
    batch_size: int
    max_seq_length: int

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {self.kind!r}")

    @classmethod
    def from_params(cls, params: dict, kind: str) -> TrainSettings:
        """``kind``'s settings in a notebook's parameters (``concat_`` or ``cosine_epochs``)."""
        epochs = params["concat_epochs" if kind == "concatbert" else "cosine_epochs"]
        return cls(
            kind, epochs, *(params[k] for k in ("learning_rate", "batch_size", "max_seq_length"))
        )

    def config(self, task: str, seed: int) -> TrainConfig:
        own = self.for_task(task)
        if isinstance(own["epochs"], dict):
            raise ValueError(f"no {self.kind} epochs for task {task!r} in {own['epochs']}")
        del own["kind"]
        return TrainConfig(**own, seed=seed)


def trained_metrics(
    pool: Pool, ids, labels, config: TrainConfig, *, model, folder, measure
) -> dict:
    """``measure(model, seconds)`` of a CosineBERT trained on ``ids`` with ``labels``, kept as
    JSON under ``folder`` by the model's id (the model is not kept): a re-run reads it back."""
    order = np.argsort(ids, kind="stable")
    ids, labels = np.asarray(ids)[order], np.asarray(labels).astype(np.int8)[order]
    path = Path(folder) / f"{model_id('cosinebert', pool, ids, config, model, labels)}.json"
    if path.is_file():
        return json.loads(path.read_text())
    start = time.perf_counter()
    trained = CosineBERT.train(*pool.texts(ids), labels, model=model, config=config)
    metrics = measure(trained, time.perf_counter() - start)
    write_json(path, metrics)
    return metrics


def train_all(tasks: dict, train_ids: dict, params: dict, *, folder) -> dict:
    """Every kind of :data:`KINDS` trained (or loaded) on each task's ``train_ids`` with a
    notebook's parameters (seed ``params["seed"]``). Returns ``{(task, kind): (model, id)}``."""
    configs = {kind: TrainSettings.from_params(params, kind).config for kind in KINDS}
    seed, model = params["seed"], params["model"]
    return {
        (name, kind): train_or_load(
            kind,
            tasks[name]["train"],
            train_ids[name],
            configs[kind](name, seed),
            folder=folder,
            model=model,
        )
        for name in tasks
        for kind in KINDS
    }


def heuristic_metrics(task: str, score, dev: Pool, test: Pool) -> dict:
    """The benchmark's own metrics on stated test pairs, thresholds tuned on stated dev pairs:
    ROC-AUC, and accuracy and F1 on a symmetric task (QQP), c-MAP and a-F1 (F1 over all stated
    test pairs) on an asymmetric one (WikiQA). ``score(pool, ids)`` gives scores."""
    dev_ids, dev_y = stated_pairs(dev)
    test_ids, test_y = stated_pairs(test)
    dev_s, test_s = score(dev, dev_ids), score(test, test_ids)
    out = {"n_test_pairs": int(len(test_ids)), "roc_auc": heuristic.roc_auc(test_y, test_s)}
    f1_at = heuristic.best_threshold(dev_y, dev_s, metric="f1")
    if test.symmetric:
        acc_at = heuristic.best_threshold(dev_y, dev_s, metric="accuracy")
        out["accuracy"] = heuristic.accuracy_f1(test_y, test_s, acc_at)["accuracy"]
        out["f1"] = heuristic.accuracy_f1(test_y, test_s, f1_at)["f1"]
    else:
        questions, _ = test.space.decode(test_ids)
        out["c_map"] = heuristic.clean_map(questions, test_y, test_s)
        out["a_f1"] = heuristic.accuracy_f1(test_y, test_s, f1_at)["f1"]
    return out


def failure_metrics(heuristics: dict, results: dict, eval_sets: dict, extra: dict) -> dict:
    """Notebook 02's metrics file ``{task: {kind: {"heuristic", "all_pairs", ...}}}``."""
    out: dict = {}
    for (task, kind), result in results.items():
        es = eval_sets[(task, kind)]
        all_pairs = {k: result[k] for k in ("ap", "ap_ci", "p_at_r20", "p_at_r20_ci")}
        sizes = {"n_positive": es.positives, "n_near": es.near, "n_rand": es.rand}
        all_pairs |= {k: int(len(ids)) for k, ids in sizes.items()}
        all_pairs["neighbours"] = es.config.near_m
        out.setdefault(task, {})[kind] = {
            "heuristic": heuristics[(task, kind)],
            "all_pairs": all_pairs,
            **extra.get((task, kind), {}),
        }
    return out


def table2(metrics: dict):
    """Table 2 of the paper beside ours: one row per task and model."""
    rows = []
    for task, by_kind in metrics.items():
        for kind, m in by_kind.items():
            h, a = m["heuristic"], m["all_pairs"]
            concat = kind == "concatbert"  # a file's task has no paper values
            paper = TABLE2_BERT.get(task, {}) if concat else TABLE3.get(task, {}).get("stated", {})
            row = {"task": task, "model": kind}
            for name in ("accuracy", "f1") if "accuracy" in h else ("c_map", "a_f1"):
                row[name], row[f"paper {name}"] = h[name], paper.get(name) if concat else None
            for key, name in (("p_at_r20", "P@R20"), ("ap", "AP")):
                row[name] = a[key]
                row[f"{name} 95% CI"] = "[{:.3f}, {:.3f}]".format(*a[f"{key}_ci"])
            row["paper P@R20"], row["paper AP"] = paper.get("p_at_r20"), paper.get("ap")
            rows.append(row)
    return pd.DataFrame(rows).set_index(["task", "model"])
