"""Item pages around review: history, reject, the author's rewrite, verification, document-level QAs."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.access import get_pair_for_user, project_access
from annotation.articles import article_blocks
from annotation.lifecycle import MAX_TEXT_FIELD
from annotation.models import EvidenceSpan, QAItem, Role
from annotation.services.items import qa_item_create
from annotation.views.common import report_error
from annotation.warnings import qa_item_warnings
from common.errors import InvalidInput, ServiceError
from common.requests import SignedInRequest
from review import decisions as review_decisions
from review import history as review_history
from review import verification as review_verification
from review.access import (
    author_access,
    get_item_for_author,
    get_item_for_coordinator,
    get_item_for_reader,
    get_item_for_reviewer,
    reader_access,
)
from review.models import Verification


def _int(request: HttpRequest, name: str) -> int:
    try:
        return int(request.POST.get(name, ""))
    except ValueError:
        raise InvalidInput(f"{name}: missing or not a number", field=name) from None


@login_required
def item_history(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    access = reader_access(request.user, slug, item_id)
    project, membership, item = access.project, access.membership, access.item
    entries, events = review_history.item_history(item)
    show_names = review_history.show_reviewer_names(project, membership, item, request.user)
    words = project.unit.words
    context = {
        "project": project,
        "item": item,
        "kind_text": words.kind_of(item),
        "source_text": words.source_of(item),
        "entries": entries,
        "events": events,
        "show_names": show_names,
        "verifications": item.verifications.select_related("verifier").order_by("number"),
        "can_reject": membership.is_coordinator
        and item.status in (QAItem.Status.SUBMITTED, QAItem.Status.NEEDS_REWRITE, QAItem.Status.ACCEPTED),
    }
    return render(request, "review/history.html", context)


@login_required
@require_POST
def item_reject(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    item = get_item_for_coordinator(request.user, slug, item_id)
    try:
        review_decisions.qa_item_reject(
            item=item, user=request.user, reason=request.POST.get("reason", ""), version=_int(request, "version")
        )
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, "Item rejected.")
    return redirect("item_history", slug, item.pk)


def _editor_context(item: QAItem) -> dict:
    """What the authoring item card (annotation/pair_detail.html#item-card) needs, for one item."""
    spans = list(item.spans.order_by("position", "id"))
    return {
        "item": item,
        "spans_json": json.dumps([{"start": s.start, "end": s.end, "text": s.text} for s in spans], ensure_ascii=False),
        "warnings": qa_item_warnings(item),
        "editable": True,
        "is_mine": True,
    }


@login_required
def item_rewrite(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    """The author's page for an item sent back: the flags and comments, the item editable, resubmit."""
    access = author_access(request.user, slug, item_id)
    project, item = access.project, access.item
    flags = review_history.latest_flags(item)
    editable = item.status == QAItem.Status.NEEDS_REWRITE
    context = {
        "project": project,
        "pair": item.pair,
        "flags": flags,
        "show_names": review_history.show_reviewer_names(project, access.membership, item, request.user),
        "text": item.pair.local_text if item.kind == QAItem.Kind.DOCUMENT else item.pair.local_lead,
        **_editor_context(item),
        "editable": editable,
        "verify": verification_panel(item) if item.kind == QAItem.Kind.LEAD else None,
        "max_text": MAX_TEXT_FIELD,
    }
    return render(request, "review/rewrite.html", context)


@login_required
@require_POST
def item_resubmit(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    item = get_item_for_author(request.user, slug, item_id)
    try:
        review_decisions.qa_item_resubmit(item=item, user=request.user, version=_int(request, "version"))
    except ServiceError as error:
        report_error(request, error)
        return redirect("item_rewrite", slug, item.pk)
    messages.success(request, "Resubmitted: the rewritten item goes back to review.")
    return redirect("my_items", slug)


@login_required
@require_POST
def item_reviewer_rewrite(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    item = get_item_for_reviewer(request.user, slug, item_id, role=Role.REVIEWER)
    try:
        review_decisions.qa_item_reviewer_rewrite(
            item=item,
            user=request.user,
            version=_int(request, "version"),
            question=request.POST.get("question"),
            answer_standard=request.POST.get("answer_standard"),
            answer_local=request.POST.get("answer_local"),
        )
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, "Rewritten: the item goes back to review, for someone else.")
    return redirect("item_history", slug, item.pk)


@login_required
def my_items(request: SignedInRequest, slug: str) -> HttpResponse:
    """An author's submitted items with their review outcome; items sent back come first."""
    access = project_access(request.user, slug, role=Role.ANNOTATOR)
    project = access.project
    items = review_history.author_items(project=project, user=request.user)
    return render(
        request, "review/my_items.html", {"project": project, "membership": access.membership, "items": items}
    )


# Full-document verification


def _posted_sentences(request: HttpRequest, item: QAItem) -> list[dict[str, Any]]:
    sentences: list[dict[str, Any]] = []
    for value in request.POST.getlist("sentence"):
        try:
            start, end = (int(part) for part in value.split(":", 1))
        except ValueError:
            sentences.append({"start": None, "end": None, "text": value})
            continue
        sentences.append({"start": start, "end": end, "text": item.pair.standard_text[start:end]})
    return sentences


_UNKNOWN: Any = object()


def latest_verifications(items: list[QAItem]) -> dict[int, Verification]:
    """The latest verification of each of these items, in one query (a page of items must not ask per item)."""
    latest: dict[int, Verification] = {}
    for verification in Verification.objects.filter(item__in=items).order_by("item_id", "number"):
        latest[verification.item_id] = verification
    return latest


def verification_panel(
    item: QAItem,
    *,
    query: str | None = None,
    note: str | None = None,
    error: ServiceError | None = None,
    current: Verification | None = _UNKNOWN,
) -> dict:
    """A lead item's verification where its answer is written: the latest result and note, a search of the
    standard full text (pre-filled from the answer) listing only the matching sentences and the ticked ones.

    `current`: the item's latest verification when the caller has it already (`latest_verifications`)."""
    if current is _UNKNOWN:
        current = review_verification.verification_current(item)
    outdated = current is not None and not current.is_current_for(item)
    # The sentences of a verification of an earlier answer are not ticked again: the new answer is searched anew.
    chosen = (
        {f"{s['start']}:{s['end']}" for s in current.sentences if s.get("start") is not None}
        if current and not outdated
        else set()
    )
    query = item.answer_standard if query is None else query
    results = [
        r
        for r in review_verification.verification_search(item.pair.standard_text, query)
        if r.match or r.sentence.key in chosen
    ]
    return {
        "item": item,
        "current": current,
        "outdated": outdated,  # recorded for an earlier answer: needs a new check
        "checked": current is not None and not outdated,
        "version": current.number if current else 0,
        "possible": bool(item.pair.standard_text),
        "query": query,
        "results": results,
        "matches": sum(1 for r in results if r.match),
        "chosen": chosen,
        "note": (current.note if current else "") if note is None else note,
        "error": error,
    }


@login_required
def item_verify(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    """Search the standard full text (pre-filled with the answer) and record found, with sentences, or not found.

    The authoring page shows the same as a panel in each lead item (`panel=1`; htmx swaps it in place).
    """
    item = get_item_for_reader(request.user, slug, item_id)
    project = item.project
    status = 200
    in_panel = request.GET.get("panel") == "1" or request.POST.get("panel") == "1"
    error: ServiceError | None = None
    if request.method == "POST":
        try:
            review_verification.verification_record(
                item=item,
                user=request.user,
                result=request.POST.get("result", ""),
                # Ticked sentences support a found result; pressing another button means that result.
                sentences=_posted_sentences(request, item) if request.POST.get("result") == "found" else [],
                query=request.POST.get("q", ""),
                note=request.POST.get("note", ""),
                version=_int(request, "version"),
                answer=request.POST.get("answer"),
            )
        except ServiceError as caught:
            error = caught
            status = caught.status_code
        else:
            if not request.htmx:
                messages.success(request, "Verification recorded.")
                if in_panel and item.status == QAItem.Status.NEEDS_REWRITE:
                    return redirect(reverse("item_rewrite", args=[slug, item.pk]) + f"#item-{item.pk}-verify")
                if in_panel:
                    return redirect(f"{item.pair.get_absolute_url()}#item-{item.pk}-verify")
                return redirect("item_verify", slug, item.pk)
    query = request.GET.get("q", request.POST.get("q", item.answer_standard))
    if in_panel and request.GET.get("whole") == "1":  # the whole standard article, read in the panel
        return render(
            request,
            "annotation/_article.html",
            {
                "blocks": article_blocks(item.pair.standard_text),
                "lang": project.standard_language,
                "direction": project.standard.direction,
            },
        )
    if in_panel and request.htmx:
        note = request.POST.get("note") if error else None
        context = {
            "project": project,
            "pair": item.pair,
            "verify": verification_panel(item, query=query, note=note, error=error),
            "max_text": MAX_TEXT_FIELD,
        }
        fragment = "verify-results" if request.method == "GET" else "verify-panel"
        return render(request, f"annotation/pair_detail.html#{fragment}", context, status=status)
    if error is not None:
        report_error(request, error)
    current = review_verification.verification_current(item)
    chosen = {f"{s['start']}:{s['end']}" for s in current.sentences} if current else set()
    results = review_verification.verification_search(item.pair.standard_text, query)
    context = {
        "project": project,
        "item": item,
        "pair": item.pair,
        "query": query,
        "results": results,
        "matches": sum(1 for r in results if r.match),
        "chosen": chosen,
        "current": current,
        "outdated": current is not None and not current.is_current_for(item),
        "version": current.number if current else 0,
        "possible": bool(item.pair.standard_text),
        "is_lead": item.kind == QAItem.Kind.LEAD,
        "results_choices": Verification.Result.choices,
        "note": request.POST.get("note", "") if error else (current.note if current else ""),
    }
    template = "review/verify.html#search-results" if request.htmx and request.method == "GET" else "review/verify.html"
    return render(request, template, context, status=status)


# Document-level QAs


@login_required
def document_qa(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
    """Author the pair's one document-level QA on the local full text, with a time box."""
    pair = get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
    project = pair.project
    item = (
        pair.items.alive()
        .filter(kind=QAItem.Kind.DOCUMENT)
        .prefetch_related(Prefetch("spans", queryset=EvidenceSpan.objects.order_by("position", "id")))
        .first()
    )
    if request.method == "POST" and item is None:
        try:
            item = qa_item_create(pair=pair, user=request.user, kind=QAItem.Kind.DOCUMENT)
        except ServiceError as error:
            report_error(request, error)
        return redirect("document_qa", slug, pair.pk)
    context: dict[str, Any] = {"project": project, "pair": pair, "item": item, "text": pair.local_text}
    if item is not None:
        item.pair = pair
        item.project = project
        context.update(_editor_context(item))
        context["editable"] = (item.status in (QAItem.Status.DRAFT,) and pair.is_editable) or (
            item.status == QAItem.Status.NEEDS_REWRITE
        )
        context["time_box"] = review_history.time_box(item)
    context["collects"] = project.collect_document_qa
    return render(request, "review/document_qa.html", context)
