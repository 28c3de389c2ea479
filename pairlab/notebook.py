"""Notebook helpers: the shared settings, the set-up call, saving figures, recording the
metrics file."""

from __future__ import annotations

import os
import platform
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from .io import not_writable, to_json, write_json
from .paths import project_root, shown

__all__ = [
    "Context",
    "ParameterError",
    "Settings",
    "load_settings",
    "parameters",
    "png_export",
    "setup",
]


@dataclass(frozen=True)
class Context:
    """Where a notebook writes (its run and figures folders) and the parameters it ran with."""

    notebook: str
    run_dir: Path
    figures_dir: Path
    params: dict = field(default_factory=dict)  # the parameters the config file records
    png_skipped: list = field(default_factory=list, repr=False, compare=False)

    def path(self, name: str) -> Path:
        """A file in this notebook's run folder."""
        return self.run_dir / name

    @staticmethod
    def project_path(path) -> Path:
        """``path`` relative to the project root (absolute paths pass through)."""
        return project_root() / path

    shown = staticmethod(shown)

    def save_figure(self, fig, name: str) -> Path:
        """Write ``fig`` as ``<figures_dir>/<name>.html`` (plotly.js beside it, works offline)
        and, where kaleido finds a Chrome/Chromium, a static ``<name>.png`` beside it."""
        path = self.figures_dir / f"{name}.html"
        fig.write_html(path, include_plotlyjs="directory", full_html=True)
        available, reason = png_export()
        if available:
            fig.write_image(
                path.with_suffix(".png"), width=1100, height=fig.layout.height or 450, scale=2
            )
        elif not self.png_skipped:  # said once
            how = "install a browser (apt install chromium) or fetch one with plotly_get_chrome"
            how = "unset PAIRLAB_PNG" if "PAIRLAB_PNG" in reason else how
            print(f"PNG figures skipped: {reason}. The HTML figures are written. For PNGs, {how}.")
            self.png_skipped.append(reason)
        return path

    def record_metrics(self, metrics: dict) -> Path:
        """Write ``<run_dir>/<notebook>.metrics.json`` atomically, once it has its declared
        layout (:mod:`.metrics_files`)."""
        from .metrics_files import check

        path = self.path(f"{self.notebook}.metrics.json")
        check(self.notebook, to_json(metrics), source=str(path))
        return write_json(path, metrics)


class Settings:
    """A notebook's shared settings, read-only, by name (``cfg.model``); built by
    :func:`load_settings`, listed by ``dir(cfg)``."""

    __slots__ = ("notebook", "profile", "_values")

    def __init__(self, notebook: str, profile: str, values: dict):
        object.__setattr__(self, "notebook", notebook)
        object.__setattr__(self, "profile", profile)
        object.__setattr__(self, "_values", MappingProxyType(dict(values)))

    def __getattr__(self, name: str):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(
                f"{name!r} is not a shared setting of notebook {self.notebook} (its shared "
                f"settings: {', '.join(self._values)}; its own knobs are in its parameters cell)"
            ) from None

    def __setattr__(self, name, value):
        raise AttributeError(
            f"settings are read-only: to change {name!r}, pass it in `shared` "
            f"(load_settings(profile, notebook, {{{name!r}: ...}})) or edit the profile"
        )

    def __dir__(self):
        return [*self._values, "as_dict", "notebook", "profile"]

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"Settings({self.notebook}, profile={self.profile!r}: {inner})"

    def as_dict(self) -> dict:
        return dict(self._values)


def load_settings(
    profile: str, notebook: str, shared: dict | None = None, *, path=None, quiet: bool = False
) -> Settings:
    """The settings ``notebook`` shares with the suite (``profiles/base.yaml``) under
    ``profile``, with ``shared`` laid over them (the runner's ``-p``). ``model_layers = n``
    gives ``model`` cut to its first n transformer layers."""
    from .profiles import load_profile, own_and_shared

    if not isinstance(profile, str) or not profile:
        raise ValueError(
            f'profile = {profile!r}: name a profile in profiles/ ("quick", "smoke", '
            '"cpu"...); the notebook\'s shared settings come from it'
        )
    names = own_and_shared(_notebook_file(notebook, path))[1]
    values = load_profile(profile, notebook=notebook)
    unknown = sorted(set(shared or {}) - set(names))
    if unknown:
        raise ValueError(
            f"shared = {shared!r}: {unknown} are not shared settings of {notebook} "
            f"(those are: {', '.join(names)}; its own knobs are set in its parameters cell)"
        )
    values = {name: (shared or {}).get(name, values[name]) for name in names}
    if values.get("model_layers") is not None:  # saved once in the cache
        from .models.truncate import truncated_model

        model, n_layers = values["model"], values["model_layers"]
        values["model"] = truncated_model(model, n_layers)
        if not quiet and values["model"] != model:
            print(f"  model: the first {n_layers} transformer layers of {model or 'the default'}")
    return Settings(notebook, profile, values)


