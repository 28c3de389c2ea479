"""Who answers a label request: the contract (:mod:`.base`), simulated annotators from the
pool's imputed labels (:mod:`.oracles`), a trained model (:mod:`.model`) and an LLM behind an
OpenAI-compatible endpoint (:mod:`.llm`, with its :mod:`.prompts` and answer :mod:`.cache`), and
the scan of a ranking down to its first relevant item that annotates a question (:mod:`.scan`).

Every annotator answers ``annotate(pool, pair_ids) -> (n,) int8`` with 1, 0 or ``NO_ANSWER``
(-1). Below :mod:`pairlab.active`, so the loop can ask any of them; the ``openai`` SDK loads only
when an :class:`LLMAnnotator` is made."""

from . import base, cache, factory, llm, model, oracles, prompts, scan
from .base import NO_ANSWER, Annotator
from .cache import AnswerCache
from .factory import PretrainedError, base_error, error_edges, make_annotator
from .llm import LLMAnnotator, LLMEndpointError, LLMRequestError
from .model import ModelAnnotator
from .oracles import ErrorDependentOracle, NoisyOracle, Oracle, pair_uniform, quantile_edges
from .prompts import PROMPT_VERSION, AnswerFormatError, parse_answer
from .scan import Scan, scan_to_first_relevant

__all__ = [
    "base",
    "cache",
    "factory",
    "llm",
    "model",
    "oracles",
    "prompts",
    "scan",
    "make_annotator",
    "base_error",
    "error_edges",
    "PretrainedError",
    "Annotator",
    "AnswerCache",
    "AnswerFormatError",
    "ErrorDependentOracle",
    "LLMAnnotator",
    "LLMEndpointError",
    "LLMRequestError",
    "ModelAnnotator",
    "NO_ANSWER",
    "NoisyOracle",
    "Oracle",
    "PROMPT_VERSION",
    "pair_uniform",
    "parse_answer",
    "quantile_edges",
    "Scan",
    "scan_to_first_relevant",
]
