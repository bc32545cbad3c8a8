"""The final answer of an item: a coordinator's choice of revision."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import OuterRef, Subquery

from annotation.lifecycle import MAX_TEXT_FIELD
from annotation.models import QAItem, QAItemRevision
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState
from validation.models import (
    FinalAnswerChoice,
    ValidationItem,
)


def validation_final_answer_choose(
    *, vitem: ValidationItem, revision_number: int, user: User, note: str = ""
) -> FinalAnswerChoice:
    """Choose which revision's answer is the item's final answer (the imported one or a validator's edit).

    Recorded as a new choice (earlier choices stay); releases use the latest.
    Without any choice the final answer is the item's current answer (the latest edit).
    """
    note = note.strip()
    if len(note) > MAX_TEXT_FIELD:
        raise InvalidInput(f"note: at most {MAX_TEXT_FIELD} characters.", field="note")
    revision = QAItemRevision.objects.filter(item_id=vitem.item_id, number=revision_number).first()
    if revision is None:
        numbers = list(vitem.item.revisions.order_by("number").values_list("number", flat=True))
        raise InvalidInput(
            f"revision: item {vitem.item_id} has no revision {revision_number}; it has {numbers}.", field="revision"
        )
    with transaction.atomic():
        if not QAItem.objects.select_for_update().filter(pk=vitem.item_id, deleted_at__isnull=True).exists():
            raise InvalidState("This item was merged or removed; choose on the item kept.", field="item")
        choice = FinalAnswerChoice.objects.create(item_id=vitem.item_id, revision=revision, chosen_by=user, note=note)
        audit.record(
            user,
            Action.VALIDATION_FINAL_ANSWER,
            vitem.item,
            project=vitem.project,
            revision=revision.number,
            answer=revision.answer_standard,
            note=note,
        )
    return choice


def final_answers(item_ids: Iterable[int]) -> dict[int, FinalAnswerChoice]:
    """The latest final-answer choice of each item that has one (with its revision), in one query."""
    # A correlated subquery, not DISTINCT ON: the embedded SQLite default needs it too.
    newest = FinalAnswerChoice.objects.filter(item_id=OuterRef("item_id")).order_by("-id").values("id")[:1]
    return {
        choice.item_id: choice
        for choice in FinalAnswerChoice.objects.filter(item_id__in=list(item_ids), id=Subquery(newest)).select_related(
            "revision", "chosen_by"
        )
    }


def final_answer_record(choice: FinalAnswerChoice | None, latest: QAItemRevision | None) -> dict[str, Any]:
    """Which revision's answer is final and whether a coordinator chose it (else: the latest revision)."""
    if choice is not None:
        return {
            "revision": choice.revision.number,
            "answer": choice.revision.answer_standard,
            "chosen": True,
            "chosen_by": choice.chosen_by.username if choice.chosen_by else None,
            "chosen_at": choice.created_at.isoformat(),
            "note": choice.note,
        }
    return {
        "revision": latest.number if latest else None,
        "answer": latest.answer_standard if latest else None,
        "chosen": False,
        "chosen_by": None,
        "chosen_at": None,
        "note": "",
    }
