"""An LLM as annotator through any OpenAI-compatible endpoint (the ``openai`` SDK), with Bansal
and Sharma's protocol (2023, Appendix A): pairs ten to a prompt, numbered from 1; the answer
names the similar pairs' numbers, or ``none``. Cached pairs are never sent again; the SDK
retries what waiting can fix; an answer that does not parse is asked ``parse_retries`` times
more, then is ``NO_ANSWER``. The QQP system prompt is Table 7's, word for word (WikiQA has none
in the paper). A changed prompt needs a new :data:`PROMPT_VERSION` (in every cache key).
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
import re
import threading
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import suppress

import numpy as np

from ..data.loaders import Pool
from .base import NO_ANSWER, Annotator, check_pair_ids
from .cache import AnswerCache

__all__ = [
    "LLMAnnotator",
    "LLMEndpointError",
    "LLMRequestError",
    "AnswerFormatError",
    "PROMPT_VERSION",
    "answer_key",
    "build_messages",
    "parse_answer",
]

PROMPT_VERSION = "bansal2023-numbers-v1"
TASKS = ("qqp", "wikiqa")

_SYSTEM = {
    "qqp": (
        "You are an expert in judging the intended answer for short questions on quora. You use "
        "the intended answer to find duplicate questions (i.e. questions having the same intended "
        "answer and answering one of the questions will answer the other question too. Given a "
        "pair of questions from one of these forums you are effectively able to discern if they "
        "are duplicates of each other or not by reasoning about the intended answer."
    ),
    "wikiqa": (
        "You are an expert in judging whether a sentence from a Wikipedia article answers a "
        "short question. Given a question and a sentence (preceded by its article's title), you "
        "are effectively able to discern if the sentence contains the intended answer of the "
        "question or not by reasoning about the intended answer."
    ),
}
_INSTRUCTION = {
    "qqp": (
        "Given pairs of questions from Quora, output the pairs of questions that are asking the "
        "same question (i.e. have the same intended answer). Reason about the intended answer to "
        "solve this."
    ),
    "wikiqa": (
        "Given pairs of a question and a sentence from Wikipedia, output the pairs in which the "
        "sentence answers the question (i.e. contains its intended answer). Reason about the "
        "intended answer to solve this."
    ),
}
_FORMAT = (
    'Answer with only the numbers of those pairs separated by commas, for example "2, 5", or '
    "with the word none if there is no such pair. Write nothing else."
)
_SIDES = {"qqp": ("Question A", "Question B"), "wikiqa": ("Question", "Sentence")}
_NUMBER = re.compile(r"[0-9]+")
_CHARS_PER_TOKEN = 4  # the usual rough rate for English text
_TOKENS_PER_MESSAGE = 4  # chat formatting around each message, plus 3 to prime the reply
_COUNTERS = (  # usage's counts
    "requests failed_requests prompts prompt_tokens completion_tokens unmetered asked cached "
    "no_answers"
).split()


class AnswerFormatError(ValueError):
    """The model's answer is not a list of pair numbers or ``none``."""


class LLMEndpointError(RuntimeError):
    """The endpoint gave no answer after every retry (unreachable, timing out or failing)."""


