"""The audit log: what the services record, the one list a coordinator reads, its filters, page and API."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Project
from annotation.services.members import membership_remove, membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.projects import project_update
from audit.models import Action, AuditEvent
from common.errors import InvalidState, StaleEdit
from exports import services as exports
from review import judging as review_judging
from review import labels as review_labels
from review import queue as review_queue
from tests import factories
from tests.conftest import api_as
from tests.exports.conftest import authored_pair
from tests.review.conftest import all_pass, submitted_pair


def log(client, project, **filters) -> list[dict]:
    response = client.get(f"/api/projects/{project.slug}/audit/", filters)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_a_pair_from_screening_to_acceptance_reads_as_one_story(project, annotator, reviewer, coordinator):
    pair, items = submitted_pair(project, annotator)
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    review_judging.review_submit(slot=slot, user=reviewer, version=slot.version, judgments=all_pass(project))

    events = log(api_as(coordinator), project)

    actions = [event["action"] for event in reversed(events)]  # oldest first
    story = [action for action in actions if action.startswith(("pair.", "item."))]
    assert story == [
        "pair.screened",
        "item.submitted",
        "item.submitted",
        "pair.submitted",
        "item.claimed",
        "item.reviewed",
        "item.accepted",
    ]
    screened = next(e for e in events if e["action"] == "pair.screened")
    assert (screened["actor"], screened["object_type"], screened["object_id"]) == ("annotator", "pair", pair.pk)
    assert screened["details"]["decision"] == "annotate"
    reviewed = next(e for e in events if e["action"] == "item.reviewed")
    assert (reviewed["actor"], reviewed["source"], reviewed["object_id"]) == ("reviewer", "item_event", items[0].pk)


def test_settings_changes_keep_what_was_before_and_after(project, coordinator):
    response = api_as(coordinator).patch(f"/api/projects/{project.slug}/", {"name": "Renamed", "claim_minutes": 45})
    assert response.status_code == 200

    event = AuditEvent.objects.get(action=Action.PROJECT_SETTINGS)

    assert event.actor == coordinator
    assert event.details == {
        "before": {"name": "Yue Cmn", "claim_minutes": 30},
        "after": {"name": "Renamed", "claim_minutes": 45},
    }


def test_role_changes_and_removals_are_recorded_with_the_roles(project, coordinator, outsider):
    client = api_as(coordinator)
    client.post(
        f"/api/projects/{project.slug}/members/", {"username": "outsider", "roles": ["reviewer"]}, format="json"
    )
    client.patch(f"/api/projects/{project.slug}/members/outsider/", {"roles": ["annotator"]}, format="json")
    client.delete(f"/api/projects/{project.slug}/members/outsider/")

    events = log(client, project, object_type="member", actor="coordinator")

    assert [(e["action"], e["object_label"], e["details"].get("after")) for e in reversed(events)][-3:] == [
        ("member.added", "outsider", ["reviewer"]),
        ("member.roles_changed", "outsider", ["annotator"]),
        ("member.removed", "outsider", None),
    ]
    assert events[0]["details"]["before"] == ["annotator"]


def test_a_refused_change_records_nothing(project, coordinator):
    before = AuditEvent.objects.count()
    with pytest.raises(StaleEdit):
        project_update(project=project, version=project.version + 5, actor=coordinator, name="Never")
    with pytest.raises(InvalidState):
        membership_remove(project=project, user=coordinator, actor=coordinator)  # the last coordinator

    assert AuditEvent.objects.count() == before


def test_releases_requested_published_and_cancelled_are_recorded(project, annotator, coordinator, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    authored_pair(project, annotator)
    exports.release_build_now(project=project, user=coordinator, seed=1)
    pending = exports.release_request(project=project, user=coordinator, enqueue=False)
    exports.release_cancel(release=pending, user=coordinator)

    events = log(api_as(coordinator), project, object_type="release")

    assert [(e["action"], e["actor"], e["details"]["version"]) for e in reversed(events)] == [
        ("release.requested", "coordinator", 1),
        ("release.published", "", 1),
        ("release.requested", "coordinator", 2),
        ("release.cancelled", "coordinator", 2),
    ]


def test_labels_and_adjudication_are_recorded(project, annotator, coordinator, second_annotator):
    membership_set(project=project, user=second_annotator, roles={"annotator", "coordinator"})
    pair, _ = submitted_pair(project, annotator)
    pair.refresh_from_db()
    review_labels.label_set(pair=pair, user=coordinator, kind="topic", value="food")
    review_labels.label_set(pair=pair, user=second_annotator, kind="topic", value="history")
    review_labels.label_set(pair=pair, user=coordinator, kind="region", value="local")
    review_labels.label_set(pair=pair, user=second_annotator, kind="region", value="local")
    review_labels.label_adjudicate(pair=pair, user=coordinator, kind="topic", value="food")

    events = log(api_as(coordinator), project, object_type="label")

    actions = [(e["action"], e["details"]["kind"], e["details"]["after"]) for e in reversed(events)]
    assert ("label.set", "topic", "history") in actions
    assert ("label.agreed", "region", "local") in actions
    assert actions[-1] == ("label.adjudicated", "topic", "food")


def test_filters_by_person_action_object_and_date(project, annotator, coordinator):
    submitted_pair(project, annotator)
    client = api_as(coordinator)
    today = timezone.localdate()

    by_annotator = log(client, project, actor="annotator")
    only_submits = log(client, project, action="item.submitted")
    pairs = log(client, project, object_type="pair")
    tomorrow = log(client, project, since=str(today + timedelta(days=1)))
    today_rows = log(client, project, since=str(today), until=str(today))

    assert by_annotator and {e["actor"] for e in by_annotator} == {"annotator"}
    assert len(only_submits) == 2 and {e["object_type"] for e in only_submits} == {"item"}
    assert {e["object_type"] for e in pairs} == {"pair"}
    assert tomorrow == []
    assert len(today_rows) == len(log(client, project))


def test_a_bad_filter_is_refused_with_the_field_named(project, coordinator):
    response = api_as(coordinator).get(f"/api/projects/{project.slug}/audit/", {"since": "2026-13-40"})

    assert response.status_code == 400
    assert response.json()["field"] == "since"


def test_a_coordinator_sees_their_project_only_and_a_superuser_every_project(
    project, other_project, annotator, coordinator, superuser
):
    submitted_pair(project, annotator)
    owner = other_project.memberships.get().user
    project_update(project=other_project, actor=owner, name="Bairisch")

    mine = log(api_as(coordinator), project)
    everything = api_as(superuser).get("/api/audit/").json()["results"]
    one = api_as(superuser).get("/api/audit/", {"project": other_project.slug}).json()["results"]

    assert {e["project"] for e in mine} == {project.slug}
    assert {e["project"] for e in everything} == {project.slug, other_project.slug}
    assert {e["project"] for e in one} == {other_project.slug}


def test_the_log_page_filters_with_htmx_and_pages_in_a_bounded_number_of_queries(
    client, project, annotator, coordinator, django_assert_max_num_queries
):
    for number in range(3):
        submitted_pair(project, annotator, local_title=f"茶餐廳 {number}")
    client.force_login(coordinator)
    url = reverse("audit_project", args=[project.slug])

    with django_assert_max_num_queries(12):
        page = client.get(url)
    partial = client.get(url, {"actor": "annotator", "action": "pair.submitted"}, headers={"HX-Request": "true"})

    assert page.status_code == 200
    assert b'id="audit-filters"' in page.content and b"Pair submitted" in page.content
    assert partial.status_code == 200
    assert b"<html" not in partial.content and b'id="audit-filters"' not in partial.content
    assert partial.content.count(b"Pair submitted") == 3  # one row per pair; the filter form is not in the partial


def test_the_log_page_escapes_what_people_typed(client, project, annotator, coordinator):
    pair = factories.pair(project, local_title="<script>alert(1)</script>")
    claimed = pair_claim_next(project=project, user=annotator)
    assert claimed.pk == pair.pk
    pair_screen(pair=claimed, user=annotator, decision="other", note="<img src=x onerror=alert(1)>")
    client.force_login(coordinator)

    body = client.get(reverse("audit_project", args=[project.slug])).content.decode()

    assert "<script>alert(1)" not in body and "&lt;script&gt;alert(1)" in body
    assert "<img src=x" not in body


def test_audit_rows_survive_a_project_purge_without_it(project, coordinator, superuser):
    gone = factories.project(coordinator, slug="gone")
    project_update(project=gone, actor=coordinator, name="To purge")
    rows = AuditEvent.objects.filter(project=gone).count()

    Project.all_objects.filter(pk=gone.pk).delete()

    assert AuditEvent.objects.filter(project__isnull=True).count() == rows


def test_dates_at_the_ends_of_the_calendar_are_answered(project, coordinator):
    response = api_as(coordinator).get(
        f"/api/projects/{project.slug}/audit/", {"since": "0001-01-01", "until": "9999-12-31"}
    )

    assert response.status_code == 200
    assert [e["action"] for e in response.json()["results"]][-1] == "project.created"


def test_object_types_recorded_by_other_apps_can_be_filtered(client, project, coordinator):
    from audit import services as audit

    audit.record(coordinator, Action.PROJECT_SETTINGS, project=project, object_type="seed query", label="茶餐廳")
    client.force_login(coordinator)

    rows = log(api_as(coordinator), project, object_type="seed query")
    page = client.get(reverse("audit_project", args=[project.slug]), {"object_type": "seed query"})

    assert [row["object_label"] for row in rows] == ["茶餐廳"]
    assert page.status_code == 200 and "茶餐廳" in page.content.decode()
