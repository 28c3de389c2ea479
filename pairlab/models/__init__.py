"""Models: the pretrained encoder and its cached embeddings (:mod:`.embed`), shared training
settings (:mod:`.training`), the two models of the paper (:mod:`.cosinebert` bi-encoder,
:mod:`.concatbert` cross-encoder), scoring pairs from embeddings (:mod:`.scoring`) and the
backend inference runs on, torch or ONNX Runtime (:mod:`.inference`).
Submodules load torch and transformers only where they are used: import them directly."""

__all__ = ["concatbert", "cosinebert", "embed", "inference", "scoring", "training"]
