"""The only place that talks to model servers: the `openai` client against an endpoint's base URL.

`ask` sends one request with retries and returns an `Outcome` (a reply or a failure, with attempts and latency);
it raises nothing a server can cause and touches no database, so many may run in threads at once
(services.endpoint_complete_many). Recording and caching are the service's.

Retries: on 429 (waiting what Retry-After asks, up to MODEL_RETRY_MAX_SECONDS), 5xx, 408, timeouts, dropped or
refused connections and replies that are not a completion, up to MODEL_MAX_ATTEMPTS attempts in all, with
exponential backoff and full jitter (MODEL_RETRY_BASE_SECONDS, doubling, capped). A refused host, a refused
key (401/403) and other 4xx end the call at once: asking again would not help.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
from django.conf import settings

from endpoints.hosts import GuardedTransport, HostRefused, HostUnresolvable, ReplyTooLarge
from endpoints.models import ErrorKind, Mode

NO_KEY = "no-key"  # sent as the bearer token when the endpoint has none (local servers ignore it)
BODY_START = 300  # characters of a reply that is not a completion kept in the error
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MAX_REDIRECTS = 3


@dataclass(frozen=True)
class Target:
    """Everything `ask` needs of an endpoint, read from the database beforehand (threads touch no rows)."""

    base_url: str
    model: str
    mode: str
    api_key: str
    timeout: float
    concurrency: int


@dataclass(frozen=True)
class Reply:
    text: str
    finish_reason: str
    tokens_in: int | None
    tokens_out: int | None


@dataclass(frozen=True)
class Failure:
    kind: ErrorKind
    message: str
    retry: bool = False
    wait: float | None = None  # what the server asked us to wait (Retry-After), in seconds


@dataclass(frozen=True)
class Outcome:
    reply: Reply | None
    failure: Failure | None
    attempts: int
    latency_ms: int


def client_for(target: Target) -> openai.OpenAI:
    """An `openai` client whose every request (each redirect hop too) goes through the host guard.

    Every credential is given explicitly: nothing of the process's OPENAI_* environment (another key, an
    organization) is sent to a coordinator's server. The client retries nothing itself: `ask` counts attempts.
    """
    http_client = httpx2.Client(
        transport=GuardedTransport(max_connections=max(1, target.concurrency)),
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        timeout=httpx2.Timeout(target.timeout, connect=min(target.timeout, 10.0)),
        headers={"Accept-Encoding": "identity"},
        trust_env=False,
    )
    unset: Any = openai.omit  # no OpenAI-Organization / OpenAI-Project header, whatever the environment says
    return openai.OpenAI(
        base_url=target.base_url,
        api_key=target.api_key or NO_KEY,
        organization="",
        project="",
        max_retries=0,
        http_client=http_client,
        default_headers={"OpenAI-Organization": unset, "OpenAI-Project": unset},
    )


def ask(
    client: openai.OpenAI,
    target: Target,
    *,
    prompt: str | None,
    messages: Sequence[Mapping[str, str]] | None,
    decoding: Mapping[str, Any],
    max_attempts: int,
    sleep: Callable[[float], None] = time.sleep,
) -> Outcome:
    """One request, asked up to `max_attempts` times while the failure is one that may pass."""
    started = time.monotonic()
    attempts = 0
    while True:
        attempts += 1
        result = _attempt(client, target, prompt=prompt, messages=messages, decoding=decoding)
        if isinstance(result, Reply):
            return Outcome(result, None, attempts, _ms_since(started))
        wait = backoff(attempts, result.wait)
        if not result.retry or attempts >= max_attempts or wait is None:
            if result.retry and wait is None:
                result = Failure(
                    result.kind,
                    f"{result.message} The server asks to wait {result.wait:.0f} s, longer than "
                    f"MODEL_RETRY_MAX_SECONDS ({settings.MODEL_RETRY_MAX_SECONDS:.0f} s).",
                )
            elif result.retry and attempts > 1:
                result = Failure(result.kind, f"{result.message} (after {attempts} attempts)")
            return Outcome(None, _scrubbed(result, target.api_key), attempts, _ms_since(started))
        sleep(wait)


def backoff(attempt: int, asked: float | None) -> float | None:
    """Seconds to wait after the `attempt`-th failure: what the server asked (Retry-After), else exponential
    with full jitter; None when the server asks for longer than MODEL_RETRY_MAX_SECONDS."""
    longest = float(settings.MODEL_RETRY_MAX_SECONDS)
    if asked is not None:
        return None if asked > longest else max(0.0, asked)
    ceiling = min(longest, float(settings.MODEL_RETRY_BASE_SECONDS) * 2 ** (attempt - 1))
    return random.uniform(0, ceiling)  # jitter, not a secret


def _attempt(
    client: openai.OpenAI,
    target: Target,
    *,
    prompt: str | None,
    messages: Sequence[Mapping[str, str]] | None,
    decoding: Mapping[str, Any],
) -> Reply | Failure:
    try:
        if target.mode == Mode.CHAT:
            raw = client.chat.completions.with_raw_response.create(
                model=target.model,
                messages=list(messages or []),  # type: ignore[arg-type]  # role/content dicts, as the API takes
                **decoding,
            )
        else:
            raw = client.completions.with_raw_response.create(model=target.model, prompt=prompt or "", **decoding)
        return parse_reply(raw.http_response.content, mode=target.mode)
    except HostRefused as refused:
        return Failure(ErrorKind.HOST_REFUSED, str(refused))
    except HostUnresolvable as unresolvable:
        return Failure(ErrorKind.CONNECTION, str(unresolvable), retry=True)
    except ReplyTooLarge as too_large:
        return Failure(ErrorKind.GARBAGE, str(too_large))
    except openai.APITimeoutError:
        return Failure(ErrorKind.TIMEOUT, f"No answer within {target.timeout:.0f} s.", retry=True)
    except openai.APIConnectionError as error:
        return _connection_failure(error)
    except openai.APIStatusError as error:
        return _status_failure(error.response)
    except httpx2.TooManyRedirects:
        return Failure(ErrorKind.REFUSED, f"More than {MAX_REDIRECTS} redirects.")


def _connection_failure(error: openai.APIConnectionError) -> Failure:
    cause = error.__cause__
    if isinstance(cause, HostRefused):
        return Failure(ErrorKind.HOST_REFUSED, str(cause))
    if isinstance(cause, HostUnresolvable):
        return Failure(ErrorKind.CONNECTION, str(cause), retry=True)
    if isinstance(cause, ReplyTooLarge):
        return Failure(ErrorKind.GARBAGE, str(cause))
    if isinstance(cause, httpx2.ConnectError):
        return Failure(ErrorKind.CONNECTION, f"Nothing answered: {_words(cause, 'connection refused')}.", retry=True)
    if isinstance(cause, httpx2.RemoteProtocolError | httpx2.ReadError | httpx2.WriteError):
        return Failure(
            ErrorKind.CONNECTION, f"The connection dropped before a reply: {_words(cause, 'closed')}.", retry=True
        )
    return Failure(ErrorKind.CONNECTION, f"Connection failed: {_words(cause or error, 'unknown')}.", retry=True)


def _words(error: BaseException, fallback: str) -> str:
    """An exception's message as the end of a sentence (no final full stop of its own)."""
    return str(error).strip().rstrip(".") or fallback


