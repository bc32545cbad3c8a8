"""Project archive jobs: export a project into one file, import such a file as a new project.

Pages, the API, the management commands and the Celery tasks all call these functions. A job is a
`ProjectArchive` row: requested (pending), claimed by one worker with a conditional update (a pending row, or
a running one whose heartbeat went stale: its worker died), with progress and errors on the row.

The export and the import each run in one transaction, so their progress is written through a second,
autocommitting database connection: the page sees it move while the work is still uncommitted.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import F, Q, QuerySet

from annotation.models import Project
from archive.checks import archive_check
from archive.models import ProjectArchive
from archive.reader import project_archive_read, staging_root
from archive.writer import project_archive_write
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, InvalidState
from common.jobs import JobLost, JobRun, job_claim, job_enqueue, stale_cutoff

log = logging.getLogger(__name__)
Status = ProjectArchive.Status


def archives_root() -> Path:
    return Path(settings.MEDIA_ROOT) / "archives"


def archive_file(archive: ProjectArchive) -> Path:
    return Path(settings.MEDIA_ROOT) / archive.path


# Progress


def _claim(archive_id: int, kind: str) -> JobRun | None:
    """Claim a pending job, or a running one whose worker stopped reporting; None if another run holds it."""
    return job_claim(ProjectArchive, archive_id, every=settings.ARCHIVE_PROGRESS_SECONDS, rows={"kind": kind})


def _progress(run: JobRun) -> Callable[[int, int, str], None]:
    """The writer's and reader's progress callback: the job's heartbeat (the last step always written)."""

    def progress(done: int, total: int, stage: str) -> None:
        run.beat(force=done >= total, progress_done=done, progress_total=total, stage=stage)

    return progress


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        while block := data.read(1 << 16):
            digest.update(block)
    return digest.hexdigest()


# Export


def archive_export_request(*, project: Project, user: User | None, enqueue: bool = True) -> ProjectArchive:
    """Queue an export of the project; a worker writes the file (one export of a project at a time)."""
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()  # two clicks at once queue one export
        running = ProjectArchive.objects.filter(
            kind=ProjectArchive.Kind.EXPORT, project=project, status__in=ProjectArchive.ACTIVE
        )
        if running.filter(Q(status=Status.PENDING) | Q(heartbeat_at__gte=stale_cutoff(ProjectArchive))).exists():
            raise InvalidState("An export of this project is already waiting or running; wait for it to finish.")
        archive = ProjectArchive.objects.create(
            kind=ProjectArchive.Kind.EXPORT, project=project, slug=project.slug, created_by=user
        )
        audit.record(user, Action.ARCHIVE_EXPORT_REQUESTED, archive, project=project)
    if enqueue:
        job_enqueue("archive_export", archive.pk)
    return archive


def archive_export_run(*, archive_id: int) -> ProjectArchive | None:
    """Write the export (claimed with a conditional update); the file is moved into place when complete."""
    run = _claim(archive_id, ProjectArchive.Kind.EXPORT)
    if run is None:
        return None
    archive = ProjectArchive.objects.select_related("project", "created_by").get(pk=archive_id)
    folder = archives_root() / str(archive.project_id or "gone")
    temporary = folder / f".{archive.pk}-{uuid.uuid4().hex}.part"
    try:
        if archive.project is None:
            raise InvalidState("The project was deleted before its export ran.")
        folder.mkdir(parents=True, exist_ok=True)
        for leftover in folder.glob(f".{archive.pk}-*.part"):  # a killed run's unfinished file
            leftover.unlink(missing_ok=True)
        # The export reads in one transaction: its heartbeats go aside, so the page sees them move.
        with run.aside():
            manifest = project_archive_write(project=archive.project, out=temporary, progress=_progress(run))
        final = folder / f"{archive.pk}-{archive.file_name}"
        temporary.rename(final)
        try:
            with transaction.atomic():
                run.finish(
                    path=str(final.relative_to(Path(settings.MEDIA_ROOT))),
                    size=final.stat().st_size,
                    sha256=_sha256(final),
                    counts=manifest["counts"],
                    progress_done=F("progress_total"),
                    stage="",
                )
                audit.record(
                    archive.created_by,
                    Action.ARCHIVE_EXPORTED,
                    archive,
                    project=archive.project,
                    size=final.stat().st_size,
                )
        except JobLost:  # taken over by another run meanwhile: that run's file counts
            final.unlink(missing_ok=True)
    except Exception as error:
        log.exception("Archive export %s failed", archive.pk)
        temporary.unlink(missing_ok=True)
        run.fail(error, stage="")
    archive.refresh_from_db()
    return archive


