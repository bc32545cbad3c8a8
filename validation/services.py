"""Business rules of validation projects. Views, the API and tests call these functions.

Reused, not copied: projects, members and roles (`annotation.services`), QA
items and their revisions (`annotation.models.QAItem`/`QAItemRevision`), the
review queue with N blind slots per item (`annotation.lifecycle.items_route`,
`review_claim_next`, `review_release`), the answer diff (`review.history.text_diff`),
the agreement statistics (`review.agreement.agreement_summary`) and the import
report (`annotation.importers.report.ImportReport`).
"""

from __future__ import annotations

import io
import random
import statistics as stats
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.db.models import F, OuterRef, Subquery
from django.utils import timezone

from annotation import ingest, lifecycle
from annotation import services as annotation_services
from annotation.importers.report import ImportReport
from annotation.importers.sources import ImportSource, ProgressCallback
from annotation.ingest import UploadImporter
from annotation.languages import UnknownLanguage, get_language
from annotation.lifecycle import MAX_TEXT_FIELD
from annotation.models import ImportJob, ItemEvent, PagePair, Project, QAItem, QAItemRevision
from annotation.services import qa_item_revision_create
from audit import services as audit
from audit.models import Action
from common.csv_safety import csv_writer
from common.errors import InvalidInput, InvalidState, StaleEdit
from review import history as review_history
from review import queue as review_queue
from review import routing as review_routing
from review.agreement import agreement_summary
from review.models import ReviewSlot
from validation.agreement import build_scopes
from validation.importers import (
    ITEM_FORMATS,
    CollectedPair,
    detect_item_format,
    read_collected_pairs,
    read_domain_rows,
    read_seed_rows,
)
from validation.models import (
    QUESTION_BAD_REASONS,
    DomainLabel,
    FinalAnswerChoice,
    SeedQuery,
    SourceDomain,
    Task,
    ValidationItem,
    ValidationJudgment,
    ValidationSettings,
)
from validation.text import domain_of, find_duplicates, normalise

LOCATION_PLACEHOLDER = "[LOCATION]"
NO_SOURCE_TITLE = "(no source URL)"
MAX_LOCATIONS = 50


# Projects and settings


def validation_settings(project: Project) -> ValidationSettings:
    settings, _ = ValidationSettings.objects.get_or_create(project=project)
    return settings


def validation_project_create(
    *,
    name: str,
    slug: str | None = None,
    language: str,
    location: str = "",
    validators_per_item: int = 1,
    created_by: AbstractBaseUser | None = None,
) -> Project:
    """A project of kind `validation`: one language (question and answer), N validators per item."""
    with transaction.atomic():
        project = annotation_services.project_create(
            name=name,
            slug=slug,
            local_language=language,
            standard_language=language,
            created_by=created_by,
            reviewers_per_item=validators_per_item,
        )
        Project.objects.filter(pk=project.pk).update(kind=Project.Kind.VALIDATION, review_criteria=[])
        ValidationSettings.objects.create(project=project, location=location.strip()[:200])
    project.refresh_from_db()
    return project


def _check_criteria(value: Any) -> list[dict[str, str]]:
    if not isinstance(value, list):
        raise InvalidInput("likert_criteria: must be a list of {key, label, rubric}.", field="likert_criteria")
    checked: list[dict[str, str]] = []
    keys: set[str] = set()
    for index, raw in enumerate(value):
        where = f"likert_criteria[{index}]"
        if not isinstance(raw, Mapping):
            raise InvalidInput(f"{where}: must be an object with key, label and rubric.", field=where)
        key = str(raw.get("key") or "").strip()
        label = str(raw.get("label") or "").strip()
        rubric = str(raw.get("rubric") or "").strip()
        if not key.isidentifier() or len(key) > 40:
            raise InvalidInput(f"{where}.key: letters, digits and _ only (at most 40).", field=f"{where}.key")
        if key in keys:
            raise InvalidInput(f"{where}.key: {key!r} is used twice.", field=f"{where}.key")
        if not label or len(label) > 100:
            raise InvalidInput(f"{where}.label: must be 1 to 100 characters.", field=f"{where}.label")
        if len(rubric) > 2000:
            raise InvalidInput(f"{where}.rubric: at most 2000 characters.", field=f"{where}.rubric")
        keys.add(key)
        checked.append({"key": key, "label": label, "rubric": rubric})
    return checked


