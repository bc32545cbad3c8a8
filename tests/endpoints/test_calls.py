"""Calling a model through `endpoint_complete(_many)`: the real `openai` client against the stub server."""

from __future__ import annotations

import gzip
import json
import socket
from decimal import Decimal

import pytest

from common.jobs import JobLost
from endpoints import client as model_client
from endpoints import services
from endpoints.models import CachedReply, ModelCall
from endpoints.services import ModelRequest
from tests.endpoints.conftest import make_endpoint
from tests.model_stub import StubReply

KEY = "sk-test-0123456789"


def test_a_chat_call_answers_with_text_tokens_and_latency_and_is_recorded(endpoint, model_stub, coordinator):
    model_stub.script(
        StubReply(text="𨋢 即係 lift，𠵱家好多大廈都有", tokens_in=23, tokens_out=9, finish_reason="stop")
    )

    result = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="𨋢係乜嘢？", user=coordinator)

    assert result.ok and not result.cached
    assert (result.text, result.tokens_in, result.tokens_out, result.attempts) == (
        "𨋢 即係 lift，𠵱家好多大廈都有",
        23,
        9,
        1,
    )
    sent = model_stub.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.json["model"] == "qwen2.5-7b-instruct"
    assert sent.messages == [{"role": "user", "content": "𨋢係乜嘢？"}]
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    call = ModelCall.objects.get(pk=result.call_id)
    assert (call.status, call.purpose, call.tokens_in, call.tokens_out, call.attempts) == ("ok", "generation", 23, 9, 1)
    assert call.latency_ms == result.latency_ms and call.latency_ms >= 0
    assert (call.endpoint_name, call.model, call.created_by) == ("stub chat", "qwen2.5-7b-instruct", coordinator)


def test_a_raw_completion_endpoint_sends_the_prompt_with_its_decoding_settings(project, coordinator, model_stub):
    raw = make_endpoint(
        project,
        coordinator,
        model_stub,
        name="raw",
        mode="completion",
        temperature=0.3,
        top_p=0.95,
        max_tokens=128,
        seed=7,
        stop=["</Answer>", "\n\n"],
    )
    model_stub.script(StubReply(text="<Answer>Minga</Answer>", finish_reason="length"))

    result = services.endpoint_complete(endpoint=raw, purpose="generation", prompt="Wo is de Frauenkirch?")

    assert (result.ok, result.text, result.finish_reason) == (True, "<Answer>Minga</Answer>", "length")
    sent = model_stub.requests[0]
    assert sent.path == "/v1/completions"
    assert sent.json["prompt"] == "Wo is de Frauenkirch?"
    assert {name: sent.json[name] for name in ("temperature", "top_p", "max_tokens", "seed", "stop")} == {
        "temperature": 0.3,
        "top_p": 0.95,
        "max_tokens": 128,
        "seed": 7,
        "stop": ["</Answer>", "\n\n"],
    }
    assert sent.headers["authorization"] == "Bearer no-key"  # no key stored: a placeholder, never another key


def test_the_same_request_again_is_answered_from_the_cache_and_recorded_as_a_hit(endpoint, model_stub):
    model_stub.script(StubReply(text="Doha", tokens_in=5, tokens_out=1))
    first = services.endpoint_complete(endpoint=endpoint, purpose="judge", prompt="Capital of Qatar?")

    again = services.endpoint_complete(endpoint=endpoint, purpose="judge", prompt="Capital of Qatar?")

    assert len(model_stub.requests) == 1
    assert (again.ok, again.cached, again.text, again.attempts, again.latency_ms) == (True, True, "Doha", 0, 0)
    assert again.request_hash == first.request_hash
    assert ModelCall.objects.filter(cached=True).count() == 1
    assert ModelCall.objects.count() == 2


def test_a_variant_or_other_decoding_settings_are_another_request(endpoint, model_stub):
    services.endpoint_complete(endpoint=endpoint, purpose="judge", prompt="Q")

    services.endpoint_complete(endpoint=endpoint, purpose="judge", prompt="Q", variant=1)
    services.endpoint_complete(endpoint=endpoint, purpose="judge", prompt="Q", decoding={"temperature": 0.1})
    services.endpoint_complete(endpoint=endpoint, purpose="judge", prompt="Q", decoding={"temperature": 0.1})

    assert len(model_stub.requests) == 3
    assert model_stub.requests[2].json["temperature"] == 0.1
    assert CachedReply.objects.count() == 3


def test_429_is_retried_after_the_wait_the_server_asks_for(endpoint, model_stub):
    model_stub.script(StubReply.rate_limited(retry_after=1), "after the wait")

    result = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")

    assert (result.ok, result.text, result.attempts) == (True, "after the wait", 2)
    assert result.latency_ms >= 1000  # Retry-After: 1 was honoured (the backoff alone waits ~10 ms)


