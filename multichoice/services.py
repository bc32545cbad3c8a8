"""Business rules of trivia projects. Views, the API, the release writer and tests call these functions.

Reused, not copied (as validation projects do): projects, members and roles
(`annotation.services`), the access rule (`annotation.access`), QA items and
their revisions (`annotation.models.QAItem` / `QAItemRevision`, the candidates in
the revision's `content`), the review queue, claims and judgments per criterion
(`annotation.lifecycle.items_route`, `review_claim_next`, `review_claim`,
`review_submit`, `qa_item_reject`), whose judgments the agreement reports read;
the claim pattern of the annotator's queue for the translators' queue
(FOR UPDATE SKIP LOCKED, then a conditional update) and the error types
(`common.errors`).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

import orjson
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from annotation import lifecycle
from annotation import services as annotation_services
from annotation.models import ItemEvent, PagePair, Project, QAItem, QAItemRevision, reviewable_by_q
from annotation.services import qa_item_revision_create
from audit import services as audit
from audit.models import Action
from common import csvfile
from common.claims import queue_claim_next
from common.csv_safety import csv_writer
from common.errors import InvalidInput, InvalidState, StaleEdit
from common.text import first_unstorable
from multichoice.models import (
    DIFFICULTY_NUMBERS,
    Difficulty,
    ProblemTag,
    Subset,
    TriviaImport,
    TriviaItem,
    TriviaSettings,
    default_trivia_criteria,
)
from review import decisions as review_decisions
from review import judging as review_judging
from review import project_settings as review_project_settings
from review import queue as review_queue
from review.models import Judgment, ReviewSlot

MIN_CANDIDATES = 3
MAX_CANDIDATES = 10
MAX_TEXT = 5000
MAX_PROBLEMS = 20
RESOLUTIONS = ("fix", "accept", "drop")
DIFFICULTY_BY_NUMBER = {str(number): difficulty.value for difficulty, number in DIFFICULTY_NUMBERS.items()}
# QA items need a page pair; a multiple-choice project keeps all of them under one that no queue hands out.
ITEMS_PAGE_TITLE = "(multiple-choice items)"
Status = QAItem.Status


# Projects and settings


def trivia_settings(project: Project) -> TriviaSettings:
    settings, _ = TriviaSettings.objects.get_or_create(
        project=project,
        defaults={"source_language": project.local_language, "target_language": project.standard_language},
    )
    return settings


def _check_categories(categories: Iterable[Any]) -> list[str]:
    checked: list[str] = []
    for index, raw in enumerate(categories):
        name = str(raw).strip()
        if not name or len(name) > 100:
            raise InvalidInput(f"categories[{index}]: must be 1 to 100 characters.", field=f"categories[{index}]")
        if name not in checked:
            checked.append(name)
    return checked


def trivia_project_create(
    *,
    name: str,
    slug: str | None = None,
    source_language: str,
    target_language: str,
    categories: Sequence[str] = (),
    created_by: User | None = None,
) -> Project:
    """A project of kind `trivia`: items written and reviewed in the source language, translated into the target."""
    checked = _check_categories(categories)
    with transaction.atomic():
        # Items are written and reviewed in the source language: it is the project's standard language,
        # the one review reads (`review.reviewers.reviewers_eligible`).
        project = annotation_services.project_create(
            name=name,
            slug=slug,
            local_language=target_language,
            standard_language=source_language,
            created_by=created_by,
        )
        Project.objects.filter(pk=project.pk).update(
            kind=Project.Kind.TRIVIA, review_criteria=default_trivia_criteria()
        )
        TriviaSettings.objects.create(
            project=project, categories=checked, source_language=source_language, target_language=target_language
        )
    project.refresh_from_db()
    return project


def trivia_settings_update(
    *,
    project: Project,
    version: int | None = None,
    categories: Sequence[str] | None = None,
    review_criteria: Any = None,
    reviewers_per_item: int | None = None,
    actor: User | None = None,
) -> TriviaSettings:
    """Change the category list, the review criteria or how many reviewers review each item (the project's
    review settings, as in every review: with two or more, the agreement reports have something to compare).
    Items already in review keep the slots they have; the next round opens the new number."""
    settings = trivia_settings(project)
    with transaction.atomic():
        if reviewers_per_item is not None and reviewers_per_item != project.reviewers_per_item:
            annotation_services.project_update(project=project, reviewers_per_item=reviewers_per_item, actor=actor)
        if review_criteria is not None:
            review_project_settings.project_review_settings_update(project=project, review_criteria=review_criteria)
        changes: dict[str, Any] = {}
        if categories is not None:
            changes["categories"] = _check_categories(categories)
        query = TriviaSettings.objects.filter(pk=settings.pk)
        if version is not None:
            query = query.filter(version=version)
        if not query.update(**changes, version=F("version") + 1):
            settings.refresh_from_db()
            raise StaleEdit("The trivia settings were changed by someone else; reload them.", current=settings)
        diff = audit.changes({"categories": settings.categories}, {"categories": changes.get("categories")})
        if "categories" in changes and diff["after"]:
            audit.record(actor, Action.PROJECT_SETTINGS, project, before=diff["before"], after=diff["after"])
    settings.refresh_from_db()
    return settings


# Items


def _clean_item(
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


def _qa_fields(content: Mapping[str, Any]) -> dict[str, Any]:
    """The shared item's question and answer: the source question and the correct candidate's text."""
    return {"question": content["question"], "answer_standard": content["candidates"][content["answer"]]}


def _mc_fields(content: Mapping[str, Any]) -> dict[str, Any]:
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
    content = _clean_item(project, values)
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
            **_qa_fields(content),
        )
        trivia = TriviaItem.objects.create(item=item, project=project, created_at=now, **_mc_fields(content))
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
    content = _clean_item(item.project, values)
    now = timezone.now()
    before = qa.status
    with transaction.atomic():
        lifecycle.qa_item_transition(
            item=qa,
            allowed=allowed,
            to=Status.SUBMITTED,
            expected_version=version,
            changes=_qa_fields(content),
            doing="rewritten",
        )
        TriviaItem.objects.filter(pk=item.pk).update(**_mc_fields(content), version=F("version") + 1, updated_at=now)
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


def _criteria_keys(project: Project) -> list[str]:
    return [criterion["key"] for criterion in project.review_criteria]


def trivia_review(*, item: TriviaItem, user: User, criteria: Mapping[str, bool], comment: str = "") -> dict[str, Any]:
    """A reviewer's check against the project's criteria, recorded as the review app's judgments (a met
    criterion passes, an unmet one is flagged with the comment) on a review slot the reviewer holds or claims.

    When the round is complete, every criterion passed by every reviewer accepts the item (and opens it to
    translators); any flag sends it back to the author.
    """
    qa = item.item
    if qa.status != Status.SUBMITTED:
        raise InvalidState("This item is not in review.", field="status")
    lifecycle.require_may_review(user, qa)
    keys = _criteria_keys(item.project)
    unknown = sorted(set(criteria) - set(keys))
    if unknown:
        raise InvalidInput(f"criteria.{unknown[0]}: not a criterion of this project.", field=f"criteria.{unknown[0]}")
    checked = {key: bool(criteria.get(key, False)) for key in keys}
    accepted = all(checked.values())
    comment = (comment or "").strip()
    if not accepted and not comment:
        raise InvalidInput("comment: say what the author should change.", field="comment")
    slot = review_queue.review_claim(item=qa, user=user)
    judgments = {
        key: {"verdict": Judgment.Verdict.PASS if met else Judgment.Verdict.FLAG, "comment": "" if met else comment}
        for key, met in checked.items()
    }
    slot = review_judging.review_submit(slot=slot, user=user, version=slot.version, judgments=judgments)
    return trivia_reviews(item, slots=[slot.pk])[0]


def trivia_reviews(item: TriviaItem, *, slots: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """The item's reviews, one per filled review slot: revision number, criteria met, the comment."""
    judgments = Judgment.objects.filter(item_id=item.item_id).select_related("revision", "reviewer")
    if slots is not None:
        judgments = judgments.filter(slot_id__in=list(slots))
    reviews: dict[int, dict[str, Any]] = {}
    for judgment in judgments.order_by("slot_id", "id"):
        review = reviews.setdefault(
            judgment.slot_id,
            {
                "slot": judgment.slot_id,
                "revision": judgment.revision.number,
                "reviewer": judgment.reviewer,
                "criteria": {},
                "comment": "",
                "created_at": judgment.created_at,
            },
        )
        review["criteria"][judgment.criterion] = judgment.verdict == Judgment.Verdict.PASS
        if judgment.comment and not review["comment"]:
            review["comment"] = judgment.comment
    for review in reviews.values():
        review["accepted"] = all(review["criteria"].values())
    return list(reviews.values())


