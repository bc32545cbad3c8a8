"""What happens to a reviewed item: rejected by a coordinator, resubmitted by its author, rewritten by a reviewer."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F

from annotation.lifecycle import (
    MAX_TEXT_FIELD,
    item_event_record,
    items_route,
    qa_item_text_check,
    qa_item_transition,
    require_may_review,
)
from annotation.local_checks import local_check_request
from annotation.models import ItemEvent, QAItem, QAItemRevision
from annotation.services.items import check_document_evidence
from annotation.services.revisions import qa_item_revision_create
from common.errors import InvalidInput, InvalidState
from review.models import ReviewSlot
from review.reviewers import reviewer_require
from review.routing import Status, require_flow


def qa_item_reject(*, item: QAItem, user: User, reason: str, version: int) -> QAItem:
    """A coordinator takes an item out of the dataset, saying why. Open review slots are cancelled."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("Rejecting an item needs a reason.", field="reason")
    if len(reason) > MAX_TEXT_FIELD:
        raise InvalidInput(f"The reason is longer than {MAX_TEXT_FIELD} characters.", field="reason")
    allowed = [Status.SUBMITTED, Status.NEEDS_REWRITE, Status.ACCEPTED]
    with transaction.atomic():
        qa_item_transition(
            item=item,
            allowed=allowed,
            to=Status.REJECTED,
            expected_version=version,
            doing="rejected",
            event={"actor": user, "action": ItemEvent.Action.REJECTED, "note": reason},
        )
        ReviewSlot.objects.filter(item=item, status__in=[ReviewSlot.Status.OPEN, ReviewSlot.Status.CLAIMED]).update(
            status=ReviewSlot.Status.CANCELLED, version=F("version") + 1
        )
    item.refresh_from_db()
    return item


def _require_complete(item: QAItem) -> None:
    errors = {
        name: ["is empty"]
        for name in ("question", "answer_standard", "answer_local")
        if not getattr(item, name).strip()
    }
    if not item.spans.exists():
        errors["spans"] = ["no evidence is highlighted"]
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"Cannot resubmit yet: {first} {errors[first][0]}.", field=first, details=errors)


def _unchanged_since_last_revision(item: QAItem) -> bool:
    last = item.revisions.order_by("-number").first()
    if last is None:
        return False
    spans = [{"start": s.start, "end": s.end, "text": s.text} for s in item.spans.all()]
    old = [{"start": s["start"], "end": s["end"], "text": s["text"]} for s in last.spans]
    return (last.question, last.answer_standard, last.answer_local, old) == (
        item.question,
        item.answer_standard,
        item.answer_local,
        spans,
    )


def qa_item_resubmit(*, item: QAItem, user: User, version: int) -> QAItem:
    """The author sends a rewritten item back to review: a new revision (reason `rewrite`) and a new round."""
    if item.author_id != user.pk:
        raise InvalidState("Only the item's author can resubmit it.", field="item")
    item.refresh_from_db()
    if item.status != Status.NEEDS_REWRITE:
        raise InvalidState(
            f"The item is {item.get_status_display().lower()}; only items sent back can be resubmitted.", field="item"
        )
    _require_complete(item)
    if _unchanged_since_last_revision(item):
        raise InvalidInput(
            "Nothing changed since the reviewed revision: rewrite the flagged parts first.", field="item"
        )
    if item.kind == QAItem.Kind.DOCUMENT:
        check_document_evidence(item.pair, item.spans.all())
    with transaction.atomic():
        qa_item_transition(
            item=item,
            allowed=[Status.NEEDS_REWRITE],
            to=Status.SUBMITTED,
            expected_version=version,
            doing="resubmitted",
        )
        revision = qa_item_revision_create(item=item, author=user, reason=QAItemRevision.Reason.REWRITE)
        items_route(items=[item], actor=user)
        item_event_record(
            item=item,
            actor=user,
            action=ItemEvent.Action.REWRITTEN,
            before=Status.NEEDS_REWRITE,
            after=Status.SUBMITTED,
            revision_number=revision.number,
        )
    item.refresh_from_db()
    return item


