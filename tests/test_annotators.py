"""Annotators: one contract over every annotator, the seeded noisy oracles, the model threshold,
and the LLM annotator against a real local OpenAI-compatible server (tests/fake_llm_server.py)
that answers from a known truth and can be told to fail, wait or talk nonsense."""

import math
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from fake_llm_server import COMPLETION_TOKENS, FakeLLM

from pairlab.annotators import (
    NO_ANSWER,
    AnswerCache,
    AnswerFormatError,
    ErrorDependentOracle,
    LLMAnnotator,
    LLMEndpointError,
    LLMRequestError,
    NoisyOracle,
    Oracle,
    pair_uniform,
    parse_answer,
)
from pairlab.annotators.llm import answer_key, build_messages
from pairlab.data import Pool
from pairlab.data.pairs import PairSpace, as_id_set

ROOT = Path(__file__).resolve().parents[1]


def similar(left: str, right: str) -> int:
    """The truth the fake LLM answers from: a pair is similar when right is left reversed."""
    return int(right == left[::-1])


def text_pairs(n: int, start: int = 0) -> tuple[list, list, np.ndarray]:
    """``n`` pairs, every third one similar: (left texts, right texts, (n,) int8 truth)."""
    left = [f"how do I learn topic {k}?" for k in range(start, start + n)]
    right = [a[::-1] if k % 3 == 0 else f"what is topic {k}?" for k, a in enumerate(left)]
    return left, right, np.array([similar(a, b) for a, b in zip(left, right)], dtype=np.int8)


def text_pool(n: int = 6) -> Pool:
    """An asymmetric n x n pool: positives (j, j) for even j, whose right text is left reversed."""
    left = np.array([f"question number {j}" for j in range(n)], dtype=object)
    right = np.array(
        [q[::-1] if j % 2 == 0 else f"sentence {j}" for j, q in enumerate(left)], dtype=object
    )
    even = np.arange(0, n, 2)
    positives = as_id_set(PairSpace(n, n, False).encode(even, even))
    return Pool("synthetic", "dev", left, right, False, positives, np.empty(0, np.int64))


@pytest.fixture
def fake():
    with FakeLLM(similar) as server:
        yield server


def llm(fake, tmp_path, **options) -> LLMAnnotator:
    settings = dict(
        base_url=fake.url,
        model="fake-model",
        cache=tmp_path / "answers.sqlite",
        timeout=5.0,
        max_retries=2,
        concurrency=1,
    )
    return LLMAnnotator(**{**settings, **options})


# ---------------------------------------------------------------------------------------------
# The contract, over every annotator


ANNOTATORS = {
    "oracle": lambda fake, tmp: Oracle(),
    "noisy_oracle_without_noise": lambda fake, tmp: NoisyOracle(seed=3),
    "error_dependent_oracle_all_correct": lambda fake, tmp: ErrorDependentOracle(
        lambda pool, ids: np.zeros(len(ids)), [1.0, 1.0], [0.5]
    ),
    "llm": lambda fake, tmp: llm(fake, tmp),
}


@pytest.mark.parametrize("make", ANNOTATORS.values(), ids=ANNOTATORS.keys())
def test_every_annotator_keeps_the_contract(make, fake, tmp_path):
    """Noise-free, each annotator must return the pool's labels as (n,) int8, in the order
    asked, and reject ids outside the pool (fails if any annotator reorders, changes dtype or
    answers for a pair that does not exist)."""
    pool, annotator = text_pool(), make(fake, tmp_path)
    ids = np.arange(pool.n_pairs, dtype=np.int64)[::-1].copy()  # unsorted on purpose
    labels = annotator.annotate(pool, ids)
    assert labels.dtype == np.int8 and labels.shape == ids.shape
    np.testing.assert_array_equal(labels, pool.labels(ids))
    np.testing.assert_array_equal(annotator.annotate(pool, ids[:0]), np.empty(0, np.int8))
    with pytest.raises(ValueError):
        annotator.annotate(pool, [pool.n_pairs])
    with pytest.raises(ValueError):
        annotator.annotate(pool, ids.reshape(-1, 2))


def test_importing_annotators_does_not_import_openai():
    """The SDK loads only when an LLMAnnotator is made (fails if a module imports it on top)."""
    code = "import sys, pairlab.annotators; print('openai' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------------------------------
