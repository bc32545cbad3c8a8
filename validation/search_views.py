"""The search collection pages (coordinators): thin views over validation/search.py."""

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
from validation import search, services
from validation.access import get_search_collection, get_validation_project
from validation.models import SearchCollection, SearchEngine, SearchQuery, SearchType, SeedQuery, ValidationItem

LATEST_ITEMS = 20
QUERIES_SHOWN = 200  # the first ones; the API lists them all
FIELDS = ("engine", "search_type", "iterations", "budget", "location", "gl", "hl")


def _defaults(project: Project) -> dict[str, str]:
    """The start form's first values: the last collection's, else the project's location and language."""
    last = SearchCollection.objects.filter(project=project).order_by("-id").first()
    if last is not None:
        return {field: str(getattr(last, field)) for field in FIELDS}
    return {
        "engine": SearchEngine.GOOGLE,
        "search_type": SearchType.TEXT,
        "iterations": "1",
        "budget": "100",
        "location": services.validation_settings(project).location,
        "gl": "",
        "hl": search.LANGUAGE_HL.get(project.standard_language, ""),
    }


@login_required
def validation_search(request: SignedInRequest, slug: str) -> HttpResponse:
    """Set the project's SerpApi key and start a collection of its seed queries."""
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    values = _defaults(project)
    errors: dict[str, str] = {}
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "key":
                search.search_key_set(project=project, key=request.POST.get("api_key", ""), user=request.user)
                messages.success(request, "The SerpApi key is saved, encrypted; it is not shown again.")
                return redirect("validation_search", project.slug)
            if action == "remove_key":
                search.search_key_remove(project=project, user=request.user)
                messages.success(request, "The SerpApi key is removed.")
                return redirect("validation_search", project.slug)
            values = {field: request.POST.get(field, "").strip() for field in FIELDS}
            collection = search.search_collection_start(
                project=project,
                user=request.user,
                engine=values["engine"],
                search_type=values["search_type"] or SearchType.TEXT,
                iterations=_number(values["iterations"], "iterations"),
                budget=_number(values["budget"], "budget"),
                location=values["location"],
                gl=values["gl"],
                hl=values["hl"],
            )
        except ServiceError as error:
            errors[error.field or "form"] = error.message
        else:
            return redirect("validation_search_detail", project.slug, collection.pk)
    context = {
        "project": project,
        "values": values,
        "errors": errors,
        "engines": SearchEngine.choices,
        "search_types": SearchType.choices,
        "key_hint": search.search_key_hint(project),
        "seed_count": SeedQuery.objects.filter(project=project).count(),
        "collections": SearchCollection.objects.filter(project=project).select_related("created_by")[:20],
        "max_iterations": search.MAX_ITERATIONS,
        "max_budget": search.MAX_BUDGET,
    }
    return render(request, "validation/search.html", context, status=400 if errors else 200)


def _number(text: str, field: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InvalidInput(f"{field}: a whole number.", field=field) from None


def _detail_context(collection: SearchCollection) -> dict[str, Any]:
    items = (
        ValidationItem.objects.filter(project=collection.project, metadata__search__collection=collection.pk)
        .select_related("item")
        .order_by("-id")[:LATEST_ITEMS]
    )
    counts = search.search_query_counts(collection)
    open_queries = counts[SearchQuery.Status.PENDING] + counts[SearchQuery.Status.FAILED]
    return {
        "project": collection.project,
        "collection": collection,
        "queries": [(SearchQuery.Status(value).label, value, n) for value, n in counts.items()],
        "items": items,
        "recent_queries": SearchQuery.objects.filter(collection=collection).order_by("iteration", "position")[
            :QUERIES_SHOWN
        ],
        "resumable": not collection.is_active and open_queries + counts[SearchQuery.Status.OVER_BUDGET] > 0,
    }


@login_required
@vary_on_headers("HX-Request")
def validation_search_detail(request: SignedInRequest, slug: str, collection_id: int) -> HttpResponse:
    collection = get_search_collection(request.user, slug, collection_id)
    context = _detail_context(collection)
    if request.htmx:
        return render(request, "validation/search_detail.html#search-status", context)
    return render(request, "validation/search_detail.html", context)


@login_required
@require_POST
def validation_search_cancel(request: SignedInRequest, slug: str, collection_id: int) -> HttpResponse:
    collection = get_search_collection(request.user, slug, collection_id)
    try:
        search.search_collection_cancel(collection=collection, user=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, "The collection stops before its next query.")
    return redirect("validation_search_detail", slug, collection.pk)


@login_required
@require_POST
def validation_search_resume(request: SignedInRequest, slug: str, collection_id: int) -> HttpResponse:
    collection = get_search_collection(request.user, slug, collection_id)
    try:
        budget = request.POST.get("budget", "").strip()
        search.search_collection_resume(
            collection=collection, user=request.user, budget=_number(budget, "budget") if budget else None
        )
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, "The collection goes on from its first unanswered query.")
    return redirect("validation_search_detail", slug, collection.pk)
