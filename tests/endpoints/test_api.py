"""The model endpoints REST API: the same services as the pages, in the OpenAPI schema."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from drf_spectacular.generators import SchemaGenerator

from endpoints.models import Endpoint, EndpointSecret, ModelCall
from tests.conftest import api_as
from tests.model_stub import StubReply

KEY = "sk-test-0123456789"


def test_a_coordinator_adds_changes_tests_and_deletes_an_endpoint(project, coordinator, model_stub):
    api = api_as(coordinator)
    base = f"/api/projects/{project.slug}/model-endpoints/"

    created = api.post(
        base,
        {"name": "vllm", "base_url": model_stub.base_url, "model": "m", "mode": "completion", "stop": ["\n\n"],
         "price_input": "0.10", "price_output": "0.40", "api_key": KEY},
        format="json",
    )  # fmt: skip
    endpoint_id = created.data["id"]
    changed = api.patch(f"{base}{endpoint_id}/", {"temperature": 0.3, "version": 1}, format="json")
    model_stub.script(StubReply(text="Doha", tokens_in=10_000, tokens_out=2_000))
    tested = api.post(f"{base}{endpoint_id}/test/")
    listed = api.get(base)
    calls = api.get(f"/api/projects/{project.slug}/model-calls/?endpoint={endpoint_id}")
    deleted = api.delete(f"{base}{endpoint_id}/")

    assert created.status_code == 201
    assert created.data["key_set"] is True and "api_key" not in created.data
    assert (created.data["mode"], created.data["stop"], created.data["price_input"]) == (
        "completion",
        ["\n\n"],
        "0.1000",
    )
    assert changed.status_code == 200 and (changed.data["temperature"], changed.data["version"]) == (0.3, 2)
    assert tested.status_code == 200
    assert {k: tested.data[k] for k in ("ok", "text", "tokens_in", "tokens_out", "cached")} == {
        "ok": True, "text": "Doha", "tokens_in": 10_000, "tokens_out": 2_000, "cached": False,
    }  # fmt: skip
    assert tested.data["cost"] == "0.00180000"  # 10,000 × 0.10 / 1M + 2,000 × 0.40 / 1M
    assert listed.data["count"] == 1 and listed.data["results"][0]["call_count"] == 1
    assert calls.data["results"][0]["purpose"] == "test" and calls.data["results"][0]["latency_ms"] >= 0
    assert deleted.status_code == 204 and not Endpoint.objects.exists()
    assert ModelCall.objects.count() == 1  # the call stays


def test_bad_input_names_the_field(project, coordinator, model_stub, settings):
    api = api_as(coordinator)
    base = f"/api/projects/{project.slug}/model-endpoints/"

    cases = {
        "base_url": {"name": "a", "base_url": "http://10.0.0.1/v1", "model": "m"},
        "temperature": {"name": "b", "base_url": model_stub.base_url, "model": "m", "temperature": 7},
        "price_output": {"name": "c", "base_url": model_stub.base_url, "model": "m", "price_input": "1"},
        "stop": {"name": "d", "base_url": model_stub.base_url, "model": "m", "stop": ["a", "b", "c", "d", "e"]},
        "api_key": {"name": "e", "base_url": model_stub.base_url, "model": "m", "api_key": "line\nbreak"},
        "mode": {"name": "f", "base_url": model_stub.base_url, "model": "m", "mode": "embeddings"},
    }
    for field, body in cases.items():
        response = api.post(base, body, format="json")

        assert response.status_code == 400, field
        assert response.data["field"] == field, (field, response.data)
    assert not Endpoint.objects.exists()


def test_names_are_unique_in_a_project(project, coordinator, model_stub):
    api = api_as(coordinator)
    body = {"name": "same", "base_url": model_stub.base_url, "model": "m"}

    first = api.post(f"/api/projects/{project.slug}/model-endpoints/", body, format="json")
    second = api.post(f"/api/projects/{project.slug}/model-endpoints/", body, format="json")

    assert (first.status_code, second.status_code) == (201, 400)
    assert "already has an endpoint called 'same'" in second.data["detail"]


def test_a_patch_from_an_older_version_is_409_and_changes_nothing(project, coordinator, endpoint):
    api = api_as(coordinator)
    url = f"/api/projects/{project.slug}/model-endpoints/{endpoint.pk}/"
    api.patch(url, {"model": "newer", "version": 1}, format="json")

    stale = api.patch(url, {"model": "older", "version": 1}, format="json")

    assert stale.status_code == 409 and "changed by someone else" in stale.data["detail"]
    endpoint.refresh_from_db()
    assert endpoint.model == "newer"


def test_the_key_is_kept_replaced_or_removed_by_patch(project, coordinator, endpoint):
    api = api_as(coordinator)
    url = f"/api/projects/{project.slug}/model-endpoints/{endpoint.pk}/"
    token = EndpointSecret.objects.get(endpoint=endpoint).token

    kept = api.patch(url, {"concurrency": 2, "api_key": ""}, format="json")
    assert EndpointSecret.objects.get(endpoint=endpoint).token == token
    replaced = api.patch(url, {"api_key": "sk-other"}, format="json")
    assert EndpointSecret.objects.get(endpoint=endpoint).token != token
    removed = api.patch(url, {"remove_key": True}, format="json")

    assert (kept.data["key_set"], replaced.data["key_set"], removed.data["key_set"]) == (True, True, False)


def test_the_routes_are_in_the_openapi_schema_and_the_key_is_write_only():
    schema = SchemaGenerator().get_schema(request=None, public=True)

    paths = schema["paths"]
    assert {"get", "post"} <= set(paths["/api/projects/{slug}/model-endpoints/"])
    assert {"get", "patch", "delete"} <= set(paths["/api/projects/{slug}/model-endpoints/{endpoint_id}/"])
    assert "post" in paths["/api/projects/{slug}/model-endpoints/{endpoint_id}/test/"]
    assert "get" in paths["/api/projects/{slug}/model-calls/"]
    components = schema["components"]["schemas"]
    assert "api_key" not in components["EndpointOutput"]["properties"]
    assert components["EndpointInput"]["properties"]["api_key"]["writeOnly"] is True


def test_the_command_adds_lists_and_tests_an_endpoint_reading_the_key_from_the_environment(
    project, model_stub, monkeypatch
):
    monkeypatch.setenv("LAB_KEY", KEY)
    out = StringIO()

    call_command(
        "endpoint", "add", project.slug, "--name", "lab", "--base-url", model_stub.base_url, "--model", "m",
        "--temperature", "0.3", "--stop", "</a>", "--api-key-env", "LAB_KEY", stdout=out,
    )  # fmt: skip
    model_stub.script(StubReply(text="Servus", tokens_in=4, tokens_out=1))
    call_command("endpoint", "test", project.slug, "lab", stdout=out)
    call_command("endpoint", "list", project.slug, stdout=out)

    text = out.getvalue()
    assert "endpoint lab added (key set)" in text
    assert "Answered in" in text and "(4 in, 1 out tokens): Servus" in text
    assert "lab\tm\tchat\t" in text and "key set\t1 calls (0 failed)" in text
    assert model_stub.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in text
    endpoint = Endpoint.objects.get(name="lab")
    assert (endpoint.temperature, endpoint.stop) == (0.3, ["</a>"])


def test_the_command_fails_loudly_with_the_reason(project, model_stub, settings):
    settings.MODEL_ALLOWED_HOSTS = ["localhost"]

    with pytest.raises(CommandError, match=r"127\.0\.0\.1 .* is not allowed"):
        call_command("endpoint", "add", project.slug, "--name", "x", "--base-url", model_stub.base_url, "--model", "m")
    settings.MODEL_ALLOWED_HOSTS = ["127.0.0.1"]
    call_command("endpoint", "add", project.slug, "--name", "closed", "--base-url", "http://127.0.0.1:9/v1",
                 "--model", "m", stdout=StringIO())  # fmt: skip
    with pytest.raises(CommandError, match="Could not connect"):
        call_command("endpoint", "test", project.slug, "closed")
    with pytest.raises(CommandError, match="no endpoint called 'nope'"):
        call_command("endpoint", "test", project.slug, "nope")
