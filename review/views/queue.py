"""The reviewer's screens: the queue and filtered list, claiming, the review form."""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import OuterRef, Q, QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.access import MEMBERSHIP, project_access
from annotation.local_checks import panel as local_check_panel
from annotation.models import Project, QAItem, QAItemRevision, Role
from annotation.models_checks import LocalCheck
from annotation.queries import ListFilter, count_of
from annotation.views.common import report_error
from common import kinds
from common.errors import ServiceError, StaleEdit
from common.requests import SignedInRequest
from review import judging as review_judging
from review import queue as slot_queue
from review import verification as review_verification
from review.access import REVIEWING, get_item_for_reviewer, get_slot_for_reviewer
from review.models import Judgment, ReviewSlot
from review.views.common import evidence_context

ITEMS_PER_PAGE = 50
# One key per criterion verdict, in criterion order: pass on the digits, flag on the letters below them.
PASS_KEYS = "123456789"  # noqa: S105 - keyboard keys, not a password
FLAG_KEYS = "qwertyuio"


@dataclass(frozen=True)
class ReviewFilter(ListFilter):
    """The review list, narrowed (the page's and the API's query keys)."""

    text: str = ""  # in the question or either answer
    status: str = ""  # the item's status; "all" or any other value narrows nothing
    kind: str = ""  # only for kinds whose words filter by kind
    author: str = ""  # the item's author's username
    topic: str = ""  # the pair's final topic label, as the pair and item lists filter it


def review_items(project: Project, flt: ReviewFilter | None = None) -> QuerySet[QAItem]:
    """Submitted (never draft) items for the filtered list, with review progress, in one query (`flt.text` found in
    the question or either answer); the two
    columns telling items apart (pair and kind of a Wikipedia QA item, a trivia item's category and subset…)
    are the kind's words (`common.kinds.Words`)."""
    flt = flt or ReviewFilter()
    words = kinds.of(project).words
    items = (
        QAItem.objects.alive()
        .filter(project=project)
        .exclude(status=QAItem.Status.DRAFT)
        .select_related("author", *words.related())
        .only(
            "id", "kind", "status", "question", "submitted_at", "updated_at", "version", "project_id", "pair_id",
            "author__username", *words.source_fields, *words.kind_fields,
        )
        .annotate(
            open_slots=count_of(ReviewSlot.objects.filter(item=OuterRef("pk"), status=ReviewSlot.Status.OPEN)),
            rounds=count_of(QAItemRevision.objects.filter(item=OuterRef("pk"))),
        )
        .order_by("submitted_at", "id")
    )  # fmt: skip
    if flt.status in QAItem.Status.values:
        items = items.filter(status=flt.status)
    if words.kind_filter and flt.kind in QAItem.Kind.values:
        items = items.filter(kind=flt.kind)
    if flt.author:
        items = items.filter(author__username=flt.author)
    if flt.topic:  # the final label (agreed or adjudicated), the one releases carry
        items = items.filter(pair__final_labels__kind="topic", pair__final_labels__value=flt.topic)
    if flt.text:
        text = flt.text
        items = items.filter(
            Q(question__icontains=text) | Q(answer_standard__icontains=text) | Q(answer_local__icontains=text)
        )
    return items