def validation_settings_update(
    *,
    project: Project,
    version: int | None = None,
    tasks: Sequence[str] | None = None,
    location: str | None = None,
    likert_criteria: Any = None,
    duplicate_threshold: int | None = None,
    validators_per_item: int | None = None,
    user: AbstractBaseUser | None = None,
) -> ValidationSettings:
    """Change what validators are asked; `version` refuses the save if someone saved in between."""
    settings = validation_settings(project)
    changes: dict[str, Any] = {}
    if tasks is not None:
        unknown = sorted(set(tasks) - set(Task.values))
        if unknown:
            raise InvalidInput(f"tasks: unknown task {unknown[0]!r}; use {', '.join(Task.values)}.", field="tasks")
        if not tasks:
            raise InvalidInput("tasks: turn at least one validation task on.", field="tasks")
        changes["tasks"] = [task for task in Task.values if task in set(tasks)]
    if location is not None:
        if len(location) > 200:
            raise InvalidInput("location: at most 200 characters.", field="location")
        changes["location"] = location.strip()
    if likert_criteria is not None:
        changes["likert_criteria"] = _check_criteria(likert_criteria)
    if duplicate_threshold is not None:
        if not 50 <= duplicate_threshold <= 100:
            raise InvalidInput("duplicate_threshold: between 50 and 100.", field="duplicate_threshold")
        changes["duplicate_threshold"] = duplicate_threshold
    with transaction.atomic():
        if validators_per_item is not None:
            annotation_services.project_update(project=project, reviewers_per_item=validators_per_item)
        query = ValidationSettings.objects.filter(pk=settings.pk)
        if version is not None:
            query = query.filter(version=version)
        if not query.update(**changes, version=F("version") + 1, updated_at=timezone.now()):
            settings.refresh_from_db()
            raise StaleEdit("The validation settings were changed by someone else; reload them.", current=settings)
        if changes:
            audit.record(user, Action.PROJECT_SETTINGS, project, validation=changes)
    settings.refresh_from_db()
    return settings


# Seed queries


@dataclass
class SeedReport:
    added: int = 0
    exact_duplicates: int = 0
    near_duplicates: int = 0
    removed: list[dict[str, Any]] | None = None  # [{query, location, repeats, exact, score}], first 200

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "exact_duplicates": self.exact_duplicates,
            "near_duplicates": self.near_duplicates,
            "removed": self.removed or [],
        }


def expand_templates(templates: Iterable[tuple[str, str]], locations: Sequence[str]) -> list[tuple[str, str, str, str]]:
    """(topic, query, location, template) for every template and location; a template without the placeholder once."""
    rows: list[tuple[str, str, str, str]] = []
    for topic, template in templates:
        if LOCATION_PLACEHOLDER in template:
            rows += [(topic, template.replace(LOCATION_PLACEHOLDER, loc), loc, template) for loc in locations]
        else:
            rows += [(topic, template, loc, template) for loc in locations]
    return rows


def seed_queries_add(
    *,
    project: Project,
    rows: Sequence[tuple[str, str, str, str]],
    user: AbstractBaseUser | None,
    progress: Callable[[int], None] | None = None,
) -> SeedReport:
    """Store (topic, query, location, template) rows without exact or near-duplicates (within a location)."""
    threshold = validation_settings(project).duplicate_threshold
    stored: dict[str, list[str]] = defaultdict(list)
    for location, text in SeedQuery.objects.filter(project=project).values_list("location", "normalised"):
        stored[location].append(text)
    duplicates = find_duplicates(
        [row[1] for row in rows], groups=[row[2] for row in rows], threshold=threshold, stored=stored, progress=progress
    )
    dropped = {duplicate.index: duplicate for duplicate in duplicates}
    now = timezone.now()
    new = [
        SeedQuery(
            project=project,
            topic=topic,
            query=query,
            location=location,
            template=template,
            normalised=normalise(query),
            created_by=user,
            created_at=now,
        )
        for index, (topic, query, location, template) in enumerate(rows)
        if index not in dropped
    ]
    # Two locations can expand a place-less template to the same text: one row per project and text.
    new = list({seed.normalised: seed for seed in reversed(new)}.values())[::-1]
    collapsed = len(rows) - len(dropped) - len(new)
    with transaction.atomic():
        SeedQuery.objects.bulk_create(new)
    report = SeedReport(
        added=len(new),
        exact_duplicates=sum(d.exact for d in duplicates) + collapsed,
        near_duplicates=sum(not d.exact for d in duplicates),
        removed=[
            {
                "query": rows[d.index][1],
                "location": rows[d.index][2],
                "repeats": rows[d.of][1] if d.of >= 0 else "(already stored)",
                "exact": d.exact,
                "score": round(d.score, 1),
            }
            for d in duplicates[:200]
        ],
    )
    return report


def _check_locations(locations: Sequence[str]) -> list[str]:
    cleaned = list(dict.fromkeys(loc.strip() for loc in locations if loc.strip()))
    if not cleaned:
        raise InvalidInput("locations: give at least one location.", field="locations")
    if len(cleaned) > MAX_LOCATIONS or any(len(loc) > 200 for loc in cleaned):
        raise InvalidInput(f"locations: at most {MAX_LOCATIONS}, each at most 200 characters.", field="locations")
    return cleaned


