"""pairlab: adaptive data collection for extremely imbalanced pairwise tasks, as notebooks.

The package is drawn in layers: a module imports only from its own layer or the ones below.
The layers are stated once, in ``tests/test_layers.py``, which enforces them; ARCHITECTURE.md
(rendered from that list by ``make docs``) shows them with where each concept lives. Heavy
libraries (torch, transformers, faiss, ipywidgets, plotly, openai) load only in the modules that
use them.
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
