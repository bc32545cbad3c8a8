"""Trivia items in and out as files: CSV and JSONL imports (with undo) and exports."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping
from typing import Any

import orjson
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from annotation import lifecycle
from annotation.models import Project, QAItem, QAItemRevision
from audit import services as audit
from audit.models import Action
from common import csvfile
from common.csv_safety import csv_writer
from common.errors import InvalidInput, InvalidState
from multichoice.models import TriviaImport, TriviaItem, TriviaSettings
from multichoice.services.items import (
    MIN_CANDIDATES,
    Status,
    items_pair,
    trivia_item_clean,
    trivia_item_mc_fields,
    trivia_item_qa_fields,
    trivia_items,
)
from multichoice.services.projects import trivia_categories_check, trivia_settings

MAX_PROBLEMS = 20


def _content_key(content: Mapping[str, Any]) -> str:
    """How a record without a source id is recognised: its question and candidates."""
    return orjson.dumps([content["question"], content["candidates"]]).decode()


def _import(
    project: Project,
    records: list[tuple[str, dict[str, Any]]],
    *,
    user: User | None,
    add: bool,
    name: str,
    data: bytes,
) -> dict[str, Any]:
    """Imported items are accepted already (revision 1, reason `imported`); translated ones are done.

    A file imported before (same sha256, import not undone) imports nothing and says when it was imported;
    a record already in the project — the same source id, or without an id the same question and candidates —
    is skipped and reported. A source id twice in one file refuses the file.
    """
    digest = hashlib.sha256(data).hexdigest()
    earlier = TriviaImport.objects.filter(project=project, sha256=digest, undone_at__isnull=True).first()
    if earlier is not None:
        return {
            "created": 0,
            "categories_added": [],
            "skipped": [],
            "already_imported": {"import_id": earlier.pk, "name": earlier.name, "at": earlier.created_at.isoformat()},
            "import_id": None,
        }
    cleaned: list[tuple[dict[str, Any], dict[str, Any]]] = []
    problems: dict[str, list[str]] = {}
    seen_ids: dict[str, str] = {}
    for where, record in records:
        source_id = str(record.get("id") or "").strip()[:100]
        if source_id and source_id in seen_ids:
            problems[f"{where}.id"] = [f"{where}: id: {source_id!r} is also on {seen_ids[source_id]}."]
        if source_id:
            seen_ids.setdefault(source_id, where)
        try:
            cleaned.append((trivia_item_clean(project, record, where=where, add_categories=add), record))
        except InvalidInput as error:
            problems[f"{where}.{error.field}"] = [error.message]
        if len(problems) >= MAX_PROBLEMS:
            break
    if problems:
        first = next(iter(problems))
        raise InvalidInput(problems[first][0], field=first, details=problems)
    live = TriviaItem.objects.filter(project=project, item__deleted_at__isnull=True)
    known_ids = set(live.exclude(external_id="").values_list("external_id", flat=True))
    known_content = {
        _content_key({"question": question, "candidates": candidates})
        for question, candidates in live.filter(external_id="").values_list("item__question", "candidates")
    }
    fresh, skipped = [], []
    for (content, record), (where, _) in zip(cleaned, records, strict=True):
        source_id = str(record.get("id") or "").strip()[:100]
        if (source_id and source_id in known_ids) or (not source_id and _content_key(content) in known_content):
            skipped.append({"where": where, "id": source_id})
            continue
        known_content.add(_content_key(content))
        fresh.append((content, record))
    cleaned = fresh
    settings = trivia_settings(project)
    new_categories = [c["category"] for c, _ in cleaned if c["category"] not in settings.categories]
    now = timezone.now()
    with transaction.atomic():
        batch = TriviaImport.objects.create(
            project=project,
            name=name[:255],
            sha256=digest,
            created_by=user,
            created_at=now,
            created=len(cleaned),
            skipped=skipped,
        )
        if new_categories:
            TriviaSettings.objects.filter(pk=settings.pk).update(
                categories=trivia_categories_check([*settings.categories, *new_categories]), version=F("version") + 1
            )
        pair = items_pair(project)
        items = QAItem.objects.bulk_create(
            QAItem(
                project=project,
                pair=pair,
                author=user,
                status=Status.ACCEPTED,
                submitted_at=now,
                created_at=now,
                **trivia_item_qa_fields(content),
            )
            for content, _ in cleaned
        )
        rows = []
        for item, (content, record) in zip(items, cleaned, strict=True):
            target_question = str(record.get("target_question") or "").strip()
            target_candidates = [str(t).strip() for t in record.get("target_candidates") or []]
            translated = bool(target_question and len(target_candidates) == len(content["candidates"]))
            rows.append(
                TriviaItem(
                    item=item,
                    project=project,
                    import_batch=batch,
                    external_id=str(record.get("id") or "").strip()[:100],
                    translation_status=TriviaItem.Translation.DONE if translated else TriviaItem.Translation.OPEN,
                    target_question=target_question if translated else "",
                    target_candidates=target_candidates if translated else [],
                    created_at=now,
                    updated_at=now,
                    **trivia_item_mc_fields(content),
                )
            )
        TriviaItem.objects.bulk_create(rows)
        QAItemRevision.objects.bulk_create(
            QAItemRevision(
                item=item,
                number=1,
                question=item.question,
                answer_standard=item.answer_standard,
                content=row.content(),
                author=user,
                reason=QAItemRevision.Reason.IMPORTED,
                created_at=now,
            )
            for item, row in zip(items, rows, strict=True)
        )
        report = {
            "created": len(cleaned),
            "categories_added": sorted(set(new_categories)),
            "skipped": skipped,
            "already_imported": None,
            "import_id": batch.pk,
        }
        audit.record(
            user, Action.IMPORT_FINISHED, project, kind="trivia items", file=name, created=len(cleaned),
            skipped=len(skipped), categories_added=report["categories_added"],
        )  # fmt: skip
    return report


def trivia_imports(project: Project) -> QuerySet[TriviaImport]:
    """The project's imports, newest first, each with how many of its items are still live."""
    return (
        TriviaImport.objects.filter(project=project)
        .select_related("created_by", "undone_by")
        .annotate(live=Count("items", filter=Q(items__item__deleted_at__isnull=True)))
    )


