"""The run folder: ``config.json``, ``rounds/round_XX.npz`` (the batch's ids and labels) and
``rounds/round_XX.json`` (the round's record, written last: a round without it is not finished),
``labels.csv``, the latest round's model while the run is unfinished, and ``result.json``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.loaders import Pool
from ..evaluation.strata import EvalSet
from ..io import CorruptFileError, read_json, to_json, write_atomic, write_json
from ..models.inference import cache_tag

__all__ = [
    "run_folder",
    "load_result",
    "finished_run",
    "run_labels",
    "round_ids",
    "rounds_in",
    "write_config",
    "differing_keys",
    "resume",
    "save_batch",
    "read_batch",
    "write_labels_csv",
    "append_batch",
    "model_path",
    "drop_models",
    "RunFolderError",
]


class RunFolderError(CorruptFileError):
    """A run folder file that is missing or cannot be read back; the message names it and what
    to delete so that the run is computed again."""


ROUND_FILE = re.compile(r"round_(\d+)\.npz")


def run_folder(root, config, pools: dict[str, Pool], eval_sets: dict[str, EvalSet]) -> Path:
    """``<root>/<task>/<strategy>[-<n>layers]-seed<k>-<digest>-c<code>``: the digest covers the
    config, the pools, the evaluation strata and an int8 backend, ``<code>`` the strategy's and
    annotator's code (:func:`.behaviour.run_code_digest`): a changed input never reuses a run."""
    from .behaviour import run_code_digest

    digest = hashlib.sha256(json.dumps(to_json(config.to_dict()), sort_keys=True).encode())
    for tag in cache_tag():
        digest.update(f"|inference {tag}".encode())
    for name in sorted(pools):
        pool = pools[name]
        digest.update(f"{name}|{pool.n_pairs}|{pool.symmetric}".encode())
        digest.update("\x00".join(map(str, pool.left_texts)).encode())
        digest.update(pool.positives.tobytes())
    for name in sorted(eval_sets):
        digest.update(eval_sets[name].near.tobytes() + eval_sets[name].rand.tobytes())
    cut = "" if config.encoder_layers is None else f"-{config.encoder_layers}layers"
    name = f"{config.strategy}{cut}-seed{config.seed}-{digest.hexdigest()[:10]}"
    return Path(root) / config.task / f"{name}-c{run_code_digest(config)[:8]}"


def load_result(folder) -> dict | None:
    """The finished run's result, or None if the run is not finished; a :class:`RunFolderError`
    where ``result.json`` is corrupt or ``labels.csv`` or round files are gone."""
    folder = Path(folder)
    path = folder / "result.json"
    if not path.is_file():
        return None
    redo = f"delete it (the run is then finished again from its rounds) or the run folder {folder}"
    result = read_json(path, remedy=redo, kind=RunFolderError)
    if not isinstance(result, dict) or not isinstance(result.get("records"), list):
        raise RunFolderError(f"{path} holds no run result (no list of records): {redo}")
    rounds = range(1, len(result["records"]) + 1)
    names = [f"rounds/round_{i:02d}.{ext}" for i in rounds for ext in ("json", "npz")]
    missing = [name for name in ["labels.csv", *names] if not (folder / name).is_file()]
    if missing:
        raise RunFolderError(
            f"the finished run in {folder} misses {', '.join(missing)}: delete "
            "the run folder to compute the run again"
        )
    return result


def finished_run(config, folder) -> dict | None:
    """The result of ``config``'s run if it finished in ``folder`` (named as now, not as before a
    :func:`~.archive.rekey`), else None."""
    result = load_result(folder)
    if result is None or result["config"] != to_json(config.to_dict()):
        return None
    return {**result, "folder": Path(folder).name}


def _finished_batches(folder) -> tuple[dict, list[dict]]:
    """A finished run's result and each round's saved arrays."""
    folder = Path(folder)
    result = load_result(folder)
    if result is None:
        raise FileNotFoundError(f"{folder} holds no finished run (no result.json)")
    return result, [read_batch(folder, i) for i in range(1, len(result["records"]) + 1)]


def run_labels(folder) -> tuple[np.ndarray, np.ndarray]:
    """The sorted pair ids a finished run labelled and their answered labels (no-answers left
    out): what another model trains on, e.g. ConcatBERT on data CosineBERT collected."""
    result, batches = _finished_batches(folder)
    ids = np.concatenate([np.empty(0, np.int64), *(b["ids"] for b in batches)])
    labels = np.concatenate([np.empty(0, np.int8), *(b["labels"] for b in batches)])
    truth = np.concatenate([np.empty(0, np.int8), *(b.get("oracle", b["labels"]) for b in batches)])
    order = np.argsort(ids, kind="stable")
    ids, labels, truth = ids[order], labels[order], truth[order]
    if len(ids) != result["labels"] or int(truth.sum()) != result["positives_found"]:
        raise ValueError(
            f"{folder}: the rounds hold {len(ids)} labels ({int(truth.sum())} "
            f"positive) but result.json says {result['labels']} "
            f"({result['positives_found']})"
        )
    return ids[labels >= 0], labels[labels >= 0]


