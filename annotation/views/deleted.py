"""Deleting and restoring: the project's Deleted list, pair/project delete, restore (coordinators).

Deleting is soft everywhere (annotation.services): these pages only ask and show.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation import services
from annotation.access import (
    get_deleted_item_for_user,
    get_deleted_pair_for_user,
    get_deleted_project_for_user,
    get_pair_for_user,
    get_project_for_user,
)
from annotation.models import Role
from annotation.views.common import report_error
from common.errors import ServiceError
from common.requests import SignedInRequest


@login_required
def deleted_list(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    return render(request, "annotation/deleted.html", {"project": project, **services.deleted_in_project(project)})


@login_required
@require_POST
def pair_delete(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
    pair = get_pair_for_user(request.user, slug, pair_id, role=Role.COORDINATOR)
    try:
        services.pair_delete(pair=pair, user=request.user)
    except ServiceError as error:
        report_error(request, error)
        return redirect("pair_detail", slug, pair.pk)
    messages.success(request, f"Pair {pair.pk} deleted. It can be restored from the Deleted list.")
    return redirect("pair_list", slug)


@login_required
@require_POST
def pair_restore(request: SignedInRequest, slug: str, pair_id: int) -> HttpResponse:
    pair = get_deleted_pair_for_user(request.user, slug, pair_id)
    try:
        services.pair_restore(pair=pair, user=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, f"Pair {pair.pk} restored with its items.")
    return redirect("deleted_list", slug)


@login_required
@require_POST
def item_restore(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    item = get_deleted_item_for_user(request.user, slug, item_id)
    try:
        services.qa_item_restore(item=item, user=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, f"Item {item.pk} restored.")
    return redirect("deleted_list", slug)


@login_required
def project_delete(request: SignedInRequest, slug: str) -> HttpResponse:
    """A page that asks for the project's slug before deleting it (a whole project is a lot to click away)."""
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    error = ""
    if request.method == "POST":
        if request.POST.get("confirm", "").strip() != project.slug:
            error = f"Type the project's short name, {project.slug}, to confirm."
        else:
            try:
                services.project_delete(project=project, user=request.user)
            except ServiceError as service_error:
                error = service_error.message
            else:
                messages.success(request, f"Project {project.name} deleted. It can be restored from Deleted projects.")
                return redirect("deleted_projects")
    status = 400 if error else 200
    return render(request, "annotation/project_delete.html", {"project": project, "error": error}, status=status)


@login_required
def deleted_projects(request: SignedInRequest) -> HttpResponse:
    projects = services.deleted_projects_for(request.user)
    return render(request, "annotation/deleted_projects.html", {"projects": projects})


@login_required
@require_POST
def project_restore(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_deleted_project_for_user(request.user, slug)
    try:
        services.project_restore(project=project, user=request.user)
    except ServiceError as error:
        report_error(request, error)
        return redirect("deleted_projects")
    messages.success(request, f"Project {project.name} restored.")
    return redirect("project_detail", project.slug)
