"""A project's review and label settings."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import Project
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, StaleEdit

REVIEW_SETTINGS = (
    "review_criteria",
    "reviewer_may_rewrite",
    "blind_review",
    "flag_needs_reason",
    "topics",
    "regions",
    "labellers_per_pair",
    "document_qa_minutes",
)


_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


def _check_review_settings(changes: Mapping[str, Any]) -> dict[str, Any]:
    errors: dict[str, list[str]] = {}
    clean: dict[str, Any] = {}
    for name, value in changes.items():
        if name == "review_criteria":
            criteria, keys = [], set()
            if not isinstance(value, list) or not value:
                errors[name] = ["must be a non-empty list of {key, label, help}"]
                continue
            for index, raw in enumerate(value):
                where = f"review_criteria[{index}]"
                if not isinstance(raw, Mapping):
                    errors[where] = ["must be an object with key, label and help"]
                    continue
                key, label, help_text = raw.get("key"), raw.get("label"), raw.get("help", "")
                if not isinstance(key, str) or not _KEY.match(key):
                    errors[f"{where}.key"] = ["must be lower-case letters, digits, - or _ (at most 40), e.g. fluency"]
                elif key in keys:
                    errors[f"{where}.key"] = [f"{key!r} appears twice"]
                elif not isinstance(label, str) or not label.strip():
                    errors[f"{where}.label"] = ["must not be empty"]
                else:
                    keys.add(key)
                    criteria.append({"key": key, "label": label.strip(), "help": str(help_text or "").strip()})
            clean[name] = criteria
        elif name in ("topics", "regions"):
            if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
                errors[name] = ["must be a non-empty list of names"]
                continue
            values = list(dict.fromkeys(v.strip() for v in value))
            too_long = [v for v in values if len(v) > 64]
            if too_long:
                errors[name] = [f"{too_long[0]!r} is longer than 64 characters"]
            clean[name] = values
        elif name in ("reviewer_may_rewrite", "blind_review", "flag_needs_reason"):
            if not isinstance(value, bool):
                errors[name] = ["must be true or false"]
            clean[name] = value
        elif name == "labellers_per_pair":
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 10:
                errors[name] = ["must be between 1 and 10"]
            clean[name] = value
        elif name == "document_qa_minutes":
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 240:
                errors[name] = ["must be between 1 and 240 minutes"]
            clean[name] = value
        else:
            errors[name] = ["is not a review setting"]
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)
    return clean


def project_review_settings_update(
    *, project: Project, version: int | None = None, actor: User | None = None, **changes: Any
) -> Project:
    """Change the review, label and document-QA settings. With `version`, refuse if someone saved in between."""
    clean = _check_review_settings(changes)
    query = Project.objects.filter(pk=project.pk)
    if version is not None:
        query = query.filter(version=version)
    before = {name: getattr(project, name) for name in clean}
    with transaction.atomic():
        if not query.update(**clean, version=F("version") + 1, updated_at=timezone.now()):
            project.refresh_from_db()
            raise StaleEdit(
                f"The project settings were changed by someone else (now version {project.version}); reload them.",
                current=project,
            )
        project.refresh_from_db()
        diff = audit.changes(before, {name: getattr(project, name) for name in clean})
        if diff["after"]:
            audit.record(actor, Action.PROJECT_REVIEW_SETTINGS, project, before=diff["before"], after=diff["after"])
    return project
