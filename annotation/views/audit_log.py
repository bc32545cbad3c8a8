"""The audit log pages: one project's (coordinators) and every project's (superusers)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page, Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.vary import vary_on_headers

from annotation import audit_log as services
from annotation.access import get_project_for_user
from annotation.forms_audit import EventFilterForm
from annotation.models import Project, Role
from common.requests import SignedInRequest

EVENTS_PER_PAGE = 50


def _render(request: SignedInRequest, project: Project | None, form: EventFilterForm) -> HttpResponse:
    status = 200
    page: Page[dict[str, Any]] | None
    if form.is_valid():
        events = services.events(project=project, flt=form.event_filter())
        # EventLog pages by count() and slices, all a Paginator uses; the stubs ask for a whole sequence.
        paginator: Paginator[dict[str, Any]] = Paginator(events, EVENTS_PER_PAGE)  # type: ignore[arg-type]
        page = paginator.get_page(request.GET.get("page"))
        page.object_list = services.describe(list(page.object_list))
    else:
        page, status = None, 400
    query = request.GET.copy()
    query.pop("page", None)
    context = {"project": project, "form": form, "page": page, "query": query.urlencode()}
    template = "audit/log.html#events" if request.htmx else "audit/log.html"
    return render(request, template, context, status=status)


@login_required
@vary_on_headers("HX-Request")
def audit_project(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR)
    return _render(request, project, EventFilterForm(request.GET, project=project))


@login_required
@vary_on_headers("HX-Request")
def audit_site(request: SignedInRequest) -> HttpResponse:
    if not request.user.is_superuser:
        raise PermissionDenied("The log of every project is for superusers; coordinators see their project's log.")
    return _render(request, None, EventFilterForm(request.GET))
