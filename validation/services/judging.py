"""Validating: the claim of the next item and recording a judgment."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation import lifecycle
from annotation.languages import direction_of
from annotation.lifecycle import MAX_TEXT_FIELD
from annotation.models import ItemEvent, Membership, Project, QAItem, QAItemRevision
from annotation.services.revisions import qa_item_revision_create
from common.errors import InvalidInput, InvalidState, StaleEdit
from review import queue as review_queue
from review import reviewers as review_reviewers
from review import routing as review_routing
from review.models import ReviewSlot
from validation.images import item_images
from validation.models import (
    QUESTION_BAD_REASONS,
    DomainLabel,
    SourceDomain,
    Task,
    ValidationItem,
    ValidationJudgment,
    ValidationSettings,
)
from validation.services.projects import validation_settings
from validation.suggestions import item_suggestion, suggestion_for_judgment, suggestion_uses_record


def validation_routing(*, project: Project, user: User, skipped: Iterable[int] = ()) -> Q:
    """Which items the validator is handed: those in a language they read (their reviewer languages; an item
    without a language is in the project's), less the items they skipped. The one rule the claim and the
    "n left" count share."""
    membership = Membership.objects.filter(project=project, user_id=user.pk).select_related("reader_languages").first()
    languages = review_reviewers.reader_languages(membership) if membership else [project.standard_language]
    if getattr(user, "is_superuser", False) and membership is None:
        where = Q()
    else:
        where = Q(item__validation__language__in=languages)
        if project.standard_language in languages:
            where |= Q(item__validation__language="")
    skipped = list(skipped)
    return where & ~Q(item_id__in=skipped) if skipped else where


def validation_claim_next(*, project: Project, user: User, skipped: Iterable[int] = ()) -> ReviewSlot | None:
    """The review app's queue: the slot the validator holds, else the oldest open one of an item they have not
    seen, in a language they read and not skipped (`validation_routing`)."""
    where = validation_routing(project=project, user=user, skipped=skipped)
    return review_queue.review_claim_next(project=project, user=user, validation=True, where=where)


def validation_waiting_count(*, project: Project, user: User, skipped: Iterable[int] = ()) -> int:
    """How many items are still waiting for this validator (the "n left" of the screen)."""
    where = validation_routing(project=project, user=user, skipped=skipped)
    return review_queue.review_waiting_count(project=project, user=user, where=where)


def validation_skip(*, slot: ReviewSlot, user: User) -> None:
    """Give the item back for someone else; the caller keeps it out of this validator's next claims."""
    review_queue.review_release(slot=slot, user=user)


def better_answer_options(slot: ReviewSlot) -> list[tuple[str, str]] | None:
    """The two answers to compare, in this validator's order (random per slot, stable on reload); None if only one.

    The second answer is the imported alternative if there is one, else the model-edited answer of the item's
    latest suggestion (validation/suggestions.py), else the latest edit of the answer by another validator.
    """
    vitem: ValidationItem = slot.item.validation
    other = vitem.alternative_answer
    second = "alternative"
    if not other:
        suggestion = item_suggestion(slot.item_id)
        if suggestion is not None and suggestion.answer and suggestion.answer != vitem.original_answer:
            other, second = suggestion.answer, ValidationJudgment.Choice.MODEL.value
    if not other:
        latest = (
            slot.item.revisions.exclude(answer_standard=vitem.original_answer)
            .exclude(author_id=slot.reviewer_id)
            .order_by("-number")
            .values_list("answer_standard", flat=True)
            .first()
        )
        other = latest or ""
    if not other or other == vitem.original_answer:
        return None
    options = [(ValidationJudgment.Choice.ORIGINAL.value, vitem.original_answer), (second, other)]
    random.Random(f"better:{slot.pk}").shuffle(options)
    return options


def _check_judgment(
    settings: ValidationSettings, slot: ReviewSlot, data: Mapping[str, Any]
) -> tuple[dict[str, Any], str | None, str | None]:
    """The judgment's fields, the edited answer (None: not edited) and a domain label to store (None: none)."""
    errors: dict[str, list[str]] = {}
    fields: dict[str, Any] = {}
    edited: str | None = None
    domain_label: str | None = None
    if settings.has(Task.QUESTION):
        verdict = data.get("question")
        if verdict not in ("good", "bad"):
            errors["question"] = ["choose good or bad"]
        else:
            fields["question_good"] = verdict == "good"
            reason = str(data.get("question_reason") or "")
            if verdict == "bad" and reason not in dict(QUESTION_BAD_REASONS):
                errors["question_reason"] = [f"say why the question is bad: {', '.join(dict(QUESTION_BAD_REASONS))}"]
            fields["question_reason"] = reason if verdict == "bad" else ""
    if settings.has(Task.LOCATION):
        relevant = data.get("location_relevant")
        if relevant not in ("yes", "no", True, False):
            errors["location_relevant"] = ["choose yes or no"]
        else:
            fields["location_relevant"] = relevant in ("yes", True)
    if settings.has(Task.ANSWER_EDIT) and data.get("answer") is not None:
        answer = str(data["answer"]).strip()
        if not answer:
            errors["answer"] = ["the answer must not be empty"]
        elif len(answer) > MAX_TEXT_FIELD:
            errors["answer"] = [f"is longer than {MAX_TEXT_FIELD} characters"]
        elif answer != slot.revision.answer_standard.strip():
            edited = answer
    if settings.has(Task.DOMAIN) and slot.item.validation.domain:
        label = data.get("domain_label") or ""
        known = SourceDomain.objects.filter(project=slot.item.project, domain=slot.item.validation.domain).exists()
        if not known:
            if label not in DomainLabel.values:
                errors["domain_label"] = [f"label the source domain: {', '.join(DomainLabel.values)}"]
            else:
                domain_label = label
    if settings.has(Task.BETTER_ANSWER):
        options = better_answer_options(slot)
        if options is not None:
            choice = str(data.get("better") or "")
            comment = str(data.get("better_comment") or "").strip()
            fields["better_order"] = [key for key, _ in options]
            if choice in ("1", "2"):
                fields["better_position"] = int(choice)
                fields["better_choice"] = options[int(choice) - 1][0]
            elif choice == "neither":
                fields["better_choice"] = ValidationJudgment.Choice.NEITHER
                if not comment:
                    errors["better_comment"] = ["say why neither answer is better"]
            else:
                errors["better"] = ["choose answer 1, answer 2 or neither"]
            if len(comment) > MAX_TEXT_FIELD:
                errors["better_comment"] = [f"is longer than {MAX_TEXT_FIELD} characters"]
            fields["better_comment"] = comment
    if settings.has(Task.LIKERT):
        raw = data.get("likert") or {}
        scores: dict[str, int] = {}
        for criterion in settings.likert_criteria:
            value = raw.get(criterion["key"], "") if isinstance(raw, Mapping) else ""
            try:
                score = int(value)
            except (TypeError, ValueError):
                score = 0
            if not 1 <= score <= 5:
                errors[f"likert.{criterion['key']}"] = ["give a score from 1 to 5"]
            else:
                scores[criterion["key"]] = score
        fields["likert"] = scores
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)
    return fields, edited, domain_label


