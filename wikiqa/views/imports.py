"""Coordinator pages for getting page pairs in: file imports and Wikipedia collections.

Both run on a worker; their pages poll a small partial every two seconds
(htmx) while the job is active and stop polling when it ends.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.files.uploadedfile import UploadedFile
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation import ingest
from annotation.access import get_import_job_for_user, get_project_for_user
from annotation.importers.sources import FORMATS
from annotation.models import ImportJob, Project, Role
from annotation.views.common import report_error
from common.errors import ServiceError
from common.requests import SignedInRequest
from wikiqa import collect
from wikiqa.access import get_collection_for_user
from wikiqa.models import Collection, CollectionTitle

TITLES_PER_PAGE = 100


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(file, initial) for file in data]
        return [single(data, initial)] if data else []


class ImportForm(forms.Form):
    # The form metaclass takes declared fields off the class; the stubs see this as BaseForm.files.
    files = MultipleFileField(  # type: ignore[assignment]
        widget=MultipleFileInput(attrs={"accept": ".jsonl,.ndjson,.csv,.json"}),
        help_text="JSONL, CSV, or a WiLoVa release (choose its base file and its _QualityMeta file together).",
    )
    format = forms.ChoiceField(
        choices=[(value, "Tell by the file name" if value == "auto" else value.upper()) for value in FORMATS],
        initial="auto",
        required=False,
    )


class CollectionForm(forms.Form):
    titles = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8}),
        required=False,
        help_text="Titles of local-wiki articles, one per line.",
    )
    titles_file = forms.FileField(required=False, help_text="…or a UTF-8 text file with one title per line.")
    category = forms.CharField(
        max_length=500, required=False, help_text="…or a local-wiki category, e.g. Kategorie:Essn und Trinkn."
    )
    standard_variant = forms.CharField(
        max_length=16,
        required=False,
        label="Script variant of the standard pages",
        help_text="For Chinese: zh-cn, zh-hk, zh-tw, … Leave empty for the project's setting.",
    )
    local_heavy_only = forms.BooleanField(
        required=False,
        initial=True,
        label="Keep only local-heavy pairs (local lead and full text both longer than the standard ones)",
    )

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        titles = collect.parse_titles(data.get("titles") or "")
        upload = data.get("titles_file")
        if upload is not None:
            if upload.size > settings.IMPORT_MAX_BYTES:
                raise forms.ValidationError("The titles file is larger than the import limit.")
            try:
                titles += collect.parse_titles(upload.read().decode("utf-8-sig"))
            except UnicodeDecodeError:
                self.add_error("titles_file", "The titles file is not UTF-8 text.")
        data["title_list"] = list(dict.fromkeys(titles))
        if not data["title_list"] and not (data.get("category") or "").strip():
            raise forms.ValidationError("Give titles (pasted or as a file) or a category.")
        return data


@login_required
def import_start(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR, kind=Project.Kind.WIKIPEDIA_QA)
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            job = ingest.import_job_create(
                project=project,
                user=request.user,
                files=form.cleaned_data["files"],
                format=form.cleaned_data["format"] or "auto",
                dry_run="dry_run" in request.POST,
            )
        except ServiceError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            return redirect("import_detail", project.slug, job.pk)
    jobs = ImportJob.objects.filter(project=project).select_related("created_by")[:20]
    context = {"project": project, "form": form, "jobs": jobs, "max_bytes": settings.IMPORT_MAX_BYTES}
    return render(request, "wikiqa/import.html", context, status=400 if form.errors else 200)


def _detail_context(project: Project, job: ImportJob, **extra: object) -> dict[str, object]:
    return {
        "project": project,
        "job": job,
        "report": job.report,
        "rerunnable": not job.is_active and ingest.import_job_rerunnable(job),
        "region_choices": region_choices(project),
        "chosen": {},
        **extra,
    }


def region_choices(project: Project) -> list[tuple[str, str]]:
    """The project's regions with what each means, for people choosing one."""
    meaning = {
        "local": f"where {project.local.name} is spoken",
        "standard": f"where {project.standard.name} is the standard",
        "other": "neither, or general",
    }
    return [(value, f"{value}: {meaning[value]}" if value in meaning else value) for value in project.regions]


