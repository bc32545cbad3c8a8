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

import csv
import hashlib
import io
import json
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, connection, reset_queries, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from annotation import wilova
from annotation.languages import UnknownLanguage, get_language
from annotation.lifecycle import (
    item_event,
    item_events_record,
    items_route,
    review_begun,
    review_rounds_close,
    span_problem,
)
from annotation.models import EvidenceSpan, PagePair, Project, QAItem, QAItemRevision, Screening, SourceFile, SourceRow
from annotation.wilova import ItemRecord, PairRecord, locate
from common import jsontext

BATCH_ROWS = 1000
BATCH_CHARS = 8_000_000  # flush earlier when pairs carry long full texts, so memory stays flat
MAX_REPORTED_PROBLEMS = 200  # a file that is wrong on every line does not need a million-line report
MAX_INT = 2_147_483_647  # PositiveIntegerField on PostgreSQL

REQUIRED_TEXT = ("local_title", "standard_title", "local_lead", "standard_lead")
REQUIRED_URL = ("local_url", "standard_url")
OPTIONAL_TEXT = ("local_text", "standard_text")
OPTIONAL_LENGTH = ("local_text_length", "standard_text_length")
KNOWN_FIELDS = frozenset(
    (
        *REQUIRED_TEXT,
        *REQUIRED_URL,
        *OPTIONAL_TEXT,
        *OPTIONAL_LENGTH,
        "metadata",
        "local_language",
        "standard_language",
        "screening",
        "items",
    )
)
MAX_LENGTHS = {"local_title": 500, "standard_title": 500, "local_url": 1000, "standard_url": 1000}

_url_validator = URLValidator(schemes=["http", "https"])


@dataclass(frozen=True)
class ImportProblem:
    line: int | None  # 1-based line of a JSONL or CSV file; None for a problem with a whole file or a keyed record
    field: str | None
    message: str
    file: str | None = None  # the file's name, when an import reads several
    record: str | None = None  # the key of a record in a keyed file (WiLoVa)

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "record": self.record,
            "field": self.field,
            "message": self.message,
        }

    def __str__(self) -> str:
        where = [self.file] if self.file else []
        if self.line is not None:
            where.append(f"line {self.line}")
        elif self.record is not None:
            where.append(f"record {self.record!r}")
        elif not self.file:
            where.append("file")
        if self.field:
            where.append(f"field {self.field}")
        return f"{', '.join(where)}: {self.message}"


def _empty_counts() -> dict[str, dict[str, int]]:
    return {
        "screenings": {},
        "items": {},
        "item_statuses": {},
        "spans": {},
        "source_rows": {},
        "review_outcomes": {},
    }


