"""Replaying recorded MediaWiki API replies (tests/fixtures/wikipedia/*.json) through httpx.MockTransport.

Each fixture file lists exchanges: a request (host and the query parameters that
identify it) and the reply (status, headers, JSON body), or `"error": "connect"`
for a network failure. An exchange marked `once` is used up by its first match,
so a 429 can be followed by a success. Unmatched requests fail the test loudly.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "wikipedia"
MATCHED_PARAMS = ("prop", "titles", "variant", "list", "cmtitle")


class Replay:
    def __init__(self, *cases: str) -> None:
        self.exchanges: list[dict[str, Any]] = []
        for case in cases:
            self.exchanges += json.loads((FIXTURES / f"{case}.json").read_text(encoding="utf-8"))["exchanges"]
        self.requests: list[httpx.Request] = []
        self.transport = httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        params = {key: request.url.params.get(key) for key in MATCHED_PARAMS if key in request.url.params}
        for exchange in self.exchanges:
            wanted = exchange["request"]
            if wanted["host"] == request.url.host and wanted["params"] == params and not exchange.get("used"):
                if exchange.get("once"):
                    exchange["used"] = True
                if exchange.get("error") == "connect":
                    raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
                return httpx.Response(exchange["status"], headers=exchange.get("headers", {}), json=exchange["body"])
        raise AssertionError(f"No recorded reply for {request.url.host} {params}")

    def calls(self, **params: str) -> list[httpx.Request]:
        """The requests made whose parameters include these."""
        return [r for r in self.requests if all(r.url.params.get(k) == v for k, v in params.items())]


class ReplayServer:
    """Serves a Replay over HTTP at http://127.0.0.1:PORT/{wiki}/w/api.php, for a worker in another process.

    Point the worker at it with WIKIPEDIA_API_URL=server.api_url.
    """

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        handler = self._handler()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{{wiki}}/w/api.php"

    def _handler(self):
        replay = self.replay

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                wiki = self.path.split("/")[1]
                query = self.path.split("?", 1)[1] if "?" in self.path else ""
                url = f"https://{wiki}.wikipedia.org/w/api.php?{query}"
                request = httpx.Request("GET", url, headers=list(self.headers.items()))
                try:
                    response = replay.handle(request)
                except (AssertionError, httpx.ConnectError):
                    self.send_error(502)
                    return
                body = response.content
                self.send_response(response.status_code)
                for name, value in response.headers.items():
                    if name.lower() not in {"content-length", "transfer-encoding"}:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> ReplayServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
