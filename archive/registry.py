"""Which tables make up a project, found from Django's app registry (no hand-kept list of models).

Every model of localqa's own apps (the apps whose package sits in the project folder) is either archived or
named in `EXCLUDED` with the reason. A model is archived when it belongs to a project: it has a foreign key to
`annotation.Project`, or to a model that itself belongs to a project (an evidence span through its item, a
judgment through its review slot, a source row through its file, ...). New models are found the same way, so
they cannot escape the archive: tests/archive/test_coverage.py fails for a local model that is neither.

A few values name rows without being foreign keys (ids inside JSON, a "highest id seen" watermark); they are
listed in `ID_LISTS` and `ID_WATERMARKS` so an import can translate them too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from django.apps import AppConfig, apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ImproperlyConfigured
from django.db import models

ROOT = "annotation.Project"

# Local models that are not part of a project's archive, and why.
EXCLUDED: dict[str, str] = {
    "wikiqa.WikiPage": "A server-wide cache of fetched Wikipedia pages, shared by every project; it fills "
    "itself again on the next collection.",
    "accounts.ApiToken": "A person's credentials on this server: they never leave it (and name no project).",
    "accounts.Account": "About a person's account, not a project (whether they must still choose their own "
    "password); accounts on the importing server keep their own.",
    "archive.ProjectArchive": "The record of this server's exports and imports: about the server, not the "
    "project (an archive cannot contain itself).",
    "endpoints.EndpointSecret": "A model endpoint's API key, encrypted with this server's ENCRYPTION_KEYS: "
    "credentials never leave the server (the endpoint arrives without a key; a coordinator sets it again).",
}

# JSON lists of row ids: {model: {field: model the ids name}}.
ID_LISTS: dict[str, dict[str, str]] = {
    "multichoice.EntityQuestion": {"distractors": "multichoice.Entity"},
}

# "The highest id of X seen so far": translated to the new id of the highest archived X at or below it.
ID_WATERMARKS: dict[str, dict[str, str]] = {
    "review.AgreementReport": {"judgment_watermark": "review.Judgment"},
}


def _audit_object_types() -> dict[str, str]:
    """The audit log's object types that name exactly one kind of row (its "member" and "label" name two)."""
    try:
        from audit.services import OBJECT_TYPES
    except ImportError:
        return {}
    by_type: dict[str, list[str]] = {}
    for model_name, object_type in OBJECT_TYPES.items():
        by_type.setdefault(object_type, []).append(model_name)
    labels = {model._meta.model_name: model._meta.label for model in local_models()}
    return {kind: labels[names[0]] for kind, names in by_type.items() if len(names) == 1 and names[0] in labels}


# Ids typed by another column: {model: (type field, id field, () -> {type value: model label})}. Ids whose
# type names no single archived model are kept as recorded (the row's label still names the object).
TYPED_IDS: dict[str, tuple[str, str, Callable[[], dict[str, str]]]] = {
    "audit.AuditEvent": ("object_type", "object_id", _audit_object_types),
}


@dataclass
class ArchivedModel:
    model: type[models.Model]
    owner: models.ForeignKey | None  # the foreign key that ties a row to its project (None for the project)
    lookup: str  # queryset filter reaching the project, e.g. "item__project"
    references: list[models.ForeignKey] = field(default_factory=list)  # keys to other archived models
    user_keys: list[models.ForeignKey] = field(default_factory=list)
    content_type_keys: list[models.ForeignKey] = field(default_factory=list)
    deferred: list[models.ForeignKey] = field(default_factory=list)  # keys to its own model: set after insert
    id_lists: dict[str, str] = field(default_factory=dict)  # JSON field -> label of the model its ids name
    watermarks: dict[str, str] = field(default_factory=dict)  # integer field -> label of the model
    typed_ids: tuple[str, str, dict[str, str]] | None = None  # (type field, id field, type -> model label)

    @property
    def label(self) -> str:
        return self.model._meta.label

    @property
    def member(self) -> str:
        return f"data/{self.model._meta.label_lower}.jsonl"

    def rows(self, project: models.Model) -> models.QuerySet:
        """Every row of the project, soft-deleted ones too (the base manager hides nothing), in id order."""
        return self.model._base_manager.filter(**{self.lookup: project.pk}).order_by("pk")


def is_local_app(app_config: AppConfig) -> bool:
    """An app of this code base (a package in the project folder), not Django's or a library's."""
    return Path(app_config.path).resolve().parent == Path(settings.BASE_DIR).resolve()


def local_models() -> list[type[models.Model]]:
    return [model for app in apps.get_app_configs() if is_local_app(app) for model in app.get_models()]


