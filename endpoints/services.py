"""One model connection for every feature that asks a model: set up endpoints, then call them.

Calling a model (what evaluation runs, judges and the collection loop use):

    from endpoints.services import ModelRequest, endpoint_complete, endpoint_complete_many

    result = endpoint_complete(endpoint=endpoint, purpose="judge", prompt="...")          # or messages=[...]
    if result.ok:
        use(result.text)          # result.finish_reason, tokens_in, tokens_out, latency_ms, attempts, cached, cost
    else:
        keep(result.error_kind, result.error)                    # never raised: recorded and returned

    results = endpoint_complete_many(
        endpoint=endpoint, purpose="generation", requests=[ModelRequest(prompt=p) for p in prompts],
        on_result=lambda index, result: ...,   # called in the caller's thread as each arrives (store, heartbeat)
    )

- `endpoint` is an `Endpoint` row the caller has loaded through its own access check (`endpoints.access`).
- Chat endpoints take `messages` (role/content dicts) or a `prompt` (sent as one user message); raw completion
  endpoints take a `prompt` only. `decoding` overrides the endpoint's settings for this call (temperature, top_p,
  max_tokens, seed, stop; None removes one). `variant` asks the same request again as a new, separately cached
  request (the n-th re-ask of a judge). Bad input (no prompt, messages on a raw endpoint) raises `InvalidInput`
  before anything is sent; everything a server does is a `Completion` with `ok=False`.
- Every call is a `ModelCall` row (tokens, latency, attempts, status, error, cost at the endpoint's prices);
  `Completion.call_id` names it. A successful reply is cached per project under the hash of everything that
  determines it (base URL, model, mode, messages or prompt, decoding, variant): the same request asked again is
  answered from the cache, recorded as a cache hit (no request sent, cost 0).
- `endpoint_complete_many` sends at most `endpoint.concurrency` requests at once (threads inside the calling
  process, e.g. one Celery task), asks each distinct request once, and returns the results in request order.
  A job that resumes after its worker died asks everything again: what was answered before comes from the
  cache. Raising from `on_result` (`common.jobs.JobLost`) stops the rest; replies already paid for are still
  recorded and cached.

Setting endpoints up (pages, API, command): `endpoint_create`, `endpoint_update`, `endpoint_delete`,
`endpoint_test` (one short prompt, one attempt, at most TEST_TIMEOUT seconds), `endpoint_cache_clear`,
`endpoint_keys_rotate`. The API key is write-only: set, replaced or removed, never read back out.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

import openai
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Sum
from django.utils import timezone

from annotation.models import Project
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, StaleEdit
from common.secrets import SecretUnreadable, secret_decrypt, secret_encrypt, secret_rotate
from endpoints import client as model_client
from endpoints.hosts import url_problem
from endpoints.models import CachedReply, Endpoint, EndpointSecret, ErrorKind, Mode, ModelCall

logger = logging.getLogger(__name__)

TEST_PROMPT = "Reply with one short sentence: which language model are you?"
TEST_TIMEOUT = 15.0  # seconds: a test from the page holds a web request, so it is bounded
TEST_MAX_TOKENS = 64
DECODING_FIELDS = ("temperature", "top_p", "max_tokens", "seed", "stop")
ROLES = ("system", "user", "assistant")
MAX_CONCURRENCY = 64
MAX_TIMEOUT = 600
MAX_STOP = 4
MAX_KEY_LENGTH = 1000


# Calling a model


@dataclass(frozen=True)
class ModelRequest:
    """One request of a batch: a prompt, or chat messages; `variant` asks it again as a distinct request."""

    prompt: str | None = None
    messages: Sequence[Mapping[str, str]] | None = None
    variant: int = 0


@dataclass(frozen=True)
class Completion:
    """What became of one request. `ok=False`: `error_kind` (a `ModelCall.ErrorKind`) and `error` say why."""

    ok: bool
    text: str
    finish_reason: str
    tokens_in: int | None
    tokens_out: int | None
    latency_ms: int
    attempts: int
    cached: bool
    error_kind: str
    error: str
    cost: Decimal | None
    call_id: int
    request_hash: str


@dataclass(frozen=True)
class _Prepared:
    key: str
    prompt: str | None
    messages: tuple[dict[str, str], ...] | None
    decoding: dict[str, Any] = field(default_factory=dict)


def endpoint_complete(
    *,
    endpoint: Endpoint,
    purpose: str,
    prompt: str | None = None,
    messages: Sequence[Mapping[str, str]] | None = None,
    variant: int = 0,
    decoding: Mapping[str, Any] | None = None,
    user: User | None = None,
    max_attempts: int | None = None,
    timeout: float | None = None,
) -> Completion:
    """Ask the endpoint once (with retries), from the cache when the same request was answered before."""
    prepared = _prepare(endpoint, ModelRequest(prompt, messages, variant), decoding)
    hit = CachedReply.objects.filter(project_id=endpoint.project_id, key=prepared.key).first()
    if hit is not None:
        return _record_hit(endpoint, prepared, hit, purpose=purpose, user=user)
    target = _target(endpoint, timeout=timeout)
    if isinstance(target, model_client.Failure):
        return _record(endpoint, prepared, model_client.Outcome(None, target, 0, 0), purpose=purpose, user=user)
    with _client(target) as client:
        outcome = model_client.ask(
            client,
            target,
            prompt=prepared.prompt,
            messages=prepared.messages,
            decoding=prepared.decoding,
            max_attempts=_attempts(max_attempts),
        )
    return _record(endpoint, prepared, outcome, purpose=purpose, user=user)


def endpoint_complete_many(
    *,
    endpoint: Endpoint,
    purpose: str,
    requests: Sequence[ModelRequest],
    decoding: Mapping[str, Any] | None = None,
    user: User | None = None,
    on_result: Callable[[int, Completion], None] | None = None,
    max_attempts: int | None = None,
) -> list[Completion]:
    """Ask many requests, at most `endpoint.concurrency` at once; the results in the order of `requests`."""
    prepared = [_prepare(endpoint, request, decoding) for request in requests]
    results: list[Completion | None] = [None] * len(prepared)

    def done(index: int, completion: Completion) -> None:
        results[index] = completion
        if on_result is not None:
            on_result(index, completion)

    hits = {
        hit.key: hit
        for hit in CachedReply.objects.filter(project_id=endpoint.project_id, key__in={p.key for p in prepared})
    }
    waiting: dict[str, list[int]] = {}  # request hash -> the indexes asking it (the first one is sent)
    for index, request in enumerate(prepared):
        if request.key in hits:
            done(index, _record_hit(endpoint, request, hits[request.key], purpose=purpose, user=user))
        else:
            waiting.setdefault(request.key, []).append(index)
    if not waiting:
        return _all(results)

    target = _target(endpoint)
    if isinstance(target, model_client.Failure):
        failed = model_client.Outcome(None, target, 0, 0)
        for indexes in waiting.values():
            for index in indexes:
                done(index, _record(endpoint, prepared[index], failed, purpose=purpose, user=user))
        return _all(results)

    def answered(key: str, outcome: model_client.Outcome, *, notify: bool = True) -> None:
        first, *repeats = waiting.pop(key)
        record = done if notify else results.__setitem__
        completion = _record(endpoint, prepared[first], outcome, purpose=purpose, user=user)
        record(first, completion)
        for index in repeats:  # the same request again in this batch: asked once
            if completion.ok:
                hit = CachedReply.objects.get(project_id=endpoint.project_id, key=key)
                record(index, _record_hit(endpoint, prepared[index], hit, purpose=purpose, user=user))
            else:
                unsent = model_client.Outcome(None, outcome.failure, 0, 0)
                record(index, _record(endpoint, prepared[index], unsent, purpose=purpose, user=user))

    attempts = _attempts(max_attempts)
    with (
        _client(target) as client,
        ThreadPoolExecutor(
            max_workers=max(1, min(endpoint.concurrency, len(waiting))), thread_name_prefix=f"endpoint-{endpoint.pk}"
        ) as pool,
    ):
        futures: dict[Future[model_client.Outcome], str] = {
            pool.submit(
                model_client.ask,
                client,
                target,
                prompt=prepared[indexes[0]].prompt,
                messages=prepared[indexes[0]].messages,
                decoding=prepared[indexes[0]].decoding,
                max_attempts=attempts,
            ): key
            for key, indexes in waiting.items()
        }
        pending = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    answered(futures[future], future.result())
        except BaseException:
            # Stopped (JobLost from on_result, a database error): nothing more is sent, and what was already
            # answered is still recorded and cached, without calling back.
            pool.shutdown(wait=True, cancel_futures=True)
            for future, key in futures.items():
                if key in waiting and future.done() and not future.cancelled() and future.exception() is None:
                    answered(key, future.result(), notify=False)
            raise
    return _all(results)


def _all(results: list[Completion | None]) -> list[Completion]:
    assert all(result is not None for result in results)
    return [result for result in results if result is not None]


def _attempts(max_attempts: int | None) -> int:
    return max(1, max_attempts if max_attempts is not None else settings.MODEL_MAX_ATTEMPTS)


@contextmanager
def _client(target: model_client.Target) -> Iterator[openai.OpenAI]:
    client = model_client.client_for(target)
    try:
        yield client
    finally:
        client.close()


def _target(endpoint: Endpoint, *, timeout: float | None = None) -> model_client.Target | model_client.Failure:
    """What the threads need of the endpoint, its key decrypted; a failure when the stored key is unreadable."""
    token = EndpointSecret.objects.filter(endpoint=endpoint).values_list("token", flat=True).first()
    try:
        api_key = secret_decrypt(token=token) if token else ""
    except SecretUnreadable as error:
        return model_client.Failure(ErrorKind.KEY_UNREADABLE, str(error))
    seconds = float(endpoint.timeout_seconds if timeout is None else min(timeout, endpoint.timeout_seconds))
    return model_client.Target(
        base_url=endpoint.base_url,
        model=endpoint.model,
        mode=endpoint.mode,
        api_key=api_key,
        timeout=seconds,
        concurrency=endpoint.concurrency,
    )


def _prepare(endpoint: Endpoint, request: ModelRequest, overrides: Mapping[str, Any] | None) -> _Prepared:
    prompt, messages = request.prompt, request.messages
    if prompt is not None and messages is not None:
        raise InvalidInput("Give messages or a prompt, not both.", field="messages")
    if endpoint.mode == Mode.COMPLETION:
        if messages is not None:
            raise InvalidInput(
                f"The endpoint {endpoint.name} takes a raw prompt (completion mode), not chat messages.",
                field="messages",
            )
        if not isinstance(prompt, str):
            raise InvalidInput("A raw completion needs a prompt.", field="prompt")
        chat = None
    else:
        if messages is None and not isinstance(prompt, str):
            raise InvalidInput("A chat completion needs messages or a prompt.", field="messages")
        chat = tuple(_message(each, at) for at, each in enumerate(messages)) if messages is not None else None
        if chat is None:
            chat = ({"role": "user", "content": str(prompt)},)
        if not chat:
            raise InvalidInput("A chat completion needs at least one message.", field="messages")
        prompt = None
    decoding = dict(endpoint.decoding())
    for name, value in (overrides or {}).items():
        if name not in DECODING_FIELDS:
            raise InvalidInput(f"Unknown decoding setting {name!r}.", field=f"decoding.{name}")
        if value is None:
            decoding.pop(name, None)
        else:
            decoding[name] = value
    _decoding_check(decoding, prefix="decoding.")
    if not isinstance(request.variant, int) or request.variant < 0:
        raise InvalidInput("variant is a whole number from 0.", field="variant")
    key = request_hash(
        base_url=endpoint.base_url,
        model=endpoint.model,
        mode=endpoint.mode,
        prompt=prompt,
        messages=chat,
        decoding=decoding,
        variant=request.variant,
    )
    return _Prepared(key, prompt, chat, decoding)


def _message(message: Mapping[str, str], at: int) -> dict[str, str]:
    if not isinstance(message, Mapping) or not isinstance(message.get("content"), str):
        raise InvalidInput(f"messages[{at}] needs a text content.", field=f"messages[{at}].content")
    if message.get("role") not in ROLES:
        raise InvalidInput(f"messages[{at}].role must be one of {', '.join(ROLES)}.", field=f"messages[{at}].role")
    return {"role": str(message["role"]), "content": str(message["content"])}


def request_hash(
    *,
    base_url: str,
    model: str,
    mode: str,
    prompt: str | None,
    messages: Sequence[Mapping[str, str]] | None,
    decoding: Mapping[str, Any],
    variant: int,
) -> str:
    """sha256 of everything that determines a reply, as canonical JSON (the cache key)."""
    canonical = {
        "base_url": base_url.rstrip("/"),
        "model": model,
        "mode": mode,
        "prompt": prompt,
        "messages": [dict(message) for message in messages] if messages is not None else None,
        "decoding": dict(decoding),
        "variant": variant,
    }
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _record_hit(
    endpoint: Endpoint, prepared: _Prepared, hit: CachedReply, *, purpose: str, user: User | None
) -> Completion:
    call = ModelCall.objects.create(
        project_id=endpoint.project_id,
        endpoint=endpoint,
        endpoint_name=endpoint.name,
        model=endpoint.model,
        purpose=purpose[:40],
        request_hash=prepared.key,
        status=ModelCall.Status.OK,
        cached=True,
        finish_reason=hit.finish_reason,
        tokens_in=hit.tokens_in,
        tokens_out=hit.tokens_out,
        latency_ms=0,
        attempts=0,
        cost=Decimal(0) if endpoint.price_input is not None else None,
        created_by=user,
    )
    return _completion(call, hit.text)


def _record(
    endpoint: Endpoint, prepared: _Prepared, outcome: model_client.Outcome, *, purpose: str, user: User | None
) -> Completion:
    """The call's row, and the reply cached when there is one."""
    reply, failure = outcome.reply, outcome.failure
    call = ModelCall(
        project_id=endpoint.project_id,
        endpoint=endpoint,
        endpoint_name=endpoint.name,
        model=endpoint.model,
        purpose=purpose[:40],
        request_hash=prepared.key,
        latency_ms=outcome.latency_ms,
        attempts=outcome.attempts,
        created_by=user,
    )
    if reply is not None:
        call.status = ModelCall.Status.OK
        call.finish_reason = reply.finish_reason
        call.tokens_in, call.tokens_out = reply.tokens_in, reply.tokens_out
        call.cost = endpoint.cost(reply.tokens_in, reply.tokens_out)
        _cache(endpoint, prepared, reply)
    else:
        assert failure is not None
        call.status = ModelCall.Status.FAILED
        call.error_kind, call.error = failure.kind, failure.message
        logger.info("Model call to endpoint %s failed (%s): %s", endpoint.pk, failure.kind, failure.message)
    call.save()
    return _completion(call, reply.text if reply is not None else "")