class LLMRequestError(RuntimeError):
    """The endpoint refused a request in a way retrying cannot fix (HTTP 400, 401, 404, ...)."""


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
        self.pairs_per_prompt = int(_check("pairs_per_prompt", pairs_per_prompt, 1, integer=True))
        self.concurrency = int(_check("concurrency", concurrency, 1, integer=True))
        self.max_retries = int(_check("max_retries", max_retries, 0, integer=True))
        self.parse_retries = int(_check("parse_retries", parse_retries, 0, integer=True))
        self.timeout = _check("timeout", timeout, 0, above=True)
        self.temperature = _check("temperature", temperature, 0)
        self.prices = (
            _check("price_per_1k_input", price_per_1k_input, 0),
            _check("price_per_1k_output", price_per_1k_output, 0),
        )
        self.reask_no_answers = bool(reask_no_answers)
        import openai  # lazy: `import pairlab` stays light; only LLM annotation needs the SDK

        hooks = {  # every HTTP attempt the SDK makes (retries too), failed until a 2xx/3xx answer
            "request": [lambda request: self._count(requests=1, failed_requests=1)],
            "response": [lambda r: self._count(failed_requests=-int(r.status_code < 400))],
        }
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "unused",
            timeout=self.timeout,
            max_retries=self.max_retries,
            http_client=openai.DefaultHttpxClient(event_hooks=hooks),
        )
        self.cache = cache if isinstance(cache, AnswerCache) else AnswerCache(cache)
        self._lock = threading.Lock()
        self._usage = dict.fromkeys(_COUNTERS, 0)

    def annotate(self, pool: Pool, pair_ids) -> np.ndarray:
        """(n,) int8 labels (1, 0 or NO_ANSWER) of ``pair_ids`` ((n,) int64) of ``pool``."""
        left, right = pool.texts(check_pair_ids(pool, pair_ids))
        return self.annotate_texts(left, right)

    def annotate_texts(self, left_texts, right_texts) -> np.ndarray:
        """(n,) int8 labels (1, 0 or NO_ANSWER) of the pairs ``(left_texts[k], right_texts[k])``."""
        keys, answers, batches = self._plan(left_texts, right_texts)
        self._count(cached=sum(key in answers for key in keys))
        answers.update(self._run(batches))
        labels = np.fromiter((answers[key] for key in keys), dtype=np.int8, count=len(keys))
        self._count(no_answers=int((labels == NO_ANSWER).sum()))
        return labels

    def estimate_cost(self, left_texts, right_texts) -> dict:
        """Requests, tokens and cost that annotating these pairs would take now, sending nothing:
        prompt tokens ~ characters / 4; completion tokens as if every pair were named."""
        keys, answers, batches = self._plan(left_texts, right_texts)
        prompt = sum(_message_tokens(build_messages(self.task, a, b)) for _, a, b in batches)
        completion = sum(_answer_tokens(len(k)) for k, _, _ in batches)
        return {
            "pairs": len(keys),
            "cached": sum(key in answers for key in keys),
            "to_ask": sum(len(k) for k, _, _ in batches),
            "requests": len(batches),
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cost": self._cost(prompt, completion),
        }

    @property
    def usage(self) -> dict:
        """Counts since this annotator was made (:data:`_COUNTERS`) and the cost; ``requests``
        holds every HTTP attempt, ``unmetered`` the responses without ``usage``."""
        with self._lock:
            out = dict(self._usage)
        out["cost"] = self._cost(out["prompt_tokens"], out["completion_tokens"])
        return out

    def _plan(self, left_texts, right_texts) -> tuple[list, dict, list]:
        """The pairs' cache keys, their cached answers, and the uncached pairs, each once in the
        order given, cut into prompts: ``(keys, left texts, right texts)`` each."""
        left, right = list(left_texts), list(right_texts)
        if len(left) != len(right):
            raise ValueError(f"got {len(left)} left texts but {len(right)} right texts")
        for text in (*left, *right):
            if not isinstance(text, str):
                raise ValueError(f"pair texts must be strings, got {type(text).__name__}: {text!r}")
        keys = [answer_key(self.model, self.task, a, b) for a, b in zip(left, right)]
        answers = self.cache.get(keys)
        if self.reask_no_answers:
            answers = {key: label for key, label in answers.items() if label != NO_ANSWER}
        todo = {k: (k, a, b) for k, a, b in zip(keys, left, right) if k not in answers}
        items, n = list(todo.values()), self.pairs_per_prompt
        chunks = [items[i : i + n] for i in range(0, len(items), n)]
        return keys, answers, [tuple(map(list, zip(*chunk))) for chunk in chunks]  # transposed

    def _run(self, batches: list) -> dict:
        """``{key: label}`` of every pair of ``batches``, ``concurrency`` prompts at a time. On
        the first failure no further prompt starts; those already answered stay cached."""
        if not batches:
            return {}
        executor = ThreadPoolExecutor(
            max_workers=min(self.concurrency, len(batches)), thread_name_prefix="pairlab-llm"
        )
        try:
            futures = [executor.submit(self._ask, *batch) for batch in batches]
            wait(futures, return_when=FIRST_EXCEPTION)
        finally:  # also on KeyboardInterrupt: queued prompts are dropped, running ones finish
            executor.shutdown(wait=True, cancel_futures=True)
        failed = [f.exception() for f in futures if not f.cancelled() and f.exception()]
        if failed:
            raise failed[0]
        return {key: label for future in futures for key, label in future.result().items()}

    def _ask(self, keys, left, right) -> dict:
        """One prompt's ``{key: label}``, committed to the cache before returning. A reply cut
        off by the token limit is no answer, even if the part that came parses."""
        messages = build_messages(self.task, left, right)
        labels = np.full(len(keys), NO_ANSWER, dtype=np.int8)  # unless an answer parses
        for attempts in range(1, self.parse_retries + 2):  # asked again on a malformed answer
            raw, finish = self._complete(messages)
            if finish != "length":
                with suppress(AnswerFormatError):
                    labels = parse_answer(raw, len(keys))
                    break
        self.cache.put(
            keys,
            labels,
            model=self.model,
            prompt_version=PROMPT_VERSION,
            task=self.task,
            attempts=attempts,
            raw_answer=raw,
            left_texts=left,
            right_texts=right,
        )
        self._count(prompts=1, asked=len(keys))
        return dict(zip(keys, labels.tolist()))

    def _complete(self, messages: list[dict]) -> tuple[str | None, str | None]:
        """(text, finish_reason) of one chat completion (the SDK retries what waiting can fix)."""
        openai = self._openai
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature
            )
        except (openai.APIStatusError, openai.APIConnectionError) as error:
            status = getattr(error, "status_code", None)
            if status is not None and status not in (408, 409, 429) and status < 500:
                raise LLMRequestError(
                    f"the chat-completions endpoint at {self.base_url} refused the request "
                    f"(model {self.model!r}): HTTP {status}: {error.message}"
                ) from error
            raise LLMEndpointError(
                f"no answer from the chat-completions endpoint at {self.base_url} (model "
                f"{self.model!r}) after {self.max_retries + 1} attempts; last error: "
                f"{type(error).__name__}: {error}"
            ) from error
        usage = getattr(response, "usage", None)
        if usage is None:
            self._count(unmetered=1)
        else:
            self._count(
                prompt_tokens=int(usage.prompt_tokens or 0),
                completion_tokens=int(usage.completion_tokens or 0),
            )
        choices = getattr(response, "choices", None) or []
        return (choices[0].message.content, choices[0].finish_reason) if choices else (None, None)

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


