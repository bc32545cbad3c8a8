"""Validation projects and what they ask of validators."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Project
from annotation.services.projects import project_create, project_update
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, StaleEdit
from validation.models import (
    LeaveOut,
    Task,
    ValidationSettings,
)


def validation_settings(project: Project) -> ValidationSettings:
    settings, _ = ValidationSettings.objects.get_or_create(project=project)
    return settings


def validation_project_create(
    *,
    name: str,
    slug: str | None = None,
    language: str,
    location: str = "",
    validators_per_item: int = 1,
    created_by: User | None = None,
) -> Project:
    """A project of kind `validation`: one language (question and answer), N validators per item."""
    with transaction.atomic():
        project = project_create(
            name=name,
            slug=slug,
            local_language=language,
            standard_language=language,
            created_by=created_by,
            reviewers_per_item=validators_per_item,
        )
        Project.objects.filter(pk=project.pk).update(kind=Project.Kind.VALIDATION, review_criteria=[])
        ValidationSettings.objects.create(project=project, location=location.strip()[:200])
    project.refresh_from_db()
    return project


def _check_criteria(value: Any) -> list[dict[str, str]]:
    if not isinstance(value, list):
        raise InvalidInput("likert_criteria: must be a list of {key, label, rubric}.", field="likert_criteria")
    checked: list[dict[str, str]] = []
    keys: set[str] = set()
    for index, raw in enumerate(value):
        where = f"likert_criteria[{index}]"
        if not isinstance(raw, Mapping):
            raise InvalidInput(f"{where}: must be an object with key, label and rubric.", field=where)
        key = str(raw.get("key") or "").strip()
        label = str(raw.get("label") or "").strip()
        rubric = str(raw.get("rubric") or "").strip()
        if not key.isidentifier() or len(key) > 40:
            raise InvalidInput(f"{where}.key: letters, digits and _ only (at most 40).", field=f"{where}.key")
        if key in keys:
            raise InvalidInput(f"{where}.key: {key!r} is used twice.", field=f"{where}.key")
        if not label or len(label) > 100:
            raise InvalidInput(f"{where}.label: must be 1 to 100 characters.", field=f"{where}.label")
        if len(rubric) > 2000:
            raise InvalidInput(f"{where}.rubric: at most 2000 characters.", field=f"{where}.rubric")
        keys.add(key)
        checked.append({"key": key, "label": label, "rubric": rubric})
    return checked


def validation_settings_update(
    *,
    project: Project,
    version: int | None = None,
    tasks: Sequence[str] | None = None,
    location: str | None = None,
    likert_criteria: Any = None,
    duplicate_threshold: int | None = None,
    release_leave_out: Sequence[str] | None = None,
    validators_per_item: int | None = None,
    user: User | None = None,
) -> ValidationSettings:
    """Change what validators are asked; `version` refuses the save if someone saved in between."""
    settings = validation_settings(project)
    changes: dict[str, Any] = {}
    if tasks is not None:
        unknown = sorted(set(tasks) - set(Task.values))
        if unknown:
            raise InvalidInput(f"tasks: unknown task {unknown[0]!r}; use {', '.join(Task.values)}.", field="tasks")
        if not tasks:
            raise InvalidInput("tasks: turn at least one validation task on.", field="tasks")
        changes["tasks"] = [task for task in Task.values if task in set(tasks)]
    if location is not None:
        if len(location) > 200:
            raise InvalidInput("location: at most 200 characters.", field="location")
        changes["location"] = location.strip()
    if likert_criteria is not None:
        changes["likert_criteria"] = _check_criteria(likert_criteria)
    if duplicate_threshold is not None:
        if not 50 <= duplicate_threshold <= 100:
            raise InvalidInput("duplicate_threshold: between 50 and 100.", field="duplicate_threshold")
        changes["duplicate_threshold"] = duplicate_threshold
    if release_leave_out is not None:
        unknown = sorted(set(release_leave_out) - set(LeaveOut.values))
        if unknown:
            raise InvalidInput(
                f"release_leave_out: unknown rule {unknown[0]!r}; use {', '.join(LeaveOut.values)}.",
                field="release_leave_out",
            )
        changes["release_leave_out"] = [rule for rule in LeaveOut.values if rule in set(release_leave_out)]
    with transaction.atomic():
        if validators_per_item is not None:
            project_update(project=project, reviewers_per_item=validators_per_item)
        query = ValidationSettings.objects.filter(pk=settings.pk)
        if version is not None:
            query = query.filter(version=version)
        if not query.update(**changes, version=F("version") + 1, updated_at=timezone.now()):
            settings.refresh_from_db()
            raise StaleEdit("The validation settings were changed by someone else; reload them.", current=settings)
        if changes:
            audit.record(user, Action.PROJECT_SETTINGS, project, validation=changes)
    settings.refresh_from_db()
    return settings
