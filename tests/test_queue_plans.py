"""The first read of the translation and validation queues goes straight to the project's lowest waiting row, however
many waiting rows other projects hold at lower ids: PostgreSQL's plans, on tables shaped as a busy server's.

(The review queue's own plan: tests/review/test_queue_plan.py; the entity questions' verification queue is the
review queue, unnarrowed.)
"""

from __future__ import annotations

import itertools

import pytest
from django.utils import timezone

from annotation.models import PagePair, QAItem, QAItemRevision
from annotation.services.members import membership_set
from common.claims import waiting_reads
from multichoice.models import TriviaItem
from multichoice.services import translation
from multichoice.services.projects import trivia_project_create
from review import queue as review_queue
from review.models import ReviewSlot
from tests.plans import analyze, scans
from validation.models import ValidationItem
from validation.services.judging import validation_claim_next, validation_routing
from validation.services.projects import validation_project_create

_titles = itertools.count()
SPREAD = "it reads PostgreSQL's plan (EXPLAIN in its JSON form) for a choice its planner makes from statistics"

pytestmark = [
    pytest.mark.postgresql(reason=SPREAD),
    pytest.mark.django_db(transaction=True),  # ANALYZE, and the claim's FOR UPDATE in a transaction of its own
]


def _items(project, author, count: int, status: str) -> list[QAItem]:
    title = f"容器 {next(_titles)}"
    pair = PagePair.objects.create(project=project, local_title=title, standard_title=title, local_lead="容器")
    now = timezone.now()
    return QAItem.objects.bulk_create(
        QAItem(project=project, pair=pair, author=author, question=f"Galdera {n}?", answer_standard="Bilbo",
               answer_local="Bilbo", status=status, submitted_at=now)
        for n in range(count)
    )  # fmt: skip


def _trivia(project, author, count: int, translation_status: str) -> None:
    TriviaItem.objects.bulk_create(
        TriviaItem(item=item, project=project, category="geography", subset="local", difficulty="easy",
                   candidates=["Bilbo", "Gasteiz", "Donostia"], answer=0, translation_status=translation_status)
        for item in _items(project, author, count, QAItem.Status.ACCEPTED)
    )  # fmt: skip


def _trivia_project(coordinator, slug: str):
    return trivia_project_create(
        name=slug, slug=slug, source_language="eus", target_language="eng", categories=["geography"],
        created_by=coordinator,
    )  # fmt: skip


def test_the_translation_queue_reads_the_projects_open_items_not_a_walk_of_the_ids(
    coordinator, annotator, second_annotator
):
    earlier = _trivia_project(coordinator, "earlier-trivia")
    _trivia(earlier, annotator, 6000, TriviaItem.Translation.OPEN)  # another project's, all waiting: lower ids
    project = _trivia_project(coordinator, "later-trivia")
    membership_set(project=project, user=second_annotator, roles={"annotator"})
    _trivia(project, annotator, 1500, TriviaItem.Translation.DONE)  # this project's first items, translated
    _trivia(project, annotator, 500, TriviaItem.Translation.OPEN)
    analyze("multichoice_triviaitem", "annotation_qaitem")

    now = timezone.now()
    first_read = waiting_reads(translation._translatable(project, second_annotator), translation._waiting(now))[0]
    first = scans(first_read, "multichoice_triviaitem")[0]
    assert first.get("Index Name") == "trivia_waiting_idx", first
    assert first.get("Actual Rows") == 1 and first.get("Rows Removed by Filter", 0) == 0  # not 7,500 read

    claimed = translation.translation_claim_next(project=project, user=second_annotator)
    assert claimed is not None and claimed.project_id == project.pk
    lowest_open = TriviaItem.objects.filter(project=project).exclude(translation_status="done").order_by("id")
    assert claimed.pk == lowest_open.values_list("pk", flat=True).first()


def _validation_slots(project, author, count: int, status: str, language: str = "eng") -> None:
    items = _items(project, author, count, QAItem.Status.SUBMITTED)
    ValidationItem.objects.bulk_create(
        ValidationItem(item=item, project=project, original_answer="Doha", language=language) for item in items
    )
    revisions = QAItemRevision.objects.bulk_create(
        QAItemRevision(item=item, number=1, question=item.question, answer_standard="Doha", author=author)
        for item in items
    )
    ReviewSlot.objects.bulk_create(
        ReviewSlot(project=project, item=revision.item, revision=revision, number=1, status=status)
        for revision in revisions
    )


def test_the_validation_queue_reads_the_projects_waiting_slots_not_a_walk_of_the_ids(coordinator, reviewer):
    earlier = validation_project_create(
        name="Earlier", slug="earlier-validation", language="eng", location="Qatar", created_by=coordinator
    )
    _validation_slots(earlier, coordinator, 6000, ReviewSlot.Status.OPEN)  # another project's: lower ids
    project = validation_project_create(
        name="Later", slug="later-validation", language="eng", location="Qatar", created_by=coordinator
    )
    membership_set(project=project, user=reviewer, roles={"reviewer"})
    _validation_slots(project, coordinator, 1500, ReviewSlot.Status.DONE)
    _validation_slots(project, coordinator, 500, ReviewSlot.Status.OPEN)
    analyze("review_reviewslot", "annotation_qaitem", "validation_validationitem")

    now = timezone.now()
    where = validation_routing(project=project, user=reviewer)
    candidates = review_queue._claimable(project, reviewer, now, where)
    first_read = waiting_reads(candidates, review_queue._waiting(now))[0]
    first = scans(first_read, "review_reviewslot")[0]
    assert first.get("Index Name") == "slot_waiting_idx", first
    assert first.get("Actual Rows") == 1 and first.get("Rows Removed by Filter", 0) == 0

    slot = validation_claim_next(project=project, user=reviewer)
    assert slot is not None and slot.project_id == project.pk
    lowest_open = ReviewSlot.objects.filter(project=project).exclude(status="done").order_by("id")
    assert slot.pk == lowest_open.values_list("pk", flat=True).first()
