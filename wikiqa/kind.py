"""The Wikipedia QA kind's importer: page pairs from JSONL, CSV or WiLoVa files (`wikiqa.importers`).

`annotation.kind` registers the kind; this app adds its importer (`wikiqa.apps`), as review adds its next steps
and exports its release writers."""

from __future__ import annotations

from collections.abc import Callable

from annotation.importers.report import ImportReport
from annotation.importers.sources import FORMATS, ImportSource, detect_format
from annotation.ingest import UploadImporter
from annotation.models import ImportJob
from wikiqa.importers.services import pairs_import


def _pairs_run(*, job: ImportJob, sources: list[ImportSource], progress: Callable[[int, int], None]) -> ImportReport:
    return pairs_import(project=job.project, paths=sources, format=job.format, dry_run=job.dry_run, progress=progress)


PAIRS_IMPORTER = UploadImporter(FORMATS, ".jsonl, .csv or .json", detect_format, _pairs_run)
