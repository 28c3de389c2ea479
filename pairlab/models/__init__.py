"""Models: the pretrained encoder and its cached embeddings (:mod:`.embed`), shared training
settings (:mod:`.training`), the two models of the paper (:mod:`.cosinebert` bi-encoder,
:mod:`.concatbert` cross-encoder) and scoring pairs from embeddings (:mod:`.scoring`).
Submodules load torch and transformers only where they are used: import them directly."""

__all__ = ["concatbert", "cosinebert", "embed", "scoring", "training"]