# Noisy oracles


@pytest.fixture(scope="module")
def big_pool() -> Pool:
    """500 x 400 = 200,000 pairs, 40,000 of them positive."""
    rng = np.random.default_rng(0)
    texts = np.array([f"t{k}" for k in range(500)], dtype=object)
    positives = np.sort(rng.choice(200_000, size=40_000, replace=False)).astype(np.int64)
    return Pool("synthetic", "train", texts, texts[:400], False, positives, np.empty(0, np.int64))


def within_4_sigma(flipped: np.ndarray, rate: float) -> bool:
    return abs(flipped.mean() - rate) <= 4 * math.sqrt(rate * (1 - rate) / len(flipped))


def test_noisy_oracle_flips_at_the_given_rates(big_pool):
    """Fails if either class's flip rate is off by more than 4 binomial standard errors."""
    ids = np.arange(big_pool.n_pairs, dtype=np.int64)
    truth = big_pool.labels(ids)
    noisy = NoisyOracle(flip_positive=0.2, flip_negative=0.05, seed=7).annotate(big_pool, ids)
    assert within_4_sigma(noisy[truth == 1] == 0, 0.2)
    assert within_4_sigma(noisy[truth == 0] == 1, 0.05)


def test_noisy_oracle_answers_a_pair_the_same_in_any_batch_and_order(big_pool):
    """A pair's answer may depend only on (seed, pair id): fails if it depends on the batch."""
    ids = np.arange(big_pool.n_pairs, dtype=np.int64)
    whole = NoisyOracle(flip_positive=0.3, flip_negative=0.1, seed=11).annotate(big_pool, ids)
    rng = np.random.default_rng(1)
    shuffled = rng.permutation(ids)
    cuts = np.sort(rng.choice(len(ids), size=50, replace=False))
    fresh = NoisyOracle(flip_positive=0.3, flip_negative=0.1, seed=11)
    for part in np.split(shuffled, cuts)[::-1]:  # uneven batches, shuffled, last first
        np.testing.assert_array_equal(fresh.annotate(big_pool, np.sort(part)), whole[np.sort(part)])
    np.testing.assert_array_equal(fresh.annotate(big_pool, shuffled), whole[shuffled])


def test_noisy_oracle_seeds_give_independent_noise(big_pool):
    """Different seeds must flip different pairs (fails if the seed is ignored or barely
    mixed): of the pairs seed 0 flips at rate 10%, seed 1 flips about 10%, not all."""
    ids = np.arange(big_pool.n_pairs, dtype=np.int64)
    truth = big_pool.labels(ids)
    flips = [
        NoisyOracle(flip_positive=0.1, flip_negative=0.1, seed=s).annotate(big_pool, ids) != truth
        for s in (0, 1)
    ]
    assert within_4_sigma(flips[1][flips[0]], 0.1)


def test_noisy_oracle_without_noise_is_the_oracle(big_pool):
    ids = np.arange(0, big_pool.n_pairs, 7, dtype=np.int64)
    np.testing.assert_array_equal(
        NoisyOracle(seed=5).annotate(big_pool, ids), Oracle().annotate(big_pool, ids)
    )
    flipped = NoisyOracle(flip_positive=1.0, flip_negative=1.0).annotate(big_pool, ids)
    np.testing.assert_array_equal(flipped, 1 - big_pool.labels(ids))


@pytest.mark.parametrize(
    "rates",
    [
        {"flip_positive": -0.1},
        {"flip_negative": 1.5},
        {"flip_positive": float("nan")},
        {"flip_negative": "0.1"},
        {"flip_positive": True},
        {"seed": -1},
        {"seed": 1.5},
    ],
)
def test_noisy_oracle_rejects_bad_rates_and_seeds(rates):
    with pytest.raises(ValueError, match=next(iter(rates))):
        NoisyOracle(**rates)


def test_pair_uniform_is_uniform_and_in_range():
    """Fails if the hash leaves [0, 1) or is visibly non-uniform over 200,000 ids."""
    u = pair_uniform(np.arange(200_000), seed=3)
    assert u.min() >= 0.0 and u.max() < 1.0
    counts = np.bincount((u * 10).astype(int), minlength=10)  # (10,) ids per decile
    assert np.all(np.abs(counts - 20_000) <= 4 * math.sqrt(200_000 * 0.1 * 0.9)), counts


