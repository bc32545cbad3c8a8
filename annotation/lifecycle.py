"""The one owner of a QA item's lifecycle: every app that moves, rewrites or records an item comes here.

- `qa_item_transition`: the status change (and versioned content change) of an item, as one conditional update
  guarded by status and version; a refused one says whether the item moved on or was saved elsewhere.
- `item_event_record` / `item_events_record`: the item's history rows (`ItemEvent`), written nowhere else.
- `may_review` / `require_may_review`, with the queryset twin `QAItem.objects.reviewable_by(user)`: no one reviews
  an item (or a revision) they wrote.
- `qa_item_text_check` and `spans_check` / `span_problem`: the text and evidence-span rules, for the editor and
  the importers alike.
- `qa_items_delete` / `qa_items_restore`: soft deletion and its undoing (a version bump, nothing removed), for
  items deleted one by one, with their pair, by an undone import or merged as duplicates.
- `items_route` / `review_rounds_close`: what happens when items enter or leave review, carried out by the
  handlers the review app registers at start-up (annotation sits below review and does not import it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Expression, F, Q, QuerySet
from django.utils import timezone

from annotation.models import ItemEvent, QAItem, QAItemRevision
from common.errors import InvalidInput, InvalidState, StaleEdit

MAX_TEXT_FIELD = 5000  # question and answers; longer input is a paste accident, not a QA item
SELF_REVIEW = "You wrote this item: someone else reviews it."

Status = QAItem.Status


# History


def item_event(
    *,
    item: QAItem,
    actor: User | None,
    action: str,
    before: str = "",
    after: str = "",
    revision_number: int | None = None,
    note: str = "",
) -> ItemEvent:
    """An unsaved history row, for `item_events_record` (bulk); `item_event_record` saves one."""
    return ItemEvent(
        item=item,
        actor=actor,
        action=action,
        from_status=before,
        to_status=after,
        revision_number=revision_number,
        note=note,
        created_at=timezone.now(),
    )


def item_event_record(**fields: Any) -> ItemEvent:
    """Record one step of an item's history (who, what, from which status to which); fields as `item_event`."""
    event = item_event(**fields)
    event.save(force_insert=True)
    return event


def item_events_record(events: Iterable[ItemEvent]) -> list[ItemEvent]:
    return ItemEvent.objects.bulk_create(list(events))


# Status and versioned content


def qa_item_transition(
    *,
    item: QAItem,
    allowed: Iterable[str],
    to: str | None = None,
    expected_version: int | None = None,
    changes: Mapping[str, Any] | None = None,
    doing: str | None = None,
    event: Mapping[str, Any] | None = None,
    when: Q | Expression | None = None,
) -> bool:
    """Move a live item from one of the `allowed` statuses to `to` (None: keep it) and write `changes`, in one
    conditional update that also bumps the version; applied only while the item is still at `expected_version`
    (and, with `when`, only if the item matches it: a round's decision asks whether the round is complete in the
    same update).

    Refused: with `doing` ("rejected", "edited"…) raise InvalidState (deleted, or no longer in an allowed status)
    or StaleEdit (saved elsewhere, carrying the current item); without it return False. `event`: the fields of
    the history row recorded when the update applied (`item_event`; before/after default to the statuses).
    """
    allowed = list(allowed)
    before = item.status
    values = dict(changes or {})
    if to is not None:
        values["status"] = to
    values.setdefault("updated_at", timezone.now())  # a caller that shows the item passes the time it keeps
    values["version"] = F("version") + 1
    items = QAItem.objects.filter(pk=item.pk, deleted_at__isnull=True, status__in=allowed)
    if expected_version is not None:
        items = items.filter(version=expected_version)
    if when is not None:
        items = items.filter(when)
    updated = items.update(**values)
    if not updated:
        if doing is None:
            return False
        _refused(item, expected_version, allowed, doing)
    if event is not None:
        after = to or before
        item_event_record(item=item, **{"before": before, "after": after, **event})
    return True


def qa_items_transition(
    *, where: Mapping[str, Any], allowed: Iterable[str], to: str, changes: Mapping[str, Any] | None = None
) -> int:
    """`qa_item_transition` for many items at once (a pair's drafts on submit): the live items `where` (filter
    lookups, `{"pair_id": 3}`) still in an allowed status move; returns how many did. The caller records their
    events (`items_route` does)."""
    values = {"updated_at": timezone.now(), **dict(changes or {}), "status": to, "version": F("version") + 1}
    return QAItem.objects.filter(**where, deleted_at__isnull=True, status__in=list(allowed)).update(**values)


def qa_items_delete(*, items: QuerySet[QAItem], user: User | None, at: datetime | None = None) -> int:
    """Delete the live ones of `items` softly: out of every list, queue, release and figure, the rows and their
    revisions kept. Items deleted together share `at` (a pair's deletion time brings exactly them back)."""
    at = at or timezone.now()
    return items.filter(deleted_at__isnull=True).update(
        deleted_at=at, deleted_by=user, version=F("version") + 1, updated_at=at
    )


def qa_items_restore(*, items: QuerySet[QAItem]) -> int:
    """Bring the deleted ones of `items` back as they were: same status, revisions, judgments and history."""
    return items.filter(deleted_at__isnull=False).update(
        deleted_at=None, deleted_by=None, version=F("version") + 1, updated_at=timezone.now()
    )