def seed_queries_import(
    *,
    project: Project,
    source: ImportSource,
    locations: Sequence[str],
    user: AbstractBaseUser | None,
    progress: ProgressCallback | None = None,
) -> tuple[ImportReport, SeedReport | None]:
    """Read `topic,query` rows (templates with [LOCATION], or plain queries) and add them for each location.

    Pages and the API queue this as an import job (`seed_queries_import_start`): expanded for many
    locations it is tens of thousands of queries. `progress(bytes_done, queries)` as in the QA pair import.
    """
    cleaned = _check_locations(locations)
    report = ImportReport()
    rows = read_seed_rows(source, report)
    if not report.ok:
        return report, None
    expanded = expand_templates(rows, cleaned)
    size = source.size()
    tell = progress or (lambda done, records: None)
    tell(int(0.2 * size), len(expanded))
    seeds = seed_queries_add(
        project=project,
        rows=expanded,
        user=user,
        progress=lambda done: tell(int(size * (0.2 + 0.6 * done / len(expanded))), len(expanded)),
    )
    tell(size, len(expanded))
    report.created = seeds.added
    return report, seeds


def seed_query_create(
    *, project: Project, topic: str, query: str, location: str = "", user: AbstractBaseUser | None
) -> SeedReport:
    """One hand-written query (a [LOCATION] in it is filled with `location`, or the project's location)."""
    topic, query = topic.strip(), query.strip()
    if not topic or len(topic) > 100:
        raise InvalidInput("topic: 1 to 100 characters.", field="topic")
    if not query or len(query) > MAX_TEXT_FIELD:
        raise InvalidInput(f"query: 1 to {MAX_TEXT_FIELD} characters.", field="query")
    location = location.strip() or validation_settings(project).location
    if LOCATION_PLACEHOLDER in query and not location:
        raise InvalidInput("location: the query has [LOCATION]; say which location.", field="location")
    with transaction.atomic():
        report = seed_queries_add(project=project, rows=expand_templates([(topic, query)], [location]), user=user)
        if report.added:
            audit.record(
                user,
                Action.VALIDATION_SEED_ADDED,
                project=project,
                object_type="seed query",
                label=query,
                topic=topic,
                location=location,
            )
    return report


def seed_queries_csv(project: Project) -> bytes:
    """The seed queries as the collection tool reads them: `topic,query`, UTF-8.

    People open it too, so it goes through the formula-safe writer: a query starting with `=`, `+`, `-` or `@`
    gets a leading `'` (no search engine needs a query that a spreadsheet would run as a formula).
    """
    out = io.StringIO(newline="")
    writer = csv_writer(out, lineterminator="\n")
    writer.writerow(["topic", "query"])
    for topic, query in SeedQuery.objects.filter(project=project).order_by("id").values_list("topic", "query"):
        writer.writerow([topic, query])
    return out.getvalue().encode("utf-8")


# Source domains


def source_domain_label(
    *, project: Project, domain: str, label: str, user: AbstractBaseUser | None, origin: str
) -> SourceDomain:
    """Label a domain once per project; a second label for the same domain is refused."""
    if label not in DomainLabel.values:
        raise InvalidInput(f"label: use one of {', '.join(DomainLabel.values)}.", field="label")
    host = domain_of(domain)
    if not host:
        raise InvalidInput("domain: not a host name.", field="domain")
    try:
        with transaction.atomic():
            labelled = SourceDomain.objects.create(
                project=project, domain=host, label=label, origin=origin, labelled_by=user
            )
            audit.record(
                user, Action.VALIDATION_DOMAIN_LABELLED, labelled, project=project, reliability=label, origin=origin
            )
            return labelled
    except IntegrityError:
        current = SourceDomain.objects.get(project=project, domain=host)
        raise InvalidState(
            f"{host} is already labelled {current.get_label_display().lower()} in this project.", field="domain"
        ) from None


def source_domains_import(*, project: Project, source: ImportSource, user: AbstractBaseUser | None) -> ImportReport:
    """Import already-judged domains (`base_url,label`): unlabelled domains get the label; labelled ones keep theirs."""
    report = ImportReport()
    rows = read_domain_rows(source, report)
    if not report.ok:
        return report
    labelled = set(SourceDomain.objects.filter(project=project).values_list("domain", flat=True))
    new: dict[str, str] = {}
    for domain, label in rows:
        if domain in labelled or domain in new:
            report.already_present += 1
        else:
            new[domain] = label
    now = timezone.now()
    with transaction.atomic():
        SourceDomain.objects.bulk_create(
            [
                SourceDomain(
                    project=project,
                    domain=domain,
                    label=label,
                    origin=SourceDomain.Origin.IMPORTED,
                    labelled_by=user,
                    labelled_at=now,
                )
                for domain, label in new.items()
            ],
            ignore_conflicts=True,
        )
    report.created = len(new)
    items = ValidationItem.objects.filter(project=project, domain__in=list(new))
    report.counts = {"items_labelled": {label: 0 for label in set(new.values())}}
    for domain in items.values_list("domain", flat=True):
        report.counts["items_labelled"][new[domain]] += 1
    return report


