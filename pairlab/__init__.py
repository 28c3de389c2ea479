"""pairlab: adaptive data collection for extremely imbalanced pairwise tasks, as notebooks.

The package is drawn in layers; a module imports only from its own layer or the ones below:

``io``, ``paths``   raw readers, JSON out; where data, cache and runs live
``data``           pair ids (``pairs``), tasks and pools (``loaders``), the paper's numbers (``paper``)
``models``         encoder and cached embeddings (``embed``), ``training``, ``cosinebert``,
                   ``concatbert``, ``scoring`` (cosine of fixed embeddings), ``inference``
                   (forward passes on torch or ONNX Runtime)
``evaluation``     all-pairs strata (``strata``), the estimator (``metrics``), faiss neighbour
                   pairs (``candidates``), balanced-data metrics (``heuristic``), ``stats``
``annotators``     who answers a label request: the exact and noisy ``oracles``, a trained
                   ``model`` thresholded, an ``llm`` behind an OpenAI-compatible endpoint (its
                   ``prompts`` and SQLite answer ``cache``)
``active``         the strategy contract (``base``), criteria (``strategies``), candidate search
                   as a wrapper (``candidate_search``), ``config``, the round ``loop``, its
                   ``learner`` and run folder ``store``
``augment``        Augmented SBERT beside it: pair ``samplers`` (RS, KDE, BM25, SS) and the
                   cross-encoder's ``silver`` labels
``experiments``    ``sweeps`` of runs, ``tables``, ``records`` (metrics files), ``budget``
                   views, ``baselines`` (models on stated data), ``augsbert`` (notebook 06)
``widgets``        ``plots``, ``dashboard``, false-positive ``review`` and ``browser``,
                   ``keycatcher``, durable manual ``labels`` (SQLite)
``session``        label your own pairs: a person in the loop (``LabelingSession``), its worker
                   process and its ``export`` (labels, model, matches, clusters)
``notebook``, ``runner``   the notebooks' set-up call; papermill profiles (``python -m pairlab.runner``)

Heavy libraries (torch, transformers, faiss, ipywidgets, plotly, openai) load only in the modules
that use them; ``tests/test_layers.py`` holds the order.
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