def _refused(item: QAItem, version: int | None, allowed: list[str], doing: str) -> None:
    """After a refused conditional update: say whether the item moved on (409 state) or was saved elsewhere."""
    current = QAItem.objects.filter(pk=item.pk).first()
    if current is None or current.deleted_at is not None:
        raise InvalidState("This item was deleted.", field="item")
    if current.status not in allowed:
        raise InvalidState(f"The item is {current.get_status_display().lower()}; it cannot be {doing}.", field="item")
    raise StaleEdit(
        f"This item was saved elsewhere (now version {current.version}, you had version {version}). "
        "What you sent was not saved; reload it and compare.",
        current=current,
    )


# Who may review


def may_review(user: User, item: QAItem, *, revision_author_id: int | None = None) -> bool:
    """No one reviews an item they wrote, nor a revision they wrote (a reviewer's rewrite).

    The queryset twin is `QAItem.objects.reviewable_by(user)` (and `reviewable_by_q` for related rows)."""
    return item.author_id != user.pk and revision_author_id != user.pk


def require_may_review(user: User, item: QAItem, *, revision_author_id: int | None = None) -> None:
    if not may_review(user, item, revision_author_id=revision_author_id):
        raise InvalidState(SELF_REVIEW, field="item")


# Text and evidence spans


def qa_item_text_check(**fields: str | None) -> None:
    """Question and answers: text of at most MAX_TEXT_FIELD characters (None: not sent, not checked)."""
    errors = {
        name: [f"is longer than {MAX_TEXT_FIELD} characters"]
        for name, value in fields.items()
        if value is not None and isinstance(value, str) and len(value) > MAX_TEXT_FIELD
    }
    errors.update(
        {name: ["must be text"] for name, value in fields.items() if value is not None and not isinstance(value, str)}
    )
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)


@dataclass(frozen=True)
class SpanInput:
    start: int
    end: int
    text: str


def span_problem(text: str, start: Any, end: Any, span_text: Any, *, document: str) -> tuple[str, str] | None:
    """What is wrong with one span of `text` (`text[start:end] == span text`, in code points): (where, message),
    `where` being "" for the span itself or ".text" / ".end" for one of its fields; None when it is right."""
    if not isinstance(start, int) or isinstance(start, bool) or not isinstance(end, int) or isinstance(end, bool):
        return "", "start and end must be whole numbers (code-point offsets)"
    if not isinstance(span_text, str) or not span_text:
        return ".text", "must be the non-empty text of the span"
    if start < 0 or end <= start:
        return "", f"start {start} and end {end} do not make a span (need 0 <= start < end)"
    if end > len(text):
        return ".end", f"end {end} is past the end of the {document} ({len(text)} code points)"
    if text[start:end] != span_text:
        return ".text", (
            f"does not match the {document} at {start}:{end}, which reads {text[start:end]!r} "
            "(offsets are Unicode code points)"
        )
    return None


def spans_check(text: str, spans: Iterable[Mapping[str, Any]], *, document: str) -> list[SpanInput]:
    """Check each span against the stored text; InvalidInput names every span that is wrong."""
    checked: list[SpanInput] = []
    errors: dict[str, list[str]] = {}
    for index, raw in enumerate(spans):
        where = f"spans[{index}]"
        if not isinstance(raw, Mapping):
            errors[where] = ["must be an object with start, end and text"]
            continue
        start, end, span_text = raw.get("start"), raw.get("end"), raw.get("text")
        problem = span_problem(text, start, end, span_text, document=document)
        if problem is not None:
            errors[where + problem[0]] = [problem[1]]
        else:
            checked.append(SpanInput(start, end, span_text))  # type: ignore[arg-type]
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)
    return checked


# Entering and leaving review: carried out by the app that keeps review rounds, registered at start-up


@dataclass(frozen=True)
class ReviewRounds:
    """What annotation asks of review rounds without importing the app that keeps them (review.apps registers).

    `route(items=, actor=, revisions=)` opens the round of each item's latest revision (inside the submitting
    transaction);
    `close(items=)` cancels the open slots of items whose review was decided elsewhere (an import);
    `begun(items=)` gives the ids of those items whose review has begun (a slot claimed or done).
    """

    route: Callable[..., Any]
    close: Callable[..., Any]
    begun: Callable[..., Iterable[int]]


_ROUNDS: list[ReviewRounds] = []


def review_rounds_register(rounds: ReviewRounds) -> None:
    _ROUNDS[:] = [rounds]


def _rounds() -> ReviewRounds:
    if not _ROUNDS:
        raise RuntimeError("No review rounds are registered: the review app is not installed.")
    return _ROUNDS[0]


def items_route(
    *, items: Iterable[QAItem], actor: User | None, revisions: Iterable[QAItemRevision] | None = None
) -> None:
    """Items entered review (submitted, resubmitted, imported in review): open their review rounds; the first
    revision's round records the item's `submitted` event. Called inside the transaction that moved them.
    `revisions`: the latest revision of each item, when the caller has just written them (else they are read)."""
    _rounds().route(items=list(items), actor=actor, revisions=revisions)


def review_rounds_close(*, items: Iterable[QAItem]) -> None:
    _rounds().close(items=list(items))


def review_begun(*, items: QuerySet[QAItem]) -> set[int]:
    return set(_rounds().begun(items=items))
