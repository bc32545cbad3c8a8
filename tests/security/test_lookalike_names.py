"""User names are read as Django's sign-in reads them (NFKC) and matched without regard to case wherever an
account is made: a full-width `ＲＥＶＩＥＷＥＲ` is the existing `reviewer`, not a look-alike account beside it,
and a name whose normalised form is taken is that account, not a 500."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Membership
from tests.conftest import api_as

User = get_user_model()


@pytest.mark.parametrize("typed", ["ｏｕｔｓｉｄｅｒ", "ＯＵＴＳＩＤＥＲ", "OUTSIDER"])
def test_the_people_api_finds_the_existing_account_behind_a_full_width_or_upper_case_name(
    project, coordinator, outsider, typed
):
    accounts = User.objects.count()

    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/people/", {"username": typed, "roles": ["annotator"]}, format="json"
    )

    assert response.status_code == 201, response.content
    assert (response.json()["username"], response.json()["created"]) == ("outsider", False)
    assert User.objects.count() == accounts
    assert Membership.objects.filter(project=project, user=outsider).exists()


def test_a_people_csv_with_full_width_names_adds_the_existing_accounts(project, coordinator, outsider, reviewer):
    accounts = User.objects.count()
    csv = "username,email,name,roles,languages\nｏｕｔｓｉｄｅｒ,,,annotator,\nＲＥＶＩＥＷＥＲ,,,reviewer,\n"

    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/people/import/",
        {"file": SimpleUploadedFile("p.csv", csv.encode())},
        format="multipart",
    )

    assert response.status_code == 201, response.content
    assert [(p["username"], p["created"]) for p in response.json()["people"]] == [
        ("outsider", False),
        ("reviewer", False),
    ]
    assert User.objects.count() == accounts
    assert not User.objects.filter(username="REVIEWER").exists()


def test_a_csv_naming_one_account_twice_in_two_widths_is_refused(project, coordinator):
    csv = "username,email,name,roles,languages\nmei,,,annotator,\nＭＥＩ,,,annotator,\n"

    response = api_as(coordinator).post(
        f"/api/projects/{project.slug}/people/import/",
        {"file": SimpleUploadedFile("p.csv", csv.encode())},
        format="multipart",
    )

    assert response.status_code == 400
    assert "row 3.username" in response.json()["details"]


def test_the_members_page_adds_the_existing_account_for_a_full_width_name(client, project, coordinator, outsider):
    client.force_login(coordinator)

    response = client.post(
        reverse("project_members", args=[project.slug]), {"username": "ｏｕｔｓｉｄｅｒ", "roles": ["annotator"]}
    )

    assert response.status_code in (200, 302)
    assert not User.objects.filter(username__in=["ｏｕｔｓｉｄｅｒ", "OUTSIDER"]).exists()
    assert Membership.objects.filter(project=project, user=outsider).exists()