def test_5xx_dropped_connections_and_garbage_are_retried_with_backoff(endpoint, model_stub):
    model_stub.script(StubReply.server_error(502), StubReply.dropped(), StubReply.garbage(), "at last")

    result = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")

    assert (result.ok, result.text, result.attempts) == (True, "at last", 4)
    assert len(model_stub.requests) == 4


def test_a_server_that_keeps_failing_is_a_recorded_failure_not_an_exception(endpoint, model_stub, settings):
    settings.MODEL_MAX_ATTEMPTS = 3
    model_stub.script(*[StubReply.server_error(503, "overloaded")] * 3, "never asked")

    result = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")

    assert (result.ok, result.error_kind, result.attempts) == (False, "server", 3)
    assert "503" in result.error and "overloaded" in result.error and "after 3 attempts" in result.error
    call = ModelCall.objects.get(pk=result.call_id)
    assert (call.status, call.error_kind, call.attempts) == ("failed", "server", 3)
    assert not CachedReply.objects.exists()


def test_garbage_is_recorded_with_the_start_of_its_body(endpoint, model_stub, settings):
    settings.MODEL_MAX_ATTEMPTS = 1
    model_stub.script(
        StubReply.garbage(b"<html><body>Bad Gateway from the proxy</body></html>"), StubReply.no_choices()
    )

    not_json = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q1")
    no_choices = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q2")

    assert (not_json.error_kind, no_choices.error_kind) == ("garbage", "garbage")
    assert "not JSON" in not_json.error and "<html><body>Bad Gateway from the proxy" in not_json.error
    assert "no choices" in no_choices.error and '"choices": []' in no_choices.error


def test_a_slow_server_times_out_and_the_timeout_is_recorded(project, coordinator, model_stub, settings):
    settings.MODEL_MAX_ATTEMPTS = 2
    slow = make_endpoint(project, coordinator, model_stub, name="slow", timeout_seconds=1)
    model_stub.script(StubReply.slow(2.5), StubReply.slow(2.5))

    result = services.endpoint_complete(endpoint=slow, purpose="generation", prompt="Q")

    assert (result.ok, result.error_kind, result.attempts) == (False, "timeout", 2)
    assert "No answer within 1 s" in result.error


def test_a_refused_key_is_not_retried_and_the_key_never_appears_in_the_record(endpoint, model_stub, caplog):
    model_stub.script(StubReply.error(401, f"Incorrect API key provided: {KEY}."))

    result = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")

    assert (result.ok, result.error_kind, result.attempts) == (False, "auth", 1)
    assert KEY not in result.error and "[the API key]" in result.error
    assert KEY not in ModelCall.objects.get(pk=result.call_id).error
    assert KEY not in caplog.text


def test_a_host_the_operator_no_longer_allows_is_refused_before_anything_is_sent(endpoint, model_stub, settings):
    settings.MODEL_ALLOWED_HOSTS = ["localhost"]

    result = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")

    assert (result.ok, result.error_kind, result.attempts) == (False, "host_refused", 1)
    assert "127.0.0.1" in result.error and "MODEL_ALLOWED_HOSTS" in result.error
    assert model_stub.requests == []


def test_a_redirect_to_a_host_not_allowed_is_refused_and_one_to_an_allowed_host_followed(endpoint, model_stub):
    model_stub.script(StubReply.redirect("http://169.254.169.254/latest/meta-data/"))
    refused = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q1")

    model_stub.script(StubReply.redirect(f"{model_stub.base_url}/chat/completions?moved=1"), "moved here")
    followed = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q2")

    assert (refused.ok, refused.error_kind) == (False, "host_refused")
    assert "169.254.169.254" in refused.error
    assert (followed.ok, followed.text) == (True, "moved here")
    assert model_stub.requests[-1].path == "/v1/chat/completions?moved=1"
    assert model_stub.requests[-1].messages == [{"role": "user", "content": "Q2"}]  # 307 keeps the body


def test_the_connection_goes_to_the_address_that_was_checked(project, coordinator, model_stub, settings, monkeypatch):
    """A name resolved once per request: a second, different answer (DNS rebinding) is never asked for."""
    port = int(model_stub.url.rsplit(":", 1)[1])
    settings.MODEL_ALLOWED_HOSTS = [f"model.test:{port}"]
    real = socket.getaddrinfo
    lookups: list[str] = []

    def resolve(host, *args, **kwargs):
        if host == "model.test":
            lookups.append(host)
            address = "127.0.0.1" if len(lookups) == 1 else "169.254.169.254"
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    named = make_endpoint(project, coordinator, model_stub, name="named", base_url=f"http://model.test:{port}/v1")
    lookups.clear()

    result = services.endpoint_complete(endpoint=named, purpose="generation", prompt="Q")

    assert result.ok, result.error
    assert lookups == ["model.test"]
    assert model_stub.requests[0].headers["host"] == f"model.test:{port}"


