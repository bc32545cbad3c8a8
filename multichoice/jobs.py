"""Imports and question generation of multiple-choice projects run as import jobs (`annotation.ImportJob`).

A request only stores the upload and queues the job (`annotation.ingest.import_job_create`, with the same
IMPORT_MAX_BYTES cap as every import); the worker runs it through the kind's `UploadImporter` below, in one
transaction, and stores the report. Generating entity questions reads no file: it is the job "format"
`generate`, whose progress counts facts. The services called here (`trivia_import_csv`, `entities_import`,
`questions_generate`) are the same ones tests and commands call directly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet

from annotation import ingest
from annotation.importers.report import ImportReport
from annotation.importers.sources import ImportSource
from annotation.ingest import UploadImporter
from annotation.models import ImportJob, Project
from common.errors import InvalidInput
from multichoice import entities
from multichoice.services.files import trivia_import_csv, trivia_import_jsonl

FILE_FORMATS = ("auto", "csv", "jsonl")
GENERATE = "generate"

Progress = Callable[[int, int], None]


def detect(name: str) -> str | None:
    lowered = name.lower()
    if lowered.endswith(".jsonl"):
        return "jsonl"
    if lowered.endswith(".csv"):
        return "csv"
    return None


@dataclass
class KindReport(ImportReport):
    """An import job's report for a trivia or entity file, or a generation: the service's own answer in `result`."""

    job_kind: str = ""  # trivia, entities or generate
    result: dict[str, Any] | None = None

    def summary(self) -> str:
        if not self.ok:
            n = self.problems_total
            return f"Refused: {n} problem{'s' if n != 1 else ''}; nothing was written."
        result = self.result or {}
        if self.job_kind == GENERATE:
            return (
                f"{result['created']} questions generated; {result['skipped_without_distractors']} facts left out "
                "for want of three distractors."
            )
        if self.job_kind == "entities":
            updated = f", {len(result['updated'])} updated" if result["updated"] else ""
            flagged = f"; {result['questions_flagged']} questions flagged" if result["questions_flagged"] else ""
            return (
                f"{result['created']} entities imported{updated}; {len(result['normalised'])} values "
                f"normalised{flagged}."
            )
        if result.get("already_imported"):
            earlier = result["already_imported"]
            return f"{earlier['name']} was imported already (import {earlier['import_id']}): nothing imported."
        skipped = f"; {len(result['skipped'])} already in the project, skipped" if result["skipped"] else ""
        return f"{result['created']} items imported{skipped}."

    def as_dict(self) -> dict[str, Any]:
        return super().as_dict() | {"job_kind": self.job_kind, "result": self.result}


def _refused(report: KindReport, error: InvalidInput, name: str | None) -> KindReport:
    """Every problem the service named (its `details`, else its one message), by file and field."""
    details = error.details if isinstance(error.details, dict) and error.details else {error.field: [error.message]}
    for field, messages in details.items():
        for message in messages if isinstance(messages, list) else [messages]:
            report.add_problem(None, field, str(message), file=name)
    return report


def _file_format(job: ImportJob, source: ImportSource) -> str:
    return job.format if job.format != "auto" else (detect(source.name) or "csv")


def _trivia_run(*, job: ImportJob, sources: list[ImportSource], progress: Progress) -> ImportReport:
    source = sources[0]
    with source.open() as file:
        data = file.read()
    report = KindReport(job_kind="trivia")
    report.files.append({"name": source.name, "format": job.format, "size": len(data)})
    options = job.options or {}
    try:
        if _file_format(job, source) == "jsonl":
            result = trivia_import_jsonl(
                project=job.project,
                data=data,
                name=source.name,
                add_categories=options.get("add_categories", True),
                user=job.created_by,
            )
        else:
            result = trivia_import_csv(
                project=job.project,
                data=data,
                name=source.name,
                subset=options.get("subset", ""),
                add_categories=options.get("add_categories", True),
                user=job.created_by,
            )
    except InvalidInput as error:
        return _refused(report, error, source.name)
    report.result = result
    report.created, report.already_present = result["created"], len(result["skipped"])
    report.lines = result["created"] + len(result["skipped"])
    progress(len(data), report.lines)
    return report


def _entity_run(*, job: ImportJob, sources: list[ImportSource], progress: Progress) -> ImportReport:
    if job.format == GENERATE:
        report = KindReport(job_kind=GENERATE)
        report.result = entities.questions_generate(
            project=job.project, seed=(job.options or {}).get("seed"), user=job.created_by, progress=progress
        )
        report.created = report.result["created"]
        return report
    source = sources[0]
    with source.open() as file:
        data = file.read()
    report = KindReport(job_kind="entities")
    report.files.append({"name": source.name, "format": job.format, "size": len(data)})
    try:
        result = entities.entities_import(
            project=job.project, data=data, name=source.name, fmt=_file_format(job, source), user=job.created_by
        )
    except InvalidInput as error:
        return _refused(report, error, source.name)
    report.result = result
    report.created, report.already_present = result["created"], len(result["updated"])
    for kept in result["kept_corrected"]:
        report.add_warning(
            kept["attribute"],
            f"{kept['entity']}: {kept['attribute']} kept as corrected ({kept['kept']}), not the file's {kept['file']}.",
            file=source.name,
        )
    if result["ignored_columns"]:
        report.add_warning(
            None,
            f"Columns that match no attribute or grouping field, not imported: {', '.join(result['ignored_columns'])}.",
            file=source.name,
        )
    if result["empty_groupings"]:
        report.add_warning(
            None,
            f"No column for the grouping field{'s' if len(result['empty_groupings']) > 1 else ''} "
            f"{', '.join(result['empty_groupings'])}: left empty.",
            file=source.name,
        )
    progress(len(data), result["created"] + len(result["updated"]))
    return report


TRIVIA_IMPORTER = UploadImporter(FILE_FORMATS, ".csv or .jsonl", detect, _trivia_run)
ENTITY_IMPORTER = UploadImporter((*FILE_FORMATS, GENERATE), ".csv or .jsonl", detect, _entity_run, (GENERATE,))


def trivia_import_start(
    *, project: Project, user: User | None, upload: UploadedFile, fmt: str = "auto", subset: str = "", add: bool
) -> ImportJob:
    """Queue a trivia file's import (the upload is checked for size and format now)."""
    options = {"subset": subset, "add_categories": add}
    return ingest.import_job_create(project=project, user=user, files=[upload], format=fmt, options=options)


def entities_import_start(*, project: Project, user: User | None, upload: UploadedFile, fmt: str = "auto") -> ImportJob:
    return ingest.import_job_create(project=project, user=user, files=[upload], format=fmt)


def questions_generate_start(*, project: Project, user: User | None, seed: int | None = None) -> ImportJob:
    """Queue the generation of the question pairs not generated yet; its progress counts facts."""
    options = {} if seed is None else {"seed": seed}
    return ingest.import_job_create(
        project=project,
        user=user,
        files=[],
        format=GENERATE,
        options=options,
        progress_total=entities.fact_count(project),
    )


def kind_jobs(project: Project) -> QuerySet[ImportJob]:
    """The project's jobs, newest first."""
    return ImportJob.objects.filter(project=project).select_related("created_by").order_by("-created_at", "-id")
