"""Importing collected QA pairs, seed-query templates and domain lists (the project kind's import job)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation import ingest, lifecycle
from annotation.importers.report import ImportReport
from annotation.importers.sources import ImportSource, ProgressCallback
from annotation.ingest import UploadImporter
from annotation.models import ImportJob, PagePair, Project, QAItem, QAItemRevision
from common.errors import InvalidState
from validation.importers import (
    ITEM_FORMATS,
    CollectedPair,
    detect_item_format,
    read_collected_pairs,
)
from validation.models import (
    ValidationItem,
)
from validation.services.domains import source_domains_import
from validation.services.projects import validation_settings
from validation.services.seeds import check_locations, seed_queries_import
from validation.text import domain_of, find_duplicates, normalise

NO_SOURCE_TITLE = "(no source URL)"


def _source_pairs(project: Project, urls: Sequence[str], now: Any) -> dict[str, int]:
    """Each source URL's page pair id in the project (one per URL; never in the annotator queue), made if missing."""
    titles = {url: url[:500] if url else NO_SOURCE_TITLE for url in urls}
    found = dict(
        PagePair.objects.filter(project=project, local_title__in=set(titles.values())).values_list("local_title", "pk")
    )
    missing = {title: url for url, title in titles.items() if title not in found}
    created = PagePair.objects.bulk_create(
        [
            PagePair(
                project=project,
                local_title=title,
                standard_title=domain_of(url) if url else "",
                local_url=url[:1000],
                local_lead="",
                standard_lead="",
                source=PagePair.Source.API,
                status=PagePair.Status.SUBMITTED,
                submitted_at=now,
            )
            for title, url in missing.items()
        ]
    )
    found |= {pair.local_title: pair.pk for pair in created}  # PostgreSQL returns the new ids
    return {url: found[title] for url, title in titles.items()}


def _not_imported_before(project: Project, pairs: list[CollectedPair]) -> tuple[list[CollectedPair], dict[str, int]]:
    """The pairs this project has not imported yet, and how many were, by what recognised them.

    A pair was imported before when an item of the project (live, merged or removed) has its source id
    (`data_id`) and question, or its question and answer (normalised): re-importing a file, or a file that
    repeats part of an earlier one, adds only what is new.
    """
    by_id: set[tuple[str, str]] = set()
    by_content: set[tuple[str, str]] = set()
    rows = ValidationItem.objects.filter(project=project).values_list(
        "data_id", "normalised_question", "original_answer"
    )
    for data_id, question, answer in rows.iterator(chunk_size=5000):
        if data_id:
            by_id.add((data_id, question))
        by_content.add((question, normalise(answer)))
    fresh: list[CollectedPair] = []
    again = {"source_id": 0, "content": 0}
    for pair in pairs:
        question = normalise(pair.question)
        if pair.data_id and (pair.data_id, question) in by_id:
            again["source_id"] += 1
        elif (question, normalise(pair.answer)) in by_content:
            again["content"] += 1
        else:
            fresh.append(pair)
    return fresh, {key: n for key, n in again.items() if n}


