"""The LLM protocol of Bansal and Sharma (2023, Appendix A): pairs are put to the model ten at a
time, numbered from 1; it answers with the numbers of the similar pairs separated by commas, or
``none``. Here are the prompts, the strict answer parser and the cache key of one pair's answer.

The QQP system prompt is Table 7's, word for word. Its question prompt asked for ``"Pair1"``-style
output; here it asks for bare numbers (a format the parser can hold strictly). WikiQA had no
prompt in the paper: the same protocol, asking whether the sentence answers the question.
Changing any text here changes answers, so bump :data:`PROMPT_VERSION` (it is part of every
cache key: answers to an older prompt are never reused for a newer one).
"""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np

__all__ = [
    "PROMPT_VERSION",
    "TASKS",
    "AnswerFormatError",
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


class AnswerFormatError(ValueError):
    """The model's answer is not a list of pair numbers or ``none``."""


def build_messages(task: str, left_texts, right_texts) -> list[dict]:
    """Chat messages (system, user) asking about the pairs ``(left_texts[k], right_texts[k])``,
    numbered from 1 in the order given."""
    _check_task(task)
    if len(left_texts) != len(right_texts) or not len(left_texts):
        raise ValueError(
            f"need equally many left and right texts, at least one, got "
            f"{len(left_texts)} and {len(right_texts)}"
        )
    a, b = _SIDES[task]
    blocks = [
        f"Pair {k}:\n{a}: {_one_line(left)}\n{b}: {_one_line(right)}"
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


def _one_line(text) -> str:
    """One line per text, so a newline inside a text cannot break the numbering."""
    if not isinstance(text, str):
        raise ValueError(f"pair texts must be strings, got {type(text).__name__}: {text!r}")
    return " ".join(text.split())


def _check_task(task) -> None:
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
