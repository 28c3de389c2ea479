"""pairlab: adaptive data collection for extremely imbalanced pairwise tasks, as notebooks.

Modules (import what you need; heavy libraries load only where used):
``pairs`` pair-id codes and id sets · ``io`` raw readers · ``data`` tasks and pools ·
``embed`` encoders and cached embeddings · ``candidates`` faiss neighbour pairs ·
``metrics`` all-pairs estimators · ``evaluation`` strata, scorers, exact enumeration ·
``heuristic`` balanced-data metrics · ``stats`` dataset statistics · ``plots`` figures ·
``notebook`` notebook set-up · ``runner`` papermill profiles · ``paper`` reference numbers ·
``training`` shared hyperparameters · ``concatbert`` / ``cosinebert`` the two models ·
``baselines`` models on stated data · ``labels`` durable manual marks (SQLite) ·
``browser`` the false-positive browser (ipywidgets).
"""
__version__ = "0.1.0"

__all__ = ["baselines", "browser", "candidates", "concatbert", "cosinebert", "data", "embed",
           "evaluation", "heuristic", "io", "labels", "metrics", "notebook", "pairs", "paper",
           "paths", "plots", "runner", "stats", "training"]