def _cache(endpoint: Endpoint, prepared: _Prepared, reply: model_client.Reply) -> None:
    try:
        with transaction.atomic():
            CachedReply.objects.get_or_create(
                project_id=endpoint.project_id,
                key=prepared.key,
                defaults={
                    "base_url": endpoint.base_url,
                    "model": endpoint.model,
                    "text": reply.text,
                    "finish_reason": reply.finish_reason,
                    "tokens_in": reply.tokens_in,
                    "tokens_out": reply.tokens_out,
                },
            )
    except IntegrityError:
        pass  # another process cached the same request a moment ago: the first reply stays


def _completion(call: ModelCall, text: str) -> Completion:
    return Completion(
        ok=call.status == ModelCall.Status.OK,
        text=text,
        finish_reason=call.finish_reason,
        tokens_in=call.tokens_in,
        tokens_out=call.tokens_out,
        latency_ms=call.latency_ms,
        attempts=call.attempts,
        cached=call.cached,
        error_kind=call.error_kind,
        error=call.error,
        cost=call.cost,
        call_id=call.pk,
        request_hash=call.request_hash,
    )


def endpoint_test(*, endpoint: Endpoint, user: User | None) -> Completion:
    """One short prompt, sent once (no retries, at most TEST_TIMEOUT seconds), never from the cache: does the
    endpoint answer, and what does it say? Recorded like any call (purpose "test")."""
    prepared = _prepare(endpoint, ModelRequest(prompt=TEST_PROMPT), {"max_tokens": TEST_MAX_TOKENS})
    target = _target(endpoint, timeout=TEST_TIMEOUT)
    if isinstance(target, model_client.Failure):
        return _record(endpoint, prepared, model_client.Outcome(None, target, 0, 0), purpose="test", user=user)
    with _client(target) as client:
        outcome = model_client.ask(
            client,
            target,
            prompt=prepared.prompt,
            messages=prepared.messages,
            decoding=prepared.decoding,
            max_attempts=1,
        )
    return _record(endpoint, prepared, outcome, purpose="test", user=user)