def table_fields(model: type[models.Model]) -> list[models.Field]:
    """The model's fields that are columns of its table, in the model's order (Django's documented `get_fields`)."""
    return [f for f in model._meta.get_fields() if isinstance(f, models.Field) and f.concrete and not f.many_to_many]


def primary_key(model: type[models.Model]) -> models.Field:
    return next(f for f in table_fields(model) if f.primary_key)


def _keys(model: type[models.Model]) -> list[models.ForeignKey]:
    return [f for f in table_fields(model) if isinstance(f, models.ForeignKey)]  # OneToOneField included


def _owner_key(model: type[models.Model], owned: dict[type[models.Model], str]) -> models.ForeignKey | None:
    """The key tying the model to a project: a direct project key first, then a required key, then any."""
    candidates = [key for key in _keys(model) if key.related_model in owned and key.related_model is not model]
    candidates.sort(key=lambda key: (key.related_model._meta.label != ROOT, key.null))
    return candidates[0] if candidates else None


@cache
def archived_models() -> tuple[ArchivedModel, ...]:
    """The archived models in an order where every row's references come before it."""
    root = apps.get_model(ROOT)
    owners: dict[type[models.Model], models.ForeignKey | None] = {root: None}
    lookups: dict[type[models.Model], str] = {root: "pk"}
    candidates = [m for m in local_models() if m is not root and m._meta.label not in EXCLUDED]
    changed = True
    while changed:
        changed = False
        for model in candidates:
            if model in owners:
                continue
            key = _owner_key(model, lookups)
            if key is not None:
                owners[model] = key
                parent = lookups[key.related_model]
                lookups[model] = key.name if parent == "pk" else f"{key.name}__{parent}"
                changed = True
    user_model, entries = get_user_model(), {}
    for model, owner in owners.items():
        entry = ArchivedModel(model=model, owner=owner, lookup=lookups[model])
        for key in _keys(model):
            target = key.related_model
            if target is model:
                if not key.null:
                    raise ImproperlyConfigured(f"{model._meta.label}.{key.name}: a required key to its own model.")
                entry.deferred.append(key)
            elif target in owners:
                entry.references.append(key)
            elif target is user_model:
                entry.user_keys.append(key)
            elif target is ContentType:
                entry.content_type_keys.append(key)
            else:
                raise ImproperlyConfigured(
                    f"{model._meta.label}.{key.name} points at {target._meta.label}, which is neither part of a "
                    "project nor a user: teach archive/registry.py how to carry it."
                )
        label = model._meta.label
        entry.id_lists = dict(ID_LISTS.get(label, {}))
        entry.watermarks = dict(ID_WATERMARKS.get(label, {}))
        if label in TYPED_IDS:
            type_field, id_field, types = TYPED_IDS[label]
            entry.typed_ids = (type_field, id_field, types())
        for many in [f for f in model._meta.get_fields() if f.many_to_many and not f.auto_created]:
            raise ImproperlyConfigured(
                f"{model._meta.label}.{many.name}: many-to-many fields are not archived; use an explicit model."
            )
        entries[model] = entry
    return tuple(_dependency_order(entries))


def _dependency_order(entries: dict[type[models.Model], ArchivedModel]) -> list[ArchivedModel]:
    ordered: list[ArchivedModel] = []
    placed: set[str] = set()
    waiting = list(entries.values())  # registry order, so the result is stable
    known = {e.label for e in waiting}

    def needs(entry: ArchivedModel) -> set[str]:
        typed = set(entry.typed_ids[2].values()) if entry.typed_ids else set()
        named = {*entry.id_lists.values(), *entry.watermarks.values(), *typed} & known
        return {key.related_model._meta.label for key in entry.references} | named

    while waiting:
        ready = [e for e in waiting if needs(e) <= placed]
        if not ready:
            cycle = ", ".join(e.label for e in waiting)
            raise ImproperlyConfigured(f"Foreign keys form a cycle between {cycle}: archive cannot order them.")
        for entry in ready:
            ordered.append(entry)
            placed.add(entry.label)
        waiting = [e for e in waiting if e.label not in placed]
    return ordered


def archived_by_label() -> dict[str, ArchivedModel]:
    return {entry.label: entry for entry in archived_models()}


def unaccounted_models() -> list[str]:
    """Local models neither archived nor excluded with a reason (the coverage test wants none)."""
    archived = {entry.label for entry in archived_models()}
    return sorted(m._meta.label for m in local_models() if m._meta.label not in archived | set(EXCLUDED))
