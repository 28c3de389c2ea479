"""Temporary files and locks for the folders several processes write.

Every file pairlab writes atomically is first written under a temporary name that carries the
writing process's id and a digest of its host's name (``round_01.npz`` ->
``round_01.<pid>-<host>.tmp.npz``) and then renamed. A process killed between the two leaves the
temporary behind; :func:`remove_stale` deletes the ones of this host whose process is gone, so
a kill never blocks a resume nor fills the disk, and a folder that several machines share (a
Ray cluster's run folders and cache) never loses another machine's temporary to a process id
that happens to be free here. :func:`locked` serialises the processes that would otherwise do
the same work in one folder: the second waits, then finds the work done.
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
    """The temporary name to write ``path`` under before renaming it: ``name.<pid>-<host>.tmp``
    plus ``suffix`` (default: ``path``'s own suffix, which numpy's writers insist on)."""
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
    """Delete the temporaries under ``folder`` (those of ``pattern``) that this machine wrote and
    whose writing process no longer runs; returns what was deleted. A temporary of a live process
    (a writer at work) is left alone, and so is another machine's (its process id means nothing
    here); one named without a host (written before names carried it) counts as this machine's."""
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
    """Hold an exclusive lock on the file ``path`` (filelock's, created if missing) for the
    ``with`` block. Another process asking for it waits (``on_wait()`` is called once when it has
    to). The operating system releases the lock when its holder dies, so a killed holder never
    blocks anyone."""
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