def trivia_review_next(*, project: Project, user: User) -> TriviaItem | None:
    """Claim the next review slot (the review app's queue: never an item the reviewer wrote or reviewed)."""
    slot = review_queue.review_claim_next(project=project, user=user)
    if slot is None:
        return None
    return trivia_items(project).get(item_id=slot.item_id)


def trivia_review_strata(project: Project) -> dict[str, dict[int, str]]:
    """Agreement strata of trivia reviews (multichoice/kind.py): each item's category, subset, difficulty."""
    strata: dict[str, dict[int, str]] = {"category": {}, "subset": {}, "difficulty": {}}
    for item_id, category, subset, difficulty in TriviaItem.objects.filter(project=project).values_list(
        "item_id", "category", "subset", "difficulty"
    ):
        strata["category"][item_id] = category
        strata["subset"][item_id] = subset
        strata["difficulty"][item_id] = difficulty
    return strata


def trivia_may_review(item: TriviaItem, user: User) -> bool:
    """Whether the review form is offered: in review, not the author, and no judgment on this revision yet."""
    qa = item.item
    if qa.status != Status.SUBMITTED or not lifecycle.may_review(user, qa):
        return False
    latest = qa.revisions.order_by("-number").first()
    return (
        not ReviewSlot.objects.filter(item=qa, reviewer=user, revision=latest)
        .exclude(status__in=[ReviewSlot.Status.OPEN, ReviewSlot.Status.CLAIMED])
        .exists()
    )