def domain_labels(project: Project) -> dict[str, SourceDomain]:
    return {row.domain: row for row in SourceDomain.objects.filter(project=project)}


# Importing collected QA pairs


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


def validation_items_import(
    *,
    project: Project,
    source: ImportSource | None = None,
    sources: Sequence[ImportSource] = (),
    fmt: str = "auto",
    user: AbstractBaseUser | None,
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
        progress=lambda done: tell(int(total * (0.4 + 0.4 * done / len(pairs))), len(pairs)),
    )
    offset = len(existing)
    duplicate_of = {d.index - offset: d.of for d in duplicates if d.index >= offset}
    report.counts = {"qa_pairs": {"imported": len(pairs)}, "duplicates": {}}
    exact = sum(1 for d in duplicates if d.index >= offset and d.exact)
    near = len(duplicate_of) - exact
    if exact:
        report.counts["duplicates"]["exact"] = exact
    if near:
        report.counts["duplicates"]["near"] = near
    report.created = len(pairs)
    if dry_run:
        return report
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
    tell(total, len(pairs))
    return report


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
            return (
                f"{self.seeds['added']} seed queries added; {self.seeds['exact_duplicates']} exact and "
                f"{self.seeds['near_duplicates']} near duplicates left out."
            )
        return f"{self.created} domains labelled from the list; {self.already_present} already labelled kept theirs."

    def as_dict(self) -> dict[str, Any]:
        return super().as_dict() | {"list_kind": self.list_kind, "seeds": self.seeds}


def seed_queries_import_start(
    *, project: Project, user: AbstractBaseUser | None, upload: UploadedFile, locations: Sequence[str]
) -> ImportJob:
    """Queue the expansion of a template file for the locations (checked now, so a bad list fails at once)."""
    cleaned = _check_locations(locations)
    return ingest.import_job_create(
        project=project, user=user, files=[upload], format=SEEDS, options={"locations": cleaned}
    )


def source_domains_import_start(*, project: Project, user: AbstractBaseUser | None, upload: UploadedFile) -> ImportJob:
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


# How an import job of a validation project reads its files (registered with the validation kind, validation/kind.py).
UPLOAD_IMPORTER = UploadImporter(
    (*ITEM_FORMATS, SEEDS, DOMAINS), ".tsv, .csv or .jsonl", detect_item_format, _import_job_run
)


def validation_import_jobs(project: Project):  # type: ignore[no-untyped-def]
    """The project's import jobs, newest first (the page lists the latest)."""
    return ImportJob.objects.filter(project=project).select_related("created_by").order_by("-created_at", "-id")


# Duplicates


def duplicate_groups(project: Project) -> list[dict[str, Any]]:
    """Sets of live items that repeat each other, first item first: what a coordinator merges."""
    rows = (
        ValidationItem.objects.filter(project=project, item__deleted_at__isnull=True, merged_into__isnull=True)
        .select_related("item")
        .order_by("id")
    )
    by_id = {row.pk: row for row in rows}
    groups: dict[int, list[ValidationItem]] = defaultdict(list)
    for row in by_id.values():
        if row.duplicate_of_id is not None and row.duplicate_of_id in by_id:
            root = row.duplicate_of_id
            while by_id[root].duplicate_of_id in by_id:
                root = by_id[root].duplicate_of_id  # type: ignore[assignment]
            groups[root].append(row)
    return [{"keep": by_id[root], "duplicates": members} for root, members in groups.items()]


def validation_item_merge(
    *, project: Project, keep: ValidationItem, duplicate: ValidationItem, user: AbstractBaseUser
) -> ValidationItem:
    """Merge a duplicate into the item kept: the duplicate's item leaves every list (softly) and its slots close.

    Its source URLs are added to the kept item's; nothing is deleted.
    """
    if keep.pk == duplicate.pk:
        raise InvalidInput("An item cannot be merged into itself.", field="duplicate")
    if keep.project_id != project.pk or duplicate.project_id != project.pk:
        raise InvalidInput("Both items must belong to this project.", field="duplicate")
    now = timezone.now()
    with transaction.atomic():
        if not QAItem.objects.filter(pk=duplicate.item_id, deleted_at__isnull=True).update(
            deleted_at=now, version=F("version") + 1, updated_at=now
        ):
            raise InvalidState("That item was merged or removed already.", field="duplicate")
        if QAItem.objects.filter(pk=keep.item_id, deleted_at__isnull=False).exists():
            raise InvalidState("The item to keep was merged or removed.", field="keep")
        ReviewSlot.objects.filter(item_id=duplicate.item_id, status=ReviewSlot.Status.OPEN).update(
            status=ReviewSlot.Status.CANCELLED, version=F("version") + 1
        )
        urls = list(dict.fromkeys([*keep.source_urls, *duplicate.source_urls]))
        ValidationItem.objects.filter(pk=keep.pk).update(source_urls=urls)
        ValidationItem.objects.filter(pk=duplicate.pk).update(merged_into=keep)
        item = QAItem.objects.get(pk=duplicate.item_id)
        audit.record(user, Action.VALIDATION_MERGED, item, project=project, merged_into=keep.item_id)
        lifecycle.item_event_record(
            item=item,
            actor=user,
            action=ItemEvent.Action.REJECTED,
            before=item.status,
            after=item.status,
            note=f"merged into item {keep.item_id} as a duplicate",
        )
    keep.refresh_from_db()
    return keep


