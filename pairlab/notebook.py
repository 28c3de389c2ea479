"""Notebook helpers: the one set-up call, saving figures, recording the metrics file."""

from __future__ import annotations

import os
import platform
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .io import not_writable, to_json, write_json
from .paths import project_root, shown

__all__ = ["Context", "parameters", "png_export", "setup", "to_json", "write_json"]


@dataclass(frozen=True)
class Context:
    """Where a notebook writes (its run folder: metrics, config; its figures folder) and the
    parameters it ran with."""

    notebook: str
    run_dir: Path
    figures_dir: Path
    params: dict = field(default_factory=dict)  # the parameters the config file records
    # why PNG figures were skipped, once said: one message a notebook, not one a figure
    png_skipped: list = field(default_factory=list, repr=False, compare=False)

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

    @staticmethod
    def shown(path) -> str:
        """``path`` for printing: relative to the project root where it lies inside it, else
        absolute (a run_dir outside the repository)."""
        return shown(path)

    def save_figure(self, fig, name: str, *, png: bool = True) -> Path:
        """Write ``fig`` as ``<figures_dir>/<name>.html`` (plotly.js beside it, works offline)
        and, where kaleido finds a Chrome/Chromium, a static ``<name>.png`` beside it."""
        path = self.figures_dir / f"{name}.html"
        fig.write_html(path, include_plotlyjs="directory", full_html=True)
        if png:
            _write_png(fig, path.with_suffix(".png"), self.png_skipped)
        return path

    def record_metrics(self, metrics: dict) -> Path:
        """Write the notebook's metrics file atomically, once it has the notebook's declared
        layout (:mod:`.metrics_files`: a :class:`~.metrics_files.MetricsLayoutError` names what
        differs); tests and readers check this file."""
        from .io import to_json
        from .metrics_files import check

        check(self.notebook, to_json(metrics), source=str(self.metrics_path))
        return write_json(self.metrics_path, metrics)


def parameters(notebook: str, namespace: dict, *, path=None) -> dict:
    """The notebook's parameters and their current values: every name its ``parameters`` cell
    assigns (read from the notebook file itself, as papermill reads it) and, where the cell has
    a ``profile``, the shared settings it takes from the profile (:func:`.profiles.shared`),
    valued from ``namespace`` so papermill's injected values and edits made in the kernel count."""
    from .profiles import declared

    path = Path(path) if path else project_root() / "notebooks" / f"{notebook}.ipynb"
    if not path.is_file():
        raise FileNotFoundError(f"no notebook {path} to read the parameters of {notebook!r} from")
    names = declared(notebook, path=path)
    if not names:
        raise ValueError(f"{path} has no cell tagged 'parameters'")
    missing = [name for name in names if name not in namespace]
    if missing:
        raise NameError(
            f"parameters {missing} of {path.name} are not defined: run the "
            "parameters cell before the set-up cell"
        )
    return {name: namespace[name] for name in names}


def setup(
    notebook: str, namespace: dict | None = None, *, path=None, quiet: bool = False, **params
) -> Context:
    """The set-up call after a notebook's parameters cell: ``setup("01_name", globals())``.

    Records every parameter of the parameters cell (:func:`parameters`) in
    ``<run_dir>/<notebook>.config.json``, creates the run and figure folders (relative to the
    project root) and prints where things are. Without ``namespace``, ``params`` are the
    parameters (for scripts and tests)."""
    if namespace is not None:
        _from_profile(notebook, namespace, path, quiet)
        params = {**parameters(notebook, namespace, path=path), **params}
    if params.get("model_layers") is not None:
        _model_layers(params, namespace, quiet)
    if "inference_backend" in params:  # what ran is recorded: $PAIRLAB_INFERENCE_BACKEND wins
        _inference(params, quiet)
    root = project_root()
    run_dir = params.get("run_dir") or "runs/interactive"
    figures_dir = params.get("figures_dir") or "figures/interactive"
    ctx = Context(notebook, (root / run_dir).resolve(), (root / figures_dir).resolve(), params)
    _writable(ctx.run_dir, "run_dir")
    _writable(ctx.figures_dir, "figures_dir")
    write_json(ctx.run_dir / f"{notebook}.config.json", params)
    if not quiet:
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        print(
            f"pairlab notebook {notebook}: python {platform.python_version()}, "
            f"torch {torch.__version__} on {device}, {os.cpu_count()} cpu(s)"
        )
        print(f"  run folder: {shown(ctx.run_dir, root)}; figures: {shown(ctx.figures_dir, root)}")
    return ctx


_TAKEN = (
    "_pairlab_from_profile"  # the names set-up last took from a profile (taken again on a re-run)
)