# Balance


MAX_TARGET = 100_000


def trivia_balance(project: Project, *, translated_only: bool = False) -> dict[str, Any]:
    """Counts of live items by category × subset × difficulty, every cell of the project's lists present, each
    cell with its target (if the coordinator set one), how many are missing to reach it, and whether it is among
    the emptiest (`low`). `translated_only` counts only items ready for a release (accepted and translated)."""
    settings = trivia_settings(project)
    categories = list(settings.categories)
    counts: dict[tuple[str, str, str], int] = {}
    items = TriviaItem.objects.filter(project=project, item__deleted_at__isnull=True).exclude(
        item__status=Status.REJECTED
    )
    if translated_only:
        items = items.filter(item__status=Status.ACCEPTED, translation_status=TriviaItem.Translation.DONE)
    rows = items.values_list("category", "subset", "difficulty").annotate(n=Count("id")).order_by()
    for category, subset, difficulty, n in rows:
        counts[(category, subset, difficulty)] = n
        if category not in categories:
            categories.append(category)
    targets = settings.targets or {}
    minimum = min(
        (counts.get((c, s, d), 0) for c in categories for s in Subset.values for d in Difficulty.values), default=0
    )
    table = []
    for category in categories:
        cells: dict[str, dict[str, dict[str, Any]]] = {}
        for subset in Subset.values:
            cells[subset] = {}
            for difficulty in Difficulty.values:
                n = counts.get((category, subset, difficulty), 0)
                target = targets.get(category, {}).get(subset, {}).get(difficulty)
                cells[subset][difficulty] = {
                    "count": n,
                    "target": target,
                    "missing": max(0, target - n) if target is not None else 0,
                    "low": n == minimum,
                }
        total = sum(cell["count"] for by_d in cells.values() for cell in by_d.values())
        table.append({"category": category, "cells": cells, "total": total})
    return {
        "subsets": Subset.values,
        "difficulties": Difficulty.values,
        "rows": table,
        "total": sum(row["total"] for row in table),
        "minimum": minimum,
        "missing": sum(cell["missing"] for row in table for by_d in row["cells"].values() for cell in by_d.values()),
        "translated_only": translated_only,
        "version": settings.version,
    }


