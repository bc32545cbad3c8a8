"""API keys encrypted at rest (common/secrets.py), rotated by listing a new key first, and never shown."""

from __future__ import annotations

import logging

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command

from audit.models import AuditEvent
from common import secrets
from endpoints import services
from endpoints.models import EndpointSecret
from tests.conftest import api_as

KEY = "sk-test-0123456789"


def test_a_secret_is_stored_encrypted_and_decrypts_to_itself():
    token = secrets.secret_encrypt(plain=KEY)

    assert KEY not in token
    assert secrets.secret_decrypt(token=token) == KEY


def test_rotation_lists_the_new_key_first_and_re_encrypts_what_is_stored(settings, endpoint):
    old = settings.ENCRYPTION_KEYS[0]
    new = Fernet.generate_key().decode()
    settings.ENCRYPTION_KEYS = [new, old]
    stored = EndpointSecret.objects.get(endpoint=endpoint).token

    assert secrets.secret_decrypt(token=stored) == KEY  # the old key still opens it
    call_command("endpoint", "rotate-keys")
    settings.ENCRYPTION_KEYS = [new]  # the old key dropped

    rotated = EndpointSecret.objects.get(endpoint=endpoint).token
    assert rotated != stored
    assert secrets.secret_decrypt(token=rotated) == KEY
    with pytest.raises(secrets.SecretUnreadable, match="set it again"):
        secrets.secret_decrypt(token=stored)


def test_rotation_names_keys_no_configured_key_opens(settings, endpoint):
    settings.ENCRYPTION_KEYS = [Fernet.generate_key().decode()]

    rotation = services.endpoint_keys_rotate()

    assert (rotation.rotated, rotation.unreadable) == (0, [endpoint.pk])


def test_the_key_never_comes_back_out_in_the_api_the_pages_the_audit_log_or_the_logs(
    client, project, coordinator, model_stub, caplog
):
    caplog.set_level(logging.DEBUG)
    api = api_as(coordinator)
    created = api.post(
        f"/api/projects/{project.slug}/model-endpoints/",
        {"name": "hosted", "base_url": model_stub.base_url, "model": "m", "api_key": KEY},
        format="json",
    )
    endpoint_id = created.data["id"]
    api.patch(f"/api/projects/{project.slug}/model-endpoints/{endpoint_id}/", {"api_key": KEY + "-new"}, format="json")
    api.post(f"/api/projects/{project.slug}/model-endpoints/{endpoint_id}/test/")
    client.force_login(coordinator)

    shown = [
        created.content,
        api.get(f"/api/projects/{project.slug}/model-endpoints/").content,
        api.get(f"/api/projects/{project.slug}/model-calls/").content,
        client.get(f"/projects/{project.slug}/model-endpoints/").content,
        client.get(f"/projects/{project.slug}/model-endpoints/{endpoint_id}/").content,
        client.get(f"/projects/{project.slug}/audit/").content,
    ]

    assert created.status_code == 201 and created.data["key_set"] is True
    for content in shown:
        assert KEY.encode() not in content
    assert all(KEY not in str(event.details) for event in AuditEvent.objects.all())
    assert KEY not in caplog.text
    assert model_stub.requests[0].headers["authorization"] == f"Bearer {KEY}-new"  # it is used, just never shown
