"""A project always keeps an active coordinator: its only one can neither step down (demote themselves, through
the API or the Members page) nor be removed; a coordinator whose account is switched off does not count."""

from __future__ import annotations

from django.urls import reverse

from annotation.models import Membership
from annotation.services.members import membership_set
from tests import factories
from tests.conftest import api_as


def _is_coordinator(project, user) -> bool:
    return Membership.objects.get(project=project, user=user).is_coordinator


def test_the_only_coordinator_cannot_demote_themselves_through_the_api(project, coordinator):
    client = api_as(coordinator)

    patched = client.patch(
        f"/api/projects/{project.slug}/members/coordinator/", {"roles": ["annotator"]}, format="json"
    )
    posted = client.post(
        f"/api/projects/{project.slug}/members/", {"username": "coordinator", "roles": ["reviewer"]}, format="json"
    )

    for response in (patched, posted):
        assert response.status_code == 409, response.content
        assert "at least one active coordinator" in response.json()["detail"]
    assert _is_coordinator(project, coordinator)


def test_the_only_coordinator_cannot_demote_themselves_on_the_members_page(client, project, coordinator):
    client.force_login(coordinator)

    response = client.post(
        reverse("project_members", args=[project.slug]), {"username": "coordinator", "roles": ["annotator"]}
    )

    assert response.status_code == 400
    assert "at least one active coordinator" in response.content.decode()
    assert _is_coordinator(project, coordinator)


def test_a_coordinator_with_a_switched_off_account_does_not_count(client, project, coordinator):
    former = factories.user("former", is_active=False)
    membership_set(project=project, user=former, roles={"coordinator"})

    removed = api_as(coordinator).delete(f"/api/projects/{project.slug}/members/coordinator/")
    client.force_login(coordinator)
    page = client.post(reverse("project_member_remove", args=[project.slug, "coordinator"]), follow=True)

    assert removed.status_code == 409
    assert "at least one active coordinator" in page.content.decode()
    assert _is_coordinator(project, coordinator)


def test_with_a_second_coordinator_one_may_step_down(project, coordinator, reviewer):
    membership_set(project=project, user=reviewer, roles={"reviewer", "coordinator"})

    response = api_as(coordinator).patch(
        f"/api/projects/{project.slug}/members/coordinator/", {"roles": ["annotator"]}, format="json"
    )

    assert response.status_code == 200
    assert not _is_coordinator(project, coordinator)
    last = api_as(reviewer).delete(f"/api/projects/{project.slug}/members/reviewer/")
    assert last.status_code == 409