@login_required
def review_queue(request: SignedInRequest, slug: str) -> HttpResponse:
    access = project_access(request.user, slug, role=REVIEWING)
    project = access.project
    flt = ReviewFilter.from_query(request.GET)
    if "status" not in request.GET:  # the page opens on what waits for review; "all" shows every status
        flt = replace(flt, status=QAItem.Status.SUBMITTED)
    page = Paginator(review_items(project, flt), ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    words = kinds.of(project).words
    for item in page:
        # Display attributes for the template's rows, as on the project list (annotation.views.projects).
        item.source_text, item.kind_text = words.source_of(item), words.kind_of(item)  # type: ignore[attr-defined]
    held = (
        ReviewSlot.objects.filter(
            project=project,
            item__deleted_at__isnull=True,
            reviewer=request.user,
            status=ReviewSlot.Status.CLAIMED,
        )
        .select_related("item")
        .order_by("claimed_at")
    )
    context = {
        "project": project,
        "membership": access.membership,
        "page": page,
        "filter": flt,
        "statuses": [(value, label) for value, label in QAItem.Status.choices if value != QAItem.Status.DRAFT],
        "kinds": QAItem.Kind.choices if words.kind_filter else [],
        "authors": list(
            QAItem.objects.alive()
            .filter(project=project, author__isnull=False)
            .exclude(status=QAItem.Status.DRAFT)
            .order_by("author__username")
            .values_list("author__username", flat=True)
            .distinct()
        ),
        "words": words,
        "held": held,
        "waiting": ReviewSlot.objects.filter(
            project=project,
            status=ReviewSlot.Status.OPEN,
            item__status=QAItem.Status.SUBMITTED,
            item__deleted_at__isnull=True,
        ).count(),
    }
    return render(request, "review/queue.html", context)


@login_required
@require_POST
def review_next(request: SignedInRequest, slug: str) -> HttpResponse:
    access = project_access(request.user, slug, role=Role.REVIEWER)
    project = access.project
    try:
        slot = slot_queue.review_claim_next(project=project, user=request.user, membership=access.membership)
    except ServiceError as error:
        report_error(request, error)
        return redirect("review_queue", slug)
    if slot is None:
        messages.info(request, "Nothing is waiting for your review right now.")
        return redirect("review_queue", slug)
    return redirect("review_slot", slug, slot.pk)


@login_required
@require_POST
def review_claim(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    item = get_item_for_reviewer(request.user, slug, item_id, role=Role.REVIEWER)
    try:
        slot = slot_queue.review_claim(item=item, user=request.user)
    except ServiceError as error:
        report_error(request, error)
        return redirect("review_queue", slug)
    return redirect("review_slot", slug, slot.pk)


def _judgment_input(request: HttpRequest, project: Project) -> dict[str, dict[str, str]]:
    judgments = {}
    for criterion in project.review_criteria:
        key = criterion["key"]
        verdict = request.POST.get(f"verdict-{key}")
        judgments[key] = {"verdict": verdict or "", "comment": request.POST.get(f"comment-{key}", "")}
    return judgments


def _criterion_errors(error: ServiceError) -> dict[str, str]:
    """The service's per-criterion errors (`judgments.fluency.comment`), by criterion key, to show in place."""
    details = getattr(error, "details", None) or {}
    found: dict[str, str] = {}
    for field, messages_ in details.items():
        parts = str(field).split(".")
        if len(parts) >= 2 and parts[0] == "judgments" and messages_:
            found.setdefault(parts[1], str(messages_[0]))
    return found


@login_required
def review_slot(request: SignedInRequest, slug: str, slot_id: int) -> HttpResponse:
    """The review screen: the item, its evidence, both leads, one pass/flag per criterion."""
    slot = get_slot_for_reviewer(request.user, slug, slot_id)
    item, project = slot.item, slot.item.project
    own_page = kinds.of(project).review_page  # a kind reviewing on its own screen (slot, claim, judgments: ours)
    if own_page is not None:
        return redirect(own_page, slug, item.pk)
    status = 200
    submitted = {}
    errors: dict[str, str] = {}
    if request.method == "POST":
        submitted = _judgment_input(request, project)
        try:
            version = int(request.POST.get("version", ""))
            review_judging.review_submit(slot=slot, user=request.user, version=version, judgments=submitted)
        except ValueError:
            messages.error(request, "version: missing or not a number")
            status = 400
        except StaleEdit as error:
            report_error(request, error)
            status = 409
        except ServiceError as error:
            report_error(request, error)
            status = error.status_code
            errors = _criterion_errors(error)
        else:
            messages.success(request, "Review recorded. Thank you!")
            if request.POST.get("then") == "next":
                return review_next(request, slug)
            return redirect("review_queue", slug)
        slot.refresh_from_db()
    # The flags of the item's other revisions (what the page shows of them).
    earlier = (
        Judgment.objects.filter(item=item, verdict=Judgment.Verdict.FLAG)
        .exclude(revision_id=slot.revision_id)
        .select_related("revision")
        .only("criterion", "comment", "revision__number")
        .order_by("revision__number", "id")
    )
    # A slot's judgments are written when it is done: one still held has none.
    done = slot.status != ReviewSlot.Status.CLAIMED
    judgments = {j.criterion: j for j in Judgment.objects.filter(slot=slot)} if done else {}
    criteria = [
        {
            **criterion,
            "judgment": judgments.get(criterion["key"]),
            "submitted": submitted.get(criterion["key"], {}),
            "error": errors.get(criterion["key"], ""),
            "pass_key": PASS_KEYS[index] if index < len(PASS_KEYS) else "",
            "flag_key": FLAG_KEYS[index] if index < len(FLAG_KEYS) else "",
        }
        for index, criterion in enumerate(project.review_criteria)
    ]
    context = {
        "project": project,
        # The membership the access check loaded with the slot (for the navigation; else it asks for it).
        "membership": getattr(slot, MEMBERSHIP, None),
        "slot": slot,
        "item": item,
        "pair": item.pair,
        "criteria": criteria,
        "earlier_flags": earlier,
        "is_mine": slot.reviewer_id == request.user.pk,
        "can_judge": slot.reviewer_id == request.user.pk
        and slot.status == ReviewSlot.Status.CLAIMED
        and item.status == QAItem.Status.SUBMITTED,
        **evidence_context(item),
    }
    verification = review_verification.verification_current(item)
    context["local_check"] = local_check_panel(LocalCheck.objects.filter(item=item).first(), item)
    context["verification"] = verification
    context["verification_outdated"] = verification is not None and not verification.is_current_for(item)
    return render(request, "review/review.html", context, status=status)


@login_required
@require_POST
def review_release(request: SignedInRequest, slug: str, slot_id: int) -> HttpResponse:
    slot = get_slot_for_reviewer(request.user, slug, slot_id, held=True)
    try:
        slot_queue.review_release(slot=slot, user=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.info(request, "The item went back to the queue.")
    return redirect("review_queue", slug)


@login_required
@require_POST
def review_activity(request: SignedInRequest, slug: str, slot_id: int) -> HttpResponse:
    """Active-time heartbeat from the review screen (sent with sendBeacon, so the answer is not read)."""
    slot = get_slot_for_reviewer(request.user, slug, slot_id, held=True)
    try:
        seconds = int(request.POST.get("seconds", "0"))
        slot_queue.review_record_activity(slot=slot, user=request.user, seconds=seconds)
    except (ValueError, ServiceError) as error:
        return JsonResponse({"detail": str(error)}, status=400)
    return HttpResponse(status=204)
