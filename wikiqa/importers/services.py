"""Importing page pairs from files.

One way in for every file: the management command, the upload page, the API,
the worker and the demo data all call `pairs_import`. An import is
all-or-nothing: every record is validated, and if anything is wrong nothing is
written and the report names each problem by file, line (or record) and field.
Problems are structural (bad JSON, a wrong type, a missing field, offsets that
do not slice, a value over a limit); content a spreadsheet left where nothing is
expected is residue, kept as written and reported as a warning, not a problem.
Formats: localqa JSONL and CSV (docs/formats.md) and the WiLoVa release format
(`annotation.wilova`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from django.conf import settings
from django.db import transaction

from annotation.importers.report import ImportReport
from annotation.importers.sources import FORMATS, ImportSource, ProgressCallback, detect_format
from annotation.models import PagePair, Project
from wikiqa.importers.readers import csv_records, jsonl_records, wilova_import
from wikiqa.importers.writer import Writer


class _Refused(Exception):
    """Raised inside the import transaction to roll it back."""


def pairs_import_jsonl(
    *,
    project: Project,
    path: str | os.PathLike[str],
    dry_run: bool = False,
    source: str = PagePair.Source.JSONL,
) -> ImportReport:
    """Import page pairs from one JSONL file (see `pairs_import`)."""
    return pairs_import(project=project, paths=[path], format="jsonl", dry_run=dry_run, source=source)


def pairs_import(
    *,
    project: Project,
    paths: Sequence[str | os.PathLike[str] | ImportSource],
    format: str = "auto",
    dry_run: bool = False,
    source: str | None = None,
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """Import page pairs (and optionally their screening decisions and QA items) from files, all or nothing.

    JSONL and CSV files are streamed: pairs go to the database in batches
    inside one transaction, which is rolled back if any record turns out to be
    wrong. WiLoVa release files (a base file and/or its `_QualityMeta` file)
    are read whole (they are bounded by IMPORT_MAX_BYTES) and imported
    together. Titles already in the project are counted as already present and
    left as they are, so importing the same file twice creates nothing new.
    """
    report = ImportReport(dry_run=dry_run)
    sources = [ImportSource.of(path) for path in paths]
    if format not in FORMATS:
        report.add_problem(None, None, f"unknown format {format!r}: use one of {', '.join(FORMATS)}")
        return report
    if not sources:
        report.add_problem(None, None, "no file to import")
        return report
    multiple = len(sources) > 1
    plan: list[tuple[ImportSource, str, int]] = []
    limit = settings.IMPORT_MAX_BYTES
    for item in sources:
        label = item.name if multiple else None
        file_format = format if format != "auto" else detect_format(item.name)
        if file_format is None:
            report.add_problem(
                None, None, "cannot tell the format from the name; use --format jsonl, csv or wilova", file=item.name
            )
            continue
        try:
            size = item.size()
        except OSError as error:
            report.add_problem(None, None, f"cannot read {item.path}: {error.strerror or error}", file=label)
            continue
        if size > limit:
            report.add_problem(
                None,
                None,
                f"the file is {size:,} bytes, more than the import limit of {limit:,} bytes (IMPORT_MAX_BYTES); "
                "split it into smaller files",
                file=label,
            )
            continue
        plan.append((item, file_format, size))
        report.files.append({"name": item.name, "format": file_format, "size": size})
    if not report.ok:
        return report
    if len({file_format for _, file_format, _ in plan}) > 1 and any(f == "wilova" for _, f, _ in plan):
        report.add_problem(None, None, "WiLoVa release files cannot be imported together with JSONL or CSV files")
        return report
    writer = Writer(project=project, report=report, write=not dry_run, progress=progress)
    try:
        with transaction.atomic():
            if plan[0][1] == "wilova":
                wilova_import(plan, writer=writer, multiple=multiple)
            else:
                for item, file_format, _size in plan:
                    label = item.name if multiple else None
                    default_source = source or (PagePair.Source.CSV if file_format == "csv" else PagePair.Source.JSONL)
                    with item.open() as stream:
                        reader = jsonl_records if file_format == "jsonl" else csv_records
                        for record in reader(stream, report=report, label=label, limit=limit, writer=writer):
                            record.values.setdefault("source", default_source)
                            writer.add(record)
                    writer.file_done()
            writer.flush()
            if not report.ok or dry_run:
                raise _Refused
    except _Refused:
        pass
    finally:
        writer.close()
    if not report.ok:
        report.reset_counts()
    return report
