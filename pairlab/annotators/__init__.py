"""Who answers a label request: the contract (:mod:`.base`), simulated annotators from the
pool's imputed labels (:mod:`.oracles`) and a trained model (:mod:`.model`).

Every annotator answers ``annotate(pool, pair_ids) -> (n,) int8`` with 1, 0 or ``NO_ANSWER``
(-1). Below :mod:`pairlab.active`, so the loop can ask any of them."""
from . import base, model, oracles
from .base import NO_ANSWER, Annotator
from .model import ModelAnnotator
from .oracles import ErrorDependentOracle, NoisyOracle, Oracle, pair_uniform, quantile_edges

__all__ = ["base", "model", "oracles",
           "Annotator", "ErrorDependentOracle", "ModelAnnotator", "NO_ANSWER", "NoisyOracle",
           "Oracle", "pair_uniform", "quantile_edges"]
