"""The validation pages: thin views over `validation.access` and `validation.services`."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.files.uploadedfile import UploadedFile
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation import ingest
from annotation.access import require_project_creator
from annotation.languages import language_choices
from annotation.models import Project, QAItem, Role
from annotation.next_steps import next_steps
from annotation.views.common import field_errors, report_error
from common.errors import InvalidInput, ServiceError
from common.requests import SignedInRequest
from review.history import text_diff
from review.models import ReviewSlot
from validation import pages, services
from validation.access import get_slot_for_validator, get_validation_item, get_validation_project, validation_access
from validation.models import (
    LOCATION_FORMS,
    QUESTION_BAD_REASONS,
    DomainLabel,
    LeaveOut,
    SeedQuery,
    SourceDomain,
    Task,
    ValidationItem,
)

ITEMS_PER_PAGE = 50


def _upload_file(request: HttpRequest, name: str = "file") -> UploadedFile:
    upload = request.FILES.get(name)
    if upload is None:
        raise InvalidInput("Choose a file to upload.", field=name)
    return upload


@login_required
def validation_project_create(request: SignedInRequest) -> HttpResponse:
    require_project_creator(request.user)
    values = {"validators_per_item": "1"}
    errors: dict[str, str] = {}
    if request.method == "POST":
        values = request.POST.dict()
        try:
            project = services.validation_project_create(
                name=values.get("name", ""),
                slug=values.get("slug") or None,
                language=values.get("language", ""),
                location=values.get("location", ""),
                validators_per_item=int(values.get("validators_per_item") or 1),
                created_by=request.user,
            )
        except ServiceError as error:
            errors = field_errors(request, error, ["slug"])
        except ValueError:
            messages.error(request, "Validators per item must be a whole number.")
        else:
            messages.success(request, f"Validation project “{project.name}” created. Add validators as reviewers.")
            return redirect("validation_home", project.slug)
    context = {"values": values, "languages": language_choices(), "errors": errors}
    return render(request, "validation/project_form.html", context)


@login_required
def validation_home(request: SignedInRequest, slug: str) -> HttpResponse:
    access = validation_access(request.user, slug)
    project, membership = access.project, access.membership
    context: dict[str, Any] = {
        "project": project,
        "membership": membership,
        "settings": services.validation_settings(project),
    }
    context["steps"] = next_steps(project=project, membership=membership, user=request.user)
    context["task_labels"] = [label for value, label in Task.choices if value in context["settings"].tasks]
    if membership.is_reviewer:
        context["held"] = (
            ReviewSlot.objects.filter(project=project, reviewer=request.user, status=ReviewSlot.Status.CLAIMED)
            .select_related("item")
            .order_by("claimed_at")
        )
        context["done"] = ReviewSlot.objects.filter(
            project=project, reviewer=request.user, status=ReviewSlot.Status.DONE
        ).count()
    if membership.is_coordinator:
        context["status_counts"] = dict(
            QAItem.objects.alive().filter(project=project).values_list("status").annotate(n=Count("id")).order_by()
        )
        context["open_slots"] = ReviewSlot.objects.filter(
            project=project, status=ReviewSlot.Status.OPEN, item__deleted_at__isnull=True
        ).count()
        context["seed_count"] = SeedQuery.objects.filter(project=project).count()
        context["duplicate_groups"] = len(services.duplicate_groups(project))
    return render(request, "validation/home.html", context)


@login_required
def validation_settings(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    settings = services.validation_settings(project)
    if request.method == "POST":
        criteria = []
        for index in range(len(settings.likert_criteria) + 1):
            key = request.POST.get(f"criterion_{index}_key", "").strip()
            if key:
                criteria.append(
                    {
                        "key": key,
                        "label": request.POST.get(f"criterion_{index}_label", ""),
                        "rubric": request.POST.get(f"criterion_{index}_rubric", ""),
                    }
                )
        try:
            services.validation_settings_update(
                project=project,
                user=request.user,
                version=int(request.POST.get("version") or 0) or None,
                tasks=request.POST.getlist("tasks"),
                location=request.POST.get("location", ""),
                likert_criteria=criteria,
                duplicate_threshold=int(request.POST.get("duplicate_threshold") or settings.duplicate_threshold),
                release_leave_out=request.POST.getlist("release_leave_out")
                if "release_leave_out_shown" in request.POST
                else None,
                validators_per_item=int(request.POST.get("validators_per_item") or project.reviewers_per_item),
            )
        except ServiceError as error:
            report_error(request, error)
        except ValueError:
            messages.error(request, "Numbers must be whole numbers.")
        else:
            messages.success(request, "Validation settings saved.")
            return redirect("validation_settings", project.slug)
    context = {"project": project, "settings": settings, "tasks": Task.choices, "leave_out": LeaveOut.choices}
    return render(request, "validation/settings.html", context)


@login_required
def validation_import(request: SignedInRequest, slug: str) -> HttpResponse:
    """Upload a file: it is stored and queued; the job's page shows progress and then the report."""
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    if request.method == "POST":
        try:
            job = ingest.import_job_create(
                project=project,
                user=request.user,
                files=[_upload_file(request)],
                format=request.POST.get("format", "auto"),
                dry_run="dry_run" in request.POST,
            )
        except ServiceError as error:
            report_error(request, error)
        else:
            return redirect("validation_import_job", project.slug, job.pk)
    jobs = services.validation_import_jobs(project)[:20]
    return render(request, "validation/import.html", {"project": project, "jobs": jobs})