def archive_export_now(*, project: Project, user: User | None = None) -> ProjectArchive:
    archive = archive_export_request(project=project, user=user, enqueue=False)
    return archive_export_run(archive_id=archive.pk) or ProjectArchive.objects.get(pk=archive.pk)


def archive_write_to(*, project: Project, out: Path, progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Write the project straight into `out` (the management command); returns the manifest."""
    temporary = out.with_name(f".{out.name}.{uuid.uuid4().hex}.part")
    try:
        manifest = project_archive_write(project=project, out=temporary, progress=progress)
        temporary.replace(out)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return manifest


# Import


def archive_import_request(
    *, upload: UploadedFile, user: User | None, slug: str = "", enqueue: bool = True
) -> ProjectArchive:
    """Store an uploaded archive after the checks that need no unpacking, and queue its import."""
    name = Path(upload.name or "archive.zip").name
    limit = settings.ARCHIVE_MAX_BYTES
    if upload.size is not None and upload.size > limit:
        raise InvalidInput(
            f"{name}: the file is {upload.size:,} bytes, more than the archive limit of {limit:,} bytes "
            "(ARCHIVE_MAX_BYTES).",
            field="file",
        )
    relative = f"archives/uploads/{uuid.uuid4().hex}.zip"
    stored = Path(default_storage.path(default_storage.save(relative, upload)))
    try:
        manifest = archive_check(stored, name=name)
        target = slug or str(manifest["project"].get("slug", ""))
        if Project._base_manager.filter(slug=target).exists():
            raise InvalidInput(
                f"slug: a project called {target!r} already exists on this server; import under another slug.",
                field="slug",
            )
        archive = ProjectArchive.objects.create(
            kind=ProjectArchive.Kind.IMPORT,
            slug=target[:60],
            created_by=user,
            path=str(stored.relative_to(Path(settings.MEDIA_ROOT))),
            original_name=name,
            size=stored.stat().st_size,
        )
    except BaseException:
        stored.unlink(missing_ok=True)
        raise
    if enqueue:
        job_enqueue("archive_import", archive.pk)
    return archive


def archive_import_run(*, archive_id: int) -> ProjectArchive | None:
    """Import a stored archive (claimed with a conditional update); the upload is removed when it ends."""
    run = _claim(archive_id, ProjectArchive.Kind.IMPORT)
    if run is None:
        return None
    archive = ProjectArchive.objects.select_related("created_by").get(pk=archive_id)
    stored = archive_file(archive)
    for leftover in staging_root().glob(f".importing-{archive.pk}-*"):  # a killed run's release files
        shutil.rmtree(leftover, ignore_errors=True)
    try:
        ProjectArchive.objects.filter(pk=archive.pk).update(sha256=_sha256(stored))
        # The import writes in one transaction: its heartbeats go aside, so the page sees them move.
        with run.aside():
            project, counts = project_archive_read(
                path=stored,
                name=archive.original_name or stored.name,
                slug=archive.slug,
                progress=_progress(run),
                tag=str(archive.pk),
            )
        with transaction.atomic():
            run.finish(project=project, counts=counts, progress_done=F("progress_total"), stage="")
            audit.record(
                archive.created_by,
                Action.ARCHIVE_IMPORTED,
                archive,
                project=project,
                file=archive.original_name or stored.name,
            )
    except Exception as error:
        log.info("Archive import %s refused or failed: %s", archive.pk, error)
        run.fail(error, stage="")
    finally:
        stored.unlink(missing_ok=True)
    archive.refresh_from_db()
    return archive


def archive_import_file(
    *, path: Path, slug: str | None = None, progress: Callable[[int, int, str], None] | None = None
) -> tuple[Project, dict[str, Any]]:
    """Import the archive at `path` in this process (the management command)."""
    return project_archive_read(path=path, name=path.name, slug=slug, progress=progress)


# Reading


def exports_for_project(project: Project) -> QuerySet[ProjectArchive]:
    return ProjectArchive.objects.filter(kind=ProjectArchive.Kind.EXPORT, project=project).select_related("created_by")


def imports_list() -> QuerySet[ProjectArchive]:
    return ProjectArchive.objects.filter(kind=ProjectArchive.Kind.IMPORT).select_related("created_by", "project")
