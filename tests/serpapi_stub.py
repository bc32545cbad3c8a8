"""A SerpApi stand-in on 127.0.0.1 for tests: the real `serpapi` client talks to it over HTTP.

The `serpapi_stub` fixture starts one per test and points the settings at it (SERPAPI_BASE_URL,
SEARCH_ALLOWED_HOSTS=127.0.0.1, a short timeout, no retry wait). It answers `GET /search` with the recorded
response under tests/fixtures/serpapi/ whose `search_parameters.q` is the request's query (case aside), and
with the recorded "no results" response for any other query. Every request is kept (`serpapi_stub.requests`,
its parameters). `serpapi_stub.script(StubAnswer(...), ...)` makes the next requests get these instead, in order:

    StubAnswer.error(401, "error_401.json"), StubAnswer.error(429, "error_429.json"), StubAnswer(delay=5),
    StubAnswer(status=302, body={}, headers={"Location": "http://elsewhere.example/search"})
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "serpapi"


def recorded(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _by_query() -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        query = (data.get("search_parameters") or {}).get("q")
        if query:
            found[query.casefold()] = data
    return found


@dataclass
class StubAnswer:
    status: int = 200
    body: dict[str, Any] | None = None  # None: the recorded response for the query
    delay: float = 0.0
    headers: dict[str, str] | None = None

    @classmethod
    def error(cls, status: int, fixture: str) -> StubAnswer:
        return cls(status=status, body=recorded(fixture))


class SerpApiStub:
    def __init__(self) -> None:
        self.requests: list[dict[str, str]] = []
        self.queue: deque[StubAnswer] = deque()
        self.responses = _by_query()
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                params = dict(parse_qsl(parts.query))
                with stub.lock:
                    stub.requests.append(params)
                    answer = stub.queue.popleft() if stub.queue else StubAnswer()
                if answer.delay:
                    time.sleep(answer.delay)
                if parts.path != "/search":
                    answer = StubAnswer(404, {"error": "Unknown path"})
                body = answer.body
                if body is None:
                    query = (params.get("q") or params.get("p") or "").casefold()
                    body = stub.responses.get(query) or recorded("no_results.json")
                data = json.dumps(body, ensure_ascii=False).encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (answer.headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        port = self.server.server_address[1]
        return f"http://127.0.0.1:{port}"

    @property
    def queries(self) -> list[str]:
        return [params.get("q") or params.get("p") or "" for params in self.requests]

    def script(self, *answers: StubAnswer) -> None:
        with self.lock:
            self.queue.extend(answers)


@pytest.fixture
def serpapi_stub(settings) -> Iterator[SerpApiStub]:
    stub = SerpApiStub()
    stub.thread.start()
    settings.SERPAPI_BASE_URL = stub.base_url
    settings.SEARCH_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.SEARCH_TIMEOUT_SECONDS = 0.5
    settings.SEARCH_RETRY_BASE_SECONDS = 0.0
    settings.SEARCH_MAX_ATTEMPTS = 2
    try:
        yield stub
    finally:
        stub.server.shutdown()
        stub.server.server_close()
