"""Opening and closing review rounds (the review side of `annotation.lifecycle.items_route`), and which flow
judges a project's items."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User
from django.db.models import F, OuterRef, Subquery
from django.utils import timezone

from annotation.lifecycle import item_event, item_events_record
from annotation.models import ItemEvent, Project, QAItem, QAItemRevision
from common.errors import InvalidState
from review.models import ReviewSlot

REVIEWABLE = QAItem.Status.SUBMITTED


Status = QAItem.Status


def review_rounds_open(
    *, items: Iterable[QAItem], actor: User | None, revisions: Iterable[QAItemRevision] | None = None
) -> list[ReviewSlot]:
    """`annotation.lifecycle.items_route`, carried out: open the review round of each item's latest revision,
    `reviewers_per_item` slots claimed from the queue.

    Called inside the transaction that submits (or resubmits) the items. Who may
    fill a slot is decided at claim time: a reviewer reading the standard language
    who is neither the item's author nor the author of the revision. `revisions`: each item's latest revision
    when the caller has just written them; items with their project loaded do not read it again.
    """
    items = list(items)
    if revisions is not None:
        latest = {revision.item_id: revision for revision in revisions}
    else:
        # Portable (no DISTINCT ON): the embedded SQLite default routes items too.
        newest = QAItemRevision.objects.filter(item_id=OuterRef("item_id")).order_by("-number").values("number")[:1]
        # One query for the revisions and one for the projects, however many items: an import routes thousands.
        latest = {
            revision.item_id: revision
            for revision in QAItemRevision.objects.filter(
                item_id__in=[item.pk for item in items], number=Subquery(newest)
            ).only("id", "item_id", "number")
        }
    wanted_by_project = {item.project_id: item.project.reviewers_per_item for item in items if _project_loaded(item)}
    missing = {item.project_id for item in items} - set(wanted_by_project)
    if missing:
        wanted_by_project |= dict(Project.objects.filter(pk__in=missing).values_list("pk", "reviewers_per_item"))
    slots: list[ReviewSlot] = []
    events = []
    now = timezone.now()
    for item in items:
        revision = latest.get(item.pk)
        if revision is None:
            raise InvalidState(f"Item {item.pk} has no revision to review.", field="item")
        wanted = wanted_by_project[item.project_id]
        slots += [
            ReviewSlot(project_id=item.project_id, item=item, revision=revision, number=number, created_at=now)
            for number in range(1, wanted + 1)
        ]
        if revision.number == 1:
            events.append(
                item_event(
                    item=item,
                    actor=actor,
                    action=ItemEvent.Action.SUBMITTED,
                    before=Status.DRAFT,
                    after=Status.SUBMITTED,
                    revision_number=1,
                )
            )
    item_events_record(events)
    return ReviewSlot.objects.bulk_create(slots)


def _project_loaded(item: QAItem) -> bool:
    return QAItem.project.is_cached(item)


def review_rounds_close(*, items: Iterable[QAItem]) -> int:
    """Cancel the open slots of items whose review was decided elsewhere (an import gave the outcome)."""
    return ReviewSlot.objects.filter(item__in=list(items), status=ReviewSlot.Status.OPEN).update(
        status=ReviewSlot.Status.CANCELLED, version=F("version") + 1
    )


def review_rounds_begun(*, items: Any) -> list[int]:
    """The ids of those items whose review has begun: a slot claimed or done."""
    return list(
        ReviewSlot.objects.filter(item__in=items)
        .exclude(status__in=[ReviewSlot.Status.OPEN, ReviewSlot.Status.CANCELLED])
        .values_list("item_id", flat=True)
    )


def require_flow(project: Project, *, validation: bool = False) -> None:
    """Items of a validation project are judged on the validation screens only (validation.services), every
    other item on the review screens only: a pass/flag verdict would accept a collected pair without its
    validation tasks, and a validation judgment says nothing about the review criteria."""
    if project.kind == Project.Kind.VALIDATION and not validation:
        raise InvalidState(
            "This is a validation project: its items are judged on the validation screens.", field="item"
        )
    if project.kind != Project.Kind.VALIDATION and validation:
        raise InvalidState("Only items of a validation project are validated.", field="item")
