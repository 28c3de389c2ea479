"""Temporary files and locks for the folders several processes write.

An atomic write goes first to a temporary named by the writer's process id and host
(``round_01.npz`` -> ``round_01.<pid>-<host>.tmp.npz``), then is renamed. :func:`remove_stale`
deletes this host's temporaries whose process is gone (a kill leaves one behind), never another
machine's (a Ray cluster shares folders); :func:`locked` makes a second process wait, then find
the work done.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
from contextlib import contextmanager
from pathlib import Path

__all__ = ["temporary", "is_temporary", "remove_stale", "locked"]

_TEMPORARY = re.compile(r"\.(\d+)(?:-([0-9a-f]{6}))?\.tmp(\.[A-Za-z0-9]+)?$")
HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]  # this machine, in names


def temporary(path, *, suffix: str | None = None) -> Path:
    """The temporary to write ``path`` under: ``name.<pid>-<host>.tmp`` plus ``suffix``
    (default: ``path``'s own, which numpy's writers insist on)."""
    path = Path(path)
    suffix = path.suffix if suffix is None else suffix
    stem = path.name[: -len(path.suffix)] if path.suffix and suffix == path.suffix else path.name
    return path.with_name(f"{stem}.{os.getpid()}-{HOST}.tmp{suffix}")


def is_temporary(path) -> bool:
    return _TEMPORARY.search(Path(path).name) is not None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def remove_stale(folder, *, recursive: bool = False, pattern: str = "*.tmp*") -> list[Path]:
    """Delete the temporaries under ``folder`` (matching ``pattern``) that this machine wrote and
    whose writing process no longer runs; returns what was deleted."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    for path in folder.rglob(pattern) if recursive else folder.glob(pattern):
        match = _TEMPORARY.search(path.name)
        if match is None or match.group(2) not in (None, HOST) or _alive(int(match.group(1))):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


@contextmanager
def locked(path, *, on_wait=None):
    """Hold filelock's exclusive lock on ``path`` for the block; another process waits
    (``on_wait()`` called once when it has to). A killed holder's lock is released."""
    from filelock import FileLock, Timeout

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        if on_wait is not None:
            on_wait()
        lock.acquire()
    try:
        yield
    finally:
        lock.release()