def validation_submit(*, slot: ReviewSlot, user: User, version: int, data: Mapping[str, Any]) -> ValidationJudgment:
    """Record one validator's judgment; an edited answer becomes a new revision; the last slot accepts the item."""
    item = slot.item
    project = item.project
    review_routing.require_flow(project, validation=True)
    settings = validation_settings(project)
    fields, edited, domain_label = _check_judgment(settings, slot, data)
    suggestion, taken = suggestion_for_judgment(item, data)
    now = timezone.now()
    with transaction.atomic():
        locked = QAItem.objects.select_for_update().get(pk=item.pk)
        if locked.deleted_at is not None or locked.status != QAItem.Status.SUBMITTED:
            raise InvalidState("This item is no longer waiting for validation.", field="item")
        updated = ReviewSlot.objects.filter(
            pk=slot.pk, reviewer=user, status=ReviewSlot.Status.CLAIMED, version=version
        ).update(status=ReviewSlot.Status.DONE, completed_at=now, version=F("version") + 1)
        if not updated:
            current = ReviewSlot.objects.get(pk=slot.pk)
            if current.reviewer_id != user.pk:
                raise InvalidState("This item is no longer yours: your claim expired and was taken.", field="slot")
            if current.status == ReviewSlot.Status.DONE:
                raise InvalidState("You have already validated this item.", field="slot")
            raise StaleEdit("This validation changed in the meantime; reload it.", current=current)
        revision = None
        if edited is not None:
            lifecycle.qa_item_transition(
                item=locked, allowed=[QAItem.Status.SUBMITTED], changes={"answer_standard": edited}, doing="edited"
            )
            locked.answer_standard = edited
            revision = qa_item_revision_create(item=locked, author=user, reason=QAItemRevision.Reason.REVIEWER_REWRITE)
            lifecycle.item_event_record(
                item=locked,
                actor=user,
                action=ItemEvent.Action.REVIEWER_REWRITE,
                before=locked.status,
                after=locked.status,
                revision_number=revision.number,
                note="answer edited during validation",
            )
        if domain_label is not None:
            SourceDomain.objects.get_or_create(
                project=project,
                domain=item.validation.domain,
                defaults={"label": domain_label, "origin": SourceDomain.Origin.VALIDATOR, "labelled_by": user},
            )
        judgment = ValidationJudgment.objects.create(
            project=project, slot=slot, item=item, validator=user, edit_revision=revision, created_at=now, **fields
        )
        final_answer = edited if edited is not None else slot.revision.answer_standard
        suggestion_uses_record(
            judgment=judgment,
            suggestion=suggestion,
            taken=taken,
            fields=fields,
            answer=final_answer if settings.has(Task.ANSWER_EDIT) else None,
        )
        lifecycle.item_event_record(
            item=locked,
            actor=user,
            action=ItemEvent.Action.REVIEWED,
            before=locked.status,
            after=locked.status,
            note="validated",
        )
        open_slots = ReviewSlot.objects.filter(item=item).exclude(
            status__in=[ReviewSlot.Status.DONE, ReviewSlot.Status.CANCELLED]
        )
        if not open_slots.exists():
            lifecycle.qa_item_transition(
                item=locked,
                allowed=[QAItem.Status.SUBMITTED],
                to=QAItem.Status.ACCEPTED,
                event={
                    "actor": None,
                    "action": ItemEvent.Action.ACCEPTED,
                    "note": "every validator has judged the item",
                },
            )
    return judgment


def task_context(slot: ReviewSlot, settings: ValidationSettings) -> dict[str, Any]:
    """What the validation screen shows: the imported revision (blind to other validators), sources, domain."""
    vitem: ValidationItem = slot.item.validation
    domain = SourceDomain.objects.filter(project_id=slot.item.project_id, domain=vitem.domain).first()
    options = better_answer_options(slot) if settings.has(Task.BETTER_ANSWER) else None
    return {
        "vitem": vitem,
        "question": slot.revision.question,
        "answer": slot.revision.answer_standard,
        "domain": domain,
        "better_options": options,
        "suggestion": item_suggestion(slot.item_id) if slot.status == ReviewSlot.Status.CLAIMED else None,
        "images": item_images(vitem.metadata),
        "settings": settings,
        "tasks": set(settings.tasks),
        "language": vitem.text_language,
        "direction": direction_of(vitem.text_language),
    }
