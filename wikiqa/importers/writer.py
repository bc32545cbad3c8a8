"""Writing checked pair records in batches: pairs, screenings, items, spans, release rows, review outcomes."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, models, reset_queries, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from annotation.importers.report import ImportReport, Problems
from annotation.importers.sources import ImportSource, ProgressCallback
from annotation.lifecycle import item_event, item_events_record, items_route, review_begun, review_rounds_close
from annotation.models import EvidenceSpan, PagePair, Project, QAItem, QAItemRevision, Screening, SourceFile, SourceRow
from annotation.wilova import PairRecord
from wikiqa.importers.checks import OPTIONAL_TEXT

BATCH_ROWS = 1000
BATCH_CHARS = 8_000_000  # flush earlier when pairs carry long full texts, so memory stays flat


class Writer:
    """Collects records and writes them in batches (or, for a dry run, only counts them)."""

    def __init__(self, *, project: Project, report: ImportReport, write: bool, progress: ProgressCallback | None):
        self.project, self.report, self.write, self.progress = project, report, write, progress
        self.batch: list[PairRecord] = []
        self.batch_chars = 0
        self.seen = TitlesSeen()
        self.file_names: list[str | None] = []
        self.total_bytes = 0
        self.source_files: dict[str, SourceFile | None] = {}
        self.quality_file: str | None = None  # the name of a WiLoVa _QualityMeta file in this import

    def bytes_read(self, n: int) -> None:
        self.total_bytes += n

    def check_title(self, record: PairRecord, where: int | str, problem: Problems) -> bool:
        title = record.values["local_title"]
        if not self.file_names or self.file_names[-1] != problem.file:
            self.file_names.append(problem.file)
        first = self.seen.first(title, where, len(self.file_names) - 1)
        if first is not None:
            place, file_index = first
            spot = f"line {place}" if isinstance(place, int) else f"record {place!r}"
            name = self.file_names[file_index]
            problem("local_title", f"{title!r} is already on {spot}{f' of {name}' if name else ''} of this import")
            return False
        return True

    def close(self) -> None:
        self.seen.close()

    def add(self, record: PairRecord) -> None:
        if not self.report.ok:
            return  # the import is refused anyway; keep validating, stop touching the database
        self.batch.append(record)
        values = record.values
        self.batch_chars += sum(len(values[name]) for name in ("local_lead", "standard_lead", *OPTIONAL_TEXT))
        if len(self.batch) >= BATCH_ROWS or self.batch_chars >= BATCH_CHARS:
            self.flush()

    def file_done(self) -> None:
        if self.progress is not None:
            self.progress(self.total_bytes, self.report.lines)

    def source_file(self, item: ImportSource, data: bytes, rows: dict[str, Any], role: str) -> SourceFile | None:
        """The SourceFile row for a release file, or None if this very file was imported before."""
        digest = hashlib.sha256(data).hexdigest()
        existing = SourceFile.objects.filter(project=self.project, name=item.name).first()
        if existing is not None:
            if existing.sha256 != digest:
                self.report.add_problem(
                    None,
                    None,
                    "a different file with this name was imported into the project before; "
                    "localqa keeps the first one to write it back unchanged",
                    file=item.name,
                )
            return None
        formatting = _detect_json_formatting(data, rows)
        source_file = SourceFile(
            project=self.project,
            format="wilova",
            name=item.name,
            role=role,
            position=0 if role == "base" else 1,
            sha256=digest,
            size=len(data),
            formatting=formatting or {"indent": 4, "ensure_ascii": False, "trailing_newline": False},
            reproducible=formatting is not None,
        )
        if self.write:
            source_file.save()
        return source_file

    def flush(self) -> None:
        batch, self.batch, self.batch_chars = self.batch, [], 0
        if self.progress is not None:
            self.progress(self.total_bytes, self.report.lines)
        if not batch or not self.report.ok:
            return
        titles = [record.values["local_title"] for record in batch]
        present = dict(  # a deleted pair keeps its title: importing it again leaves it deleted (restore it instead)
            PagePair.all_objects.filter(project=self.project, local_title__in=titles).values_list("local_title", "id")
        )
        new = [record for record in batch if record.values["local_title"] not in present]
        self.report.already_present += len(batch) - len(new)
        self.report.created += len(new)
        for record in new:
            for decision, _note in record.screenings:
                self.report.count("screenings", decision)
            for item in record.items:
                self.report.count("items", item.kind)
                self.report.count("item_statuses", item.status)
                for span in item.spans:
                    self.report.count("spans", f"{span['document']} {span['match']}")
        for record in batch:
            for row in record.source_rows:
                if self.source_files.get(row["file"]) is not None:
                    self.report.count("source_rows", f"{row['file']} file rows")
        if self.source_files.get("quality") is not None:
            # A review file imported after its base: its outcomes go to the items the base import made.
            reviewed = [
                record
                for record in batch
                if record.values["local_title"] in present
                and any(row["file"] == "quality" for row in record.source_rows)
            ]
            if reviewed:
                self._apply_reviews(reviewed, present)
        if self.write:
            self._insert(new, batch, present)
        if settings.DEBUG and not connection.force_debug_cursor:
            # With DEBUG on Django keeps every SQL statement, inserted texts included: memory would grow with the file.
            reset_queries()

    def _insert(self, new: list[PairRecord], batch: list[PairRecord], present: dict[str, int]) -> None:
        now = timezone.now()
        plain = not any(record.items or record.screenings or record.source_rows for record in new)
        copy = bool(new) and plain and COPY_PAIRS and connection.vendor == "postgresql"
        # COPY writes rows straight from the records; model instances only for bulk_create (a third of the CPU).
        pairs = [] if copy else [PagePair(project=self.project, created_at=now, **record.values) for record in new]
        try:
            with transaction.atomic():
                if copy:
                    _copy_pairs(self.project, new, now)
                else:
                    PagePair.objects.bulk_create(pairs)
        except IntegrityError:
            self.report.add_problem(
                None, "local_title", "another import added some of these pairs at the same time; run this import again"
            )
            return
        if copy:
            return  # plain pairs: no screenings, items or source rows refer to them
        screenings, items, item_records = [], [], []
        for pair, record in zip(pairs, new, strict=True):
            for decision, note in record.screenings:
                screenings.append(
                    Screening(project=self.project, pair=pair, decision=decision, note=note, created_at=now)
                )
            for item in record.items:
                items.append(
                    QAItem(
                        project=self.project,
                        pair=pair,
                        kind=item.kind,
                        question=item.question,
                        answer_standard=item.answer_standard,
                        answer_local=item.answer_local,
                        status=item.status,
                        metadata=item.metadata,
                        version=len(item.revisions) or 1,
                        created_at=now,
                        submitted_at=now if item.status != QAItem.Status.DRAFT else None,
                    )
                )
                item_records.append(item)
        Screening.objects.bulk_create(screenings)
        QAItem.objects.bulk_create(items)
        spans, revisions = [], []
        for qa_item, item_record in zip(items, item_records, strict=True):
            for position, span in enumerate(item_record.spans):
                spans.append(EvidenceSpan(item=qa_item, position=position, **span))
            for number, revision in enumerate(item_record.revisions, start=1):
                revisions.append(QAItemRevision(item=qa_item, number=number, created_at=now, **revision))
        EvidenceSpan.objects.bulk_create(spans)
        QAItemRevision.objects.bulk_create(revisions)
        # Items that come in review open their review round, as if submitted here.
        items_route(items=[item for item in items if item.status == QAItem.Status.SUBMITTED], actor=None)
        pair_ids = {pair.local_title: pair.pk for pair in pairs} | present
        rows = [
            SourceRow(
                source_file=source_file,
                position=row["position"],
                key=row["key"],
                pair_id=pair_ids.get(record.values["local_title"]),
                raw=row["raw"],
                projection=row["projection"],
            )
            for record in batch
            for row in record.source_rows
            if (source_file := self.source_files.get(row["file"])) is not None
        ]
        SourceRow.objects.bulk_create(rows)

    def _apply_reviews(self, records: list[PairRecord], present: dict[str, int]) -> None:
        """Give the items of pairs already in the project the review outcomes of this import's _QualityMeta rows.

        Only an item still as its base import left it (in review, first version, no review begun) takes the
        file's outcome; any other is reported and left alone: what was done in localqa since is not overwritten.
        """
        pair_ids = [present[record.values["local_title"]] for record in records]
        existing: dict[tuple[int, int], QAItem] = {}
        for item in QAItem.objects.alive().filter(pair_id__in=pair_ids).only(*REVIEW_FIELDS):
            slot = (item.metadata or {}).get("wilova", {}).get("slot")
            if slot is not None:
                existing[(item.pair_id, slot)] = item
        begun = review_begun(items=QAItem.objects.filter(pair_id__in=pair_ids))
        pairs = PagePair.all_objects.in_bulk(pair_ids) if self.write else {}
        now = timezone.now()
        changed, revisions, events = [], [], []
        for record, pair_id in zip(records, pair_ids, strict=True):
            key = record.values["metadata"]["wilova"]["key"]

            def warn(field_name: str, message: str, key: str = key) -> None:
                self.report.add_warning(field_name, message, file=self.quality_file, record=key)

            for outcome in record.items:
                slot = outcome.metadata["wilova"]["slot"]
                if outcome.status == QAItem.Status.SUBMITTED:
                    continue  # the file gives no outcome for this slot
                current = existing.get((pair_id, slot))
                field_name = f"Question{slot}_qualitychecked"
                if current is None:
                    warn(field_name, f"a review outcome for slot {slot}, but the pair has no item there; not applied")
                    continue
                original = outcome.revisions[0]
                if (
                    current.status != QAItem.Status.SUBMITTED
                    or current.version != 1
                    or current.pk in begun
                    or (current.question, current.answer_standard)
                    != (original["question"], original["answer_standard"])
                ):
                    warn(
                        field_name,
                        f"the item in slot {slot} changed in localqa since its base import "
                        f"({current.get_status_display().lower()}); the file's outcome was not applied",
                    )
                    continue
                self.report.count("review_outcomes", outcome.status)
                if not self.write:
                    continue
                current.status, current.question = outcome.status, outcome.question
                current.answer_standard, current.version = outcome.answer_standard, len(outcome.revisions)
                slot_metadata = {**current.metadata.get("wilova", {}), **outcome.metadata["wilova"]}
                current.metadata = {**current.metadata, "wilova": slot_metadata}
                current.updated_at = now
                changed.append(current)
                for number, revision in enumerate(outcome.revisions[1:], start=2):
                    revisions.append(QAItemRevision(item=current, number=number, created_at=now, **revision))
                events.append(
                    item_event(
                        item=current,
                        actor=None,
                        action=outcome.status,
                        before=QAItem.Status.SUBMITTED,
                        after=outcome.status,
                        revision_number=current.version,
                        note=f"review outcome imported from {self.quality_file}",
                    )
                )
            pair = pairs.get(pair_id)
            if pair is not None:
                imported = record.values["metadata"]["wilova"]
                known = (pair.metadata or {}).get("wilova", {})
                added = {name: value for name, value in imported.items() if name not in known}
                if added:
                    pair.metadata = {**pair.metadata, "wilova": {**known, **added}}
                    pair.save(update_fields=["metadata"])
        if changed:
            QAItem.objects.bulk_update(changed, [*REVIEW_FIELDS[2:], "updated_at"])
            QAItemRevision.objects.bulk_create(revisions)
            item_events_record(events)
            review_rounds_close(items=changed)


class TitlesSeen:
    """Each local title of an import and where it was first seen, to name the first when a title comes again.

    Kept in a private temporary SQLite database, not a dict: past its page cache (about 2 MB) SQLite moves it to a
    temporary file, so the import's memory stays flat with the file's length (a dict held about 240 bytes per
    pair until the end). Titles are compared exactly, as in the dict; one costs about 3 µs (in a dict 1.5).
    """

    def __init__(self) -> None:
        self.db = sqlite3.connect("", isolation_level=None)  # "": deleted when closed
        # `place` has no type, so it gives back what it was given: a line number as int, a record's key as bytes.
        self.db.execute("CREATE TABLE seen (title BLOB PRIMARY KEY, place, file INTEGER) WITHOUT ROWID")
        self.db.execute("BEGIN")  # one transaction, never committed: no commit per title

    def first(self, title: str, place: int | str, file_index: int) -> tuple[int | str, int] | None:
        """Where `title` was first seen (a line number or a record's key, and the file's index in the import);
        None, after noting this place, if it is new."""
        # Stored as bytes: a title or key may hold a lone surrogate (its row's checks name it), which text refuses.
        key = title.encode("utf-8", "surrogatepass")
        stored = place.encode("utf-8", "surrogatepass") if isinstance(place, str) else place
        if self.db.execute("INSERT OR IGNORE INTO seen VALUES (?, ?, ?)", (key, stored, file_index)).rowcount:
            return None
        found, file = self.db.execute("SELECT place, file FROM seen WHERE title = ?", (key,)).fetchone()
        return (found.decode("utf-8", "surrogatepass") if isinstance(found, bytes) else found), file

    def close(self) -> None:
        self.db.close()


REVIEW_FIELDS = ("id", "pair_id", "status", "version", "question", "answer_standard", "metadata")  # id, pair first
COPY_PAIRS = True  # PostgreSQL COPY for batches of plain pairs: about twice as fast as a multi-row INSERT


def _copy_pairs(project: Project, records: list[PairRecord], now: Any) -> None:
    """Insert pairs with COPY … FROM STDIN (psycopg 3). Their ids stay unknown: only for pairs nothing refers to.

    Rows are built from the records' values and the fields' defaults directly, without model instances.
    """
    # The table's columns (every concrete field but the id), in the model's order.
    fields = [
        field
        for field in PagePair._meta.get_fields()
        if isinstance(field, models.Field) and field.concrete and not field.many_to_many and not field.primary_key
    ]
    defaults: dict[str, Any] = {}
    for model_field in fields:
        if model_field.attname == "project_id":
            defaults["project_id"] = project.pk
        elif model_field.attname in {"created_at", "updated_at"}:
            defaults[model_field.attname] = now
        else:
            defaults[model_field.attname] = model_field.get_default()
    names = [model_field.attname for model_field in fields]
    # Every concrete field has a column; the stubs type `column` as optional for all fields.
    columns = ", ".join(connection.ops.quote_name(column) for model_field in fields if (column := model_field.column))
    table = connection.ops.quote_name(PagePair._meta.db_table)
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
    ):
        for record in records:
            row = defaults | record.values
            row["metadata"] = Jsonb(row["metadata"])
            copy.write_row([row[name] for name in names])


def _detect_json_formatting(data: bytes, rows: Any) -> dict[str, Any] | None:
    """The json.dumps arguments that reproduce the file byte for byte, if any of the usual ones do."""
    for indent in (4, 2, None, "\t", 1, 3, 8):
        for ensure_ascii in (False, True):
            try:
                encoded = json.dumps(rows, indent=indent, ensure_ascii=ensure_ascii).encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: only \u escapes write it; its row says what is wrong
                continue
            for trailing_newline in (False, True):
                if encoded + (b"\n" if trailing_newline else b"") == data:
                    return {"indent": indent, "ensure_ascii": ensure_ascii, "trailing_newline": trailing_newline}
    return None
