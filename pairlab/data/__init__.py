"""Data and pools: pair ids (:mod:`.pairs`), the all-pairs tasks built from the raw releases
(:mod:`.loaders`) and the paper's reference numbers (:mod:`.paper`). Imports nothing above it.

The loaders' names are importable from here (``from pairlab.data import Pool, load_tasks``)."""
from . import loaders, paper, pairs
from .loaders import *  # noqa: F401,F403  the tasks and pools are this layer's main names
from .loaders import __all__ as _loaders

__all__ = ["loaders", "pairs", "paper", *_loaders]
