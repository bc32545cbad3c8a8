"""Duplicate sets and merging them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation import lifecycle
from annotation.models import ItemEvent, Project, QAItem
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState
from review.models import ReviewSlot
from validation.models import (
    ValidationItem,
)


def duplicate_groups(project: Project) -> list[dict[str, Any]]:
    """Sets of live items that repeat each other, first item first: what a coordinator merges."""
    rows = (
        ValidationItem.objects.filter(project=project, item__deleted_at__isnull=True, merged_into__isnull=True)
        .select_related("item")
        .order_by("id")
    )
    by_id = {row.pk: row for row in rows}
    groups: dict[int, list[ValidationItem]] = defaultdict(list)
    for row in by_id.values():
        if row.duplicate_of_id is not None and row.duplicate_of_id in by_id:
            root = row.duplicate_of_id
            while (parent := by_id[root].duplicate_of_id) is not None and parent in by_id:
                root = parent
            groups[root].append(row)
    return [{"keep": by_id[root], "duplicates": members} for root, members in groups.items()]


def validation_item_merge(
    *, project: Project, keep: ValidationItem, duplicate: ValidationItem, user: User
) -> ValidationItem:
    """Merge a duplicate into the item kept: the duplicate's item leaves every list (softly) and its slots close.

    Its source URLs are added to the kept item's; nothing is deleted.
    """
    if keep.pk == duplicate.pk:
        raise InvalidInput("An item cannot be merged into itself.", field="duplicate")
    if keep.project_id != project.pk or duplicate.project_id != project.pk:
        raise InvalidInput("Both items must belong to this project.", field="duplicate")
    now = timezone.now()
    with transaction.atomic():
        if not lifecycle.qa_items_delete(items=QAItem.objects.filter(pk=duplicate.item_id), user=user, at=now):
            raise InvalidState("That item was merged or removed already.", field="duplicate")
        if QAItem.objects.filter(pk=keep.item_id, deleted_at__isnull=False).exists():
            raise InvalidState("The item to keep was merged or removed.", field="keep")
        ReviewSlot.objects.filter(item_id=duplicate.item_id, status=ReviewSlot.Status.OPEN).update(
            status=ReviewSlot.Status.CANCELLED, version=F("version") + 1
        )
        urls = list(dict.fromkeys([*keep.source_urls, *duplicate.source_urls]))
        ValidationItem.objects.filter(pk=keep.pk).update(source_urls=urls)
        ValidationItem.objects.filter(pk=duplicate.pk).update(merged_into=keep)
        item = QAItem.objects.get(pk=duplicate.item_id)
        audit.record(user, Action.VALIDATION_MERGED, item, project=project, merged_into=keep.item_id)
        lifecycle.item_event_record(
            item=item,
            actor=user,
            action=ItemEvent.Action.REJECTED,
            before=item.status,
            after=item.status,
            note=f"merged into item {keep.item_id} as a duplicate",
        )
    keep.refresh_from_db()
    return keep


MERGE_ALL = "all"
MERGE_EXACT = "exact"


def validation_duplicates_merge_all(
    *, project: Project, user: User, which: str = MERGE_ALL, keep: Sequence[int] | None = None
) -> dict[str, int]:
    """Merge the duplicates of every set into its first item at once (`which="exact"`: only the exact repeats;
    `keep`: only the sets kept by these item ids). Each merge is `validation_item_merge`, in one transaction.
    """
    if which not in (MERGE_ALL, MERGE_EXACT):
        raise InvalidInput(f"which: use {MERGE_ALL} or {MERGE_EXACT}.", field="which")
    wanted = set(keep) if keep is not None else None
    merged = sets = 0
    with transaction.atomic():
        for group in duplicate_groups(project):
            kept: ValidationItem = group["keep"]
            if wanted is not None and kept.item_id not in wanted:
                continue
            members = [
                duplicate
                for duplicate in group["duplicates"]
                if which == MERGE_ALL or duplicate.normalised_question == kept.normalised_question
            ]
            for duplicate in members:
                kept = validation_item_merge(project=project, keep=kept, duplicate=duplicate, user=user)
            merged += len(members)
            sets += bool(members)
    return {"merged": merged, "sets": sets, "left": sum(len(g["duplicates"]) for g in duplicate_groups(project))}
