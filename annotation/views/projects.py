from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.paginator import Paginator
from django.db.models import Count, OuterRef, QuerySet
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch

from annotation import services
from annotation.access import (
    get_project_for_user,
    may_create_projects,
    project_access,
    require_project_creator,
    user_projects,
)
from annotation.forms import ProjectCreateForm, ProjectSettingsForm, project_settings_initial
from annotation.models import PagePair, Project, QAItem, Role, Screening
from annotation.next_steps import next_steps, sent_back_everywhere
from annotation.queries import (
    VERIFICATION_FILTERS,
    ItemFilter,
    PairFilter,
    count_of,
    items_filtered,
    pairs_filtered,
)
from common import kinds
from common.errors import ServiceError
from common.requests import SignedInRequest

PAIRS_PER_PAGE = 50


def _project_link(project: Project) -> str:
    """The project's URL, or "" for a row whose slug no URL can hold (made before slugs were checked)."""
    try:
        return project.get_absolute_url()
    except NoReverseMatch:
        return ""


@login_required
def home(request: SignedInRequest) -> HttpResponse:
    projects = list(user_projects(request.user))
    sizes = kinds.sizes(projects)  # each kind's own count: page pairs, QA pairs, trivia items, entities
    for project in projects:
        project.link = _project_link(project)  # type: ignore[attr-defined]
        project.size = sizes.get(project.pk, "")  # type: ignore[attr-defined]
    can_create = may_create_projects(request.user)
    context = {"projects": projects, "can_create": can_create, "sent_back": sent_back_everywhere(user=request.user)}
    return render(request, "annotation/home.html", context)


@login_required
def project_create(request: SignedInRequest) -> HttpResponse:
    require_project_creator(request.user)
    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        values = {k: v for k, v in form.cleaned_data.items() if k != "version" and v not in ("", None)}
        try:
            project = services.project_create(created_by=request.user, **values)
        except ServiceError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, f"Project “{project.name}” created. Add members next.")
            return redirect("project_members", project.slug)
    return render(request, "annotation/project_form.html", {"form": form, "creating": True})


def _my_pairs(project: Project, user: User) -> QuerySet[PagePair]:
    return (
        PagePair.objects.filter(project=project, assignee=user)
        .exclude(status=PagePair.Status.NEW)
        .annotate(item_count=count_of(QAItem.objects.alive().filter(pair=OuterRef("pk"))))
        .only("id", "local_title", "standard_title", "status", "screening_decision", "updated_at", "project_id")
        .order_by("-updated_at")[:50]
    )


@login_required
def project_detail(request: SignedInRequest, slug: str) -> HttpResponse:
    access = project_access(request.user, slug)
    project, membership = access.project, access.membership
    if membership.roles == [Role.RESEARCHER]:
        return redirect("release_list", project.slug)  # a researcher's work is the releases
    if project.kind != Project.Kind.WIKIPEDIA_QA:  # each kind's own page, never the Wikipedia QA one
        return redirect(project.get_absolute_url())
    context: dict = {
        "project": project,
        "membership": membership,
        "steps": next_steps(project=project, membership=membership, user=request.user),
    }
    if membership.is_annotator:
        context["my_pairs"] = _my_pairs(project, request.user)
    if membership.is_coordinator:
        context["status_counts"] = dict(
            PagePair.objects.filter(project=project).values_list("status").annotate(n=Count("id")).order_by()
        )
        context["item_counts"] = dict(
            QAItem.objects.alive().filter(project=project).values_list("status").annotate(n=Count("id")).order_by()
        )
        context["pair_statuses"] = PagePair.Status.choices
    return render(request, "annotation/project_detail.html", context)


@login_required
def project_settings(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR, kind=Project.Kind.WIKIPEDIA_QA)
    form = ProjectSettingsForm(request.POST or None, initial=project_settings_initial(project))
    if request.method == "POST" and form.is_valid():
        values = dict(form.cleaned_data)
        version = values.pop("version")
        try:
            services.project_update(project=project, version=version, actor=request.user, **values)
        except ServiceError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, "Settings saved.")
            return redirect("project_settings", project.slug)
    return render(request, "annotation/project_form.html", {"form": form, "project": project, "creating": False})


@login_required
def project_guidelines(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug)
    return render(request, "annotation/guidelines.html", {"project": project})


@login_required
def pair_list(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR, kind=Project.Kind.WIKIPEDIA_QA)
    pairs = (
        PagePair.objects.filter(project=project)
        .select_related("assignee")
        .annotate(item_count=count_of(QAItem.objects.alive().filter(pair=OuterRef("pk"))))
        .only(
            "id",
            "local_title",
            "standard_title",
            "status",
            "screening_decision",
            "local_lead_length",
            "standard_lead_length",
            "active_seconds",
            "assignee__username",
            "project_id",
        )
        .order_by("id")
    )
    flt = PairFilter.from_query(request.GET)
    page = Paginator(pairs_filtered(pairs, flt), PAIRS_PER_PAGE).get_page(request.GET.get("page"))
    for pair in page:  # the screening decision in words, as the pair's page shows it
        pair.screening_text = (  # type: ignore[attr-defined]
            Screening.Decision(pair.screening_decision).label
            if pair.screening_decision in Screening.Decision.values
            else pair.screening_decision
        )
    annotators = (
        PagePair.objects.filter(project=project, assignee__isnull=False)
        .order_by("assignee__username")
        .values_list("assignee__username", flat=True)
        .distinct()
    )
    context = {
        "project": project,
        "page": page,
        "filter": flt,
        "statuses": PagePair.Status.choices,
        "annotators": list(annotators),
    }
    return render(request, "annotation/pair_list.html", context)


@login_required
def item_list(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR, kind=Project.Kind.WIKIPEDIA_QA)
    items = (
        QAItem.objects.alive()
        .filter(project=project)
        .select_related("pair", "author")
        .only(
            "id",
            "kind",
            "status",
            "question",
            "answer_standard",
            "answer_local",
            "active_seconds",
            "updated_at",
            "pair__id",
            "pair__local_title",
            "author__username",
            "project_id",
        )
        .order_by("-updated_at", "-id")
    )
    flt = ItemFilter.from_query(request.GET)
    page = Paginator(items_filtered(items, flt), PAIRS_PER_PAGE).get_page(request.GET.get("page"))
    authors = (
        QAItem.objects.alive()
        .filter(project=project, author__isnull=False)
        .order_by("author__username")
        .values_list("author__username", flat=True)
        .distinct()
    )
    context = {
        "project": project,
        "page": page,
        "filter": flt,
        "statuses": QAItem.Status.choices,
        "kinds": QAItem.Kind.choices,
        "authors": list(authors),
        "verifications": VERIFICATION_FILTERS.items(),
    }
    return render(request, "annotation/item_list.html", context)
