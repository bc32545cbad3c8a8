"""QA items: writing, editing, deleting and restoring them, with their evidence spans."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import nullcontext
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotation import lifecycle
from annotation.access import is_coordinator
from annotation.lifecycle import MAX_TEXT_FIELD, SpanInput, qa_item_text_check, qa_item_transition, spans_check
from annotation.local_checks import local_check_request
from annotation.models import EvidenceSpan, PagePair, QAItem
from annotation.services.pairs import require_assignee
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState


def require_authoring(pair: PagePair, user: User) -> None:
    require_assignee(pair, user)
    if pair.status != PagePair.Status.ANNOTATING:
        raise InvalidState(
            f"The pair is {pair.get_status_display().lower()}; QA items can only change while it is being annotated.",
            field="pair",
        )


def qa_item_create(*, pair: PagePair, user: User, kind: str = QAItem.Kind.LEAD, **content: Any) -> QAItem:
    """Start a new draft item on a pair being annotated (optionally with content, as the API allows)."""
    require_authoring(pair, user)
    project = pair.project
    # The pair funnel counts the pair's items when asked to (`item_counts=True`, the API's create does).
    counted: dict[str, int | None] = {
        QAItem.Kind.LEAD: getattr(pair, "live_lead_items", None),
        QAItem.Kind.DOCUMENT: getattr(pair, "live_document_items", None),
    }
    if kind == QAItem.Kind.LEAD:
        existing = counted[kind]
        if existing is None:
            existing = pair.items.alive().filter(kind=kind).count()
        if existing >= project.lead_qa_max:
            raise InvalidState(
                f"This project takes at most {project.lead_qa_max} lead-section QAs per pair.", field="kind"
            )
    elif kind == QAItem.Kind.DOCUMENT:
        if not project.collect_document_qa:
            raise InvalidState("This project does not collect document-level QAs.", field="kind")
        documents = counted[kind]
        if documents is None:
            documents = 1 if pair.items.alive().filter(kind=kind).exists() else 0
        if documents:
            raise InvalidState("A pair has at most one document-level QA.", field="kind")
    else:
        raise InvalidInput(f"Unknown item kind {kind!r}: use 'lead' or 'document'.", field="kind")
    # With content, the item is written as a save of the new draft would leave it: its second version.
    changes, document, spans = _content_checked(pair, kind, **content)
    item = QAItem(project=project, pair=pair, author=user, kind=kind, version=2 if content else 1, **changes)
    with transaction.atomic() if spans is not None else nullcontext():
        item.save(force_insert=True)
        if spans is not None:
            _spans_write(item, document, spans, replace=False)
        if content:
            local_check_request(item=item)  # a pending row; the model is asked after the commit, never here
    return item


def span_document_text(pair: PagePair, document: str) -> str:
    return pair.local_lead if document == EvidenceSpan.Document.LOCAL_LEAD else pair.local_text


def check_document_evidence(pair: PagePair, spans: Iterable[Any]) -> None:
    """A document-level QA needs a fact of its own: its evidence must not be a lead item's evidence.

    Where the local full text begins with the lead (as imported texts do), overlapping offsets count as reuse;
    the same evidence text counts everywhere.
    """
    lead_spans = list(
        EvidenceSpan.objects.filter(
            item__pair=pair, item__kind=QAItem.Kind.LEAD, item__deleted_at__isnull=True
        ).values_list("start", "end", "text")
    )
    offsets_comparable = bool(pair.local_lead) and pair.local_text.startswith(pair.local_lead)
    for index, span in enumerate(spans):
        for start, end, text in lead_spans:
            overlaps = offsets_comparable and start is not None and span.start < end and start < span.end
            if text == span.text or overlaps:
                raise InvalidInput(
                    f"spans[{index}]: this evidence is already used by a lead-section QA of this pair "
                    f"({text!r}); a document-level QA needs a fact of its own.",
                    field=f"spans[{index}]",
                )


def qa_item_update(
    *,
    item: QAItem,
    user: User,
    version: int,
    question: str | None = None,
    answer_standard: str | None = None,
    answer_local: str | None = None,
    spans: Iterable[Mapping[str, Any]] | None = None,
) -> QAItem:
    """Save a draft. Fields left as None keep their value; `spans` replaces all spans.

    The save applies only if the item is still at `version`; otherwise StaleEdit
    carries the newer item, and nothing the client sent is written over it.
    """
    pair = item.pair
    if item.author_id != user.pk:
        raise InvalidState("Only the item's author can edit it.", field="item")
    # A draft changes while its pair is being annotated; an item sent back by review changes on its own
    # (the pair stays submitted) until the author resubmits it (review.decisions.qa_item_resubmit).
    editable_status = QAItem.Status.NEEDS_REWRITE if item.status == QAItem.Status.NEEDS_REWRITE else QAItem.Status.DRAFT
    if editable_status == QAItem.Status.DRAFT:
        require_authoring(pair, user)
    changes, document, checked_spans = _content_checked(
        pair, item.kind, question=question, answer_standard=answer_standard, answer_local=answer_local, spans=spans
    )
    now = timezone.now()
    # One statement needs no transaction of its own; the spans are replaced together with the text.
    with transaction.atomic() if checked_spans is not None else nullcontext():
        qa_item_transition(
            item=item,
            allowed=[editable_status],
            expected_version=version,
            changes={**changes, "updated_at": now},
            doing="edited here",
        )
        if checked_spans is not None:
            _spans_write(item, document, checked_spans, replace=True)
    # The update applied to the row at `version`: the item is what was read with these changes, as written.
    for name, value in changes.items():
        setattr(item, name, value)
    item.version = version + 1
    item.updated_at = now
    if "question" in changes or "answer_standard" in changes:
        # A revised question or answer is checked again (a pending row; the model is asked after the commit).
        local_check_request(item=item)
    return item


TEXT_FIELD_LABELS = {
    "question": "the question",
    "answer_standard": "the answer in the standard language",
    "answer_local": "the answer in the local variety",
}


def qa_item_update_what_fits(
    *,
    item: QAItem,
    user: User,
    version: int,
    question: str | None = None,
    answer_standard: str | None = None,
    answer_local: str | None = None,
    spans: Iterable[Mapping[str, Any]] | None = None,
) -> tuple[QAItem, InvalidInput | None]:
    """The authoring screen's save: `qa_item_update` of everything sent except the text fields over the limit,
    which are left as they were and named in the returned error (per field, in `details`) for the screen to say
    at the field, where what was typed stays. Every other refusal is raised as `qa_item_update` raises it."""
    texts = {"question": question, "answer_standard": answer_standard, "answer_local": answer_local}
    over = {name: len(value) for name, value in texts.items() if isinstance(value, str) and len(value) > MAX_TEXT_FIELD}
    kept = {name: None if name in over else value for name, value in texts.items()}
    if not over or spans is not None or any(value is not None for value in kept.values()):
        item = qa_item_update(item=item, user=user, version=version, spans=spans, **kept)
    if not over:
        return item, None
    details = {
        name: [
            f"Not saved: {TEXT_FIELD_LABELS[name]} is {length} characters, {length - MAX_TEXT_FIELD} over the limit "
            f"of {MAX_TEXT_FIELD}. Shorten it here; the rest of the item is saved."
        ]
        for name, length in over.items()
    }
    first = next(iter(details))
    return item, InvalidInput(details[first][0], field=first, details=details)


def _content_checked(
    pair: PagePair,
    kind: str,
    *,
    question: str | None = None,
    answer_standard: str | None = None,
    answer_local: str | None = None,
    spans: Iterable[Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any], str, list[SpanInput] | None]:
    """An item's content as sent, checked: the text fields given, the spans' document, the spans (None: not sent)."""
    qa_item_text_check(question=question, answer_standard=answer_standard, answer_local=answer_local)
    document = EvidenceSpan.Document.LOCAL_LEAD if kind == QAItem.Kind.LEAD else EvidenceSpan.Document.LOCAL_TEXT
    checked_spans = None
    if spans is not None:
        checked_spans = spans_check(span_document_text(pair, document), spans, document=document)
        if kind == QAItem.Kind.DOCUMENT:
            check_document_evidence(pair, checked_spans)
    changes: dict[str, Any] = {
        name: value
        for name, value in (
            ("question", question),
            ("answer_standard", answer_standard),
            ("answer_local", answer_local),
        )
        if value is not None
    }
    return changes, document, checked_spans


def _spans_write(item: QAItem, document: str, spans: list[SpanInput], *, replace: bool) -> None:
    """Write the item's evidence spans (`replace`: instead of those it has)."""
    if replace:
        EvidenceSpan.objects.filter(item=item).delete()
    EvidenceSpan.objects.bulk_create(
        [
            EvidenceSpan(item=item, document=document, start=s.start, end=s.end, text=s.text, position=i)
            for i, s in enumerate(spans)
        ]
    )