@login_required
@vary_on_headers("HX-Request")
def import_detail(request: SignedInRequest, slug: str, job_id: int) -> HttpResponse:
    job = get_import_job_for_user(request.user, slug, job_id)
    project = job.project
    template = "wikiqa/import_detail.html#job-status" if request.htmx else "wikiqa/import_detail.html"
    return render(request, template, _detail_context(project, job))


@login_required
@require_POST
def import_rerun(request: SignedInRequest, slug: str, job_id: int) -> HttpResponse:
    """Map a dry run's unknown regions into the project's vocabulary and import (or check) its files again."""
    job = get_import_job_for_user(request.user, slug, job_id)
    project = job.project
    names, values = request.POST.getlist("region_name"), request.POST.getlist("region_value")
    region_map = {name: value for name, value in zip(names, values, strict=False) if value}
    try:
        again = ingest.import_job_rerun(
            job=job, user=request.user, region_map=region_map, dry_run="dry_run" in request.POST
        )
    except ServiceError as error:
        context = _detail_context(project, job, rerun_error=error.message, chosen=region_map)
        return render(request, "wikiqa/import_detail.html", context, status=400)
    return redirect("import_detail", project.slug, again.pk)


@login_required
def collection_start(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_project_for_user(request.user, slug, role=Role.COORDINATOR, kind=Project.Kind.WIKIPEDIA_QA)
    form = CollectionForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            collection = collect.collection_create(
                project=project,
                user=request.user,
                titles=form.cleaned_data["title_list"],
                category="" if form.cleaned_data["title_list"] else form.cleaned_data["category"],
                local_heavy_only=form.cleaned_data["local_heavy_only"],
                standard_variant=form.cleaned_data["standard_variant"] or None,
            )
        except ServiceError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            return redirect("collection_detail", project.slug, collection.pk)
    collections = Collection.objects.filter(project=project).select_related("created_by")[:20]
    context = {"project": project, "form": form, "collections": collections}
    return render(request, "wikiqa/collection.html", context, status=400 if form.errors else 200)


@login_required
@vary_on_headers("HX-Request")
def collection_detail(request: SignedInRequest, slug: str, collection_id: int) -> HttpResponse:
    collection = get_collection_for_user(request.user, slug, collection_id)
    project = collection.project
    context = {
        "project": project,
        "collection": collection,
        "outcomes": [
            (CollectionTitle.Outcome(value).label, value, n)
            for value, n in collect.collection_outcome_counts(collection).items()
        ],
    }
    if request.htmx:
        return render(request, "wikiqa/collection_detail.html#collection-status", context)
    titles = collection.titles.select_related("pair").order_by("position")
    outcome = request.GET.get("outcome", "")
    if outcome in CollectionTitle.Outcome.values:
        titles = titles.filter(outcome=outcome)
    context["page"] = Paginator(titles, TITLES_PER_PAGE).get_page(request.GET.get("page"))
    context["outcome"] = outcome
    return render(request, "wikiqa/collection_detail.html", context)


@login_required
@require_POST
def collection_cancel(request: SignedInRequest, slug: str, collection_id: int) -> HttpResponse:
    collection = get_collection_for_user(request.user, slug, collection_id)
    project = collection.project
    try:
        collect.collection_cancel(collection=collection, actor=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, "The collection stops before its next title.")
    return redirect("collection_detail", project.slug, collection.pk)


@login_required
@require_POST
def collection_resume(request: SignedInRequest, slug: str, collection_id: int) -> HttpResponse:
    collection = get_collection_for_user(request.user, slug, collection_id)
    project = collection.project
    try:
        collect.collection_resume(collection=collection, actor=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, "The collection goes on from its first title without an outcome.")
    return redirect("collection_detail", project.slug, collection.pk)