def _notebook_file(notebook: str, path=None) -> Path:
    return Path(path) if path else project_root() / "notebooks" / f"{notebook}.ipynb"


def setup(
    notebook: str | Settings,
    namespace: dict | None = None,
    *,
    path=None,
    quiet: bool = False,
    **params,
) -> Context:
    """The set-up call after a notebook's settings: ``ctx = setup(cfg, globals())``. Records the
    shared settings and the parameters cell's knobs (read from ``namespace``, never written) in
    ``<run_dir>/<notebook>.config.json`` and creates the run and figure folders. With a
    notebook's name and no namespace, ``params`` are the parameters (for scripts and tests)."""
    settings = notebook if isinstance(notebook, Settings) else None
    if settings is not None:
        notebook = settings.notebook
        params = {"profile": settings.profile, **settings.as_dict(), **params}
    if namespace is not None:
        knobs = _knobs(notebook, namespace, path)
        params = {**knobs, **params}
        if settings is not None and not quiet:
            _differ(settings, knobs)
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


def _knobs(notebook: str, namespace: dict, path) -> dict:
    """The values of the names the parameters cell assigns, but ``profile`` and ``shared``."""
    from .profiles import own_and_shared

    path = _notebook_file(notebook, path)
    if not path.is_file():
        raise FileNotFoundError(f"no notebook {path} to read the parameters of {notebook!r} from")
    names = [n for n in own_and_shared(path)[0] if n not in ("profile", "shared")]
    missing = [name for name in names if name not in namespace]
    if missing:
        raise NameError(
            f"parameters {missing} of {path.name} are not defined: run the "
            "parameters cell before the set-up cell"
        )
    return {name: namespace[name] for name in names}


def _differ(settings: Settings, knobs: dict) -> None:
    """Say which of the cell's own knobs differ from the profile's (the cell's are used)."""
    from .profiles import load_profile

    theirs = load_profile(settings.profile, notebook=settings.notebook)
    differ = [k for k, v in knobs.items() if k in theirs and to_json(v) != to_json(theirs[k])]
    if differ:
        print(
            f"  this cell's own values of {', '.join(differ)} differ from profile "
            f"{settings.profile!r}'s (the cell's are used; `make run PROFILE=...` runs the profile's)"
        )


def _inference(params: dict, quiet: bool) -> None:
    """Put ``inference_backend`` (and ``concat_backend``, the cross-encoders'; None: the same)
    in force for this process; ``params`` get the ones in force."""
    from .models.inference import ENV, backend, use

    asked = {key: params.get(key) for key in ("inference_backend", "concat_backend")}
    use(asked["inference_backend"], cross_encoder=asked["concat_backend"])
    running = {"inference_backend": backend(), "concat_backend": backend("cross-encoder")}
    for key in [k for k in asked if k in params]:
        params[key] = running[key]
        if asked[key] is not None and running[key] != asked[key] and not quiet:
            print(f"  {key}: {running[key]} (${ENV} overrides the parameter's {asked[key]!r})")


def png_export() -> tuple[bool, str]:
    """Whether static PNG export can run here, and why not: kaleido needs a Chrome or Chromium,
    found as its own finder does (``BROWSER_PATH``). ``PAIRLAB_PNG=0`` turns it off."""
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
    given = os.environ.get("BROWSER_PATH")
    where = f" (BROWSER_PATH={given!r} is not a program)" if given else ""
    return False, f"kaleido found no Chrome or Chromium{where}"


def _writable(folder: Path, setting: str) -> None:
    """Create ``folder`` and a file in it: a read-only place fails before any work, naming
    ``setting``."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise not_writable(folder, error, setting=setting) from error


class ParameterError(Exception):
    """A notebook parameter to change, shown as its one line without a traceback (IPython's
    ``_render_traceback_``; the error it came from stays ``__cause__``, for ``%debug``)."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


@contextmanager
def parameters(**given):
    """A bad file, column or value inside the block as a :class:`ParameterError` naming the
    notebook parameters ``given`` (name=value) to change (none given: the error names them)."""
    try:
        yield
    except (ValueError, TypeError, OSError, KeyError) as error:
        change = ", ".join(f"{name} = {value!r}" for name, value in given.items())
        where = f"the parameters cell's {change}" if change else "it in the parameters cell"
        raise ParameterError(f"{error} (change {where})") from error
