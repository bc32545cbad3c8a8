"""Release pages: list and cut releases, watch a build, download files or the archive, compare versions."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.access import get_project_for_user, project_access, release_reader_access
from annotation.models import Project, Role
from annotation.views.common import report_error
from common import kinds
from common.errors import ServiceError
from common.requests import SignedInRequest
from exports import formats, services
from exports.access import get_release_for_user, get_release_of_project, releases_for_project
from exports.downloads import archive_response, file_response
from exports.formats.prompts import SCENARIOS
from exports.forms import DiffForm, ExportSettingsForm, ReleaseForm

DIFF_LIMIT = 500  # ids listed per kind on the page; the API returns all


def _release_rows(project: Project) -> dict[str, Any]:
    """The releases, each with the counts its kind's release list shows (`common.kinds`: its release columns)."""
    columns = kinds.of(project).release_columns
    releases = [
        (release, [(release.counts or {}).get(key) for _, key in columns]) for release in releases_for_project(project)
    ]
    return {"releases": releases, "release_columns": [heading for heading, _ in columns]}


@login_required
def release_list(request: SignedInRequest, slug: str) -> HttpResponse:
    access = release_reader_access(request.user, slug)
    project, membership = access.project, access.membership
    services.release_expire_stale(project=project)
    context = {
        "project": project,
        "membership": membership,
        **_release_rows(project),
        "form": ReleaseForm(initial={"license": services.export_settings_get(project=project).license})
        if membership.is_coordinator
        else None,
        "project_formats": formats.available_project_formats(project) if membership.is_coordinator else [],
        "readiness": services.release_readiness_get(project=project) if membership.is_coordinator else None,
    }
    return render(request, "exports/release_list.html", context)


@login_required
@require_POST
def release_create(request: SignedInRequest, slug: str) -> HttpResponse:
    access = project_access(request.user, slug, role=Role.COORDINATOR)
    project = access.project
    form = ReleaseForm(request.POST)
    if form.is_valid():
        try:
            release = services.release_request(project=project, user=request.user, **form.request_values())
        except ServiceError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, f"Release v{release.version} requested; it is being built.")
            return redirect("release_detail", project.slug, release.version)
    context = {
        "project": project,
        "membership": access.membership,
        **_release_rows(project),
        "form": form,
        "project_formats": formats.available_project_formats(project),
        "readiness": services.release_readiness_get(project=project),
    }
    return render(request, "exports/release_list.html", context, status=400)


@login_required
@vary_on_headers("HX-Request")
def release_detail(request: SignedInRequest, slug: str, version: int) -> HttpResponse:
    access = release_reader_access(request.user, slug)
    project = access.project
    services.release_expire_stale(project=project)
    release = get_release_of_project(project, version)
    template = "exports/release_detail.html"
    if request.htmx:
        template += "#status"
    context: dict[str, Any] = {"project": project, "membership": access.membership, "release": release}
    if not request.htmx:
        context["card"] = services.release_card(release)
    return render(request, template, context)


@login_required
@require_POST
def release_rebuild(request: SignedInRequest, slug: str, version: int) -> HttpResponse:
    release = get_release_for_user(request.user, slug, version, role=Role.COORDINATOR)
    try:
        rebuilt = services.release_rebuild(release=release, user=request.user)
    except ServiceError as error:
        report_error(request, error)
        return redirect("release_detail", slug, version)
    messages.success(request, f"Building release v{rebuilt.version} again.")
    return redirect("release_detail", slug, rebuilt.version)


@login_required
@require_POST
def release_cancel(request: SignedInRequest, slug: str, version: int) -> HttpResponse:
    release = get_release_for_user(request.user, slug, version, role=Role.COORDINATOR)
    try:
        services.release_cancel(release=release, user=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, f"Release v{version} cancelled; nothing was published.")
    return redirect("release_detail", slug, version)


@login_required
def release_file(request: SignedInRequest, slug: str, version: int, name: str) -> HttpResponseBase:
    release = get_release_for_user(request.user, slug, version)
    try:
        return file_response(release, name)
    except ServiceError as error:
        return render(request, "exports/not_available.html", {"project": release.project, "error": error}, status=404)


@login_required
def release_archive(request: SignedInRequest, slug: str, version: int) -> HttpResponseBase:
    release = get_release_for_user(request.user, slug, version)
    if not release.is_published:
        return render(
            request,
            "exports/not_available.html",
            {"project": release.project, "error": "This release is not published; there is nothing to download."},
            status=404,
        )
    return archive_response(release)


@login_required
def release_diff(request: SignedInRequest, slug: str) -> HttpResponse:
    access = release_reader_access(request.user, slug)
    project = access.project
    published = list(releases_for_project(project).published().values_list("version", flat=True))
    initial = {"old": published[1], "new": published[0]} if len(published) > 1 else {}
    form = DiffForm(request.GET or None, initial=initial)
    diff = None
    status = 200
    if form.is_valid():
        try:
            old = get_release_of_project(project, form.cleaned_data["old"])
            new = get_release_of_project(project, form.cleaned_data["new"])
            diff = services.release_diff(old=old, new=new).as_dict(limit=DIFF_LIMIT)
        except ServiceError as error:
            form.add_error(None, error.message)
            status = 400
    elif form.is_bound:
        status = 400
    context = {
        "project": project,
        "membership": access.membership,
        "form": form,
        "diff": diff,
        "published": published,
        "limit": DIFF_LIMIT,
    }
    return render(request, "exports/release_diff.html", context, status=status)


@login_required
def export_settings(request: SignedInRequest, slug: str) -> HttpResponse:
    access = project_access(request.user, slug, role=Role.COORDINATOR)
    project = access.project
    current = services.export_settings_get(project=project)
    initial = {"license": current.license, "version": current.version}
    initial |= {f"template_{scenario}": current.prompt_templates.get(scenario, "") for scenario in SCENARIOS}
    form = ExportSettingsForm(request.POST or None, initial=initial)
    prompts = kinds.of(project).prompt_templates  # only a kind whose releases carry prompt templates has them
    if not prompts:
        form.fields = {name: field for name, field in form.fields.items() if not name.startswith("template_")}
    if request.method == "POST" and form.is_valid():
        try:
            services.export_settings_update(
                project=project,
                prompt_templates=form.templates() if prompts else current.prompt_templates,
                license=form.cleaned_data["license"],
                version=form.cleaned_data["version"],
                actor=request.user,
            )
        except ServiceError as error:
            field = (error.field or "").replace("prompt_templates.", "template_")
            form.add_error(field if field in form.fields else None, error.message)
        else:
            messages.success(request, "Export settings saved; they apply to the next release.")
            return redirect("export_settings", project.slug)
    context = {"project": project, "membership": access.membership, "form": form, "prompts": prompts}
    return render(request, "exports/export_settings.html", context)


@login_required
def project_format_download(request: SignedInRequest, slug: str, format_name: str) -> HttpResponseBase:
    """The project written in another format (e.g. WiLoVa), as a zip of the files under their own names."""
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    try:
        archive, cleanup = services.project_format_archive(project=project, format=format_name)
    except ServiceError as error:
        # No such format here: 404; a format that does not apply to this project: 400.
        status = 404 if formats.project_format(format_name) is None else 400
        return render(request, "exports/not_available.html", {"project": project, "error": error}, status=status)
    handle = archive.open("rb")
    cleanup()  # the open handle keeps the data readable; nothing is left on disk once it is sent
    return FileResponse(handle, as_attachment=True, filename=archive.name)
