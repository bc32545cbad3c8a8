"""The entity-question pages: thin views over `multichoice.access` and `multichoice.entities`."""

from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import F
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from annotation.access import require_project_creator
from annotation.languages import language_choices
from annotation.models import Project, Role
from annotation.next_steps import next_steps
from annotation.views.common import field_errors, report_error
from common.errors import InvalidInput, ServiceError
from common.requests import SignedInRequest
from multichoice import entities as services
from multichoice import jobs
from multichoice.access import (
    entity_access,
    entity_question_access,
    get_entity,
    get_entity_project,
)
from multichoice.models import AttributeKind, Entity, EntityQuestion
from multichoice.views import job_page

QUESTIONS_SHOWN = 200
ATTRIBUTE_FIELDS = ("label", "key", "kind", "inductive", "deductive", "statement")
SPARE_ROWS = 2  # empty attribute rows under the filled ones: a third attribute needs no script
# Shown as placeholders (greyed hints) of the empty rows, never as values.
EXAMPLE_ATTRIBUTES = [
    {
        "label": "Headquarters",
        "key": "headquarters",
        "kind": "city",
        "inductive": "Where is {entity} headquartered?",
        "deductive": "Which company is headquartered in {value}?",
        "statement": "{entity} is headquartered in {value}.",
    },
    {
        "label": "Key people",
        "key": "key_people",
        "kind": "list",
        "inductive": "Who is a key person at {entity}?",
        "deductive": "At which company is {value} a key person?",
        "statement": "{value} is a key person at {entity}.",
    },
]


def _posted_attributes(post: Any) -> list[dict[str, str]]:
    """The attribute rows of the form (`attribute-<n>-<field>`), empty rows left out."""
    rows = []
    for index in range(int(post.get("attribute_rows") or 0)):
        row = {field: post.get(f"attribute-{index}-{field}", "").strip() for field in ATTRIBUTE_FIELDS}
        if any(row[field] for field in ("label", "key", "inductive", "deductive", "statement")):
            rows.append(row)
    return rows


def _attribute_rows(attributes: list[dict[str, str]], error: ServiceError | None) -> list[dict[str, Any]]:
    """The rows to show: the typed ones, then spare ones; an error's row and field marked (`attributes[2].kind`)."""
    where, _, field = str(getattr(error, "field", "") or "").partition(".")
    rows = []
    for index, values in enumerate([*attributes, *[{}] * SPARE_ROWS]):
        mine = where == f"attributes[{index + 1}]"
        message = error.message.split(": ", 1)[-1] if mine and error is not None else ""
        example = EXAMPLE_ATTRIBUTES[index % len(EXAMPLE_ATTRIBUTES)]
        rows.append(
            {
                "index": index,
                "number": index + 1,
                "values": values,
                "example": example,
                "field": field if mine else "",
                "error": message,
            }
        )
    return rows


def _attribute_message(error: ServiceError) -> str:
    """`attributes[2].deductive: the template needs {value}.` as the form says it: `Attribute 2, deductive: …`."""
    match = re.match(r"attributes\[(\d+)\](?:\.(\w+))?: (.*)", error.message, re.S)
    if match is None:
        return error.message
    number, field, text = match.groups()
    labels = {"label": "name", "inductive": "question about the entity", "deductive": "question about the value"}
    return f"Attribute {number}{', ' + labels.get(field, field) if field else ''}: {text}"


@login_required
def entity_project_create(request: SignedInRequest) -> HttpResponse:
    """The project form; attributes are rows of fields (label, kind, templates), errors shown on their row."""
    require_project_creator(request.user)
    # Nothing pre-filled: an example value left in the form (a column name, a template) would silently become
    # the project's, so the examples are placeholders only.
    values: dict[str, Any] = {}
    attributes: list[dict[str, str]] = []
    errors: dict[str, str] = {}
    attribute_error: ServiceError | None = None
    if request.method == "POST":
        values = request.POST.dict()
        attributes = _posted_attributes(request.POST)
        try:
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
            if str(error.field or "").startswith("attributes"):
                attribute_error = error
                messages.error(request, _attribute_message(error))
            else:
                errors = field_errors(request, error, ["slug"])
        except ValueError:
            messages.error(request, "The seed must be a whole number.")
        else:
            messages.success(request, f"Entity-question project “{project.name}” created.")
            return redirect("entity_home", project.slug)
    rows = _attribute_rows(attributes, attribute_error)
    context = {
        "values": values,
        "languages": language_choices(),
        "errors": errors,
        "rows": rows,
        "kinds": AttributeKind.choices,
    }
    return render(request, "multichoice/entity_project_form.html", context)


