"""An LLM as annotator, through any OpenAI-compatible chat-completions endpoint (the official
``openai`` SDK, imported only when an :class:`LLMAnnotator` is made).

Pairs already answered (in the :class:`~.cache.AnswerCache`) are never sent again; the rest go ten
to a prompt (:mod:`.prompts`), ``concurrency`` prompts at a time. A request that fails in a way
waiting can fix (no connection, timeout, HTTP 408/409/429/5xx: the SDK's ``APIConnectionError``,
``APITimeoutError``, ``RateLimitError``, ``InternalServerError``) is retried by the SDK itself
(``max_retries``, its exponential backoff honouring ``Retry-After``), every attempt counted by
the HTTP transport; one the endpoint refuses (other 4xx) raises at once. An answer that does not parse is
asked again a bounded number of times, then each pair of that prompt is recorded as
``NO_ANSWER`` with the raw text kept. Tokens come from each response's ``usage``.
"""

from __future__ import annotations

import math
import numbers
import os
import threading
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

from ..data.loaders import Pool
from .base import NO_ANSWER, Annotator, check_pair_ids
from .cache import AnswerCache
from .prompts import (
    PROMPT_VERSION,
    TASKS,
    AnswerFormatError,
    answer_key,
    build_messages,
    parse_answer,
)

__all__ = ["LLMAnnotator", "LLMEndpointError", "LLMRequestError"]

_CHARS_PER_TOKEN = 4  # the usual rough rate for English text
_TOKENS_PER_MESSAGE = 4  # chat formatting around each message, plus 3 to prime the reply
_RETRY_STATUS = (408, 409, 429)  # and every 5xx: what the SDK retries
_COUNTERS = (
    "requests",
    "failed_requests",
    "prompts",
    "prompt_tokens",
    "completion_tokens",
    "unmetered",
    "asked",
    "cached",
    "no_answers",
)


class LLMEndpointError(RuntimeError):
    """The endpoint gave no answer after every retry (unreachable, timing out or failing)."""


class LLMRequestError(RuntimeError):
    """The endpoint refused a request in a way retrying cannot fix (HTTP 400, 401, 404, ...)."""


@dataclass(frozen=True)
class _Batch:
    """The pairs of one prompt, in the order they are numbered."""

    keys: list
    left: list
    right: list