def build_messages(task: str, left_texts, right_texts) -> list[dict]:
    """Chat messages (system, user) asking about the pairs ``(left_texts[k], right_texts[k])``,
    numbered from 1 in the order given."""
    if len(left_texts) != len(right_texts) or not len(left_texts):
        raise ValueError(
            f"need equally many left and right texts, at least one, got "
            f"{len(left_texts)} and {len(right_texts)}"
        )
    a, b = _SIDES[task]
    blocks = [  # one line per text, so a newline inside a text cannot break the numbering
        f"Pair {k}:\n{a}: {' '.join(left.split())}\n{b}: {' '.join(right.split())}"
        for k, (left, right) in enumerate(zip(left_texts, right_texts), start=1)
    ]
    user = "\n\n".join([f"{_INSTRUCTION[task]} {_FORMAT}", *blocks, "Pairs:"])
    return [{"role": "system", "content": _SYSTEM[task]}, {"role": "user", "content": user}]


def parse_answer(text, n_pairs: int) -> np.ndarray:
    """(n_pairs,) int8 labels from an answer such as ``"1, 4, 7"`` or ``"none"`` (whitespace,
    case and one trailing period tolerated); raises AnswerFormatError on anything else."""
    if not isinstance(text, str):
        raise AnswerFormatError(f"no answer text (got {type(text).__name__})")
    body = text.strip()
    body = body[:-1].strip() if body.endswith(".") else body
    labels = np.zeros(n_pairs, dtype=np.int8)
    if body.lower() == "none":
        return labels
    parts = [part.strip() for part in body.split(",")]
    words = [part for part in parts if not _NUMBER.fullmatch(part)]
    if words:
        raise AnswerFormatError(f"not a pair number: {words[0]!r} in {text!r}")
    numbers = [int(part) for part in parts]
    outside = [k for k in numbers if not 1 <= k <= n_pairs]
    if outside:
        raise AnswerFormatError(f"pair {outside[0]} out of range 1..{n_pairs} in {text!r}")
    if len(set(numbers)) != len(numbers):
        raise AnswerFormatError(f"a pair number repeats in {text!r}")
    labels[np.asarray(numbers) - 1] = 1
    return labels


def answer_key(model: str, task: str, left_text: str, right_text: str) -> str:
    """The cache key of one pair's answer: a SHA-256 of the prompt version, model, task and the
    two texts (hex, 64 characters)."""
    payload = json.dumps([PROMPT_VERSION, model, task, left_text, right_text], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _message_tokens(messages: list[dict]) -> int:
    chars = sum(math.ceil(len(m["content"]) / _CHARS_PER_TOKEN) for m in messages)
    return chars + _TOKENS_PER_MESSAGE * len(messages) + 3


def _answer_tokens(n_pairs: int) -> int:
    """Tokens of the longest well-formed answer: every pair named, ``"1, 2, ..., n"``."""
    return math.ceil(len(", ".join(str(k) for k in range(1, n_pairs + 1))) / _CHARS_PER_TOKEN)


def _check(name: str, value, low, *, integer: bool = False, above: bool = False) -> float:
    """``value`` as a float, or a ValueError naming it unless it is a finite number (an integer
    where ``integer``) at least ``low`` (above it where ``above``)."""
    kind = numbers.Integral if integer else numbers.Real
    if (
        isinstance(value, bool)
        or not isinstance(value, kind)
        or not math.isfinite(value)
        or (value <= low if above else value < low)
    ):
        what = "an integer" if integer else "a finite number"
        raise ValueError(f"{name} must be {what} {'>' if above else '>='} {low}, got {value!r}")
    return float(value)