def trivia_targets_set(
    *, project: Project, targets: Mapping[str, Any], version: int | None = None, actor: User | None = None
) -> TriviaSettings:
    """The coordinator's targets per category × subset × difficulty (`{category: {subset: {difficulty: n}}}`;
    a cell left out, or empty, has no target). Errors name the cell."""
    settings = trivia_settings(project)
    clean: dict[str, dict[str, dict[str, int]]] = {}
    if not isinstance(targets, Mapping):
        raise InvalidInput("targets: must be {category: {subset: {difficulty: n}}}.", field="targets")
    for category, by_subset in targets.items():
        if category not in settings.categories:
            raise InvalidInput(f"targets.{category}: not one of the project's categories.", field=f"targets.{category}")
        for subset, by_difficulty in (by_subset or {}).items():
            for difficulty, raw in (by_difficulty or {}).items():
                where = f"targets.{category}.{subset}.{difficulty}"
                if subset not in Subset.values or difficulty not in Difficulty.values:
                    raise InvalidInput(f"{where}: no such cell.", field=where)
                if raw in (None, ""):
                    continue
                try:
                    n = int(raw)
                except (TypeError, ValueError):
                    raise InvalidInput(f"{where}: a whole number of items.", field=where) from None
                if not 0 <= n <= MAX_TARGET:
                    raise InvalidInput(f"{where}: between 0 and {MAX_TARGET}.", field=where)
                clean.setdefault(category, {}).setdefault(subset, {})[difficulty] = n
    with transaction.atomic():
        query = TriviaSettings.objects.filter(pk=settings.pk)
        if version is not None:
            query = query.filter(version=version)
        if not query.update(targets=clean, version=F("version") + 1):
            settings.refresh_from_db()
            raise StaleEdit("The trivia settings were changed by someone else; reload them.", current=settings)
        diff = audit.changes({"targets": settings.targets}, {"targets": clean})
        audit.record(actor, Action.PROJECT_SETTINGS, project, before=diff["before"], after=diff["after"])
    settings.refresh_from_db()
    return settings


# Import and export


def _content_key(content: Mapping[str, Any]) -> str:
    """How a record without a source id is recognised: its question and candidates."""
    return orjson.dumps([content["question"], content["candidates"]]).decode()


def _import(
    project: Project,
    records: list[tuple[str, dict[str, Any]]],
    *,
    user: User | None,
    add: bool,
    name: str,
    data: bytes,
) -> dict[str, Any]:
    """Imported items are accepted already (revision 1, reason `imported`); translated ones are done.

    A file imported before (same sha256, import not undone) imports nothing and says when it was imported;
    a record already in the project — the same source id, or without an id the same question and candidates —
    is skipped and reported. A source id twice in one file refuses the file.
    """
    digest = hashlib.sha256(data).hexdigest()
    earlier = TriviaImport.objects.filter(project=project, sha256=digest, undone_at__isnull=True).first()
    if earlier is not None:
        return {
            "created": 0,
            "categories_added": [],
            "skipped": [],
            "already_imported": {"import_id": earlier.pk, "name": earlier.name, "at": earlier.created_at.isoformat()},
            "import_id": None,
        }
    cleaned: list[tuple[dict[str, Any], dict[str, Any]]] = []
    problems: dict[str, list[str]] = {}
    seen_ids: dict[str, str] = {}
    for where, record in records:
        source_id = str(record.get("id") or "").strip()[:100]
        if source_id and source_id in seen_ids:
            problems[f"{where}.id"] = [f"{where}: id: {source_id!r} is also on {seen_ids[source_id]}."]
        if source_id:
            seen_ids.setdefault(source_id, where)
        try:
            cleaned.append((_clean_item(project, record, where=where, add_categories=add), record))
        except InvalidInput as error:
            problems[f"{where}.{error.field}"] = [error.message]
        if len(problems) >= MAX_PROBLEMS:
            break
    if problems:
        first = next(iter(problems))
        raise InvalidInput(problems[first][0], field=first, details=problems)
    live = TriviaItem.objects.filter(project=project, item__deleted_at__isnull=True)
    known_ids = set(live.exclude(external_id="").values_list("external_id", flat=True))
    known_content = {
        _content_key({"question": question, "candidates": candidates})
        for question, candidates in live.filter(external_id="").values_list("item__question", "candidates")
    }
    fresh, skipped = [], []
    for (content, record), (where, _) in zip(cleaned, records, strict=True):
        source_id = str(record.get("id") or "").strip()[:100]
        if (source_id and source_id in known_ids) or (not source_id and _content_key(content) in known_content):
            skipped.append({"where": where, "id": source_id})
            continue
        known_content.add(_content_key(content))
        fresh.append((content, record))
    cleaned = fresh
    settings = trivia_settings(project)
    new_categories = [c["category"] for c, _ in cleaned if c["category"] not in settings.categories]
    now = timezone.now()
    with transaction.atomic():
        batch = TriviaImport.objects.create(
            project=project,
            name=name[:255],
            sha256=digest,
            created_by=user,
            created_at=now,
            created=len(cleaned),
            skipped=skipped,
        )
        if new_categories:
            TriviaSettings.objects.filter(pk=settings.pk).update(
                categories=_check_categories([*settings.categories, *new_categories]), version=F("version") + 1
            )
        pair = items_pair(project)
        items = QAItem.objects.bulk_create(
            QAItem(
                project=project,
                pair=pair,
                author=user,
                status=Status.ACCEPTED,
                submitted_at=now,
                created_at=now,
                **_qa_fields(content),
            )
            for content, _ in cleaned
        )
        rows = []
        for item, (content, record) in zip(items, cleaned, strict=True):
            target_question = str(record.get("target_question") or "").strip()
            target_candidates = [str(t).strip() for t in record.get("target_candidates") or []]
            translated = bool(target_question and len(target_candidates) == len(content["candidates"]))
            rows.append(
                TriviaItem(
                    item=item,
                    project=project,
                    import_batch=batch,
                    external_id=str(record.get("id") or "").strip()[:100],
                    translation_status=TriviaItem.Translation.DONE if translated else TriviaItem.Translation.OPEN,
                    target_question=target_question if translated else "",
                    target_candidates=target_candidates if translated else [],
                    created_at=now,
                    updated_at=now,
                    **_mc_fields(content),
                )
            )
        TriviaItem.objects.bulk_create(rows)
        QAItemRevision.objects.bulk_create(
            QAItemRevision(
                item=item,
                number=1,
                question=item.question,
                answer_standard=item.answer_standard,
                content=row.content(),
                author=user,
                reason=QAItemRevision.Reason.IMPORTED,
                created_at=now,
            )
            for item, row in zip(items, rows, strict=True)
        )
        report = {
            "created": len(cleaned),
            "categories_added": sorted(set(new_categories)),
            "skipped": skipped,
            "already_imported": None,
            "import_id": batch.pk,
        }
        audit.record(
            user, Action.IMPORT_FINISHED, project, kind="trivia items", file=name, created=len(cleaned),
            skipped=len(skipped), categories_added=report["categories_added"],
        )  # fmt: skip
    return report


