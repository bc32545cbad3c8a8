"""Archive pages: a coordinator exports a project and downloads the file; a superuser imports one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.access import get_project_for_user
from annotation.models import Role
from annotation.views.common import report_error
from archive import services
from archive.access import get_export_for_user, get_import_for_user, require_importer
from archive.downloads import export_response
from archive.forms import ImportForm
from common.errors import ServiceError
from common.requests import SignedInRequest


@login_required
def project_archives(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    context = {"project": project, "archives": services.exports_for_project(project)[:50]}
    return render(request, "archive/project_archives.html", context)


@login_required
@require_POST
def project_archive_start(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    try:
        archive = services.archive_export_request(project=project, user=request.user)
    except ServiceError as error:
        report_error(request, error)
        return redirect("project_archives", project.slug)
    messages.success(request, "Export requested; the archive is being written.")
    return redirect("project_archive_detail", project.slug, archive.pk)


@login_required
@vary_on_headers("HX-Request")
def project_archive_detail(request: SignedInRequest, slug: str, archive_id: int) -> HttpResponse:
    project, archive = get_export_for_user(request.user, slug, archive_id)
    template = "archive/archive_detail.html" + ("#status" if request.htmx else "")
    return render(request, template, {"project": project, "archive": archive})


@login_required
def project_archive_download(request: SignedInRequest, slug: str, archive_id: int) -> HttpResponseBase:
    project, archive = get_export_for_user(request.user, slug, archive_id)
    try:
        return export_response(archive)
    except ServiceError as error:
        return render(
            request,
            "archive/archive_detail.html",
            {"project": project, "archive": archive, "error": error.message},
            status=409,
        )


@login_required
def archive_imports(request: SignedInRequest) -> HttpResponse:
    require_importer(request.user)
    return render(request, "archive/imports.html", {"form": ImportForm(), "archives": services.imports_list()[:50]})


@login_required
@require_POST
def archive_import_start(request: SignedInRequest) -> HttpResponse:
    require_importer(request.user)
    form = ImportForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            archive = services.archive_import_request(
                upload=form.cleaned_data["file"], user=request.user, slug=form.cleaned_data["slug"] or ""
            )
        except ServiceError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, "Archive checked and stored; the import is running.")
            return redirect("archive_import_detail", archive.pk)
    context = {"form": form, "archives": services.imports_list()[:50]}
    return render(request, "archive/imports.html", context, status=400)


@login_required
@vary_on_headers("HX-Request")
def archive_import_detail(request: SignedInRequest, archive_id: int) -> HttpResponse:
    archive = get_import_for_user(request.user, archive_id)
    template = "archive/archive_detail.html" + ("#status" if request.htmx else "")
    return render(request, template, {"project": None, "archive": archive})
