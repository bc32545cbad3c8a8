"""A token's last-use stamp never fails the request it rides on (the embedded SQLite's single writer)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.utils import timezone

from accounts.models import ApiToken
from accounts.tokens import api_token_create

pytestmark = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's one writer at a time")


@pytest.mark.django_db(transaction=True)
def test_a_poll_while_a_long_import_holds_the_write_lock_answers_and_leaves_the_last_use_for_a_later_request():
    user = User.objects.create_user("poller", password="x-long-enough-password-1")
    token, key = api_token_create(user=user, name="script")
    stale = timezone.now() - timedelta(hours=1)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=stale)
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    with connection.cursor() as cursor:  # wait 0.2 s for the lock here, not the 20 s a server waits
        cursor.execute("PRAGMA busy_timeout = 200")

    writer = sqlite3.connect(connection.settings_dict["NAME"], timeout=1)
    writer.execute("BEGIN IMMEDIATE")  # what a 100,000-pair import's transaction holds for seconds
    try:
        response = client.get("/api/projects/")
    finally:
        writer.rollback()
        writer.close()
    assert response.status_code == 200, response.content[:300]
    token.refresh_from_db()
    assert token.last_used_at == stale  # not written while locked

    assert client.get("/api/projects/").status_code == 200
    token.refresh_from_db()
    assert token.last_used_at > stale  # the next request writes it
