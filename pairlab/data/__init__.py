"""Data and pools: pair ids (:mod:`.pairs`), tasks and their pools (:mod:`.tasks`), the two
all-pairs builders (:mod:`.build`), any labelled pair file as a task (:mod:`.pairfile`), QQP and
WikiQA (:mod:`.loaders`) and the paper's reference numbers (:mod:`.paper`). Imports nothing
above it.

The loaders' names are importable from here (``from pairlab.data import Pool, load_pairs``)."""
from . import build, loaders, pairfile, paper, pairs, tasks
from .loaders import *  # noqa: F401,F403  the tasks and pools are this layer's main names
from .loaders import __all__ as _loaders

__all__ = ["build", "loaders", "pairfile", "pairs", "paper", "tasks", *_loaders]
