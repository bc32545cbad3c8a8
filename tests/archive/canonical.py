"""A canonical dump of a project, for comparing two copies of it: every row of every archived model.

Ids are replaced by the row's rank among the project's rows of its model (the import keeps their order), keys
by the rank of the row they name, users by username; the project's slug and where its release files live are
left out (they name the copy, not the work). Timestamps and every other value stay as they are. Written
independently of archive/writer.py so the round-trip test does not check the archive with itself; it follows
the registry (archive/registry.py) for which models and which id-bearing values there are.
"""

from __future__ import annotations

import bisect
import datetime
import decimal
import json
import uuid
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType

from archive.registry import ROOT, archived_models, primary_key
from audit.models import Action

LEFT_OUT = {ROOT: {"slug"}, "exports.Release": {"path"}}
# What an import changes on purpose (archive/reader.py `_adjust`): work unfinished when the project was archived
# arrives failed (it must not start on the new server), and uploads arrive without their storage paths (the
# files are not in the archive, and a path would name some other file there). The source side is put in that
# shape before comparing.
UNFINISHED = {
    "annotation.ImportJob": {"pending", "running"},
    "wikiqa.Collection": {"pending", "running"},
    "exports.Release": {"pending", "running"},
    "review.AgreementReport": {"pending", "running"},
}


def as_imported(label: str, row: dict[str, Any]) -> dict[str, Any]:
    if row.get("status") in UNFINISHED.get(label, ()):
        row = {**row, "status": "failed", "error": "(unfinished when archived)"}
    if label == "annotation.ImportJob":
        row = {**row, "files": [{"name": f["name"], "size": f.get("size")} for f in row["files"]]}
    if label in UNFINISHED and row.get("status") == "failed" and "archived" in row.get("error", ""):
        row = {**row, "error": "(unfinished when archived)"}
    return row


# The move itself is on record on each side (written here, imported there): not part of the work compared.
MOVE_ACTIONS = {Action.ARCHIVE_EXPORT_REQUESTED, Action.ARCHIVE_EXPORTED, Action.ARCHIVE_IMPORTED}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    return value


def canonical_dump(project: Any) -> dict[str, list[dict[str, Any]]]:
    entries = archived_models()
    rows = {entry.label: list(entry.rows(project).values()) for entry in entries}
    rows["audit.AuditEvent"] = [row for row in rows["audit.AuditEvent"] if row["action"] not in MOVE_ACTIONS]
    pks = {entry.label: [row[primary_key(entry.model).attname] for row in rows[entry.label]] for entry in entries}
    ranks = {label: {pk: rank for rank, pk in enumerate(values)} for label, values in pks.items()}
    usernames = dict(get_user_model()._base_manager.values_list("pk", "username"))
    dump: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        keys = {key.attname: key.related_model._meta.label for key in [*entry.references, *entry.deferred]}
        users = {key.attname for key in entry.user_keys}
        types = {key.attname for key in entry.content_type_keys}
        out = []
        for row in rows[entry.label]:
            row.pop(primary_key(entry.model).attname)
            for name in LEFT_OUT.get(entry.label, ()):
                row.pop(name)
            for attname, target in keys.items():
                row[attname] = None if row[attname] is None else ("rank", ranks[target][row[attname]])
            for attname in users:
                row[attname] = None if row[attname] is None else usernames[row[attname]]
            for attname in types:
                if row[attname] is not None:
                    row[attname] = list(ContentType.objects.get_for_id(row[attname]).natural_key())
            for name, target in entry.id_lists.items():
                if isinstance(row[name], list):
                    row[name] = [("rank", ranks[target][pk]) for pk in row[name]]
            for name, target in entry.watermarks.items():
                row[name] = ("at most", bisect.bisect_right(pks[target], row[name]))
            if entry.typed_ids is not None:
                type_field, id_field, targets = entry.typed_ids
                typed_target = targets.get(row[type_field])
                if typed_target and row[id_field] in ranks.get(typed_target, {}):
                    row[id_field] = ("rank", ranks[typed_target][row[id_field]])
            out.append({name: _plain(value) for name, value in as_imported(entry.label, row).items()})
        dump[entry.label] = out
    # Through JSON, so a dump made in another process compares equal.
    return json.loads(json.dumps(dump, ensure_ascii=False, sort_keys=True))
