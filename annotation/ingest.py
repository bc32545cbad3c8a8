"""Getting rows in: file import jobs of every project kind (services).

Pages, the API, the import commands and the Celery tasks all call these functions. An import job is a row
holding its status, progress and outcome; the worker claims it with a conditional update, so a second delivery
of the same task does nothing. Each kind says how its files are read (`UploadImporter`, registered in
`common.kinds`); Wikipedia collections are `wikiqa.collect`.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils.text import get_valid_filename

from annotation.importers.report import ImportReport
from annotation.importers.sources import ImportSource
from annotation.models import ImportJob, Project
from audit import services as audit
from audit.models import Action
from common import kinds
from common.errors import InvalidInput, InvalidState
from common.jobs import JobLost, JobRun, job_claim, job_enqueue, pause_between_steps

logger = logging.getLogger(__name__)

# Import jobs


@dataclass(frozen=True)
class UploadImporter:
    """What an import job of a project kind accepts and how it imports: page pairs unless the kind says otherwise.

    `run(job=, sources=, progress=)` imports the job's stored files inside the job's transaction and returns the
    report; `progress(bytes_done, records)` feeds the job's heartbeat (it may raise JobLost: let it through).
    """

    formats: tuple[str, ...]
    names: str  # the file name endings `detect` knows, for the message when it knows none
    detect: Callable[[str], str | None]
    run: Callable[..., ImportReport]
    fileless: tuple[str, ...] = ()  # "formats" of jobs that read no file (generating questions from what is there)


def upload_importer(project: Project) -> UploadImporter:
    """The importer of the project's kind (`common.kinds`; Wikipedia QA: `wikiqa.kind.PAIRS_IMPORTER`)."""
    importer = kinds.of(project).importer
    if importer is None:
        raise InvalidInput(f"A {project.get_kind_display()} project does not import files this way.", field="files")
    return importer


def import_job_create(
    *,
    project: Project,
    user: User | None,
    files: list[UploadedFile],
    format: str = "auto",
    dry_run: bool = False,
    options: dict[str, Any] | None = None,
    progress_total: int | None = None,
) -> ImportJob:
    """Store uploaded files and queue their import; the report is on the job when the worker is done.

    `options` is kept on the job for the project kind's importer (`common.kinds.ProjectKind.importer`). A job of
    one of the importer's `fileless` formats takes no file; its `progress_total` counts what it works through."""
    importer = upload_importer(project)
    if format not in importer.formats:
        raise InvalidInput(f"Unknown format {format!r}: use one of {', '.join(importer.formats)}.", field="format")
    if not files and format not in importer.fileless:
        raise InvalidInput("Choose at least one file to import.", field="files")
    limit = settings.IMPORT_MAX_BYTES
    for upload in files:
        if upload.size is not None and upload.size > limit:
            raise InvalidInput(
                f"{upload.name}: the file is {upload.size:,} bytes, more than the import limit of {limit:,} bytes "
                "(IMPORT_MAX_BYTES); split it into smaller files.",
                field="files",
            )
        if format == "auto" and importer.detect(upload.name or "") is None:
            raise InvalidInput(
                f"{upload.name}: cannot tell the format from the name ({importer.names}); choose the format.",
                field="format",
            )
    folder = f"imports/{project.pk}/{uuid.uuid4().hex}"
    stored = []
    for upload in files:
        name = Path(upload.name or "upload").name
        path = default_storage.save(f"{folder}/{get_valid_filename(name)}", upload)
        stored.append({"name": name, "path": path, "size": upload.size})
    with transaction.atomic():
        job = ImportJob.objects.create(
            project=project,
            created_by=user,
            format=format,
            dry_run=dry_run,
            files=stored,
            options=options or {},
            progress_total=sum(f["size"] or 0 for f in stored) if progress_total is None else progress_total,
        )
        if not dry_run:  # a dry run changes nothing, so there is nothing to audit
            audit.record(user, Action.IMPORT_STARTED, job, project=project, files=[f["name"] for f in stored])
        job_enqueue("import", job.pk)
    return job


