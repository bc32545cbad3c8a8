"""The review queue's first read goes straight to the project's lowest waiting slot, however many open slots other
projects hold at lower ids: PostgreSQL's plan for it, on a table shaped as a busy server's."""

from __future__ import annotations

import json

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotation.models import PagePair, QAItem, QAItemRevision
from annotation.services.members import membership_set
from common.claims import waiting_reads
from review.models import ReviewSlot
from review.queue import _claimable, _waiting, review_claim_next
from tests import factories

SPREAD = "it reads PostgreSQL's plan (EXPLAIN in its JSON form) for a choice its planner makes from statistics"


def _slots(project, author, count: int, status: str) -> None:
    """`count` submitted items of `project`, one revision and one slot each in `status`, in bulk."""
    title = f"茶餐廳 {status}"
    pair = PagePair.objects.create(project=project, local_title=title, standard_title=title, local_lead="𠮶間茶餐廳")
    items = QAItem.objects.bulk_create(
        QAItem(project=project, pair=pair, author=author, question=f"問題 {n}？", answer_local="陳",
               answer_standard="陈", status=QAItem.Status.SUBMITTED, submitted_at=timezone.now())
        for n in range(count)
    )  # fmt: skip
    revisions = QAItemRevision.objects.bulk_create(
        QAItemRevision(item=item, number=1, question=item.question, answer_local="陳", answer_standard="陈",
                       author=author)
        for item in items
    )  # fmt: skip
    ReviewSlot.objects.bulk_create(
        ReviewSlot(project=project, item=revision.item, revision=revision, number=1, status=status)
        for revision in revisions
    )


@pytest.mark.postgresql(reason=SPREAD)
@pytest.mark.django_db(transaction=True)  # ANALYZE, and the claim's FOR UPDATE in a transaction of its own
def test_the_first_read_of_the_review_queue_takes_the_projects_waiting_slots_not_a_walk_of_the_ids(
    coordinator, annotator, reviewer
):
    earlier = factories.project(coordinator, slug="earlier")
    _slots(earlier, annotator, 6000, ReviewSlot.Status.OPEN)  # another project's, all waiting: lower ids
    project = factories.project(coordinator, slug="later")
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    _slots(project, annotator, 1500, ReviewSlot.Status.DONE)  # this project's first slots, done
    _slots(project, annotator, 500, ReviewSlot.Status.OPEN)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE review_reviewslot")
        cursor.execute("ANALYZE annotation_qaitem")

    now = timezone.now()
    first_read = waiting_reads(_claimable(project, reviewer, now), _waiting(now))[0]
    with transaction.atomic():  # a locking read
        plan = json.loads(first_read.explain(format="json", analyze=True))[0]["Plan"]

    def nodes(node):
        yield node
        for child in node.get("Plans", []):
            yield from nodes(child)

    scans = [node for node in nodes(plan) if node.get("Relation Name") == "review_reviewslot"]
    first = scans[0]  # the outer scan (the slots the reviewer already filled come after it)
    assert first.get("Index Name") == "slot_waiting_idx", first
    assert first.get("Actual Rows") == 1 and first.get("Rows Removed by Filter", 0) == 0  # not 6,000 read

    slot = review_claim_next(project=project, user=reviewer)
    assert slot is not None and slot.project_id == project.pk
    assert slot.pk == ReviewSlot.objects.filter(project=project, status="claimed").get().pk
    assert slot.pk == min(
        ReviewSlot.objects.filter(project=project).exclude(status="done").values_list("pk", flat=True)
    )
