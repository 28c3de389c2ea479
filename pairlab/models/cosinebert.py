"""CosineBERT (paper 4.2.1, appendix A.1): a bi-encoder whose probability is a logistic model on
the cosine of the two embeddings, so positives can be searched by nearest neighbours: a
``SentenceTransformer`` (dropout off) trained with :class:`CosineBCELoss`, then (w, b) refitted on
the frozen encoder's cosines of the training pairs (:class:`Calibration`) for a calibrated p.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import numpy as np
import torch
from scipy.special import expit
from torch import nn
from torch.nn import functional as F

from . import training
from .embed import cached_array, encode, load_encoder, save_model, saved_model, text_digest
from .inference import cache_tag
from .scoring import CosineScorer
from .training import TrainConfig, disable_dropout, pair_dataset, training_context

__all__ = ["CosineBCELoss", "Calibration", "CosineBERT", "HEAD_LR_FACTOR"]

HEAD_LR_FACTOR = 1e4  # w and b learn this much faster than the encoder
CALIBRATION_FILE = "pairlab_calibration.json"
MIN_SLOPE = 1e-6  # the calibrated logit stays strictly increasing in the cosine


class CosineBCELoss(nn.Module):
    """Binary cross-entropy of sigmoid(|w| * BN(cos(e1, e2)) + b); BN has no affine part and
    averages its statistics over the whole run (momentum None)."""

    def __init__(self, model, *, w_init: float = 10.0, b_init: float = -50.0):
        super().__init__()
        self.model = model
        self.norm = nn.BatchNorm1d(1, affine=False, momentum=None, eps=1e-8)
        self.w = nn.Parameter(torch.tensor(float(w_init)))
        self.b = nn.Parameter(torch.tensor(float(b_init)))

    def logits(self, cosine: torch.Tensor) -> torch.Tensor:
        """(batch,) cosines -> (batch,) logits; |w| keeps the slope non-negative."""
        if self.training and cosine.shape[0] < 2:  # a lone last batch has no batch statistics
            z = F.batch_norm(
                cosine[:, None], self.norm.running_mean, self.norm.running_var, eps=self.norm.eps
            )
        else:
            z = self.norm(cosine[:, None])
        return self.w.abs() * z[:, 0] + self.b

    def forward(self, sentence_features, labels: torch.Tensor) -> torch.Tensor:
        left, right = (self.model(features)["sentence_embedding"] for features in sentence_features)
        return F.binary_cross_entropy_with_logits(
            self.logits(F.cosine_similarity(left, right)), labels.float()
        )

    @torch.no_grad()
    def folded(self) -> Calibration:
        """The trained head as a logistic model on the raw cosine (BN statistics folded in)."""
        return Calibration(
            mean=self.norm.running_mean.item(),
            std=torch.sqrt(self.norm.running_var + self.norm.eps).item(),
            weight=self.w.abs().item(),
            bias=self.b.item(),
        )


@dataclass(frozen=True)
class Calibration:
    """p = sigmoid(weight * (cos - mean) / std + bias), weight >= 0."""

    mean: float
    std: float
    weight: float
    bias: float

    def logits(self, cosine: np.ndarray) -> np.ndarray:
        return (
            self.weight * (np.asarray(cosine, dtype=np.float64) - self.mean) / self.std + self.bias
        )

    def proba(self, cosine: np.ndarray) -> np.ndarray:
        return expit(self.logits(cosine))  # no overflow warning at large negative logits

    def log_loss(self, cosine: np.ndarray, labels: np.ndarray) -> float:
        """Mean binary cross-entropy on (cosine, label) pairs."""
        z = self.logits(cosine)
        y = np.asarray(labels, dtype=np.float64)
        return float(np.mean(np.logaddexp(0.0, z) - y * z))

    @classmethod
    def fit(cls, cosine: np.ndarray, labels: np.ndarray, *, smoothed: bool = False) -> Calibration:
        """Logistic regression on the standardised cosine with a very weak ridge (C = 1e4):
        separable pairs give large but finite weights, as the paper's gradient descent did.
        ``smoothed``: Platt's (1999) targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``, so a
        fit on few separable pairs claims no certainty (the session's audit)."""
        from sklearn.linear_model import LogisticRegression

        cosine = np.asarray(cosine, dtype=np.float64)
        y = np.asarray(labels)
        if len(np.unique(y)) < 2:
            raise ValueError("calibration needs both positive and negative training pairs")
        mean, std = float(cosine.mean()), float(cosine.std())
        if not std > 0:
            raise ValueError("all training cosines are equal: nothing to calibrate on")
        x = ((cosine - mean) / std)[:, None]
        fit = LogisticRegression(C=1e4, max_iter=10_000, tol=1e-10)
        if smoothed:  # each pair twice, as a match and as not, weighted by its target
            positive = y == 1
            n_pos = int(positive.sum())
            target = np.where(positive, (n_pos + 1) / (n_pos + 2), 1 / (len(y) - n_pos + 2))
            x, y = np.r_[x, x], np.r_[np.ones(len(y)), np.zeros(len(y))]
            fit.fit(x, y, sample_weight=np.r_[target, 1 - target])
        else:
            fit.fit(x, y)
        # a negative slope would break neighbour search, a zero one erase the encoder's
        # ranking: raised to MIN_SLOPE (CosineBERT.calibrate records it as calibration_flat)
        weight = max(float(fit.coef_[0, 0]), MIN_SLOPE)
        return cls(mean, std, weight, float(fit.intercept_[0]))


def trainer(encoder, loss: CosineBCELoss, dataset, config: TrainConfig, *, quiet: bool = False):
    """sentence-transformers' trainer for CosineBERT: the head (w, b) gets a learning rate
    ``HEAD_LR_FACTOR`` times the encoder's."""
    rates = {r"^(w|b)$": config.learning_rate * HEAD_LR_FACTOR}
    return training.trainer(
        encoder, loss, dataset, config, quiet=quiet, learning_rate_mapping=rates
    )


class CosineBERT:
    """A trained (or pretrained) bi-encoder with its calibration."""

    output_cache: Path | None = None  # a folder for embeddings, where the weights are saved

    def __init__(
        self, encoder, calibration: Calibration | None = None, *, info: dict | None = None
    ):
        self.encoder, self.calibration, self.info = encoder, calibration, dict(info or {})

    @classmethod
    def train(
        cls,
        left_texts,
        right_texts,
        labels,
        *,
        model=None,
        config: TrainConfig = TrainConfig(),
        quiet: bool = False,
    ) -> CosineBERT:
        """Train from the pretrained checkpoint, then calibrate (with one class only among
        ``labels``, the trained head is the calibration)."""
        dataset = pair_dataset(left_texts, right_texts, labels)
        encoder = load_encoder(model, max_seq_length=config.max_seq_length)
        disable_dropout(encoder)
        torch.manual_seed(config.seed)
        loss = CosineBCELoss(encoder)
        with training_context(encoder, config):
            trainer(encoder, loss, dataset, config, quiet=quiet).train()
        encoder.eval()
        info = {"model": str(model), "trained_on": len(dataset), "config": config.to_dict()}
        trained = cls(encoder, info={**info, "head": asdict(loss.folded())})
        if len(np.unique(np.asarray(labels))) < 2:
            trained.calibration = loss.folded()
            trained.info["calibration"] = "trained head (one class labelled: nothing to refit)"
        else:
            trained.calibrate(left_texts, right_texts, labels)
            trained.info["calibration"] = "refitted on the training pairs"
        return trained

    def calibrate(self, left_texts, right_texts, labels) -> Calibration:
        """Refit (w, b) on the frozen encoder's cosines of the training pairs."""
        cosine = self.cosine(left_texts, right_texts)
        self.calibration = Calibration.fit(cosine, labels)
        self.info["calibration_log_loss"] = self.calibration.log_loss(cosine, labels)
        self.info["calibration_flat"] = self.calibration.weight <= MIN_SLOPE
        if "head" in self.info:
            self.info["head_log_loss"] = Calibration(**self.info["head"]).log_loss(cosine, labels)
        return self.calibration

    def embed(self, texts, *, show_progress: bool = True) -> np.ndarray:
        """Unit-norm embeddings (n, dim) float32 from this encoder; cached on disk only in the
        ``output_cache`` folder of a saved model."""
        texts = [str(t) for t in texts]
        key = self.output_cache and text_digest(
            texts, head=["embeddings", self.encoder.max_seq_length, *cache_tag()]
        )
        compute = partial(encode, texts, encoder=self.encoder, show_progress=show_progress)
        return cached_array(self.output_cache, key, compute)

    def cosine(self, left_texts, right_texts, *, show_progress: bool = False) -> np.ndarray:
        left, right = list(left_texts), list(right_texts)
        if len(left) != len(right):
            raise ValueError(f"{len(left)} left texts but {len(right)} right texts")
        both = self.embed(left + right, show_progress=show_progress)
        return np.einsum("nd,nd->n", both[: len(left)], both[len(left) :]).astype(np.float64)

    def score_pairs(self, pool, pair_ids) -> np.ndarray:
        """Calibrated logits of a few pair ids of ``pool`` (embeds only their texts)."""
        if self.calibration is None:
            raise ValueError("this CosineBERT is not calibrated: train it or call calibrate()")
        return self.calibration.logits(self.cosine(*pool.texts(np.asarray(pair_ids, np.int64))))

    def scorer(self, pool) -> CosineScorer:
        """Calibrated logits of pair ids of ``pool``, from embeddings of its items computed once."""
        left = self.embed(pool.left_texts)
        right = left if pool.symmetric else self.embed(pool.right_texts)
        return CosineScorer(pool.space, left, right, self.calibration)

    def save(self, path) -> Path:
        calibration = asdict(self.calibration) if self.calibration else None
        payload = {"calibration": calibration, "info": self.info}
        return save_model(self.encoder, path, CALIBRATION_FILE, payload)

    @classmethod
    def load(cls, path, *, device=None) -> CosineBERT:
        with saved_model(path, CALIBRATION_FILE, "CosineBERT") as payload:
            encoder = load_encoder(str(path), device=device)
            calibration = Calibration(**payload["calibration"]) if payload["calibration"] else None
            return cls(encoder, calibration, info=payload["info"])
