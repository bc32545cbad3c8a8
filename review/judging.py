"""A reviewer's verdicts on every criterion, and the round's decision."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, Expression, F, OuterRef, Q, QuerySet
from django.utils import timezone

from annotation.lifecycle import (
    MAX_TEXT_FIELD,
    item_event,
    item_events_record,
    qa_item_transition,
    require_may_review,
)
from annotation.models import ItemEvent, Project, QAItem, QAItemRevision
from common.errors import InvalidInput, InvalidState, StaleEdit
from review.models import Judgment, ReviewSlot
from review.reports import agreement_report_after_judgments
from review.routing import REVIEWABLE, Status, require_flow


@dataclass(frozen=True)
class JudgmentInput:
    criterion: str
    verdict: str
    comment: str = ""


def _check_judgments(project: Project, judgments: Mapping[str, Mapping[str, Any]]) -> list[JudgmentInput]:
    if not isinstance(judgments, Mapping):
        raise InvalidInput("judgments must map each criterion to {verdict, comment}.", field="judgments")
    keys = [criterion["key"] for criterion in project.review_criteria]
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(judgments) - set(keys))
    for key in unknown:
        errors[f"judgments.{key}"] = [f"is not a criterion of this project (use {', '.join(keys)})"]
    checked: list[JudgmentInput] = []
    for key in keys:
        raw = judgments.get(key)
        where = f"judgments.{key}"
        if not isinstance(raw, Mapping) or raw.get("verdict") not in Judgment.Verdict.values:
            errors[f"{where}.verdict"] = ["choose pass or flag"]
            continue
        comment = raw.get("comment") or ""
        if not isinstance(comment, str) or len(comment) > MAX_TEXT_FIELD:
            errors[f"{where}.comment"] = [f"must be text of at most {MAX_TEXT_FIELD} characters"]
            continue
        if raw["verdict"] == Judgment.Verdict.FLAG and project.flag_needs_reason and not comment.strip():
            errors[f"{where}.comment"] = ["a flag needs a reason: say what is wrong, for the author"]
            continue
        checked.append(JudgmentInput(key, raw["verdict"], comment.strip()))
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)
    return checked


def _round_seen(revision_id: Any, slot_id: Any) -> dict[str, Exists]:
    """How the round looked when the judged item was locked: another of its slots still waiting, a flag given
    (`_round_decide`); ids, or the outer query's columns (OuterRef)."""
    others = ReviewSlot.objects.filter(revision_id=revision_id).exclude(pk=slot_id)
    return {
        "waiting_seen": Exists(others.exclude(status__in=[ReviewSlot.Status.DONE, ReviewSlot.Status.CANCELLED])),
        "flagged_seen": Exists(Judgment.objects.filter(revision_id=revision_id, verdict=Judgment.Verdict.FLAG)),
    }


def slots_judged(slots: QuerySet[ReviewSlot]) -> QuerySet[ReviewSlot]:
    """`slots` (with their items) read for `review_submit(locked=True)`: the item locked, with how the round
    looked, in the slot's own query; the caller reads it in the transaction it judges the slot in."""
    return slots.select_for_update(of=("item",)).annotate(**_round_seen(OuterRef("revision_id"), OuterRef("pk")))


