"""A small OpenAI-compatible server on 127.0.0.1 for tests: the real `openai` client talks to it over HTTP.

The `model_stub` fixture starts one per test (and allows 127.0.0.1 in MODEL_ALLOWED_HOSTS, with short retry
waits); `model_stub.base_url` is what an endpoint's base URL is set to. It answers `POST /v1/chat/completions`
and `POST /v1/completions`, records every request (`model_stub.requests`), and replies as scripted:

    model_stub.script(StubReply.rate_limited(retry_after=1), StubReply.server_error(), "the answer")
        # the next requests get these, in order ("text" is short for StubReply(text="text"))
    model_stub.answer(lambda request: "YES" if "Minga" in request.prompt_text else "NO")
        # every request the queue does not answer: a reply chosen from the request (None: the default)
    StubReply(text=..., tokens_in=12, tokens_out=3, finish_reason="length", delay=2.0)
    StubReply.garbage(b"<html>oops</html>"), StubReply.no_choices(), StubReply.dropped(),
    StubReply.error(401, "Incorrect API key"), StubReply.redirect("http://elsewhere/v1/chat/completions")

Without a script the reply is `default_text` with token usage. `max_in_flight` is the most requests it held at
once (a concurrency limit's proof). A Celery worker process the test starts reaches it too; give that worker
MODEL_ALLOWED_HOSTS=127.0.0.1 in its environment.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest


@dataclass
class StubReply:
    text: str = "stub reply"
    finish_reason: str = "stop"
    tokens_in: int | None = 11
    tokens_out: int | None = 7
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None  # sent as it is, instead of a completion (garbage, an error body)
    delay: float = 0.0  # seconds before the reply (or before dropping)
    drop: bool = False  # close the connection without any reply

    @classmethod
    def rate_limited(cls, *, retry_after: float | str | None = 1, message: str = "Rate limit reached") -> StubReply:
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        return cls.error(429, message, headers=headers)

    @classmethod
    def server_error(cls, status: int = 500, message: str = "The server had an error") -> StubReply:
        return cls.error(status, message)

    @classmethod
    def error(cls, status: int, message: str, *, headers: dict[str, str] | None = None) -> StubReply:
        body = json.dumps({"error": {"message": message, "type": "stub_error", "code": status}}).encode()
        return cls(status=status, body=body, headers={"Content-Type": "application/json", **(headers or {})})

    @classmethod
    def garbage(cls, body: bytes = b"<html><body>502 Bad Gateway</body></html>") -> StubReply:
        return cls(body=body, headers={"Content-Type": "text/html"})

    @classmethod
    def no_choices(cls) -> StubReply:
        return cls(body=json.dumps({"id": "x", "object": "chat.completion", "choices": []}).encode())

    @classmethod
    def dropped(cls, *, delay: float = 0.0) -> StubReply:
        return cls(drop=True, delay=delay)

    @classmethod
    def slow(cls, seconds: float, text: str = "slow reply") -> StubReply:
        return cls(text=text, delay=seconds)

    @classmethod
    def redirect(cls, location: str, status: int = 307) -> StubReply:
        return cls(status=status, body=b"", headers={"Location": location})


@dataclass
class StubRequest:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes
    json: Any

    @property
    def model(self) -> str:
        return str((self.json or {}).get("model", ""))

    @property
    def messages(self) -> list[dict[str, str]]:
        return list((self.json or {}).get("messages") or [])

    @property
    def prompt(self) -> str | None:
        return (self.json or {}).get("prompt")

    @property
    def prompt_text(self) -> str:
        """The raw prompt, or every message's content joined: what a scripted answer looks at."""
        if self.prompt is not None:
            return str(self.prompt)
        return "\n".join(str(message.get("content", "")) for message in self.messages)


Scripted = StubReply | str


class ModelStub:
    default_text = "stub reply"

    def __init__(self) -> None:
        self.requests: list[StubRequest] = []
        self._queue: deque[Scripted] = deque()
        self._responder: Callable[[StubRequest], Scripted | None] | None = None
        self._lock = threading.Lock()
        self._in_flight = 0
        self.max_in_flight = 0
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, name="model-stub", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> ModelStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, *replies: Scripted) -> None:
        """The next requests get these replies, in order."""
        with self._lock:
            self._queue.extend(replies)

    def answer(self, responder: Callable[[StubRequest], Scripted | None]) -> None:
        """Every request the script does not answer gets `responder(request)` (None: the default reply)."""
        self._responder = responder

    def _next(self, request: StubRequest) -> StubReply:
        with self._lock:
            self.requests.append(request)
            scripted: Scripted | None = self._queue.popleft() if self._queue else None
        if scripted is None and self._responder is not None:
            scripted = self._responder(request)
        if scripted is None:
            scripted = self.default_text
        return StubReply(text=scripted) if isinstance(scripted, str) else scripted

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


def completion_body(request: StubRequest, reply: StubReply, number: int) -> bytes:
    chat = urlsplit(request.path).path.endswith("/chat/completions")
    choice: dict[str, Any] = {"index": 0, "finish_reason": reply.finish_reason, "logprobs": None}
    if chat:
        choice["message"] = {"role": "assistant", "content": reply.text}
    else:
        choice["text"] = reply.text
    body: dict[str, Any] = {
        "id": f"stub-{number}",
        "object": "chat.completion" if chat else "text_completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [choice],
    }
    if reply.tokens_in is not None or reply.tokens_out is not None:
        tokens_in, tokens_out = reply.tokens_in or 0, reply.tokens_out or 0
        body["usage"] = {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        }
    return json.dumps(body, ensure_ascii=False).encode()


def _handler(stub: ModelStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            self._reply_json(404, {"error": {"message": f"No route GET {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            request = StubRequest(
                "POST", self.path, {name.lower(): value for name, value in self.headers.items()}, raw, parsed
            )
            if not urlsplit(self.path).path.endswith(("/chat/completions", "/completions")):
                self._reply_json(404, {"error": {"message": f"No route POST {self.path}"}})
                return
            stub._enter()
            try:
                reply = stub._next(request)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                body = reply.body if reply.body is not None else completion_body(request, reply, len(stub.requests))
                self.send_response(reply.status)
                headers = {"Content-Type": "application/json", **reply.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout): nothing to answer
            finally:
                stub._leave()

        def _reply_json(self, status: int, data: Any) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@pytest.fixture
def model_stub(settings: Any) -> Any:
    """A started stub server; 127.0.0.1 allowed as a model host; retry waits of a few milliseconds."""
    stub = ModelStub().start()
    settings.MODEL_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.MODEL_RETRY_BASE_SECONDS = 0.01
    yield stub
    stub.stop()