def trivia_import_undo(*, batch: TriviaImport, user: User) -> dict[str, Any]:
    """Undo an import (coordinator): its items are deleted softly — out of every list, queue, release and figure,
    each restorable from the project's Deleted list — and the file may be imported again. Items translated or
    reviewed since are deleted too; the answer counts them."""
    if batch.undone_at is not None:
        raise InvalidState("This import was undone already.", field="import")
    now = timezone.now()
    items = QAItem.objects.alive().filter(trivia__import_batch=batch)
    with transaction.atomic():
        if not TriviaImport.objects.filter(pk=batch.pk, undone_at__isnull=True).update(undone_at=now, undone_by=user):
            raise InvalidState("This import was undone already.", field="import")
        worked_on = TriviaItem.objects.filter(import_batch=batch, item__deleted_at__isnull=True).exclude(
            translation_status=TriviaItem.Translation.OPEN, item__status=Status.ACCEPTED
        )
        changed = worked_on.count()
        deleted = lifecycle.qa_items_delete(items=items, user=user, at=now)
        audit.record(
            user, Action.ITEM_DELETED, batch.project, undone_import=batch.pk, file=batch.name,
            deleted=deleted, worked_on=changed,
        )  # fmt: skip
    batch.refresh_from_db()
    return {"import_id": batch.pk, "deleted": deleted, "worked_on": changed}


