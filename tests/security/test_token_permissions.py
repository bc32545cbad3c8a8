"""API tokens: each person sees and revokes only their own; tokens expire; a revoked token signs nobody in.

`PAGE_EXPECTED` and `API_EXPECTED` are the rows of the permission matrix (tests/security/test_permission_matrix.py
collects them). Someone else's token is 404 for everyone, a superuser included: tokens are personal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from accounts import tokens
from accounts.models import ApiToken
from tests import factories
from tests.conftest import api_as
from tests.factories import PASSWORD
from tests.security.harness import LOGIN, api_cells, check_api, check_pages, page_cells

# Access rules and pure logic: the same on both engines, so they run on the embedded default only.
pytestmark = pytest.mark.one_engine

# name: (method, statuses in the order of ROLES: anonymous, outsider, annotator, reviewer, coordinator, superuser)
PAGE_EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    "api_tokens_page": ("get", (LOGIN, 200, 200, 200, 200, 200)),
    "api_tokens_page_revoke_all": ("post", (LOGIN, 302, 302, 302, 302, 302)),
    "api_token_page_revoke": ("post", (LOGIN, 404, 404, 404, 404, 404)),  # someone else's token
}

API_EXPECTED: list[tuple[str, str, dict | None, tuple[int, ...]]] = [
    ("get", "auth/tokens/", None, (403, 200, 200, 200, 200, 200)),
    ("post", "auth/tokens/", {"name": "nightly export"}, (403, 201, 201, 201, 201, 201)),
    ("post", "auth/tokens/revoke-all/", None, (403, 204, 204, 204, 204, 204)),
    ("delete", "auth/tokens/{token}/", None, (403, 404, 404, 404, 404, 404)),  # someone else's token
]


@pytest.fixture
def world(project, outsider, superuser):
    owner = factories.user("token_owner")
    token, _ = tokens.api_token_create(user=owner, name="theirs")
    return {
        "roles": {
            "outsider": outsider,
            "annotator": project.memberships.get(user__username="annotator").user,
            "reviewer": project.memberships.get(user__username="reviewer").user,
            "coordinator": project.memberships.get(user__username="coordinator").user,
            "superuser": superuser,
        },
        "token": token,
    }


def _theirs_unrevoked(world: dict) -> Callable[[], None]:
    def check() -> None:
        assert ApiToken.objects.get(pk=world["token"].pk).revoked_at is None, "someone else's token was revoked"

    return check


def test_each_token_page_answers_each_visitor_and_revokes_nobody_elses_token(world):
    def url(name: str) -> str:
        return reverse(name, kwargs={"token_id": world["token"].pk} if name == "api_token_page_revoke" else {})

    cells = [replace(cell, after=_theirs_unrevoked(world)) for cell in page_cells(PAGE_EXPECTED, url)]
    check_pages(world["roles"], cells)


def test_each_token_api_route_answers_each_visitor_and_revokes_nobody_elses_token(world):
    cells = [
        replace(cell, after=_theirs_unrevoked(world)) for cell in api_cells(API_EXPECTED, {"token": world["token"].pk})
    ]
    check_api(world["roles"], cells)


# 9. Tokens can be seen, revoked, and they expire


def _sign_in(username: str = "annotator") -> str:
    response = APIClient().post("/api/auth/token/", {"username": username, "password": PASSWORD}, format="json")
    assert response.status_code == 200, response.content
    return response.json()["token"]


REFUSED = 403  # DRF answers a refused token with 403 (the session authenticator comes first)


def _projects(key: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = client.get("/api/projects/")
    assert response.status_code != REFUSED or "expired or revoked" in response.json()["detail"]
    return response.status_code


def test_a_revoked_token_no_longer_signs_in(project, annotator):
    key = _sign_in()
    assert _projects(key) == 200
    listed = api_as(annotator).get("/api/auth/tokens/").json()["results"]

    revoked = api_as(annotator).delete(f"/api/auth/tokens/{listed[0]['id']}/")

    assert revoked.status_code == 204
    assert _projects(key) == REFUSED
    assert api_as(annotator).get("/api/auth/tokens/").json()["results"][0]["state"] == "revoked"


def test_a_token_expires_after_the_configured_days(project, annotator, settings):
    settings.API_TOKEN_DAYS = 2
    key = _sign_in()
    token = ApiToken.objects.get(user=annotator)

    assert timedelta(days=2) - timedelta(minutes=1) < token.expires_at - timezone.now() <= timedelta(days=2)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert _projects(key) == REFUSED


def test_with_zero_days_a_token_lasts_until_revoked(project, annotator, settings):
    settings.API_TOKEN_DAYS = 0
    key = _sign_in()

    assert ApiToken.objects.get(user=annotator).expires_at is None and _projects(key) == 200


def test_the_tokens_page_lists_makes_and_revokes_tokens_and_shows_a_new_key_once(client, project, annotator):
    old_key = _sign_in()
    client.force_login(annotator)

    made = client.post(reverse("api_tokens_page"), {"name": "nightly <b>export</b>"})
    page = made.content.decode()
    new = ApiToken.objects.get(user=annotator, via=ApiToken.Via.PAGE)
    new_key = page.split('<code class="token-key">')[1].split("</code>")[0]

    assert made.status_code == 200 and made["Cache-Control"] == "no-store"
    assert new_key[:8] == new.prefix and _projects(new_key) == 200
    assert "nightly &lt;b&gt;export&lt;/b&gt;" in page and "<b>export</b>" not in page
    assert new_key not in client.get(reverse("api_tokens_page")).content.decode()  # shown once
    signed_in = ApiToken.objects.get(user=annotator, via=ApiToken.Via.SIGN_IN)
    assert client.post(reverse("api_token_page_revoke", args=[signed_in.pk])).status_code == 302
    assert _projects(old_key) == REFUSED and _projects(new_key) == 200
    assert client.post(reverse("api_tokens_page_revoke_all")).status_code == 302
    assert _projects(new_key) == REFUSED


def test_revoking_all_tokens_through_the_api_revokes_the_token_in_use(project, annotator):
    key = _sign_in()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    assert client.post("/api/auth/tokens/revoke-all/").status_code == 204
    assert client.get("/api/projects/").status_code == REFUSED


def test_a_person_made_inactive_loses_their_tokens(project, annotator):
    key = _sign_in()
    annotator.is_active = False
    annotator.save(update_fields=["is_active"])

    assert _projects(key) == REFUSED


def test_only_a_digest_of_a_key_is_stored(project, annotator):
    key = _sign_in()

    stored = ApiToken.objects.get(user=annotator)
    assert key not in (stored.digest, stored.prefix) and len(stored.digest) == 64


def test_the_tokens_list_takes_a_fixed_number_of_queries(client, project, annotator, django_assert_max_num_queries):
    for n in range(5):
        tokens.api_token_create(user=annotator, name=f"t{n}")
    client.force_login(annotator)

    with django_assert_max_num_queries(6):
        assert client.get(reverse("api_tokens_page")).status_code == 200
    with django_assert_max_num_queries(6):
        assert api_as(annotator).get("/api/auth/tokens/").status_code == 200