def test_complete_many_keeps_the_concurrency_limit_and_the_order(project, coordinator, model_stub):
    limited = make_endpoint(project, coordinator, model_stub, name="three at once", concurrency=3)
    model_stub.answer(lambda request: StubReply.slow(0.3, request.prompt_text.upper()))
    prompts = [f"frage {n}" for n in range(12)]
    seen: list[int] = []

    results = services.endpoint_complete_many(
        endpoint=limited,
        purpose="generation",
        requests=[ModelRequest(prompt=p) for p in prompts],
        on_result=lambda index, result: seen.append(index),
    )

    assert [r.text for r in results] == [p.upper() for p in prompts]
    assert model_stub.max_in_flight == 3
    assert sorted(seen) == list(range(12))
    assert ModelCall.objects.filter(endpoint=limited, status="ok").count() == 12


def test_complete_many_asks_a_repeated_request_once_and_cached_ones_not_at_all(endpoint, model_stub):
    services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="known")
    model_stub.answer(lambda request: f"re: {request.prompt_text}")

    results = services.endpoint_complete_many(
        endpoint=endpoint,
        purpose="generation",
        requests=[ModelRequest(prompt=p) for p in ("a", "b", "a", "known")],
    )

    assert [r.text for r in results] == ["re: a", "re: b", "re: a", "stub reply"]
    assert [r.cached for r in results] == [False, False, True, True]
    assert sorted(request.prompt_text for request in model_stub.requests) == ["a", "b", "known"]


def test_a_job_stopped_mid_batch_keeps_what_was_paid_for_and_its_rerun_asks_only_the_rest(
    project, coordinator, model_stub
):
    batch = make_endpoint(project, coordinator, model_stub, name="batch", concurrency=2)
    model_stub.answer(lambda request: StubReply.slow(0.2, f"answer to {request.prompt_text}"))
    requests = [ModelRequest(prompt=f"item {n}") for n in range(8)]

    def lost(index, result):
        raise JobLost  # the job was taken over: this run stops

    with pytest.raises(JobLost):
        services.endpoint_complete_many(endpoint=batch, purpose="generation", requests=requests, on_result=lost)
    sent_before = len(model_stub.requests)
    assert 1 <= sent_before < 8
    assert ModelCall.objects.count() == sent_before  # every reply that came back is recorded and cached
    assert CachedReply.objects.count() == sent_before

    results = services.endpoint_complete_many(endpoint=batch, purpose="generation", requests=requests)

    assert [r.text for r in results] == [f"answer to item {n}" for n in range(8)]
    assert len(model_stub.requests) == 8  # each request sent once over both runs
    assert sum(r.cached for r in results) == sent_before


def test_costs_follow_the_operators_prices_and_a_cache_hit_costs_nothing(project, coordinator, model_stub):
    priced = make_endpoint(
        project, coordinator, model_stub, name="priced", price_input=Decimal("0.5"), price_output=Decimal("1.5")
    )
    model_stub.script(StubReply(tokens_in=1000, tokens_out=2000))

    paid = services.endpoint_complete(endpoint=priced, purpose="generation", prompt="Q")
    free = services.endpoint_complete(endpoint=priced, purpose="generation", prompt="Q")

    assert paid.cost == Decimal("0.0035")  # 1000 × 0.5 / 1M + 2000 × 1.5 / 1M
    assert free.cost == Decimal(0)


def test_no_cost_without_prices_or_without_the_servers_token_counts(endpoint, model_stub):
    model_stub.script(StubReply(tokens_in=None, tokens_out=None))

    result = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")

    assert result.ok and (result.tokens_in, result.tokens_out, result.cost) == (None, None, None)


def test_nothing_of_the_processs_openai_environment_is_sent(project, coordinator, model_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-environment-secret")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-environment")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-environment")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://169.254.169.254/v1")
    keyless = make_endpoint(project, coordinator, model_stub, name="keyless")

    result = services.endpoint_complete(endpoint=keyless, purpose="generation", prompt="Q")

    assert result.ok, result.error
    headers = model_stub.requests[0].headers
    assert headers["authorization"] == "Bearer no-key"
    assert "openai-organization" not in headers and "openai-project" not in headers


