"""The review queue: claiming a slot (the next one, or a chosen item's), giving it back, keeping it alive."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.lifecycle import item_event_record, require_may_review
from annotation.models import ItemEvent, Membership, Project, QAItem, reviewable_by_q
from common.claims import queue_claim_next
from common.errors import InvalidInput, InvalidState
from review.models import ReviewSlot, SlotQuerySet
from review.reviewers import reviewer_require
from review.routing import REVIEWABLE, require_flow

# What a claimed slot is shown with (the review API's SlotOutput): loaded with the slot, in the same query.
SLOT_SHOWN = ("item", "item__pair", "item__author", "revision")


def slots_held(project: Any, user: Any) -> SlotQuerySet:
    """The slots this reviewer holds in the project, the oldest claim first (ids or `OuterRef`s: the review queue's
    access check reads the first with the membership, `review.access.reviewer_queue_access`)."""
    held = ReviewSlot.objects.filter(
        project=project, item__deleted_at__isnull=True, reviewer=user, status=ReviewSlot.Status.CLAIMED
    )
    return held.order_by("claimed_at")


def _claimable(project: Project | int, user: User | int, now: datetime, where: Q | None = None) -> SlotQuerySet:
    """Slots this reviewer may take; `where` narrows them further (the validation flow: by item language, less
    the items skipped)."""
    mine = ReviewSlot.objects.filter(reviewer=user).values("revision_id")
    slots = (
        ReviewSlot.objects.filter(project=project, item__status=REVIEWABLE, item__deleted_at__isnull=True)
        .available(now)
        .filter(reviewable_by_q(user, item="item__", revision="revision__"))
        .exclude(revision_id__in=mine)
    )
    return slots.filter(where) if where is not None else slots


def _waiting(now: datetime) -> list[Q]:
    return [Q(status=ReviewSlot.Status.OPEN), Q(status=ReviewSlot.Status.CLAIMED, claim_expires_at__lt=now)]


def review_waiting_count(*, project: Project, user: User, where: Q | None = None) -> int:
    """How many items `review_claim_next` could still hand this reviewer (one slot each, not their own)."""
    return _claimable(project, user, timezone.now(), where).values("item_id").distinct().count()


def _claim(slot_id: int, item_id: int, project: Project, user: User, now: datetime, locked: bool = False) -> bool:
    """Claim the slot if it is still free. `locked`: inside a transaction that holds the slot locked, read as
    waiting (`queue_claim_next`), so free it is (on SQLite no other writer comes between); no savepoint: a refused
    claim then rolls that transaction back, which asks for the next candidate anyway."""
    expires = now + timedelta(minutes=project.claim_minutes)
    slots = ReviewSlot.objects.filter(pk=slot_id)
    try:
        with transaction.atomic(savepoint=not locked):
            changes = {
                "status": ReviewSlot.Status.CLAIMED,
                "reviewer_id": user.pk,
                "claimed_at": now,
                "claim_expires_at": expires,
                "version": F("version") + 1,
            }
            claimed = (slots if locked else slots.available(now)).update(**changes)
            if claimed:  # only slots of items in review are claimable
                item_event_record(
                    item=QAItem(pk=item_id),
                    actor=user,
                    action=ItemEvent.Action.CLAIMED,
                    before=REVIEWABLE,
                    after=REVIEWABLE,
                )
    except IntegrityError:  # the same reviewer took another slot of this round at the same moment
        return False
    return bool(claimed)


def review_claim_next(
    *,
    project: Project,
    user: User,
    validation: bool = False,
    where: Q | None = None,
    membership: Membership | None = None,
    held: int | bool | None = False,
) -> ReviewSlot | None:
    """Hand a reviewer the slot they hold, else the oldest slot they may fill; None when there is none.

    `held`: the id of the slot the reviewer holds in the project as the caller read it (None: none), or False:
    asked here (`review.access.reviewer_queue_access` reads it with the membership).

    On PostgreSQL the candidate is taken FOR UPDATE SKIP LOCKED, so reviewers asking
    at once get different slots; the conditional update (and the unique
    (revision, reviewer) constraint) make a second delivery harmless. `validation`
    says the caller is the validation flow (see `require_flow`).
    """
    require_flow(project, validation=validation)
    reviewer_require(project, user, membership)
    now = timezone.now()
    expires = now + timedelta(minutes=project.claim_minutes)
    held_id = slots_held(project, user).values_list("id", flat=True).first() if held is False else held
    if held_id is not None:  # mostly there is none: the slot is read whole only when there is
        ReviewSlot.objects.filter(pk=held_id).update(claim_expires_at=expires)
        slot = ReviewSlot.objects.select_related(*SLOT_SHOWN).get(pk=held_id)
        slot.reviewer = user
        return slot

    def claim(candidate: ReviewSlot) -> bool:
        if not _claim(candidate.pk, candidate.item_id, project, user, now, locked=True):
            return False
        # Locked (FOR UPDATE) until the claim commits: the candidate is the row as the claim left it.
        candidate.status, candidate.reviewer, candidate.claimed_at = ReviewSlot.Status.CLAIMED, user, now
        candidate.claim_expires_at, candidate.version = expires, candidate.version + 1
        return True

    return queue_claim_next(
        candidates=_claimable(project, user, now, where).select_related(*SLOT_SHOWN),  # for the caller to show
        waiting=_waiting(now),
        claim=claim,
    )


def review_claim(*, item: QAItem, user: User) -> ReviewSlot:
    """Claim a slot of a chosen item (from the filtered list), or return the one the reviewer holds on it."""
    project = item.project
    require_flow(project)
    reviewer_require(project, user)
    require_may_review(user, item)
    if item.status != REVIEWABLE:
        raise InvalidState(
            f"The item is {item.get_status_display().lower()}; only items in review can be claimed.", field="item"
        )
    held = ReviewSlot.objects.filter(item=item, reviewer=user, status=ReviewSlot.Status.CLAIMED).first()
    if held is not None:
        return held
    now = timezone.now()
    for _attempt in range(5):
        candidate = _claimable(project, user, now).filter(item=item).order_by("number").only("id", "item_id").first()
        if candidate is None:
            latest = item.revisions.order_by("-number").first()
            own = ReviewSlot.objects.filter(item=item, reviewer=user, revision=latest).first()
            if own is not None and own.status == ReviewSlot.Status.CLAIMED:
                return own  # taken by this reviewer's other request a moment ago
            if own is not None:
                raise InvalidState("You have already reviewed this revision of the item.", field="item")
            raise InvalidState("Every review slot of this item is taken.", field="item")
        if _claim(candidate.pk, item.pk, project, user, now):
            return ReviewSlot.objects.select_related("item", "revision").get(pk=candidate.pk)
    raise InvalidState("Every review slot of this item is taken.", field="item")


def review_release(*, slot: ReviewSlot, user: User) -> None:
    """Give a claimed slot back to the queue."""
    updated = ReviewSlot.objects.filter(pk=slot.pk, reviewer=user, status=ReviewSlot.Status.CLAIMED).update(
        status=ReviewSlot.Status.OPEN, reviewer=None, claimed_at=None, claim_expires_at=None, version=F("version") + 1
    )
    if not updated:
        raise InvalidState("This review is not held by you.", field="slot")


def review_record_activity(*, slot: ReviewSlot, user: User, seconds: int) -> None:
    """Add active seconds measured on the review screen; reading keeps the claim alive."""
    from annotation.services.pairs import MAX_ACTIVITY_SECONDS

    if not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < 0:
        raise InvalidInput("seconds must be a non-negative whole number.", field="seconds")
    if slot.reviewer_id != user.pk or slot.status != ReviewSlot.Status.CLAIMED:
        raise InvalidState("This review is not held by you.", field="slot")
    seconds = min(seconds, MAX_ACTIVITY_SECONDS)
    if not seconds:
        return
    expires = timezone.now() + timedelta(minutes=slot.item.project.claim_minutes)
    ReviewSlot.objects.filter(pk=slot.pk, reviewer=user, status=ReviewSlot.Status.CLAIMED).update(
        active_seconds=F("active_seconds") + seconds, claim_expires_at=expires
    )
