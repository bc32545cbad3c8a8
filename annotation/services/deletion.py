"""Deleting and restoring pairs and projects (soft: nothing is removed; see docs/operations.md)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from annotation import lifecycle
from annotation.models import PagePair, Project, QAItem
from audit import services as audit
from audit.models import Action
from common.errors import InvalidState


def pair_delete(*, pair: PagePair, user: User) -> PagePair:
    """Delete a pair softly (coordinator), with its live items: out of the queue, lists, releases and figures.

    The items deleted with the pair carry the pair's deletion time, which is how `pair_restore` brings back
    exactly those (and not items deleted on their own before).
    """
    if pair.project.kind in (Project.Kind.TRIVIA, Project.Kind.ENTITY_QA):
        # Their one pair only holds the project's items: deleting it would take every item with it.
        raise InvalidState(
            "A multiple-choice project's items are deleted one by one, not through a pair.", field="pair"
        )
    now = timezone.now()
    with transaction.atomic():
        if not PagePair.objects.filter(pk=pair.pk).update(
            deleted_at=now, deleted_by=user, version=F("version") + 1, updated_at=now
        ):
            raise InvalidState("This pair is deleted already.", field="pair")
        items = lifecycle.qa_items_delete(items=QAItem.objects.filter(pair=pair), user=user, at=now)
        audit.record(user, Action.PAIR_DELETED, pair, project=pair.project, status=pair.status, items=items)
    pair.refresh_from_db()
    return pair


def pair_restore(*, pair: PagePair, user: User) -> PagePair:
    """Bring a deleted pair back (coordinator) with the items deleted with it, as they were."""
    if pair.deleted_at is None:
        raise InvalidState("This pair is not deleted.", field="pair")
    now = timezone.now()
    with transaction.atomic():
        if not PagePair.all_objects.filter(pk=pair.pk, deleted_at=pair.deleted_at).update(
            deleted_at=None, deleted_by=None, version=F("version") + 1, updated_at=now
        ):
            raise InvalidState("This pair changed in the meantime; reload the list.", field="pair")
        items = lifecycle.qa_items_restore(items=QAItem.objects.filter(pair=pair, deleted_at=pair.deleted_at))
        audit.record(user, Action.PAIR_RESTORED, pair, project=pair.project, deleted_at=pair.deleted_at, items=items)
    pair.refresh_from_db()
    return pair


def project_delete(*, project: Project, user: User) -> Project:
    """Delete a project softly (coordinator): every page and endpoint of it answers 404 until it is restored.

    Its pairs, items and releases are left as they are (hidden with the project), so a restore brings all back.
    """
    now = timezone.now()
    with transaction.atomic():
        if not Project.objects.filter(pk=project.pk).update(
            deleted_at=now, deleted_by=user, version=F("version") + 1, updated_at=now
        ):
            raise InvalidState("This project is deleted already.", field="project")
        audit.record(user, Action.PROJECT_DELETED, project)
    project.refresh_from_db()
    return project


def project_restore(*, project: Project, user: User) -> Project:
    """Bring a deleted project back (its coordinators or a superuser)."""
    if project.deleted_at is None:
        raise InvalidState("This project is not deleted.", field="project")
    with transaction.atomic():
        if not Project.all_objects.filter(pk=project.pk, deleted_at=project.deleted_at).update(
            deleted_at=None, deleted_by=None, version=F("version") + 1, updated_at=timezone.now()
        ):
            raise InvalidState("This project changed in the meantime; reload the list.", field="project")
        audit.record(user, Action.PROJECT_RESTORED, project, deleted_at=project.deleted_at)
    project.refresh_from_db()
    return project


def deleted_in_project(project: Project) -> dict[str, Any]:
    """What a coordinator can restore in a project: deleted pairs, and items deleted on their own.

    Items deleted with their pair come back with the pair and are not listed apart; duplicates merged away by
    validation are not deletions (the merge keeps them) and are left out.
    """
    pairs = (
        PagePair.all_objects.filter(project=project, deleted_at__isnull=False)
        .select_related("deleted_by")
        .defer("local_lead", "standard_lead", "local_text", "standard_text", "metadata")
        .order_by("-deleted_at", "-id")
    )
    items = (
        QAItem.objects.filter(project=project, deleted_at__isnull=False, pair__deleted_at__isnull=True)
        .exclude(validation__merged_into__isnull=False)
        .select_related("pair", "author", "deleted_by")
        .order_by("-deleted_at", "-id")
    )
    return {"pairs": pairs, "items": items}


def deleted_projects_for(user: User) -> QuerySet[Project]:
    """Deleted projects the user may restore: those they coordinate (every one for a superuser)."""
    projects = Project.all_objects.filter(deleted_at__isnull=False).select_related("deleted_by")
    if not user.is_superuser:
        projects = projects.filter(
            memberships__user=user, memberships__is_coordinator=True, memberships__deactivated_at__isnull=True
        )
    return projects.order_by("-deleted_at", "slug")