def _status_failure(response: httpx2.Response) -> Failure:
    status = response.status_code
    detail = _error_detail(response)
    if status == 429:
        return Failure(ErrorKind.RATE_LIMITED, f"429: {detail}", retry=True, wait=retry_after(response))
    if status in (401, 403):
        return Failure(ErrorKind.AUTH, f"{status}: {detail}")
    if status >= 500 or status == 408:
        return Failure(ErrorKind.SERVER, f"{status}: {detail}", retry=True, wait=retry_after(response))
    return Failure(ErrorKind.REFUSED, f"{status}: {detail}")


def _error_detail(response: httpx2.Response) -> str:
    """The server's own error message (OpenAI's `{"error": {"message": ...}}`), else the body's start."""
    try:
        body = response.json()
    except ValueError:
        return _start(response.text) or "(no body)"
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _start(error["message"])
        if isinstance(error, str):
            return _start(error)
        if isinstance(body.get("detail"), str):
            return _start(body["detail"])
    return _start(response.text)


def retry_after(response: httpx2.Response) -> float | None:
    """Seconds the Retry-After header (or retry-after-ms) asks for; None without one."""
    milliseconds = response.headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)  # an HTTP date
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def parse_reply(body: bytes, *, mode: str) -> Reply | Failure:
    """A completion from a reply's body, or a failure that quotes the body's start."""

    def garbage(why: str) -> Failure:
        return Failure(ErrorKind.GARBAGE, f"{why}: {_start(body.decode('utf-8', 'replace')) or '(empty)'}", True)

    try:
        data = json.loads(body)
    except ValueError:
        return garbage("The reply is not JSON")
    if not isinstance(data, dict):
        return garbage("The reply is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return garbage("The reply has no choices")
    choice = choices[0]
    if mode == Mode.CHAT:
        message = choice.get("message")
        text = message.get("content") if isinstance(message, dict) else None
        if text is None and isinstance(message, dict) and "content" in message:
            text = ""  # a null content (the model said nothing, or only called a tool): an empty answer
    else:
        text = choice.get("text")
    if not isinstance(text, str):
        return garbage("The reply's first choice has no text")
    if "\x00" in text:
        return garbage("The reply's text holds NUL characters, which no database column keeps")
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}  # a server that does not count tokens: the call has no token counts (and no cost)
    return Reply(
        text=text,
        finish_reason=_start(str(choice.get("finish_reason") or ""))[:40],
        tokens_in=_count(usage.get("prompt_tokens")),
        tokens_out=_count(usage.get("completion_tokens")),
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31 else None


def _start(text: str) -> str:
    """The start of a text from outside, on one line, control characters (NUL, ...) shown as �."""
    text = " ".join(CONTROL.sub("\ufffd", text).split())
    return text if len(text) <= BODY_START else text[:BODY_START] + "…"


def _scrubbed(failure: Failure, api_key: str) -> Failure:
    """A server may quote the key back in its error: it is never recorded."""
    if api_key and api_key in failure.message:
        return Failure(failure.kind, failure.message.replace(api_key, "[the API key]"), failure.retry, failure.wait)
    return failure


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