# The final answer


def validation_final_answer_choose(
    *, vitem: ValidationItem, revision_number: int, user: AbstractBaseUser, note: str = ""
) -> FinalAnswerChoice:
    """Choose which revision's answer is the item's final answer (the imported one or a validator's edit).

    Recorded as a new choice (earlier choices stay); releases use the latest.
    Without any choice the final answer is the item's current answer (the latest edit).
    """
    note = note.strip()
    if len(note) > MAX_TEXT_FIELD:
        raise InvalidInput(f"note: at most {MAX_TEXT_FIELD} characters.", field="note")
    revision = QAItemRevision.objects.filter(item_id=vitem.item_id, number=revision_number).first()
    if revision is None:
        numbers = list(vitem.item.revisions.order_by("number").values_list("number", flat=True))
        raise InvalidInput(
            f"revision: item {vitem.item_id} has no revision {revision_number}; it has {numbers}.", field="revision"
        )
    with transaction.atomic():
        if not QAItem.objects.select_for_update().filter(pk=vitem.item_id, deleted_at__isnull=True).exists():
            raise InvalidState("This item was merged or removed; choose on the item kept.", field="item")
        choice = FinalAnswerChoice.objects.create(item_id=vitem.item_id, revision=revision, chosen_by=user, note=note)
        audit.record(
            user,
            Action.VALIDATION_FINAL_ANSWER,
            vitem.item,
            project=vitem.project,
            revision=revision.number,
            answer=revision.answer_standard,
            note=note,
        )
    return choice


def final_answers(item_ids: Iterable[int]) -> dict[int, FinalAnswerChoice]:
    """The latest final-answer choice of each item that has one (with its revision), in one query."""
    # A correlated subquery, not DISTINCT ON: the embedded SQLite default needs it too.
    newest = FinalAnswerChoice.objects.filter(item_id=OuterRef("item_id")).order_by("-id").values("id")[:1]
    return {
        choice.item_id: choice
        for choice in FinalAnswerChoice.objects.filter(item_id__in=list(item_ids), id=Subquery(newest)).select_related(
            "revision", "chosen_by"
        )
    }


# Validating


def validation_claim_next(*, project: Project, user: AbstractBaseUser) -> ReviewSlot | None:
    """The review app's queue: the slot the validator holds, else the oldest open one of an item they have not seen."""
    return review_queue.review_claim_next(project=project, user=user, validation=True)


def better_answer_options(slot: ReviewSlot) -> list[tuple[str, str]] | None:
    """The two answers to compare, in this validator's order (random per slot, stable on reload); None if only one.

    The second answer is the imported alternative if there is one, else the
    latest edit of the answer by another validator.
    """
    vitem: ValidationItem = slot.item.validation
    other = vitem.alternative_answer
    if not other:
        latest = (
            slot.item.revisions.exclude(answer_standard=vitem.original_answer)
            .exclude(author_id=slot.reviewer_id)  # not an edit of this validator's own (lifecycle.may_review)
            .order_by("-number")
            .values_list("answer_standard", flat=True)
            .first()
        )
        other = latest or ""
    if not other or other == vitem.original_answer:
        return None
    options = [(ValidationJudgment.Choice.ORIGINAL.value, vitem.original_answer), ("alternative", other)]
    random.Random(f"better:{slot.pk}").shuffle(options)
    return options