@login_required
@vary_on_headers("HX-Request")
def validation_import_job(request: SignedInRequest, slug: str, job_id: int) -> HttpResponse:
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    job = services.validation_import_jobs(project).filter(pk=job_id).first()
    if job is None:
        raise Http404("No such import in this project.")
    template = "validation/import_job.html#job-status" if request.htmx else "validation/import_job.html"
    return render(request, template, {"project": project, "job": job, "report": job.report})


@login_required
def validation_seeds(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    seeds = None
    if request.method == "POST":
        try:
            if request.POST.get("action") == "location":
                location = services.location_save(
                    project=project,
                    name=request.POST.get("name", ""),
                    forms={key: request.POST.get(f"form_{key}", "") for key, _ in LOCATION_FORMS},
                    user=request.user,
                    language=request.POST.get("language", "").strip(),
                )
                messages.success(request, f"Forms of {location.name} saved.")
                return redirect("validation_seeds", project.slug)
            if request.POST.get("action") == "import":
                job = services.seed_queries_import_start(
                    project=project,
                    user=request.user,
                    upload=_upload_file(request),
                    locations=request.POST.get("locations", "").splitlines(),
                )
                return redirect("validation_import_job", project.slug, job.pk)
            else:
                seeds = services.seed_query_create(
                    project=project,
                    topic=request.POST.get("topic", ""),
                    query=request.POST.get("query", ""),
                    location=request.POST.get("location", ""),
                    user=request.user,
                )
        except ServiceError as error:
            report_error(request, error)
        else:
            if seeds is not None:
                messages.success(
                    request,
                    f"{seeds.added} seed queries added; {seeds.exact_duplicates} exact and "
                    f"{seeds.near_duplicates} near duplicates left out.",
                )
    queries = SeedQuery.objects.filter(project=project).order_by("topic", "id")
    page = Paginator(queries, 100).get_page(request.GET.get("page"))
    topics = queries.values_list("topic").annotate(n=Count("id")).order_by("topic")
    context = {
        "project": project,
        "page": page,
        "topics": topics,
        "seeds": seeds,
        "locations": _location_rows(project),
        "languages": language_choices(),
    }
    return render(request, "validation/seeds.html", context)


def _location_rows(project: Project) -> list[dict[str, Any]]:
    """Each location's forms as typed, with the derived one as the placeholder; and an empty row to add one."""
    rows = []
    for location in [*project.locations.all(), None]:
        derived = services.location_forms(project, [location.name])[0] if location else None
        fields = [
            {
                "key": key,
                "label": label,
                "value": (location.forms.get(key) or "") if location else "",
                "derived": (derived.form(key) or "") if derived else "",
            }
            for key, label in LOCATION_FORMS
        ]
        rows.append(
            {
                "name": location.name if location else "",
                "fields": fields,
                "language": location.language if location else "",
            }
        )
    return rows


@login_required
def validation_seeds_csv(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    response = HttpResponse(services.seed_queries_csv(project), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{project.slug}-seed-queries.csv"'
    return response


RECENT_DOMAINS = 50  # labelled domains listed with their history (any other is changed by name)


@login_required
def validation_domains(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    if request.method == "POST":
        try:
            if request.POST.get("action") == "import":
                job = services.source_domains_import_start(
                    project=project, user=request.user, upload=_upload_file(request)
                )
                return redirect("validation_import_job", project.slug, job.pk)
            if request.POST.get("action") == "relabel":
                changed = services.source_domain_relabel(
                    project=project,
                    domain=request.POST.get("domain", ""),
                    label=request.POST.get("label", ""),
                    note=request.POST.get("note", ""),
                    user=request.user,
                )
                messages.success(request, f"{changed.domain} is now {changed.get_label_display().lower()}.")
                return redirect("validation_domains", project.slug)
            labelled_now = services.source_domain_label(
                project=project,
                domain=request.POST.get("domain", ""),
                label=request.POST.get("label", ""),
                user=request.user,
                origin=SourceDomain.Origin.COORDINATOR,
            )
            messages.success(request, f"{labelled_now.domain} labelled {labelled_now.get_label_display().lower()}.")
            return redirect("validation_domains", project.slug)
        except ServiceError as error:
            report_error(request, error)
    labelled = SourceDomain.objects.filter(project=project).values_list("domain", flat=True)
    unlabelled = (
        ValidationItem.objects.filter(project=project, item__deleted_at__isnull=True)
        .exclude(domain="")
        .exclude(domain__in=labelled)
        .values_list("domain")
        .annotate(n=Count("id"))
        .order_by("-n", "domain")[:200]
    )
    counts = dict(SourceDomain.objects.filter(project=project).values_list("label").annotate(n=Count("id")).order_by())
    recent = list(
        SourceDomain.objects.filter(project=project)
        .select_related("labelled_by")
        .order_by("-labelled_at", "domain")[:RECENT_DOMAINS]
    )
    history = services.source_domain_history(recent)
    context = {
        "project": project,
        "unlabelled": unlabelled,
        "label_counts": [(value, label, counts.get(value, 0)) for value, label in DomainLabel.choices],
        "labels": DomainLabel.choices,
        "labelled": [(domain, history[domain.pk]) for domain in recent],
        "labelled_total": labelled.count(),
    }
    return render(request, "validation/domains.html", context)


@login_required
def validation_duplicates(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    groups = services.duplicate_groups(project)
    total = sum(len(group["duplicates"]) for group in groups)
    context = {"project": project, "groups": groups, "duplicates_total": total}
    return render(request, "validation/duplicates.html", context)


@login_required
@require_POST
def validation_merge(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    try:
        keep = ValidationItem.objects.filter(project=project, item_id=int(request.POST.get("keep") or 0)).first()
        duplicate = ValidationItem.objects.filter(
            project=project, item_id=int(request.POST.get("duplicate") or 0)
        ).first()
        if keep is None or duplicate is None:
            raise InvalidInput("Choose an item to keep and a duplicate of it from this project.", field="duplicate")
        services.validation_item_merge(project=project, keep=keep, duplicate=duplicate, user=request.user)
    except ServiceError as error:
        report_error(request, error)
    except ValueError:
        messages.error(request, "Items are named by their numbers.")
    else:
        messages.success(request, f"Item {duplicate.item_id} merged into item {keep.item_id}.")
    return redirect("validation_duplicates", project.slug)


@login_required
@require_POST
def validation_merge_all(request: SignedInRequest, slug: str) -> HttpResponse:
    """Merge every listed duplicate (or only the exact repeats) into the item kept of its set."""
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    try:
        result = services.validation_duplicates_merge_all(
            project=project, user=request.user, which=request.POST.get("which") or services.MERGE_ALL
        )
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(
            request,
            f"{result['merged']} duplicate{pluralize(result['merged'])} merged in {result['sets']} "
            f"set{pluralize(result['sets'])}; {result['left']} left to look at.",
        )
    return redirect("validation_duplicates", project.slug)


@login_required
def validation_items(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    label = request.GET.get("label", "")
    items = services.validation_items_filtered(project, label=label, status=request.GET.get("status", ""))
    page = Paginator(items, ITEMS_PER_PAGE).get_page(request.GET.get("page"))
    services.attach_domain_labels(project, page.object_list)
    context = {
        "project": project,
        "page": page,
        "label": label,
        "status": request.GET.get("status", ""),
        "labels": [*DomainLabel.choices, ("unlabelled", "Not labelled yet")],
        "statuses": QAItem.Status.choices,
    }
    return render(request, "validation/items.html", context)


@login_required
def validation_item(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    vitem = get_validation_item(request.user, slug, item_id)
    project = vitem.project
    revisions = list(vitem.item.revisions.select_related("author").order_by("number"))
    diffs = [
        {"revision": revision, "ops": text_diff(revisions[0].answer_standard, revision.answer_standard)}
        for revision in revisions
    ]
    final = services.final_answer_record(
        services.final_answers([vitem.item_id]).get(vitem.item_id), revisions[-1] if revisions else None
    )
    judgments = list(vitem.item.validation_judgments.select_related("validator").order_by("id"))
    settings = services.validation_settings(project)
    context = {
        "project": project,
        "vitem": vitem,
        "item": vitem.item,
        "diffs": diffs,
        "final": final,
        "judgments": judgments,
        "aggregate": services.judgments_aggregate(judgments, settings.likert_criteria),
        "domain": SourceDomain.objects.filter(project=project, domain=vitem.domain).first(),
        "settings": settings,
    }
    return render(request, "validation/item.html", context)


@login_required
@require_POST
def validation_final_answer(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    """The coordinator chooses which revision's answer the release gives as the final answer."""
    vitem = get_validation_item(request.user, slug, item_id)
    try:
        number = int(request.POST.get("revision") or 0)
        services.validation_final_answer_choose(
            vitem=vitem, revision_number=number, user=request.user, note=request.POST.get("note", "")
        )
    except ServiceError as error:
        report_error(request, error)
    except ValueError:
        messages.error(request, "revision: a revision number.")
    else:
        messages.success(request, f"The answer of revision {number} is now the final answer.")
    return redirect("validation_item", slug, item_id)


@login_required
@require_POST
def validation_next(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_validation_project(request.user, slug, role=Role.REVIEWER)
    try:
        slot = services.validation_claim_next(project=project, user=request.user, skipped=_skipped(request, project))
    except ServiceError as error:
        report_error(request, error)
        return redirect("validation_home", project.slug)
    if slot is None:
        messages.info(request, "Nothing is waiting for you: every item has its validators.")
        return redirect("validation_home", project.slug)
    return redirect("validation_task", project.slug, slot.pk)


def _skipped(request: SignedInRequest, project: Project) -> list[int]:
    """Items this validator skipped in this session: the queue hands them to others first."""
    return list(request.session.get(f"validation-skipped-{project.pk}", []))


def _next_task(request: SignedInRequest, project: Project, done: str) -> HttpResponse:
    following = services.validation_claim_next(project=project, user=request.user, skipped=_skipped(request, project))
    if following is None:
        messages.success(request, f"{done} That was the last item waiting for you.")
        return redirect("validation_home", project.slug)
    messages.success(request, f"{done} Here is the next item.")
    return redirect("validation_task", project.slug, following.pk)


def _left(request: SignedInRequest, project: Project, slot: ReviewSlot) -> int:
    """This item (while held) and the ones still waiting for this validator."""
    waiting = services.validation_waiting_count(project=project, user=request.user, skipped=_skipped(request, project))
    return waiting + (slot.status == ReviewSlot.Status.CLAIMED)


@login_required
def validation_task(request: SignedInRequest, slug: str, slot_id: int) -> HttpResponse:
    slot = get_slot_for_validator(request.user, slug, slot_id)
    project = slot.item.project
    settings = services.validation_settings(project)
    values: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    if request.method == "POST" and request.POST.get("action") == "skip":
        try:
            services.validation_skip(slot=slot, user=request.user)
        except ServiceError as error:
            report_error(request, error)
            return redirect("validation_task", project.slug, slot.pk)
        request.session[f"validation-skipped-{project.pk}"] = [*_skipped(request, project), slot.item_id][-500:]
        return _next_task(request, project, f"Item {slot.item_id} skipped: someone else will take it.")
    if request.method == "POST":
        values = request.POST.dict()
        data = pages.judgment_data_from_form(request.POST, settings)
        try:
            services.validation_submit(
                slot=slot, user=request.user, version=int(request.POST.get("version") or 0), data=data
            )
        except ServiceError as error:
            errors = error.details if isinstance(error.details, dict) else {}
            if not errors:
                report_error(request, error)
        else:
            return _next_task(request, project, "Saved.")
    context = services.task_context(slot, settings)
    context |= {"project": project, "slot": slot, "values": values, "errors": errors}
    context |= {"reasons": QUESTION_BAD_REASONS, "domain_labels": DomainLabel.choices, "Task": Task}
    context |= {
        "error_lines": pages.error_lines(errors, settings),
        "likert": pages.likert_rows(settings, values, errors),
        "left": _left(request, project, slot),
    }
    status = 400 if errors else 200
    return render(request, "validation/task.html", context, status=status)


@login_required
def validation_agreement(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_validation_project(request.user, slug, role=Role.COORDINATOR)
    figures = services.validation_agreement(project)
    return render(request, "validation/agreement.html", {"project": project, "figures": figures})
