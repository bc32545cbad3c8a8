"""Article labels (topic, region relevance), adjudication, the dashboard and reviewer languages."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.access import get_project_for_user
from annotation.models import Membership, Project, Role
from annotation.views.common import report_error
from common.errors import InvalidInput, ServiceError
from common.requests import SignedInRequest
from review import labels as review_labels
from review import reviewers as review_reviewers
from review import statistics as review_statistics
from review.access import get_pair_for_labeller
from review.models import LabelKind, ReviewerLanguages, ReviewSlot

PAIRS_PER_PAGE = 50


def _int(value: str | None, name: str) -> int:
    try:
        return int(value or "0")
    except ValueError:
        raise InvalidInput(f"{name}: not a number", field=name) from None


@login_required
def label_list(request: SignedInRequest, slug: str) -> HttpResponse:
    """Kept pairs with how many labellers are done and whether this coordinator has labelled each."""
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR, kind=Project.Kind.WIKIPEDIA_QA)
    pairs = (
        review_labels.labelable_pairs(project)
        .only("id", "local_title", "standard_title", "status", "project_id")
        .annotate(
            labellers=Count("labels__labeller", filter=Q(labels__superseded_at__isnull=True), distinct=True),
            mine=Count("labels", filter=Q(labels__superseded_at__isnull=True, labels__labeller=request.user)),
            finals=Count("final_labels", distinct=True),
        )
        .order_by("id")
    )
    todo = request.GET.get("todo") == "1"
    if todo:
        pairs = pairs.filter(mine__lt=len(LabelKind.values))
    page = Paginator(pairs, PAIRS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "review/labels.html", {"project": project, "page": page, "todo": todo})


@login_required
def pair_labels(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
    pair = get_pair_for_labeller(request.user, slug, pair_id)
    project = pair.project
    status = 200
    if request.method == "POST":
        try:
            for kind in LabelKind.values:
                value = request.POST.get(kind, "")
                if not value:
                    continue
                review_labels.label_set(
                    pair=pair,
                    user=request.user,
                    kind=kind,
                    value=value,
                    detail=request.POST.get(f"{kind}_detail", ""),
                    version=_int(request.POST.get(f"{kind}_version"), f"{kind}_version"),
                )
        except ServiceError as error:
            report_error(request, error)
            status = error.status_code
        else:
            if request.POST.get("then") == "next":  # *Save and next*: the next pair this person has not labelled
                following = review_labels.pair_next_unlabelled(project=project, user=request.user, after=pair)
                if following is None:
                    messages.success(request, "Labels saved. You have labelled every kept pair.")
                    return redirect("label_list", slug)
                messages.success(request, f"Labels saved for “{pair.local_title}”. Next pair:")
                return redirect("pair_labels", slug, following.pk)
            messages.success(request, "Labels saved.")
            return redirect("pair_labels", slug, pair.pk)
    state = review_labels.pair_label_state(pair)
    mine = state["by_labeller"].get(request.user.pk, {})
    context = {
        "project": project,
        "pair": pair,
        "state": state,
        "mine": mine,
        "visible": review_labels.labels_visible_to(state, request.user),
        "topic": mine.get(LabelKind.TOPIC),
        "region": mine.get(LabelKind.REGION),
    }
    return render(request, "review/pair_labels.html", context, status=status)


@login_required
def adjudication(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR, kind=Project.Kind.WIKIPEDIA_QA)
    rows = review_labels.adjudication_list(project)
    for row in rows:  # the values in dispute, offered first (one button each)
        row["disputed"] = list(dict.fromkeys(label.value for label in row["labels"]))
        row["values"] = project.topics if row["kind"] == "topic" else project.regions
    return render(request, "review/adjudication.html", {"project": project, "rows": rows})


@login_required
@require_POST
def label_adjudicate(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
    pair = get_pair_for_labeller(request.user, slug, pair_id)
    try:
        review_labels.label_adjudicate(
            pair=pair,
            user=request.user,
            kind=request.POST.get("kind", ""),
            # One of the disputed values' buttons, or the value chosen in the list (which starts empty).
            value=request.POST.get("choose") or request.POST.get("value", ""),
            detail=request.POST.get("detail", ""),
            version=_int(request.POST.get("version"), "version"),
        )
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, "Final label recorded.")
    return redirect("adjudication", slug)


@login_required
@vary_on_headers("HX-Request")
def dashboard(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR, kind=Project.Kind.WIKIPEDIA_QA)
    stats = review_statistics.project_statistics(project)
    template = "review/dashboard.html#stats" if request.htmx else "review/dashboard.html"
    return render(request, template, {"project": project, "stats": stats})


@login_required
def reviewers(request: SignedInRequest, slug: str) -> HttpResponse:
    """Which languages each reviewer reads (routing needs the standard language), and their workload."""
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    status = 200
    if request.method == "POST":
        user = get_user_model().objects.filter(username=request.POST.get("username", "")).first()
        try:
            if user is None:
                raise InvalidInput("No member with this name.", field="username")
            codes = [code for code in request.POST.get("languages", "").replace(",", " ").split() if code]
            version = request.POST.get("version") or None
            review_reviewers.reviewer_languages_set(
                project=project,
                user=user,
                languages=codes,
                version=_int(version, "version") if version is not None else None,
                actor=request.user,
            )
        except ServiceError as error:
            report_error(request, error)
            status = error.status_code
        else:
            messages.success(request, f"{user.username}: languages saved.")
            return redirect("reviewers", slug)
    members = list(
        Membership.objects.filter(project=project, is_reviewer=True)
        .select_related("user", "reader_languages")
        .annotate(
            claimed=Count("user__review_slots", filter=Q(user__review_slots__status=ReviewSlot.Status.CLAIMED,
                                                         user__review_slots__project=project)),
            done=Count("user__review_slots", filter=Q(user__review_slots__status=ReviewSlot.Status.DONE,
                                                      user__review_slots__project=project)),
        )
    )  # fmt: skip
    rows = []
    for membership in members:
        membership.project = project
        row: ReviewerLanguages | None = getattr(membership, "reader_languages", None)
        languages = review_reviewers.reader_languages(membership)
        rows.append(
            {
                "membership": membership,
                "languages": languages,
                "explicit": row is not None,
                "version": row.version if row else 0,
                "eligible": project.standard_language in languages,
            }
        )
    return render(request, "review/reviewers.html", {"project": project, "rows": rows}, status=status)
