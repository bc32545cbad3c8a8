"""Reading the audit log: audit rows and ItemEvent rows (item status changes and review steps, which are not
copied into the audit log) as one list, newest first. Writing it is `audit.services.record`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import models
from django.db.models import CharField, F, Value
from django.db.models.functions import Concat, JSONObject, Left
from django.utils import timezone

from annotation.display import display_name, spelled_out
from annotation.models import ItemEvent, Project
from audit.models import Action, AuditEvent
from audit.services import MAX_DETAIL_TEXT, TYPE_CHOICES

ITEM_EVENT_PREFIX = "item."


@dataclass(frozen=True)
class EventFilter:
    actor: str = ""  # username
    action: str = ""
    object_type: str = ""
    object_id: int | None = None
    since: date | None = None
    until: date | None = None  # inclusive
    project: str = ""  # slug; only for the site-wide log


COLUMNS = ("e_at", "e_id", "e_source", "e_project", "e_actor", "e_action", "e_type", "e_object", "e_label", "e_details")


def _day_start(day: date) -> datetime:
    # Clamped a day inside the calendar's ends, where a time zone offset would overflow the datetime range.
    day = min(max(day, date.min + timedelta(days=1)), date.max - timedelta(days=1))
    return timezone.make_aware(datetime.combine(day, time.min))


def _day_after(day: date) -> datetime:
    """The start of the next day: the exclusive end of an inclusive `until`."""
    return _day_start(min(day, date.max - timedelta(days=2)) + timedelta(days=1))


def _audit_rows(projects: models.QuerySet | None, project: Project | None, flt: EventFilter, actor_id: int | None):
    rows = AuditEvent.objects.all()
    if project is not None:
        rows = rows.filter(project=project)
    elif projects is not None:
        rows = rows.filter(project__in=projects)
    if actor_id is not None:
        rows = rows.filter(actor_id=actor_id)
    if flt.action:
        rows = rows.filter(action=flt.action)
    if flt.object_type:
        rows = rows.filter(object_type=flt.object_type)
    if flt.object_id is not None:
        rows = rows.filter(object_id=flt.object_id)
    if flt.since:
        rows = rows.filter(created_at__gte=_day_start(flt.since))
    if flt.until:
        rows = rows.filter(created_at__lt=_day_after(flt.until))
    return rows.order_by()  # each side unordered (SQLite refuses ORDER BY inside a UNION): the union is ordered once


def _item_rows(projects: models.QuerySet | None, project: Project | None, flt: EventFilter, actor_id: int | None):
    if flt.object_type and flt.object_type != "item":
        return None
    if flt.action:
        suffix = flt.action.removeprefix(ITEM_EVENT_PREFIX)
        if not flt.action.startswith(ITEM_EVENT_PREFIX) or suffix not in ItemEvent.Action.values:
            return None
    rows = ItemEvent.objects.all()
    if project is not None:
        rows = rows.filter(item__project=project)
    elif projects is not None:
        rows = rows.filter(item__project__in=projects)
    if actor_id is not None:
        rows = rows.filter(actor_id=actor_id)
    if flt.action:
        rows = rows.filter(action=flt.action.removeprefix(ITEM_EVENT_PREFIX))
    if flt.object_id is not None:
        rows = rows.filter(item_id=flt.object_id)
    if flt.since:
        rows = rows.filter(created_at__gte=_day_start(flt.since))
    if flt.until:
        rows = rows.filter(created_at__lt=_day_after(flt.until))
    return rows.order_by()


def _audit_columns(rows: models.QuerySet) -> models.QuerySet:
    return rows.annotate(
        e_at=F("created_at"),
        e_id=F("id"),
        e_source=Value("audit", output_field=CharField()),
        e_project=F("project_id"),
        e_actor=F("actor_id"),
        e_action=F("action"),
        e_type=F("object_type"),
        e_object=F("object_id"),
        e_label=F("object_label"),
        e_details=F("details"),
    ).values(*COLUMNS)


def _item_columns(rows: models.QuerySet) -> models.QuerySet:
    return rows.annotate(
        e_at=F("created_at"),
        e_id=F("id"),
        e_source=Value("item_event", output_field=CharField()),
        e_project=F("item__project_id"),
        e_actor=F("actor_id"),
        e_action=Concat(Value(ITEM_EVENT_PREFIX), F("action"), output_field=CharField()),
        e_type=Value("item", output_field=CharField()),
        e_object=F("item_id"),
        e_label=Left(F("item__question"), 200),
        e_details=JSONObject(
            from_status=F("from_status"),
            to_status=F("to_status"),
            revision=F("revision_number"),
            note=Left(F("note"), MAX_DETAIL_TEXT),
        ),
    ).values(*COLUMNS)


def _keys(rows: models.QuerySet, source: str) -> models.QuerySet:
    return rows.annotate(e_at=F("created_at"), e_id=F("id"), e_source=Value(source, output_field=CharField())).values(
        "e_at", "e_id", "e_source"
    )


class EventLog:
    """The log as a list a Paginator (or DRF's) can page: `count()` and slices, newest first.

    A page is found in two steps: the union of (time, id, source) alone, ordered and cut, then the full rows
    of just that page. Building every column (a JSON object, a cut question) for every row of the project
    before taking 50 cost seconds on a project with 400,000 item events (bench/audit_log.py).
    """

    def __init__(self, audit_rows: models.QuerySet, item_rows: models.QuerySet | None) -> None:
        self.audit_rows, self.item_rows = audit_rows, item_rows

    def count(self) -> int:
        return self.audit_rows.count() + (self.item_rows.count() if self.item_rows is not None else 0)

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, window: slice) -> list[dict[str, Any]]:
        if not isinstance(window, slice):
            raise TypeError("EventLog takes slices only")
        keys = _keys(self.audit_rows, "audit")
        if self.item_rows is not None:
            keys = keys.union(_keys(self.item_rows, "item_event"), all=True)
        page = list(keys.order_by("-e_at", "-e_id")[window])
        wanted: dict[str, list[int]] = {"audit": [], "item_event": []}
        for key in page:
            wanted[key["e_source"]].append(key["e_id"])
        found = {
            ("audit", row["e_id"]): row for row in _audit_columns(AuditEvent.objects.filter(pk__in=wanted["audit"]))
        }
        if wanted["item_event"]:
            rows = _item_columns(ItemEvent.objects.filter(pk__in=wanted["item_event"]))
            found |= {("item_event", row["e_id"]): row for row in rows}
        return [found[(key["e_source"], key["e_id"])] for key in page]


def events(*, project: Project | None, flt: EventFilter = EventFilter()) -> EventLog:
    """The log of one project (or, with project=None, of every project), newest first, as dicts.

    Each row: e_at, e_id, e_source ("audit" or "item_event"), e_project, e_actor, e_action, e_type,
    e_object, e_label, e_details. Page through it with slicing; `describe` adds names for display.
    """
    projects = None
    if project is None and flt.project:
        projects = Project.all_objects.filter(slug=flt.project).values("pk")
    actor_id = None
    if flt.actor:
        actor_id = get_user_model().objects.filter(username=flt.actor).values_list("pk", flat=True).first() or -1
    return EventLog(_audit_rows(projects, project, flt, actor_id), _item_rows(projects, project, flt, actor_id))


def describe(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The page's rows with actor names, project slugs and action labels (two queries, whatever the page size)."""
    users = dict(
        get_user_model()
        .objects.filter(pk__in={row["e_actor"] for row in rows if row["e_actor"]})
        .values_list("pk", "username")
    )
    slugs = dict(
        Project.all_objects.filter(pk__in={row["e_project"] for row in rows if row["e_project"]}).values_list(
            "pk", "slug"
        )
    )
    labels = action_labels()
    return [
        {
            "at": row["e_at"],
            "source": row["e_source"],
            "id": row["e_id"],
            "project": slugs.get(row["e_project"], ""),
            "actor": users.get(row["e_actor"], ""),
            "action": row["e_action"],
            "action_label": labels.get(row["e_action"], row["e_action"]),
            "object_type": row["e_type"],
            "object_id": row["e_object"],
            "object_label": row["e_label"] or "",
            "details": row["e_details"] or {},
            # For templates: a details key such as "items" would shadow dict.items there.
            "detail_rows": detail_rows(row["e_details"] or {}),
        }
        for row in rows
    ]


# Details whose values are codes of a known set (a status, a kind, a decision…), read as their names.
_CODE_KEYS = ("status", "kind", "decision", "verdict", "reason", "role", "result")


def detail_rows(details: dict[str, Any]) -> list[tuple[str, Any, bool]]:
    """An event's details as people read them: "From status: Submitted", not `from_status: submitted`; a
    structured value (a readiness record, a list of checks) is shown as the data it is (the third field)."""
    rows: list[tuple[str, Any, bool]] = []
    for key, value in details.items():
        if value is None or value == "":
            continue
        if isinstance(value, dict | list):
            rows.append((spelled_out(key), json.dumps(value, ensure_ascii=False), True))
        elif isinstance(value, str) and key.endswith(_CODE_KEYS):
            rows.append((spelled_out(key), display_name(value), False))
        else:
            rows.append((spelled_out(key), value, False))
    return rows


def object_types(project: Project | None) -> list[str]:
    """The object types to filter by: ours, and any another app recorded (e.g. a validation seed query)."""
    recorded = AuditEvent.objects.order_by().values_list("object_type", flat=True).distinct()
    if project is not None:
        recorded = recorded.filter(project=project)
    return sorted(set(TYPE_CHOICES) | set(recorded) - {""})


def action_labels() -> dict[str, str]:
    """Every action the log can show: audit actions and item events (as item.<action>)."""
    labels = dict(Action.choices)
    for value, label in ItemEvent.Action.choices:
        labels[ITEM_EVENT_PREFIX + value] = f"Item: {label[0].lower()}{label[1:]}"
    return dict(sorted(labels.items()))
