"""The learner the loop trains each round: CosineBERT from the pretrained checkpoint, with a
cache of the models every strategy sharing a seed set would otherwise train again."""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import fields
from functools import cached_property, partial
from pathlib import Path

import numpy as np

from ..data.loaders import Pool
from ..io import locked, remove_stale, write_atomic
from ..models.embed import embed_pool, model_fingerprint, text_digest
from ..models.inference import for_inference
from ..models.truncate import truncated_model
from ..paths import cache_dir
from .config import ActiveConfig

__all__ = ["CosineBERTLearner", "MEMBER_SEED", "RecentModels"]

MEMBER_SEED = 100_000  # committee member k trains with the round's seed + (k + 1) * this


class RecentModels(OrderedDict):
    """The last ``size`` entries used, by key."""

    size = 4

    def hold(self, key, make):
        """The entry of ``key``, made by ``make()`` if it is not held."""
        if key not in self:
            self[key] = make()
            while len(self) > self.size:
                self.popitem(last=False)
        self.move_to_end(key)
        return self[key]


RECENT = RecentModels()  # models of rounds the disk cache does not share, keyed like it
EMBEDDINGS = RecentModels()  # id(model) -> (model, {texts digest: (n, dim) embeddings})


class CosineBERTLearner:
    """Trains CosineBERT from the pretrained checkpoint each round. A model of ``shared_rounds``
    (the seed round) is cached on disk under a digest of all its training reads (training is
    deterministic), a later round's in memory; ``PAIRLAB_SHARE_MODELS=0`` turns both off."""

    VERSION = "cosinebert-1"  # part of the digest: bump when training changes

    def __init__(self, config: ActiveConfig, *, shared_rounds=(1,)):
        self.config = config
        self.sharing = os.environ.get("PAIRLAB_SHARE_MODELS") != "0"
        self.shared_rounds = tuple(shared_rounds) if self.sharing else ()

    @cached_property
    def model(self):
        """The model every round starts from: the config's, cut to its ``encoder_layers``."""
        return truncated_model(self.config.model, self.config.encoder_layers)

    def pretrained_embeddings(self, pool: Pool) -> tuple[np.ndarray, np.ndarray]:
        return embed_pool(
            pool, self.model, max_seq_length=self.config.max_seq_length, show_progress=False
        )

    def train(
        self,
        pool: Pool,
        ids: np.ndarray,
        labels: np.ndarray,
        *,
        round: int,
        member: int | None = None,
    ):
        """Round ``round``'s model; with ``member``, committee member ``member`` of that round
        (its own training seed, never shared)."""
        from ..models.cosinebert import CosineBERT
        from ..models.training import TrainConfig

        c = self.config  # its training settings (a query-level run's have no speed settings)
        shared = {f.name: getattr(c, f.name) for f in fields(TrainConfig) if hasattr(c, f.name)}
        seed = c.seed * 1000 + round + (0 if member is None else MEMBER_SEED * (member + 1))
        train_config = TrainConfig(**{**shared, "seed": seed})
        left, right = pool.texts(ids)
        fit = partial(
            CosineBERT.train, left, right, labels, model=self.model, config=train_config, quiet=True
        )
        if member is not None or not self.sharing:
            return fit()
        head = [self.VERSION, model_fingerprint(self.model), train_config.to_dict()]
        key = text_digest(left, right, head=[*head, np.asarray(labels, np.int8).tolist()])
        if round not in self.shared_rounds:
            return RECENT.hold(key, fit)
        path = cache_dir() / "models" / key
        with locked(path.with_name(f"{key}.lock")):  # a second process waits, then loads it
            if path.is_dir():
                model = CosineBERT.load(path)
            else:
                remove_stale(path.parent)  # what killed trainings left (about 90 MB each)
                model = fit()
                write_atomic(path, model.save, setting="$PAIRLAB_CACHE_DIR")  # never half a model
        model.cache_key = key
        return model

    @staticmethod
    def embed(model, texts) -> np.ndarray:
        """(n, dim) embeddings of ``texts`` under ``model``, computed once while it is held."""
        # keyed by id: the model is held, so its id is not reused meanwhile
        _, kept = EMBEDDINGS.hold(id(model), lambda: (model, {}))
        key = text_digest(texts)
        if key not in kept:
            kept[key] = model.embed(texts, show_progress=False)
        return kept[key]

    @staticmethod
    def export_for_inference(model) -> None:
        """Export ``model``'s encoder for the inference backend in force (once per weights)."""
        for_inference(model.encoder)

    @staticmethod
    def save(model, path: Path) -> None:
        model.save(path)

    @staticmethod
    def load(path: Path):
        from ..models.cosinebert import CosineBERT

        return CosineBERT.load(path)