# Setting endpoints up


SETTINGS_FIELDS = (
    "name",
    "base_url",
    "model",
    "mode",
    "temperature",
    "top_p",
    "max_tokens",
    "seed",
    "stop",
    "concurrency",
    "timeout_seconds",
    "price_input",
    "price_output",
)


def endpoints_for_project(project: Project) -> QuerySet[Endpoint]:
    """The project's endpoints, each with `key_set` (whether an API key is stored) and its calls' totals."""
    spent = Q(calls__cached=False)
    return (
        Endpoint.objects.filter(project=project)
        .annotate(
            key_set=Exists(EndpointSecret.objects.filter(endpoint=OuterRef("pk"))),
            call_count=Count("calls"),
            failed_count=Count("calls", filter=Q(calls__status=ModelCall.Status.FAILED)),
            cached_count=Count("calls", filter=Q(calls__cached=True)),
            tokens_in_total=Sum("calls__tokens_in", filter=spent),
            tokens_out_total=Sum("calls__tokens_out", filter=spent),
            cost_total=Sum("calls__cost", filter=spent),
        )
        .order_by("name", "pk")
    )


def calls_for_project(project: Project, *, endpoint: Endpoint | None = None) -> QuerySet[ModelCall]:
    calls = ModelCall.objects.filter(project=project).select_related("created_by")
    if endpoint is not None:
        calls = calls.filter(endpoint=endpoint)
    return calls.order_by("-created_at", "-pk")


