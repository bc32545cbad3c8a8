"""Submitting a pair: its complete items go on to review."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from annotation.lifecycle import items_route, qa_items_transition
from annotation.models import PagePair, QAItem, QAItemRevision
from annotation.queries import items_with_spans
from annotation.services.items import check_document_evidence, require_authoring
from annotation.services.pairs import pair_refresh_after_update, pair_update_versioned
from annotation.services.revisions import qa_item_revisions_create
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState


def pair_submit(*, pair: PagePair, user: User) -> PagePair:
    """Send a pair's items on to review, once there are enough complete items."""
    require_authoring(pair, user)
    project = pair.project
    # The items with their spans and the number of each one's last revision.
    last_revision = QAItemRevision.objects.filter(item=OuterRef("pk")).order_by("-number").values("number")[:1]
    items = items_with_spans(
        QAItem.objects.alive()
        .filter(pair=pair)
        .select_related("author")
        .annotate(last_revision=Subquery(last_revision))
    )
    lead_items = [item for item in items if item.kind == QAItem.Kind.LEAD]
    errors: dict[str, list[str]] = {}
    if len(lead_items) < project.lead_qa_min:
        errors["items"] = [
            f"this project takes {project.lead_qa_range} lead-section QAs per pair; this pair has {len(lead_items)}"
        ]
    for number, item in enumerate(items, start=1):
        where = f"items[{number}]"
        for field, label in (
            ("question", "question"),
            ("answer_standard", "answer in the standard language"),
            ("answer_local", "answer in the local variety"),
        ):
            if not getattr(item, field).strip():
                errors.setdefault(f"{where}.{field}", []).append(f"item {number}: the {label} is empty")
        if not item.spans.all():
            errors.setdefault(f"{where}.spans", []).append(f"item {number}: no evidence is highlighted")
        elif item.kind == QAItem.Kind.DOCUMENT:  # a lead item may have taken the same evidence since
            try:
                check_document_evidence(pair, item.spans.all())
            except InvalidInput as error:
                errors.setdefault(f"{where}.spans", []).append(f"item {number}: {error.message}")
    if project.verification_required:
        checked = _checked_answers([item.pk for item in lead_items])
        for number, item in enumerate(items, start=1):
            if item.kind != QAItem.Kind.LEAD:
                continue
            if item.pk not in checked:
                problem = "not verified on the standard page yet"
            elif checked[item.pk] not in (None, item.answer_standard):
                problem = "the answer changed after it was verified: check it again on the standard page"
            else:
                continue
            errors.setdefault(f"items[{number}].verification", []).append(f"item {number}: {problem}")
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"Cannot submit yet: {errors[first][0]}.", field=first, details=errors)
    now = timezone.now()
    changes = {"status": PagePair.Status.SUBMITTED, "submitted_at": now, "updated_at": now}
    drafts = [item for item in items if item.status == QAItem.Status.DRAFT]
    with transaction.atomic():
        known = pair_update_versioned(pair, {"status": PagePair.Status.ANNOTATING, "assignee_id": user.pk}, changes)
        if known is None:
            raise InvalidState("This pair changed in the meantime; reload it.", field="pair")
        moved = qa_items_transition(
            where={"pair_id": pair.pk},
            allowed=[QAItem.Status.DRAFT],
            to=QAItem.Status.SUBMITTED,
            changes={"submitted_at": now, "updated_at": now},
        )
        known = known and moved == len(drafts)
        for item in items:
            item.project = project
        revisions = qa_item_revisions_create(
            items=items,
            author=user,
            reason=QAItemRevision.Reason.SUBMITTED,
            last={item.pk: item.last_revision or 0 for item in items},  # type: ignore[attr-defined]
        )
        items_route(items=items, actor=user, revisions=revisions)
        audit.record(user, Action.PAIR_SUBMITTED, pair, project=project, items=len(items))
    if known:  # the pair and items as submitted, for the caller to show (`live_items`, as PairDetailOutput reads)
        pair_refresh_after_update(pair, changes, known)
        for item in drafts:
            item.status, item.submitted_at, item.updated_at = QAItem.Status.SUBMITTED, now, now
            item.version += 1
        pair.live_items = items  # type: ignore[attr-defined]
    else:
        pair.refresh_from_db()
    return pair


def _checked_answers(item_ids: list[int]) -> dict[int, str | None]:
    """The answer text each item's latest full-document verification checked (None: any answer will do, as for
    "not possible" or a verification recorded before the checked text was kept); items never verified are absent."""
    latest: dict[int, tuple[int, str | None]] = {}
    rows = QAItem.objects.filter(pk__in=item_ids, verifications__isnull=False).values_list(
        "pk", "verifications__number", "verifications__result", "verifications__answer"
    )
    for pk, number, result, answer in rows:
        if pk not in latest or number > latest[pk][0]:
            latest[pk] = (number, None if result == "not_possible" else answer)
    return {pk: answer for pk, (_, answer) in latest.items()}
