"""Who answers a label request, ``annotate(pool, pair_ids) -> (n,) int8`` of 1, 0 or
``NO_ANSWER`` (:mod:`.base`): oracles, an LLM, a person's session, a ranking's scan."""

from .base import NO_ANSWER, Annotator
from .cache import AnswerCache
from .factory import make_annotator
from .llm import AnswerFormatError, LLMAnnotator, LLMEndpointError, LLMRequestError, parse_answer
from .oracles import ErrorDependentOracle, NoisyOracle, Oracle, pair_uniform

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