class LLMAnnotator(Annotator):
    """Labels pairs by asking ``model`` at ``base_url`` (e.g. ``http://localhost:8000/v1``);
    answers persist in the SQLite file ``cache``. ``api_key`` defaults to $OPENAI_API_KEY (a
    placeholder when unset: local servers need none). Prices are per 1,000 tokens."""

    name = "llm"

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        cache,
        api_key: str | None = None,
        task: str = "qqp",
        pairs_per_prompt: int = 10,
        timeout: float = 60.0,
        max_retries: int = 4,
        parse_retries: int = 2,
        concurrency: int = 4,
        temperature: float = 0.0,
        price_per_1k_input: float = 0.0,
        price_per_1k_output: float = 0.0,
        reask_no_answers: bool = False,
    ):
        for name, value in (("base_url", base_url), ("model", model)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        if task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {task!r}")
        self.base_url, self.model, self.task = base_url, model, task
        self.pairs_per_prompt = _count_arg("pairs_per_prompt", pairs_per_prompt, minimum=1)
        self.concurrency = _count_arg("concurrency", concurrency, minimum=1)
        self.max_retries = _count_arg("max_retries", max_retries, minimum=0)
        self.parse_retries = _count_arg("parse_retries", parse_retries, minimum=0)
        self.timeout = _number_arg("timeout", timeout, positive=True)
        self.temperature = _number_arg("temperature", temperature)
        self.prices = (
            _number_arg("price_per_1k_input", price_per_1k_input),
            _number_arg("price_per_1k_output", price_per_1k_output),
        )
        self.reask_no_answers = bool(reask_no_answers)
        import openai  # lazy: `import pairlab` stays light; only LLM annotation needs the SDK

        self._openai = openai
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "unused",
            timeout=self.timeout,
            max_retries=self.max_retries,
            http_client=openai.DefaultHttpxClient(transport=_counting_transport(self._count)),
        )
        self.cache = cache if isinstance(cache, AnswerCache) else AnswerCache(cache)
        self._lock = threading.Lock()
        self._usage = dict.fromkeys(_COUNTERS, 0)

    # -- annotating ---------------------------------------------------------------------------

    def annotate(self, pool: Pool, pair_ids) -> np.ndarray:
        """(n,) int8 labels (1, 0 or NO_ANSWER) of ``pair_ids`` ((n,) int64) of ``pool``."""
        left, right = pool.texts(check_pair_ids(pool, pair_ids))
        return self.annotate_texts(left, right)

    def annotate_texts(self, left_texts, right_texts) -> np.ndarray:
        """(n,) int8 labels (1, 0 or NO_ANSWER) of the pairs ``(left_texts[k], right_texts[k])``."""
        keys, left, right = self._keys(left_texts, right_texts)
        answers = self._cached(keys)
        batches = self._batches(keys, left, right, answers)
        self._count(cached=sum(key in answers for key in keys))
        answers.update(self._run(batches))
        labels = np.fromiter((answers[key] for key in keys), dtype=np.int8, count=len(keys))
        self._count(no_answers=int((labels == NO_ANSWER).sum()))
        return labels

    def estimate_cost(self, left_texts, right_texts) -> dict:
        """Requests, tokens and cost that annotating these pairs would take now, sending nothing:
        prompt tokens ~ characters / 4; completion tokens as if every pair were named."""
        keys, left, right = self._keys(left_texts, right_texts)
        answers = self._cached(keys)
        batches = self._batches(keys, left, right, answers)
        prompt = sum(_message_tokens(build_messages(self.task, b.left, b.right)) for b in batches)
        completion = sum(_answer_tokens(len(b.keys)) for b in batches)
        return {
            "pairs": len(keys),
            "cached": sum(key in answers for key in keys),
            "to_ask": sum(len(b.keys) for b in batches),
            "requests": len(batches),
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cost": self._cost(prompt, completion),
        }

    @property
    def usage(self) -> dict:
        """Counts since this annotator was made: HTTP requests sent (failed ones included),
        prompts answered, tokens, cost, pairs asked, pairs answered from the cache, no-answers
        returned, and responses that carried no ``usage`` (``unmetered``)."""
        with self._lock:
            out = dict(self._usage)
        out["cost"] = self._cost(out["prompt_tokens"], out["completion_tokens"])
        return out

    # -- the pairs to ask ---------------------------------------------------------------------

    def _keys(self, left_texts, right_texts) -> tuple[list, list, list]:
        left, right = list(left_texts), list(right_texts)
        if len(left) != len(right):
            raise ValueError(f"got {len(left)} left texts but {len(right)} right texts")
        for text in (*left, *right):
            if not isinstance(text, str):
                raise ValueError(f"pair texts must be strings, got {type(text).__name__}: {text!r}")
        return [answer_key(self.model, self.task, a, b) for a, b in zip(left, right)], left, right

    def _cached(self, keys: list) -> dict:
        found = self.cache.get(keys)
        if self.reask_no_answers:
            found = {key: label for key, label in found.items() if label != NO_ANSWER}
        return found

    def _batches(self, keys, left, right, answers: dict) -> list[_Batch]:
        """The uncached pairs, each once, in the order given, cut into prompts."""
        todo = {}
        for key, a, b in zip(keys, left, right):
            if key not in answers and key not in todo:
                todo[key] = (a, b)
        items, n = list(todo.items()), self.pairs_per_prompt
        return [
            _Batch([k for k, _ in chunk], [a for _, (a, _) in chunk], [b for _, (_, b) in chunk])
            for chunk in (items[i : i + n] for i in range(0, len(items), n))
        ]

    # -- asking -------------------------------------------------------------------------------

    def _run(self, batches: list[_Batch]) -> dict:
        """``{key: label}`` of every pair of ``batches``, ``concurrency`` prompts at a time. On
        the first failure no further prompt starts; those already answered stay cached."""
        if not batches:
            return {}
        executor = ThreadPoolExecutor(
            max_workers=min(self.concurrency, len(batches)), thread_name_prefix="pairlab-llm"
        )
        try:
            futures = [executor.submit(self._ask, batch) for batch in batches]
            wait(futures, return_when=FIRST_EXCEPTION)
        finally:  # also on KeyboardInterrupt: queued prompts are dropped, running ones finish
            executor.shutdown(wait=True, cancel_futures=True)
        failed = [f.exception() for f in futures if not f.cancelled() and f.exception()]
        if failed:
            raise failed[0]
        answers = {}
        for future in futures:
            answers.update(future.result())
        return answers

    def _ask(self, batch: _Batch) -> dict:
        """One prompt's ``{key: label}``, committed to the cache before returning."""
        messages = build_messages(self.task, batch.left, batch.right)
        labels, attempts, raw = None, 0, None
        while labels is None and attempts <= self.parse_retries:
            (raw, finish), attempts = self._complete(messages), attempts + 1
            try:
                labels = _parse(raw, finish, len(batch.keys))
            except AnswerFormatError:
                continue  # asked again, up to parse_retries times
        if labels is None:
            labels = np.full(len(batch.keys), NO_ANSWER, dtype=np.int8)
        self.cache.put(
            batch.keys,
            labels,
            model=self.model,
            prompt_version=PROMPT_VERSION,
            task=self.task,
            attempts=attempts,
            raw_answer=raw,
            left_texts=batch.left,
            right_texts=batch.right,
        )
        self._count(prompts=1, asked=len(batch.keys))
        return dict(zip(batch.keys, labels.tolist()))

    def _complete(self, messages: list[dict]) -> tuple[str | None, str | None]:
        """(text, finish_reason) of one chat completion (the SDK retries what waiting can fix)."""
        openai = self._openai
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature
            )
        except (openai.APIStatusError, openai.APIConnectionError) as error:
            status = getattr(error, "status_code", None)
            if status is not None and not _retryable(status):
                raise LLMRequestError(
                    f"the chat-completions endpoint at {self.base_url} refused the request "
                    f"(model {self.model!r}): HTTP {status}: {error.message}"
                ) from error
            raise LLMEndpointError(
                f"no answer from the chat-completions endpoint at {self.base_url} (model "
                f"{self.model!r}) after {self.max_retries + 1} attempts; last error: "
                f"{type(error).__name__}: {error}"
            ) from error
        return self._read(response)

    def _read(self, response) -> tuple[str | None, str | None]:
        usage = getattr(response, "usage", None)
        if usage is None:
            self._count(unmetered=1)
        else:
            self._count(
                prompt_tokens=int(usage.prompt_tokens or 0),
                completion_tokens=int(usage.completion_tokens or 0),
            )
        choices = getattr(response, "choices", None) or []
        if not choices:
            return None, None
        return choices[0].message.content, choices[0].finish_reason

    # -- bookkeeping --------------------------------------------------------------------------

    def _count(self, **increments) -> None:
        with self._lock:
            for name, value in increments.items():
                self._usage[name] += value

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prices[0] + completion_tokens * self.prices[1]) / 1000.0

    def params(self) -> dict:
        return {
            "base_url": self.base_url,
            "model": self.model,
            "task": self.task,
            "prompt_version": PROMPT_VERSION,
            "pairs_per_prompt": self.pairs_per_prompt,
            "temperature": self.temperature,
            "cache": str(self.cache.path),
        }

    def close(self) -> None:
        """Close the HTTP client and the cache (every answer is already committed)."""
        self._client.close()
        self.cache.close()

    def __enter__(self) -> LLMAnnotator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _parse(text: str | None, finish_reason: str | None, n_pairs: int) -> np.ndarray:
    """(n_pairs,) int8 labels; a reply cut off by the token limit is no answer, even if the
    part that came parses (the pairs after the cut would read as silent 0s)."""
    if finish_reason == "length":
        raise AnswerFormatError(f"the answer was cut off at the token limit: {text!r}")
    return parse_answer(text, n_pairs)


