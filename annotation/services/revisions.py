"""QA item revisions: the numbered copies of an item's content that review and history read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Max

from annotation.models import QAItem, QAItemRevision


def qa_item_revisions_create(
    *, items: list[QAItem], author: User | None, reason: str, last: Mapping[int, int] | None = None
) -> list[QAItemRevision]:
    """`qa_item_revision_create` for many items at once (a pair's items on submit): two queries however many.

    `last`: each item's last revision number, when the caller read it with the items (then one query); a
    number taken twice is refused by the (item, number) constraint, never written twice."""
    if last is None:
        last = dict(
            QAItemRevision.objects.filter(item__in=items)
            .order_by()
            .values("item_id")
            .annotate(number=Max("number"))
            .values_list("item_id", "number")
        )
    return QAItemRevision.objects.bulk_create(
        [
            QAItemRevision(
                item=item,
                number=last.get(item.pk, 0) + 1,
                question=item.question,
                answer_standard=item.answer_standard,
                answer_local=item.answer_local,
                spans=_revision_spans(item),
                content={},
                author=author,
                reason=reason,
            )
            for item in items
        ]
    )


def _revision_spans(item: QAItem) -> list[dict[str, Any]]:
    return [
        {"document": s.document, "start": s.start, "end": s.end, "text": s.text, "match": s.match}
        for s in item.spans.all()
    ]


def qa_item_revision_create(
    *, item: QAItem, author: User | None, reason: str, content: dict[str, Any] | None = None
) -> QAItemRevision:
    """Snapshot the item's current content (and spans) as its next revision.

    `content`: what another project kind keeps beside question and answer (a multiple-choice item's candidates).
    """
    last = item.revisions.order_by("-number").values_list("number", flat=True).first() or 0
    return QAItemRevision.objects.create(
        item=item,
        number=last + 1,
        question=item.question,
        answer_standard=item.answer_standard,
        answer_local=item.answer_local,
        spans=_revision_spans(item),
        content=content or {},
        author=author,
        reason=reason,
    )
