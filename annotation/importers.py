"""Importing page pairs from files.

One way in for every file: the management command, the demo data and (later)
the API all call these functions. An import is all-or-nothing: every line is
validated, and if anything is wrong nothing is written and the report names
each problem by line and field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, connection, reset_queries, transaction

from annotation.models import PagePair, Project

BATCH_ROWS = 1000
BATCH_CHARS = 8_000_000  # flush earlier when pairs carry long full texts, so memory stays flat
MAX_REPORTED_PROBLEMS = 200  # a file that is wrong on every line does not need a million-line report
MAX_INT = 2_147_483_647  # PositiveIntegerField on PostgreSQL

REQUIRED_TEXT = ("local_title", "standard_title", "local_lead", "standard_lead")
REQUIRED_URL = ("local_url", "standard_url")
OPTIONAL_TEXT = ("local_text", "standard_text")
OPTIONAL_LENGTH = ("local_text_length", "standard_text_length")
KNOWN_FIELDS = frozenset((*REQUIRED_TEXT, *REQUIRED_URL, *OPTIONAL_TEXT, *OPTIONAL_LENGTH, "metadata"))
MAX_LENGTHS = {"local_title": 500, "standard_title": 500, "local_url": 1000, "standard_url": 1000}

_url_validator = URLValidator(schemes=["http", "https"])


@dataclass(frozen=True)
class ImportProblem:
    line: int | None  # 1-based; None for a problem with the whole file
    field: str | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "message": self.message}

    def __str__(self) -> str:
        where = [f"line {self.line}" if self.line is not None else "file"]
        if self.field:
            where.append(f"field {self.field}")
        return f"{', '.join(where)}: {self.message}"


@dataclass
class ImportReport:
    """What an import did, or (with `dry_run`) would do.

    `created` and `already_present` count pairs; when the import is refused
    (`ok` is False) nothing was written and `created` is 0.
    """

    dry_run: bool = False
    lines: int = 0  # non-blank lines read
    created: int = 0
    already_present: int = 0
    problems: list[ImportProblem] = field(default_factory=list)
    problems_total: int = 0

    @property
    def ok(self) -> bool:
        return self.problems_total == 0

    def add_problem(self, line: int | None, field_name: str | None, message: str) -> None:
        self.problems_total += 1
        if len(self.problems) < MAX_REPORTED_PROBLEMS:
            self.problems.append(ImportProblem(line, field_name, message))

    def summary(self) -> str:
        if not self.ok:
            return (
                f"Import refused: {self.problems_total} problem{'s' if self.problems_total != 1 else ''} "
                f"in {self.lines} line{'s' if self.lines != 1 else ''}; nothing was imported."
            )
        verb = "would be created" if self.dry_run else "created"
        prefix = "Dry run, nothing written: " if self.dry_run else ""
        pairs = f"{self.created} pair{'s' if self.created != 1 else ''}"
        return f"{prefix}{pairs} {verb}, {self.already_present} already present."

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "lines": self.lines,
            "created": self.created,
            "already_present": self.already_present,
            "problems": [problem.as_dict() for problem in self.problems],
            "problems_total": self.problems_total,
        }


class _Refused(Exception):
    """Raised inside the import transaction to roll it back."""


def pairs_import_jsonl(
    *,
    project: Project,
    path: str | os.PathLike[str],
    dry_run: bool = False,
    source: str = PagePair.Source.JSONL,
) -> ImportReport:
    """Import page pairs from a JSONL file, one pair per line, all or nothing.

    The file is streamed: pairs go to the database in batches inside one
    transaction, which is rolled back if any line turns out to be wrong.
    Titles already in the project are counted as already present and left as
    they are, so importing the same file twice creates nothing new.
    """
    report = ImportReport(dry_run=dry_run)
    path = Path(path)
    try:
        size = path.stat().st_size
        stream = path.open("rb")
    except OSError as error:
        report.add_problem(None, None, f"cannot read {path}: {error.strerror or error}")
        return report
    with stream:
        _import_file(stream, size=size, project=project, report=report, source=source)
    if not report.ok:
        report.created = 0
        report.already_present = 0
    return report


def _import_file(stream: BinaryIO, *, size: int, project: Project, report: ImportReport, source: str) -> None:
    limit = settings.IMPORT_MAX_BYTES
    if size > limit:
        report.add_problem(
            None,
            None,
            f"the file is {size:,} bytes, more than the import limit of {limit:,} bytes (IMPORT_MAX_BYTES); "
            "split it into smaller files",
        )
        return
    if report.dry_run:
        _import_stream(stream, project=project, report=report, write=False, source=source, limit=limit)
        return
    try:
        with transaction.atomic():
            _import_stream(stream, project=project, report=report, write=True, source=source, limit=limit)
            if not report.ok:
                raise _Refused
    except _Refused:
        pass


def _read_lines(stream: BinaryIO, report: ImportReport, limit: int) -> Iterator[tuple[int, str]]:
    """Yield (line number, decoded line) for each non-blank line; report undecodable lines."""
    offset = 0
    for number, raw in enumerate(stream, start=1):
        line_offset = offset
        offset += len(raw)
        if offset > limit:  # the file grew while we read it
            report.add_problem(number, None, f"the file passes the import limit of {limit:,} bytes here")
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
            )
            continue
        if text.strip():
            report.lines += 1
            # Without the line break a truncated line's JSON error points at its end, not at "line 2, column 1".
            yield number, text.rstrip("\r\n")


def _import_stream(
    stream: BinaryIO, *, project: Project, report: ImportReport, write: bool, source: str, limit: int
) -> None:
    seen: dict[str, int] = {}  # local title -> first line; the one thing that grows with the file
    batch: list[PagePair] = []
    batch_chars = 0
    for number, text in _read_lines(stream, report, limit):
        values = _parse_line(number, text, report)
        if values is None:
            continue
        title = values["local_title"]
        if title in seen:
            report.add_problem(number, "local_title", f"{title!r} is already on line {seen[title]} of this file")
            continue
        seen[title] = number
        if not report.ok and write:
            continue  # the import is refused anyway; keep validating, stop touching the database
        batch.append(PagePair(project=project, source=source, **values))
        batch_chars += sum(len(values[name]) for name in ("local_lead", "standard_lead", *OPTIONAL_TEXT))
        if len(batch) >= BATCH_ROWS or batch_chars >= BATCH_CHARS:
            _flush(batch, project=project, report=report, write=write)
            batch, batch_chars = [], 0
    if batch and (report.ok or not write):
        _flush(batch, project=project, report=report, write=write)


def _flush(batch: list[PagePair], *, project: Project, report: ImportReport, write: bool) -> None:
    titles = [pair.local_title for pair in batch]
    present = set(
        PagePair.objects.filter(project=project, local_title__in=titles).values_list("local_title", flat=True)
    )
    new = [pair for pair in batch if pair.local_title not in present]
    report.already_present += len(present)
    if write and new:
        try:
            with transaction.atomic():
                PagePair.objects.bulk_create(new)
        except IntegrityError:
            report.add_problem(
                None,
                "local_title",
                "another import added some of these pairs at the same time; run this import again",
            )
            return
    report.created += len(new)
    if settings.DEBUG and not connection.force_debug_cursor:
        # With DEBUG on Django keeps every statement's SQL, inserted texts included: memory would grow with the file.
        reset_queries()


def _parse_line(number: int, text: str, report: ImportReport) -> dict[str, Any] | None:
    """Validate one line; return the PagePair field values, or None after reporting every problem."""
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
        data = json.loads(text, object_pairs_hook=keep_pairs)
    except json.JSONDecodeError as error:
        report.add_problem(number, None, f"invalid JSON: {error.msg} at column {error.colno}")
        return None
    if not isinstance(data, dict):
        report.add_problem(number, None, f"must be a JSON object, not {_json_type(data)}")
        return None
    problems_before = report.problems_total
    for key in dict.fromkeys(repeated[-1]):
        report.add_problem(number, key, "appears more than once on this line")
    for key in dict.fromkeys(key for keys in repeated[:-1] for key in keys):
        report.add_problem(number, "metadata", f"an object inside repeats the key {key!r}")
    for key in sorted(set(data) - KNOWN_FIELDS):
        report.add_problem(number, key, "unknown field; put extra information under metadata")

    values: dict[str, Any] = {}
    for name in (*REQUIRED_TEXT, *REQUIRED_URL):
        value = data.get(name)
        if value is None:
            report.add_problem(number, name, "is missing")
        elif not isinstance(value, str):
            report.add_problem(number, name, f"must be a string, not {_json_type(value)}")
        elif not value.strip():
            report.add_problem(number, name, "is empty")
        elif name in MAX_LENGTHS and len(value) > MAX_LENGTHS[name]:
            report.add_problem(number, name, f"is {len(value)} characters long; the limit is {MAX_LENGTHS[name]}")
        elif message := _unstorable(value):
            report.add_problem(number, name, message)
        elif name in REQUIRED_URL and not _is_url(value):
            report.add_problem(number, name, f"{value!r} is not an http(s) URL")
        else:
            values[name] = value
    for name in OPTIONAL_TEXT:
        value = data.get(name)
        if value is None:
            values[name] = ""
        elif not isinstance(value, str):
            report.add_problem(number, name, f"must be a string, not {_json_type(value)}")
        elif message := _unstorable(value):
            report.add_problem(number, name, message)
        else:
            values[name] = value
    for name in OPTIONAL_LENGTH:
        value = data.get(name)
        if value is None:
            text_value = values.get(name.removesuffix("_length"))
            values[name] = len(text_value) if text_value else None
        elif not isinstance(value, int) or isinstance(value, bool):
            report.add_problem(number, name, f"must be a whole number of code points, not {_json_type(value)}")
        elif not 0 <= value <= MAX_INT:
            report.add_problem(number, name, f"must be between 0 and {MAX_INT}")
        else:
            values[name] = value
    metadata = data.get("metadata")
    if metadata is None:
        values["metadata"] = {}
    elif not isinstance(metadata, dict):
        report.add_problem(number, "metadata", f"must be an object, not {_json_type(metadata)}")
    elif message := _unstorable_json(metadata):
        report.add_problem(number, "metadata", message)
    else:
        values["metadata"] = metadata

    if report.problems_total > problems_before:
        return None
    values["local_lead_length"] = len(values["local_lead"])
    values["standard_lead_length"] = len(values["standard_lead"])
    return values


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