def _retryable(status: int) -> bool:
    return status in _RETRY_STATUS or status >= 500


def _counting_transport(count):
    """An httpx transport that counts every HTTP request the SDK sends (its retries included)
    and those that failed (no response, or an HTTP error status). httpx2 is the SDK's HTTP
    library (openai >= 3)."""
    import httpx2 as httpx

    class Counting(httpx.HTTPTransport):
        def handle_request(self, request):
            count(requests=1)
            try:
                response = super().handle_request(request)
            except httpx.TransportError:
                count(failed_requests=1)
                raise
            if response.status_code >= 400:
                count(failed_requests=1)
            return response

    return Counting()


def _message_tokens(messages: list[dict]) -> int:
    chars = sum(math.ceil(len(m["content"]) / _CHARS_PER_TOKEN) for m in messages)
    return chars + _TOKENS_PER_MESSAGE * len(messages) + 3


def _answer_tokens(n_pairs: int) -> int:
    """Tokens of the longest well-formed answer: every pair named, ``"1, 2, ..., n"``."""
    return math.ceil(len(", ".join(str(k) for k in range(1, n_pairs + 1))) / _CHARS_PER_TOKEN)


def _count_arg(name: str, value, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _number_arg(name: str, value, *, positive: bool = False) -> float:
    ok = (
        not isinstance(value, bool)
        and isinstance(value, numbers.Real)
        and math.isfinite(value)
        and (value > 0 if positive else value >= 0)
    )
    if not ok:
        raise ValueError(
            f"{name} must be a finite number {'>' if positive else '>='} 0, got {value!r}"
        )
    return float(value)
