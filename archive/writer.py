"""Writing a project archive: one zip with a manifest, one JSONL per model, the users, and the release files.

Streams: rows are read with `.iterator()` and written line by line into the zip member, files are copied in
blocks, so memory holds a batch of rows, the usernames of the server and the ids of the people referenced —
never the project. On PostgreSQL the whole export reads one snapshot (REPEATABLE READ, read only), so work
saved while it runs is either wholly in the archive or wholly not.
"""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone

from archive.files import release_members
from archive.registry import ArchivedModel, archived_models, local_models
from archive.rows import FORMAT, SCHEMA_VERSION, USER_FIELDS, columns, dumps, encode_value, plain_fields
from common.errors import InvalidState
from common.jobs import pause_between_steps

Progress = Callable[[int, int, str], None]  # (rows done, rows in all, what is being written)
BLOCK = 1 << 16
CHUNK = 2000


class _Hashing:
    """Counts and hashes the bytes written into a zip member."""

    def __init__(self, target: IO[bytes]) -> None:
        self.target, self.digest, self.size = target, hashlib.sha256(), 0

    def write(self, data: bytes) -> None:
        self.target.write(data)
        self.digest.update(data)
        self.size += len(data)

    def entry(self, **extra: Any) -> dict[str, Any]:
        return {"size": self.size, "sha256": self.digest.hexdigest(), **extra}


def _open(archive: zipfile.ZipFile, name: str) -> IO[bytes]:
    info = zipfile.ZipInfo(name, date_time=timezone.now().timetuple()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    return archive.open(info, "w", force_zip64=True)


def _schema_state() -> dict[str, list[str]]:
    """The newest migrations of each local app: which localqa wrote the archive."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    apps_here = {model._meta.app_label for model in local_models()}
    leaves: dict[str, list[str]] = {}
    for app_label, name in loader.graph.leaf_nodes():
        if app_label in apps_here:
            leaves.setdefault(app_label, []).append(name)
    return dict(sorted(leaves.items()))


def project_archive_write(*, project: Any, out: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Write the whole project into the zip `out`; returns the manifest (also its last member)."""
    snapshot = connection.vendor == "postgresql" and not connection.in_atomic_block
    with transaction.atomic():
        if snapshot:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return _write(project, out, progress or (lambda done, total, stage: None))


def _write(project: Any, out: Path, progress: Progress) -> dict[str, Any]:
    entries = archived_models()
    counts = {entry.label: entry.rows(project).count() for entry in entries}
    total, done = sum(counts.values()), 0
    usernames = dict(get_user_model()._base_manager.values_list("pk", "username"))
    people: set[int] = set()
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "created_at": timezone.now().isoformat(),
        "project": {"slug": project.slug, "name": project.name, "kind": project.kind},
        "migrations": _schema_state(),
        "models": [],
        "files": [],
        "members": {},
    }
    progress(0, total, "Starting")
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        for entry in entries:
            progress(done, total, f"Writing {entry.label}")
            with _open(archive, entry.member) as member:
                sink = _Hashing(member)
                rows, max_pk, plan = 0, 0, _plan(entry)
                for values in entry.rows(project).values_list(*columns(entry)).iterator(chunk_size=CHUNK):
                    sink.write(dumps(_row(entry, plan, values, usernames, people)))
                    rows += 1
                    max_pk = max(max_pk, values[0])
                    if rows % CHUNK == 0:
                        progress(done + rows, total, f"Writing {entry.label}")
                        pause_between_steps()
            done += rows
            manifest["models"].append({"model": entry.label, "member": entry.member, "rows": rows, "max_pk": max_pk})
            manifest["members"][entry.member] = sink.entry(rows=rows)
        with _open(archive, "users.jsonl") as member:
            sink = _Hashing(member)
            users = get_user_model()._base_manager.filter(pk__in=people).order_by("username")
            for values in users.values_list(*USER_FIELDS).iterator(chunk_size=CHUNK):
                sink.write(
                    dumps(
                        {name: encode_value(_user_field(name), v) for name, v in zip(USER_FIELDS, values, strict=True)}
                    )
                )
        manifest["members"]["users.jsonl"] = sink.entry(rows=len(people))
        progress(done, total, "Copying release files")
        for name, source, expected, owner in release_members(project):
            progress(done, total, f"Copying {name}")
            with _open(archive, name) as member, source.open("rb") as data:
                sink = _Hashing(member)
                while block := data.read(BLOCK):
                    sink.write(block)
            if expected and sink.digest.hexdigest() != expected:
                raise InvalidState(f"{source}: the published file no longer matches the sha256 its release recorded.")
            manifest["members"][name] = sink.entry()
            manifest["files"].append({"member": name, **owner})
        manifest["counts"] = {entry["model"]: entry["rows"] for entry in manifest["models"]} | {"users": len(people)}
        with _open(archive, "manifest.json") as member:
            member.write(dumps(manifest))
    progress(total, total, "Written")
    return manifest


def _user_field(name: str) -> Any:
    return get_user_model()._meta.get_field(name)


def _plan(entry: ArchivedModel) -> tuple[list[Any], list[Any]]:
    """The plain fields and the keys of a model, in the order `columns` reads them."""
    plain = plain_fields(entry.model)
    keys = {f.attname: f for f in [*entry.references, *entry.deferred, *entry.user_keys, *entry.content_type_keys]}
    return plain, [keys[attname] for attname in columns(entry)[1 + len(plain) :]]


def _row(
    entry: ArchivedModel, plan: tuple[list[Any], list[Any]], values: tuple, usernames: dict[int, str], people: set[int]
) -> dict[str, Any]:
    plain, keys = plan
    fields: dict[str, Any] = {}
    for field, value in zip(plain, values[1 : 1 + len(plain)], strict=True):
        fields[field.name] = encode_value(field, value)
    for key, value in zip(keys, values[1 + len(plain) :], strict=True):
        if value is None:
            fields[key.name] = None
        elif key in entry.user_keys:
            people.add(value)
            fields[key.name] = usernames[value]
        elif key in entry.content_type_keys:
            content_type = ContentType.objects.get_for_id(value)
            fields[key.name] = [content_type.app_label, content_type.model]
        else:
            fields[key.name] = value
    return {"pk": values[0], "fields": fields}