def review_submit(
    *, slot: ReviewSlot, user: User, version: int, judgments: Mapping[str, Mapping[str, Any]], locked: bool = False
) -> ReviewSlot:
    """Record a reviewer's verdicts on every criterion; when the round is complete, decide the item.

    All criteria pass from all reviewers: accepted. Any flag: needs rewrite.

    `locked`: the slot was read `slots_judged` in the caller's transaction, which this one joins (the item read
    with it is the locked row); the agreement report's debounce is then asked once that transaction commits.
    """
    item = slot.item
    project = item.project
    require_flow(project)
    checked = _check_judgments(project, judgments)
    require_may_review(user, item)
    now = timezone.now()
    if locked and not transaction.get_connection().in_atomic_block:
        raise RuntimeError("A slot read locked is judged in the transaction that read it.")
    with nullcontext() if locked else transaction.atomic():
        # Locked, with what the round looked like then (`_round_decide` asks again where it matters).
        seen: Any = (
            slot
            if locked
            else QAItem.objects.select_for_update(of=("self",))
            .annotate(**_round_seen(slot.revision_id, slot.pk))
            .get(pk=item.pk)
        )
        locked_item: QAItem = item if locked else seen
        if locked_item.deleted_at is not None or locked_item.status != REVIEWABLE:
            raise InvalidState(
                f"The item is {locked_item.get_status_display().lower()}; only items in review can be judged.",
                field="item",
            )
        updated = ReviewSlot.objects.filter(
            pk=slot.pk, reviewer=user, status=ReviewSlot.Status.CLAIMED, version=version
        ).update(status=ReviewSlot.Status.DONE, completed_at=now, version=F("version") + 1)
        if not updated:
            current = ReviewSlot.objects.get(pk=slot.pk)
            if current.reviewer_id != user.pk:
                raise InvalidState("This review slot is no longer yours: your claim expired and was taken.")
            if current.status == ReviewSlot.Status.DONE:
                raise InvalidState("You have already reviewed this revision of the item.", field="slot")
            if current.status != ReviewSlot.Status.CLAIMED:
                raise InvalidState("This review slot was cancelled.", field="slot")
            raise StaleEdit("This review changed in the meantime; reload it.", current=current)
        written = Judgment.objects.bulk_create(
            [
                Judgment(
                    project_id=item.project_id,
                    slot=slot,
                    item=item,
                    revision_id=slot.revision_id,
                    reviewer=user,
                    criterion=j.criterion,
                    verdict=j.verdict,
                    comment=j.comment,
                    created_at=now,
                )
                for j in checked
            ]
        )
        flags = [j.criterion for j in checked if j.verdict == Judgment.Verdict.FLAG]
        note = f"flagged: {', '.join(flags)}" if flags else "all criteria pass"
        reviewed = item_event(
            item=item, actor=user, action=ItemEvent.Action.REVIEWED, before=REVIEWABLE, after=REVIEWABLE, note=note
        )
        decided = _round_decide(
            locked_item,
            slot.revision_id,
            now,
            flagged=bool(flags) or seen.flagged_seen,  # `_round_seen`'s annotations
            waiting_seen=seen.waiting_seen,
        )
        item_events_record([reviewed, *decided])  # the review, then the item's decision if the round is complete
    # The slot and its item as written (the slot was at `version`, the item locked): no need to read them again.
    slot.status, slot.completed_at, slot.version = ReviewSlot.Status.DONE, now, version + 1
    locked_item.project, locked_item.pair, locked_item.author = project, item.pair, item.author
    slot.item = locked_item

    def judged() -> None:  # debounced: one report per burst of reviews
        agreement_report_after_judgments(project=project, judgments=len(written))

    if locked:
        transaction.on_commit(judged)
    else:
        judged()
    return slot


def _round_decide(
    item: QAItem, revision_id: int, now: datetime, *, flagged: bool, waiting_seen: bool
) -> list[ItemEvent]:
    """Decide the item once every slot of the round is done: accepted, or sent back when a criterion was flagged.
    The item (locked) is left as written; returns the decision's event to record, if any.

    `flagged`: this review or the round's earlier ones flagged (as seen when the item was locked; a flag stays);
    `waiting_seen`: another slot of the round was not done then. What was seen then only says which question to
    ask first: the round's state is asked again after the lock (a review done by someone else while this one
    waited for the lock is seen), mostly in the item's conditional update itself.

    Unless no other slot waited then: a done or cancelled slot stays so and a round gets no slots later, so the
    round is complete, and every judgment of its other slots (written with their slot's completion) was seen."""
    if not waiting_seen:  # mostly (one reviewer per item, or the round's last review): nothing more to ask
        return _decided(item, now, Status.NEEDS_REWRITE if flagged else Status.ACCEPTED, None)
    slots = ReviewSlot.objects.filter(revision_id=revision_id).exclude(status=ReviewSlot.Status.CANCELLED)
    waiting = Exists(slots.exclude(status=ReviewSlot.Status.DONE))
    flags = Exists(Judgment.objects.filter(revision_id=revision_id, verdict=Judgment.Verdict.FLAG))

    def state() -> tuple[bool, bool]:  # both questions in one query
        return (
            QAItemRevision.objects.filter(pk=revision_id)
            .annotate(waiting=waiting, flagged=flags)
            .values_list("waiting", "flagged")
            .get()
        )

    if not flagged:  # the round most likely waits for another review: ask first
        still_waiting, flagged = state()
        if still_waiting:
            return []
    if flagged:  # sent back, once no slot waits
        return _decided(item, now, Status.NEEDS_REWRITE, ~waiting)
    decided = _decided(item, now, Status.ACCEPTED, ~waiting & ~flags)
    if decided:
        return decided
    still_waiting, flagged = state()  # refused: a slot or a flag not seen before (or the item moved on)
    if still_waiting or not flagged:
        return []
    return _decided(item, now, Status.NEEDS_REWRITE, ~waiting)


def _decided(item: QAItem, now: datetime, to: str, when: Q | Expression | None) -> list[ItemEvent]:
    """The decision written (when `when` still holds, if given; the item still in review), with its event to
    record."""
    before = item.status
    if not qa_item_transition(item=item, allowed=[REVIEWABLE], to=to, changes={"updated_at": now}, when=when):
        return []
    item.status, item.version, item.updated_at = to, item.version + 1, now
    action = ItemEvent.Action.NEEDS_REWRITE if to == Status.NEEDS_REWRITE else ItemEvent.Action.ACCEPTED
    return [item_event(item=item, actor=None, action=action, before=before, after=to)]
