"""Who may open what in a trivia project; the same 404/403 rule as `annotation.access`.

A project of another kind has no trivia pages (404). Authors and translators are
members with the annotator role, reviewers have the reviewer role, coordinators
resolve tagged translations and manage the project. Item ids in URLs are the
shared `annotation.QAItem` ids (the same as the review app's history page).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotation.access import AnyUser, ProjectAccess, RoleOption, project_access
from annotation.models import Project, Role
from multichoice.models import Entity, EntityQuestion, TriviaItem


def trivia_access(user: AnyUser, slug: str, *, role: RoleOption = None) -> ProjectAccess:
    """The trivia project and the user's roles in it (404 for a project of another kind)."""
    return project_access(user, slug, role=role, kind=Project.Kind.TRIVIA)


def get_trivia_project(user: AnyUser, slug: str, *, role: RoleOption = None) -> Project:
    return trivia_access(user, slug, role=role).project


def trivia_item_access(
    user: AnyUser, slug: str, item_id: int, *, role: RoleOption = None, author: bool = False
) -> tuple[ProjectAccess, TriviaItem]:
    """An item of the project. Coordinators and reviewers reach every item; annotators the items they wrote
    or hold for translation. With `author`, only the item's author (rewriting it)."""
    access = trivia_access(user, slug, role=role)
    project = access.project
    item = (
        TriviaItem.objects.select_related("item", "item__author")
        .filter(project=project, item_id=item_id, item__deleted_at__isnull=True)
        .first()
    )
    if item is None:
        raise Http404("No such item in this project.")
    item.project = project
    item.item.project = project
    membership = access.membership
    own = user.pk in (item.item.author_id, item.translator_id)
    if not (membership.is_coordinator or membership.is_reviewer or own):
        raise PermissionDenied("This item is someone else's.")
    if author and item.item.author_id != user.pk:
        raise PermissionDenied("Only the author rewrites an item.")
    return access, item


def get_trivia_item(
    user: AnyUser, slug: str, item_id: int, *, role: RoleOption = None, author: bool = False
) -> TriviaItem:
    return trivia_item_access(user, slug, item_id, role=role, author=author)[1]


def get_translation_item(user: AnyUser, slug: str, item_id: int) -> TriviaItem:
    """An item the user holds for translation (annotator role)."""
    item = get_trivia_item(user, slug, item_id, role=Role.ANNOTATOR)
    if item.translator_id != user.pk:
        raise PermissionDenied("This translation is someone else's.")
    return item


def entity_access(user: AnyUser, slug: str, *, role: RoleOption = None) -> ProjectAccess:
    """The entity-question project and the user's roles in it (404 for a project of another kind)."""
    return project_access(user, slug, role=role, kind=Project.Kind.ENTITY_QA)


def get_entity_project(user: AnyUser, slug: str, *, role: RoleOption = None) -> Project:
    return entity_access(user, slug, role=role).project


def get_entity(user: AnyUser, slug: str, entity_id: int) -> Entity:
    """An entity of the project (coordinators)."""
    project = get_entity_project(user, slug, role=Role.COORDINATOR)
    entity = Entity.objects.filter(project=project, pk=entity_id).first()
    if entity is None:
        raise Http404("No such entity in this project.")
    entity.project = project
    return entity


def entity_question_access(
    user: AnyUser, slug: str, question_id: int, *, role: RoleOption = None
) -> tuple[ProjectAccess, EntityQuestion]:
    """A generated question of the project: coordinators and verifiers (the reviewer role) read it; `role`
    narrows who may act on it (verifying needs the reviewer role)."""
    access = entity_access(user, slug, role=role)
    project, membership = access.project, access.membership
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
    return access, question


def get_entity_question(user: AnyUser, slug: str, question_id: int, *, role: RoleOption = None) -> EntityQuestion:
    return entity_question_access(user, slug, question_id, role=role)[1]
