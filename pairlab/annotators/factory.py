"""The annotator a run's config names (``ActiveConfig.annotator``): a dict with a ``kind``,
``"oracle"`` (or no spec), ``"noisy"``, ``"error_dependent"`` (``accuracy`` per equal-width bin of
the base model's error, ``seed``, the base ``model``) or ``"llm"``, with the class's arguments.
"""

from __future__ import annotations

import numpy as np

from ..data.loaders import Pool
from .base import Annotator
from .llm import LLMAnnotator
from .oracles import ErrorDependentOracle, NoisyOracle, Oracle

__all__ = ["KINDS", "make_annotator", "annotator_class", "base_error", "error_edges"]

KINDS = ("oracle", "noisy", "error_dependent", "llm")


def make_annotator(spec: dict | None) -> Annotator:
    """The annotator ``spec`` describes (None: the oracle)."""
    cls = annotator_class(spec)
    if cls is None:
        raise ValueError(
            f"an annotator spec is a dict with a 'kind' in {KINDS}, got {spec!r} "
            "(another annotator is passed to the loop as an object)"
        )
    args = {k: v for k, v in (spec or {}).items() if k != "kind"}
    if "api_key" in args:
        raise ValueError(
            "keep the API key out of the annotator spec: it is written to the run's "
            "config.json; set $OPENAI_API_KEY instead"
        )
    if cls is ErrorDependentOracle:
        accuracy, model = args.pop("accuracy"), args.pop("model", None)
        length = args.pop("max_seq_length", 128)

        def errors(pool: Pool, ids) -> np.ndarray:  # under the pretrained encoder (disk-cached)
            from ..models.embed import embed_pool
            from ..models.scoring import CosineScorer

            left, right = embed_pool(pool, model, max_seq_length=length, show_progress=False)
            ids = np.asarray(ids, np.int64)
            return base_error(pool, ids, CosineScorer(pool.space, left, right)(ids))

        return ErrorDependentOracle(errors, accuracy, error_edges(len(accuracy)), **args)
    return cls(**args)


def annotator_class(spec: dict | None) -> type | None:
    """The class of the annotator ``spec`` describes, unbuilt (what a run's code digest reads);
    None for a kind not built from a spec."""
    kind = "oracle" if spec is None else spec.get("kind") if isinstance(spec, dict) else None
    classes = (Oracle, NoisyOracle, ErrorDependentOracle, LLMAnnotator)  # in KINDS' order
    return dict(zip(KINDS, classes)).get(kind)


def base_error(pool: Pool, ids: np.ndarray, base_cosine: np.ndarray) -> np.ndarray:
    """(n,) squared error of the base cosine (clipped to [0, 1]) against the labels of ``ids``."""
    return (np.clip(np.asarray(base_cosine, np.float64), 0.0, 1.0) - pool.labels(ids)) ** 2


def error_edges(n_bins: int) -> np.ndarray:
    """(n_bins - 1,) equal-width cut points of the base error in [0, 1]: fixed, so a pair's bin
    never depends on the pairs asked beside it."""
    if n_bins < 1:
        raise ValueError(f"n_bins must be positive, got {n_bins!r}")
    return np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
