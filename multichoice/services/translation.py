"""The translator's queue: claiming an accepted item, submitting its translation, resolving flags."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from annotation.models import Project, QAItem, QAItemRevision, reviewable_by_q
from annotation.services.revisions import qa_item_revision_create
from audit import services as audit
from audit.models import Action
from common.claims import queue_claim_next
from common.errors import InvalidInput, InvalidState, StaleEdit
from multichoice.models import ProblemTag, TriviaItem
from multichoice.services.items import (
    MAX_TEXT,
    Status,
    trivia_item_clean,
    trivia_item_mc_fields,
    trivia_item_qa_fields,
    trivia_items,
)
from multichoice.services.suggestions import translation_suggestion_outcome_record
from review import decisions as review_decisions

RESOLUTIONS = ("fix", "accept", "drop")


def _waiting(now: Any) -> list[Q]:
    """Open, or left past its claim time: two conditions, each served by the index (their OR is not)."""
    return [
        Q(translation_status=TriviaItem.Translation.OPEN),
        Q(translation_status=TriviaItem.Translation.CLAIMED, claim_expires_at__lt=now),
    ]


def _available(now: Any) -> Q:
    """Accepted in review, and open or left past its claim time."""
    open_or_expired = _waiting(now)
    return (open_or_expired[0] | open_or_expired[1]) & Q(item__status=Status.ACCEPTED, item__deleted_at__isnull=True)


def _translatable(project: Project, user: User) -> QuerySet[TriviaItem]:
    """Accepted items of the project that this translator did not write (`annotation.lifecycle.may_review`)."""
    return TriviaItem.objects.filter(
        reviewable_by_q(user, item="item__"),
        project=project,
        item__status=Status.ACCEPTED,
        item__deleted_at__isnull=True,
    )


def translation_waiting_count(*, project: Project, user: User) -> int:
    """How many accepted items `translation_claim_next` could hand this translator (never their own)."""
    now = timezone.now()
    return sum(_translatable(project, user).filter(condition).count() for condition in _waiting(now))


def translation_claim_next(*, project: Project, user: User) -> TriviaItem | None:
    """Hand the translator an item nobody else holds (or the one they hold), as `pair_claim_next` does:
    FOR UPDATE SKIP LOCKED on PostgreSQL, then a conditional update, so two translators never get the same item."""
    now = timezone.now()
    expires = now + timedelta(minutes=project.claim_minutes)
    held = TriviaItem.objects.filter(
        project=project, translator=user, translation_status=TriviaItem.Translation.CLAIMED
    ).first()
    if held is not None:
        TriviaItem.objects.filter(pk=held.pk).update(claim_expires_at=expires)
        return trivia_items(project).get(pk=held.pk)

    def claim(candidate: TriviaItem) -> bool:
        return bool(
            TriviaItem.objects.filter(_available(now), pk=candidate.pk).update(
                translation_status=TriviaItem.Translation.CLAIMED,
                translator=user,
                claimed_at=now,
                claim_expires_at=expires,
                version=F("version") + 1,
                updated_at=now,
            )
        )

    claimed = queue_claim_next(candidates=_translatable(project, user), waiting=_waiting(now), claim=claim)
    return None if claimed is None else trivia_items(project).get(pk=claimed.pk)


def _check_tags(tags: Iterable[str]) -> list[str]:
    tags = list(tags)
    unknown = sorted(set(tags) - set(ProblemTag.values))
    if unknown:
        raise InvalidInput(f"problem_tags: unknown tag {unknown[0]!r}.", field="problem_tags")
    return [tag for tag in ProblemTag.values if tag in tags]


def _check_target(item: TriviaItem, question: str, candidates: Sequence[str]) -> tuple[str, list[str]]:
    question = question.strip()
    candidates = [str(text).strip() for text in candidates]
    if not question:
        raise InvalidInput("target_question: must not be empty.", field="target_question")
    if len(candidates) != len(item.candidates):
        raise InvalidInput(
            f"target_candidates: translate every candidate, in order ({len(item.candidates)}).",
            field="target_candidates",
        )
    for index, text in enumerate(candidates):
        if not text:
            raise InvalidInput(f"target_candidates[{index}]: must not be empty.", field=f"target_candidates[{index}]")
    return question, candidates


def translation_submit(
    *,
    item: TriviaItem,
    user: User,
    target_question: str,
    target_candidates: Sequence[str],
    problem_tags: Iterable[str] = (),
    problem_note: str = "",
    suggestion: int | None = None,
    suggestion_taken: bool = False,
) -> TriviaItem:
    """The target-language version (same order, so the same correct index); any problem tag sends the item
    to the coordinator instead of finishing it. `suggestion`: the model's suggested translation shown (its id),
    `suggestion_taken` whether the translator took it; what they did with it is recorded on it."""
    tags = _check_tags(problem_tags)
    if tags:
        question, candidates = target_question.strip(), [str(t).strip() for t in target_candidates]
    else:
        question, candidates = _check_target(item, target_question, target_candidates)
    status = TriviaItem.Translation.FLAGGED if tags else TriviaItem.Translation.DONE
    with transaction.atomic():
        if not TriviaItem.objects.filter(
            pk=item.pk, translator=user, translation_status=TriviaItem.Translation.CLAIMED
        ).update(
            target_question=question,
            target_candidates=candidates,
            problem_tags=tags,
            problem_note=problem_note.strip()[:MAX_TEXT],
            sent_back_note="",
            resolution="",
            resolved_by=None,
            translation_status=status,
            claim_expires_at=None,
            version=F("version") + 1,
            updated_at=timezone.now(),
        ):
            raise InvalidState("This item is no longer yours to translate (the claim expired or it was done).")
        translation_suggestion_outcome_record(
            item=item, suggestion_id=suggestion, taken=suggestion_taken, question=question, candidates=candidates
        )
        audit.record(user, Action.TRIVIA_TRANSLATED, item.item, project=item.project, problem_tags=tags)
    return trivia_items(item.project).get(pk=item.pk)


def translation_resolve(
    *,
    item: TriviaItem,
    user: User,
    resolution: str,
    source: Mapping[str, Any] | None = None,
    target_question: str | None = None,
    target_candidates: Sequence[str] | None = None,
) -> TriviaItem:
    """A coordinator's answer to a tagged item: `fix` (correct the source, which makes a new revision of the
    QA item, and/or the translation), `accept` (keep as translated) or `drop` (the QA item is rejected with the
    tags as the reason, so it leaves exports and releases)."""
    if resolution not in RESOLUTIONS:
        raise InvalidInput(f"resolution: must be one of {', '.join(RESOLUTIONS)}.", field="resolution")
    if item.translation_status != TriviaItem.Translation.FLAGGED:
        raise InvalidState("Only items with a problem tag wait for a resolution.", field="translation_status")
    qa = item.item
    now = timezone.now()
    changes: dict[str, Any] = {"resolution": resolution, "resolved_by": user, "updated_at": now}
    new_source: dict[str, Any] | None = None
    if resolution == "drop":
        changes["translation_status"] = TriviaItem.Translation.DROPPED
    else:
        changes["translation_status"] = TriviaItem.Translation.DONE
        if resolution == "fix" and source:
            current = {"question": qa.question, **item.content()}
            new_source = trivia_item_clean(item.project, current | dict(source))
            if new_source == current:
                new_source = None
        question = item.target_question if target_question is None else target_question
        candidates = item.target_candidates if target_candidates is None else target_candidates
        probe = TriviaItem(candidates=(new_source or {}).get("candidates", item.candidates))
        question, candidates = _check_target(probe, question, candidates)
        changes |= {"target_question": question, "target_candidates": candidates}
        if new_source is not None:
            changes |= trivia_item_mc_fields(new_source)
    with transaction.atomic():
        if not TriviaItem.objects.filter(pk=item.pk, translation_status=TriviaItem.Translation.FLAGGED).update(
            **changes, version=F("version") + 1
        ):
            raise InvalidState("Someone else resolved this item first.", field="translation_status")
        if resolution == "drop":
            note = f" ({item.problem_note})" if item.problem_note else ""
            reason = f"Dropped after translation: {', '.join(item.problem_tags)}{note}"
            review_decisions.qa_item_reject(item=qa, user=user, reason=reason[:MAX_TEXT], version=qa.version)
        if new_source is not None:
            QAItem.objects.filter(pk=qa.pk).update(
                **trivia_item_qa_fields(new_source), version=F("version") + 1, updated_at=now
            )
            qa.refresh_from_db()
            item.refresh_from_db()
            qa_item_revision_create(
                item=qa, author=user, reason=QAItemRevision.Reason.COORDINATOR_FIX, content=item.content()
            )
        audit.record(
            user,
            Action.TRIVIA_RESOLVED,
            qa,
            project=item.project,
            resolution=resolution,
            problem_tags=item.problem_tags,
            source_corrected=new_source is not None,
        )
    return trivia_items(item.project).get(pk=item.pk)


def translation_send_back(*, item: TriviaItem, user: User, note: str) -> TriviaItem:
    """A coordinator sends a translation (done, or tagged) back to its translator with a note: the item is theirs
    again (claimed, no expiry: nobody else is handed it), their translation and tags kept for them to change.
    A released item stays in its release; the next one takes it once it is translated again."""
    note = " ".join((note or "").split())[:MAX_TEXT]
    if not note:
        raise InvalidInput("note: say what the translator should change.", field="note")
    allowed = [TriviaItem.Translation.DONE, TriviaItem.Translation.FLAGGED]
    if item.translation_status not in allowed or item.translator_id is None:
        raise InvalidState("Only a translation that is done or tagged goes back to its translator.", field="item")
    with transaction.atomic():
        if not TriviaItem.objects.filter(pk=item.pk, version=item.version, translation_status__in=allowed).update(
            translation_status=TriviaItem.Translation.CLAIMED,
            claimed_at=timezone.now(),
            claim_expires_at=None,
            sent_back_note=note,
            resolution="returned",
            resolved_by=user,
            version=F("version") + 1,
            updated_at=timezone.now(),
        ):
            raise StaleEdit("The item was changed by someone else; reload it.", current=item)
        audit.record(
            user, Action.TRIVIA_RESOLVED, item.item, project=item.project, resolution="returned", note=note,
            translator=item.translator_id,
        )  # fmt: skip
    return trivia_items(item.project).get(pk=item.pk)
