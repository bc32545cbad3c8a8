"""A coordinator hands out a new invitation link or initial password only for an account their own project made
and that nobody has used by any means; never for someone else's account, reached by adding it to the project
(by user name, by e-mail in a CSV row) and then asking for its access."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import Account
from annotation.services.members import membership_set
from tests import factories
from tests.conftest import api_as

User = get_user_model()
OWN_PASSWORD = "a-long-Own-password-42"


def _access(coordinator, project, username: str, access: str = "password"):
    return api_as(coordinator).post(
        f"/api/projects/{project.slug}/members/{username}/access/", {"access": access}, format="json"
    )


def _add(coordinator, project, username: str, roles: list[str] | None = None, access: str = "invitation"):
    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/people/",
        {"username": username, "roles": roles or ["annotator"], "access": access},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def _assert_refused(response, victim, password_before: str) -> None:
    assert response.status_code == 409, response.content
    assert "reset their password" in response.json()["detail"]
    victim.refresh_from_db()
    assert victim.password == password_before  # nothing about the account changed


def test_a_pending_invitee_who_coordinates_another_project_cannot_be_taken_over(project, coordinator, other_project):
    other_coordinator = other_project.memberships.get().user
    _add(other_coordinator, other_project, "pending", roles=["coordinator"])  # invited there, not signed in yet
    victim = User.objects.get(username="pending")
    _add(coordinator, project, "pending")  # the attacker adds the account to their own project by user name

    response = _access(coordinator, project, "pending")

    _assert_refused(response, victim, victim.password)
    assert "password" not in response.json()


def test_an_api_only_member_of_another_project_cannot_be_taken_over(project, coordinator, other_project):
    victim = factories.user("scripted")
    membership_set(project=other_project, user=victim, roles={"annotator"})
    signed_in = APIClient().post(
        "/api/auth/token/", {"username": "scripted", "password": factories.PASSWORD}, format="json"
    )
    assert signed_in.status_code == 200
    victim.refresh_from_db()
    assert victim.last_login is None  # the token endpoint leaves no last_login behind
    _add(coordinator, project, "scripted")

    response = _access(coordinator, project, "scripted")

    _assert_refused(response, victim, victim.password)
    assert (
        APIClient()
        .post("/api/auth/token/", {"username": "scripted", "password": factories.PASSWORD}, format="json")
        .status_code
        == 200
    )  # the owner's own password still works


def test_an_account_named_only_by_its_email_in_a_csv_cannot_be_taken_over(project, coordinator):
    victim = factories.user("quiet")  # never signed in, in no project
    before = victim.password
    csv = b"username,email,name,roles,languages\nsomeone-new,quiet@example.org,,annotator,\n"
    added = api_as(coordinator).post(
        f"/api/projects/{project.slug}/people/import/", {"file": SimpleUploadedFile("p.csv", csv)}, format="multipart"
    )
    assert added.status_code == 201
    assert added.json()["people"][0] | {"username": "quiet", "created": False} == added.json()["people"][0]

    response = _access(coordinator, project, "quiet", access="invitation")

    _assert_refused(response, victim, before)


def test_an_account_of_this_project_that_joined_another_one_is_refused(project, coordinator, other_project):
    _add(coordinator, project, "shared")
    victim = User.objects.get(username="shared")
    membership_set(project=other_project, user=victim, roles={"reviewer"})

    _assert_refused(_access(coordinator, project, "shared"), victim, victim.password)


def test_an_account_of_this_project_used_only_through_a_token_is_refused(project, coordinator):
    _add(coordinator, project, "mei")
    victim = User.objects.get(username="mei")
    victim.set_password(OWN_PASSWORD)  # as if chosen through the link, then used by a script only
    victim.save()
    Account.objects.filter(user=victim).update(password_set_at=None)
    assert (
        APIClient().post("/api/auth/token/", {"username": "mei", "password": OWN_PASSWORD}, format="json").status_code
        == 200
    )
    _assert_refused(_access(coordinator, project, "mei"), victim, victim.password)


def test_an_account_whose_owner_chose_a_password_by_reset_without_signing_in_is_refused(client, project, coordinator):
    body = _add(coordinator, project, "kai", access="password")
    victim = User.objects.get(username="kai")
    victim.email = "kai@example.org"
    victim.save()
    assert body["password"]
    client.post(reverse("password_reset"), {"email": "kai@example.org"})
    link = re.search(r"https?://[^/\s]+(/accounts/password/reset/\S+/)", mail.outbox[-1].body).group(1)
    opened = client.get(link)
    client.post(opened["Location"], {"new_password1": OWN_PASSWORD, "new_password2": OWN_PASSWORD})
    victim.refresh_from_db()
    assert victim.last_login is None and victim.check_password(OWN_PASSWORD)

    _assert_refused(_access(coordinator, project, "kai"), victim, victim.password)


def test_a_pending_invitee_of_this_project_still_gets_a_new_link_and_a_superuser_any(
    project, coordinator, superuser, other_project
):
    _add(coordinator, project, "fresh")
    renewed = _access(coordinator, project, "fresh", access="invitation")
    assert renewed.status_code == 200
    assert renewed.json()["invitation_url"]

    outsider = factories.user("elsewhere")
    membership_set(project=project, user=outsider, roles={"annotator"})
    assert _access(superuser, project, "elsewhere").status_code == 200


@pytest.mark.parametrize("username", ["annotator", "fresh"])
def test_the_members_page_offers_a_new_link_only_where_it_would_be_given(client, project, coordinator, username):
    _add(coordinator, project, "fresh")
    client.force_login(coordinator)

    page = client.get(reverse("project_members", args=[project.slug])).content.decode()

    offered = reverse("project_member_access", args=[project.slug, username]) in page
    assert offered is (username == "fresh")
