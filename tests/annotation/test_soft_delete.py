"""Deleting is soft: gone from lists, queues, the API and releases; restored with everything it had."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation.models import PagePair, Project, QAItem
from annotation.services.deletion import pair_delete, pair_restore
from annotation.services.items import qa_item_create, qa_item_delete, qa_item_restore
from annotation.services.members import membership_set
from annotation.services.pairs import pair_claim_next, pair_screen
from annotation.services.projects import project_create
from annotation.services.submission import pair_submit
from audit.models import AuditEvent
from exports import services as exports
from exports.records import item_id
from review import judging as review_judging
from review import labels as review_labels
from review import queue as review_queue
from review.models import ReviewSlot
from tests import factories
from tests.conftest import api_as
from tests.exports.conftest import authored_pair
from tests.review.conftest import flag, submitted_pair
from wikiqa.importers.services import pairs_import


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def released_ids(project, coordinator) -> set[int]:
    """The item ids in a new release (its JSONL `id`s name items by their database id)."""
    release = exports.release_build_now(project=project, user=coordinator, seed=1)
    assert release.status == "done", release.error
    released = {record["id"] for record in exports._records(release)}
    return {
        pk
        for pk in QAItem.objects.filter(project=project).values_list("pk", flat=True)
        if item_id(project, pk) in released
    }


def test_a_deleted_pair_leaves_lists_api_queue_and_releases_and_comes_back_with_its_items(
    client, project, annotator, coordinator
):
    pair = authored_pair(project, annotator)
    kept = authored_pair(project, annotator)
    item_ids = set(pair.items.values_list("pk", flat=True))
    api = api_as(coordinator)

    assert api.delete(f"/api/projects/{project.slug}/pairs/{pair.pk}/").status_code == 204

    listed = [p["id"] for p in api.get(f"/api/projects/{project.slug}/pairs/").json()["results"]]
    assert listed == [kept.pk]
    assert api.get(f"/api/projects/{project.slug}/pairs/{pair.pk}/").status_code == 404
    client.force_login(coordinator)
    assert pair.local_title not in client.get(reverse("pair_list", args=[project.slug])).content.decode()
    assert released_ids(project, coordinator).isdisjoint(item_ids)
    deleted = api.get(f"/api/projects/{project.slug}/deleted/").json()
    assert [p["id"] for p in deleted["pairs"]] == [pair.pk] and deleted["pairs"][0]["deleted_by"] == "coordinator"
    assert deleted["items"] == []  # its items come back with it, not one by one

    restored = api.post(f"/api/projects/{project.slug}/pairs/{pair.pk}/restore/")

    assert restored.status_code == 200 and restored.json()["item_count"] == 2
    assert QAItem.objects.alive().filter(pair=pair).count() == 2
    assert all(item.revisions.count() == 1 for item in QAItem.objects.filter(pair=pair))
    assert item_ids <= released_ids(project, coordinator)
    actions = list(AuditEvent.objects.filter(object_type="pair", object_id=pair.pk).values_list("action", flat=True))
    assert actions[:2] == ["pair.restored", "pair.deleted"]


def test_a_deleted_pool_pair_is_never_handed_out(project, annotator, coordinator):
    pool_pair = factories.pair(project)
    pair_delete(pair=pool_pair, user=coordinator)

    assert pair_claim_next(project=project, user=annotator) is None
    assert api_as(annotator).post(f"/api/projects/{project.slug}/queue/next/").status_code == 204

    pair_restore(pair=PagePair.all_objects.get(pk=pool_pair.pk), user=coordinator)
    assert pair_claim_next(project=project, user=annotator).pk == pool_pair.pk


def test_a_deleted_item_in_review_leaves_the_review_queue_and_comes_back_with_every_revision(
    project, annotator, reviewer, coordinator
):
    _, items = submitted_pair(project, annotator)
    item = items[0]
    slot = review_queue.review_claim(item=item, user=reviewer)
    review_judging.review_submit(
        slot=slot, user=reviewer, version=slot.version, judgments=flag(project, "fluency", "typo")
    )
    item.refresh_from_db()
    revisions = list(item.revisions.values_list("number", "question"))
    api = api_as(coordinator)

    assert api.delete(f"/api/projects/{project.slug}/items/{item.pk}/").status_code == 204

    assert api.get(f"/api/projects/{project.slug}/items/{item.pk}/").status_code == 404
    waiting = ReviewSlot.objects.filter(item__project=project, item__deleted_at__isnull=True, status="open")
    assert not waiting.filter(item=item).exists()
    assert review_queue.review_claim_next(project=project, user=reviewer).item_id != item.pk
    assert [i["id"] for i in api.get(f"/api/projects/{project.slug}/deleted/").json()["items"]] == [item.pk]

    assert api.post(f"/api/projects/{project.slug}/items/{item.pk}/restore/").status_code == 200

    item.refresh_from_db()
    assert item.deleted_at is None and item.status == "needs_rewrite"
    assert list(item.revisions.values_list("number", "question")) == revisions
    assert item.judgments.count() == len(project.review_criteria)


def test_a_deleted_item_is_left_out_of_a_release_and_back_in_the_next(project, annotator, coordinator):
    pair = authored_pair(project, annotator)
    item = pair.items.first()
    qa_item_delete(item=item, user=coordinator)

    assert item.pk not in released_ids(project, coordinator)

    qa_item_restore(item=QAItem.objects.get(pk=item.pk), user=coordinator)
    assert item.pk in released_ids(project, coordinator)


def test_deleted_pairs_leave_agreement_and_label_figures(project, annotator, coordinator, second_annotator):
    membership_set(project=project, user=second_annotator, roles={"annotator", "coordinator"})
    pair, items = submitted_pair(project, annotator)
    pair.refresh_from_db()
    for user in (coordinator, second_annotator):
        review_labels.label_set(pair=pair, user=user, kind="topic", value="food")
        review_labels.label_set(pair=pair, user=user, kind="region", value="local")
    assert review_labels.labelable_pairs(project).count() == 1

    pair_delete(pair=pair, user=coordinator)

    assert review_labels.labelable_pairs(project).count() == 0
    assert review_labels.adjudication_list(project) == []
    assert not QAItem.objects.alive().filter(pk__in=[i.pk for i in items]).exists()


def test_annotators_cannot_delete_others_work_and_outsiders_learn_nothing(
    project, annotator, second_annotator, reviewer, outsider
):
    pair, items = submitted_pair(project, annotator)
    factories.pair(project)
    other_pair = pair_claim_next(project=project, user=second_annotator)
    pair_screen(pair=other_pair, user=second_annotator, decision="annotate")
    draft = qa_item_create(pair=other_pair, user=second_annotator)
    base = f"/api/projects/{project.slug}"

    assert api_as(annotator).delete(f"{base}/items/{draft.pk}/").status_code == 403  # someone else's draft
    assert api_as(annotator).delete(f"{base}/items/{items[0].pk}/").status_code == 409  # own, but in review
    assert api_as(annotator).delete(f"{base}/pairs/{pair.pk}/").status_code == 403
    assert api_as(reviewer).delete(f"{base}/items/{items[0].pk}/").status_code == 403
    assert api_as(annotator).delete(f"{base}/").status_code == 403
    for url in (f"{base}/items/{draft.pk}/", f"{base}/pairs/{pair.pk}/", f"{base}/"):
        assert api_as(outsider).delete(url).status_code == 404
    assert QAItem.objects.alive().filter(project=project).count() == 3
    assert PagePair.objects.filter(project=project).count() == 2


def test_the_author_still_deletes_their_own_draft_and_a_coordinator_restores_it(
    project, annotator, coordinator, annotating_pair
):
    draft = qa_item_create(pair=annotating_pair, user=annotator, question="草稿？")
    assert api_as(annotator).delete(f"/api/projects/{project.slug}/items/{draft.pk}/").status_code == 204

    response = api_as(coordinator).post(f"/api/projects/{project.slug}/items/{draft.pk}/restore/")

    assert response.status_code == 200 and response.json()["question"] == "草稿？"
    assert api_as(annotator).get(f"/api/projects/{project.slug}/items/{draft.pk}/").status_code == 200


def test_a_deleted_draft_does_not_come_back_into_a_submitted_pair(project, annotator, coordinator, annotating_pair):
    from tests.review.conftest import complete_item

    extra = complete_item(annotating_pair, annotator, "深水埗")
    complete_item(annotating_pair, annotator, "姓陳")
    complete_item(annotating_pair, annotator, "招牌菜")
    qa_item_delete(item=extra, user=annotator)
    pair_submit(pair=PagePair.objects.get(pk=annotating_pair.pk), user=annotator)

    response = api_as(coordinator).post(f"/api/projects/{project.slug}/items/{extra.pk}/restore/")

    assert response.status_code == 409
    assert "being annotated" in response.json()["detail"]
    assert QAItem.objects.get(pk=extra.pk).deleted_at is not None


def test_a_deleted_project_answers_404_everywhere_until_restored(client, project, annotator, coordinator):
    api = api_as(coordinator)

    assert api.delete(f"/api/projects/{project.slug}/").status_code == 204

    assert api.get(f"/api/projects/{project.slug}/").status_code == 404
    assert api_as(annotator).get(f"/api/projects/{project.slug}/pairs/").status_code == 404
    assert [p["slug"] for p in api.get("/api/projects/").json()["results"]] == []
    assert [p["slug"] for p in api.get("/api/deleted-projects/").json()] == [project.slug]
    assert api_as(annotator).get("/api/deleted-projects/").json() == []  # restoring is for its coordinators
    assert api_as(annotator).post(f"/api/deleted-projects/{project.slug}/restore/").status_code == 404
    assert project_create(name="Again", slug="again", local_language="yue", standard_language="cmn")

    assert api.post(f"/api/deleted-projects/{project.slug}/restore/").status_code == 200

    assert api.get(f"/api/projects/{project.slug}/").status_code == 200
    assert list(AuditEvent.objects.filter(project=project).values_list("action", flat=True)[:2]) == [
        "project.restored",
        "project.deleted",
    ]


def test_the_project_delete_page_asks_for_the_slug(client, project, coordinator):
    client.force_login(coordinator)
    url = reverse("project_delete", args=[project.slug])

    refused = client.post(url, {"confirm": "wrong"})
    done = client.post(url, {"confirm": project.slug})

    assert refused.status_code == 400 and b"to confirm" in refused.content
    assert done.status_code == 302 and done["Location"] == reverse("deleted_projects")
    assert Project.all_objects.get(pk=project.pk).deleted_by == coordinator


def test_importing_a_deleted_pairs_title_again_leaves_it_deleted(project, coordinator, tmp_path):
    pair = factories.pair(project)
    pair_delete(pair=pair, user=coordinator)
    record = {
        "local_title": pair.local_title,
        "standard_title": "x",
        "local_url": "https://zh-yue.wikipedia.org/wiki/x",
        "standard_url": "https://zh.wikipedia.org/wiki/x",
        "local_lead": "一二三四五六",
        "standard_lead": "一二",
    }

    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")

    report = pairs_import(project=project, paths=[path])

    assert report.ok, report.problems
    assert (report.created, report.already_present) == (0, 1)
    assert PagePair.all_objects.get(pk=pair.pk).deleted_at is not None


def test_a_review_held_on_an_item_deleted_meanwhile_is_gone_for_the_reviewer(client, project, annotator, reviewer):
    _, items = submitted_pair(project, annotator)
    slot = review_queue.review_claim(item=items[0], user=reviewer)
    qa_item_delete(item=items[0], user=project.memberships.get(is_coordinator=True).user)
    client.force_login(reviewer)

    assert client.get(reverse("review_slot", args=[project.slug, slot.pk])).status_code == 404
    assert api_as(reviewer).get(f"/api/projects/{project.slug}/review/slots/{slot.pk}/").status_code == 404
    assert review_queue.review_claim_next(project=project, user=reviewer).item_id == items[1].pk


def test_the_admin_lists_deleted_pairs_and_only_a_superuser_purges_with_a_record(
    client, project, coordinator, superuser
):
    pair = pair_delete(pair=factories.pair(project), user=coordinator)
    client.force_login(superuser)

    listing = client.get("/admin/annotation/pagepair/")
    purged = client.post(f"/admin/annotation/pagepair/{pair.pk}/delete/", {"post": "yes"})

    assert pair.local_title in listing.content.decode()
    assert purged.status_code == 302
    assert not PagePair.all_objects.filter(pk=pair.pk).exists()
    assert AuditEvent.objects.filter(action="pair.purged", object_id=pair.pk, actor=superuser).exists()


def test_staff_without_superuser_cannot_purge(client, project, coordinator):
    from django.contrib.auth.models import Permission

    staff = factories.user("staff", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename__in=["view_pagepair", "delete_pagepair"]))
    pair = factories.pair(project)
    client.force_login(staff)

    response = client.post(f"/admin/annotation/pagepair/{pair.pk}/delete/", {"post": "yes"})

    assert response.status_code == 403
    assert PagePair.objects.filter(pk=pair.pk).exists()
