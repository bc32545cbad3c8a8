"""The annotator's screens: next pair, screening, authoring QA items, submitting."""

import json
import re
from datetime import datetime
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation import services
from annotation.access import get_item_for_user, get_pair_for_user, get_project_for_user, membership_of, pair_access
from annotation.forms import ScreeningForm
from annotation.lifecycle import MAX_TEXT_FIELD
from annotation.local_checks import local_check_again, local_checks_of
from annotation.local_checks import panel as local_check_panel
from annotation.models import Membership, PagePair, PairSkip, QAItem, Role, Screening
from annotation.queries import annotator_progress, pair_items_with_spans, pair_screenings
from annotation.review_hooks import review_hooks
from annotation.views.common import report_error
from annotation.warnings import ProjectQuestions, project_questions, qa_item_warnings
from common import jsontext
from common.errors import InvalidInput, ServiceError, StaleEdit
from common.requests import SignedInRequest

SESSION_STARTED = "localqa:work-started"  # when this signed-in session first opened a pair
LAST_SKIP = "localqa:last-skip"  # the pair this session skipped last, offered for an undo on the next page
TEXT_FIELDS = ("question", "answer_standard", "answer_local")


@login_required
@require_POST
def queue_next(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.ANNOTATOR)
    pair = services.pair_claim_next(project=project, user=request.user)
    if pair is None:
        messages.info(request, "No pairs are waiting: the pool is empty for now.")
        return redirect("project_detail", project.slug)
    return redirect("pair_detail", project.slug, pair.pk)


def _item_context(
    item: QAItem,
    verification: dict | None = None,
    questions: ProjectQuestions | None = None,
    checks: dict[int, Any] | None = None,
) -> dict:
    checks = local_checks_of([item]) if checks is None else checks
    return {
        "local": local_check_panel(checks.get(item.pk), item),
        "item": item,
        "spans_json": json.dumps(
            [{"start": s.start, "end": s.end, "text": s.text} for s in item.spans.all()], ensure_ascii=False
        ),
        "warnings": qa_item_warnings(item, questions=questions),
        "verify": verification,
    }


def _session_started(request: SignedInRequest) -> datetime:
    started = request.session.get(SESSION_STARTED)
    if started is None:
        request.session[SESSION_STARTED] = timezone.now().isoformat()
        return timezone.now()
    return datetime.fromisoformat(started)


# What a refused save of the plain form sets in an item's entry (`_refused_save_page`): none on a page shown as is.
_NOT_REFUSED: dict[str, Any] = {
    "error": None,
    "over_long": None,
    "current": None,
    "mine": None,
    "sent_version": None,
    "field_notes": {},
}
# The places of an item a problem is shown at: its text fields, its evidence, its verification.
NOTE_FIELDS = (*TEXT_FIELDS, "spans", "verification")
_ITEM_PROBLEM = re.compile(r"^items\[(\d+)\]\.(\w+)$")


def _field_notes(error: ServiceError | None) -> dict[str, str]:
    """A refusal's problems by the item field they concern, to be said at that field."""
    if error is None:
        return {}
    details = error.details if isinstance(error.details, dict) else {}
    notes = {name: str(problems[0]) for name, problems in details.items() if name in NOTE_FIELDS and problems}
    if error.field in NOTE_FIELDS and error.field not in notes:
        notes[str(error.field)] = error.message
    return notes


def _pair_context(request: SignedInRequest, pair: PagePair, membership: Membership | None) -> dict:
    """Everything the authoring page shows; the item entries can be changed (a refused save's text) before rendering."""
    # review builds on annotation, not the other way round: it registers the panel (annotation/review_hooks.py)
    latest_verifications, verification_panel = review_hooks().latest_verifications, review_hooks().verification_panel
    project = pair.project
    items = pair_items_with_spans(pair)
    is_mine = pair.assignee_id == request.user.pk
    editable = is_mine and pair.is_editable
    leads = [item for item in items if item.kind == QAItem.Kind.LEAD]
    lead_count = len(leads)
    latest = latest_verifications(leads) if is_mine and leads else {}
    # The project's questions read once for the page, not once for each item (the near-duplicate advice), and only
    # when an item has a question to compare.
    questions = project_questions(project) if any(item.question.strip() for item in items) else None
    checks = local_checks_of(items)
    entries = [
        {
            **_item_context(
                item,
                verification_panel(item, current=latest.get(item.pk))
                if item.kind == QAItem.Kind.LEAD and is_mine
                else None,
                questions,
                checks,
            ),
            **_NOT_REFUSED,
        }
        for item in items
    ]
    return {
        "membership": membership,
        "project": project,
        "pair": pair,
        "is_mine": is_mine,
        "editable": editable,
        "items": entries,
        "lead_count": lead_count,
        "can_add_lead": lead_count < project.lead_qa_max,
        "unverified": sum(1 for entry in entries if entry["verify"] and not entry["verify"]["checked"]),
        "max_text": MAX_TEXT_FIELD,
        "has_local_text": bool(pair.local_text),
        "has_document_item": any(item.kind == QAItem.Kind.DOCUMENT for item in items),
        "screening_form": ScreeningForm(),
        "screenings": pair_screenings(pair),
        "screening_label": Screening.Decision(pair.screening_decision).label.lower() if pair.screening_decision else "",
        "progress": (
            annotator_progress(project=project, user=request.user, session_started=_session_started(request))
            if is_mine
            else None
        ),
    }