def _decode(data: bytes, name: str) -> str:
    try:
        return csvfile.decode(data)
    except csvfile.CsvProblem as problem:
        raise InvalidInput(f"{name}: {problem.message}.", field="file") from None


def trivia_import_csv(
    *,
    project: Project,
    data: bytes,
    name: str = "items.csv",
    subset: str = "",
    add_categories: bool = True,
    user: User | None = None,
) -> dict[str, Any]:
    """Rows `id, category, difficulty, question, candidate0..n, answer` (and optionally `subset`); all or nothing.

    The file's rows are all `subset` unless the file has its own `subset` column.
    """
    try:
        header, rows = csvfile.dict_rows(
            _decode(data, name), needed=("category", "difficulty", "question", "candidate0", "answer")
        )
        candidate_columns = sorted(
            (c for c in header if c.startswith("candidate") and c[9:].isdigit()), key=lambda c: int(c[9:])
        )
        records = []
        for line, row in rows:
            record = {key: value for key, value in row.items() if key is not None}
            record["candidates"] = [row[c] for c in candidate_columns if (row.get(c) or "").strip()]
            record["subset"] = (row.get("subset") or subset).strip()
            records.append((f"{name} line {line} (id {row.get('id') or '?'})", record))
    except csvfile.CsvProblem as problem:
        where = f"{name} line {problem.line}" if problem.line else name
        raise InvalidInput(f"{where}: {problem.message}.", field=problem.column or "file") from None
    if not records:
        raise InvalidInput(f"{name}: the file has no rows.", field="file")
    return _import(project, records, user=user, add=add_categories, name=name, data=data)


def trivia_import_jsonl(
    *, project: Project, data: bytes, name: str = "items.jsonl", add_categories: bool = True, user: Any = None
) -> dict[str, Any]:
    """One JSON object per line: id, category, subset, difficulty, question, candidates, answer
    (and target_question, target_candidates for items translated already); all or nothing."""
    records = []
    for line, text in enumerate(_decode(data, name).splitlines(), start=1):
        if not text.strip():
            continue
        try:
            record = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise InvalidInput(f"{name} line {line}: not valid JSON.", field="file") from None
        if not isinstance(record, dict):
            raise InvalidInput(f"{name} line {line}: must be a JSON object.", field="file")
        records.append((f"{name} line {line} (id {record.get('id') or '?'})", record))
    if not records:
        raise InvalidInput(f"{name}: the file has no records.", field="file")
    return _import(project, records, user=user, add=add_categories, name=name, data=data)


def _exported(project: Project) -> QuerySet[TriviaItem]:
    return trivia_items(project).exclude(item__status=Status.REJECTED)


def trivia_export_csv(project: Project) -> bytes:
    """The simple layout `id, category, difficulty (1-3), question, candidate0..n, answer`."""
    items = list(_exported(project))
    width = max((len(item.candidates) for item in items), default=MIN_CANDIDATES)
    out = io.StringIO()
    writer = csv_writer(out, lineterminator="\n")
    writer.writerow(["id", "category", "difficulty", "question", *[f"candidate{i}" for i in range(width)], "answer"])
    for item in items:
        candidates = item.candidates + [""] * (width - len(item.candidates))
        writer.writerow(
            [
                item.external_id or item.item_id,
                item.category,
                item.difficulty_number,
                item.question,
                *candidates,
                item.answer,
            ]
        )
    return out.getvalue().encode()


def trivia_record(item: TriviaItem) -> dict[str, Any]:
    return {
        "id": item.external_id or str(item.item_id),
        "category": item.category,
        "subset": item.subset,
        "difficulty": item.difficulty,
        "question": item.question,
        "candidates": item.candidates,
        "answer": item.answer,
        "target_question": item.target_question or None,
        "target_candidates": item.target_candidates or None,
    }


def trivia_export_jsonl(project: Project) -> bytes:
    return b"".join(orjson.dumps(trivia_record(item)) + b"\n" for item in _exported(project))
