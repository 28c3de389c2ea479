"""Data and pools: pair ids, tasks and pools, the all-pairs builders, labelled pair files, your own
records and their pairs, QQP and WikiQA, and the papers' numbers. Imports nothing above it."""

from . import build, items, loaders, pairfile, pairs, paper, recordpool, tables, tasks  # noqa: F401
from .items import *  # noqa: F401,F403  your own records
from .loaders import *  # noqa: F401,F403  the tasks and pools are this layer's main names
from .recordpool import *  # noqa: F401,F403  the pairs of your own records

# the modules above and the public names of items, loaders and recordpool
__all__ = sorted(name for name in globals() if not name.startswith("_"))