@login_required
def pair_detail(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
    access = pair_access(request.user, slug, pair_id)
    context = _pair_context(request, access.pair, access.membership)
    # The pair skipped just before this one was handed out: offered once, for an undo by key or button.
    last_skip = request.session.get(LAST_SKIP)
    if last_skip and last_skip.get("pair") != access.pair.pk and context["is_mine"]:
        request.session.pop(LAST_SKIP)
        context["last_skip"] = last_skip
    return render(request, "annotation/pair_detail.html", context)


@login_required
@require_POST
def pair_screen(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
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
def pair_submit(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
    """Submit the pair; with `then=next`, go straight on to the next pair of the queue."""
    pair = get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
    try:
        services.pair_submit(pair=pair, user=request.user)
    except InvalidInput as error:
        return _refused_submit_page(request, pair, error)
    except ServiceError as error:
        report_error(request, error)
        return redirect("pair_detail", slug, pair.pk)
    messages.success(request, "Submitted for review. Thank you!")
    if request.POST.get("then") == "next":
        return queue_next(request, slug)
    return redirect("project_detail", slug)


def _refused_submit_page(request: SignedInRequest, pair: PagePair, error: InvalidInput) -> HttpResponse:
    """The pair page again, each problem of the refused submit at the item and field it concerns (the items are
    numbered as the page lists them); what concerns no one item, above the submit buttons."""
    context = _pair_context(request, pair, membership_of(request.user, pair.project))
    details = error.details if isinstance(error.details, dict) else {error.field or "pair": [error.message]}
    general: list[str] = []
    for key, problems in details.items():
        found = _ITEM_PROBLEM.match(key)
        number = int(found.group(1)) if found else 0
        if found and 0 < number <= len(context["items"]) and found.group(2) in NOTE_FIELDS:
            notes = context["items"][number - 1]["field_notes"] = dict(context["items"][number - 1]["field_notes"])
            message = re.sub(r"^item \d+: ", "", str(problems[0]))
            notes[found.group(2)] = message[:1].upper() + message[1:] + "."
        else:
            general.extend(str(problem) for problem in problems)
    context["submit_problems"] = general
    return render(request, "annotation/pair_detail.html", context, status=400)


@login_required
@require_POST
def pair_give_back(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
    """Skip a pair: it goes back to the queue (not to this annotator again), with an optional reason."""
    pair = get_pair_for_user(request.user, slug, pair_id, role=Role.ANNOTATOR)
    try:
        services.pair_give_back(pair=pair, user=request.user, reason=request.POST.get("reason", ""))
    except ServiceError as error:
        report_error(request, error)
        return redirect("pair_detail", slug, pair.pk)
    messages.success(request, "Pair given back to the queue.")
    request.session[LAST_SKIP] = {"pair": pair.pk, "title": pair.local_title}
    if request.POST.get("then") == "next":
        return queue_next(request, slug)
    return redirect("project_detail", slug)


@login_required
@require_POST
def pair_skip_undo(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
    """Take back this person's skip of a pair: it is theirs again if nobody took it, else it waits for them."""
    project = get_project_for_user(request.user, slug, role=Role.ANNOTATOR)
    skip = PairSkip.objects.skipped_by(request.user.pk).filter(pair_id=pair_id, pair__project=project).last()
    if skip is None:
        raise Http404("No skip of yours to take back for this pair.")
    request.session.pop(LAST_SKIP, None)
    try:
        pair = services.pair_skip_undo(skip=skip, user=request.user)
    except ServiceError as error:
        report_error(request, error)
        return redirect("project_detail", slug)
    if pair is None:
        messages.info(request, "Skip taken back. Someone else holds that pair now: it comes to you when it is free.")
        return redirect("project_detail", slug)
    messages.success(request, "Skip taken back: the pair is yours again.")
    return redirect("pair_detail", slug, pair.pk)


@login_required
@require_POST
def pair_activity(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
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
def item_create(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
    access = pair_access(request.user, slug, pair_id, role=Role.ANNOTATOR, item_counts=True)
    pair = access.pair
    kind = request.POST.get("kind", QAItem.Kind.LEAD)
    try:
        item = services.qa_item_create(pair=pair, user=request.user, kind=kind)
    except ServiceError as error:
        if request.htmx:
            return render(request, "annotation/pair_detail.html#item-error", {"error": error}, status=200)
        report_error(request, error)
        return redirect("pair_detail", slug, pair.pk)
    if request.htmx:
        verification_panel = review_hooks().verification_panel
        context = {
            "project": pair.project,
            "membership": access.membership,
            "pair": pair,
            "editable": True,
            "is_mine": True,
            "max_text": MAX_TEXT_FIELD,
            **_item_context(item, verification_panel(item) if item.kind == QAItem.Kind.LEAD else None),
        }
        return render(request, "annotation/pair_detail.html#item-card", context)
    return redirect(f"{pair.get_absolute_url()}#item-{item.pk}")


def _parse_spans(raw: str | None) -> list | None:
    if raw is None or raw == "":
        return None
    try:
        spans = json.loads(raw)
    except json.JSONDecodeError as error:
        raise InvalidInput(f"spans: not valid JSON ({error.msg} at position {error.pos})", field="spans") from None
    except RecursionError:
        raise InvalidInput(f"spans: {jsontext.TOO_DEEP_MESSAGE}", field="spans") from None
    if not isinstance(spans, list):
        raise InvalidInput("spans: must be a list of {start, end, text}", field="spans")
    return spans


@login_required
@require_POST
@vary_on_headers("HX-Request")
def item_save(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    """Autosave of a draft (htmx) or the plain form's save button."""
    item = get_item_for_user(request.user, slug, item_id, role=Role.ANNOTATOR)
    status = 200
    context: dict = {"project": item.project, "pair": item.pair, "editable": True}
    try:
        # "Keep mine as a new version" after a conflict saves over the version it was shown.
        version = int(request.POST.get("keep_mine_version") or request.POST.get("version", ""))
        item, over_long = services.qa_item_update_what_fits(
            item=item,
            user=request.user,
            version=version,
            question=request.POST.get("question"),
            answer_standard=request.POST.get("answer_standard"),
            answer_local=request.POST.get("answer_local"),
            spans=_parse_spans(request.POST.get("spans")),
        )
        context.update(_item_context(item), over_long=over_long, field_notes=_field_notes(over_long))
    except ValueError:
        context.update(item=item, error=InvalidInput("version: missing or not a number", field="version"))
        status = 400
    except StaleEdit as error:
        sent = {name: request.POST.get(name, getattr(item, name)) for name in TEXT_FIELDS}
        context.update(item=item, error=error, current=error.current, mine=sent)
        status = 409
    except ServiceError as error:
        context.update(item=item, error=error, field_notes=_field_notes(error))
        status = error.status_code
    context["text_fields"] = TEXT_FIELDS
    if not request.htmx:
        if "error" not in context and context.get("over_long") is None:
            messages.success(request, "Saved.")
            return redirect(f"{item.pair.get_absolute_url()}#item-{item.pk}")
        return _refused_save_page(request, item, context, status)
    return render(request, "annotation/pair_detail.html#item-saved", context, status=status)


def _refused_save_page(request: SignedInRequest, item: QAItem, refused: dict, status: int) -> HttpResponse:
    """The plain form's refused save: the page again, the item's form holding what was sent, the error beside it.

    On a conflict the newer version is shown next to the sent text, which is never lost.
    """
    context = _pair_context(request, item.pair, membership_of(request.user, item.project))
    sent = {name: request.POST[name] for name in TEXT_FIELDS if name in request.POST}
    entries = [entry for entry in context["items"] if entry["item"].pk == item.pk]
    if not entries or entries[0]["item"].kind != QAItem.Kind.LEAD:  # deleted meanwhile: no form to show it in
        report_error(request, refused.get("error") or refused["over_long"])
        return redirect(f"{item.pair.get_absolute_url()}#item-{item.pk}")
    saved = refused.get("over_long") is not None and refused.get("error") is None  # the rest of it was saved
    for entry in entries:
        for name, value in sent.items():
            setattr(entry["item"], name, value)
        if "spans" in request.POST:
            entry["spans_json"] = request.POST["spans"]
        entry.update(
            error=refused.get("error"),
            over_long=refused.get("over_long"),
            current=refused.get("current"),
            mine=sent,
            sent_version=str(refused["item"].version) if saved else request.POST.get("version"),
            field_notes=refused.get("field_notes") or {},
        )
    return render(request, "annotation/pair_detail.html", context, status=status)


@login_required
@vary_on_headers("HX-Request")
def item_local_check(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    """The item's local-knowledge check as the item card shows it (htmx polls it while the model is asked);
    POST: its author asks for the check again. Without htmx, back to the item on its pair's page."""
    item = get_item_for_user(request.user, slug, item_id)  # its author, or a coordinator
    if request.method == "POST":
        try:
            local_check_again(item=item, user=request.user)
        except ServiceError as error:
            if not request.htmx:
                report_error(request, error)
            else:
                return render(request, "annotation/pair_detail.html#item-error", {"error": error}, status=200)
        else:
            if not request.htmx:
                messages.success(request, "The check is asked for again.")
    if not request.htmx:
        return redirect(f"{item.pair.get_absolute_url()}#item-{item.pk}")
    context = {
        "project": item.project,
        "item": item,
        "is_mine": item.author_id == request.user.pk,
        **_item_context(item),
    }
    return render(request, "annotation/pair_detail.html#local-check", context)


@login_required
@require_POST
def item_delete(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
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
