"""The annotator's queue: claiming the next page pair, giving it back, screening it, time spent on it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from annotation.lifecycle import MAX_TEXT_FIELD
from annotation.models import Membership, PagePair, PairSkip, Project, QAItem, Screening
from audit import services as audit
from audit.models import Action
from common.claims import queue_claim_next
from common.errors import InvalidInput, InvalidState

MAX_ACTIVITY_SECONDS = 300  # one heartbeat never counts more than this (a sleeping laptop, a clock jump)


def pair_queue(*, project: Project, user: User, now: datetime) -> tuple[QuerySet[PagePair], list[Q]]:
    """The pairs this annotator may take, and the conditions under which one waits (`queue_claim_next`)."""
    candidates = PagePair.objects.filter(project=project).exclude(
        pk__in=PairSkip.objects.skipped_by(user.pk).values("pair_id")  # given back: not again (unless undone)
    )
    return candidates, [Q(status=PagePair.Status.NEW), Q(status=PagePair.Status.CLAIMED, claim_expires_at__lt=now)]


def pair_claim_next(*, project: Project, user: User, membership: Membership | None = None) -> PagePair | None:
    """Hand the user a pair nobody else holds, or the unscreened one they already hold.

    On PostgreSQL the candidate row is taken with FOR UPDATE SKIP LOCKED, so
    annotators asking at once each get a different pair without queueing behind
    one lock; the conditional update makes a second delivery harmless. A `membership` read with
    `project_access(held_pair=True)` says already whether the user holds one.
    """
    now = timezone.now()
    holds = getattr(membership, "held_pair_id", True) is not None  # unknown: ask
    mine = PagePair.objects.filter(project=project, assignee=user, status=PagePair.Status.CLAIMED)
    held = mine.order_by("claimed_at").first() if holds else None
    expires = now + timedelta(minutes=project.claim_minutes)
    if held is not None:
        PagePair.objects.filter(pk=held.pk).update(claim_expires_at=expires)
        held.claim_expires_at = expires
        held.project = project
        return held

    def claim(candidate: PagePair) -> bool:
        changes = {"status": PagePair.Status.CLAIMED, "claimed_at": now, "claim_expires_at": expires, "updated_at": now}
        # The candidate was read available and locked by this transaction: claimed only as it was read.
        taken = PagePair.objects.filter(pk=candidate.pk, version=candidate.version)
        if not taken.update(**changes, assignee=user, version=F("version") + 1):
            return False
        # The candidate row is locked (FOR UPDATE) until the claim commits: what it reads now is what was written.
        for name, value in changes.items():
            setattr(candidate, name, value)
        candidate.assignee = user
        candidate.version += 1
        return True

    candidates, waiting = pair_queue(project=project, user=user, now=now)
    claimed = queue_claim_next(candidates=candidates, waiting=waiting, claim=claim)
    if claimed is not None:
        claimed.project = project
    return claimed


def pair_give_back(*, pair: PagePair, user: User, reason: str = "") -> PairSkip:
    """Return a pair the user holds to the queue unfinished (skip it), with an optional reason, recorded.

    The queue does not hand that pair to the same annotator again. A pair with QA items is not given
    back: its items would be left behind under someone else's pair (delete them first, or finish it).
    """
    reason = (reason or "").strip()
    if len(reason) > MAX_TEXT_FIELD:
        raise InvalidInput(f"The reason is longer than {MAX_TEXT_FIELD} characters.", field="reason")
    require_assignee(pair, user)
    open_statuses = {PagePair.Status.CLAIMED, PagePair.Status.ANNOTATING}
    if pair.status not in open_statuses:
        raise InvalidState(f"A {pair.get_status_display().lower()} pair cannot be given back.", field="pair")
    if pair.items.alive().exists():
        raise InvalidState(
            "This pair has QA items: delete them before giving the pair back, or finish and submit it.", field="pair"
        )
    now = timezone.now()
    with transaction.atomic():
        updated = PagePair.objects.filter(pk=pair.pk, assignee=user, status__in=open_statuses).update(
            status=PagePair.Status.NEW,
            assignee=None,
            claimed_at=None,
            claim_expires_at=None,
            screening_decision="",
            version=F("version") + 1,
            updated_at=now,
        )
        if not updated:
            raise InvalidState("This pair changed in the meantime; reload it.", field="pair")
        skip = PairSkip.objects.create(
            pair=pair, annotator=user, status_before=pair.status, reason=reason, created_at=now
        )
        audit.record(user, Action.PAIR_GIVEN_BACK, pair, project=pair.project, before=pair.status, reason=reason)
    pair.refresh_from_db(
        fields=["status", "assignee", "claimed_at", "claim_expires_at", "screening_decision", "version"]
    )
    return skip


def pair_skip_undo(*, skip: PairSkip, user: User) -> PagePair | None:
    """Take a skip back: the pair may come to this person again, and comes to them now if nobody took it.

    The skip stays in the record, marked undone. A pair handed to them after the skip and not screened yet goes
    back to the pool (no skip recorded: they never chose to pass it). Returns the pair when it is theirs again,
    None when someone else holds it (it waits for them in the queue once it is free).
    """
    if skip.annotator_id != user.pk:
        raise InvalidState("Only the person who skipped a pair can take the skip back.", field="skip")
    if skip.undone_at is not None:
        raise InvalidState("This skip was already taken back.", field="skip")
    now = timezone.now()
    project = skip.pair.project
    with transaction.atomic():
        if not PairSkip.objects.filter(pk=skip.pk, undone_at__isnull=True).update(undone_at=now):
            raise InvalidState("This skip was already taken back.", field="skip")
        audit.record(user, Action.PAIR_SKIP_UNDONE, skip.pair, project=project, skip=skip.pk)
        claimable = PagePair.objects.filter(pk=skip.pair_id, deleted_at__isnull=True).available(now)
        if not claimable.exists():
            return None
        # The untouched pair handed out after the skip goes back to the pool: one claimed pair at a time.
        PagePair.objects.filter(project=project, assignee=user, status=PagePair.Status.CLAIMED).exclude(
            pk=skip.pair_id
        ).update(
            status=PagePair.Status.NEW, assignee=None, claimed_at=None, claim_expires_at=None, version=F("version") + 1
        )
        expires = now + timedelta(minutes=project.claim_minutes)
        claimed = claimable.update(
            status=PagePair.Status.CLAIMED,
            assignee=user,
            claimed_at=now,
            claim_expires_at=expires,
            screening_decision="",
            version=F("version") + 1,
            updated_at=now,
        )
    if not claimed:
        return None
    pair = PagePair.objects.select_related("project").get(pk=skip.pair_id)
    return pair


def require_assignee(pair: PagePair, user: User) -> None:
    if pair.assignee_id != user.pk:
        raise InvalidState("This pair is no longer assigned to you.", field="pair")


def pair_screen(*, pair: PagePair, user: User, decision: str, note: str = "") -> PagePair:
    """Record a screening decision: annotate (the pair opens for authoring) or exclude with a reason."""
    choices = {Screening.Decision.ANNOTATE, Screening.Decision.TRANSLATED, Screening.Decision.STRUCTURAL}
    choices.add(Screening.Decision.OTHER)
    if decision not in choices:
        raise InvalidInput(
            f"Unknown screening decision {decision!r}: use one of {', '.join(sorted(choices))}.", field="decision"
        )
    note = note or ""
    if decision == Screening.Decision.OTHER and not note.strip():
        raise InvalidInput("Excluding a pair for another reason needs a note saying why.", field="note")
    if len(note) > MAX_TEXT_FIELD:
        raise InvalidInput(f"The note is longer than {MAX_TEXT_FIELD} characters.", field="note")
    require_assignee(pair, user)
    editable = {PagePair.Status.CLAIMED, PagePair.Status.ANNOTATING, PagePair.Status.EXCLUDED}
    if pair.status not in editable:
        raise InvalidState(f"A {pair.get_status_display().lower()} pair cannot be screened again.", field="decision")
    if decision != Screening.Decision.ANNOTATE and pair.items.alive().exists():
        raise InvalidState("This pair has QA items: delete them before excluding the pair.", field="decision")
    status = PagePair.Status.ANNOTATING if decision == Screening.Decision.ANNOTATE else PagePair.Status.EXCLUDED
    now = timezone.now()
    changes = {"status": status, "screening_decision": decision, "claim_expires_at": None, "updated_at": now}
    with transaction.atomic():
        known = pair_update_versioned(pair, {"assignee_id": user.pk, "status__in": sorted(editable)}, changes)
        if known is None:
            raise InvalidState("This pair changed in the meantime; reload it.", field="decision")
        Screening.objects.create(
            project_id=pair.project_id, pair=pair, annotator=user, decision=decision, note=note, created_at=now
        )
        audit.record(
            user, Action.PAIR_SCREENED, pair, project=pair.project, before=pair.status, decision=decision, note=note
        )
    pair_refresh_after_update(pair, changes, known)
    return pair


def pair_update_versioned(pair: PagePair, where: dict[str, Any], changes: dict[str, Any]) -> bool | None:
    """Write `changes` (and the next version) to the live pair if it is still `where` and as the request read it,
    else if it is `where` as it is now: True when the first applied (the pair is then `changes` on what was read),
    False when only the second did, None when neither (the pair is no longer `where`)."""
    pairs = PagePair.objects.filter(pk=pair.pk, **where)  # live pairs only
    changes = {**changes, "version": F("version") + 1}
    if pairs.filter(version=pair.version).update(**changes):
        return True
    return False if pairs.update(**changes) else None


def pair_refresh_after_update(pair: PagePair, changes: dict[str, Any], known: bool | None) -> None:
    """The pair after `pair_update_versioned`: changed in Python when its row was as read, else read again."""
    if not known:
        pair.refresh_from_db(fields=[*changes, "version"])
        return
    for name, value in changes.items():
        setattr(pair, name, value)
    pair.version += 1


def pair_record_activity(*, pair: PagePair, user: User, seconds: int, item: QAItem | None = None) -> None:
    """Add active (not idle) seconds measured in the browser to the pair and, if given, the item."""
    if not isinstance(seconds, int) or seconds < 0:
        raise InvalidInput("seconds must be a non-negative whole number.", field="seconds")
    require_assignee(pair, user)
    seconds = min(seconds, MAX_ACTIVITY_SECONDS)
    if not seconds:
        return
    now = timezone.now()
    pair_changes: dict[str, Any] = {"active_seconds": F("active_seconds") + seconds}
    if pair.status == PagePair.Status.CLAIMED:  # someone reading a pair keeps their claim
        pair_changes["claim_expires_at"] = now + timedelta(minutes=pair.project.claim_minutes)
    PagePair.objects.filter(pk=pair.pk).update(**pair_changes)
    if item is not None:
        if item.pair_id != pair.pk:
            raise InvalidInput("The item does not belong to this pair.", field="item")
        QAItem.objects.filter(pk=item.pk).update(active_seconds=F("active_seconds") + seconds)
