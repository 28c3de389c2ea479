"""Augmented SBERT (Thakur et al. 2021): pair samplers and a cross-encoder's silver labels for the
bi-encoder. The same layer as active learning: both decide which pairs become training data."""

from . import samplers, silver

__all__ = ["samplers", "silver"]
