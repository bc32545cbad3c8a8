"""A reviewer's verdicts on every criterion, and the round's decision."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.lifecycle import (
    MAX_TEXT_FIELD,
    item_event_record,
    qa_item_transition,
    require_may_review,
)
from annotation.models import ItemEvent, Project, QAItem
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


def review_submit(
    *, slot: ReviewSlot, user: User, version: int, judgments: Mapping[str, Mapping[str, Any]]
) -> ReviewSlot:
    """Record a reviewer's verdicts on every criterion; when the round is complete, decide the item.

    All criteria pass from all reviewers: accepted. Any flag: needs rewrite.
    """
    item = slot.item
    project = item.project
    require_flow(project)
    checked = _check_judgments(project, judgments)
    require_may_review(user, item)
    now = timezone.now()
    with transaction.atomic():
        locked = QAItem.objects.select_for_update().get(pk=item.pk)
        if locked.deleted_at is not None or locked.status != REVIEWABLE:
            raise InvalidState(
                f"The item is {locked.get_status_display().lower()}; only items in review can be judged.",
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
        Judgment.objects.bulk_create(
            Judgment(
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
        )
        flags = [j.criterion for j in checked if j.verdict == Judgment.Verdict.FLAG]
        note = f"flagged: {', '.join(flags)}" if flags else "all criteria pass"
        item_event_record(
            item=item, actor=user, action=ItemEvent.Action.REVIEWED, before=REVIEWABLE, after=REVIEWABLE, note=note
        )
        _round_decide(locked, slot.revision_id)
    slot.refresh_from_db()
    agreement_report_after_judgments(project=project)  # debounced: one report per burst of reviews
    return slot


def _round_decide(item: QAItem, revision_id: int) -> None:
    slots = ReviewSlot.objects.filter(revision_id=revision_id).exclude(status=ReviewSlot.Status.CANCELLED)
    if slots.exclude(status=ReviewSlot.Status.DONE).exists():
        return
    flagged = Judgment.objects.filter(revision_id=revision_id, verdict=Judgment.Verdict.FLAG).exists()
    after = Status.NEEDS_REWRITE if flagged else Status.ACCEPTED
    action = ItemEvent.Action.NEEDS_REWRITE if flagged else ItemEvent.Action.ACCEPTED
    qa_item_transition(item=item, allowed=[REVIEWABLE], to=after, event={"actor": None, "action": action})
