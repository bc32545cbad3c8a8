"""The pages of a model as a collaborator (coordinators): thin views over validation/suggestions.py."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.models import Project, Role
from annotation.views.common import report_error
from common.errors import InvalidInput, ServiceError
from common.requests import SignedInRequest
from endpoints.models import Endpoint
from validation import suggestions
from validation.access import get_model_job, get_seed_draft, get_validation_project
from validation.models import Location, ModelJob, SeedDraft, Suggestion

DRAFTS_SHOWN = 300  # waiting drafts on the page; the API lists them all
FAILED_SHOWN = 100


def _endpoint_id(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


FIELDS = ("endpoint", "locations", "topics", "count")  # shown beside their input; any other error above the form


def _form_error(errors: dict[str, str]) -> str:
    return next((message for field, message in errors.items() if field not in FIELDS), "")


def _jobs(project: Project, purpose: str) -> Any:
    return ModelJob.objects.filter(project=project, purpose=purpose).select_related("created_by")[:20]


@login_required
def validation_suggestions(request: SignedInRequest, slug: str) -> HttpResponse:
    """Ask a model for suggestions on the items waiting for validation."""
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    errors: dict[str, str] = {}
    if request.method == "POST":
        try:
            job = suggestions.suggestions_start(
                project=project,
                endpoint_id=_endpoint_id(request.POST.get("endpoint", "")),
                user=request.user,
                redo=request.POST.get("redo") == "on",
            )
        except ServiceError as error:
            errors[error.field or "form"] = error.message
        else:
            return redirect("validation_model_job", project.slug, job.pk)
    context = {
        "project": project,
        "errors": errors,
        "form_error": _form_error(errors),
        "values": {"endpoint": request.POST.get("endpoint", "")},
        "endpoints": Endpoint.objects.filter(project=project).order_by("name"),
        "jobs": _jobs(project, ModelJob.Purpose.SUGGEST),
    }
    return render(request, "validation/suggestions.html", context, status=400 if errors else 200)


@login_required
@vary_on_headers("HX-Request")
def validation_model_job(request: SignedInRequest, slug: str, model_job_id: int) -> HttpResponse:
    job = get_model_job(request.user, slug, model_job_id)
    failed = (
        Suggestion.objects.filter(job=job, ok=False).select_related("item").order_by("item_id")[:FAILED_SHOWN]
        if job.purpose == ModelJob.Purpose.SUGGEST
        else []
    )
    context = {"project": job.project, "job": job, "failed": failed}
    if request.htmx:
        return render(request, "validation/model_job.html#model-job-status", context)
    return render(request, "validation/model_job.html", context)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


@login_required
def validation_seed_drafts(request: SignedInRequest, slug: str) -> HttpResponse:
    """Ask a model to draft seed queries per location and topic; review the drafts."""
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    errors: dict[str, str] = {}
    values = {"locations": "\n".join(Location.objects.filter(project=project).values_list("name", flat=True))}
    values |= {"topics": "", "count": "5", "endpoint": ""}
    if request.method == "POST":
        values = {name: request.POST.get(name, "") for name in ("locations", "topics", "count", "endpoint")}
        try:
            try:
                count = int(values["count"])
            except ValueError:
                raise InvalidInput("count: a whole number.", field="count") from None
            job = suggestions.seed_drafts_start(
                project=project,
                endpoint_id=_endpoint_id(values["endpoint"]),
                locations=_lines(values["locations"]),
                topics=_lines(values["topics"]),
                count=count,
                user=request.user,
            )
        except ServiceError as error:
            errors[error.field or "form"] = error.message
        else:
            return redirect("validation_model_job", project.slug, job.pk)
    context = {
        "project": project,
        "errors": errors,
        "form_error": _form_error(errors),
        "values": values,
        "endpoints": Endpoint.objects.filter(project=project).order_by("name"),
        "jobs": _jobs(project, ModelJob.Purpose.SEED_DRAFTS),
        "drafts": SeedDraft.objects.filter(project=project, status=SeedDraft.Status.DRAFT).order_by("id")[
            :DRAFTS_SHOWN
        ],
        "reviewed": SeedDraft.objects.filter(project=project)
        .exclude(status=SeedDraft.Status.DRAFT)
        .order_by("-reviewed_at", "-id")[:50],
        "counts": suggestions.seed_draft_counts(project),
    }
    return render(request, "validation/seed_drafts.html", context, status=400 if errors else 200)


@login_required
@require_POST
@vary_on_headers("HX-Request")
def validation_seed_draft(request: SignedInRequest, slug: str, draft_id: int) -> HttpResponse:
    """Accept (as drafted or edited) or reject one drafted seed query; htmx swaps its row."""
    draft = get_seed_draft(request.user, slug, draft_id)
    error = ""
    try:
        draft = suggestions.seed_draft_review(
            draft=draft, user=request.user, action=request.POST.get("action", ""), query=request.POST.get("query")
        )
    except ServiceError as problem:
        if not request.htmx:
            report_error(request, problem)
        error = problem.message
    if request.htmx:
        context = {"project": draft.project, "draft": draft, "error": error}
        return render(request, "validation/seed_drafts.html#draft-row", context, status=400 if error else 200)
    if not error:
        messages.success(request, f"{draft.get_status_display()}: {draft.query}")
    return redirect("validation_seed_drafts", slug)