def qa_item_delete(*, item: QAItem, user: User) -> None:
    """Delete an item softly: the row and its revisions stay, out of every list, queue, release and figure.

    An author deletes their own draft while the pair is being annotated; a coordinator deletes any item.
    A coordinator restores it from the project's Deleted list (`qa_item_restore`).
    """
    coordinator = is_coordinator(user, item.project)
    if not coordinator:
        if item.author_id != user.pk:
            raise InvalidState("Only the item's author or a coordinator can delete it.", field="item")
        require_authoring(item.pair, user)
        if item.status != QAItem.Status.DRAFT:
            raise InvalidState("Only a draft can be deleted by its author; ask a coordinator.", field="item")
    with transaction.atomic():
        if not lifecycle.qa_items_delete(items=QAItem.objects.filter(pk=item.pk, version=item.version), user=user):
            raise InvalidState("This item changed in the meantime; reload it.", field="item")
        audit.record(user, Action.ITEM_DELETED, item, project=item.project, status=item.status)


def qa_item_restore(*, item: QAItem, user: User) -> QAItem:
    """Bring a deleted item back as it was (coordinator): same status, revisions, judgments and history."""
    if item.deleted_at is None:
        raise InvalidState("This item is not deleted.", field="item")
    pair = PagePair.all_objects.get(pk=item.pair_id)
    if pair.deleted_at is not None:
        raise InvalidState("The item's pair is deleted: restore the pair, which brings its items back.", field="item")
    if item.status == QAItem.Status.DRAFT:
        if pair.status != PagePair.Status.ANNOTATING:
            raise InvalidState(
                f"A draft comes back only while its pair is being annotated; the pair is "
                f"{pair.get_status_display().lower()}.",
                field="item",
            )
        limit = item.project.lead_qa_max if item.kind == QAItem.Kind.LEAD else 1
        if pair.items.alive().filter(kind=item.kind).count() >= limit:
            raise InvalidState(f"The pair already has {limit} {item.get_kind_display()} item(s).", field="item")
    with transaction.atomic():
        if not lifecycle.qa_items_restore(items=QAItem.objects.filter(pk=item.pk, deleted_at=item.deleted_at)):
            raise InvalidState("This item changed in the meantime; reload the list.", field="item")
        audit.record(user, Action.ITEM_RESTORED, item, project=item.project, deleted_at=item.deleted_at)
    item.refresh_from_db()
    return item
