"""The entity-question pages: thin views over `multichoice.access` and `multichoice.entities`."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.languages import language_choices
from annotation.models import Role
from annotation.next_steps import next_steps
from annotation.views.common import field_errors, report_error
from common.errors import InvalidInput, ServiceError
from multichoice import entities as services
from multichoice.access import get_entity, get_entity_project, get_entity_question
from multichoice.models import Entity, EntityQuestion

MAX_UPLOAD = 20 * 1024 * 1024
EXAMPLE_ATTRIBUTES = [
    {
        "key": "headquarters",
        "label": "Headquarters",
        "kind": "city",
        "inductive": "Where is {entity} headquartered?",
        "deductive": "Which company is headquartered in {value}?",
    }
]


@login_required
def entity_project_create(request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm("annotation.add_project"):
        raise PermissionDenied("Creating projects needs the 'add project' permission.")
    values = {"attributes": json.dumps(EXAMPLE_ATTRIBUTES, indent=2), "grouping_fields": "market, country, region"}
    errors: dict[str, str] = {}
    if request.method == "POST":
        values = request.POST.dict()
        try:
            try:
                attributes = json.loads(values.get("attributes") or "[]")
            except json.JSONDecodeError:
                raise InvalidInput("attributes: not valid JSON.", field="attributes") from None
            project = services.entity_project_create(
                name=values.get("name", ""),
                slug=values.get("slug") or None,
                language=values.get("language", ""),
                attributes=attributes,
                grouping_fields=values.get("grouping_fields", "").split(","),
                entity_label=values.get("entity_label") or "company",
                seed=int(values.get("seed") or 0),
                created_by=request.user,
            )
        except ServiceError as error:
            errors = field_errors(request, error, ["slug"])
        except ValueError:
            messages.error(request, "The seed must be a whole number.")
        else:
            messages.success(request, f"Entity-question project “{project.name}” created.")
            return redirect("entity_home", project.slug)
    context = {"values": values, "languages": language_choices(), "errors": errors}
    return render(request, "multichoice/entity_project_form.html", context)


@login_required
def entity_home(request: HttpRequest, slug: str) -> HttpResponse:
    project = get_entity_project(request.user, slug)
    settings = services.entity_settings(project)
    membership = project.membership  # type: ignore[attr-defined]
    context = {
        "project": project,
        "settings": settings,
        "steps": next_steps(project=project, membership=membership, user=request.user),
    }
    if membership.is_coordinator:
        keys = [a["key"] for a in settings.attributes]
        context["entities"] = [
            (e, [(k, e.raw.get(k), e.values.get(k, ""), k in e.corrected) for k in keys])
            for e in Entity.objects.filter(project=project)[:500]
        ]
        context["question_counts"] = services.question_counts(project)
    return render(request, "multichoice/entity_home.html", context)


@login_required
@require_POST
def entity_import(request: HttpRequest, slug: str) -> HttpResponse:
    project = get_entity_project(request.user, slug, role=Role.COORDINATOR)
    upload = request.FILES.get("file")
    try:
        if upload is None:
            raise InvalidInput("Choose a file to upload.", field="file")
        if upload.size > MAX_UPLOAD:
            raise InvalidInput(f"The file is larger than {MAX_UPLOAD // 1024 // 1024} MB.", field="file")
        report = services.entities_import(
            project=project, data=upload.read(), name=upload.name or "upload.csv", user=request.user
        )
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(
            request, f"{report['created']} entities imported; {len(report['normalised'])} values normalised."
        )
    return redirect("entity_home", project.slug)


@login_required
@require_POST
def entity_correct(request: HttpRequest, slug: str) -> HttpResponse:
    project = get_entity_project(request.user, slug, role=Role.COORDINATOR)
    entity_id = request.POST.get("entity", "")
    if not entity_id.isdigit():
        messages.error(request, "entity: choose an entity.")
        return redirect("entity_home", project.slug)
    entity = get_entity(request.user, slug, int(entity_id))
    try:
        services.entity_correct(
            entity=entity,
            attribute=request.POST.get("attribute", ""),
            value=request.POST.get("value", ""),
            user=request.user,
        )
    except ServiceError as error:
        report_error(request, error)
    else:
        messages.success(request, f"{entity.name}: corrected.")
    return redirect("entity_home", project.slug)


@login_required
@require_POST
def entity_generate(request: HttpRequest, slug: str) -> HttpResponse:
    project = get_entity_project(request.user, slug, role=Role.COORDINATOR)
    report = services.questions_generate(project=project, user=request.user)
    messages.success(
        request,
        f"{report['created']} questions generated; {report['skipped_without_distractors']} "
        "(entity, attribute) left out for want of three distractors.",
    )
    return redirect("entity_home", project.slug)


@login_required
@require_POST
def entity_verify_next(request: HttpRequest, slug: str) -> HttpResponse:
    project = get_entity_project(request.user, slug, role=Role.REVIEWER)
    try:
        question = services.verification_next(project=project, user=request.user)
    except ServiceError as error:
        report_error(request, error)
        return redirect("entity_home", project.slug)
    if question is None:
        messages.info(request, "Nothing is waiting for verification.")
        return redirect("entity_home", project.slug)
    return redirect("entity_verify", project.slug, question.item_id)


@login_required
def entity_verify(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    question = get_entity_question(request.user, slug, item_id)
    if request.method == "POST":
        try:
            swap = request.POST.get("swap")
            question = services.question_verify(
                question=question,
                user=request.user,
                version=int(request.POST.get("version") or 0),
                decision=request.POST.get("decision", ""),
                text=request.POST.get("question"),
                swap=int(swap) if swap not in (None, "") else None,
            )
        except ServiceError as error:
            report_error(request, error)
        except ValueError:
            messages.error(request, "The option index must be a whole number.")
        else:
            if question.status == EntityQuestion.Status.GENERATED:
                messages.success(request, "Distractor swapped.")
                return redirect("entity_verify", question.project.slug, question.item_id)
            messages.success(request, f"Question {question.get_status_display().lower()}.")
            return redirect("entity_home", question.project.slug)
    options = [(index, text, index == question.answer) for index, text in enumerate(question.options)]
    held = services.held_slot(question, request.user)
    context = {"project": question.project, "question": question, "options": options, "held": held}
    return render(request, "multichoice/entity_verify.html", context)