def test_error_dependent_oracle_flips_by_error_bin(big_pool):
    """Accuracy 1.0 in the low-error half and 0.6 in the high-error half: no flip below the
    edge, 40% above it (fails if bins or accuracies are read the wrong way round)."""
    errors = np.linspace(0.0, 1.0, big_pool.n_pairs)
    edges = np.quantile(errors, [0.5])  # (1,) the median
    oracle = ErrorDependentOracle(errors, [1.0, 0.6], edges, seed=2)
    ids = np.arange(big_pool.n_pairs, dtype=np.int64)
    labels = oracle.annotate(big_pool, ids)
    wrong, low = labels != big_pool.labels(ids), errors < edges[0]
    assert low.sum() == big_pool.n_pairs // 2 and not wrong[low].any()
    assert within_4_sigma(wrong[~low], 0.4)
    by_callable = ErrorDependentOracle(lambda pool, i: errors[i], [1.0, 0.6], edges, seed=2)
    np.testing.assert_array_equal(by_callable.annotate(big_pool, ids[::3]), labels[::3])


def test_error_dependent_oracle_validates():
    with pytest.raises(ValueError, match="edges"):
        ErrorDependentOracle(np.zeros(4), [0.9, 0.8, 0.7], [0.5])
    with pytest.raises(ValueError, match="accuracy"):
        ErrorDependentOracle(np.zeros(4), [0.9, 1.2], [0.5])
    with pytest.raises(ValueError, match="1 NaN"):
        ErrorDependentOracle(np.array([0.1, np.nan]), [0.9], [])


# ---------------------------------------------------------------------------------------------
# The LLM protocol: prompts and the strict parser


@pytest.mark.parametrize(
    "text, positives",
    [
        ("1,3", [1, 3]),
        (" None ", []),
        ("1, 3.", [1, 3]),
        ("NONE.", []),
        ("10", [10]),
        ("\n 2 ,5 \n", [2, 5]),
    ],
)
def test_parser_reads_good_answers(text, positives):
    expected = np.zeros(10, np.int8)
    expected[np.array(positives, dtype=int) - 1] = 1
    np.testing.assert_array_equal(parse_answer(text, 10), expected)


@pytest.mark.parametrize(
    "text",
    ["12", "0", "yes", "1,1", "", "1 3", "1, 3,", "Pair1", "-1", "1, 3..", "none, 2", "1.5", None],
)
def test_parser_rejects_bad_answers(text):
    """Out of range, words, duplicates, missing commas, empty: each is an error, not a label."""
    with pytest.raises(AnswerFormatError):
        parse_answer(text, 10)


