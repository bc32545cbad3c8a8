"""Brakes around passwords: reset e-mails per address and per client, guesses of the old password per person;
through the API and the pages alike (DRF throttles, accounts/throttles.py)."""

from __future__ import annotations

from django.core import mail
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from tests import factories
from tests.conftest import api_as

NEW_PASSWORD = "a-long-Own-password-42"


def test_fifteen_reset_requests_for_one_address_send_three_emails_through_the_api(annotator):
    client = APIClient()

    statuses = [
        client.post("/api/auth/password-reset/", {"email": annotator.email}, format="json").status_code
        for _ in range(15)
    ]

    assert statuses[:3] == [202, 202, 202]
    assert set(statuses[3:]) == {429}
    assert len(mail.outbox) == 3


def test_one_address_is_braked_whichever_client_asks(annotator):
    statuses = [
        APIClient(REMOTE_ADDR=f"203.0.113.{number}")
        .post("/api/auth/password-reset/", {"email": annotator.email.upper()}, format="json")
        .status_code
        for number in range(1, 8)
    ]

    assert statuses.count(202) == 3 and len(mail.outbox) == 3


def test_one_client_is_braked_whichever_address_it_asks_for(db):
    statuses = [
        APIClient()
        .post("/api/auth/password-reset/", {"email": f"someone{number}@example.org"}, format="json")
        .status_code
        for number in range(12)
    ]

    assert statuses[:10] == [202] * 10 and statuses[10:] == [429, 429]


def test_the_reset_page_is_braked_and_says_so(annotator):
    client = Client()

    responses = [client.post(reverse("password_reset"), {"email": annotator.email}) for _ in range(5)]

    assert [response.status_code for response in responses] == [302, 302, 302, 429, 429]
    assert "Too many attempts; try again in" in responses[-1].content.decode()
    assert len(mail.outbox) == 3


def test_guessing_the_old_password_through_the_api_is_braked(annotator):
    client = api_as(annotator)

    statuses = [
        client.post(
            "/api/auth/password/", {"old_password": f"guess-{n}", "new_password": NEW_PASSWORD}, format="json"
        ).status_code
        for n in range(25)
    ]
    right = client.post(
        "/api/auth/password/", {"old_password": factories.PASSWORD, "new_password": NEW_PASSWORD}, format="json"
    )

    assert statuses[:10] == [400] * 10 and set(statuses[10:]) == {429}
    assert right.status_code == 429
    annotator.refresh_from_db()
    assert annotator.check_password(factories.PASSWORD)


def test_guessing_the_old_password_on_the_page_is_braked(client, annotator):
    client.force_login(annotator)
    wrong = {"old_password": "guess", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}

    statuses = [client.post(reverse("password_change"), wrong).status_code for _ in range(11)]

    assert statuses[:10] == [200] * 10 and statuses[10] == 429
    assert "Too many attempts" in client.post(reverse("password_change"), wrong).content.decode()