def import_job_run(*, job_id: int) -> ImportJob | None:
    """Run a queued import job; store its report; remove the uploads. None if there is nothing to claim.

    The claim is a conditional update: a pending job, or a running one whose heartbeat went stale (its worker
    died; the import's transaction died with its connection, so nothing of it is in the database). The pairs
    and the job's outcome commit in one transaction, so a job is imported exactly once; the uploads are
    removed only once it has ended.
    """
    run = job_claim(ImportJob, job_id, every=0.5, progress_done=0, records_done=0)
    if run is None:
        return None
    job = ImportJob.objects.select_related("project").get(pk=job_id)
    sources = [ImportSource(name=f["name"], path=Path(default_storage.path(f["path"]))) for f in job.files]

    def progress(bytes_done: int, records: int) -> None:  # called by the importer after each batch
        run.beat(progress_done=bytes_done, records_done=records)
        pause_between_steps()

    try:
        # The import is one transaction, whose writes nobody sees before it commits: heartbeats go aside.
        with run.aside(), transaction.atomic():
            report = upload_importer(job.project).run(job=job, sources=sources, progress=progress)
            _finish_job(run, job, report)
    except JobLost:
        return None  # presumed dead and taken over by another worker, whose import counts; ours rolled back
    except Exception as error:
        run.fail(error)
        _remove_uploads(job)
        raise
    job.refresh_from_db()
    if not import_job_rerunnable(job, check_files=False):
        _remove_uploads(job)
    return job


def import_job_rerunnable(job: ImportJob, *, check_files: bool = True) -> bool:
    """Whether a finished dry run can be run again on its own uploads: it passed, or only asked for regions.

    Such a dry run keeps its uploads, so that the coordinator can map its unknown regions and import
    the same files (`import_job_rerun`); every other finished job removes them.
    """
    report = job.report or {}
    if not job.dry_run or job.status not in (ImportJob.Status.DONE, ImportJob.Status.REFUSED):
        return False
    if (job.options or {}).get("rerun_as") is not None:
        return False
    regions_only = report.get("problems_total", 0) == len(report.get("unknown_regions") or {})
    if not regions_only:
        return False
    return not check_files or all(default_storage.exists(stored["path"]) for stored in job.files)


def import_job_rerun(
    *,
    job: ImportJob,
    user: User | None,
    region_map: Mapping[str, str] | None = None,
    dry_run: bool = False,
) -> ImportJob:
    """Import a dry run's files again, after mapping the regions it did not know into the project's vocabulary.

    The new job takes over the uploads (it removes them when it ends). `region_map` (fine region as
    written → one of the project's regions) is saved in the project's region vocabulary first.
    """
    from annotation.services.projects import project_region_vocabulary_map

    if not import_job_rerunnable(job):
        raise InvalidState(
            "Only a finished dry run that passed, or that only asked for regions, can be run again on its files; "
            "upload the files again.",
            field="job",
        )
    unknown = (job.report or {}).get("unknown_regions") or {}
    region_map = dict(region_map or {})
    if unknown and not region_map:
        raise InvalidInput(f"Map the regions this project does not know yet: {', '.join(unknown)}.", field="region_map")
    with transaction.atomic():
        locked = ImportJob.objects.select_for_update().get(pk=job.pk)
        if (locked.options or {}).get("rerun_as") is not None:
            raise InvalidState("This dry run was run again meanwhile; see the newer import.", field="job")
        if region_map:
            project_region_vocabulary_map(project=job.project, mapping=region_map, actor=user)
        again = ImportJob.objects.create(
            project=job.project,
            created_by=user,
            format=job.format,
            dry_run=dry_run,
            files=job.files,
            options={**{k: v for k, v in job.options.items() if k != "rerun_as"}, "rerun_of": job.pk},
            progress_total=job.progress_total,
        )
        ImportJob.objects.filter(pk=job.pk).update(options={**job.options, "rerun_as": again.pk})
        if not dry_run:
            audit.record(user, Action.IMPORT_STARTED, again, project=job.project, files=[f["name"] for f in job.files])
        job_enqueue("import", again.pk)
    job.refresh_from_db()
    return again


def _finish_job(run: JobRun, job: ImportJob, report: ImportReport) -> None:
    status = ImportJob.Status.DONE if report.ok else ImportJob.Status.REFUSED
    with transaction.atomic():
        run.finish(
            status=status,
            report=report.as_dict() | {"summary": report.summary()},
            progress_done=job.progress_total,
            records_done=report.lines,
        )
        if not job.dry_run:
            audit.record(
                job.created_by,
                Action.IMPORT_FINISHED,
                job,
                project=job.project,
                status=status,
                created=report.created,
                already_present=report.already_present,
                summary=report.summary(),
            )


def _remove_uploads(job: ImportJob) -> None:
    for stored in job.files:
        default_storage.delete(stored["path"])


def import_job_report(job: ImportJob) -> dict[str, Any] | None:
    return job.report
