"""Writing an imported WiLoVa release back in its own format.

Each original file is rebuilt from its stored rows, in their order, encoded
with the file's own json.dumps arguments. A mapped field is rewritten only if
localqa's state says something else now than right after the import (see
`annotation.wilova.row_projection`), so an untouched project writes the
release back byte for byte, and a project changed in localqa differs exactly
in the changed fields.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotation import wilova
from annotation.models import PagePair, Project, QAItem, Screening, SourceFile, SourceRow, deleted_pairs


def write_wilova(project: Project, out_dir: str | Path) -> list[Path]:
    """Write the project's imported WiLoVa files (base, then _QualityMeta) into out_dir; return their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in wilova_file_bytes(project):
        path = out_dir / Path(name).name
        path.write_bytes(data)
        written.append(path)
    return written


def wilova_file_bytes(project: Project) -> Iterator[tuple[str, bytes]]:
    """(original file name, bytes) of each imported WiLoVa file, with localqa's changes applied."""
    projections = _current_projections(project)
    for source_file in SourceFile.objects.filter(project=project, format="wilova").order_by("position", "id"):
        rows: dict[str, Any] = {}
        for row in SourceRow.objects.filter(source_file=source_file).order_by("position").iterator(chunk_size=500):
            values = json.loads(row.raw)
            current = projections.get(row.pair_id) if row.pair_id is not None else None
            if current is not None:
                for name, imported in row.projection.items():
                    if name in values and current.get(name) != imported:
                        values[name] = current.get(name)
            rows[row.key] = values
        formatting = source_file.formatting
        text = json.dumps(rows, indent=formatting.get("indent"), ensure_ascii=formatting.get("ensure_ascii", False))
        yield source_file.name, text.encode("utf-8") + (b"\n" if formatting.get("trailing_newline") else b"")


def _current_projections(project: Project) -> dict[int, dict[str, Any]]:
    pairs = PagePair.objects.filter(project=project, source_rows__isnull=False).distinct().only("id", "metadata")
    latest: dict[int, tuple[str, str]] = {}
    deleted = deleted_pairs(project)
    screenings = Screening.objects.filter(project=project).order_by("created_at", "id")
    for pair_id, decision, note in screenings.values_list("pair_id", "decision", "note"):
        if pair_id not in deleted:
            latest[pair_id] = (decision, note)
    items: dict[int, list[wilova.ItemState]] = {}
    for item in QAItem.objects.alive().filter(project=project).prefetch_related("revisions"):
        slot = (item.metadata or {}).get("wilova", {}).get("slot")
        if slot is None:
            continue
        authored_revisions = [r for r in item.revisions.all() if r.reason != r.Reason.REVIEWER_REWRITE]
        if authored_revisions:
            last = authored_revisions[-1]
            authored = {
                "question": last.question,
                "answer_standard": last.answer_standard,
                "answer_local": last.answer_local,
                "spans": last.spans,
            }
        else:
            authored = {
                "question": item.question,
                "answer_standard": item.answer_standard,
                "answer_local": item.answer_local,
                "spans": [{"text": s.text} for s in item.spans.all()],
            }
        items.setdefault(item.pair_id, []).append(
            wilova.ItemState(
                slot=slot,
                status=item.status,
                question=item.question,
                answer_standard=item.answer_standard,
                answer_local=item.answer_local,
                metadata=item.metadata,
                authored=authored,
            )
        )
    projections = {}
    for pair in pairs:
        decision, note = latest.get(pair.pk, ("", ""))
        projections[pair.pk] = wilova.row_projection(
            pair_metadata=pair.metadata, decision=decision, note=note, items=items.get(pair.pk, [])
        )
    return projections
