"""Trivia projects: creating one and its settings (categories, candidates, review)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F

from annotation.models import Project
from annotation.services.projects import project_create, project_update
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, StaleEdit
from multichoice.models import TriviaSettings, default_trivia_criteria
from review import project_settings as review_project_settings


def trivia_settings(project: Project) -> TriviaSettings:
    settings, _ = TriviaSettings.objects.get_or_create(
        project=project,
        defaults={"source_language": project.local_language, "target_language": project.standard_language},
    )
    return settings


def trivia_categories_check(categories: Iterable[Any]) -> list[str]:
    checked: list[str] = []
    for index, raw in enumerate(categories):
        name = str(raw).strip()
        if not name or len(name) > 100:
            raise InvalidInput(f"categories[{index}]: must be 1 to 100 characters.", field=f"categories[{index}]")
        if name not in checked:
            checked.append(name)
    return checked


def trivia_project_create(
    *,
    name: str,
    slug: str | None = None,
    source_language: str,
    target_language: str,
    categories: Sequence[str] = (),
    created_by: User | None = None,
) -> Project:
    """A project of kind `trivia`: items written and reviewed in the source language, translated into the target."""
    checked = trivia_categories_check(categories)
    with transaction.atomic():
        # Items are written and reviewed in the source language: it is the project's standard language,
        # the one review reads (`review.reviewers.reviewers_eligible`).
        project = project_create(
            name=name,
            slug=slug,
            local_language=target_language,
            standard_language=source_language,
            created_by=created_by,
        )
        Project.objects.filter(pk=project.pk).update(
            kind=Project.Kind.TRIVIA, review_criteria=default_trivia_criteria()
        )
        TriviaSettings.objects.create(
            project=project, categories=checked, source_language=source_language, target_language=target_language
        )
    project.refresh_from_db()
    return project


def trivia_settings_update(
    *,
    project: Project,
    version: int | None = None,
    categories: Sequence[str] | None = None,
    review_criteria: Any = None,
    reviewers_per_item: int | None = None,
    actor: User | None = None,
) -> TriviaSettings:
    """Change the category list, the review criteria or how many reviewers review each item (the project's
    review settings, as in every review: with two or more, the agreement reports have something to compare).
    Items already in review keep the slots they have; the next round opens the new number."""
    settings = trivia_settings(project)
    with transaction.atomic():
        if reviewers_per_item is not None and reviewers_per_item != project.reviewers_per_item:
            project_update(project=project, reviewers_per_item=reviewers_per_item, actor=actor)
        if review_criteria is not None:
            review_project_settings.project_review_settings_update(project=project, review_criteria=review_criteria)
        changes: dict[str, Any] = {}
        if categories is not None:
            changes["categories"] = trivia_categories_check(categories)
        query = TriviaSettings.objects.filter(pk=settings.pk)
        if version is not None:
            query = query.filter(version=version)
        if not query.update(**changes, version=F("version") + 1):
            settings.refresh_from_db()
            raise StaleEdit("The trivia settings were changed by someone else; reload them.", current=settings)
        diff = audit.changes({"categories": settings.categories}, {"categories": changes.get("categories")})
        if "categories" in changes and diff["after"]:
            audit.record(actor, Action.PROJECT_SETTINGS, project, before=diff["before"], after=diff["after"])
    settings.refresh_from_db()
    return settings