def trivia_imports(project: Project) -> QuerySet[TriviaImport]:
    """The project's imports, newest first, each with how many of its items are still live."""
    return (
        TriviaImport.objects.filter(project=project)
        .select_related("created_by", "undone_by")
        .annotate(live=Count("items", filter=Q(items__item__deleted_at__isnull=True)))
    )


def trivia_import_undo(*, batch: TriviaImport, user: User) -> dict[str, Any]:
    """Undo an import (coordinator): its items are deleted softly — out of every list, queue, release and figure,
    each restorable from the project's Deleted list — and the file may be imported again. Items translated or
    reviewed since are deleted too; the answer counts them."""
    if batch.undone_at is not None:
        raise InvalidState("This import was undone already.", field="import")
    now = timezone.now()
    items = QAItem.objects.alive().filter(trivia__import_batch=batch)
    with transaction.atomic():
        if not TriviaImport.objects.filter(pk=batch.pk, undone_at__isnull=True).update(undone_at=now, undone_by=user):
            raise InvalidState("This import was undone already.", field="import")
        worked_on = TriviaItem.objects.filter(import_batch=batch, item__deleted_at__isnull=True).exclude(
            translation_status=TriviaItem.Translation.OPEN, item__status=Status.ACCEPTED
        )
        changed = worked_on.count()
        deleted = lifecycle.qa_items_delete(items=items, user=user, at=now)
        audit.record(
            user, Action.ITEM_DELETED, batch.project, undone_import=batch.pk, file=batch.name,
            deleted=deleted, worked_on=changed,
        )  # fmt: skip
    batch.refresh_from_db()
    return {"import_id": batch.pk, "deleted": deleted, "worked_on": changed}


def _decode(data: bytes, name: str) -> str:
    try:
        return csvfile.decode(data)
    except csvfile.CsvProblem as problem:
        raise InvalidInput(f"{name}: {problem.message}.", field="file") from None


