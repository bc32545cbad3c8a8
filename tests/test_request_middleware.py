"""What every request goes through: the Content-Security-Policy headers, django-csp's middleware as shipped."""

from __future__ import annotations

from csp.decorators import csp_exempt, csp_update
from csp.middleware import CSPMiddleware
from csp.utils import build_policy
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory, override_settings
from django.urls import reverse


def test_pages_and_api_answers_carry_the_policy_django_csp_builds(client, api_client, annotator):
    client.force_login(annotator)
    api_client.force_authenticate(annotator)

    page = client.get(reverse("home"))
    api = api_client.get("/api/projects/")

    assert page.status_code == api.status_code == 200
    assert page.headers["Content-Security-Policy"] == build_policy()
    assert api.headers["Content-Security-Policy"] == build_policy()
    assert "Content-Security-Policy-Report-Only" not in page.headers


def _respond(response: HttpResponse) -> HttpResponse:
    result = CSPMiddleware(lambda request: response)(RequestFactory().get("/"))
    assert isinstance(result, HttpResponse)
    return result


def test_a_view_with_a_policy_of_its_own_or_none_is_served_as_django_csp_serves_it():
    @csp_update({"img-src": ["https://example.org"]})
    def updated(request: HttpRequest) -> HttpResponse:
        return HttpResponse("x")

    @csp_exempt()
    def exempt(request: HttpRequest) -> HttpResponse:
        return HttpResponse("x")

    request = RequestFactory().get("/")
    assert _respond(updated(request))["Content-Security-Policy"] == build_policy(
        update={"img-src": ["https://example.org"]}
    )
    assert "Content-Security-Policy" not in _respond(exempt(request))
    preset = HttpResponse("x")
    preset["Content-Security-Policy"] = "default-src 'none'"
    assert _respond(preset)["Content-Security-Policy"] == "default-src 'none'"


def test_the_policy_follows_the_settings():
    with override_settings(
        CONTENT_SECURITY_POLICY={"DIRECTIVES": {"default-src": ["'none'"]}},
        CONTENT_SECURITY_POLICY_REPORT_ONLY={"DIRECTIVES": {"default-src": ["'self'"]}},
    ):
        response = _respond(HttpResponse("x"))
        assert response["Content-Security-Policy"] == "default-src 'none'"
        assert response["Content-Security-Policy-Report-Only"] == "default-src 'self'"
    assert _respond(HttpResponse("x"))["Content-Security-Policy"] == build_policy()
