"""A run's archive: the small copy of a run folder that is committed to the repository, so that a
lost machine costs at most the round in progress.

An archive holds ``config.json``, ``rounds/round_XX.json`` (each finished round's record: its
metrics, positive counts, candidate recall, seconds per stage), ``labels.npz`` (every labelled
pair id with its label, round and, where another annotator labelled, the oracle's label; no
texts, no models) and, once the run is done, ``result.json``. :func:`save` writes it after every
finished round; :func:`restore` lays it back into an empty or shorter run folder, where the loop
resumes after its last round (the next round's model is retrained from the same labels and seed)
or reads the finished run back. Paths are those of the run folder under the archive root:
``<root>/<task>/<run folder name>``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np

from ..io import read_json, write_atomic, write_json
from . import store

__all__ = ["save", "restore", "save_all", "rounds_in", "rekey"]


def rounds_in(folder: Path) -> int:
    """Finished rounds in a run folder or an archive (its consecutive round records)."""
    i = 0
    while (Path(folder) / "rounds" / f"round_{i + 1:02d}.json").is_file():
        i += 1
    return i


def save(folder, archive) -> Path:
    """Write (or bring up to date) the archive of run folder ``folder`` at ``archive``."""
    folder, archive = Path(folder), Path(archive)
    n = rounds_in(folder)
    if n == 0:
        return archive
    (archive / "rounds").mkdir(parents=True, exist_ok=True)
    batches = [store._read_batch(folder, i) for i in range(1, n + 1)]
    arrays = {
        "ids": np.concatenate([b["ids"] for b in batches]).astype(np.int64),
        "labels": np.concatenate([b["labels"] for b in batches]).astype(np.int8),
        "rounds": np.concatenate(
            [np.full(len(b["ids"]), i, np.int16) for i, b in enumerate(batches, 1)]
        ),
    }
    if all("oracle" in b for b in batches):
        arrays["oracle"] = np.concatenate([b["oracle"] for b in batches]).astype(np.int8)
    write_atomic(archive / "labels.npz", lambda tmp: np.savez_compressed(tmp, **arrays))
    for name in ["config.json", *(f"rounds/round_{i:02d}.json" for i in range(1, n + 1))]:
        write_json(archive / name, read_json(folder / name))
    if (folder / "result.json").is_file():
        write_json(archive / "result.json", read_json(folder / "result.json"))
    return archive


def restore(archive, folder, pool) -> int:
    """Lay ``archive`` into run folder ``folder`` where it holds more finished rounds than the
    folder (a new machine, a lost folder); returns the rounds restored (0: nothing to do).
    ``pool`` (the run's training pool) writes the finished run's ``labels.csv``."""
    archive, folder = Path(archive), Path(folder)
    n = rounds_in(archive)
    if n <= rounds_in(folder) or not (archive / "config.json").is_file():
        return 0
    if folder.exists():
        shutil.rmtree(folder)  # fewer rounds than the archive: replaced whole, never mixed
    (folder / "rounds").mkdir(parents=True)
    write_json(folder / "config.json", read_json(archive / "config.json"))
    with np.load(archive / "labels.npz") as f:
        arrays = {k: f[k] for k in f.files}
    for i in range(1, n + 1):
        mine = arrays["rounds"] == i
        oracle = arrays["oracle"][mine] if "oracle" in arrays else None
        store.save_batch(folder, i, arrays["ids"][mine], arrays["labels"][mine], oracle)
        write_json(
            folder / "rounds" / f"round_{i:02d}.json",
            read_json(archive / "rounds" / f"round_{i:02d}.json"),
        )
    if (archive / "result.json").is_file():
        store.write_labels_csv(folder, pool, arrays["ids"], arrays["labels"], arrays["rounds"])
        write_json(folder / "result.json", read_json(archive / "result.json"))
    return n


def save_all(runs, archives) -> list[Path]:
    """Archive every run folder under ``runs`` (``<task>/<run folder>``) into ``archives``; the
    folders archived."""
    runs, done = Path(runs), []
    for config in sorted(runs.glob("*/*/config.json")):
        folder = config.parent
        if rounds_in(folder):
            save(folder, Path(archives) / folder.relative_to(runs))
            done.append(folder)
    return done


CODE_SUFFIX = re.compile(r"-c[0-9a-f]{8}$")


def rekey(root, *, dry_run: bool = False, stale: bool = False) -> list[tuple[Path, Path]]:
    """Give the run folders (or archives) under ``root`` (``<task>/<run folder>``) the name the
    current code gives them (``...-c<code>``): those named before run keys carried a code
    digest, and with ``stale`` also those whose digest is an older code's; ``(old, new)`` for
    each. This asserts that those runs were made by code that selects and labels as today's
    does: run it where that holds (nothing under ``pairlab/active`` or ``pairlab/annotators``
    changed since, or only its form, with ``tests/test_selections_pinned.py`` passing), never
    to keep a run whose code did change."""
    from .behaviour import run_code_digest
    from .config import ActiveConfig

    moved = []
    for path in sorted(Path(root).glob("*/*/config.json")):
        folder = path.parent
        if CODE_SUFFIX.search(folder.name) and not stale:
            continue
        stored = read_json(path)
        if stored.get("batches") is not None:
            stored["batches"] = tuple(stored["batches"])
        base = CODE_SUFFIX.sub("", folder.name)
        target = folder.with_name(f"{base}-c{run_code_digest(ActiveConfig(**stored))[:8]}")
        if target == folder:
            continue
        if target.exists():
            raise FileExistsError(f"{target} already exists: {folder} was re-run under the new key")
        if not dry_run:
            folder.rename(target)
        moved.append((folder, target))
    return moved


def main(argv=None) -> int:
    """``python -m pairlab.active.archive RUNS ARCHIVES`` (archive every run folder under RUNS)
    or ``--rekey ROOT [--stale] [--dry-run]`` (:func:`rekey`)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m pairlab.active.archive",
        description="Archive run folders, or give archives the name the current code gives them.",
    )
    parser.add_argument("runs", nargs="?", help="a folder of run folders (<task>/<run>)")
    parser.add_argument("archives", nargs="?", help="where their archives go")
    parser.add_argument("--rekey", metavar="ROOT", help="rename the archives under ROOT instead")
    parser.add_argument("--stale", action="store_true", help="with --rekey: older code digests too")
    parser.add_argument("--dry-run", action="store_true", help="with --rekey: only print")
    args = parser.parse_args(argv)
    if args.rekey:
        for old, new in rekey(args.rekey, dry_run=args.dry_run, stale=args.stale):
            print(f"{old} -> {new.name}")
        return 0
    if not (args.runs and args.archives):
        parser.error("give RUNS and ARCHIVES, or --rekey ROOT")
    for path in save_all(args.runs, args.archives):
        print(f"archived {path} ({rounds_in(path)} rounds)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
