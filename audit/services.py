"""Writing and reading the audit log.

`record` is the one way to write it: service functions call it inside the
transaction of the change, so the change and its record commit together or not
at all. Reading it (with the items' review history) is `annotation.audit_log`:
this app imports no other app.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from audit.models import Action, AuditEvent

# Model name -> object type shown in the log (what is not listed is called by its model name).
OBJECT_TYPES = {
    "project": "project",
    "membership": "member",
    "user": "person",
    "reviewerlanguages": "member",
    "pagepair": "pair",
    "qaitem": "item",
    "articlelabel": "label",
    "finallabel": "label",
    "release": "release",
    "exportsettings": "project",
    "importjob": "import",
    "collection": "collection",
    "projectarchive": "archive",
    "endpoint": "model endpoint",
}
TYPE_CHOICES = sorted(set(OBJECT_TYPES.values()))
PROJECT_MODEL = "annotation.Project"  # by name: audit imports no app
MAX_DETAIL_TEXT = 500  # a note or a guideline in the details is cut here: the log says what changed, not a copy


def _short(value: Any) -> Any:
    """Details as JSON, long texts cut (the full text stays in the object's own history)."""
    if isinstance(value, str) and len(value) > MAX_DETAIL_TEXT:
        return value[:MAX_DETAIL_TEXT] + "…"
    if isinstance(value, dict):
        return {str(key): _short(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple | set):
        return [_short(inner) for inner in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, models.Model):
        return value.pk
    return value


def record(
    actor: User | AnonymousUser | None,
    action: str,
    obj: models.Model | None = None,
    *,
    project: models.Model | None = None,
    object_type: str | None = None,
    object_id: int | None = None,
    label: str | None = None,
    **details: Any,
) -> AuditEvent:
    """Record that `actor` did `action` to `obj` (in `project`, taken from `obj` when not given).

    Call it inside the transaction of the change. `details` is a short JSON of what changed, e.g.
    `before={...}, after={...}`; long texts are cut.
    """
    if action not in Action.values:
        raise ValueError(f"Unknown audit action {action!r}; add it to audit.models.Action.")
    if obj is not None:
        model_name = obj._meta.model_name or ""  # every concrete model has one
        object_type = object_type or OBJECT_TYPES.get(model_name, model_name)
        object_id = obj.pk if object_id is None else object_id
        if project is None:
            project = obj if obj._meta.label == PROJECT_MODEL else getattr(obj, "project", None)
        if label is None:
            label = str(obj)
    payload = _short(details)
    DjangoJSONEncoder().encode(payload)  # refuse what the JSON column could not store, here rather than in SQL
    return AuditEvent.objects.create(
        project_id=None if project is None else project.pk,
        actor=actor if isinstance(actor, User) else None,  # an anonymous visitor is recorded as no one
        action=action,
        object_type=object_type or "",
        object_id=object_id,
        object_label=(label or "")[:200],
        details=payload,
    )


def changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Only what differs, as {"before": {...}, "after": {...}}, for the details of a settings change."""
    keys = [key for key in after if before.get(key) != after[key]]
    return {"before": {key: before.get(key) for key in keys}, "after": {key: after[key] for key in keys}}
