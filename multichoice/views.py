"""The trivia pages: thin views over `multichoice.access` and `multichoice.services`."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.access import require_project_creator
from annotation.languages import get_language, language_choices
from annotation.models import Project, QAItem, Role
from annotation.next_steps import next_steps
from annotation.views.common import field_errors, report_error
from common.errors import InvalidInput, ServiceError
from common.requests import SignedInRequest
from endpoints.models import Endpoint
from multichoice import jobs, services
from multichoice.access import (
    get_translation_item,
    get_trivia_item,
    get_trivia_project,
    trivia_access,
    trivia_item_access,
)
from multichoice.models import (
    Difficulty,
    ProblemTag,
    Subset,
    TranslationSuggestion,
    TranslationSuggestionJob,
    TriviaImport,
    TriviaItem,
)
from multichoice.services.suggestions import (
    translation_suggestion_latest,
    translation_suggestion_outcomes,
    translation_suggestions_start,
)

FORM_CANDIDATES = 6


def _candidates(post: Any, prefix: str = "candidate") -> list[str]:
    """Candidate fields in order, trailing empty ones dropped (an empty one in between is an error)."""
    values = [post.get(f"{prefix}{index}", "") for index in range(FORM_CANDIDATES)]
    while values and not values[-1].strip():
        values.pop()
    return values


def _item_values(post: Any) -> dict[str, Any]:
    return {
        "question": post.get("question", ""),
        "candidates": _candidates(post),
        "answer": post.get("answer"),
        "subset": post.get("subset", ""),
        "category": post.get("category", ""),
        "difficulty": post.get("difficulty", ""),
    }


def _form_context(project: Any, values: dict[str, Any]) -> dict[str, Any]:
    candidates = list(values.get("candidates") or [])
    candidates += [""] * (FORM_CANDIDATES - len(candidates))
    return {
        "project": project,
        "values": values,
        "candidate_rows": list(enumerate(candidates)),
        "answer": str(values.get("answer", "")),
        "categories": services.trivia_settings(project).categories,
        "subsets": Subset.choices,
        "difficulties": Difficulty.choices,
    }


@login_required
def trivia_project_create(request: SignedInRequest) -> HttpResponse:
    require_project_creator(request.user)
    values: dict[str, str] = {}
    errors: dict[str, str] = {}
    if request.method == "POST":
        values = request.POST.dict()
        try:
            project = services.trivia_project_create(
                name=values.get("name", ""),
                slug=values.get("slug") or None,
                source_language=values.get("source_language", ""),
                target_language=values.get("target_language", ""),
                categories=values.get("categories", "").splitlines(),
                created_by=request.user,
            )
        except ServiceError as error:
            errors = field_errors(request, error, ["slug"])
        else:
            messages.success(request, f"Trivia project “{project.name}” created. Add authors, translators, reviewers.")
            return redirect("trivia_home", project.slug)
    context = {"values": values, "languages": language_choices(), "errors": errors}
    return render(request, "multichoice/project_form.html", context)


@login_required
def trivia_home(request: SignedInRequest, slug: str) -> HttpResponse:
    access = trivia_access(request.user, slug)
    project, membership = access.project, access.membership
    context: dict[str, Any] = {
        "project": project,
        "membership": membership,
        "settings": services.trivia_settings(project),
    }
    context["steps"] = next_steps(project=project, membership=membership, user=request.user)
    context["source"] = get_language(context["settings"].source_language)
    context["target"] = get_language(context["settings"].target_language)
    if membership.is_annotator:
        context["mine"] = services.trivia_items(project).filter(item__author=request.user).order_by("-item_id")[:50]
        context["translating"] = services.trivia_items(project).filter(
            translator=request.user, translation_status=TriviaItem.Translation.CLAIMED
        )
    if membership.is_coordinator:
        context["counts"] = services.trivia_counts(project)
    return render(request, "multichoice/home.html", context)


@login_required
def trivia_settings(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
    settings = services.trivia_settings(project)
    if request.method == "POST":
        criteria = []
        for line in request.POST.get("criteria", "").splitlines():
            if line.strip():
                key, _, rest = line.partition("|")
                label, _, help_text = rest.partition("|")
                criteria.append({"key": key.strip(), "label": label.strip(), "help": help_text.strip()})
        try:
            services.trivia_settings_update(
                project=project,
                actor=request.user,
                version=int(request.POST.get("version") or 0) or None,
                categories=request.POST.get("categories", "").splitlines(),
                review_criteria=criteria,
                reviewers_per_item=int(request.POST.get("reviewers_per_item") or project.reviewers_per_item),
            )
        except ServiceError as error:
            report_error(request, error)
        except ValueError:
            messages.error(request, "The version and the number of reviewers must be whole numbers.")
        else:
            messages.success(request, "Trivia settings saved.")
            return redirect("trivia_settings", project.slug)
    criteria_text = "\n".join(f"{c['key']} | {c['label']} | {c.get('help', '')}" for c in project.review_criteria)
    context = {
        "project": project,
        "settings": settings,
        "criteria_text": criteria_text,
        "categories_text": "\n".join(settings.categories),
        "reviewers_per_item": project.reviewers_per_item,
    }
    if request.method == "POST":  # refused: the form shows what was typed, not the saved values
        context |= {
            "criteria_text": request.POST.get("criteria", ""),
            "categories_text": request.POST.get("categories", ""),
            "reviewers_per_item": request.POST.get("reviewers_per_item", ""),
        }
    return render(request, "multichoice/settings.html", context)


@login_required
def trivia_item_new(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_trivia_project(request.user, slug, role=Role.ANNOTATOR)
    values: dict[str, Any] = {}  # no candidate marked correct until the writer marks one
    if request.method == "POST":
        values = _item_values(request.POST)
        try:
            item, created = services.trivia_item_submit(project=project, user=request.user, **values)
        except ServiceError as error:
            report_error(request, error)
        else:
            if created:
                messages.success(request, "Item sent to review.")
            else:
                messages.info(request, f"You sent this item already (item {item.item_id}); nothing was added.")
            return redirect("trivia_item", project.slug, item.item_id)
    return render(request, "multichoice/item_form.html", _form_context(project, values))


@login_required
def trivia_items(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
    items = services.trivia_items(project)
    status = request.GET.get("translation", "")
    if status in TriviaItem.Translation.values:
        items = items.filter(translation_status=status)
    context = {"project": project, "items": items[:500], "statuses": TriviaItem.Translation.choices, "chosen": status}
    return render(request, "multichoice/items.html", context)


@login_required
def trivia_item(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    """An item with its revisions and reviews; its author rewrites it here, a reviewer reviews it here."""
    access, item = trivia_item_access(request.user, slug, item_id, author=request.method == "POST")
    project, membership = access.project, access.membership
    values: dict[str, Any] = services.trivia_record(item)
    if request.method == "POST":
        values = _item_values(request.POST)
        try:
            services.trivia_item_rewrite(
                item=item, user=request.user, version=int(request.POST.get("version") or 0), **values
            )
        except ServiceError as error:
            report_error(request, error)
        except ValueError:
            messages.error(request, "The version must be a whole number.")
        else:
            messages.success(request, "Rewrite sent to review.")
            return redirect("trivia_item", project.slug, item.item_id)
    revisions = list(item.item.revisions.order_by("number"))
    context = _form_context(project, values) | {
        "membership": membership,
        "item": item,
        "revision": revisions[-1].number if revisions else 0,
        "revisions": revisions,
        "reviews": services.trivia_reviews(item),
        "may_rewrite": item.item.author_id == request.user.pk and item.status == QAItem.Status.NEEDS_REWRITE,
        "may_send_back": membership.is_coordinator
        and item.translator_id is not None
        and item.translation_status in (TriviaItem.Translation.DONE, TriviaItem.Translation.FLAGGED),
        "may_review": membership.is_reviewer and services.trivia_may_review(item, request.user),
    }
    return render(request, "multichoice/item.html", context)


@login_required
@require_POST
def trivia_review(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    item = get_trivia_item(request.user, slug, item_id, role=Role.REVIEWER)
    all_met = request.POST.get("all_criteria") == "met"  # "All criteria met" (A): every box, then the next item
    criteria = {c["key"]: True for c in item.project.review_criteria} if all_met else {}
    criteria |= {key: True for key in request.POST.getlist("criteria")}
    try:
        services.trivia_review(item=item, user=request.user, criteria=criteria, comment=request.POST.get("comment", ""))
    except ServiceError as error:
        report_error(request, error)
        return redirect("trivia_item", item.project.slug, item.item_id)
    item.item.refresh_from_db()
    outcomes: dict[str, str] = {
        QAItem.Status.ACCEPTED: "Accepted.",
        QAItem.Status.NEEDS_REWRITE: "Sent back to the author.",
    }
    messages.success(request, outcomes.get(item.status, "Review recorded; the item waits for its other reviewers."))
    if all_met or request.POST.get("then") == "next":  # "Save and review the next" (Enter on the review form)
        return trivia_review_next(request, item.project.slug)
    return redirect("trivia_home", item.project.slug)


@login_required
@require_POST
def trivia_review_next(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_trivia_project(request.user, slug, role=Role.REVIEWER)
    try:
        item = services.trivia_review_next(project=project, user=request.user)
    except ServiceError as error:
        report_error(request, error)
        return redirect("trivia_home", project.slug)
    if item is None:
        messages.info(request, "Nothing is waiting for review.")
        return redirect("trivia_home", project.slug)
    return redirect("trivia_item", project.slug, item.item_id)


@login_required
@require_POST
def trivia_translate_next(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_trivia_project(request.user, slug, role=Role.ANNOTATOR)
    item = services.translation_claim_next(project=project, user=request.user)
    if item is None:
        messages.info(request, "Nothing is waiting for translation.")
        return redirect("trivia_home", project.slug)
    return redirect("trivia_translate", project.slug, item.item_id)


@login_required
def trivia_translate(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    item = get_translation_item(request.user, slug, item_id)
    suggestion = translation_suggestion_latest(item)
    targets = item.target_candidates or [""] * len(item.candidates)
    values = {"target_question": item.target_question, "tags": item.problem_tags, "note": item.problem_note}
    if request.method == "POST":
        targets = [request.POST.get(f"target{index}", "") for index in range(len(item.candidates))]
        values = {
            "target_question": request.POST.get("target_question", ""),
            "tags": request.POST.getlist("problem_tags"),
            "note": request.POST.get("problem_note", ""),
        }
        try:
            item = services.translation_submit(
                item=item,
                user=request.user,
                target_question=values["target_question"],
                target_candidates=targets,
                problem_tags=values["tags"],
                problem_note=values["note"],
                suggestion=int(request.POST["suggestion"]) if request.POST.get("suggestion", "").isdigit() else None,
                suggestion_taken=request.POST.get("suggestion_taken") == "translation",
            )
        except ServiceError as error:
            report_error(request, error)
        else:
            flagged = item.translation_status == TriviaItem.Translation.FLAGGED
            messages.success(request, "Sent to the coordinator with your tags." if flagged else "Translation saved.")
            if request.POST.get("then") == "next":  # "Save and translate the next" (Ctrl+Enter on the form)
                return trivia_translate_next(request, item.project.slug)
            return redirect("trivia_home", item.project.slug)
    context = {
        "project": item.project,
        "item": item,
        "rows": [
            (index, source, target, index == item.answer)
            for index, (source, target) in enumerate(zip(item.candidates, targets, strict=True))
        ],
        "values": values,
        "tags": ProblemTag.choices,
        "editable": item.translation_status == TriviaItem.Translation.CLAIMED,
        "suggestion": suggestion,
    }
    return render(request, "multichoice/translate.html", context)


@login_required
@vary_on_headers("HX-Request")
def trivia_suggestions(request: SignedInRequest, slug: str) -> HttpResponse:
    """Ask a model for suggested translations of the items open for translation; the jobs, polled by htmx."""
    project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
    error = ""
    if request.method == "POST":
        endpoint = request.POST.get("endpoint", "")
        try:
            translation_suggestions_start(
                project=project, endpoint_id=int(endpoint) if endpoint.isdigit() else None, user=request.user
            )
        except ServiceError as problem:
            error = problem.message
        else:
            messages.success(request, "Asked: the suggestions arrive below as the model answers.")
            return redirect("trivia_suggestions", project.slug)
    jobs = TranslationSuggestionJob.objects.filter(project=project).select_related("created_by")[:20]
    failed = TranslationSuggestion.objects.filter(trivia__project=project, ok=False).select_related("trivia")
    context = {
        "project": project,
        "error": error,
        "endpoints": Endpoint.objects.filter(project=project).order_by("name"),
        "jobs": jobs,
        "active": any(job.is_active for job in jobs),
        "failed": failed.order_by("-id")[:100],
        "outcomes": translation_suggestion_outcomes(project),
    }
    if request.htmx:
        return render(request, "multichoice/suggestions.html#trivia-suggestion-jobs", context)
    return render(request, "multichoice/suggestions.html", context, status=400 if error else 200)


@login_required
def trivia_problems(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
    items = services.trivia_items(project).filter(translation_status=TriviaItem.Translation.FLAGGED)
    return render(
        request, "multichoice/problems.html", {"project": project, "items": items, "labels": dict(ProblemTag.choices)}
    )


@login_required
def trivia_resolve(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    item = get_trivia_item(request.user, slug, item_id, role=Role.COORDINATOR)
    if request.method == "POST":
        resolution = request.POST.get("resolution", "")
        source = None
        if resolution == "fix":
            source = {"question": request.POST.get("question", item.question), "candidates": _candidates(request.POST)}
            if request.POST.get("answer") is not None:
                source["answer"] = request.POST["answer"]
        try:
            services.translation_resolve(
                item=item,
                user=request.user,
                resolution=resolution,
                source=source,
                target_question=request.POST.get("target_question") if resolution == "fix" else None,
                target_candidates=_candidates(request.POST, "target") if resolution == "fix" else None,
            )
        except ServiceError as error:
            report_error(request, error)
        else:
            messages.success(request, f"Resolved: {resolution}.")
            return redirect("trivia_problems", item.project.slug)
    context = {
        "project": item.project,
        "item": item,
        "rows": [
            (index, source, (item.target_candidates + [""] * len(item.candidates))[index], index == item.answer)
            for index, source in enumerate(item.candidates)
        ],
        "labels": dict(ProblemTag.choices),
    }
    return render(request, "multichoice/resolve.html", context)


@login_required
def trivia_balance(request: SignedInRequest, slug: str) -> HttpResponse:
    """Counts per category × subset × difficulty (all items, or only the translated ones), the emptiest cells
    marked, each against its target; the coordinator sets the targets in the same grid."""
    project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
    translated_only = request.GET.get("view") == "translated"
    typed: dict[str, str] = {}
    if request.method == "POST":
        balance = services.trivia_balance(project)
        targets: dict[str, dict[str, dict[str, str]]] = {}
        for index, row in enumerate(balance["rows"]):
            for subset in balance["subsets"]:
                for difficulty in balance["difficulties"]:
                    name = f"t-{index}-{subset}-{difficulty}"
                    typed[name] = request.POST.get(name, "").strip()
                    cells = targets.setdefault(row["category"], {}).setdefault(subset, {})
                    cells[difficulty] = typed[name]
        try:
            services.trivia_targets_set(
                project=project,
                targets={c: t for c, t in targets.items() if c in services.trivia_settings(project).categories},
                version=int(request.POST.get("version") or 0) or None,
                actor=request.user,
            )
        except ServiceError as error:
            report_error(request, error)
        except ValueError:
            messages.error(request, "The version must be a whole number.")
        else:
            messages.success(request, "Targets saved.")
            return redirect("trivia_balance", project.slug)
    balance = services.trivia_balance(project, translated_only=translated_only)
    for index, row in enumerate(balance["rows"]):
        row["index"] = index
        for subset, by_difficulty in row["cells"].items():
            for difficulty, cell in by_difficulty.items():
                name = f"t-{index}-{subset}-{difficulty}"
                cell["input"] = name
                cell["typed"] = typed.get(name, "" if cell["target"] is None else str(cell["target"]))
    known = set(services.trivia_settings(project).categories)
    context = {"project": project, "balance": balance, "known": known}
    return render(request, "multichoice/balance.html", context)


@login_required
def trivia_import(request: SignedInRequest, slug: str) -> HttpResponse:
    """Upload a file: it is stored and queued; the job's page shows progress and then what the file brought. The
    page lists every import with a button to undo it."""
    project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
    if request.method == "POST":
        upload = request.FILES.get("file")
        try:
            if upload is None:
                raise InvalidInput("Choose a file to upload.", field="file")
            job = jobs.trivia_import_start(
                project=project,
                user=request.user,
                upload=upload,
                fmt=request.POST.get("format", "auto"),
                subset=request.POST.get("subset", ""),
                add=request.POST.get("add_categories") == "on",
            )
        except ServiceError as error:
            report_error(request, error)
        else:
            return redirect("trivia_job", project.slug, job.pk)
    context = {
        "project": project,
        "subsets": Subset.choices,
        "imports": services.trivia_imports(project)[:50],
        "jobs": jobs.kind_jobs(project)[:10],
    }
    return render(request, "multichoice/import.html", context)


@login_required
@vary_on_headers("HX-Request")
def trivia_job(request: SignedInRequest, slug: str, job_id: int) -> HttpResponse:
    project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
    return job_page(request, project, job_id)


def job_page(request: SignedInRequest, project: Project, job_id: int) -> HttpResponse:
    """An import or generation job of a multiple-choice project: its progress (polled), then its report."""
    job = jobs.kind_jobs(project).filter(pk=job_id).first()
    if job is None:
        raise Http404("No such job in this project.")
    template = "multichoice/job.html#job-status" if request.htmx else "multichoice/job.html"
    return render(request, template, {"project": project, "job": job, "report": job.report})


@login_required
@require_POST
def trivia_import_undo(request: SignedInRequest, slug: str, import_id: int) -> HttpResponse:
    project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
    batch = get_object_or_404(TriviaImport, project=project, pk=import_id)
    try:
        result = services.trivia_import_undo(batch=batch, user=request.user)
    except ServiceError as error:
        report_error(request, error)
    else:
        worked = f" ({result['worked_on']} had been worked on since)" if result["worked_on"] else ""
        messages.success(
            request,
            f"Import of {batch.name} undone: {result['deleted']} items deleted{worked}; they can be restored from "
            "the Deleted list.",
        )
    return redirect("trivia_import", project.slug)


@login_required
@require_POST
def trivia_send_back(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    item = get_trivia_item(request.user, slug, item_id, role=Role.COORDINATOR)
    try:
        services.translation_send_back(item=item, user=request.user, note=request.POST.get("note", ""))
    except ServiceError as error:
        report_error(request, error)
        return redirect("trivia_item", item.project.slug, item.item_id)
    messages.success(request, "Sent back to the translator.")
    return redirect("trivia_item", item.project.slug, item.item_id)


def _download(data: bytes, name: str, content_type: str) -> HttpResponse:
    response = HttpResponse(data, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@login_required
def trivia_export_csv(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
    return _download(services.trivia_export_csv(project), f"{project.slug}-trivia.csv", "text/csv; charset=utf-8")


@login_required
def trivia_export_jsonl(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_trivia_project(request.user, slug, role=Role.COORDINATOR)
    return _download(services.trivia_export_jsonl(project), f"{project.slug}-trivia.jsonl", "application/x-ndjson")