def trivia_import_csv(
    *,
    project: Project,
    data: bytes,
    name: str = "items.csv",
    subset: str = "",
    add_categories: bool = True,
    user: User | None = None,
) -> dict[str, Any]:
    """Rows `id, category, difficulty, question, candidate0..n, answer` (and optionally `subset`); all or nothing.

    The file's rows are all `subset` unless the file has its own `subset` column.
    """
    try:
        header, rows = csvfile.dict_rows(
            _decode(data, name), needed=("category", "difficulty", "question", "candidate0", "answer")
        )
        candidate_columns = sorted(
            (c for c in header if c.startswith("candidate") and c[9:].isdigit()), key=lambda c: int(c[9:])
        )
        records = []
        for line, row in rows:
            record = {key: value for key, value in row.items() if key is not None}
            record["candidates"] = [row[c] for c in candidate_columns if (row.get(c) or "").strip()]
            record["subset"] = (row.get("subset") or subset).strip()
            records.append((f"{name} line {line} (id {row.get('id') or '?'})", record))
    except csvfile.CsvProblem as problem:
        where = f"{name} line {problem.line}" if problem.line else name
        raise InvalidInput(f"{where}: {problem.message}.", field=problem.column or "file") from None
    if not records:
        raise InvalidInput(f"{name}: the file has no rows.", field="file")
    return _import(project, records, user=user, add=add_categories, name=name, data=data)


def trivia_import_jsonl(
    *, project: Project, data: bytes, name: str = "items.jsonl", add_categories: bool = True, user: Any = None
) -> dict[str, Any]:
    """One JSON object per line: id, category, subset, difficulty, question, candidates, answer
    (and target_question, target_candidates for items translated already); all or nothing."""
    records = []
    for line, text in enumerate(_decode(data, name).splitlines(), start=1):
        if not text.strip():
            continue
        try:
            record = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise InvalidInput(f"{name} line {line}: not valid JSON.", field="file") from None
        if not isinstance(record, dict):
            raise InvalidInput(f"{name} line {line}: must be a JSON object.", field="file")
        records.append((f"{name} line {line} (id {record.get('id') or '?'})", record))
    if not records:
        raise InvalidInput(f"{name}: the file has no records.", field="file")
    return _import(project, records, user=user, add=add_categories, name=name, data=data)


def _exported(project: Project) -> QuerySet[TriviaItem]:
    return trivia_items(project).exclude(item__status=Status.REJECTED)


def trivia_export_csv(project: Project) -> bytes:
    """The simple layout `id, category, difficulty (1-3), question, candidate0..n, answer`."""
    items = list(_exported(project))
    width = max((len(item.candidates) for item in items), default=MIN_CANDIDATES)
    out = io.StringIO()
    writer = csv_writer(out, lineterminator="\n")
    writer.writerow(["id", "category", "difficulty", "question", *[f"candidate{i}" for i in range(width)], "answer"])
    for item in items:
        candidates = item.candidates + [""] * (width - len(item.candidates))
        writer.writerow(
            [
                item.external_id or item.item_id,
                item.category,
                item.difficulty_number,
                item.question,
                *candidates,
                item.answer,
            ]
        )
    return out.getvalue().encode()


def trivia_record(item: TriviaItem) -> dict[str, Any]:
    return {
        "id": item.external_id or str(item.item_id),
        "category": item.category,
        "subset": item.subset,
        "difficulty": item.difficulty,
        "question": item.question,
        "candidates": item.candidates,
        "answer": item.answer,
        "target_question": item.target_question or None,
        "target_candidates": item.target_candidates or None,
    }


def trivia_export_jsonl(project: Project) -> bytes:
    return b"".join(orjson.dumps(trivia_record(item)) + b"\n" for item in _exported(project))


# The translator's queue


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
) -> TriviaItem:
    """The target-language version (same order, so the same correct index); any problem tag sends the item
    to the coordinator instead of finishing it."""
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
            new_source = _clean_item(item.project, current | dict(source))
            if new_source == current:
                new_source = None
        question = item.target_question if target_question is None else target_question
        candidates = item.target_candidates if target_candidates is None else target_candidates
        probe = TriviaItem(candidates=(new_source or {}).get("candidates", item.candidates))
        question, candidates = _check_target(probe, question, candidates)
        changes |= {"target_question": question, "target_candidates": candidates}
        if new_source is not None:
            changes |= _mc_fields(new_source)
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
            QAItem.objects.filter(pk=qa.pk).update(**_qa_fields(new_source), version=F("version") + 1, updated_at=now)
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
