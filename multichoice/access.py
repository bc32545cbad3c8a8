"""Who may open what in a trivia project; the same 404/403 rule as `annotation.access`.

A project of another kind has no trivia pages (404). Authors and translators are
members with the annotator role, reviewers have the reviewer role, coordinators
resolve tagged translations and manage the project. Item ids in URLs are the
shared `annotation.QAItem` ids (the same as the review app's history page).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotation.access import AnyUser, get_project_for_user
from annotation.models import Project, Role
from multichoice.models import Entity, EntityQuestion, TriviaItem


def get_trivia_project(user: AnyUser, slug: str, *, role: Role | None = None) -> Project:
    """The trivia project, with `project.membership` set (see `get_project_for_user`)."""
    project = get_project_for_user(user, slug, role=role)
    if project.kind != Project.Kind.TRIVIA:
        raise Http404("This project is not a trivia project.")
    return project


def get_trivia_item(user: AnyUser, slug: str, item_id: int, *, role: Role | None = None) -> TriviaItem:
    """An item of the project. Coordinators and reviewers reach every item; annotators the items they wrote
    or hold for translation."""
    project = get_trivia_project(user, slug, role=role)
    item = (
        TriviaItem.objects.select_related("item", "item__author")
        .filter(project=project, item_id=item_id, item__deleted_at__isnull=True)
        .first()
    )
    if item is None:
        raise Http404("No such item in this project.")
    item.project = project
    item.item.project = project
    membership = project.membership  # type: ignore[attr-defined]
    own = user.pk in (item.item.author_id, item.translator_id)
    if not (membership.is_coordinator or membership.is_reviewer or own):
        raise PermissionDenied("This item is someone else's.")
    return item


def get_translation_item(user: AnyUser, slug: str, item_id: int) -> TriviaItem:
    """An item the user holds for translation (annotator role)."""
    item = get_trivia_item(user, slug, item_id, role=Role.ANNOTATOR)
    if item.translator_id != user.pk:
        raise PermissionDenied("This translation is someone else's.")
    return item


def get_entity_project(user: AnyUser, slug: str, *, role: Role | None = None) -> Project:
    """The entity-question project, with `project.membership` set."""
    project = get_project_for_user(user, slug, role=role)
    if project.kind != Project.Kind.ENTITY_QA:
        raise Http404("This project is not an entity-question project.")
    return project


def get_entity(user: AnyUser, slug: str, entity_id: int) -> Entity:
    """An entity of the project (coordinators)."""
    project = get_entity_project(user, slug, role=Role.COORDINATOR)
    entity = Entity.objects.filter(project=project, pk=entity_id).first()
    if entity is None:
        raise Http404("No such entity in this project.")
    entity.project = project
    return entity


def get_entity_question(user: AnyUser, slug: str, question_id: int, *, role: Role | None = None) -> EntityQuestion:
    """A generated question of the project: coordinators and verifiers (the reviewer role) read it; `role`
    narrows who may act on it (verifying needs the reviewer role)."""
    project = get_entity_project(user, slug, role=role)
    membership = project.membership  # type: ignore[attr-defined]
    if not (membership.is_coordinator or membership.is_reviewer):
        raise PermissionDenied("Questions are read by coordinators and verifiers.")
    question = (
        EntityQuestion.objects.select_related("item", "entity")
        .filter(project=project, item_id=question_id, item__deleted_at__isnull=True)
        .first()
    )
    if question is None:
        raise Http404("No such question in this project.")
    question.project = project
    question.item.project = project
    return question
