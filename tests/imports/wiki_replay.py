"""Replaying recorded MediaWiki API replies (tests/fixtures/wikipedia/*.json) through httpx.MockTransport.

Each fixture file lists exchanges: a request (host and the query parameters that
identify it) and the reply (status, headers, JSON body), or `"error": "connect"`
for a network failure. An exchange marked `once` is used up by its first match,
so a 429 can be followed by a success. Unmatched requests fail the test loudly.
"""

from __future__ import annotations

import json
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