def _number(values: dict[str, Any], name: str, low: float, high: float, *, whole: bool = False) -> None:
    value = values.get(name)
    if value is None:
        return
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{name}: a number, please.", field=name) from None
    if isinstance(value, bool) or not math.isfinite(number) or not low <= number <= high:
        raise InvalidInput(f"{name}: from {low:g} to {high:g}.", field=name)
    if whole and not float(number).is_integer():
        raise InvalidInput(f"{name}: a whole number, please.", field=name)


def _decoding_check(values: dict[str, Any], *, prefix: str = "") -> None:
    try:
        _number(values, "temperature", 0, 2)
        _number(values, "top_p", 0, 1)
        _number(values, "max_tokens", 1, 1_000_000, whole=True)
        _number(values, "seed", -(2**63), 2**63 - 1, whole=True)
    except InvalidInput as error:
        field_name = f"{prefix}{error.field}"
        raise InvalidInput(f"{prefix}{error.message}", field=field_name) from None
    if values.get("top_p") is not None and float(values["top_p"]) == 0:
        raise InvalidInput(f"{prefix}top_p: above 0 (1 keeps every token).", field=f"{prefix}top_p")
    for name, kind in (("temperature", float), ("top_p", float), ("max_tokens", int), ("seed", int)):
        if values.get(name) is not None:
            values[name] = kind(values[name])  # as the request and the cache key carry it (5, not 5.0)
    stop = values.get("stop")
    if stop is not None and not stop:
        values.pop("stop")  # no stop sequence: none sent
    elif stop is not None:
        if isinstance(stop, str):
            stop = [stop]
        if not isinstance(stop, list) or not all(isinstance(each, str) and each for each in stop):
            raise InvalidInput(f"{prefix}stop: a list of non-empty texts.", field=f"{prefix}stop")
        if len(stop) > MAX_STOP or any(len(each) > 200 for each in stop):
            raise InvalidInput(f"{prefix}stop: at most {MAX_STOP} texts of 200 characters.", field=f"{prefix}stop")
        values["stop"] = stop


