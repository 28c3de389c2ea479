"""Where things live: the project root, the data folder, the cache."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = [
    "DataNotFoundError",
    "cache_dir",
    "data_dir",
    "find_file",
    "first_file",
    "project_root",
    "shown",
]

DATA_LAYOUT = """\
expected layout:
  <data>/qqp/quora_duplicate_questions.tsv   (the original release, with header)
     or <data>/qqp/qqp_subset.tsv             (GLUE QQP format, no header)
  <data>/wikiqa/WikiQA-train*.tsv, WikiQA-dev*.tsv, WikiQA-test*.tsv  (from WikiQACorpus.zip)
get them: `make data` downloads both from their public sources into ./data (SHA256-checked),
or point PAIRLAB_DATA_DIR at a folder that has them.
Your own pair file instead: pairlab.data.load_pairs, or a notebook's dataset set to its path."""


class DataNotFoundError(FileNotFoundError):
    """The data folder or one of its files is missing."""


def project_root() -> Path:
    """The repository root when pairlab is installed in development mode, else the cwd."""
    here = Path(__file__).resolve().parents[1]
    if (here / "pyproject.toml").is_file() and (here / "notebooks").is_dir():
        return here
    return Path.cwd()


def shown(path, root: Path | None = None) -> str:
    """``path`` for printing: relative to the project root (or ``root``) where it is inside it."""
    root = project_root() if root is None else Path(root)
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def data_dir(path=None) -> Path:
    """The data folder: ``path``, else ``$PAIRLAB_DATA_DIR``, else ``./data``."""
    if path is not None:
        chosen, source = Path(path), "the data_dir argument"
    elif os.environ.get("PAIRLAB_DATA_DIR"):
        chosen, source = Path(os.environ["PAIRLAB_DATA_DIR"]), "$PAIRLAB_DATA_DIR"
    else:
        chosen, source = Path("data"), "the default ./data"
    if not chosen.is_absolute() and not chosen.is_dir() and (project_root() / chosen).is_dir():
        chosen = project_root() / chosen  # relative to the project root, as `make` sets it
    if not chosen.is_dir():
        raise DataNotFoundError(
            f"data folder {chosen.resolve()} (from {source}) does not exist.\n{DATA_LAYOUT}"
        )
    return chosen


def find_file(path) -> Path:
    """A file a notebook parameter names: as given if absolute, else relative to the project
    root, else to the data folder."""
    path = Path(path)
    places = [project_root() / path]  # an absolute path stays itself
    if not path.is_absolute():
        with contextlib.suppress(DataNotFoundError):
            places.append(data_dir() / path)
    return first_file(places, f"no file {str(path)!r}: looked at " + ", ".join(map(str, places)))


def first_file(places, missing: str) -> Path:
    """The first of ``places`` that is a file, else a :class:`DataNotFoundError`: ``missing``."""
    for place in places:
        if Path(place).is_file():
            return Path(place)
    raise DataNotFoundError(missing)


def cache_dir() -> Path:
    """Cache folder for embeddings: ``$PAIRLAB_CACHE_DIR``, else ``~/.cache/pairlab``."""
    path = Path(os.environ.get("PAIRLAB_CACHE_DIR") or Path.home() / ".cache" / "pairlab")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        from .io import not_writable  # pandas and numpy: only when it is needed

        raise not_writable(path, error, setting="$PAIRLAB_CACHE_DIR") from error
    return path
