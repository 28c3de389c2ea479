"""Models: cached embeddings (:mod:`.embed`), training settings (:mod:`.training`), the paper's
:mod:`.cosinebert` and :mod:`.concatbert`, :mod:`.scoring` and the :mod:`.inference` backend.
Submodules load torch and transformers only where they are used: import them directly."""

__all__ = ["concatbert", "cosinebert", "embed", "inference", "scoring", "training"]
