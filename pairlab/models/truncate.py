"""Weaker encoders from a stronger one: a sentence-transformers model with only its first n
transformer layers (0: its token embeddings, mean-pooled), no new weights.

This is how sentence-transformers' own distillation example makes a student (keep a subset of
``auto_model.encoder.layer`` and set ``config.num_hidden_layers``); here the first ``n`` layers
are kept and the result is saved once, as an ordinary model folder in the cache, so every part
of pairlab that takes a model name or path (training, embedding, their caches) takes it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..io import write_atomic
from ..paths import cache_dir
from ..tempfiles import locked
from .embed import DEFAULT_MODEL, load_encoder, model_fingerprint
from .training import quiet_progress

__all__ = ["LAYER_PATHS", "transformer_layers", "layer_count", "truncate_layers", "truncated_model"]

# where BERT-like models keep their list of transformer layers (BERT, RoBERTa, MPNet, XLM-R,
# ELECTRA: encoder.layer; DistilBERT: transformer.layer)
LAYER_PATHS = ("encoder.layer", "transformer.layer")


def transformer_layers(encoder) -> tuple[object, str]:
    """The transformer model (``encoder[0].auto_model``) of a ``SentenceTransformer`` and the
    dotted path of its layer list; a model of another shape is a ``ValueError`` naming it."""
    auto_model = getattr(encoder[0], "auto_model", None) if len(encoder) else None
    for path in LAYER_PATHS:
        module = auto_model
        for part in path.split("."):
            module = getattr(module, part, None)
        if module is not None and hasattr(module, "__len__"):
            return auto_model, path
    raise ValueError(
        f"cannot find the transformer layers of {type(auto_model).__name__} (looked "
        f"for {', '.join(LAYER_PATHS)}): only BERT-like sentence-transformers models "
        "can be truncated"
    )


def layer_count(encoder) -> int:
    """How many transformer layers a loaded ``SentenceTransformer`` has."""
    auto_model, path = transformer_layers(encoder)
    return len(_get(auto_model, path))


def truncate_layers(encoder, n_layers: int):
    """Keep the first ``n_layers`` transformer layers of ``encoder`` (in place; returned). With 0
    the pooled output is the pooling of the embedding layer's output: token, position and
    segment embeddings, layer-normalised."""
    import torch

    total = layer_count(encoder)
    if isinstance(n_layers, bool) or not isinstance(n_layers, int) or not 0 <= n_layers <= total:
        raise ValueError(
            f"n_layers must be an integer from 0 to the model's {total}, got {n_layers!r}"
        )
    auto_model, path = transformer_layers(encoder)
    parent, name = path.rsplit(".", 1)
    setattr(
        _get(auto_model, parent), name, torch.nn.ModuleList(list(_get(auto_model, path))[:n_layers])
    )
    auto_model.config.num_hidden_layers = n_layers  # what a saved copy is rebuilt from
    return encoder


def truncated_model(model=None, n_layers: int | None = None, *, folder=None) -> str | None:
    """A loadable model (name or path) holding ``model`` with its first ``n_layers`` layers:
    ``model`` itself for ``None`` or its own depth, else a folder saved once under ``folder``
    (default: ``$PAIRLAB_CACHE_DIR/models/truncated``), named by the layers and keyed by the
    original's weights, so any process finds the same copy."""
    if n_layers is None:
        return model
    key = hashlib.sha256(f"{model_fingerprint(model)}|{n_layers}".encode()).hexdigest()[:12]
    name = Path(str(model or DEFAULT_MODEL).rstrip("/")).name
    path = Path(folder or cache_dir() / "models" / "truncated") / f"{name}-{n_layers}layers-{key}"
    with locked(path.with_name(f"{path.name}.lock")), quiet_progress():  # a second process waits
        if (path / "modules.json").is_file():
            return str(path)
        encoder = load_encoder(model, device="cpu")
        if n_layers == layer_count(encoder):
            return model
        truncate_layers(encoder, n_layers)
        write_atomic(path, lambda tmp: encoder.save(str(tmp)), setting="$PAIRLAB_CACHE_DIR")
    return str(path)


def _get(module, path: str):
    for part in path.split("."):
        module = getattr(module, part)
    return module
