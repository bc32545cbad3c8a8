"""A project's *Model endpoints* page (coordinators, every kind of project): list, add, edit, test, delete, and
the recent calls with their tokens, latency and cost."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.access import ProjectAccess
from annotation.views.common import report_error
from common.errors import ServiceError, StaleEdit
from common.requests import SignedInRequest
from endpoints import services
from endpoints.access import endpoints_access, get_endpoint_for_user
from endpoints.forms import EndpointForm
from endpoints.models import Endpoint, EndpointSecret

RECENT_CALLS = 50


def _page(request: SignedInRequest, access: ProjectAccess, *, status: int = 200, **extra: Any) -> HttpResponse:
    project = access.project
    context = {
        "project": project,
        "membership": access.membership,
        "endpoints": services.endpoints_for_project(project),
        "calls": services.calls_for_project(project)[:RECENT_CALLS],
        **extra,
    }
    return render(request, "endpoints/endpoints.html", context, status=status)


@login_required
def endpoint_list(request: SignedInRequest, slug: str) -> HttpResponse:
    return _page(request, endpoints_access(request.user, slug))


def _form_page(
    request: SignedInRequest, access: ProjectAccess, form: EndpointForm, endpoint: Endpoint | None, status: int = 200
) -> HttpResponse:
    context = {"project": access.project, "membership": access.membership, "form": form, "endpoint": endpoint}
    return render(request, "endpoints/endpoint_form.html", context, status=status)


def _form_error(form: EndpointForm, error: ServiceError) -> None:
    """A service's refusal beside its field (without the field's name in front), else above the form."""
    if error.field in form.fields:
        form.add_error(error.field, error.message.removeprefix(f"{error.field}: "))
    else:
        form.add_error(None, error.message)


@login_required
def endpoint_new(request: SignedInRequest, slug: str) -> HttpResponse:
    access = endpoints_access(request.user, slug)
    form = EndpointForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            endpoint = services.endpoint_create(
                project=access.project, user=request.user, api_key=form.cleaned_data["api_key"], **form.settings()
            )
        except ServiceError as error:
            _form_error(form, error)
        else:
            messages.success(request, f"Endpoint {endpoint.name} added. Test it to see that it answers.")
            return redirect("endpoint_list", access.project.slug)
    return _form_page(request, access, form, None, status=400 if form.errors else 200)


@login_required
def endpoint_edit(request: SignedInRequest, slug: str, endpoint_id: int) -> HttpResponse:
    access, endpoint = get_endpoint_for_user(request.user, slug, endpoint_id)
    key_set = EndpointSecret.objects.filter(endpoint=endpoint).exists()
    form = EndpointForm(request.POST or None, endpoint=endpoint, key_set=key_set)
    if request.method == "POST" and form.is_valid():
        try:
            services.endpoint_update(
                endpoint=endpoint,
                user=request.user,
                version=form.cleaned_data["version"],
                api_key=form.cleaned_data["api_key"],
                remove_key=form.cleaned_data.get("remove_key", False),
                **form.settings(),
            )
        except StaleEdit as error:
            form.add_error(None, error.message)
        except ServiceError as error:
            _form_error(form, error)
        else:
            messages.success(request, f"Endpoint {endpoint.name} saved.")
            return redirect("endpoint_list", access.project.slug)
    return _form_page(request, access, form, endpoint, status=400 if form.errors else 200)


@login_required
@require_POST
def endpoint_delete(request: SignedInRequest, slug: str, endpoint_id: int) -> HttpResponse:
    access, endpoint = get_endpoint_for_user(request.user, slug, endpoint_id)
    name = endpoint.name
    services.endpoint_delete(endpoint=endpoint, user=request.user)
    messages.success(request, f"Endpoint {name} deleted; its recorded calls stay below.")
    return redirect("endpoint_list", access.project.slug)


@login_required
@require_POST
@vary_on_headers("HX-Request")
def endpoint_test(request: SignedInRequest, slug: str, endpoint_id: int) -> HttpResponse:
    access, endpoint = get_endpoint_for_user(request.user, slug, endpoint_id)
    completion = services.endpoint_test(endpoint=endpoint, user=request.user)
    if request.htmx:  # the reply, and (out of band) the endpoint's totals and the recent calls with this one
        context = {
            "project": access.project,
            "endpoint": services.endpoints_for_project(access.project).get(pk=endpoint.pk),
            "tested": completion,
            "calls": services.calls_for_project(access.project)[:RECENT_CALLS],
        }
        return render(request, "endpoints/test_result.html", context)
    return _page(request, access, tested=completion, tested_id=endpoint.pk)


@login_required
@require_POST
def endpoint_cache_clear(request: SignedInRequest, slug: str, endpoint_id: int) -> HttpResponse:
    access, endpoint = get_endpoint_for_user(request.user, slug, endpoint_id)
    try:
        forgotten = services.endpoint_cache_clear(endpoint=endpoint, user=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, f"{forgotten} cached replies of {endpoint.model} forgotten.")
    return redirect("endpoint_list", access.project.slug)
