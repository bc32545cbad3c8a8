"""Trivia items: writing, submitting and rewriting them (under the one page pair no queue hands out), counts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, F, QuerySet
from django.utils import timezone

from annotation import lifecycle
from annotation.models import ItemEvent, PagePair, Project, QAItem, QAItemRevision
from annotation.services.revisions import qa_item_revision_create
from common.errors import InvalidInput, InvalidState
from common.text import first_unstorable
from multichoice.models import DIFFICULTY_NUMBERS, Difficulty, Subset, TriviaItem
from multichoice.services.projects import trivia_settings
from review.models import ReviewSlot

MIN_CANDIDATES = 3


MAX_CANDIDATES = 10


MAX_TEXT = 5000


DIFFICULTY_BY_NUMBER = {str(number): difficulty.value for difficulty, number in DIFFICULTY_NUMBERS.items()}


# QA items need a page pair; a multiple-choice project keeps all of them under one that no queue hands out.
ITEMS_PAGE_TITLE = "(multiple-choice items)"


Status = QAItem.Status


def trivia_item_clean(
    project: Project, values: Mapping[str, Any], *, where: str = "", add_categories: bool = False
) -> dict[str, Any]:
    """The checked content of an item; errors name `where` (a record) and the field."""
    prefix = f"{where}: " if where else ""

    def fail(field: str, message: str) -> InvalidInput:
        return InvalidInput(f"{prefix}{field}: {message}", field=field)

    if found := first_unstorable(dict(values)):
        raise fail(found[0], f"{found[1]}.")

    question = str(values.get("question") or "").strip()
    if not question:
        raise fail("question", "must not be empty.")
    if len(question) > MAX_TEXT:
        raise fail("question", f"at most {MAX_TEXT} characters.")
    raw_candidates = values.get("candidates")
    if not isinstance(raw_candidates, list | tuple):
        raise fail("candidates", "must be a list of texts.")
    candidates = [str(text).strip() for text in raw_candidates]
    if len(candidates) < MIN_CANDIDATES or len(candidates) > MAX_CANDIDATES:
        raise fail("candidates", f"give {MIN_CANDIDATES} to {MAX_CANDIDATES} candidates (got {len(candidates)}).")
    for index, text in enumerate(candidates):
        if not text:
            raise fail(f"candidates[{index}]", "must not be empty.")
        if len(text) > MAX_TEXT:
            raise fail(f"candidates[{index}]", f"at most {MAX_TEXT} characters.")
    if len(set(candidates)) != len(candidates):
        raise fail("candidates", "two candidates are the same.")
    try:
        answer = int(values.get("answer", ""))
    except (TypeError, ValueError):
        raise fail("answer", "must be the index (0, 1, …) of the correct candidate.") from None
    if not 0 <= answer < len(candidates):
        raise fail("answer", f"must be between 0 and {len(candidates) - 1}.")
    subset = str(values.get("subset") or "").strip()
    if subset not in Subset.values:
        raise fail("subset", f"must be one of {', '.join(Subset.values)}.")
    difficulty = str(values.get("difficulty") or "").strip().lower()
    difficulty = DIFFICULTY_BY_NUMBER.get(difficulty, difficulty)
    if difficulty not in Difficulty.values:
        raise fail("difficulty", "must be easy, medium or hard (or 1, 2, 3).")
    category = str(values.get("category") or "").strip()
    categories = trivia_settings(project).categories
    if not category:
        raise fail("category", "must not be empty.")
    if category not in categories and not add_categories:
        raise fail("category", f"{category!r} is not one of the project's categories.")
    return {
        "question": question,
        "candidates": candidates,
        "answer": answer,
        "subset": subset,
        "difficulty": difficulty,
        "category": category[:100],
    }


def items_pair(project: Project) -> PagePair:
    """The page pair a multiple-choice project's QA items hang on (made on first use; never in a queue)."""
    pair, _ = PagePair.all_objects.get_or_create(
        project=project,
        local_title=ITEMS_PAGE_TITLE,
        defaults={
            "standard_title": ITEMS_PAGE_TITLE,
            "local_lead": "",
            "standard_lead": "",
            "source": PagePair.Source.API,
            "status": PagePair.Status.SUBMITTED,
            "submitted_at": timezone.now(),
        },
    )
    return pair


def trivia_items(project: Project) -> QuerySet[TriviaItem]:
    """The project's live items, each with its QA item and author loaded."""
    return (
        TriviaItem.objects.filter(project=project, item__deleted_at__isnull=True)
        .select_related("item", "item__author")
        .order_by("item_id")
    )


def trivia_item_qa_fields(content: Mapping[str, Any]) -> dict[str, Any]:
    """The shared item's question and answer: the source question and the correct candidate's text."""
    return {"question": content["question"], "answer_standard": content["candidates"][content["answer"]]}