def round_ids(folder) -> list[np.ndarray]:
    """The pair ids each round of a finished run labelled, in round order."""
    return [b["ids"] for b in _finished_batches(folder)[1]]


def append_batch(ids, labels, rounds, batch, batch_labels, i):
    """Labelled ids kept sorted, with their int8 labels and int16 rounds (None: not kept)."""
    ids = np.concatenate([ids, batch])
    order = np.argsort(ids, kind="stable")
    labels = np.concatenate([labels, np.asarray(batch_labels, np.int8)])[order]
    if rounds is not None:
        rounds = np.concatenate([rounds, np.full(len(batch), i, np.int16)])[order]
    return ids[order], labels, rounds


def save_batch(folder: Path, i: int, batch, batch_labels, oracle=None, **arrays) -> None:
    """Round ``i``'s batch and its labels (1, 0, -1 for no answer), the oracle's labels when an
    annotator other than the oracle answered, and any further ``arrays``."""
    if oracle is not None:
        arrays = {"oracle": np.asarray(oracle, np.int8), **arrays}
    write_atomic(
        folder / "rounds" / f"round_{i:02d}.npz",
        lambda tmp: np.savez(tmp, ids=batch, labels=batch_labels, **arrays),
    )


def write_labels_csv(folder: Path, pool: Pool, ids, labels, rounds) -> None:
    """``labels.csv``: round, texts, the annotator's label (-1: no answer) and the pool's
    imputed (oracle) label, so every run's label noise can be audited."""
    order = np.lexsort((ids, rounds))
    left, right = pool.texts(ids[order])
    frame = pd.DataFrame(
        {"round": rounds[order], "left": left, "right": right, "label": labels[order]}
    )
    if pool.truth_known:  # a person's own records have no oracle
        frame["oracle"] = pool.labels(ids[order])
    write_atomic(folder / "labels.csv", lambda tmp: frame.to_csv(tmp, index=False))


def differing_keys(old: dict, new: dict) -> list[str]:
    """The keys (sorted) whose values differ between two run configs (JSON)."""
    return sorted(k for k in {*old, *new} if old.get(k) != new.get(k))


def write_config(folder: Path, config: dict) -> None:
    """Write ``config.json``; a folder holding another config's run is an error."""
    path, redo = folder / "config.json", "delete it; it is written again"
    old = read_json(path, remedy=redo, kind=RunFolderError) if path.is_file() else config
    if old != config:
        differ = differing_keys(old, config) if isinstance(old, dict) else ["everything"]
        raise ValueError(
            f"{folder} holds a run of another config (differing in {differ}): it is "
            "never reused; use a new folder (run_folder names one per config)"
        )
    write_json(path, config)


def rounds_in(folder) -> int:
    """Finished rounds in a run folder or an archive (its consecutive round records)."""
    i = 0
    while (Path(folder) / "rounds" / f"round_{i + 1:02d}.json").is_file():
        i += 1
    return i


def resume(folder: Path, n_rounds: int):
    """Finished rounds' records, sorted ids, labels and rounds; an unfinished round is dropped."""
    records, ids, labels = [], np.empty(0, np.int64), np.empty(0, np.int8)
    rounds = np.empty(0, np.int16)
    for i in range(1, min(rounds_in(folder), n_rounds) + 1):
        f = read_batch(folder, i)
        ids, labels, rounds = append_batch(ids, labels, rounds, f["ids"], f["labels"], i)
        record = folder / "rounds" / f"round_{i:02d}.json"
        records.append(read_json(record, remedy=_redo_round(folder, i), kind=RunFolderError))
    for stale in (folder / "rounds").glob("round_*.npz"):
        match = ROUND_FILE.fullmatch(stale.name)  # a killed writer's temporary is not a round
        if match and int(match.group(1)) > len(records):
            stale.unlink()
    return records, ids, labels, rounds


def read_batch(folder: Path, i: int) -> dict:
    """Round ``i``'s saved arrays (ids, labels, and what else was saved); a missing or
    unreadable file is a :class:`RunFolderError`."""
    path = Path(folder) / "rounds" / f"round_{i:02d}.npz"
    try:
        with np.load(path) as f:
            batch = {name: f[name] for name in f.files}
        if "ids" in batch and "labels" in batch:
            return batch
        error = KeyError(f"it holds {sorted(batch)}, not ids and labels")
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as caught:
        error = caught
    raise RunFolderError(
        f"{path} is missing or unreadable ({type(error).__name__}: {error}) "
        f"although round {i} finished: {_redo_round(folder, i)}"
    ) from error


def _redo_round(folder: Path, i: int) -> str:
    return (
        f"delete rounds/round_{i:02d}.json and every later round's files in {folder} to "
        f"compute the run again from round {i}, or delete the run folder"
    )


def model_path(folder: Path, i: int) -> Path:
    """Where round ``i``'s model is kept while the run is unfinished."""
    return folder / f"model_round_{i:02d}"


def drop_models(folder: Path, keep: int | None) -> None:
    """Delete the round models, but round ``keep``'s."""
    for path in folder.glob("model_round_*"):
        if keep is None or int(path.name.rsplit("_", 1)[1]) != keep:
            shutil.rmtree(path, ignore_errors=True)