def _check_judgment(
    settings: ValidationSettings, slot: ReviewSlot, data: Mapping[str, Any]
) -> tuple[dict[str, Any], str | None, str | None]:
    """The judgment's fields, the edited answer (None: not edited) and a domain label to store (None: none)."""
    errors: dict[str, list[str]] = {}
    fields: dict[str, Any] = {}
    edited: str | None = None
    domain_label: str | None = None
    if settings.has(Task.QUESTION):
        verdict = data.get("question")
        if verdict not in ("good", "bad"):
            errors["question"] = ["choose good or bad"]
        else:
            fields["question_good"] = verdict == "good"
            reason = str(data.get("question_reason") or "")
            if verdict == "bad" and reason not in dict(QUESTION_BAD_REASONS):
                errors["question_reason"] = [f"say why the question is bad: {', '.join(dict(QUESTION_BAD_REASONS))}"]
            fields["question_reason"] = reason if verdict == "bad" else ""
    if settings.has(Task.LOCATION):
        relevant = data.get("location_relevant")
        if relevant not in ("yes", "no", True, False):
            errors["location_relevant"] = ["choose yes or no"]
        else:
            fields["location_relevant"] = relevant in ("yes", True)
    if settings.has(Task.ANSWER_EDIT) and data.get("answer") is not None:
        answer = str(data["answer"]).strip()
        if not answer:
            errors["answer"] = ["the answer must not be empty"]
        elif len(answer) > MAX_TEXT_FIELD:
            errors["answer"] = [f"is longer than {MAX_TEXT_FIELD} characters"]
        elif answer != slot.revision.answer_standard.strip():
            edited = answer
    if settings.has(Task.DOMAIN) and slot.item.validation.domain:
        label = data.get("domain_label") or ""
        known = SourceDomain.objects.filter(project=slot.item.project, domain=slot.item.validation.domain).exists()
        if not known:
            if label not in DomainLabel.values:
                errors["domain_label"] = [f"label the source domain: {', '.join(DomainLabel.values)}"]
            else:
                domain_label = label
    if settings.has(Task.BETTER_ANSWER):
        options = better_answer_options(slot)
        if options is not None:
            choice = str(data.get("better") or "")
            comment = str(data.get("better_comment") or "").strip()
            fields["better_order"] = [key for key, _ in options]
            if choice in ("1", "2"):
                fields["better_position"] = int(choice)
                fields["better_choice"] = options[int(choice) - 1][0]
            elif choice == "neither":
                fields["better_choice"] = ValidationJudgment.Choice.NEITHER
                if not comment:
                    errors["better_comment"] = ["say why neither answer is better"]
            else:
                errors["better"] = ["choose answer 1, answer 2 or neither"]
            if len(comment) > MAX_TEXT_FIELD:
                errors["better_comment"] = [f"is longer than {MAX_TEXT_FIELD} characters"]
            fields["better_comment"] = comment
    if settings.has(Task.LIKERT):
        raw = data.get("likert") or {}
        scores: dict[str, int] = {}
        for criterion in settings.likert_criteria:
            value = raw.get(criterion["key"]) if isinstance(raw, Mapping) else None
            try:
                score = int(value)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                score = 0
            if not 1 <= score <= 5:
                errors[f"likert.{criterion['key']}"] = ["give a score from 1 to 5"]
            else:
                scores[criterion["key"]] = score
        fields["likert"] = scores
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)
    return fields, edited, domain_label


def validation_submit(
    *, slot: ReviewSlot, user: AbstractBaseUser, version: int, data: Mapping[str, Any]
) -> ValidationJudgment:
    """Record one validator's judgment; an edited answer becomes a new revision; the last slot accepts the item."""
    item = slot.item
    project = item.project
    review_routing.require_flow(project, validation=True)
    settings = validation_settings(project)
    fields, edited, domain_label = _check_judgment(settings, slot, data)
    now = timezone.now()
    with transaction.atomic():
        locked = QAItem.objects.select_for_update().get(pk=item.pk)
        if locked.deleted_at is not None or locked.status != QAItem.Status.SUBMITTED:
            raise InvalidState("This item is no longer waiting for validation.", field="item")
        updated = ReviewSlot.objects.filter(
            pk=slot.pk, reviewer=user, status=ReviewSlot.Status.CLAIMED, version=version
        ).update(status=ReviewSlot.Status.DONE, completed_at=now, version=F("version") + 1)
        if not updated:
            current = ReviewSlot.objects.get(pk=slot.pk)
            if current.reviewer_id != user.pk:
                raise InvalidState("This item is no longer yours: your claim expired and was taken.", field="slot")
            if current.status == ReviewSlot.Status.DONE:
                raise InvalidState("You have already validated this item.", field="slot")
            raise StaleEdit("This validation changed in the meantime; reload it.", current=current)
        revision = None
        if edited is not None:
            lifecycle.qa_item_transition(
                item=locked, allowed=[QAItem.Status.SUBMITTED], changes={"answer_standard": edited}, doing="edited"
            )
            locked.answer_standard = edited
            revision = qa_item_revision_create(item=locked, author=user, reason=QAItemRevision.Reason.REVIEWER_REWRITE)
            lifecycle.item_event_record(
                item=locked,
                actor=user,
                action=ItemEvent.Action.REVIEWER_REWRITE,
                before=locked.status,
                after=locked.status,
                revision_number=revision.number,
                note="answer edited during validation",
            )
        if domain_label is not None:
            SourceDomain.objects.get_or_create(
                project=project,
                domain=item.validation.domain,
                defaults={"label": domain_label, "origin": SourceDomain.Origin.VALIDATOR, "labelled_by": user},
            )
        judgment = ValidationJudgment.objects.create(
            slot=slot, item=item, validator=user, edit_revision=revision, created_at=now, **fields
        )
        lifecycle.item_event_record(
            item=locked,
            actor=user,
            action=ItemEvent.Action.REVIEWED,
            before=locked.status,
            after=locked.status,
            note="validated",
        )
        open_slots = ReviewSlot.objects.filter(item=item).exclude(
            status__in=[ReviewSlot.Status.DONE, ReviewSlot.Status.CANCELLED]
        )
        if not open_slots.exists():
            lifecycle.qa_item_transition(
                item=locked,
                allowed=[QAItem.Status.SUBMITTED],
                to=QAItem.Status.ACCEPTED,
                event={
                    "actor": None,
                    "action": ItemEvent.Action.ACCEPTED,
                    "note": "every validator has judged the item",
                },
            )
    return judgment