def _settings_check(project: Project, values: dict[str, Any], *, endpoint: Endpoint | None) -> dict[str, Any]:
    """The settings as they will be stored, or InvalidInput naming the first field at fault."""
    values = dict(values)
    for name in ("name", "base_url", "model"):
        if name in values:
            values[name] = str(values[name] or "").strip()
    merged = {name: getattr(endpoint, name) for name in SETTINGS_FIELDS} if endpoint is not None else {}
    merged.update(values)
    for name, limit in (("name", 100), ("base_url", 500), ("model", 200)):
        if not merged.get(name):
            raise InvalidInput(f"{name}: required.", field=name)
        if len(merged[name]) > limit:
            raise InvalidInput(f"{name}: at most {limit} characters.", field=name)
    if merged.get("mode", Mode.CHAT) not in Mode.values:
        raise InvalidInput(f"mode: one of {', '.join(Mode.values)}.", field="mode")
    if "base_url" in values:
        problem = url_problem(merged["base_url"])
        if problem:
            raise InvalidInput(f"base_url: {problem}", field="base_url")
    _decoding_check(merged)
    values["stop"] = merged.get("stop") or []
    _number(merged, "concurrency", 1, MAX_CONCURRENCY, whole=True)
    _number(merged, "timeout_seconds", 1, MAX_TIMEOUT, whole=True)
    prices = []
    for name in ("price_input", "price_output"):
        price = merged.get(name)
        if price is not None:
            try:
                price = Decimal(str(price))
            except InvalidOperation:
                raise InvalidInput(f"{name}: a number, please.", field=name) from None
            if not price.is_finite() or not Decimal(0) <= price <= Decimal(100_000):
                raise InvalidInput(f"{name}: from 0 to 100000 per million tokens.", field=name)
            if name in values:
                values[name] = price.quantize(Decimal("0.0001"))
        prices.append(price)
    if (prices[0] is None) != (prices[1] is None):
        raise InvalidInput("Give both prices (input and output tokens) or neither.", field="price_output")
    duplicate = Endpoint.objects.filter(project=project, name=merged["name"])
    if endpoint is not None:
        duplicate = duplicate.exclude(pk=endpoint.pk)
    if duplicate.exists():
        raise InvalidInput(f"name: this project already has an endpoint called {merged['name']!r}.", field="name")
    return values


