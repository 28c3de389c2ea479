"""pairlab: adaptive data collection for extremely imbalanced pairwise tasks, as notebooks.

The package is drawn in layers, stated and enforced in ``tests/test_layers.py`` (ARCHITECTURE.md
shows them); heavy libraries load only in the modules that use them.
"""

__version__ = "0.1.0"

__all__ = [
    "active",
    "annotators",
    "augment",
    "data",
    "evaluation",
    "experiments",
    "io",
    "models",
    "notebook",
    "paths",
    "runner",
    "session",
    "widgets",
]