@login_required
def entity_home(request: SignedInRequest, slug: str) -> HttpResponse:
    access = entity_access(request.user, slug)
    project, membership = access.project, access.membership
    settings = services.entity_settings(project)
    context = {
        "project": project,
        "membership": membership,
        "settings": settings,
        "steps": next_steps(project=project, membership=membership, user=request.user),
    }
    if membership.is_coordinator:
        keys = [a["key"] for a in settings.attributes]
        context["entities"] = [
            (e, [(k, services.shown(e.raw.get(k)), services.shown(e.values.get(k)), k in e.corrected) for k in keys])
            for e in Entity.objects.filter(project=project)[:500]
        ]
        context["question_counts"] = services.question_counts(project, reuse=True)  # counted once with the steps
        context["jobs"] = jobs.kind_jobs(project)[:10]
        context["questions"] = services.entity_questions(project).order_by(
            F("value_corrected_at").desc(nulls_last=True), "item_id"
        )[:QUESTIONS_SHOWN]
    return render(request, "multichoice/entity_home.html", context)


@login_required
@require_POST
def entity_import(request: SignedInRequest, slug: str) -> HttpResponse:
    """Store the upload and queue its import; the job's page shows progress, then what was normalised."""
    project = get_entity_project(request.user, slug, role=Role.COORDINATOR)
    upload = request.FILES.get("file")
    try:
        if upload is None:
            raise InvalidInput("Choose a file to upload.", field="file")
        job = jobs.entities_import_start(project=project, user=request.user, upload=upload)
    except ServiceError as error:
        report_error(request, error)
        return redirect("entity_home", project.slug)
    return redirect("entity_job", project.slug, job.pk)


@login_required
@vary_on_headers("HX-Request")
def entity_job(request: SignedInRequest, slug: str, job_id: int) -> HttpResponse:
    project = get_entity_project(request.user, slug, role=Role.COORDINATOR)
    return job_page(request, project, job_id)


@login_required
@require_POST
def entity_correct(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_entity_project(request.user, slug, role=Role.COORDINATOR)
    entity_id = request.POST.get("entity", "")
    if not entity_id.isdigit():
        messages.error(request, "entity: choose an entity.")
        return redirect("entity_home", project.slug)
    entity = get_entity(request.user, slug, int(entity_id))
    attribute = request.POST.get("attribute", "")
    flagged_before = services.question_counts(project)["value_corrected"]
    try:
        services.entity_correct(
            entity=entity, attribute=attribute, value=request.POST.get("value", ""), user=request.user
        )
    except ServiceError as error:
        report_error(request, error)
    else:
        flagged = services.question_counts(project)["value_corrected"] - flagged_before
        messages.success(
            request,
            f"{entity.name}: corrected, {attribute} is now {services.shown(entity.values.get(attribute))}; "
            f"{flagged} question{'s' if flagged != 1 else ''} built from the old value flagged.",
        )
    return redirect("entity_home", project.slug)


@login_required
@require_POST
def entity_generate(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_entity_project(request.user, slug, role=Role.COORDINATOR)
    job = jobs.questions_generate_start(project=project, user=request.user)
    return redirect("entity_job", project.slug, job.pk)


@login_required
@require_POST
def entity_verify_next(request: SignedInRequest, slug: str) -> HttpResponse:
    project = get_entity_project(request.user, slug, role=Role.REVIEWER)
    return _open_next_question(request, project)


def _open_next_question(request: SignedInRequest, project: Project) -> HttpResponse:
    """The verifier's next question (claimed for them), or the project's page when none is waiting."""
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
def entity_verify(request: SignedInRequest, slug: str, item_id: int) -> HttpResponse:
    """A question as its release will show it (options, the four contexts, revisions): coordinators read it,
    verifiers (the reviewer role) also verify it here."""
    access, question = entity_question_access(
        request.user, slug, item_id, role=Role.REVIEWER if request.method == "POST" else None
    )
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
                reason=request.POST.get("reason", ""),
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
            return _open_next_question(request, question.project)  # save and next: one key per question
        typed = {"question": request.POST.get("question", ""), "reason": request.POST.get("reason", "")}
    else:
        typed = {"question": question.question, "reason": ""}
    project, membership = access.project, access.membership
    # (index, text, correct, key): the distractors take the keys 1, 2, 3 in the order they are shown
    distractor_keys = iter(range(1, len(question.options)))
    options = [
        (index, text, index == question.answer, None if index == question.answer else next(distractor_keys))
        for index, text in enumerate(question.options)
    ]
    context = {
        "project": project,
        "membership": membership,
        "question": question,
        "options": options,
        "typed": typed,
        "record": services.question_preview(question),
        "revisions": list(question.item.revisions.order_by("number")),
        "may_verify": membership.is_reviewer and question.status == EntityQuestion.Status.GENERATED,
        "held": services.held_slot(question, request.user),
    }
    return render(request, "multichoice/entity_verify.html", context)
