"""The coordinator's page of the local-knowledge check: on or off, the endpoint asked, how an answer counts as right,
and how the project's items came out."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotation.access import project_access
from annotation.models import Role
from annotation.models_checks import LocalCheckResult
from common.errors import InvalidInput, ServiceError
from common.requests import SignedInRequest
from endpoints.models import Endpoint
from evaluation import local_checks


def _endpoint(project_id: int, raw: str, field: str) -> Endpoint | None:
    if not raw:
        return None
    endpoint = Endpoint.objects.filter(project_id=project_id, pk=int(raw) if raw.isdigit() else 0).first()
    if endpoint is None:
        raise InvalidInput(f"{field}: not a model endpoint of this project.", field=field)
    return endpoint


@login_required
@require_http_methods(["GET", "POST"])
def local_check_settings(request: SignedInRequest, slug: str) -> HttpResponse:
    access = project_access(request.user, slug, role=Role.COORDINATOR)
    project = access.project
    error: ServiceError | None = None
    if request.method == "POST":
        try:
            try:
                threshold = float(request.POST.get("threshold", ""))
            except ValueError:
                raise InvalidInput("threshold: a chrF++ value from 0 to 1, e.g. 0.5.", field="threshold") from None
            local_checks.local_check_setting_save(
                project=project,
                user=request.user,
                enabled=request.POST.get("enabled") == "on",
                endpoint=_endpoint(project.pk, request.POST.get("endpoint", ""), "endpoint"),
                threshold=threshold,
                judge=_endpoint(project.pk, request.POST.get("judge", ""), "judge"),
            )
        except ServiceError as failure:
            error = failure
        else:
            messages.success(request, "Local-knowledge check saved.")
            return redirect("local_check_settings", slug)
    counts = local_checks.local_check_counts(project)
    context = {
        "project": project,
        "membership": access.membership,
        "setting": local_checks.local_check_setting(project),
        "endpoints": Endpoint.objects.filter(project=project).order_by("name"),
        "error": error,
        "posted": request.POST if error else None,
        "counts": [(LocalCheckResult(value).label, counts[value]) for value in LocalCheckResult.values if value]
        + [("Waiting for the model", counts["waiting"]), ("Check failed (tried again)", counts["failed"])],
    }
    return render(request, "evaluation/local_check.html", context, status=400 if error else 200)