def test_a_reply_longer_than_the_limit_is_refused(endpoint, model_stub, settings):
    settings.MODEL_REPLY_MAX_BYTES = 2000
    model_stub.script(StubReply(text="x" * 5000))

    result = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")

    assert (result.ok, result.error_kind) == (False, "garbage")
    assert "longer than 2,000 bytes" in result.error


def test_a_compressed_reply_is_not_unpacked(endpoint, model_stub, settings):
    settings.MODEL_MAX_ATTEMPTS = 1
    body = gzip.compress(json.dumps({"choices": [{"message": {"content": "z" * 100_000}}]}).encode())
    model_stub.script(StubReply(body=body, headers={"Content-Encoding": "gzip"}))

    result = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")

    assert (result.ok, result.error_kind) == (False, "garbage")
    assert model_stub.requests[0].headers["accept-encoding"] == "identity"


def test_chat_messages_are_sent_as_given_and_bad_input_is_refused_before_sending(
    project, coordinator, endpoint, model_stub
):
    messages = [
        {"role": "system", "content": "Respond with a single letter."},
        {"role": "user", "content": "ما هي عاصمة قطر؟ A) الدوحة B) الريان C) الوكرة"},
    ]
    services.endpoint_complete(endpoint=endpoint, purpose="generation", messages=messages)
    raw = make_endpoint(project, coordinator, model_stub, name="raw", mode="completion")

    with pytest.raises(services.InvalidInput, match="raw prompt"):
        services.endpoint_complete(endpoint=raw, purpose="generation", messages=messages)
    with pytest.raises(services.InvalidInput, match="role"):
        services.endpoint_complete(endpoint=endpoint, purpose="generation", messages=[{"role": "tool", "content": "x"}])
    with pytest.raises(services.InvalidInput, match="not both"):
        services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q", messages=messages)
    with pytest.raises(services.InvalidInput, match="decoding"):
        services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q", decoding={"logit_bias": 1})

    assert model_stub.requests[0].messages == messages
    assert len(model_stub.requests) == 1


def test_a_stored_key_no_configured_key_opens_is_a_recorded_failure(endpoint, model_stub, settings):
    settings.ENCRYPTION_KEYS = ["YW5vdGhlci1zZXJ2ZXJzLWtleS1ub3QtdGhpcy1vbmU="]

    result = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")

    assert (result.ok, result.error_kind, result.attempts) == (False, "key_unreadable", 0)
    assert "set it again" in result.error
    assert model_stub.requests == []


def test_retry_after_reads_seconds_milliseconds_and_http_dates():
    import httpx2

    def response(**headers):
        return httpx2.Response(429, headers=headers)

    assert model_client.retry_after(response(**{"Retry-After": "3"})) == 3.0
    assert model_client.retry_after(response(**{"retry-after-ms": "250"})) == 0.25
    assert model_client.retry_after(response(**{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0  # past
    assert model_client.retry_after(response(**{"Retry-After": "soon"})) is None
    assert model_client.retry_after(response()) is None


def test_a_server_asking_to_wait_longer_than_allowed_ends_the_call(endpoint, model_stub, settings):
    settings.MODEL_RETRY_MAX_SECONDS = 5
    model_stub.script(StubReply.rate_limited(retry_after=3600))

    result = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")

    assert (result.ok, result.error_kind, result.attempts) == (False, "rate_limited", 1)
    assert "3600 s" in result.error


def test_backoff_doubles_with_full_jitter_up_to_the_cap(settings):
    settings.MODEL_RETRY_BASE_SECONDS = 1.0
    settings.MODEL_RETRY_MAX_SECONDS = 6.0

    waits = {attempt: [model_client.backoff(attempt, None) for _ in range(200)] for attempt in (1, 2, 3, 4, 5)}

    for attempt, ceiling in ((1, 1), (2, 2), (3, 4), (4, 6), (5, 6)):
        assert all(0 <= wait <= ceiling for wait in waits[attempt])
        assert max(waits[attempt]) > ceiling * 0.8  # spread over the range, not fixed
    assert model_client.backoff(1, 2.5) == 2.5


def test_a_reply_holding_nul_characters_is_a_recorded_failure_on_every_engine(endpoint, model_stub, settings):
    settings.MODEL_MAX_ATTEMPTS = 1
    model_stub.script(StubReply(text="Minga\x00\x00"), StubReply.garbage(b"\x00\x01binary\xff"))

    nul_text = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q1")
    nul_body = services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q2")

    assert (nul_text.error_kind, nul_body.error_kind) == ("garbage", "garbage")
    assert "NUL" in nul_text.error
    assert "\x00" not in nul_body.error and "binary" in nul_body.error
    assert ModelCall.objects.filter(status="failed").count() == 2
