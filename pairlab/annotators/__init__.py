"""Who answers a label request: the contract (:mod:`.base`), simulated annotators
(:mod:`.oracles`), the one a run's config names (:mod:`.factory`), an LLM behind an OpenAI-compatible endpoint (:mod:`.llm`,
its answers in :mod:`.cache`), a person's session store (:mod:`.person`), and the scan of a
ranking down to its first relevant item that annotates a question (:mod:`.scan`).

Every annotator answers ``annotate(pool, pair_ids) -> (n,) int8`` with 1, 0 or ``NO_ANSWER``
(-1). Below :mod:`pairlab.active`, so the loop can ask any of them; the ``openai`` SDK loads only
when an :class:`LLMAnnotator` is made."""

from .base import NO_ANSWER, Annotator
from .cache import AnswerCache
from .factory import make_annotator
from .llm import AnswerFormatError, LLMAnnotator, LLMEndpointError, LLMRequestError, parse_answer
from .oracles import (
    ErrorDependentOracle,
    ModelAnnotator,
    NoisyOracle,
    Oracle,
    pair_uniform,
    quantile_edges,
)

__all__ = [
    "NO_ANSWER",
    "Annotator",
    "AnswerCache",
    "AnswerFormatError",
    "LLMAnnotator",
    "LLMEndpointError",
    "LLMRequestError",
    "parse_answer",
    "ErrorDependentOracle",
    "ModelAnnotator",
    "NoisyOracle",
    "Oracle",
    "make_annotator",
    "pair_uniform",
    "quantile_edges",
]
