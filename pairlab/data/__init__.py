"""Data and pools: pair ids, tasks and pools, the all-pairs builders, labelled pair files, your own
records and their pairs, QQP and WikiQA, and the papers' numbers. Imports nothing above it."""

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