def _from_profile(notebook: str, namespace: dict, path, quiet: bool) -> list[str]:
    """Give a notebook whose parameters cell has a ``profile`` the shared settings it does not
    set itself (:func:`.profiles.shared`); the names set, in order. The cell's own knobs stay as
    the cell (or papermill) set them. Two ways in:

    - ``profile = "quick"`` in the parameters cell (working in JupyterLab): the shared settings
      of ``profiles/quick.yaml`` for this notebook, read over ``profiles/base.yaml``
      (:func:`.profiles.load_profile`, its run and figure folders included); a line says which,
      and another names the cell's knobs the profile would set otherwise;
    - a whole profile passed by ``papermill -f profiles/<name>.yaml``: papermill injects its
      top-level keys, and its ``notebooks`` section arrives as a variable; the sections naming
      this notebook are applied over the top-level values, as the runner does, and
      ``profiles/base.yaml`` gives what the file does not.

    A name papermill injected (the runner passes every one) is kept; one an earlier set-up call
    took is taken again, so changing ``profile`` and re-running the cells changes them all.
    """
    from .profiles import SECTION, load_profile, own_and_shared, resolve, settings

    path = Path(path) if path else project_root() / "notebooks" / f"{notebook}.ipynb"
    cell, names = own_and_shared(notebook, path=path)
    if "profile" not in cell:
        return []
    before = set(namespace.get(_TAKEN, ()))
    chosen = namespace.get("profile")
    if isinstance(namespace.get(SECTION), dict):
        sections = resolve({SECTION: namespace[SECTION]}, notebook)
        for name in [*cell, *names]:
            if name in sections:
                namespace[name] = sections[name]
        values, source = (
            settings(notebook),
            "profiles/base.yaml (papermill's profile gives the rest)",
        )
    elif isinstance(chosen, str) and chosen:
        values = load_profile(chosen, notebook=notebook)
        source = f"profile {chosen!r} (profiles/{chosen}.yaml over profiles/base.yaml)"
    else:
        raise ValueError(
            f'profile = {chosen!r}: name a profile in profiles/ ("quick", "smoke", '
            '"cpu"...); the notebook\'s shared settings come from it'
        )
    taken = [name for name in names if name not in namespace or name in before]
    for name in taken:
        namespace[name] = values[name]
    namespace[_TAKEN] = taken
    if not quiet and taken:
        print(f"  shared settings from {source}: {', '.join(taken)}")
    differ = [
        name
        for name in cell
        if name != "profile" and name in values and _plain(namespace[name]) != _plain(values[name])
    ]
    if not quiet and differ and isinstance(chosen, str) and SECTION not in namespace:
        print(
            f"  this cell's own values of {', '.join(differ)} differ from profile {chosen!r}'s "
            "(the cell's are used; `make run PROFILE=...` runs the profile's)"
        )
    return taken


def _plain(value):
    """A value as JSON would hold it, so ``2e-5`` and ``2.0e-5``, tuples and lists compare equal."""
    return to_json(value)


def _model_layers(params: dict, namespace: dict | None, quiet: bool) -> None:
    """``model_layers = n``: ``model`` becomes the same model cut to its first ``n`` transformer
    layers (:func:`.models.truncate.truncated_model`: saved once in the cache), in ``params`` and
    in the notebook's namespace, so every call that takes ``model`` gets the smaller encoder.
    The smoke profile uses 2 of MiniLM's 6 in notebooks 01, 02, 08 and 10 (profiles/smoke.yaml)."""
    from .models.truncate import truncated_model

    original, n_layers = params.get("model"), params["model_layers"]
    params["model"] = truncated_model(original, n_layers)
    if namespace is not None:
        namespace["model"] = params["model"]
    if not quiet and params["model"] != original:
        print(f"  model: the first {n_layers} transformer layers of {original or 'the default'}")


def _inference(params: dict, quiet: bool) -> None:
    """Put the notebook's ``inference_backend`` (and ``concat_backend``, the cross-encoders'
    where it has one; None: the same) in force for this process; ``params`` get the ones in
    force."""
    from .models.inference import ENV, backend, use

    chosen, concat = params["inference_backend"], params.get("concat_backend")
    params["inference_backend"] = running = use(chosen, cross_encoder=concat)
    if running != chosen and not quiet:
        print(f"  inference backend: {running} (${ENV} overrides the parameter's {chosen!r})")
    if "concat_backend" in params:
        params["concat_backend"] = concat_running = backend("cross-encoder")
        if concat is not None and concat_running != concat and not quiet:
            print(
                f"  ConcatBERT's backend: {concat_running} (${ENV} overrides the parameter's {concat!r})"
            )


def png_export() -> tuple[bool, str]:
    """Whether static PNG export can run here, and why not: kaleido draws with a Chrome or
    Chromium, found the way kaleido's own browser finder (choreographer) finds it, honouring
    ``BROWSER_PATH`` and a browser fetched by ``plotly_get_chrome``. Decided before exporting, so
    a missing browser is never an exception from inside plotly. ``PAIRLAB_PNG=0`` turns it off
    (``make test`` does: a kaleido export starts a browser, seconds a figure)."""
    if os.environ.get("PAIRLAB_PNG", "1").strip().lower() in ("0", "false", "no", "off"):
        return False, "PNG export turned off (PAIRLAB_PNG=0)"
    try:
        import kaleido  # noqa: F401
        from choreographer.browsers.chromium import Chromium
    except ImportError as missing:
        return False, f"kaleido is not installed ({missing.name} missing)"
    path = Chromium.find_browser(skip_local=False)
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        return True, path
    where = (
        f" (BROWSER_PATH={os.environ['BROWSER_PATH']!r} is not a program)"
        if os.environ.get("BROWSER_PATH")
        else ""
    )
    return False, f"kaleido found no Chrome or Chromium{where}"


def _write_png(fig, path: Path, skipped: list) -> None:
    """Static export through kaleido where a browser is there; else say why PNGs are skipped
    and how to get them, once: unless ``skipped`` (the notebook's record of it) holds a reason
    already (the HTML figure is written either way)."""
    available, reason = png_export()
    if available:
        fig.write_image(path, width=1100, height=fig.layout.height or 450, scale=2)
        return
    if not skipped:
        how = (
            "unset PAIRLAB_PNG"
            if "PAIRLAB_PNG" in reason
            else "install a browser (apt install "
            "chromium) or fetch one with plotly_get_chrome where there is internet"
        )
        print(f"PNG figures skipped: {reason}. The HTML figures are written. For PNGs, {how}.")
        skipped.append(reason)


def _writable(folder: Path, setting: str) -> None:
    """Create ``folder`` and a file in it, so that a read-only place is a clear error naming
    ``setting`` before any work, not a failure to save hours later."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise not_writable(folder, error, setting=setting) from error