# Aggregates and agreement


def _majority(values: list[Any]) -> Any:
    """The most frequent value; None on a tie or without values."""
    counts: dict[Any, int] = defaultdict(int)
    for value in values:
        if value is not None and value != "":
            counts[value] += 1
    if not counts:
        return None
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def judgments_aggregate(
    judgments: Sequence[ValidationJudgment], criteria: Sequence[Mapping[str, str]]
) -> dict[str, Any]:
    """Majority votes (None on a tie) and mean Likert scores of one item's judgments."""
    good = _majority([j.question_good for j in judgments])
    reasons = _majority([j.question_reason for j in judgments if j.question_good is False])
    likert: dict[str, Any] = {}
    for criterion in criteria:
        scores = [j.likert[criterion["key"]] for j in judgments if criterion["key"] in j.likert]
        likert[criterion["key"]] = round(stats.fmean(scores), 3) if scores else None
    return {
        "validators": len(judgments),
        "question": None if good is None else ("good" if good else "bad"),
        "question_reason": reasons,
        "location_relevant": _majority([j.location_relevant for j in judgments]),
        "better_answer": _majority([j.better_choice for j in judgments]),
        "answer_edited_by": sum(1 for j in judgments if j.edit_revision_id),
        "likert_mean": likert,
    }


def _figure(summary: dict[str, Any], name: str) -> dict[str, Any]:
    figure = summary["statistics"].get(name) or {}
    return {"value": figure.get("value"), "note": figure.get("note", ""), "n_units": figure.get("n_units")}


def _figures_by_name(scope: Any) -> dict[str, Any]:
    return {figure["name"]: figure["value"] for figure in scope.figures}


def validation_agreement(project: Project, *, judgments: Sequence[ValidationJudgment] | None = None) -> dict[str, Any]:
    """Quick agreement figures per task (no bootstrap), from the same scopes as the project's agreement report
    (`validation.agreement`): observed agreement, Gwet's AC1 and Cohen's kappa (mean over validator pairs) for
    the categorical tasks; Krippendorff's alpha (ordinal) and r*wg(j) for each Likert criterion, with its mean
    and spread; the better-answer choice's position bias.
    """
    if judgments is None:
        judgments = list(
            ValidationJudgment.objects.filter(item__project=project, item__deleted_at__isnull=True).order_by("id")
        )
    criteria = validation_settings(project).likert_criteria
    scopes = build_scopes(judgments, tasks=Task.values, criteria=criteria, rater=lambda validator: validator)
    result: dict[str, Any] = {"judgments": len(judgments), "categorical": [], "likert": [], "position_bias": None}
    for scope in scopes:
        key = scope.key.removeprefix("validation:")
        summary = (
            agreement_summary(
                scope.judgments, scope.level, categories=scope.categories, bootstrap=0, pairwise=False
            ).to_dict()
            if scope.judgments
            else None
        )
        if scope.level == "nominal":
            entry: dict[str, Any] = {"task": key, "label": scope.label, "judgments": len(scope.judgments)}
            if summary is not None:
                entry |= {
                    "observed": _figure(summary, "percent_agreement"),
                    "gwet_ac1": _figure(summary, "gwet_ac1"),
                    "cohen_kappa": _figure(summary, "cohen_kappa_mean"),
                    "units": summary["n_units"],
                    "excluded_units": summary["excluded_units"],
                }
            result["categorical"].append(entry)
            figures = _figures_by_name(scope)
            if key == "better_answer" and figures:
                result["position_bias"] = {
                    "choices": figures["choices"],
                    "left": figures["left_chosen"],
                    "left_share": figures["left_share"],
                    "p_value": figures["position_p_value"],
                }
            continue
        figures = _figures_by_name(scope)
        entry = {
            "criterion": key.removeprefix("likert:"),
            "label": scope.label.removeprefix("Likert: "),
            "judgments": len(scope.judgments),
            "mean": figures.get("mean"),
            "sd": figures.get("sd"),
        }
        if summary is not None:
            entry |= {
                "krippendorff_alpha": _figure(summary, "krippendorff_alpha"),
                "rwg_j": _figure(summary, "rwg_star_j"),
            }
        result["likert"].append(entry)
    return result


# Page helpers