def qa_item_reviewer_rewrite(
    *,
    item: QAItem,
    user: User,
    version: int,
    question: str | None = None,
    answer_standard: str | None = None,
    answer_local: str | None = None,
) -> QAItem:
    """Where the project allows it, a reviewer rewrites a flagged item directly; it is reviewed again by others."""
    project = item.project
    require_flow(project)
    if not project.reviewer_may_rewrite:
        raise InvalidState("This project sends flagged items back to their authors; reviewers do not rewrite.")
    reviewer_require(project, user)
    require_may_review(user, item)
    qa_item_text_check(question=question, answer_standard=answer_standard, answer_local=answer_local)
    changes = {
        name: value
        for name, value in (
            ("question", question),
            ("answer_standard", answer_standard),
            ("answer_local", answer_local),
        )
        if value is not None
    }
    with transaction.atomic():
        qa_item_transition(
            item=item,
            allowed=[Status.NEEDS_REWRITE],
            to=Status.SUBMITTED,
            expected_version=version,
            changes=changes,
            doing="rewritten",
        )
        item.refresh_from_db()
        _require_complete(item)
        if _unchanged_since_last_revision(item):
            raise InvalidInput("Nothing changed: rewrite the flagged parts first.", field="question")
        revision = qa_item_revision_create(item=item, author=user, reason=QAItemRevision.Reason.REVIEWER_REWRITE)
        items_route(items=[item], actor=user)
        item_event_record(
            item=item,
            actor=user,
            action=ItemEvent.Action.REVIEWER_REWRITE,
            before=Status.NEEDS_REWRITE,
            after=Status.SUBMITTED,
            revision_number=revision.number,
        )
        local_check_request(item=item)  # the rewritten text is checked again, after the commit
    return item


GOLD_NOTE_MAX = 2000


def qa_item_gold_flag(*, item: QAItem, user: User, note: str) -> ItemEvent:
    """Someone reading model results says the item's gold answer looks wrong, and why.

    An accepted item goes back to review: a new revision (reason `gold_flagged`) and a new review round, so the
    next release carries the item only once reviewers have passed it again (or its author rewrote what they
    flagged). An item already in review or sent back for a rewrite keeps its course; the note is recorded either
    way as the item's `gold_flagged` event, which its history shows to reviewers and the author. A rejected item is
    not in any release: refused. Returns the event (its item as it is now).
    """
    require_flow(item.project)
    note = (note or "").strip()
    if not note:
        raise InvalidInput("Say what looks wrong with the gold answer.", field="note")
    if len(note) > GOLD_NOTE_MAX:
        raise InvalidInput(f"The note is longer than {GOLD_NOTE_MAX:,} characters.", field="note")
    with transaction.atomic():
        item.refresh_from_db()
        before = item.status
        if before == Status.ACCEPTED:
            qa_item_transition(item=item, allowed=[Status.ACCEPTED], to=Status.SUBMITTED, doing="sent back to review")
            last = item.revisions.order_by("-number").first()  # another kind's content (options) carried on
            revision = qa_item_revision_create(
                item=item,
                author=user,
                reason=QAItemRevision.Reason.GOLD_FLAGGED,
                content=last.content if last is not None else None,
            )
            items_route(items=[item], actor=user, revisions=[revision])
            after: str = Status.SUBMITTED
            number: int | None = revision.number
        elif before in (Status.SUBMITTED, Status.NEEDS_REWRITE):
            after, number = before, None
        else:
            raise InvalidState(
                f"The item is {item.get_status_display().lower()}: only accepted items and items in review can be "
                "flagged.",
                field="item",
            )
        event = item_event_record(
            item=item,
            actor=user,
            action=ItemEvent.Action.GOLD_FLAGGED,
            before=before,
            after=after,
            revision_number=number,
            note=note,
        )
    item.refresh_from_db()
    return event
