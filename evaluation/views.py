"""Evaluation pages: runs of a project with the upload form, one run's status and results tables, its CSV."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.access import ProjectAccess
from annotation.models import Project
from common.errors import ServiceError
from common.requests import SignedInRequest
from endpoints.access import get_endpoint_for_user
from endpoints.models import Endpoint
from evaluation import leaderboard as boards
from evaluation import services, tables
from evaluation.access import ROLES, evaluation_access, get_run_for_user
from evaluation.forms import GenerateForm, UploadForm
from evaluation.metrics import CHRF_PLAIN_SIGNATURE, CHRF_SIGNATURE
from evaluation.models import Prediction
from evaluation.nativqa import nativqa_results
from evaluation.words import metric_name
from exports.access import get_release_of_project, releases_for_project


def _versions(project: Project) -> list[int]:
    return list(releases_for_project(project).published().values_list("version", flat=True))


def _generate_form(project: Project, data: object = None) -> GenerateForm | None:
    """Generation needs the release's prompt templates: Wikipedia QA projects only."""
    if project.kind != Project.Kind.WIKIPEDIA_QA:
        return None
    endpoints = [
        (endpoint.pk, f"{endpoint.name} ({endpoint.model})") for endpoint in Endpoint.objects.filter(project=project)
    ]
    return GenerateForm(data, versions=_versions(project), endpoints=endpoints)


def _list_context(access: ProjectAccess, **forms: object) -> dict[str, object]:
    project = access.project
    return {
        "project": project,
        "membership": access.membership,
        "runs": services.evaluation_runs(project)[:100],
        "form": UploadForm(versions=_versions(project)),
        "generate_form": _generate_form(project),
        **forms,
    }


@login_required
def run_list(request: SignedInRequest, slug: str) -> HttpResponse:
    access = evaluation_access(request.user, slug)
    return render(request, "evaluation/run_list.html", _list_context(access))


@login_required
@require_POST
def run_create(request: SignedInRequest, slug: str) -> HttpResponse:
    access = evaluation_access(request.user, slug)
    project = access.project
    form = UploadForm(request.POST, request.FILES, versions=_versions(project))
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            if upload.size > services.upload_limit():
                raise services.too_large(upload.size)
            run = services.evaluation_run_create(
                project=project,
                release=get_release_of_project(project, form.cleaned_data["release"]),
                user=request.user,
                data=upload.read(),
                file_name=upload.name or "",
                source=form.cleaned_data["source"],
                model=form.cleaned_data["model"],
                scenario=form.cleaned_data["scenario"],
            )
        except ServiceError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            if run.status == run.Status.REFUSED:
                messages.error(request, run.error)
            else:
                messages.success(request, f"{run.counts.get('predictions', 0):,} predictions stored; scoring them.")
            return redirect(run.get_absolute_url())
    return render(request, "evaluation/run_list.html", _list_context(access, form=form), status=400)


@login_required
@require_POST
def run_generate(request: SignedInRequest, slug: str) -> HttpResponse:
    access = evaluation_access(request.user, slug)
    project = access.project
    form = _generate_form(project, request.POST)
    if form is None:
        messages.error(request, "Generation sends a release's prompts; this kind of project has none.")
        return redirect("evaluation_runs", slug)
    if form.is_valid():
        data = form.cleaned_data
        try:
            _, endpoint = get_endpoint_for_user(request.user, slug, data["endpoint"], role=ROLES)
            run = services.evaluation_run_generate(
                project=project,
                release=get_release_of_project(project, data["release"]),
                endpoint=endpoint,
                user=request.user,
                scenarios=data["scenarios"],
                item_limit=data["item_limit"],
            )
        except ServiceError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, f"Asking {endpoint.name}: {run.progress_total:,} prompts.")
            return redirect(run.get_absolute_url())
    return render(request, "evaluation/run_list.html", _list_context(access, generate_form=form), status=400)


