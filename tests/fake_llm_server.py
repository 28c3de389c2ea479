"""A small OpenAI-compatible chat-completions server for tests (standard library only).

It serves ``POST /v1/chat/completions`` on 127.0.0.1 (a free port) from a background thread and
answers from a truth function of the two texts of each numbered pair it reads in the prompt, so
an annotator's labels can be checked against the truth. Control attributes make it fail (HTTP 500
for the next N requests, or for every request after K answers), wait, or answer garbage; it
records every request it receives."""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

PAIR = re.compile(r"^Pair (\d+):\n[^:\n]+: (.*)\n[^:\n]+: (.*)$", re.MULTILINE)
COMPLETION_TOKENS = 7  # every answer "costs" this many completion tokens


class FakeLLM:
    """The server; use as a context manager. ``url`` is the base_url to give the SDK."""

    def __init__(self, truth: Callable[[str, str], int], *, noise: float = 0.0, seed: int = 0):
        self.truth, self.noise, self.rng = truth, noise, np.random.default_rng(seed)
        self.fail_next = 0  # answer HTTP 500 to this many next requests
        self.fail_after = None  # after this many answers, every request gets HTTP 500
        self.garbage = None  # answer this text instead of the truth ...
        self.garbage_next = None  # ... for this many answers (None: for every answer)
        self.delay = 0.0  # seconds to wait before answering
        self.finish_reason = "stop"  # "length": every answer says it was cut off
        self.requests = 0  # requests received, failed ones included
        self.answered = 0  # requests answered with a completion
        self.prompts = []  # each answered request's [(number, left, right), ...]
        self.tokens = [0, 0]  # prompt and completion tokens reported in all answers
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reply(self, body: dict) -> tuple[int, dict]:
        """(HTTP status, JSON body) for one request ``body``."""
        with self.lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            fail = self.fail_next > 0 or (
                self.fail_after is not None and self.answered >= self.fail_after
            )
            self.fail_next -= self.fail_next > 0
        try:
            time.sleep(self.delay)
            if fail:
                return 500, {"error": {"message": "injected failure", "type": "server_error"}}
            return 200, self._completion(body)
        finally:
            with self.lock:
                self.in_flight -= 1

    def _completion(self, body: dict) -> dict:
        prompt = body["messages"][-1]["content"]
        pairs = [(int(k), a, b) for k, a, b in PAIR.findall(prompt)]
        with self.lock:
            similar = [
                k for k, a, b in pairs if bool(self.truth(a, b)) != (self.rng.random() < self.noise)
            ]
            self.answered += 1
            self.prompts.append(pairs)
            garbage = self.garbage is not None and self.garbage_next != 0
            if garbage and self.garbage_next is not None:
                self.garbage_next -= 1
        text = self.garbage if garbage else ", ".join(map(str, similar)) or "none"
        chars = sum(len(m["content"]) for m in body["messages"])
        usage = {"prompt_tokens": math.ceil(chars / 4), "completion_tokens": COMPLETION_TOKENS}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        with self.lock:
            self.tokens[0] += usage["prompt_tokens"]
            self.tokens[1] += usage["completion_tokens"]
        return {
            "id": f"chatcmpl-{self.answered}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": self.finish_reason,
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": usage,
        }


def _handler(fake: FakeLLM):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's HTTP client expects

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            self._send(*fake.reply(body))

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status >= 500:  # as a busy endpoint does; the SDK's retries wait this long
                self.send_header("retry-after-ms", "10")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):  # quiet
            pass

    return Handler