def trivia_item_mc_fields(content: Mapping[str, Any]) -> dict[str, Any]:
    return {key: content[key] for key in ("candidates", "answer", "subset", "difficulty", "category")}


def trivia_item_create(*, project: Project, user: User, **values: Any) -> TriviaItem:
    """An item written by an author: a QA item in review (revision 1), with review slots opened. The same item
    sent again is not created twice (`trivia_item_submit`)."""
    return trivia_item_submit(project=project, user=user, **values)[0]


def _sent_already(project: Project, user: User, content: Mapping[str, Any]) -> TriviaItem | None:
    """The author's live item with the same content — question, candidates, correct one, category, subset and
    difficulty — (a rejected one may be written anew)."""
    same = TriviaItem.objects.filter(
        project=project,
        item__author=user,
        item__deleted_at__isnull=True,
        item__question=content["question"],
        **{key: content[key] for key in ("answer", "subset", "difficulty", "category")},
    ).exclude(item__status=Status.REJECTED)
    return next((row for row in same if row.candidates == content["candidates"]), None)


def trivia_item_submit(*, project: Project, user: User, **values: Any) -> tuple[TriviaItem, bool]:
    """Create an author's item unless they sent the same one (the same content) already — the browser's
    Back then Send again, a double click, a client retrying —; the item and whether it was created now.

    The key is the content, not a form token: a page the browser fetches again on Back gets a new token while
    it restores what was typed."""
    content = trivia_item_clean(project, values)
    now = timezone.now()
    with transaction.atomic():
        # One author's item at a time per project, so that two copies sent at once cannot both pass the check.
        Project.objects.select_for_update().filter(pk=project.pk).exists()
        existing = _sent_already(project, user, content)
        if existing is not None:
            return trivia_items(project).get(pk=existing.pk), False
        item = QAItem.objects.create(
            project=project,
            pair=items_pair(project),
            author=user,
            status=Status.SUBMITTED,
            submitted_at=now,
            created_at=now,
            **trivia_item_qa_fields(content),
        )
        trivia = TriviaItem.objects.create(item=item, project=project, created_at=now, **trivia_item_mc_fields(content))
        qa_item_revision_create(
            item=item, author=user, reason=QAItemRevision.Reason.SUBMITTED, content=trivia.content()
        )
        lifecycle.items_route(items=[item], actor=user)
    return trivia_items(project).get(pk=trivia.pk), True


def trivia_item_rewrite(*, item: TriviaItem, user: User, version: int, **values: Any) -> TriviaItem:
    """The author's rewrite of an item in review or sent back: a new revision and a new review round.

    `version` is the QA item's. Review slots of the earlier revision still open are cancelled.
    """
    qa = item.item
    if qa.author_id != user.pk:
        raise InvalidState("Only the item's author rewrites it.", field="item")
    allowed = [Status.SUBMITTED, Status.NEEDS_REWRITE]
    if qa.status not in allowed:
        raise InvalidState("Only items in review or sent back can be rewritten.", field="status")
    content = trivia_item_clean(item.project, values)
    now = timezone.now()
    before = qa.status
    with transaction.atomic():
        lifecycle.qa_item_transition(
            item=qa,
            allowed=allowed,
            to=Status.SUBMITTED,
            expected_version=version,
            changes=trivia_item_qa_fields(content),
            doing="rewritten",
        )
        TriviaItem.objects.filter(pk=item.pk).update(
            **trivia_item_mc_fields(content), version=F("version") + 1, updated_at=now
        )
        ReviewSlot.objects.filter(item=qa, status__in=[ReviewSlot.Status.OPEN, ReviewSlot.Status.CLAIMED]).update(
            status=ReviewSlot.Status.CANCELLED, version=F("version") + 1
        )
        item.refresh_from_db()
        qa.refresh_from_db()
        revision = qa_item_revision_create(
            item=qa, author=user, reason=QAItemRevision.Reason.REWRITE, content=item.content()
        )
        lifecycle.items_route(items=[qa], actor=user)
        lifecycle.item_event_record(
            item=qa,
            actor=user,
            action=ItemEvent.Action.REWRITTEN,
            before=before,
            after=Status.SUBMITTED,
            revision_number=revision.number,
        )
    return trivia_items(item.project).get(pk=item.pk)


def trivia_counts(project: Project) -> dict[str, dict[str, int]]:
    """Items by review status (the QA item's) and by translation status; translation counts only accepted items."""
    items = TriviaItem.objects.filter(project=project, item__deleted_at__isnull=True)
    return {
        "status": dict(items.values_list("item__status").annotate(n=Count("id")).order_by()),
        "translation": dict(
            items.filter(item__status=Status.ACCEPTED)
            .values_list("translation_status")
            .annotate(n=Count("id"))
            .order_by()
        ),
    }
