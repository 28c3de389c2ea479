"""ConcatBERT (paper 3.1.3): sentence-transformers' ``CrossEncoder(num_labels=1)``, both texts
in one input. Scores are raw logits: a float32 sigmoid saturates to 1.0 and would tie pairs.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..progress import Progress
from .embed import cached_array, loading, save_model, saved_model, text_digest
from .inference import backend, cache_tag, for_inference
from .training import (
    TrainConfig,
    default_device,
    pair_dataset,
    quiet_progress,
    trainer,
    training_context,
)

__all__ = ["ConcatBERT"]

INFO_FILE = "pairlab_info.json"


class ConcatBERT:
    """A cross-encoder scoring (left, right) text pairs."""

    output_cache: Path | None = None  # a folder for logits, where the weights are saved

    def __init__(self, cross_encoder, *, info: dict | None = None):
        self.model, self.info = cross_encoder, dict(info or {})

    @classmethod
    def untrained(cls, model=None, *, max_seq_length: int = 128, seed: int = 0, device=None):
        """The pretrained encoder with a fresh one-logit head."""
        import torch
        from sentence_transformers import CrossEncoder

        torch.manual_seed(seed)  # the head's initialisation
        # silenced: what loading a bi-encoder checkpoint as a fresh cross-encoder always logs
        # (sentence-transformers' "Converting ...", transformers' report of the new head)
        logging.disable(logging.WARNING)
        try:
            with loading(model) as name, quiet_progress():
                ce = CrossEncoder(
                    name, num_labels=1, max_length=max_seq_length, device=device or default_device()
                )
        finally:
            logging.disable(logging.NOTSET)
        return cls(ce, info={"model": str(model), "trained_on": 0})

    @classmethod
    def train(
        cls, left_texts, right_texts, labels, *, model=None, config: TrainConfig = TrainConfig()
    ) -> ConcatBERT:
        """Fine-tune from the pretrained checkpoint on labelled pairs."""
        from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

        dataset = pair_dataset(left_texts, right_texts, labels)
        trained = cls.untrained(model, max_seq_length=config.max_seq_length, seed=config.seed)
        loss = BinaryCrossEntropyLoss(trained.model)
        with training_context(trained.model, config):
            trainer(trained.model, loss, dataset, config).train()
        trained.model.eval()
        trained.info.update(trained_on=len(dataset), config=config.to_dict())
        return trained

    def logits(
        self, left_texts, right_texts, *, batch_size: int = 64, show_progress: bool = True
    ) -> np.ndarray:
        """Raw logits (n,) float64 of text pairs, batched with a progress bar; read back from
        ``output_cache`` when these texts were scored before."""
        import torch

        left, right = [str(t) for t in left_texts], [str(t) for t in right_texts]
        if len(left) != len(right):
            raise ValueError(f"{len(left)} left texts but {len(right)} right texts")
        if not left:
            return np.empty(0)

        on = backend("cross-encoder")

        def compute():  # on the cross-encoders' inference backend in force, in whole batches
            runner, pairs = for_inference(self.model, name=on), list(zip(left, right))
            order = np.argsort([-len(a) - len(b) for a, b in pairs])  # as it sorts them
            out = np.empty(len(pairs))
            with Progress(len(pairs), "pairs scored", show=show_progress) as done:
                for chunk in np.array_split(order, np.arange(512, len(order), 512)):
                    out[chunk] = runner.predict(
                        [pairs[i] for i in chunk],
                        batch_size=batch_size,
                        show_progress_bar=False,
                        activation_fn=torch.nn.Identity(),
                        convert_to_numpy=True,
                    ).reshape(-1)
                    done.advance(len(chunk))
            if not np.isfinite(out).all():
                raise ValueError("the cross-encoder returned non-finite scores")
            return out

        key = self.output_cache and text_digest(
            left, right, head=["logits", self.model.max_seq_length, *cache_tag(on)]
        )
        return cached_array(self.output_cache, key, compute)

    def score_pairs(self, pool, pair_ids) -> np.ndarray:
        """Logits of pair ids of ``pool``."""
        return self.logits(*pool.texts(np.asarray(pair_ids, dtype=np.int64)))

    def scorer(self, pool):
        """A callable: pair ids of ``pool`` -> logits."""
        return lambda pair_ids: self.score_pairs(pool, pair_ids)

    def save(self, path) -> Path:
        return save_model(self.model, path, INFO_FILE, self.info)

    @classmethod
    def load(cls, path, *, device=None) -> ConcatBERT:
        from sentence_transformers import CrossEncoder

        with saved_model(path, INFO_FILE, "ConcatBERT") as info:
            return cls(CrossEncoder(str(path), device=device or default_device()), info=info)