@dataclass
class ImportReport:
    """What an import did, or (with `dry_run`) would do.

    `created` and `already_present` count pairs; `counts` counts what came with
    the created pairs: screening decisions by value, items by kind and status,
    evidence spans by how they were located, original release rows, review
    outcomes a `_QualityMeta` file applied to items already in the project. When
    the import is refused (`ok` is False) nothing was written and every count is 0.
    `warnings` name residue that was kept as written but not imported as items;
    `unknown_regions` counts the fine-grained regions the project's region
    vocabulary does not know (each also a problem, until it is mapped).
    """

    dry_run: bool = False
    lines: int = 0  # records read (non-blank lines, CSV rows, release rows)
    created: int = 0
    already_present: int = 0
    problems: list[ImportProblem] = field(default_factory=list)
    problems_total: int = 0
    counts: dict[str, dict[str, int]] = field(default_factory=_empty_counts)
    files: list[dict[str, Any]] = field(default_factory=list)  # {name, format, size}
    warnings: list[ImportProblem] = field(default_factory=list)
    warnings_total: int = 0
    unknown_regions: dict[str, int] = field(default_factory=dict)  # fine region as written -> records

    @property
    def ok(self) -> bool:
        return self.problems_total == 0

    def add_problem(
        self,
        line: int | None,
        field_name: str | None,
        message: str,
        *,
        file: str | None = None,
        record: str | None = None,
    ) -> None:
        self.problems_total += 1
        if len(self.problems) < MAX_REPORTED_PROBLEMS:
            self.problems.append(ImportProblem(line, field_name, message, file=file, record=record))

    def add_warning(
        self, field_name: str | None, message: str, *, file: str | None = None, record: str | None = None
    ) -> None:
        self.warnings_total += 1
        if len(self.warnings) < MAX_REPORTED_PROBLEMS:
            self.warnings.append(ImportProblem(None, field_name, message, file=file, record=record))

    def count(self, group: str, key: str, n: int = 1) -> None:
        self.counts[group][key] = self.counts[group].get(key, 0) + n

    def reset_counts(self) -> None:
        self.created = 0
        self.already_present = 0
        self.counts = _empty_counts()

    def summary(self) -> str:
        if not self.ok and self.problems_total == len(self.unknown_regions):
            n = len(self.unknown_regions)
            return (
                f"Import refused: {n} region{'s' if n != 1 else ''} in the review file the project's region "
                f"vocabulary does not know ({', '.join(self.unknown_regions)}); map them, then import. "
                "Nothing was imported."
            )
        if not self.ok:
            return (
                f"Import refused: {self.problems_total} problem{'s' if self.problems_total != 1 else ''} "
                f"in {self.lines} line{'s' if self.lines != 1 else ''}; nothing was imported."
            )
        verb = "would be created" if self.dry_run else "created"
        prefix = "Dry run, nothing written: " if self.dry_run else ""
        pairs = f"{self.created} pair{'s' if self.created != 1 else ''}"
        text = f"{prefix}{pairs} {verb}, {self.already_present} already present."
        details = self.detail_lines()
        if self.warnings_total:
            details.append(
                f"{self.warnings_total} warning{'s' if self.warnings_total != 1 else ''}: "
                "residue kept as written in the original rows, not imported as items"
            )
        return text + ("\n" + "\n".join(f"  {line}" for line in details) if details else "")

    def detail_lines(self) -> list[str]:
        """The counts beyond pairs, one line per group, for reports people read."""
        labels = {
            "screenings": "screening decisions",
            "items": "QA items",
            "item_statuses": "QA item statuses",
            "spans": "evidence spans",
            "source_rows": "original release rows kept",
            "review_outcomes": "review outcomes applied to items already in the project",
        }
        lines = []
        for group, label in labels.items():
            values = self.counts.get(group) or {}
            if values:
                lines.append(f"{label}: " + ", ".join(f"{key} {n}" for key, n in sorted(values.items())))
        return lines

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "lines": self.lines,
            "created": self.created,
            "already_present": self.already_present,
            "counts": self.counts,
            "files": self.files,
            "problems": [problem.as_dict() for problem in self.problems],
            "problems_total": self.problems_total,
            "warnings": [warning.as_dict() for warning in self.warnings],
            "warnings_total": self.warnings_total,
            "unknown_regions": self.unknown_regions,
        }


class _Refused(Exception):
    """Raised inside the import transaction to roll it back."""


@dataclass(frozen=True)
class _NonFinite:
    """Where a file says NaN, Infinity or a number too large for a double: JSON has no such numbers."""

    token: str


def _parse_float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def json_loads(text: str | bytes, **kwargs: Any) -> Any:
    """json.loads, but NaN, Infinity and overflowing numbers come back as `_NonFinite` to be reported."""
    return json.loads(text, parse_constant=_NonFinite, parse_float=_parse_float, **kwargs)