def validation_items_filtered(project: Project, *, label: str = "", status: str = ""):  # type: ignore[no-untyped-def]
    """Live items with their validation data, filtered by their domain's label (or `unlabelled`) and status."""
    items = (
        ValidationItem.objects.filter(project=project, item__deleted_at__isnull=True)
        .select_related("item")
        .order_by("id")
    )
    labelled = SourceDomain.objects.filter(project=project)
    if label == "unlabelled":
        items = items.exclude(domain__in=labelled.values("domain"))
    elif label in DomainLabel.values:
        items = items.filter(domain__in=labelled.filter(label=label).values("domain"))
    if status in QAItem.Status.values:
        items = items.filter(item__status=status)
    return items


def attach_domain_labels(project: Project, vitems: Iterable[ValidationItem]) -> None:
    """Set `domain_label` on each item (its domain's label, or None) in one query."""
    vitems = list(vitems)
    labels = dict(
        SourceDomain.objects.filter(project=project, domain__in={v.domain for v in vitems}).values_list(
            "domain", "label"
        )
    )
    for vitem in vitems:
        vitem.domain_label = labels.get(vitem.domain)  # type: ignore[attr-defined]


def judgment_data_from_form(post: Any, settings: ValidationSettings) -> dict[str, Any]:
    """The plain form's fields as `validation_submit` takes them (the API sends the same shape as JSON)."""
    data: dict[str, Any] = {
        key: post.get(key)
        for key in ("question", "question_reason", "location_relevant", "domain_label", "better", "better_comment")
        if post.get(key) is not None
    }
    if post.get("answer") is not None:
        data["answer"] = post.get("answer")
    data["likert"] = {c["key"]: post.get(f"likert_{c['key']}") for c in settings.likert_criteria}
    return data


def task_context(slot: ReviewSlot, settings: ValidationSettings) -> dict[str, Any]:
    """What the validation screen shows: the imported revision (blind to other validators), sources, domain."""
    vitem: ValidationItem = slot.item.validation
    domain = SourceDomain.objects.filter(project_id=slot.item.project_id, domain=vitem.domain).first()
    options = better_answer_options(slot) if settings.has(Task.BETTER_ANSWER) else None
    return {
        "vitem": vitem,
        "question": slot.revision.question,
        "answer": slot.revision.answer_standard,
        "domain": domain,
        "better_options": options,
        "settings": settings,
        "tasks": set(settings.tasks),
        "language": vitem.language or slot.item.project.standard_language,
        "direction": _direction(vitem.language or slot.item.project.standard_language),
    }


def _direction(code: str) -> str:
    try:
        return get_language(code).direction
    except UnknownLanguage:
        return "auto"


def item_detail_context(vitem: ValidationItem) -> dict[str, Any]:
    """Revisions with the diff of each edit against the imported answer, judgments and their aggregate."""
    revisions = list(vitem.item.revisions.select_related("author").order_by("number"))
    judgments = list(vitem.item.validation_judgments.select_related("validator", "edit_revision").order_by("id"))
    criteria = validation_settings(vitem.project).likert_criteria
    final = final_answers([vitem.item_id]).get(vitem.item_id)
    return {
        "final_answer": final_answer_record(final, revisions[-1] if revisions else None),
        "revisions": [
            {
                "number": r.number,
                "reason": r.reason,
                "answer": r.answer_standard,
                "author": r.author.username if r.author else None,
                "created_at": r.created_at.isoformat(),
                "diff": review_history.text_diff(revisions[0].answer_standard, r.answer_standard),
            }
            for r in revisions
        ],
        "judgments": [judgment_record(j) for j in judgments],
        "aggregate": judgments_aggregate(judgments, criteria),
    }


def judgment_record(judgment: ValidationJudgment) -> dict[str, Any]:
    """A judgment as released and shown by the API (validators by user name only where the caller may see them)."""
    return {
        "validator": judgment.validator_id,
        "question": None if judgment.question_good is None else ("good" if judgment.question_good else "bad"),
        "question_reason": judgment.question_reason or None,
        "location_relevant": judgment.location_relevant,
        "edited_answer": judgment.edit_revision.answer_standard if judgment.edit_revision_id else None,  # type: ignore[union-attr]
        "better_order": judgment.better_order or None,
        "better_choice": judgment.better_choice or None,
        "better_position": judgment.better_position,
        "better_comment": judgment.better_comment or None,
        "likert": judgment.likert,
    }


def final_answer_record(choice: FinalAnswerChoice | None, latest: QAItemRevision | None) -> dict[str, Any]:
    """Which revision's answer is final and whether a coordinator chose it (else: the latest revision)."""
    if choice is not None:
        return {
            "revision": choice.revision.number,
            "answer": choice.revision.answer_standard,
            "chosen": True,
            "chosen_by": choice.chosen_by.username if choice.chosen_by else None,
            "chosen_at": choice.created_at.isoformat(),
            "note": choice.note,
        }
    return {
        "revision": latest.number if latest else None,
        "answer": latest.answer_standard if latest else None,
        "chosen": False,
        "chosen_by": None,
        "chosen_at": None,
        "note": "",
    }
