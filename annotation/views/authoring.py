"""The annotator's screens: next pair, screening, authoring QA items, submitting."""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation import services
from annotation.access import get_item_for_user, get_pair_for_user, get_project_for_user
from annotation.errors import InvalidInput, ServiceError, StaleEdit
from annotation.forms import ScreeningForm
from annotation.models import EvidenceSpan, PagePair, QAItem, Role
from annotation.views.common import report_error
from annotation.warnings import qa_item_warnings


@login_required
@require_POST
def queue_next(request: HttpRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.ANNOTATOR)
    pair = services.pair_claim_next(project=project, user=request.user)
    if pair is None:
        messages.info(request, "No pairs are waiting: the pool is empty for now.")
        return redirect("project_detail", project.slug)
    return redirect("pair_detail", project.slug, pair.pk)


def _pair_items(pair: PagePair) -> list[QAItem]:
    items = list(
        pair.items.alive()
        .select_related("author")
        .prefetch_related(Prefetch("spans", queryset=EvidenceSpan.objects.order_by("position", "id")))
    )
    for item in items:
        item.pair = pair
    return items


def _item_context(item: QAItem) -> dict:
    return {
        "item": item,
        "spans_json": json.dumps(
            [{"start": s.start, "end": s.end, "text": s.text} for s in item.spans.all()], ensure_ascii=False
        ),
        "warnings": qa_item_warnings(item),
    }


@login_required
def pair_detail(request: HttpRequest, slug: str, pair_id: int) -> HttpResponse:
    pair = get_pair_for_user(request.user, slug, pair_id)
    project = pair.project
    items = _pair_items(pair)
    is_mine = pair.assignee_id == request.user.pk
    context = {
        "project": project,
        "pair": pair,
        "is_mine": is_mine,
        "editable": is_mine and pair.is_editable,
        "items": [_item_context(item) for item in items],
        "lead_count": sum(1 for item in items if item.kind == QAItem.Kind.LEAD),
        "screening_form": ScreeningForm(initial={"decision": pair.screening_decision or None}),
        "screenings": pair.screenings.select_related("annotator"),
    }
    return render(request, "annotation/pair_detail.html", context)


@login_required
@require_POST
def pair_screen(request: HttpRequest, slug: str, pair_id: int) -> HttpResponse:
    pair = get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
    form = ScreeningForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a screening decision.")
        return redirect("pair_detail", slug, pair.pk)
    try:
        services.pair_screen(pair=pair, user=request.user, **form.cleaned_data)
    except ServiceError as error:
        report_error(request, error)
        return redirect("pair_detail", slug, pair.pk)
    if pair.status == PagePair.Status.EXCLUDED:
        messages.success(request, "Pair excluded. Here is the next one.")
        return queue_next(request, slug)
    return redirect("pair_detail", slug, pair.pk)


@login_required
@require_POST
def pair_submit(request: HttpRequest, slug: str, pair_id: int) -> HttpResponse:
    pair = get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
    try:
        services.pair_submit(pair=pair, user=request.user)
    except ServiceError as error:
        report_error(request, error)
        return redirect("pair_detail", slug, pair.pk)
    messages.success(request, "Submitted for review. Thank you!")
    return redirect("project_detail", slug)


@login_required
@require_POST
def pair_activity(request: HttpRequest, slug: str, pair_id: int) -> HttpResponse:
    """Active-time heartbeat from the page (sent with sendBeacon, so the answer is not read)."""
    pair = get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
    item = None
    if request.POST.get("item"):
        item = get_item_for_user(request.user, slug, int(request.POST["item"]), role=Role.ANNOTATOR)
    try:
        seconds = int(request.POST.get("seconds", "0"))
        services.pair_record_activity(pair=pair, user=request.user, seconds=seconds, item=item)
    except (ValueError, ServiceError) as error:
        return JsonResponse({"detail": str(error)}, status=400)
    return HttpResponse(status=204)


@login_required
@require_POST
def item_create(request: HttpRequest, slug: str, pair_id: int) -> HttpResponse:
    pair = get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
    kind = request.POST.get("kind", QAItem.Kind.LEAD)
    try:
        item = services.qa_item_create(pair=pair, user=request.user, kind=kind)
    except ServiceError as error:
        if request.htmx:
            return render(request, "annotation/pair_detail.html#item-error", {"error": error}, status=200)
        report_error(request, error)
        return redirect("pair_detail", slug, pair.pk)
    if request.htmx:
        context = {"project": pair.project, "pair": pair, "editable": True, **_item_context(item)}
        return render(request, "annotation/pair_detail.html#item-card", context)
    return redirect(f"{pair.get_absolute_url()}#item-{item.pk}")


def _parse_spans(raw: str | None) -> list | None:
    if raw is None or raw == "":
        return None
    try:
        spans = json.loads(raw)
    except json.JSONDecodeError as error:
        raise InvalidInput(f"spans: not valid JSON ({error.msg} at position {error.pos})", field="spans") from None
    if not isinstance(spans, list):
        raise InvalidInput("spans: must be a list of {start, end, text}", field="spans")
    return spans


@login_required
@require_POST
@vary_on_headers("HX-Request")
def item_save(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    """Autosave of a draft (htmx) or the plain form's save button."""
    item = get_item_for_user(request.user, slug, item_id, role=Role.ANNOTATOR)
    status = 200
    context: dict = {"project": item.project, "pair": item.pair, "editable": True}
    try:
        version = int(request.POST.get("version", ""))
        item = services.qa_item_update(
            item=item,
            user=request.user,
            version=version,
            question=request.POST.get("question"),
            answer_standard=request.POST.get("answer_standard"),
            answer_local=request.POST.get("answer_local"),
            spans=_parse_spans(request.POST.get("spans")),
        )
        context.update(_item_context(item))
    except ValueError:
        context.update(item=item, error=InvalidInput("version: missing or not a number", field="version"))
        status = 400
    except StaleEdit as error:
        context.update(item=item, error=error, current=error.current)
        status = 409
    except ServiceError as error:
        context.update(item=item, error=error)
        status = error.status_code
    if not request.htmx:
        if "error" in context:
            report_error(request, context["error"])
        else:
            messages.success(request, "Saved.")
        return redirect(f"{item.pair.get_absolute_url()}#item-{item.pk}")
    return render(request, "annotation/pair_detail.html#item-saved", context, status=status)


@login_required
@require_POST
def item_delete(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    item = get_item_for_user(request.user, slug, item_id)  # its author (a draft) or a coordinator (any item)
    try:
        services.qa_item_delete(item=item, user=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        if request.htmx:
            return HttpResponse("")
        messages.success(request, "Item deleted.")
    return redirect("pair_detail", slug, item.pair_id)
