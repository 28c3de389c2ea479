"""Data and pools: pair ids (:mod:`.pairs`), tasks and their pools (:mod:`.tasks`), the two
all-pairs builders (:mod:`.build`), the table reader (:mod:`.tables`), any labelled pair file as
a task (:mod:`.pairfile`), your own unlabelled records (:mod:`.items`) and their pairs
(:mod:`.recordpool`), QQP and WikiQA (:mod:`.loaders`) and the paper's reference numbers
(:mod:`.paper`). Imports nothing above it.

The loaders' and the records' names are importable from here (``from pairlab.data import Pool,
load_pairs, load_items, record_pairs``)."""

from . import build, items, loaders, pairfile, pairs, paper, recordpool, tables, tasks
from .items import *  # noqa: F401,F403  your own records
from .items import __all__ as _items
from .loaders import *  # noqa: F401,F403  the tasks and pools are this layer's main names
from .loaders import __all__ as _loaders
from .recordpool import *  # noqa: F401,F403  the pairs of your own records
from .recordpool import __all__ as _recordpool

__all__ = [
    "build",
    "items",
    "loaders",
    "pairfile",
    "pairs",
    "paper",
    "recordpool",
    "tables",
    "tasks",
    *_loaders,
    *_items,
    *_recordpool,
]