def _key_check(api_key: str) -> str:
    key = api_key.strip()
    if len(key) > MAX_KEY_LENGTH or any(ord(char) < 32 or ord(char) == 127 for char in key):
        raise InvalidInput(f"api_key: one line of at most {MAX_KEY_LENGTH} characters.", field="api_key")
    return key


def _key_store(endpoint: Endpoint, api_key: str) -> None:
    EndpointSecret.objects.update_or_create(
        endpoint=endpoint, defaults={"token": secret_encrypt(plain=api_key), "set_at": timezone.now()}
    )


def _audited(values: dict[str, Any]) -> dict[str, Any]:
    return {name: (str(value) if isinstance(value, Decimal) else value) for name, value in values.items()}


@transaction.atomic
def endpoint_create(*, project: Project, user: User | None, api_key: str = "", **values: Any) -> Endpoint:
    """A new endpoint of the project (its base URL checked against MODEL_ALLOWED_HOSTS)."""
    unknown = set(values) - set(SETTINGS_FIELDS)
    if unknown:
        raise InvalidInput(f"Unknown setting {sorted(unknown)[0]!r}.", field=sorted(unknown)[0])
    values = _settings_check(project, values, endpoint=None)
    key = _key_check(api_key)
    endpoint = Endpoint.objects.create(project=project, created_by=user, **values)
    if key:
        _key_store(endpoint, key)
    details = {name: getattr(endpoint, name) for name in SETTINGS_FIELDS}
    audit.record(user, Action.ENDPOINT_CREATED, endpoint, api_key="set" if key else "not set", **_audited(details))
    return endpoint