def validation_items_import(
    *,
    project: Project,
    source: ImportSource | None = None,
    sources: Sequence[ImportSource] = (),
    fmt: str = "auto",
    user: User | None,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """Import collected QA pairs from one or more files, all or nothing; each opens N validation slots.

    Duplicates (exact or near, among the files and the project's pairs) are
    imported and marked `duplicate_of` the first one, to be merged by a
    coordinator — never dropped. Pages and the API queue this as an import job
    (`annotation.ingest.import_job_create`); a worker runs it through `UPLOAD_IMPORTER`.
    `progress(bytes_done, records)` is told how far it got: reading is the first
    40% of the bytes, the duplicate search the next 40%, writing the rest.
    """
    if project.kind != Project.Kind.VALIDATION:
        raise InvalidState("Only a validation project imports collected QA pairs.", field="project")
    files = [*([source] if source is not None else []), *sources]
    report = ImportReport(dry_run=dry_run)
    total = sum(file.size() for file in files) or 1
    tell = progress or (lambda done, records: None)
    pairs: list[CollectedPair] = []
    read = 0
    for file in files:
        report.files.append({"name": file.name, "format": fmt, "size": file.size()})
        pairs += read_collected_pairs(file, fmt=fmt, default_language=project.standard_language, report=report)
        read += file.size()
        tell(int(0.4 * read), len(pairs))
    if not files:
        report.add_problem(None, None, "choose a file to import")
    if not report.ok:
        report.reset_counts()
        return report
    collected_pairs_store(
        project=project,
        pairs=pairs,
        user=user,
        report=report,
        dry_run=dry_run,
        progress=lambda done: tell(int(total * (0.4 + 0.4 * done / max(len(pairs), 1))), len(pairs)),
    )
    if dry_run:
        return report
    tell(total, len(pairs))
    return report


def collected_pairs_store(
    *,
    project: Project,
    pairs: list[CollectedPair],
    user: User | None,
    report: ImportReport,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> list[ValidationItem]:
    """Add collected QA pairs to a validation project (an import file's, a search collection's): what was
    imported before is left out, exact and near duplicates are added marked `duplicate_of` the first one, and
    each new item opens its validation slots. Counts go into `report`; the new items are returned.
    `progress(n)` is called every thousand pairs of the duplicate search.
    """
    pairs, again = _not_imported_before(project, pairs)
    settings = validation_settings(project)
    # The project's live pairs that repeat nothing: the new ones are compared with these, and these are not
    # searched again (they were when they came in), so an import costs new × (kept + new), not (all)².
    existing = list(
        ValidationItem.objects.filter(project=project, item__deleted_at__isnull=True, duplicate_of__isnull=True)
        .order_by("id")
        .values_list("id", "item__question")
    )
    duplicates = find_duplicates(
        [pair.question for pair in pairs],
        earlier=[question for _, question in existing],
        threshold=settings.duplicate_threshold,
        progress=progress,
    )
    offset = len(existing)
    duplicate_of = {d.index - offset: d.of for d in duplicates if d.index >= offset}
    report.counts = {"qa_pairs": {"imported": len(pairs)}, "duplicates": {}, "imported_before": again}
    report.already_present = sum(again.values())
    if report.already_present:
        n = report.already_present
        report.add_warning(
            None,
            f"{n} row{'s' if n != 1 else ''} imported before (the same data_id and question, or the same question "
            "and answer) left out: nothing is imported twice.",
        )
    exact = sum(1 for d in duplicates if d.index >= offset and d.exact)
    near = len(duplicate_of) - exact
    if exact:
        report.counts["duplicates"]["exact"] = exact
    if near:
        report.counts["duplicates"]["near"] = near
    report.created = len(pairs)
    if dry_run:
        return []
    now = timezone.now()
    with transaction.atomic():
        pages = _source_pairs(project, [pair.source_urls[0] if pair.source_urls else "" for pair in pairs], now)
        items = QAItem.objects.bulk_create(
            QAItem(
                project=project,
                pair_id=pages[pair.source_urls[0] if pair.source_urls else ""],
                author=None,
                question=pair.question,
                answer_standard=pair.answer,
                status=QAItem.Status.SUBMITTED,
                submitted_at=now,
                created_at=now,
            )
            for pair in pairs
        )
        QAItemRevision.objects.bulk_create(
            QAItemRevision(
                item=item,
                number=1,
                question=pair.question,
                answer_standard=pair.answer,
                author=None,
                reason=QAItemRevision.Reason.IMPORTED,
                created_at=now,
            )
            for item, pair in zip(items, pairs, strict=True)
        )
        created = ValidationItem.objects.bulk_create(
            ValidationItem(
                item=item,
                project=project,
                data_id=pair.data_id,
                topic=pair.topic,
                input_query=pair.input_query,
                question_type=pair.question_type,
                location=pair.location,
                language=pair.language,
                source_urls=pair.source_urls,
                domain=pair.domain,
                original_answer=pair.answer,
                alternative_answer=pair.alternative_answer,
                normalised_question=normalise(pair.question),
                metadata=pair.metadata,
                created_at=now,
            )
            for item, pair in zip(items, pairs, strict=True)
        )
        marked = []
        for index, of in duplicate_of.items():
            if of < 0:
                continue  # repeats nothing this function can point at
            created[index].duplicate_of_id = existing[of][0] if of < offset else created[of - offset].pk
            marked.append(created[index])
        ValidationItem.objects.bulk_update(marked, ["duplicate_of"])
        lifecycle.items_route(items=items, actor=user)
    return created


SEEDS = "seeds"  # the import-job "formats" of the two lists a validation project imports besides QA pairs


DOMAINS = "domains"


@dataclass
class ListImportReport(ImportReport):
    """An import job's report for a seed-query template file or a judged-domain list."""

    list_kind: str = ""
    seeds: dict[str, Any] | None = None

    def summary(self) -> str:
        if not self.ok:
            return super().summary()
        if self.seeds is not None:
            text = (
                f"{self.seeds['added']} seed queries added; {self.seeds['exact_duplicates']} exact and "
                f"{self.seeds['near_duplicates']} near duplicates left out."
            )
            if self.seeds.get("missing_forms_total"):
                text += f" {self.seeds['missing_forms_total']} left out: the location lacks a word form they need."
            if self.seeds.get("other_script_total"):
                text += f" {self.seeds['other_script_total']} left out: template and location in different scripts."
            return text
        return f"{self.created} domains labelled from the list; {self.already_present} already labelled kept theirs."

    def as_dict(self) -> dict[str, Any]:
        return super().as_dict() | {"list_kind": self.list_kind, "seeds": self.seeds}


def seed_queries_import_start(
    *, project: Project, user: User | None, upload: UploadedFile, locations: Sequence[str]
) -> ImportJob:
    """Queue the expansion of a template file for the locations (checked now, so a bad list fails at once)."""
    cleaned = check_locations(locations)
    return ingest.import_job_create(
        project=project, user=user, files=[upload], format=SEEDS, options={"locations": cleaned}
    )


def source_domains_import_start(*, project: Project, user: User | None, upload: UploadedFile) -> ImportJob:
    return ingest.import_job_create(project=project, user=user, files=[upload], format=DOMAINS)


def _import_job_run(*, job: ImportJob, sources: list[ImportSource], progress: ProgressCallback) -> ImportReport:
    """A validation project's import job: QA pairs (tsv, csv, jsonl, auto), seed-query templates or domains."""
    if job.format == SEEDS:
        report, seeds = seed_queries_import(
            project=job.project,
            source=sources[0],
            locations=job.options.get("locations") or [],
            user=job.created_by,
            progress=progress,
        )
        return ListImportReport(**vars(report), list_kind=SEEDS, seeds=seeds.as_dict() if seeds else None)
    if job.format == DOMAINS:
        report = source_domains_import(project=job.project, source=sources[0], user=job.created_by)
        progress(sources[0].size(), report.lines)
        return ListImportReport(**vars(report), list_kind=DOMAINS)
    return validation_items_import(
        project=job.project,
        sources=sources,
        fmt=job.format,
        user=job.created_by,
        dry_run=job.dry_run,
        progress=progress,
    )


UPLOAD_IMPORTER = UploadImporter(
    (*ITEM_FORMATS, SEEDS, DOMAINS), ".tsv, .csv or .jsonl", detect_item_format, _import_job_run
)


def validation_import_jobs(project: Project) -> QuerySet[ImportJob]:
    """The project's import jobs, newest first (the page lists the latest)."""
    return ImportJob.objects.filter(project=project).select_related("created_by").order_by("-created_at", "-id")
