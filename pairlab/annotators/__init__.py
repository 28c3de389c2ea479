"""Who answers a label request, ``annotate(pool, pair_ids) -> (n,) int8`` of 1, 0 or
``NO_ANSWER`` (:mod:`.base`): simulated annotators (:mod:`.oracles`), the one a run's config
names (:mod:`.factory`), an LLM (:mod:`.llm`, its answers in :mod:`.cache`), a person's session
(:mod:`.person`), and the scan of a ranking that annotates a question (:mod:`.scan`)."""

from .base import NO_ANSWER, Annotator
from .cache import AnswerCache
from .factory import make_annotator
from .llm import AnswerFormatError, LLMAnnotator, LLMEndpointError, LLMRequestError, parse_answer
from .oracles import (
    ErrorDependentOracle,
    NoisyOracle,
    Oracle,
    pair_uniform,
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
    "NoisyOracle",
    "Oracle",
    "make_annotator",
    "pair_uniform",
]