@transaction.atomic
def endpoint_update(
    *,
    endpoint: Endpoint,
    user: User | None,
    version: int | None = None,
    api_key: str | None = None,
    remove_key: bool = False,
    **values: Any,
) -> Endpoint:
    """Change an endpoint's settings. `api_key` None or empty keeps the stored key, a text replaces it,
    `remove_key` drops it. With `version`, an edit made from an older copy is refused (StaleEdit)."""
    unknown = set(values) - set(SETTINGS_FIELDS)
    if unknown:
        raise InvalidInput(f"Unknown setting {sorted(unknown)[0]!r}.", field=sorted(unknown)[0])
    if "base_url" in values and str(values["base_url"] or "").strip() == endpoint.base_url:
        values.pop("base_url")  # unchanged: not checked again (the allow-list is checked at every call)
    values = _settings_check(endpoint.project, values, endpoint=endpoint)
    key = _key_check(api_key or "")
    before = {name: getattr(endpoint, name) for name in values}
    changed = {name: value for name, value in values.items() if before[name] != value}
    rows = Endpoint.objects.filter(pk=endpoint.pk)
    if version is not None:
        rows = rows.filter(version=version)
    if not rows.update(**changed, version=F("version") + 1, updated_at=timezone.now()):
        current = Endpoint.objects.filter(pk=endpoint.pk).first()
        raise StaleEdit(
            f"The endpoint {endpoint.name} was changed by someone else since you opened it; reload it.",
            current=current,
        )
    key_change = ""
    if remove_key:
        key_change = "removed" if EndpointSecret.objects.filter(endpoint=endpoint).delete()[0] else ""
    elif key:
        key_change = "replaced" if EndpointSecret.objects.filter(endpoint=endpoint).exists() else "set"
        _key_store(endpoint, key)
    endpoint.refresh_from_db()
    if changed or key_change:
        details: dict[str, Any] = audit.changes(_audited(before), _audited(changed)) if changed else {}
        if key_change:
            details["api_key"] = key_change
        audit.record(user, Action.ENDPOINT_CHANGED, endpoint, **details)
    return endpoint


@transaction.atomic
def endpoint_delete(*, endpoint: Endpoint, user: User | None) -> None:
    """Delete the endpoint and its key. Its calls and cached replies stay (they name the model they asked)."""
    audit.record(user, Action.ENDPOINT_DELETED, endpoint, name=endpoint.name, model=endpoint.model)
    endpoint.delete()


def endpoint_cache_clear(*, endpoint: Endpoint, user: User | None) -> int:
    """Forget the cached replies of this endpoint's base URL and model in its project (the model behind the
    name changed): the next identical request asks the server again. The number of replies forgotten."""
    with transaction.atomic():
        deleted, _ = CachedReply.objects.filter(
            project_id=endpoint.project_id, base_url=endpoint.base_url, model=endpoint.model
        ).delete()
        audit.record(user, Action.ENDPOINT_CACHE_CLEARED, endpoint, replies=deleted)
    return deleted


@dataclass(frozen=True)
class Rotation:
    rotated: int
    unreadable: list[int]  # endpoint ids whose key no configured key opens


def endpoint_keys_rotate() -> Rotation:
    """Re-encrypt every stored API key under the first of ENCRYPTION_KEYS, so older keys may be dropped."""
    rotated, unreadable = 0, []
    for secret in EndpointSecret.objects.order_by("pk").iterator():
        try:
            token = secret_rotate(token=secret.token)
        except SecretUnreadable:
            unreadable.append(secret.endpoint_id)
            continue
        EndpointSecret.objects.filter(pk=secret.pk, token=secret.token).update(token=token)
        rotated += 1
    return Rotation(rotated, unreadable)


def completion_words(completion: Completion) -> str:
    """A completion in a sentence, as the test button and the command show it."""
    if not completion.ok:
        return f"{ErrorKind(completion.error_kind).label}: {completion.error}"
    tokens = f"{completion.tokens_in if completion.tokens_in is not None else '?'} in, " + (
        f"{completion.tokens_out if completion.tokens_out is not None else '?'} out"
    )
    return f"Answered in {completion.latency_ms} ms ({tokens} tokens): {completion.text}"
