"""A run's archive: the small copy of a run folder committed to the repository, at
``<root>/<task>/<run folder name>``: ``config.json``, ``rounds/round_XX.json``, ``labels.npz``
(ids, labels, rounds, any oracle labels) and ``result.json``. ``python -m pairlab.active.archive
--rekey ROOT`` renames archives to the current code's key (:func:`rekey`).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np

from ..io import read_json, write_atomic, write_json
from . import store

__all__ = ["save", "restore", "rekey"]


def save(folder, archive) -> Path:
    """Write (or bring up to date) the archive of run folder ``folder`` at ``archive``."""
    folder, archive = Path(folder), Path(archive)
    n = store.rounds_in(folder)
    if n == 0:
        return archive
    batches = [store.read_batch(folder, i) for i in range(1, n + 1)]
    arrays = {
        "ids": np.concatenate([b["ids"] for b in batches]).astype(np.int64),
        "labels": np.concatenate([b["labels"] for b in batches]).astype(np.int8),
        "rounds": np.repeat(np.arange(1, n + 1, dtype=np.int16), [len(b["ids"]) for b in batches]),
    }
    if all("oracle" in b for b in batches):
        arrays["oracle"] = np.concatenate([b["oracle"] for b in batches]).astype(np.int8)
    write_atomic(archive / "labels.npz", lambda tmp: np.savez_compressed(tmp, **arrays))
    done = ["result.json"] if (folder / "result.json").is_file() else []
    for name in ["config.json", *(f"rounds/round_{i:02d}.json" for i in range(1, n + 1)), *done]:
        write_json(archive / name, read_json(folder / name))
    return archive


def restore(archive, folder, pool) -> int:
    """Replace run folder ``folder`` by ``archive`` where it holds more finished rounds; returns
    the rounds restored (0: none). ``pool``, the run's training pool, writes ``labels.csv``."""
    archive, folder = Path(archive), Path(folder)
    n = store.rounds_in(archive)
    if n <= store.rounds_in(folder) or not (archive / "config.json").is_file():
        return 0
    shutil.rmtree(folder, ignore_errors=True)  # fewer rounds than the archive: never mixed
    write_json(folder / "config.json", read_json(archive / "config.json"))
    with np.load(archive / "labels.npz") as f:
        arrays = {k: f[k] for k in f.files}
    for i in range(1, n + 1):  # each round's batch before its record, which says it is done
        mine = arrays["rounds"] == i
        oracle = arrays["oracle"][mine] if "oracle" in arrays else None
        store.save_batch(folder, i, arrays["ids"][mine], arrays["labels"][mine], oracle)
        name = f"rounds/round_{i:02d}.json"
        write_json(folder / name, read_json(archive / name))
    if (archive / "result.json").is_file():
        store.write_labels_csv(folder, pool, arrays["ids"], arrays["labels"], arrays["rounds"])
        write_json(folder / "result.json", read_json(archive / "result.json"))
    return n


CODE_SUFFIX = re.compile(r"-c[0-9a-f]{8}$")


def rekey(root, *, dry_run: bool = False, stale: bool = False) -> list[tuple[Path, Path]]:
    """Rename the run folders (or archives) under ``root`` named without a code digest (with
    ``stale``: an older one) to the current code's key; ``(old, new)`` for each. Only where their
    code selects and labels as today's does (``tests/test_selections_pinned.py`` passing)."""
    from .behaviour import run_code_digest
    from .config import ActiveConfig

    moved = []
    for path in sorted(Path(root).glob("*/*/config.json")):
        folder = path.parent
        if CODE_SUFFIX.search(folder.name) and not stale:
            continue
        code = run_code_digest(ActiveConfig(**read_json(path)))[:8]
        target = folder.with_name(f"{CODE_SUFFIX.sub('', folder.name)}-c{code}")
        if target == folder:
            continue
        if target.exists():
            raise FileExistsError(f"{target} already exists: {folder} was re-run under the new key")
        if not dry_run:
            folder.rename(target)
        moved.append((folder, target))
    return moved


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m pairlab.active.archive",
        description="Give archives the name the current code gives them.",
    )
    parser.add_argument("--rekey", metavar="ROOT", required=True, help="a folder of archives")
    parser.add_argument("--stale", action="store_true", help="older code digests too")
    parser.add_argument("--dry-run", action="store_true", help="only print")
    args = parser.parse_args(argv)
    for old, new in rekey(args.rekey, dry_run=args.dry_run, stale=args.stale):
        print(f"{old} -> {new.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
