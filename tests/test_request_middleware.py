"""What every request goes through: the Content-Security-Policy headers (common/csp.py) and the check of a reused
PostgreSQL connection (common/connections.py)."""

from __future__ import annotations

import select
import time

import psycopg
import pytest
from csp.decorators import csp_exempt, csp_update
from csp.utils import build_policy
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory, override_settings
from django.urls import get_resolver, reverse
from rest_framework import serializers

from common.connections import ConnectionCheckMiddleware, connection_untouched
from common.csp import CSPMiddleware

OUR_APPS = {"annotation", "review", "exports", "validation", "multichoice", "audit", "archive", "common"}


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
    return CSPMiddleware(lambda request: response)(RequestFactory().get("/"))


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


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


@pytest.mark.postgresql(reason="the check asks a psycopg connection's socket; SQLite has none")
@pytest.mark.django_db(transaction=True)
def test_a_quiet_connection_skips_the_select_1_and_a_terminated_one_is_replaced_before_the_request_uses_it():
    pid = _backend_pid()
    seen: list[bool] = []

    def view(request: HttpRequest) -> HttpResponse:
        seen.append(connection.health_check_done)
        return HttpResponse(str(_backend_pid()))

    middleware = ConnectionCheckMiddleware(view)
    connection.health_check_done = False  # what Django's request_started does to a reused connection
    assert middleware(RequestFactory().get("/")).content == str(pid).encode()
    assert seen == [True]  # nothing on the socket: no SELECT 1

    settings_dict = connection.settings_dict
    with psycopg.connect(
        dbname=settings_dict["NAME"],
        user=settings_dict["USER"],
        password=settings_dict["PASSWORD"],
        host=settings_dict["HOST"],
        port=settings_dict["PORT"] or None,
        autocommit=True,
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", (pid,))
    poller = select.poll()  # the server's goodbye reaches the socket shortly after
    poller.register(connection.connection.pgconn.socket, select.POLLIN)
    deadline = time.monotonic() + 5
    while not poller.poll(50) and time.monotonic() < deadline:
        pass
    assert not connection_untouched(connection.connection)

    connection.health_check_done = False
    answer = middleware(RequestFactory().get("/"))

    assert seen == [True, False]  # Django's SELECT 1 ran, failed, and the connection was replaced
    assert answer.content != str(pid).encode()


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


def test_no_serializer_field_of_ours_has_a_mutable_default():
    """`common.api.validated` shares a class's fields between requests: a list or dict default would be shared too."""
    assert get_resolver().url_patterns  # imports every API module, and with them their serializers
    ours = [cls for cls in _subclasses(serializers.Serializer) if cls.__module__.split(".")[0] in OUR_APPS]
    assert ours
    for cls in ours:
        for name, field in cls._declared_fields.items():
            assert not isinstance(field.default, list | dict | set), f"{cls.__name__}.{name}: use default=list/dict"