def non_finite(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(field path, token) of each non-finite number in a parsed value: `metadata.score`, `items[0].spans`."""
    if isinstance(value, _NonFinite):
        yield path, value.token
    elif isinstance(value, dict):
        for key, child in value.items():
            yield from non_finite(child, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from non_finite(child, f"{path}[{index}]")


NON_FINITE_MESSAGE = "is {token}, which JSON does not allow (no NaN or Infinity); write null or a number"


FORMATS = ("auto", "jsonl", "csv", "wilova")
ProgressCallback = Callable[[int, int], None]  # (bytes read so far, records read so far)


@dataclass
class ImportSource:
    """A file to import: a path, or bytes already in memory, and the name to report it under."""

    name: str
    path: Path | None = None
    data: bytes | None = None

    @classmethod
    def of(cls, value: str | os.PathLike[str] | ImportSource) -> ImportSource:
        if isinstance(value, ImportSource):
            return value
        path = Path(value)
        return cls(name=path.name, path=path)

    def size(self) -> int:
        return len(self.data) if self.data is not None else self.path.stat().st_size  # type: ignore[union-attr]

    def open(self) -> BinaryIO:
        return io.BytesIO(self.data) if self.data is not None else self.path.open("rb")  # type: ignore[union-attr]

    def read(self) -> bytes:
        with self.open() as stream:
            return stream.read()


def detect_format(name: str) -> str | None:
    lower = name.lower()
    if lower.endswith(".jsonl") or lower.endswith(".ndjson"):
        return "jsonl"
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(".json"):
        return "wilova"
    return None


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
    writer = _Writer(project=project, report=report, write=not dry_run, progress=progress)
    try:
        with transaction.atomic():
            if plan[0][1] == "wilova":
                _import_wilova(plan, writer=writer, multiple=multiple)
            else:
                for item, file_format, _size in plan:
                    label = item.name if multiple else None
                    default_source = source or (PagePair.Source.CSV if file_format == "csv" else PagePair.Source.JSONL)
                    with item.open() as stream:
                        reader = _jsonl_records if file_format == "jsonl" else _csv_records
                        for record in reader(stream, report=report, label=label, limit=limit, writer=writer):
                            record.values.setdefault("source", default_source)
                            writer.add(record)
                    writer.file_done()
            writer.flush()
            if not report.ok or dry_run:
                raise _Refused
    except _Refused:
        pass
    if not report.ok:
        report.reset_counts()
    return report


# Reading JSONL


def _read_lines(
    stream: BinaryIO, report: ImportReport, limit: int, label: str | None, writer: _Writer
) -> Iterator[tuple[int, str]]:
    """Yield (line number, decoded line) for each non-blank line; report undecodable lines."""
    offset = 0
    for number, raw in enumerate(stream, start=1):
        line_offset = offset
        offset += len(raw)
        writer.bytes_read(len(raw))
        if offset > limit:  # the file grew while we read it
            report.add_problem(number, None, f"the file passes the import limit of {limit:,} bytes here", file=label)
            return
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]  # a byte-order mark some editors write; not part of the data
            line_offset += 3
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            report.add_problem(
                number,
                None,
                f"not valid UTF-8: byte 0x{raw[error.start]:02x} at byte offset {line_offset + error.start} "
                f"of the file (byte {error.start + 1} of the line); save the file as UTF-8",
                file=label,
            )
            continue
        if text.strip():
            report.lines += 1
            # Without the line break a truncated line's JSON error points at its end, not at "line 2, column 1".
            yield number, text.rstrip("\r\n")


def _jsonl_records(
    stream: BinaryIO, *, report: ImportReport, label: str | None, limit: int, writer: _Writer
) -> Iterator[PairRecord]:
    for number, text in _read_lines(stream, report, limit, label, writer):
        problem = _Problems(report, line=number, file=label)
        data = _parse_json_object(text, problem)
        if data is None:
            continue
        record = _parse_record(data, problem, writer.project)
        if record is not None and writer.check_title(record, number, problem):
            yield record


# Reading CSV

CSV_COLUMNS = (
    *REQUIRED_TEXT,
    *REQUIRED_URL,
    *OPTIONAL_TEXT,
    *OPTIONAL_LENGTH,
    "metadata",
    "local_language",
    "standard_language",
    "screening_decision",
    "screening_note",
)


class _CountingReader(io.RawIOBase):
    """Counts the bytes a text reader pulls from the file, for progress and the size limit."""

    def __init__(self, stream: BinaryIO, writer: _Writer) -> None:
        self.stream = stream
        self.writer = writer

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def,override]
        data = self.stream.read(len(buffer))
        buffer[: len(data)] = data
        self.writer.bytes_read(len(data))
        return len(data)


def _csv_records(
    stream: BinaryIO, *, report: ImportReport, label: str | None, limit: int, writer: _Writer
) -> Iterator[PairRecord]:
    text = io.TextIOWrapper(io.BufferedReader(_CountingReader(stream, writer)), encoding="utf-8-sig", newline="")
    reader = csv.reader(text)
    line = 1
    try:
        header = next(reader, None)
        if header is None:
            report.add_problem(None, None, "the file is empty; a CSV import needs a header row", file=label)
            return
        unknown = [name for name in header if name not in CSV_COLUMNS]
        for name in unknown:
            report.add_problem(1, name, "unknown column; put extra information in the metadata column", file=label)
        repeated = {name for name in header if header.count(name) > 1}
        for name in sorted(repeated):
            report.add_problem(1, name, "appears more than once in the header", file=label)
        for name in (*REQUIRED_TEXT, *REQUIRED_URL):
            if name not in header:
                report.add_problem(1, name, "column is missing", file=label)
        if unknown or repeated or not report.ok:
            return
        line = reader.line_num + 1
        for row in reader:
            number, line = line, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            report.lines += 1
            problem = _Problems(report, line=number, file=label)
            if len(row) != len(header):
                problem(None, f"has {len(row)} cells; the header has {len(header)}")
                continue
            record = _csv_record(dict(zip(header, row, strict=True)), problem, writer.project)
            if record is not None and writer.check_title(record, number, problem):
                yield record
    except UnicodeDecodeError as error:
        report.add_problem(
            line, None, f"not valid UTF-8 (byte 0x{error.object[error.start]:02x}); save the file as UTF-8", file=label
        )
    except csv.Error as error:
        report.add_problem(line, None, f"malformed CSV: {error}", file=label)


def _csv_record(cells: dict[str, str], problem: _Problems, project: Project) -> PairRecord | None:
    data: dict[str, Any] = {}
    for name, value in cells.items():
        if value == "":
            continue  # an empty cell is "not given"
        if name in OPTIONAL_LENGTH:
            data[name] = int(value) if value.strip().isdigit() else value
        elif name == "metadata":
            try:
                data[name] = jsontext.loads(value)
            except jsontext.NonFiniteNumber as error:
                problem(name, f"holds {error.value} at {error.path or 'its top'}: JSON has no NaN or Infinity")
                return None
            except json.JSONDecodeError as error:
                problem(name, f"is not JSON: {error.msg} at column {error.colno}")
                return None
            except RecursionError:  # a hostile file nests thousands of brackets
                problem(name, "is nested too deeply to read")
                return None
        elif name == "screening_decision":
            data["screening"] = {"decision": value, "note": cells.get("screening_note", "")}
        elif name != "screening_note":
            data[name] = value
    if "screening_note" in cells and cells["screening_note"] and "screening" not in data:
        problem("screening_note", "is given without a screening_decision")
        return None
    return _parse_record(data, problem, project)


# Parsing one record (JSONL line or CSV row)


class _Problems:
    """Reports problems of one record; `count` says how many so far."""

    def __init__(self, report: ImportReport, *, line: int | None = None, file: str | None = None, record=None) -> None:  # type: ignore[no-untyped-def]
        self.report, self.line, self.file, self.record = report, line, file, record

    @property
    def count(self) -> int:
        return self.report.problems_total

    def __call__(self, field_name: str | None, message: str) -> None:
        self.report.add_problem(self.line, field_name, message, file=self.file, record=self.record)


def _parse_json_object(text: str, problem: _Problems) -> dict[str, Any] | None:
    # json keeps the last of repeated keys silently; note them per object (the outermost object comes last).
    repeated: list[list[str]] = []

    def keep_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        repeated.append([])
        for key, value in pairs:
            if key in obj:
                repeated[-1].append(key)
            obj[key] = value
        return obj

    try:
        data = json_loads(text, object_pairs_hook=keep_pairs)
    except json.JSONDecodeError as error:
        problem(None, f"invalid JSON: {error.msg} at column {error.colno}")
        return None
    except RecursionError:  # a hostile file nests thousands of brackets
        problem(None, "invalid JSON: nested too deeply to read")
        return None
    if not isinstance(data, dict):
        problem(None, f"must be a JSON object, not {_json_type(data)}")
        return None
    before = problem.count
    for path, token in non_finite(data):
        problem(path, NON_FINITE_MESSAGE.format(token=token))
    for key in dict.fromkeys(repeated[-1]):
        problem(key, "appears more than once on this line")
    for key in dict.fromkeys(key for keys in repeated[:-1] for key in keys):
        problem("metadata", f"an object inside repeats the key {key!r}")
    return data if problem.count == before else None


def _parse_record(data: dict[str, Any], problem: _Problems, project: Project) -> PairRecord | None:
    """Validate one pair record; return it, or None after reporting every problem."""
    before = problem.count
    for key in sorted(set(data) - KNOWN_FIELDS):
        problem(key, "unknown field; put extra information under metadata")
    values: dict[str, Any] = {}
    for name in (*REQUIRED_TEXT, *REQUIRED_URL):
        value = data.get(name)
        if value is None:
            problem(name, "is missing")
        elif not isinstance(value, str):
            problem(name, f"must be a string, not {_json_type(value)}")
        elif not value.strip():
            problem(name, "is empty")
        elif name in MAX_LENGTHS and len(value) > MAX_LENGTHS[name]:
            problem(name, f"is {len(value)} characters long; the limit is {MAX_LENGTHS[name]}")
        elif message := _too_long(name, value) or _unstorable(value):
            problem(name, message)
        elif name in REQUIRED_URL and not _is_url(value):
            problem(name, f"{value!r} is not an http(s) URL")
        else:
            values[name] = value
    for name in OPTIONAL_TEXT:
        value = data.get(name)
        if value is None:
            values[name] = ""
        elif not isinstance(value, str):
            problem(name, f"must be a string, not {_json_type(value)}")
        elif message := _too_long(name, value) or _unstorable(value):
            problem(name, message)
        else:
            values[name] = value
    for name in OPTIONAL_LENGTH:
        value = data.get(name)
        if value is None:
            text_value = values.get(name.removesuffix("_length"))
            values[name] = len(text_value) if text_value else None
        elif not isinstance(value, int) or isinstance(value, bool):
            problem(name, f"must be a whole number of code points, not {_json_type(value)}")
        elif not 0 <= value <= MAX_INT:
            problem(name, f"must be between 0 and {MAX_INT}")
        else:
            values[name] = value
    metadata = data.get("metadata")
    if metadata is None:
        values["metadata"] = {}
    elif not isinstance(metadata, dict):
        problem("metadata", f"must be an object, not {_json_type(metadata)}")
    elif message := _unstorable_json(metadata):
        problem("metadata", message)
    else:
        values["metadata"] = metadata
    for name, expected in (
        ("local_language", project.local_language),
        ("standard_language", project.standard_language),
    ):
        code = data.get(name)
        if code is None:
            continue
        try:
            get_language(code if isinstance(code, str) else "")
        except UnknownLanguage:
            problem(name, f"unknown language code {code!r}: use an ISO 639-3 code such as 'yue', 'bar' or 'deu'")
            continue
        if code != expected:
            problem(name, f"is {code!r}, but this project's {name.replace('_', ' ')} is {expected!r}")
    screenings = _parse_screenings(data.get("screening"), problem)
    items = _parse_items(data.get("items"), problem, values)
    if problem.count > before:
        return None
    values["local_lead_length"] = len(values["local_lead"])
    values["standard_lead_length"] = len(values["standard_lead"])
    if screenings:
        decision = screenings[-1][0]
        values["screening_decision"] = decision
        if decision != Screening.Decision.ANNOTATE:
            values["status"] = PagePair.Status.EXCLUDED
        elif items:
            values["status"] = PagePair.Status.SUBMITTED
    elif items:
        values["status"] = PagePair.Status.SUBMITTED
    if items and values.get("status") == PagePair.Status.EXCLUDED:
        problem("items", "an excluded pair (screening decision other than annotate) cannot have QA items")
        return None
    return PairRecord(values=values, screenings=screenings, items=items)


def _parse_screenings(value: Any, problem: _Problems) -> list[tuple[str, str]]:
    if value is None:
        return []
    entries = value if isinstance(value, list) else [value]
    screenings = []
    for index, entry in enumerate(entries):
        where = "screening" if not isinstance(value, list) else f"screening[{index}]"
        if not isinstance(entry, dict):
            problem(where, f"must be an object with decision and note, not {_json_type(entry)}")
            continue
        for key in sorted(set(entry) - {"decision", "note"}):
            problem(f"{where}.{key}", "unknown field")
        decision, note = entry.get("decision"), entry.get("note") or ""
        if decision not in Screening.Decision.values:
            problem(
                f"{where}.decision",
                f"unknown screening decision {decision!r}: use one of {', '.join(Screening.Decision.values)}",
            )
        elif not isinstance(note, str):
            problem(f"{where}.note", f"must be a string, not {_json_type(note)}")
        elif message := _unstorable(note):
            problem(f"{where}.note", message)
        else:
            screenings.append((decision, note))
    return screenings


ITEM_FIELDS = frozenset(("kind", "question", "answer_standard", "answer_local", "status", "spans", "metadata"))


def _parse_items(value: Any, problem: _Problems, values: dict[str, Any]) -> list[ItemRecord]:
    if value is None:
        return []
    if not isinstance(value, list):
        problem("items", f"must be an array of QA items, not {_json_type(value)}")
        return []
    items = []
    for index, raw in enumerate(value):
        where = f"items[{index}]"
        if not isinstance(raw, dict):
            problem(where, f"must be an object, not {_json_type(raw)}")
            continue
        before = problem.count
        for key in sorted(set(raw) - ITEM_FIELDS):
            problem(f"{where}.{key}", "unknown field; put extra information under metadata")
        kind = raw.get("kind", QAItem.Kind.LEAD)
        if kind not in QAItem.Kind.values:
            problem(f"{where}.kind", f"unknown kind {kind!r}: use lead or document")
        status = raw.get("status", QAItem.Status.SUBMITTED)
        if status not in QAItem.Status.values:
            problem(f"{where}.status", f"unknown status {status!r}: use one of {', '.join(QAItem.Status.values)}")
        texts = {}
        for name in ("question", "answer_standard", "answer_local"):
            text = raw.get(name, "")
            if text is None:
                text = ""
            if not isinstance(text, str):
                problem(f"{where}.{name}", f"must be a string, not {_json_type(text)}")
            elif message := _unstorable(text):
                problem(f"{where}.{name}", message)
            texts[name] = text
        metadata = raw.get("metadata") or {}
        if not isinstance(metadata, dict):
            problem(f"{where}.metadata", f"must be an object, not {_json_type(metadata)}")
        spans = _parse_spans(raw.get("spans"), problem, where, values, kind)
        if problem.count > before:
            continue
        revisions = []
        if status != QAItem.Status.DRAFT:
            revisions.append({"reason": QAItemRevision.Reason.IMPORTED, **texts, "spans": spans})
        items.append(ItemRecord(kind=kind, status=status, metadata=metadata, spans=spans, revisions=revisions, **texts))
    return items


def _parse_spans(value: Any, problem: _Problems, where: str, values: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        problem(f"{where}.spans", f"must be an array, not {_json_type(value)}")
        return []
    limit = settings.IMPORT_MAX_SPANS_PER_ITEM
    if len(value) > limit:
        problem(
            f"{where}.spans",
            f"has {len(value):,} evidence spans; an item may have at most {limit:,} (IMPORT_MAX_SPANS_PER_ITEM)",
        )
        return []
    default_document = (
        EvidenceSpan.Document.LOCAL_LEAD if kind == QAItem.Kind.LEAD else EvidenceSpan.Document.LOCAL_TEXT
    )
    spans = []
    for index, raw in enumerate(value):
        name = f"{where}.spans[{index}]"
        if not isinstance(raw, dict):
            problem(name, f"must be an object with start, end and text, not {_json_type(raw)}")
            continue
        document = raw.get("document", default_document)
        if document not in EvidenceSpan.Document.values:
            problem(f"{name}.document", f"unknown document {document!r}: use local_lead or local_text")
            continue
        text = raw.get("text")
        if not isinstance(text, str) or not text:
            problem(f"{name}.text", "must be the non-empty text of the span")
            continue
        target = values.get(document, "")
        start, end = raw.get("start"), raw.get("end")
        if start is None and end is None:
            # No offsets given: locate the text as a release import does, or keep it unlocated.
            match, start, end, located = locate(target, text) if target else ("unlocated", None, None, text)
            spans.append({"document": document, "start": start, "end": end, "text": located, "match": match})
            continue
        wrong = span_problem(target, start, end, text, document=document)
        if wrong is not None:
            problem(name + wrong[0], wrong[1])
        else:
            spans.append({"document": document, "start": start, "end": end, "text": text, "match": "exact"})
    return spans


# Reading WiLoVa release files


def _import_wilova(plan: list[tuple[ImportSource, str, int]], *, writer: _Writer, multiple: bool) -> None:
    report, project = writer.report, writer.project
    files: dict[str, tuple[ImportSource, bytes, dict[str, Any]]] = {}
    for item, _format, _size in plan:
        label = item.name
        role = wilova.file_role(item.name)
        if role in files:
            report.add_problem(None, None, f"a second {role} file; give one base and one _QualityMeta file", file=label)
            continue
        mismatch = wilova.file_name_mismatch(
            item.name, standard_wiki=project.standard_wiki, local_wiki=project.local_wiki
        )
        if mismatch is not None:
            report.add_problem(None, None, mismatch, file=label)
            continue
        data = item.read()
        writer.bytes_read(len(data))
        try:
            rows = json_loads(data.decode("utf-8"))
        except UnicodeDecodeError as error:
            report.add_problem(
                None, None, f"not valid UTF-8: byte 0x{data[error.start]:02x} at byte offset {error.start}", file=label
            )
            continue
        except json.JSONDecodeError as error:
            report.add_problem(
                None, None, f"invalid JSON: {error.msg} at line {error.lineno}, column {error.colno}", file=label
            )
            continue
        except RecursionError:  # a hostile file nests thousands of brackets
            report.add_problem(None, None, "invalid JSON: nested too deeply to read", file=label)
            continue
        if not isinstance(rows, dict) or not all(isinstance(row, dict) for row in rows.values()):
            report.add_problem(None, None, "must be one JSON object of rows keyed by the standard title", file=label)
            continue
        before = report.problems_total
        for key, row in rows.items():
            for path, token in non_finite(row):
                report.add_problem(None, path, NON_FINITE_MESSAGE.format(token=token), file=label, record=key)
        if report.problems_total == before:
            files[role] = (item, data, rows)
    if not report.ok:
        return
    base = files.get("base", (None, b"", {}))[2]
    quality = files.get("quality", (None, b"", {}))[2]
    regions = dict(project.region_vocabulary or {})
    if "quality" in files and not _check_regions(quality, regions, report=report, file=files["quality"][0].name):
        return
    writer.quality_file = files["quality"][0].name if "quality" in files else None
    keys = list(dict.fromkeys([*base, *quality]))
    for role, (item, data, rows) in files.items():
        writer.source_files[role] = writer.source_file(item, data, rows, role)
    positions = {role: {key: index for index, key in enumerate(rows)} for role, (_i, _d, rows) in files.items()}
    for key in keys:
        report.lines += 1
        base_row, quality_row = base.get(key), quality.get(key)
        ok = True
        for role, row in (("base", base_row), ("quality", quality_row)):
            if row is None:
                continue
            name = files[role][0].name
            problem = _Problems(report, file=name, record=key)

            def warn(field_name: str | None, message: str, name: str = name, key: str = key) -> None:
                report.add_warning(field_name, message, file=name, record=key)

            # A quality row repeats its base row: its residue is reported once, with the base file.
            quiet = role == "quality"
            ok = (
                wilova.check_row(
                    key,
                    row,
                    problem=problem,
                    warn=_only_new(warn, base_row) if quiet and base_row is not None else warn,
                    topics=project.topics,
                    quality=role == "quality",
                )
                and _check_row_sizes(row, problem)
                and ok
            )
        if not ok:
            continue
        record = wilova.row_record(key, base_row, quality_row, regions=regions)
        problem = _Problems(report, file=files["base" if base_row is not None else "quality"][0].name, record=key)
        if not writer.check_title(record, key, problem):
            continue
        states = wilova.record_states(record)
        screening_decision, note = record.screenings[-1]
        projection = wilova.row_projection(
            pair_metadata=record.values["metadata"], decision=screening_decision, note=note, items=states
        )
        for role, row in (("base", base_row), ("quality", quality_row)):
            if row is not None and writer.source_files.get(role) is not None:
                record.source_rows.append(
                    {
                        "file": role,
                        "position": positions[role][key],
                        "key": key,
                        "raw": json.dumps(row, ensure_ascii=False),
                        "projection": projection,
                    }
                )
        writer.add(record)


def _only_new(warn: Callable[[str | None, str], None], base_row: dict[str, Any]):  # type: ignore[no-untyped-def]
    """A warning callback for a quality row that stays silent on fields its base row already warned about."""

    def quality_warn(field_name: str | None, message: str) -> None:
        if field_name is None or field_name not in base_row:
            warn(field_name, message)

    return quality_warn


def _check_row_sizes(row: dict[str, Any], problem: _Problems) -> bool:
    before = problem.count
    for name in ("dialect_summary", "standard_summary"):
        value = row.get(name)
        if isinstance(value, str) and (message := _too_long(name, value)):
            problem(name, message)
    return problem.count == before


def _check_regions(rows: dict[str, Any], regions: Mapping[str, str], *, report: ImportReport, file: str) -> bool:
    """Every fine-grained region of a review file must be in the project's vocabulary: each one that is not is a
    problem, counted in `report.unknown_regions` so the coordinator can map them and import again."""
    first: dict[str, str] = {}
    for key, row in rows.items():
        region = wilova.row_region(row)
        if region is not None and region not in regions:
            report.unknown_regions[region] = report.unknown_regions.get(region, 0) + 1
            first.setdefault(region, key)
    for region, n in report.unknown_regions.items():
        report.add_problem(
            None,
            "Article_Region",
            f"unknown region {region!r} ({n} record{'s' if n != 1 else ''}): map it to local, standard or other "
            "for this project (on the import's report, or in the project's region vocabulary), then import again",
            file=file,
            record=first[region],
        )
    return not first


# Writing


class _Writer:
    """Collects records and writes them in batches (or, for a dry run, only counts them)."""

    def __init__(self, *, project: Project, report: ImportReport, write: bool, progress: ProgressCallback | None):
        self.project, self.report, self.write, self.progress = project, report, write, progress
        self.batch: list[PairRecord] = []
        self.batch_chars = 0
        # Local title -> where it was first seen (a line number or a record key, and the file's place in the
        # import): the one thing that grows with the file, so kept small.
        self.seen: dict[str, tuple[int | str, int]] = {}
        self.file_names: list[str | None] = []
        self.total_bytes = 0
        self.source_files: dict[str, SourceFile | None] = {}
        self.quality_file: str | None = None  # the name of a WiLoVa _QualityMeta file in this import

    def bytes_read(self, n: int) -> None:
        self.total_bytes += n

    def check_title(self, record: PairRecord, where: int | str, problem: _Problems) -> bool:
        title = record.values["local_title"]
        first = self.seen.get(title)
        if first is not None:
            place, file_index = first
            spot = f"line {place}" if isinstance(place, int) else f"record {place!r}"
            name = self.file_names[file_index]
            problem("local_title", f"{title!r} is already on {spot}{f' of {name}' if name else ''} of this import")
            return False
        if not self.file_names or self.file_names[-1] != problem.file:
            self.file_names.append(problem.file)
        self.seen[title] = (where, len(self.file_names) - 1)
        return True

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
        pairs = [PagePair(project=self.project, created_at=now, **record.values) for record in new]
        try:
            with transaction.atomic():
                plain = not any(record.items or record.screenings or record.source_rows for record in new)
                if pairs and plain and COPY_PAIRS and connection.vendor == "postgresql":
                    _copy_pairs(self.project, new, now)
                else:
                    PagePair.objects.bulk_create(pairs)
        except IntegrityError:
            self.report.add_problem(
                None, "local_title", "another import added some of these pairs at the same time; run this import again"
            )
            return
        screenings, items, item_records = [], [], []
        for pair, record in zip(pairs, new, strict=True):
            for decision, note in record.screenings:
                screenings.append(Screening(pair=pair, decision=decision, note=note, created_at=now))
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
        for item, record in zip(items, item_records, strict=True):
            for position, span in enumerate(record.spans):
                spans.append(EvidenceSpan(item=item, position=position, **span))
            for number, revision in enumerate(record.revisions, start=1):
                revisions.append(QAItemRevision(item=item, number=number, created_at=now, **revision))
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
        begun = set(review_begun(items=QAItem.objects.filter(pair_id__in=pair_ids)))
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


REVIEW_FIELDS = ("id", "pair_id", "status", "version", "question", "answer_standard", "metadata")  # id, pair first
COPY_PAIRS = True  # PostgreSQL COPY for batches of plain pairs: about twice as fast as a multi-row INSERT


def _copy_pairs(project: Project, records: list[PairRecord], now: Any) -> None:
    """Insert pairs with COPY … FROM STDIN (psycopg 3). Their ids stay unknown: only for pairs nothing refers to.

    Rows are built from the records' values and the fields' defaults directly, without model instances.
    """
    fields = [field for field in PagePair._meta.concrete_fields if not field.primary_key]
    defaults: dict[str, Any] = {}
    for model_field in fields:
        if model_field.attname == "project_id":
            defaults["project_id"] = project.pk
        elif model_field.attname in {"created_at", "updated_at"}:
            defaults[model_field.attname] = now
        else:
            defaults[model_field.attname] = model_field.get_default()
    names = [model_field.attname for model_field in fields]
    columns = ", ".join(connection.ops.quote_name(model_field.column) for model_field in fields)
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
            encoded = json.dumps(rows, indent=indent, ensure_ascii=ensure_ascii).encode("utf-8")
            for trailing_newline in (False, True):
                if encoded + (b"\n" if trailing_newline else b"") == data:
                    return {"indent": indent, "ensure_ascii": ensure_ascii, "trailing_newline": trailing_newline}
    return None


def _too_long(name: str, value: str) -> str | None:
    """The message for a lead or full text over its limit (IMPORT_MAX_LEAD_CHARS, IMPORT_MAX_TEXT_CHARS)."""
    if name.endswith(("_title", "_url")):
        return None
    setting = "IMPORT_MAX_TEXT_CHARS" if name.endswith("_text") else "IMPORT_MAX_LEAD_CHARS"
    limit = getattr(settings, setting)
    if len(value) <= limit:
        return None
    return f"is {len(value):,} characters long; the limit is {limit:,} ({setting})"


def _is_url(value: str) -> bool:
    try:
        _url_validator(value)
    except ValidationError:
        return False
    return True


def _unstorable(value: str) -> str | None:
    """Text PostgreSQL cannot store exactly as given."""
    if "\x00" in value:
        return f"contains a NUL character (\\u0000) at position {value.index(chr(0))}, which cannot be stored"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"contains a lone surrogate (\\u{ord(value[error.start]):04x}) at position {error.start}, not a character"
        )
    return None


def _unstorable_json(value: Any) -> str | None:
    if isinstance(value, str):
        return _unstorable(value)
    if isinstance(value, dict):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        children = value
    else:
        return None
    for child in children:
        if message := _unstorable_json(child):
            return message
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
