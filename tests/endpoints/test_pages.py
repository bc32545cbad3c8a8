"""The *Model endpoints* page of a project, as a coordinator uses it (forms without JavaScript, htmx on top)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from audit.models import Action, AuditEvent
from endpoints.models import CachedReply, Endpoint, EndpointSecret, ModelCall
from multichoice.services.projects import trivia_project_create
from tests.endpoints.conftest import make_endpoint
from tests.model_stub import StubReply
from tests.multichoice.conftest import CATEGORIES

KEY = "sk-test-0123456789"


def _form(model_stub, **values):
    data = {
        "name": "Qwen on the lab box",
        "base_url": model_stub.base_url,
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "mode": "chat",
        "api_key": KEY,
        "temperature": "0.3",
        "top_p": "0.95",
        "max_tokens": "256",
        "seed": "",
        "stop": "</answer>\n\\n\\n",
        "concurrency": "4",
        "timeout_seconds": "60",
        "price_input": "",
        "price_output": "",
    }
    return data | values


def test_a_coordinator_adds_an_endpoint_and_sees_its_key_as_set(client, project, coordinator, model_stub):
    client.force_login(coordinator)

    response = client.post(reverse("endpoint_new", args=[project.slug]), _form(model_stub))

    assert response.status_code == 302
    endpoint = Endpoint.objects.get(project=project)
    assert (endpoint.temperature, endpoint.top_p, endpoint.max_tokens) == (0.3, 0.95, 256)
    assert endpoint.stop == ["</answer>", "\n\n"]
    assert EndpointSecret.objects.filter(endpoint=endpoint).exists()
    page = client.get(reverse("endpoint_list", args=[project.slug])).content.decode()
    assert "Qwen on the lab box" in page and "<dt>API key</dt><dd>set</dd>" in page
    assert "“\\n\\n”" in page  # the stop sequence as it was written
    assert AuditEvent.objects.filter(action=Action.ENDPOINT_CREATED, project=project).count() == 1


def test_a_host_the_operator_did_not_allow_is_refused_with_the_host_named(client, project, coordinator, settings):
    settings.MODEL_ALLOWED_HOSTS = ["127.0.0.1"]
    client.force_login(coordinator)

    response = client.post(
        reverse("endpoint_new", args=[project.slug]),
        {"name": "metadata", "base_url": "http://169.254.169.254/latest", "model": "m", "mode": "chat",
         "concurrency": "4", "timeout_seconds": "60"},
    )  # fmt: skip

    assert response.status_code == 400
    assert "169.254.169.254 (port 80) is not allowed" in response.content.decode()
    assert "Hosts this server allows: 127.0.0.1" in response.content.decode()
    assert not Endpoint.objects.exists()


def test_editing_without_typing_the_key_keeps_it(client, project, coordinator, endpoint):
    client.force_login(coordinator)
    token = EndpointSecret.objects.get(endpoint=endpoint).token
    page = client.get(reverse("endpoint_edit", args=[project.slug, endpoint.pk])).content.decode()
    assert "A key is set." in page and KEY not in page and 'name="api_key"' in page

    response = client.post(
        reverse("endpoint_edit", args=[project.slug, endpoint.pk]),
        _form_for(endpoint) | {"concurrency": "8", "api_key": ""},
    )

    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.concurrency == 8
    assert EndpointSecret.objects.get(endpoint=endpoint).token == token
    event = AuditEvent.objects.filter(action=Action.ENDPOINT_CHANGED).get()
    assert event.details == {"before": {"concurrency": 4}, "after": {"concurrency": 8}}


def test_a_new_key_replaces_the_old_one_and_remove_drops_it(client, project, coordinator, endpoint):
    client.force_login(coordinator)
    url = reverse("endpoint_edit", args=[project.slug, endpoint.pk])

    client.post(url, _form_for(endpoint) | {"api_key": "sk-new-key"})
    endpoint.refresh_from_db()
    replaced = AuditEvent.objects.filter(action=Action.ENDPOINT_CHANGED).first()
    client.post(url, _form_for(endpoint) | {"remove_key": "on"})

    assert replaced is not None and replaced.details == {"api_key": "replaced"}
    assert not EndpointSecret.objects.filter(endpoint=endpoint).exists()
    assert "A key is not set." in client.get(url).content.decode()


def test_an_edit_from_an_older_copy_is_refused_and_says_so(client, project, coordinator, endpoint):
    client.force_login(coordinator)
    url = reverse("endpoint_edit", args=[project.slug, endpoint.pk])
    stale = _form_for(endpoint)
    client.post(url, _form_for(endpoint) | {"model": "changed-elsewhere"})

    response = client.post(url, stale | {"concurrency": "9"})

    assert response.status_code == 400
    assert "changed by someone else" in response.content.decode()
    endpoint.refresh_from_db()
    assert (endpoint.model, endpoint.concurrency) == ("changed-elsewhere", 4)


def test_the_test_button_shows_the_reply_tokens_and_latency(client, project, coordinator, endpoint, model_stub):
    client.force_login(coordinator)
    model_stub.script(StubReply(text="我係 Qwen。", tokens_in=21, tokens_out=5))
    url = reverse("endpoint_test", args=[project.slug, endpoint.pk])

    fragment = client.post(url, headers={"HX-Request": "true"})

    html = fragment.content.decode()
    assert fragment.status_code == 200 and "<html" not in html
    assert "我係 Qwen。" in html and "21 tokens in, 5 out" in html and " ms " in html
    assert model_stub.requests[0].json["max_tokens"] == 64
    assert ModelCall.objects.get().purpose == "test"


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (StubReply.error(401, "Incorrect API key provided"), "Key refused"),
        (StubReply.rate_limited(retry_after=1), "Rate limited"),
        (StubReply.garbage(), "Reply not understood"),
    ],
)
def test_the_test_button_names_the_error_without_javascript(
    client, project, coordinator, endpoint, model_stub, reply, words
):
    client.force_login(coordinator)
    model_stub.script(reply)

    page = client.post(reverse("endpoint_test", args=[project.slug, endpoint.pk]))

    html = page.content.decode()
    assert page.status_code == 200 and "<html" in html
    assert f"<strong>{words}</strong>" in html
    assert len(model_stub.requests) == 1  # a test asks once


def test_the_test_button_says_connection_refused_and_host_not_allowed(
    client, project, coordinator, model_stub, settings
):
    client.force_login(coordinator)
    closed = make_endpoint(project, coordinator, model_stub, name="closed", base_url="http://127.0.0.1:9/v1")
    refused = client.post(reverse("endpoint_test", args=[project.slug, closed.pk]), headers={"HX-Request": "true"})
    settings.MODEL_ALLOWED_HOSTS = ["localhost"]
    not_allowed = client.post(reverse("endpoint_test", args=[project.slug, closed.pk]), headers={"HX-Request": "true"})

    assert "<strong>Could not connect</strong>" in refused.content.decode()
    assert "<strong>Host not allowed</strong>" in not_allowed.content.decode()
    assert "the operator allows localhost" in not_allowed.content.decode()


def test_the_recent_calls_show_tokens_latency_attempts_and_cost(client, project, coordinator, model_stub):
    from decimal import Decimal

    from endpoints import services

    priced = make_endpoint(project, coordinator, model_stub, price_input=Decimal("0.15"), price_output=Decimal("0.6"))
    model_stub.script(StubReply.server_error(503), StubReply(tokens_in=2000, tokens_out=1000))
    services.endpoint_complete(endpoint=priced, purpose="judge", prompt="Q")
    services.endpoint_complete(endpoint=priced, purpose="judge", prompt="Q")
    client.force_login(coordinator)

    html = client.get(reverse("endpoint_list", args=[project.slug])).content.decode()

    assert html.count('data-label="Purpose">judge<') == 2
    assert "From the cache" in html and "Answered" in html
    assert 'data-label="Attempts" class="num">2<' in html
    assert 'data-label="Cost" class="num">0.0009<' in html  # 2000 × 0.15 / 1M + 1000 × 0.6 / 1M
    assert "2 (0 failed, 1 from the cache) · 2000 tokens in, 1000 out · cost 0.0009" in html


def test_the_list_page_reads_a_fixed_number_of_queries(
    client, project, coordinator, model_stub, django_assert_max_num_queries
):
    from endpoints import services

    for number in range(5):
        endpoint = make_endpoint(project, coordinator, model_stub, name=f"endpoint {number}")
        services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt=f"Q{number}")
    client.force_login(coordinator)

    with django_assert_max_num_queries(8):
        response = client.get(reverse("endpoint_list", args=[project.slug]))

    assert response.status_code == 200 and response.content.decode().count('class="card endpoint"') == 5


def test_delete_keeps_the_calls_and_forgetting_the_cache_asks_again(client, project, coordinator, endpoint, model_stub):
    from endpoints import services

    services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")
    client.force_login(coordinator)

    client.post(reverse("endpoint_cache_clear", args=[project.slug, endpoint.pk]))
    services.endpoint_complete(endpoint=endpoint, purpose="generation", prompt="Q")
    client.post(reverse("endpoint_delete", args=[project.slug, endpoint.pk]))

    assert len(model_stub.requests) == 2
    assert not Endpoint.objects.exists() and not EndpointSecret.objects.exists()
    assert ModelCall.objects.count() == 2 and set(ModelCall.objects.values_list("endpoint", flat=True)) == {None}
    assert CachedReply.objects.count() == 1
    assert {e.action for e in AuditEvent.objects.all()} >= {Action.ENDPOINT_DELETED, Action.ENDPOINT_CACHE_CLEARED}


def test_every_kind_of_project_has_the_page_in_its_settings_menu(client, coordinator, model_stub):
    project = trivia_project_create(
        name="Euskal trivia", slug="eus-trivia", source_language="eus", target_language="eng",
        categories=CATEGORIES, created_by=coordinator,
    )  # fmt: skip
    make_endpoint(project, coordinator, model_stub, name="Latxa")
    client.force_login(coordinator)

    html = client.get(reverse("endpoint_list", args=[project.slug])).content.decode()

    assert "Latxa" in html
    assert f'href="/projects/{project.slug}/model-endpoints/"' in html  # the navigation's link


def _form_for(endpoint: Endpoint) -> dict[str, str]:
    from endpoints.forms import stop_to_text

    values = {
        "name": endpoint.name,
        "base_url": endpoint.base_url,
        "model": endpoint.model,
        "mode": endpoint.mode,
        "concurrency": str(endpoint.concurrency),
        "timeout_seconds": str(endpoint.timeout_seconds),
        "stop": stop_to_text(endpoint.stop),
        "version": str(endpoint.version),
    }
    for name in ("temperature", "top_p", "max_tokens", "seed", "price_input", "price_output"):
        value = getattr(endpoint, name)
        values[name] = "" if value is None else str(value)
    return values
