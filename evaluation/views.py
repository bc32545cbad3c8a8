"""Evaluation pages: runs of a project with the upload form, one run's status and results tables, its CSV."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.access import ProjectAccess
from annotation.models import Project
from common.errors import ServiceError
from common.requests import SignedInRequest
from endpoints.access import get_endpoint_for_user
from endpoints.models import Endpoint
from evaluation import goldflags, services, tables
from evaluation import leaderboard as boards
from evaluation.access import ROLES, evaluation_access, get_run_for_user
from evaluation.forms import GenerateForm, UploadForm
from evaluation.metrics import CHRF_PLAIN_SIGNATURE, CHRF_SIGNATURE
from evaluation.models import EvaluationRun, Prediction
from evaluation.nativqa import nativqa_results
from evaluation.words import metric_name
from exports.access import get_release_of_project, releases_for_project
from review.decisions import GOLD_NOTE_MAX


def _versions(project: Project) -> list[int]:
    return list(releases_for_project(project).published().values_list("version", flat=True))


def _generate_form(project: Project, data: object = None) -> GenerateForm | None:
    """Generation needs prompts: the release's templates (Wikipedia QA) or the named validation template."""
    scenarios = services.generation_scenarios(project.kind)
    if not scenarios:
        return None
    endpoints = [
        (endpoint.pk, f"{endpoint.name} ({endpoint.model})") for endpoint in Endpoint.objects.filter(project=project)
    ]
    return GenerateForm(data, versions=_versions(project), endpoints=endpoints, scenarios=scenarios)


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
    board = _board(request, access.project)
    context = {
        "project": access.project,
        "membership": access.membership,
        "board": board,
        "kinds": boards.kind_names(board.kinds),
        "metrics": [(f"{mode}:{metric}", metric_name(f"{mode}:{metric}")) for mode, metric in board.metrics],
        "chosen_metric": f"{board.mode}:{board.metric}",
        "chart": boards.leaderboard_chart(board) if board.rows else None,
        "board_query": urlencode(
            {"release": board.release_version or "", "kind": board.kind, "metric": f"{board.mode}:{board.metric}"}
        ),
        "download_formats": [("csv", "CSV"), ("md", "Markdown"), ("tex", "LaTeX")],
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


def _item_context(access: ProjectAccess, run: EvaluationRun, item: goldflags.RunItem, **extra: object) -> dict:
    project = access.project
    language = project.standard if project.kind == Project.Kind.WIKIPEDIA_QA else None
    return {
        "project": project,
        "membership": access.membership,
        "run": run,
        "item": item,
        "answer_lang": project.standard_language if language else "",
        "answer_dir": language.direction if language else "auto",
        "note_max": GOLD_NOTE_MAX,
        **extra,
    }


def _run_item(run: EvaluationRun, item_id: str) -> goldflags.RunItem:
    try:
        return goldflags.run_item(run, item_id)
    except ServiceError as error:
        raise Http404(error.message) from None


@login_required
def run_item(request: SignedInRequest, slug: str, run_id: int, release_item: str) -> HttpResponse:
    """One item as the run saw it: question, gold and evidence from the release, every model's answer under every
    scenario side by side, the live item's review history and its gold flags, and *gold looks wrong*."""
    access, run = get_run_for_user(request.user, slug, run_id)
    item = _run_item(run, release_item)
    return render(request, "evaluation/run_item.html", _item_context(access, run, item))


@login_required
@require_POST
@vary_on_headers("HX-Request")
def gold_flag(request: SignedInRequest, slug: str, run_id: int, release_item: str) -> HttpResponse:
    """*Gold looks wrong*: the item goes back to review for the next release, with the note and this run."""
    access, run = get_run_for_user(request.user, slug, run_id)
    item = _run_item(run, release_item)
    note = request.POST.get("note", "")
    try:
        goldflags.gold_flag_create(run=run, item_id=item.item_id, user=request.user, note=note)
    except ServiceError as error:
        context = _item_context(access, run, item, flag_error=error.message, note=note)
        template = "evaluation/run_item.html#gold-flag" if request.htmx else "evaluation/run_item.html"
        return render(request, template, context, status=400)
    item = _run_item(run, release_item)
    if request.htmx:
        return render(request, "evaluation/run_item.html#gold-flag", _item_context(access, run, item, flagged=True))
    messages.success(request, "Flagged: the item goes back to review for the next release.")
    return redirect("evaluation_item", slug, run.pk, item.item_id)


def download_response(text: str, fmt: str, name: str) -> HttpResponse:
    """A results download (page and API alike): `name.fmt` as an attachment of the format's type."""
    response = HttpResponse(text, content_type=f"{services.DOWNLOAD_TYPES[fmt]}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


@login_required
def run_results_download(request: SignedInRequest, slug: str, run_id: int, fmt: str) -> HttpResponse:
    """The run's results as CSV, results.json, Markdown or LaTeX (the tables of the run page)."""
    _, run = get_run_for_user(request.user, slug, run_id)
    if fmt not in services.DOWNLOAD_TYPES:
        raise Http404("No such download: csv, json, md or tex.")
    text = services.evaluation_run_results_download(run, fmt)
    return download_response(text, fmt, f"{slug}-v{run.release_version}-run{run.pk}-results")


def _board(request: SignedInRequest, project: Project) -> boards.Board:
    version = request.GET.get("release", "")
    return boards.leaderboard(
        project,
        version=int(version) if version.isdigit() else None,
        kind=request.GET.get("kind", "")[:16],
        metric=request.GET.get("metric", "")[:64],
    )


@login_required
def leaderboard_download(request: SignedInRequest, slug: str, fmt: str) -> HttpResponse:
    """The leaderboard (same choices as the page) as CSV, JSON, Markdown or LaTeX."""
    access = evaluation_access(request.user, slug)
    if fmt not in services.DOWNLOAD_TYPES:
        raise Http404("No such download: csv, json, md or tex.")
    board = _board(request, access.project)
    text = boards.leaderboard_download(board, access.project, fmt)
    return download_response(text, fmt, f"{slug}-v{board.release_version}-leaderboard")
