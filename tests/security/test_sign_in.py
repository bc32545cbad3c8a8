"""One failure count and one lockout for every way of signing in, keyed on who really signs in, from where.

Each test uses addresses of its own: counts live in the shared cache for the whole run.
"""

from __future__ import annotations

import inspect
import itertools

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import ApiToken
from tests import factories
from tests.factories import PASSWORD

_addresses = (f"198.51.100.{n}" for n in itertools.count(1))


@pytest.fixture
def address() -> str:
    return next(_addresses)


@pytest.fixture
def victim(db, settings):
    settings.LOGIN_MAX_FAILURES = 3
    return factories.user("victim2")


def form(client, username: str, password: str, address: str, **headers):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address, **headers)


def token(username: str, password: str, address: str, **headers):
    return APIClient().post(
        "/api/auth/token/", {"username": username, "password": password}, format="json", REMOTE_ADDR=address, **headers
    )


# 2. Every way of signing in shares the count


def test_a_name_locked_out_of_the_sign_in_form_gets_no_token_with_its_password(client, victim, address):
    for _ in range(3):
        form(client, "victim2", "wrong", address)

    response = token("victim2", PASSWORD, address)

    assert response.status_code == 429 and "Too many failed attempts" in response.json()["detail"]
    assert not ApiToken.objects.filter(user=victim).exists()


def test_wrong_passwords_on_the_token_endpoint_lock_the_sign_in_form_too(client, victim, address):
    for _ in range(2):
        assert token("victim2", "wrong", address).status_code == 400
    assert token("victim2", "wrong", address).status_code == 429

    response = form(client, "victim2", PASSWORD, address)

    assert response.status_code == 429 and "_auth_user_id" not in client.session
    assert "Too many failed attempts" in response.content.decode()


def test_the_token_endpoint_is_throttled_per_client_address(db, monkeypatch, address):
    from rest_framework.throttling import ScopedRateThrottle

    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {**ScopedRateThrottle.THROTTLE_RATES, "auth": "3/min"})
    statuses = [token(f"nobody{n}", "wrong", address).status_code for n in range(4)]

    assert statuses == [400, 400, 400, 429]  # four names: the lockout per name would not have stopped this
    assert token("nobody9", "wrong", next(_addresses)).status_code == 400  # another address is not affected


def test_a_right_password_on_the_token_endpoint_still_works_for_a_name_not_locked(victim, address):
    token("victim2", "wrong", address)

    response = token("victim2", PASSWORD, address)

    assert response.status_code == 200 and len(response.json()["token"]) == 40


# 3. The key is the name Django authenticates and the client's own address


@pytest.mark.parametrize("spelling", ["ｖｉｃｔｉｍ２", " victim2 ", "victim2"])
def test_a_full_width_or_padded_spelling_of_a_locked_name_is_locked_too(client, victim, address, spelling):
    for _ in range(3):
        form(client, "victim2", "wrong", address)

    signed_in = form(client, spelling, PASSWORD, address)
    obtained = token(spelling, PASSWORD, address)

    assert signed_in.status_code == 429 and "_auth_user_id" not in client.session
    assert obtained.status_code == 429


def test_a_full_width_spelling_counts_towards_the_lock_of_the_name(client, victim, address):
    for _ in range(3):
        form(client, "ｖｉｃｔｉｍ２", "wrong", address)

    assert form(client, "victim2", PASSWORD, address).status_code == 429


def test_behind_the_proxy_five_guesses_from_one_client_do_not_lock_the_name_for_everyone(client, victim, settings):
    settings.TRUSTED_PROXY_COUNT = 1  # the shipped nginx: REMOTE_ADDR is the proxy, the client is in the header
    attacker, colleague = next(_addresses), next(_addresses)
    for _ in range(3):
        form(client, "victim2", "wrong", "127.0.0.1", HTTP_X_FORWARDED_FOR=attacker)

    assert form(client, "victim2", PASSWORD, "127.0.0.1", HTTP_X_FORWARDED_FOR=attacker).status_code == 429
    assert form(client, "victim2", PASSWORD, "127.0.0.1", HTTP_X_FORWARDED_FOR=colleague).status_code == 302


def test_behind_the_proxy_a_client_cannot_escape_its_count_by_sending_its_own_forwarded_for(client, victim, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    attacker = next(_addresses)
    for n in range(3):  # nginx appends the address it saw; whatever the client wrote stays on the left
        form(client, "victim2", "wrong", "127.0.0.1", HTTP_X_FORWARDED_FOR=f"10.9.9.{n}, {attacker}")

    response = form(client, "victim2", PASSWORD, "127.0.0.1", HTTP_X_FORWARDED_FOR=f"10.9.9.77, {attacker}")

    assert response.status_code == 429


def test_without_a_proxy_a_forwarded_for_header_is_not_believed(client, victim, settings, address):
    settings.TRUSTED_PROXY_COUNT = 0
    for n in range(3):
        form(client, "victim2", "wrong", address, HTTP_X_FORWARDED_FOR=f"203.0.113.{n}")

    assert form(client, "victim2", PASSWORD, address, HTTP_X_FORWARDED_FOR="203.0.113.99").status_code == 429


def test_a_locked_sign_in_form_keeps_what_was_typed(client, victim, address):
    for _ in range(3):
        form(client, "victim2", "wrong", address)

    page = form(client, "victim2", PASSWORD, address).content.decode()

    assert 'value="victim2"' in page and PASSWORD not in page


def test_there_is_one_lockout_mechanism():
    """The hand-written lockout is gone: axes' backend guards authenticate() for every caller."""
    from django.conf import settings

    assert settings.AUTHENTICATION_BACKENDS[0] == "accounts.signin.LockoutBackend"
    assert "axes.middleware.AxesMiddleware" in settings.MIDDLEWARE
    from accounts.views import auth  # the sign-in pages: Django's views, no counter of their own

    source = inspect.getsource(auth)
    assert "cache" not in source and "LOGIN_MAX_FAILURES" not in source
