"""Reading a project archive into this server as a new project, in one transaction.

Checked first (archive/checks.py: names, sizes, ratio, manifest, every member's sha256), then read model by
model in dependency order, in batches. Ids are translated: each row keeps its archived id when that id is
free in its table (an import into a fresh server keeps every id, so release item ids and API links still
hold), else gets a new one; a map per model (archived id -> id here) translates every key. People are matched
by username; someone this server does not know is created inactive, without a usable password. A failure
anywhere rolls the transaction back and removes the files written, so nothing is left of a failed import.
"""

from __future__ import annotations

import bisect
import io
import shutil
import uuid
import zipfile
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import DatabaseError, connection, models, transaction

from annotation.models import Project
from archive.checks import archive_check, archive_verify
from archive.files import release_path
from archive.registry import ROOT, ArchivedModel, archived_models, primary_key, table_fields
from archive.rows import USER_FIELDS, decode_value
from archive.rules import row_problems, username_problem
from common import jsontext
from common.errors import InvalidInput
from common.jobs import Job, pause_between_steps
from exports import paths

Progress = Callable[[int, int, str], None]
BATCH = 1000

# Models that moved to another app since an archive may have been written: old label -> label now.
MOVED_MODELS = {
    "review.ItemEvent": "annotation.ItemEvent",
    "annotation.Account": "accounts.Account",
    "annotation.ApiToken": "accounts.ApiToken",
    "annotation.Collection": "wikiqa.Collection",
    "annotation.CollectionTitle": "wikiqa.CollectionTitle",
    "annotation.WikiPage": "wikiqa.WikiPage",
}


class _IdMap:
    """One model's archived id -> id here, as runs: a run is consecutive archived ids that got consecutive ids
    here, kept as its first archived id, its first id here and its length (three 8-byte integers). An import into a
    fresh server keeps every id, and a project's rows made together have consecutive ids, so a project's rows are
    a few runs, not an entry each (each row's own entry was most of a million-row project's import memory).

    An archive lists each model's rows by ascending id (the writer reads them so): those extend the last run or
    start a new one, found by bisection. A row that comes out of order (a hand-made archive) goes to a dict beside
    them.
    """

    def __init__(self) -> None:
        self.olds, self.news, self.lengths = array("q"), array("q"), array("q")
        self.unordered: dict[int, int] = {}

    def add(self, old: int, new: int) -> None:
        if self.olds:
            last_old = self.olds[-1] + self.lengths[-1] - 1
            if old == last_old + 1 and new == self.news[-1] + self.lengths[-1]:
                self.lengths[-1] += 1
                return
            if old <= last_old:
                self.unordered[old] = new
                return
        self.olds.append(old)
        self.news.append(new)
        self.lengths.append(1)

    def get(self, old: int) -> int | None:
        at = bisect.bisect_right(self.olds, old) - 1
        if at >= 0 and old < self.olds[at] + self.lengths[at]:
            return self.news[at] + old - self.olds[at]
        return self.unordered.get(old)

    def floor(self, old: int) -> tuple[int, int] | None:
        """(archived id, id here) of the highest run-kept row at or below `old`."""
        at = bisect.bisect_right(self.olds, old) - 1
        if at < 0:
            return None
        highest = min(old, self.olds[at] + self.lengths[at] - 1)
        return highest, self.news[at] + highest - self.olds[at]

    def items(self) -> Iterator[tuple[int, int]]:
        for old, new, length in zip(self.olds, self.news, self.lengths, strict=True):
            for step in range(length):
                yield old + step, new + step
        yield from self.unordered.items()


class _Maps:
    """Archived id -> id here, per model label."""

    def __init__(self) -> None:
        self.ids: dict[str, _IdMap] = {}
        self._sorted: dict[str, list[int]] = {}  # the out-of-order ids, sorted when a watermark is first read

    def add(self, label: str, old: int, new: int) -> None:
        self.ids.setdefault(label, _IdMap()).add(old, new)

    def get(self, label: str, old: int) -> int | None:
        ids = self.ids.get(label)
        return ids.get(old) if ids is not None else None

    def news(self, label: str) -> list[int]:
        """Every id here of the model's imported rows."""
        ids = self.ids.get(label)
        return [] if ids is None else [new for _, new in ids.items()]

    def floor(self, label: str, old: int) -> int:
        """The id here of the highest archived row at or below `old` (0 when there is none)."""
        ids = self.ids.get(label)
        if ids is None:
            return 0
        unordered = self._sorted.get(label)
        if unordered is None:
            unordered = self._sorted[label] = sorted(ids.unordered)
        found: list[tuple[int, int]] = []
        kept = ids.floor(old)
        if kept is not None:
            found.append(kept)
        at = bisect.bisect_right(unordered, old)
        if at:
            found.append((unordered[at - 1], ids.unordered[unordered[at - 1]]))
        return max(found)[1] if found else 0


