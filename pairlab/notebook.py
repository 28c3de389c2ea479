"""Notebook helpers: the one set-up call, saving figures, recording the metrics file."""
from __future__ import annotations

import json
import os
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .paths import project_root

__all__ = ["Context", "png_export", "setup", "to_json", "write_json"]


@dataclass(frozen=True)
class Context:
    """Where a notebook writes: its run folder (metrics, config) and its figures folder."""

    notebook: str
    run_dir: Path
    figures_dir: Path

    @property
    def metrics_path(self) -> Path:
        return self.run_dir / f"{self.notebook}.metrics.json"

    def path(self, name: str) -> Path:
        """A file in this notebook's run folder."""
        return self.run_dir / name

    @staticmethod
    def project_path(path) -> Path:
        """``path`` relative to the project root (absolute paths pass through)."""
        return project_root() / path

    def save_figure(self, fig, name: str, *, png: bool = True) -> Path:
        """Write ``fig`` as ``<figures_dir>/<name>.html`` (plotly.js beside it, works offline)
        and, where kaleido finds a Chrome/Chromium, a static ``<name>.png`` beside it."""
        path = self.figures_dir / f"{name}.html"
        fig.write_html(path, include_plotlyjs="directory", full_html=True)
        if png:
            _write_png(fig, path.with_suffix(".png"))
        return path

    def record_metrics(self, metrics: dict) -> Path:
        """Write the notebook's metrics file atomically; tests and readers check this file."""
        return write_json(self.metrics_path, metrics)


def setup(notebook: str, *, run_dir="runs/interactive", figures_dir="figures/interactive",
          params: dict | None = None, quiet: bool = False) -> Context:
    """Create the run and figure folders (relative to the project root), write the parameters
    to ``<run_dir>/<notebook>.config.json`` and print where things are."""
    root = project_root()
    ctx = Context(notebook, (root / run_dir).resolve(), (root / figures_dir).resolve())
    ctx.run_dir.mkdir(parents=True, exist_ok=True)
    ctx.figures_dir.mkdir(parents=True, exist_ok=True)
    if params is not None:
        write_json(ctx.run_dir / f"{notebook}.config.json", params)
    if not quiet:
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        print(f"pairlab notebook {notebook}: python {platform.python_version()}, "
              f"torch {torch.__version__} on {device}, {os.cpu_count()} cpu(s)")
        print(f"  run folder: {_relative(ctx.run_dir, root)}; figures: "
              f"{_relative(ctx.figures_dir, root)}")
    return ctx


def to_json(value):
    """Plain-Python copy of ``value`` (numpy scalars and arrays become numbers and lists)."""
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_json(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    return value


_PNG_SKIP_REPORTED = []


def png_export() -> tuple[bool, str]:
    """Whether static PNG export can run here, and why not: kaleido draws with a Chrome or
    Chromium, found the way kaleido's own browser finder (choreographer) finds it, honouring
    ``BROWSER_PATH`` and a browser fetched by ``plotly_get_chrome``. Decided before exporting, so
    a missing browser is never an exception from inside plotly."""
    try:
        import kaleido  # noqa: F401
        from choreographer.browsers.chromium import Chromium
    except ImportError as missing:
        return False, f"kaleido is not installed ({missing.name} missing)"
    path = Chromium.find_browser(skip_local=False)
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        return True, path
    where = f" (BROWSER_PATH={os.environ['BROWSER_PATH']!r} is not a program)" \
        if os.environ.get("BROWSER_PATH") else ""
    return False, f"kaleido found no Chrome or Chromium{where}"


def _write_png(fig, path: Path) -> None:
    """Static export through kaleido where a browser is there; else say once why PNGs are
    skipped and how to get them (the HTML figure is written either way)."""
    available, reason = png_export()
    if available:
        fig.write_image(path, width=1100, height=fig.layout.height or 450, scale=2)
        return
    if not _PNG_SKIP_REPORTED:
        print(f"PNG figures skipped: {reason}. The HTML figures are written. For PNGs, install "
              "a browser (apt install chromium) or fetch one with plotly_get_chrome where "
              "there is internet.")
        _PNG_SKIP_REPORTED.append(reason)


def write_json(path: Path, value) -> Path:
    """Write ``value`` (numpy allowed) as JSON atomically: a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(to_json(value), indent=2, sort_keys=True, allow_nan=False) + "\n")
    os.replace(tmp, path)
    return path


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
