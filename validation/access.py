"""Who may open what in a validation project; the same 404/403 rule as `annotation.access`.

A project that is not of kind `validation` has no validation pages (404).
Coordinators manage; validators are members with the reviewer role and reach
only the slots they hold.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotation.access import AnyUser, ProjectAccess, RoleOption, project_access
from annotation.models import Project, Role
from review.models import ReviewSlot
from validation.models import ModelJob, SearchCollection, SeedDraft, ValidationItem


def validation_access(user: AnyUser, slug: str, *, role: RoleOption = None) -> ProjectAccess:
    """The validation project and the user's roles in it (404 for a project of another kind)."""
    return project_access(user, slug, role=role, kind=Project.Kind.VALIDATION)


def get_validation_project(user: AnyUser, slug: str, *, role: RoleOption = None) -> Project:
    return validation_access(user, slug, role=role).project


def get_slot_for_validator(user: AnyUser, slug: str, slot_id: int) -> ReviewSlot:
    """A validation slot the user holds (or held), with item, revision and validation data loaded."""
    project = get_validation_project(user, slug, role=Role.REVIEWER)
    slot = (
        ReviewSlot.objects.select_related("item", "revision", "item__validation")
        .filter(item__project=project, pk=slot_id)
        .first()
    )
    if slot is None:
        raise Http404("No such validation task in this project.")
    if slot.reviewer_id != user.pk:
        raise PermissionDenied("This validation task is someone else's.")
    slot.item.project = project
    return slot


def get_validation_item(user: AnyUser, slug: str, item_id: int) -> ValidationItem:
    """An item's validation record (coordinators only: validators are blind to each other's work)."""
    project = get_validation_project(user, slug, role=Role.COORDINATOR)
    vitem = ValidationItem.objects.select_related("item").filter(project=project, item_id=item_id).first()
    if vitem is None:
        raise Http404("No such item in this project.")
    vitem.project = project
    vitem.item.project = project
    return vitem


def get_search_collection(user: AnyUser, slug: str, collection_id: int) -> SearchCollection:
    """A search collection of the project (coordinators only)."""
    project = get_validation_project(user, slug, role=Role.COORDINATOR)
    collection = SearchCollection.objects.select_related("created_by").filter(project=project, pk=collection_id).first()
    if collection is None:
        raise Http404("No such search collection in this project.")
    collection.project = project
    return collection


def get_model_job(user: AnyUser, slug: str, job_id: int) -> ModelJob:
    """A model job of the project: suggestions or drafted seed queries (coordinators only)."""
    project = get_validation_project(user, slug, role=Role.COORDINATOR)
    job = ModelJob.objects.select_related("created_by").filter(project=project, pk=job_id).first()
    if job is None:
        raise Http404("No such model job in this project.")
    job.project = project
    return job


def get_seed_draft(user: AnyUser, slug: str, draft_id: int) -> SeedDraft:
    """A drafted seed query of the project (coordinators only)."""
    project = get_validation_project(user, slug, role=Role.COORDINATOR)
    draft = SeedDraft.objects.filter(project=project, pk=draft_id).first()
    if draft is None:
        raise Http404("No such drafted seed query in this project.")
    draft.project = project
    return draft