class _Where:
    """The member and line being read, for error messages."""

    def __init__(self, member: str) -> None:
        self.member, self.line = member, 0

    def error(self, message: str, field: str = "file") -> InvalidInput:
        return InvalidInput(f"{self.member} line {self.line}: {message}", field=field)


def project_archive_read(
    *, path: Path, name: str, slug: str | None = None, progress: Progress | None = None, tag: str = "cli"
) -> tuple[Project, dict[str, Any]]:
    """Import the archive at `path` as a new project (under `slug`, or the archived one); returns it and counts.

    Release files are written under `releases/.importing-<tag>-…/` first and moved into place at the end.
    """
    report = progress or (lambda done, total, stage: None)
    manifest = archive_check(path, name=name)
    archive_verify(
        path, manifest, name=name, progress=lambda done, total: report(done, total, "Checking every member's sha256")
    )
    slug = _free_slug(slug or str(manifest["project"].get("slug", "")))
    listed = {MOVED_MODELS.get(entry["model"], entry["model"]): entry for entry in manifest["models"]}
    known = {entry.label for entry in archived_models()}
    unknown = sorted(set(listed) - known)
    if unknown:
        raise InvalidInput(
            f"{name}: the archive holds {unknown[0]}, which this server does not have: it was written by another "
            "localqa version. Import it on a server of the archive's version, or upgrade this one.",
            field="file",
        )
    if listed.get(ROOT, {}).get("rows") != 1:
        raise InvalidInput(f"{name}: the archive must hold exactly one {ROOT} row.", field="file")
    total = sum(int(entry.get("rows", 0)) for entry in manifest["models"])
    staging = staging_root() / f".importing-{tag}-{uuid.uuid4().hex}"
    placed: list[Path] = []
    counts: dict[str, Any] = {}
    try:
        with transaction.atomic(), zipfile.ZipFile(path) as archive:
            maps = _Maps()
            users, counts["users_matched"], counts["users_created"] = _import_users(archive)
            done = 0
            for entry in archived_models():
                if entry.label not in listed:
                    continue  # a model newer than the archive: nothing of it to import
                report(done, total, f"Importing {entry.label}")
                rows = _import_model(archive, entry, listed[entry.label], maps, users, slug, report, done, total)
                counts[entry.label] = rows
                done += rows
            report(done, total, "Writing release files")
            placed = _place_files(archive, manifest, maps, slug, staging)
            project = Project._base_manager.get(slug=slug)
    except BaseException:
        for directory in placed:
            shutil.rmtree(directory, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    report(total, total, "Imported")
    return project, counts


def staging_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "releases"


def _free_slug(slug: str) -> str:
    try:
        validate_slug(slug)
    except ValidationError:
        raise InvalidInput(f"slug: {slug!r} is not a valid slug (letters, digits, - and _).", field="slug") from None
    max_length = Project._meta.get_field("slug").max_length
    if max_length is not None and len(slug) > max_length:
        raise InvalidInput("slug: at most 60 characters.", field="slug")
    if Project._base_manager.filter(slug=slug).exists():
        raise InvalidInput(
            f"slug: a project called {slug!r} already exists on this server; import under another slug.", field="slug"
        )
    return slug


def _lines(archive: zipfile.ZipFile, member: str) -> Iterator[tuple[_Where, Any]]:
    where = _Where(member)
    with archive.open(member) as raw:
        for where.line, line in enumerate(io.TextIOWrapper(raw, encoding="utf-8"), start=1):
            try:
                record = jsontext.loads(line)
            except jsontext.NonFiniteNumber as error:
                raise where.error(f"{error.msg}.") from None
            except ValueError as error:
                raise where.error(f"not valid JSON ({error}).") from None
            if not isinstance(record, dict):
                raise where.error("each line must be a JSON object.")
            yield where, record


def _import_users(archive: zipfile.ZipFile) -> tuple[dict[str, int], int, int]:
    """username -> user id here: existing people are matched, the others created inactive without a password."""
    user_model = get_user_model()
    user_fields = {f.name: f for f in table_fields(user_model)}  # USER_FIELDS are all plain columns
    users: dict[str, int] = {}
    matched = created = 0
    for where, record in _lines(archive, "users.jsonl"):
        username = record.get("username")
        if not isinstance(username, str) or not username:
            raise where.error("'username' is missing.")
        problem = username_problem(username)
        if problem:
            raise where.error(f"field 'username': {problem}", field="file")
        existing = user_model._base_manager.filter(username=username).values_list("pk", flat=True).first()
        if existing is not None:
            users[username], matched = existing, matched + 1
            continue
        person = user_model(is_active=False)
        for field_name in USER_FIELDS:
            if field_name in record:
                field = user_fields[field_name]
                try:
                    setattr(person, field.attname, _checked(field, decode_value(field, record[field_name]), person))
                except ValidationError as error:
                    raise where.error(f"field {field_name!r}: {'; '.join(error.messages)}") from None
        person.set_unusable_password()
        person.save()
        users[username], created = person.pk, created + 1
    return users, matched, created


def _auto_now_fields(model: type[models.Model]) -> list[str]:
    return [
        f.attname for f in table_fields(model) if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
    ]


def _reserve_ids(model: type[models.Model], max_pk: int) -> None:
    """Move the id sequence past the archived ids, so rows created meanwhile never take an id kept here."""
    if connection.vendor != "postgresql" or not max_pk:
        return
    table, column = model._meta.db_table, primary_key(model).column
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence(%s, %s)", [connection.ops.quote_name(table), column])
        sequence = cursor.fetchone()[0]
        if sequence:
            cursor.execute(
                "SELECT setval(%s::regclass, GREATEST(%s, COALESCE(pg_sequence_last_value(%s::regclass), 0)))",
                [sequence, max_pk, sequence],
            )


def _import_model(
    archive: zipfile.ZipFile,
    entry: ArchivedModel,
    listed: dict[str, Any],
    maps: _Maps,
    users: dict[str, int],
    slug: str,
    report: Progress,
    done: int,
    total: int,
) -> int:
    model, label = entry.model, entry.label
    fields = {f.name: f for f in table_fields(model) if not f.primary_key}
    references = {key.name: key.related_model._meta.label for key in entry.references}
    user_keys = {key.name for key in entry.user_keys}
    type_keys = {key.name for key in entry.content_type_keys}
    deferred_keys = {key.name for key in entry.deferred}
    # Archives written before a model named its project (review slots before review 0006) leave the key out:
    # the row belongs to the one project the archive holds.
    project_keys = [key for key in entry.references if not key.null and key.related_model._meta.label == ROOT]
    _reserve_ids(model, int(listed.get("max_pk") or 0))
    stamped = _auto_now_fields(model)
    batch: list[tuple[int, models.Model, str]] = []
    in_batch: set[int] = set()
    later: list[tuple[int, str, int]] = []  # (archived id, key attname, archived id it names)
    rows = 0

    def flush() -> None:
        olds = [old for old, _, _ in batch]
        taken = set(model._base_manager.filter(pk__in=olds).values_list("pk", flat=True))
        for old, obj, _ in batch:
            obj.pk = None if old in taken else old
        objs = [obj for _, obj, _ in batch]
        archived_times = [[getattr(obj, name) for name in stamped] for obj in objs]
        try:
            with transaction.atomic():
                model._base_manager.bulk_create(objs)
                if stamped:  # the insert stamped them with the time now: put the archived times back
                    for obj, times in zip(objs, archived_times, strict=True):
                        for name, value in zip(stamped, times, strict=True):
                            setattr(obj, name, value)
                    model._base_manager.bulk_update(objs, stamped)
        except DatabaseError as error:
            raise InvalidInput(
                f"{entry.member} lines {batch[0][2]}–{batch[-1][2]}: the database refused the rows: {error}",
                field="file",
            ) from None
        for old, obj, _ in batch:
            maps.add(label, old, obj.pk)
        batch.clear()
        in_batch.clear()
        report(done + rows, total, f"Importing {label}")
        pause_between_steps()

    for where, record in _lines(archive, listed.get("member") or entry.member):  # an older archive: the old name
        old = record.get("pk")
        values = record.get("fields")
        if not isinstance(old, int) or isinstance(old, bool) or not isinstance(values, dict):
            raise where.error("each line needs an integer 'pk' and an object 'fields'.")
        if maps.get(label, old) is not None or old in in_batch:
            raise where.error(f"{label} {old} appears twice.")
        obj = model()
        renamed, statuses = JOB_FIELDS_RENAMED.get(label, {}), JOB_STATUSES_RENAMED.get(label, {})
        for field_name, value in values.items():
            field_name = renamed.get(field_name, field_name)
            if field_name == "status" and value in statuses:
                value = statuses[value]
            field = fields.get(field_name)
            if field is None:
                raise where.error(
                    f"{label} has no field {field_name!r} on this server (the archive comes from another version)."
                )
            if value is None:
                setattr(obj, field.attname, None)
            elif field_name in user_keys:
                if value not in users:
                    raise where.error(f"field {field_name!r} names {value!r}, who is not in users.jsonl.")
                setattr(obj, field.attname, users[value])
            elif field_name in type_keys:
                try:
                    setattr(obj, field.attname, ContentType.objects.get_by_natural_key(*value).pk)
                except (ContentType.DoesNotExist, TypeError):
                    raise where.error(f"field {field_name!r}: no content type {value!r} here.") from None
            elif field_name in deferred_keys:
                later.append((old, field.attname, value))
            elif field_name in references:
                new = maps.get(references[field_name], value)
                if new is None:
                    raise where.error(
                        f"field {field_name!r} names {references[field_name]} {value!r}, which is not in the archive."
                    )
                setattr(obj, field.attname, new)
            else:
                try:
                    setattr(obj, field.attname, _checked(field, decode_value(field, value), obj))
                except (ValidationError, ValueError, TypeError) as error:
                    message = "; ".join(error.messages) if isinstance(error, ValidationError) else str(error)
                    raise where.error(f"field {field_name!r}: {message}") from None
        for key in project_keys:
            if getattr(obj, key.attname) is None:
                setattr(obj, key.attname, maps.news(ROOT)[0])
        for field_name, problem in row_problems(label, obj):
            raise where.error(f"field {field_name!r}: {problem}")
        _translate_ids(entry, obj, maps, where)
        _adjust(label, obj, slug)
        batch.append((old, obj, str(where.line)))
        in_batch.add(old)
        rows += 1
        if len(batch) >= BATCH:
            flush()
    if batch:
        flush()
    if rows != listed.get("rows"):
        raise InvalidInput(f"{entry.member}: {rows} rows, but manifest.json says {listed.get('rows')}.", field="file")
    for old, attname, target in later:
        new_target = maps.get(label, target)
        if new_target is None:
            raise InvalidInput(f"{entry.member}: {label} {old} names {label} {target}, which is not in the archive.")
        model._base_manager.filter(pk=maps.get(label, old)).update(**{attname: new_target})
    return rows


def _translate_ids(entry: ArchivedModel, obj: models.Model, maps: _Maps, where: _Where) -> None:
    for field_name, target in entry.id_lists.items():
        value = getattr(obj, field_name)
        if isinstance(value, list):
            translated = []
            for old in value:
                new = maps.get(target, old) if isinstance(old, int) else None
                if new is None:
                    raise where.error(f"field {field_name!r} names {target} {old!r}, which is not in the archive.")
                translated.append(new)
            setattr(obj, field_name, translated)
    if entry.typed_ids is not None:
        type_field, id_field, types = entry.typed_ids
        typed_target, old = types.get(getattr(obj, type_field)), getattr(obj, id_field)
        new = maps.get(typed_target, old) if typed_target and isinstance(old, int) else None
        if new is not None:
            setattr(obj, id_field, new)
    for field_name, target in entry.watermarks.items():
        value = getattr(obj, field_name)
        if isinstance(value, int) and value:
            setattr(obj, field_name, maps.floor(target, value))


def _checked(field: models.Field, value: Any, obj: models.Model) -> Any:
    """The value if the field's own rules take it (length, choices, validators such as wiki codes, e-mail)."""
    if value not in field.empty_values:
        field.validate(value, obj)
        field.run_validators(value)
    return value


def _adjust(label: str, obj: models.Model, slug: str) -> None:
    """Values that name the project's place on this server: its slug, where its release files live; and work
    that was not finished when the project was archived, which must not start here on files it names."""
    row: Any = obj
    if label == ROOT:
        row.slug = slug
    elif label == "exports.Release" and row.path:
        row.path = release_path(slug, row.version)
    elif label == "annotation.ImportJob":
        # Uploads are not archived: a stored path would name some other file of this server.
        files = row.files if isinstance(row.files, list) else []
        row.files = [
            {"name": str(f.get("name", ""))[:255], "size": f.get("size")} for f in files if isinstance(f, dict)
        ]
    if isinstance(row, Job) and row.is_active:
        row.status, row.error = Job.Status.FAILED, UNFINISHED


# Archives written before the job models shared their fields (common/jobs.py) name these the old way.
JOB_FIELDS_RENAMED = {
    "wikiqa.Collection": {"done": "progress_done", "total": "progress_total"},
    "annotation.ImportJob": {"bytes_done": "progress_done", "bytes_total": "progress_total"},
    "exports.Release": {"build_token": "owner"},
    "review.AgreementReport": {"progress": "progress_done"},
}
JOB_STATUSES_RENAMED = {
    "exports.Release": {"building": "running", "published": "done"},
    "review.AgreementReport": {"queued": "pending"},
}
UNFINISHED = "Not finished when the project was archived; archives do not carry unfinished work. Start it again."


def _written(manifest: dict[str, Any], maps: _Maps) -> list[tuple[int | None, str]]:
    return [(maps.get(str(entry["model"]), entry["pk"]), str(entry["name"])) for entry in manifest.get("files", [])]


def _place_files(
    archive: zipfile.ZipFile, manifest: dict[str, Any], maps: _Maps, slug: str, staging: Path
) -> list[Path]:
    """Write each release's files under the new project's folder; returns the folders put in place."""
    from exports.models import Release

    folders: dict[Path, Path] = {}
    for position, entry in enumerate(manifest.get("files", [])):
        pk = entry.get("pk") if isinstance(entry, dict) else None
        new = maps.get(str(entry.get("model")), pk) if isinstance(pk, int) else None  # a list or {} is no id
        release = Release.objects.filter(pk=new).first() if new else None
        if release is None or not release.path:
            raise InvalidInput(f"manifest.json: files[{position}] belongs to no published release of the archive.")
        recorded = release.file_entry(str(entry.get("name")))
        expected = manifest["members"].get(entry.get("member"), {}).get("sha256")
        if recorded is None or recorded.get("sha256") != expected:
            raise InvalidInput(
                f"{entry.get('member')}: not a file of release v{release.version}, or not the bytes it published."
            )
        # The name comes from the archive's own Release row: it must stay inside the release's folder, and the
        # folder inside this project's releases (checked as paths, not only as text, before anything is written).
        final = paths.release_folder(release.path)
        if final.parent != (paths.releases_root() / slug).resolve():
            raise InvalidInput(f"manifest.json: files[{position}] points outside the project's releases.")
        temporary = staging / final.name
        try:
            target = paths.inside(temporary, str(recorded["name"]))
        except InvalidInput as error:
            raise InvalidInput(f"{entry.get('member')}: {error.message}", field="file") from None
        target.parent.mkdir(parents=True, exist_ok=True)
        with archive.open(entry["member"]) as source, target.open("wb") as out:
            shutil.copyfileobj(source, out, 1 << 16)
        folders[temporary] = final
    wanted = {
        (release.pk, entry["name"])
        for release in Release.objects.filter(pk__in=maps.news(Release._meta.label)).exclude(path="")
        for entry in release.files
    }
    written = {(release_pk, name) for release_pk, name in _written(manifest, maps)}
    if wanted - written:
        release_pk, missing = sorted(wanted - written)[0]
        version = Release.objects.get(pk=release_pk).version
        raise InvalidInput(f"manifest.json: release v{version} published {missing!r}, which the archive does not hold.")
    placed = []
    for temporary, final in folders.items():
        if final.exists():
            shutil.rmtree(final)  # left by an earlier failed import: no project owns this slug
        final.parent.mkdir(parents=True, exist_ok=True)
        temporary.rename(final)
        placed.append(final)
    return placed
