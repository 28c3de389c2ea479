"""Weaker encoders from a stronger one: a sentence-transformers model with only its first n
transformer layers (0: its token embeddings, mean-pooled), saved once as a model folder in the
cache, so everything that takes a model name or path takes it."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..io import locked, write_atomic
from ..paths import cache_dir
from .embed import DEFAULT_MODEL, load_encoder, model_fingerprint
from .training import quiet_progress

__all__ = ["transformer_layers", "truncate_layers", "truncated_model"]

# where BERT-like models keep their transformer layers (BERT, RoBERTa, MPNet, XLM-R, ELECTRA;
# DistilBERT)
LAYER_PATHS = ("encoder.layer", "transformer.layer")


def transformer_layers(encoder):
    """The ``ModuleList`` of transformer layers of a ``SentenceTransformer``; a model of another
    shape is a ``ValueError`` naming it."""
    auto_model = getattr(encoder[0], "auto_model", None) if len(encoder) else None
    for path in LAYER_PATHS:
        try:
            layers = auto_model.get_submodule(path)
        except AttributeError:
            continue
        if hasattr(layers, "__len__"):
            return layers
    raise ValueError(
        f"cannot find the transformer layers of {type(auto_model).__name__} (looked "
        f"for {', '.join(LAYER_PATHS)}): only BERT-like sentence-transformers models "
        "can be truncated"
    )


def truncate_layers(encoder, n_layers: int):
    """Keep the first ``n_layers`` transformer layers of ``encoder`` (in place; returned); with 0
    the pooled output is the embedding layer's."""
    layers = transformer_layers(encoder)
    whole = isinstance(n_layers, int) and not isinstance(n_layers, bool)
    if not (whole and 0 <= n_layers <= len(layers)):
        raise ValueError(
            f"n_layers must be an integer from 0 to the model's {len(layers)}, got {n_layers!r}"
        )
    del layers[n_layers:]
    encoder[0].auto_model.config.num_hidden_layers = n_layers  # what a saved copy is built from
    return encoder


def truncated_model(model=None, n_layers: int | None = None, *, folder=None) -> str | None:
    """A loadable model (name or path) holding ``model`` with its first ``n_layers`` layers:
    ``model`` itself for ``None`` or its own depth, else a folder saved once under ``folder``
    (default: ``$PAIRLAB_CACHE_DIR/models/truncated``), keyed by the original's weights."""
    if n_layers is None:
        return model
    key = hashlib.sha256(f"{model_fingerprint(model)}|{n_layers}".encode()).hexdigest()[:12]
    name = Path(str(model or DEFAULT_MODEL).rstrip("/")).name
    path = Path(folder or cache_dir() / "models" / "truncated") / f"{name}-{n_layers}layers-{key}"
    with locked(path.with_name(f"{path.name}.lock")), quiet_progress():  # a second process waits
        if (path / "modules.json").is_file():
            return str(path)
        encoder = load_encoder(model, device="cpu")
        if n_layers == len(transformer_layers(encoder)):
            return model
        truncate_layers(encoder, n_layers)
        write_atomic(path, lambda tmp: encoder.save(str(tmp)), setting="$PAIRLAB_CACHE_DIR")
    return str(path)
