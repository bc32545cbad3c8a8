"""Reading items for the item list and detail (pages and API alike)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import QuerySet

from annotation.models import Project, QAItem
from review import history as review_history
from validation.models import (
    DomainLabel,
    SourceDomain,
    ValidationItem,
)
from validation.services.aggregates import judgment_record, judgments_aggregate
from validation.services.final_answer import final_answer_record, final_answers
from validation.services.projects import validation_settings


def validation_items_filtered(project: Project, *, label: str = "", status: str = "") -> QuerySet[ValidationItem]:
    """Live items with their validation data, filtered by their domain's label (or `unlabelled`) and status."""
    items = (
        ValidationItem.objects.filter(project=project, item__deleted_at__isnull=True)
        .select_related("item")
        .order_by("id")
    )
    labelled = SourceDomain.objects.filter(project=project)
    if label == "unlabelled":
        items = items.exclude(domain__in=labelled.values("domain"))
    elif label in DomainLabel.values:
        items = items.filter(domain__in=labelled.filter(label=label).values("domain"))
    if status in QAItem.Status.values:
        items = items.filter(item__status=status)
    return items


def attach_domain_labels(project: Project, vitems: Iterable[ValidationItem]) -> None:
    """Set `domain_label` on each item (its domain's label, or None) in one query."""
    vitems = list(vitems)
    labels = dict(
        SourceDomain.objects.filter(project=project, domain__in={v.domain for v in vitems}).values_list(
            "domain", "label"
        )
    )
    for vitem in vitems:
        vitem.domain_label = labels.get(vitem.domain)  # type: ignore[attr-defined]


def item_detail_context(vitem: ValidationItem) -> dict[str, Any]:
    """Revisions with the diff of each edit against the imported answer, judgments and their aggregate."""
    revisions = list(vitem.item.revisions.select_related("author").order_by("number"))
    judgments = list(vitem.item.validation_judgments.select_related("validator", "edit_revision").order_by("id"))
    criteria = validation_settings(vitem.project).likert_criteria
    final = final_answers([vitem.item_id]).get(vitem.item_id)
    return {
        "final_answer": final_answer_record(final, revisions[-1] if revisions else None),
        "revisions": [
            {
                "number": r.number,
                "reason": r.reason,
                "answer": r.answer_standard,
                "author": r.author.username if r.author else None,
                "created_at": r.created_at.isoformat(),
                "diff": review_history.text_diff(revisions[0].answer_standard, r.answer_standard),
            }
            for r in revisions
        ],
        "judgments": [judgment_record(j) for j in judgments],
        "aggregate": judgments_aggregate(judgments, criteria),
    }