def test_prompt_numbers_pairs_from_one_on_one_line_each():
    messages = build_messages("wikiqa", ["what is a\nfox?", "b"], ["a fox is\n\nan animal", "d"])
    user = messages[-1]["content"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Pair 1:\nQuestion: what is a fox?\nSentence: a fox is an animal\n\nPair 2:" in user
    with pytest.raises(ValueError):
        build_messages("qqp", ["a"], ["b", "c"])


def test_answer_key_depends_on_model_task_and_both_texts():
    keys = {
        answer_key("m", "qqp", "a", "b"),
        answer_key("m2", "qqp", "a", "b"),
        answer_key("m", "wikiqa", "a", "b"),
        answer_key("m", "qqp", "b", "a"),
        answer_key("m", "qqp", "a", "bb"),
    }
    assert len(keys) == 5


# ---------------------------------------------------------------------------------------------
# The LLM annotator against the local server


def test_llm_batches_ten_pairs_per_prompt_numbered_from_one(fake, tmp_path):
    """25 pairs: 3 requests of 10, 10 and 5 pairs in the order given, and the right labels."""
    left, right, truth = text_pairs(25)
    labels = llm(fake, tmp_path).annotate_texts(left, right)
    np.testing.assert_array_equal(labels, truth)
    assert fake.requests == 3
    assert [[k for k, _, _ in p] for p in fake.prompts] == [list(range(1, 11))] * 2 + [
        list(range(1, 6))
    ]
    assert [a for p in fake.prompts for _, a, _ in p] == left


def test_llm_retries_server_errors_then_answers(fake, tmp_path):
    """Two HTTP 500s then success: right labels, and every attempt counted on both sides."""
    left, right, truth = text_pairs(10)
    fake.fail_next = 2
    annotator = llm(fake, tmp_path, max_retries=2)
    np.testing.assert_array_equal(annotator.annotate_texts(left, right), truth)
    assert fake.requests == 3
    assert annotator.usage["requests"] == 3 and annotator.usage["failed_requests"] == 2
    assert annotator.usage["prompts"] == 1


def test_llm_gives_up_after_bounded_retries_naming_the_url(fake, tmp_path):
    fake.fail_next = 100
    with pytest.raises(LLMEndpointError, match=f"{fake.url}.*after 2 attempts"):
        llm(fake, tmp_path, max_retries=1).annotate_texts(*text_pairs(3)[:2])
    assert fake.requests == 2


def test_llm_does_not_retry_a_refused_request(fake, tmp_path):
    """HTTP 404 (a wrong route) cannot be fixed by waiting: one request, a clear error."""
    annotator = llm(fake, tmp_path, base_url=fake.url + "/wrong", max_retries=3)
    with pytest.raises(LLMRequestError, match="HTTP 404"):
        annotator.annotate_texts(*text_pairs(3)[:2])
    assert annotator.usage["requests"] == 1


def test_llm_garbage_answers_become_no_answers_with_the_raw_text_kept(fake, tmp_path):
    """Unparseable every time: asked 1 + parse_retries times, then -1 for each pair (never a
    silent 0), the raw text in the cache, and not asked again by a later call."""
    left, right, truth = text_pairs(10)
    fake.garbage = "Pairs 1 and 4 look like duplicates."
    annotator = llm(fake, tmp_path, parse_retries=2)
    labels = annotator.annotate_texts(left, right)
    np.testing.assert_array_equal(labels, np.full(10, NO_ANSWER))
    assert fake.requests == 3 and annotator.usage["no_answers"] == 10
    rows = annotator.cache.to_pandas()
    assert len(rows) == 10 and set(rows["raw_answer"]) == {fake.garbage}
    assert set(rows["label"]) == {-1} and set(rows["attempts"]) == {3}
    np.testing.assert_array_equal(annotator.annotate_texts(left, right), labels)
    assert fake.requests == 3
    fake.garbage = None
    again = llm(fake, tmp_path, reask_no_answers=True)
    np.testing.assert_array_equal(again.annotate_texts(left, right), truth)
    assert fake.requests == 4


def test_llm_garbage_then_good_answer_is_used(fake, tmp_path):
    """One malformed answer is asked again; the second, good answer gives the labels."""
    left, right, truth = text_pairs(10)
    fake.garbage, fake.garbage_next = "yes", 1
    annotator = llm(fake, tmp_path, parse_retries=1)
    np.testing.assert_array_equal(annotator.annotate_texts(left, right), truth)
    assert fake.requests == 2


def test_llm_treats_a_cut_off_answer_as_no_answer(fake, tmp_path):
    """finish_reason "length": "1, 4" may be the start of "1, 4, 7", so no pair gets a label."""
    left, right, _ = text_pairs(10)
    fake.finish_reason = "length"
    labels = llm(fake, tmp_path, parse_retries=1).annotate_texts(left, right)
    np.testing.assert_array_equal(labels, np.full(10, NO_ANSWER))
    assert fake.requests == 2


def test_llm_cache_sends_no_request_twice(fake, tmp_path):
    left, right, truth = text_pairs(25)
    annotator = llm(fake, tmp_path)
    annotator.annotate_texts(left, right)
    np.testing.assert_array_equal(annotator.annotate_texts(left, right), truth)
    assert fake.requests == 3 and annotator.usage["cached"] == 25
    doubled = annotator.annotate_texts(left[:3] + left[:3] + ["new?"], right[:3] * 2 + ["?wen"])
    np.testing.assert_array_equal(doubled, np.r_[truth[:3], truth[:3], 1])
    assert fake.requests == 4 and len(fake.prompts[-1]) == 1  # only the new pair, once


def test_llm_resumes_a_killed_run_without_asking_again(fake, tmp_path):
    """The server dies after one answer; the call fails. A new annotator on the same cache
    asks only the 15 pairs that were not answered (fails if answered pairs are re-sent)."""
    left, right, truth = text_pairs(25)
    fake.fail_after = 1
    with pytest.raises(LLMEndpointError):
        llm(fake, tmp_path, max_retries=1).annotate_texts(left, right)
    with AnswerCache(tmp_path / "answers.sqlite") as cache:
        assert len(cache) == 10
    fake.fail_after, asked_before = None, len(fake.prompts)
    resumed = llm(fake, tmp_path)
    np.testing.assert_array_equal(resumed.annotate_texts(left, right), truth)
    asked_after = [a for p in fake.prompts[asked_before:] for _, a, _ in p]
    assert asked_after == left[10:]
    assert resumed.usage["cached"] == 10 and resumed.usage["asked"] == 15


def test_llm_cache_survives_reopening_and_is_keyed_by_model(fake, tmp_path):
    left, right, truth = text_pairs(12)
    first = llm(fake, tmp_path)
    first.annotate_texts(left, right)
    first.close()
    reopened = llm(fake, tmp_path)
    np.testing.assert_array_equal(reopened.annotate_texts(left, right), truth)
    assert fake.requests == 2
    llm(fake, tmp_path, model="other-model").annotate_texts(left, right)
    assert fake.requests == 4


def test_llm_concurrency_is_bounded(fake, tmp_path):
    """Six slow prompts on two workers: two in flight at once, never more."""
    left, right, truth = text_pairs(60)
    fake.delay = 0.05
    labels = llm(fake, tmp_path, concurrency=2).annotate_texts(left, right)
    np.testing.assert_array_equal(labels, truth)
    assert fake.max_in_flight == 2 and fake.requests == 6


def test_llm_counts_tokens_and_cost_from_usage(fake, tmp_path):
    left, right, _ = text_pairs(25)
    annotator = llm(fake, tmp_path, price_per_1k_input=2.0, price_per_1k_output=10.0)
    annotator.annotate_texts(left, right)
    usage = annotator.usage
    assert usage["prompt_tokens"] == fake.tokens[0]
    assert usage["completion_tokens"] == fake.tokens[1] == 3 * COMPLETION_TOKENS
    assert usage["cost"] == pytest.approx((fake.tokens[0] * 2.0 + fake.tokens[1] * 10.0) / 1000)


def test_llm_estimates_cost_before_sending_anything(fake, tmp_path):
    """The estimate sends nothing, counts only uncached pairs, and its prompt tokens are within
    5% of what the server then reports (chars / 4 on both sides, plus message overhead)."""
    left, right, _ = text_pairs(25)
    annotator = llm(fake, tmp_path, price_per_1k_input=2.0, price_per_1k_output=10.0)
    estimate = annotator.estimate_cost(left, right)
    assert fake.requests == 0
    assert (estimate["requests"], estimate["to_ask"], estimate["cached"]) == (3, 25, 0)
    assert estimate["cost"] == pytest.approx(
        (estimate["prompt_tokens"] * 2.0 + estimate["completion_tokens"] * 10.0) / 1000
    )
    annotator.annotate_texts(left[:10], right[:10])
    later = annotator.estimate_cost(left, right)
    assert (later["requests"], later["to_ask"], later["cached"]) == (2, 15, 10)
    annotator.annotate_texts(left, right)
    assert estimate["prompt_tokens"] == pytest.approx(fake.tokens[0], rel=0.05)


def test_llm_unreachable_endpoint_fails_fast_naming_the_url(tmp_path):
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    annotator = LLMAnnotator(
        base_url=url,
        model="m",
        cache=tmp_path / "a.sqlite",
        timeout=1.0,
        max_retries=2,
    )
    start = time.monotonic()
    with pytest.raises(LLMEndpointError, match=f"endpoint at {url}.*after 3 attempts"):
        annotator.annotate_texts(["a?"], ["b?"])
    assert time.monotonic() - start < 5
    assert len(annotator.cache) == 0


@pytest.mark.parametrize(
    "option",
    [
        {"task": "nli"},
        {"pairs_per_prompt": 0},
        {"concurrency": 0},
        {"max_retries": -1},
        {"timeout": 0},
        {"temperature": float("nan")},
        {"model": ""},
    ],
)
def test_llm_rejects_bad_settings(option, fake, tmp_path):
    with pytest.raises(ValueError, match=next(iter(option))):
        llm(fake, tmp_path, **option)
