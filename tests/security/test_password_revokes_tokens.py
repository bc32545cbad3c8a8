"""Choosing a new password (changing it, or resetting it by e-mail) ends every other way into the account: API
tokens are revoked and other browser sessions signed out, and the page or the API response says so."""

from __future__ import annotations

import re

from django.core import mail
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from tests import factories

NEW_PASSWORD = "a-long-Own-password-42"


def _token(username: str, password: str = factories.PASSWORD) -> str:
    response = APIClient().post("/api/auth/token/", {"username": username, "password": password}, format="json")
    assert response.status_code == 200
    return response.json()["token"]


def _works(key: str) -> bool:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get("/api/auth/tokens/").status_code == 200


def _signed_in(client: Client) -> bool:
    return client.get(reverse("home")).status_code == 200


def test_changing_the_password_on_the_page_revokes_tokens_and_other_sessions(annotator):
    key = _token("annotator")
    elsewhere = Client()
    assert elsewhere.login(username="annotator", password=factories.PASSWORD)
    here = Client()
    here.login(username="annotator", password=factories.PASSWORD)

    done = here.post(
        reverse("password_change"),
        {"old_password": factories.PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        follow=True,
    )

    assert "Every API token you had was revoked" in done.content.decode()
    assert not _works(key)
    assert not _signed_in(elsewhere)
    assert _signed_in(here)


def test_resetting_the_password_by_email_revokes_tokens_and_sessions(annotator):
    key = _token("annotator")
    elsewhere = Client()
    elsewhere.login(username="annotator", password=factories.PASSWORD)
    client = Client()
    client.post(reverse("password_reset"), {"email": annotator.email})
    link = re.search(r"https?://[^/\s]+(/accounts/password/reset/\S+/)", mail.outbox[-1].body).group(1)
    opened = client.get(link)

    done = client.post(opened["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}, follow=True)

    assert "Every API token you had was revoked" in done.content.decode()
    assert not _works(key)
    assert not _signed_in(elsewhere)


def test_changing_the_password_through_the_api_revokes_the_other_tokens_and_says_so(annotator):
    other = _token("annotator")
    used = _token("annotator")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {used}")

    response = client.post(
        "/api/auth/password/", {"old_password": factories.PASSWORD, "new_password": NEW_PASSWORD}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["tokens_revoked"] == 1
    assert "1 other API token(s) revoked" in response.json()["detail"]
    assert not _works(other)
    assert _works(used)  # the script that changed it goes on


def test_changing_the_password_through_the_api_in_a_browser_session_keeps_that_session_only(annotator):
    key = _token("annotator")
    elsewhere = Client()
    elsewhere.login(username="annotator", password=factories.PASSWORD)
    here = APIClient(enforce_csrf_checks=False)
    here.login(username="annotator", password=factories.PASSWORD)

    response = here.post(
        "/api/auth/password/", {"old_password": factories.PASSWORD, "new_password": NEW_PASSWORD}, format="json"
    )

    assert (response.status_code, response.json()["tokens_revoked"]) == (200, 1)
    assert not _works(key)
    assert not _signed_in(elsewhere)
    assert here.get("/api/auth/tokens/").status_code == 200