@login_required
@vary_on_headers("HX-Request")
def run_detail(request: SignedInRequest, slug: str, run_id: int) -> HttpResponse:
    access, run = get_run_for_user(request.user, slug, run_id)
    template = "evaluation/run_detail.html"
    if request.htmx:
        template += "#status"
    context = {
        "project": access.project,
        "membership": access.membership,
        "run": run,
        "tables": tables.results_tables(run.results, run.comparisons) if run.is_done else [],
        "modes": tables.mode_captions(),
        "small_cell": tables.SMALL_CELL,
        "chrf_signature": CHRF_SIGNATURE,
        "chrf_plain_signature": CHRF_PLAIN_SIGNATURE,
        "provenance": services.evaluation_run_provenance(run),
    }
    return render(request, template, context)


ITEMS_PER_PAGE = 100


@login_required
def run_items(request: SignedInRequest, slug: str, run_id: int) -> HttpResponse:
    """Every item's answer, what was extracted from it and its scores; filtered by model, scenario, outcome."""
    access, run = get_run_for_user(request.user, slug, run_id)
    choices = services.evaluation_run_choices(run)
    model = request.GET.get("model", "")[:200]
    scenario = request.GET.get("scenario", "")[:200]
    extraction = request.GET.get("extraction", "")
    extraction = extraction if extraction in Prediction.Extraction.values else ""
    item_id = request.GET.get("item", "")[:200]
    rows = services.evaluation_run_predictions(
        run, model=model, scenario=scenario, extraction=extraction, item_id=item_id
    )
    page = Paginator(rows, ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    project = access.project
    language = project.standard if project.kind == Project.Kind.WIKIPEDIA_QA else None
    context = {
        "project": project,
        "membership": access.membership,
        "run": run,
        "page": page,
        "choices": choices,
        "outcomes": Prediction.Extraction.choices,
        "chosen": {"model": model, "scenario": scenario, "extraction": extraction, "item": item_id},
        "answer_lang": project.standard_language if language else "",
        "answer_dir": language.direction if language else "auto",
    }
    return render(request, "evaluation/run_items.html", context)


@login_required
def run_results_csv(request: SignedInRequest, slug: str, run_id: int) -> HttpResponse:
    _, run = get_run_for_user(request.user, slug, run_id)
    response = HttpResponse(services.evaluation_run_results_csv(run), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slug}-v{run.release_version}-run{run.pk}-results.csv"'
    return response


@login_required
@require_POST
def run_score(request: SignedInRequest, slug: str, run_id: int) -> HttpResponse:
    """Score again (a failed run, after the cause is fixed); a refused run has nothing to score."""
    _, run = get_run_for_user(request.user, slug, run_id)
    try:
        services.evaluation_run_rescore(run=run)
    except ServiceError as error:
        messages.error(request, error.message)
    return redirect(run.get_absolute_url())


@login_required
def leaderboard(request: SignedInRequest, slug: str) -> HttpResponse:
    """Models × scenarios on one release under one metric, each cell a run's result (n, interval), and its chart."""
    access = evaluation_access(request.user, slug)
    version = request.GET.get("release", "")
    board = boards.leaderboard(
        access.project,
        version=int(version) if version.isdigit() else None,
        kind=request.GET.get("kind", "")[:16],
        metric=request.GET.get("metric", "")[:64],
    )
    context = {
        "project": access.project,
        "membership": access.membership,
        "board": board,
        "kinds": boards.kind_names(board.kinds),
        "metrics": [(f"{mode}:{metric}", metric_name(f"{mode}:{metric}")) for mode, metric in board.metrics],
        "chosen_metric": f"{board.mode}:{board.metric}",
        "chart": boards.leaderboard_chart(board) if board.rows else None,
        "small_cell": tables.SMALL_CELL,
    }
    return render(request, "evaluation/leaderboard.html", context)


@login_required
def nativqa(request: SignedInRequest, slug: str) -> HttpResponse:
    """A validation project's NativQA results: Likert means with intervals and agreement, the categorical tasks."""
    access = evaluation_access(request.user, slug)
    project = access.project
    context = {"project": project, "membership": access.membership, "results": nativqa_results(project)}
    return render(request, "evaluation/nativqa.html", context)
