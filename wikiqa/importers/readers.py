"""Reading rows: JSONL lines, CSV rows and WiLoVa release files, each turned into checked pair records."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from annotation import wilova
from annotation.importers.report import ImportReport, Problems
from annotation.importers.sources import ImportSource
from annotation.models import Project
from annotation.wilova import PairRecord
from common import csvfile, jsontext
from common.text import unstorable
from wikiqa.importers.checks import (
    NON_FINITE_MESSAGE,
    OPTIONAL_LENGTH,
    OPTIONAL_TEXT,
    REQUIRED_TEXT,
    REQUIRED_URL,
    check_regions,
    check_row_sizes,
    parse_json_object,
    parse_record,
)
from wikiqa.importers.writer import Writer

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

# Reading JSONL


def _read_lines(
    stream: BinaryIO, report: ImportReport, limit: int, label: str | None, writer: Writer
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


def jsonl_records(
    stream: BinaryIO, *, report: ImportReport, label: str | None, limit: int, writer: Writer
) -> Iterator[PairRecord]:
    for number, text in _read_lines(stream, report, limit, label, writer):
        problem = Problems(report, line=number, file=label)
        data = parse_json_object(text, problem)
        if data is None:
            continue
        record = parse_record(data, problem, writer.project)
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

    def __init__(self, stream: BinaryIO, writer: Writer) -> None:
        self.stream = stream
        self.writer = writer

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer)  # the buffered reader passes a memoryview of bytes already
        data = self.stream.read(len(view))
        view[: len(data)] = data
        self.writer.bytes_read(len(data))
        return len(data)


def csv_records(
    stream: BinaryIO, *, report: ImportReport, label: str | None, limit: int, writer: Writer
) -> Iterator[PairRecord]:
    text = io.TextIOWrapper(io.BufferedReader(_CountingReader(stream, writer)), encoding="utf-8-sig", newline="")
    reader = csvfile.csv_reader(text)
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
                report.add_problem(1, name, f"column is missing{csvfile.separator_hint(header, ',')}", file=label)
        if unknown or repeated or not report.ok:
            return
        line = reader.line_num + 1
        for row in reader:
            number, line = line, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            report.lines += 1
            problem = Problems(report, line=number, file=label)
            if len(row) != len(header):
                problem(None, f"has {len(row)} cells; the header has {len(header)}")
                continue
            record = _csv_record(dict(zip(header, row, strict=True)), problem, writer.project)
            if record is not None and writer.check_title(record, number, problem):
                yield record
    except UnicodeDecodeError as error:
        report.add_problem(
            line, None, f"not valid UTF-8 (byte 0x{error.object[error.start]:02x}); {csvfile.UTF8_REMEDY}", file=label
        )
    except csv.Error as error:
        report.add_problem(line, None, f"malformed CSV: {error}", file=label)


def _csv_record(cells: dict[str, str], problem: Problems, project: Project) -> PairRecord | None:
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
    return parse_record(data, problem, project)


# Reading WiLoVa release files


def wilova_import(plan: list[tuple[ImportSource, str, int]], *, writer: Writer, multiple: bool) -> None:
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
            rows = jsontext.loads(data.decode("utf-8"))
        except jsontext.NonFiniteNumber as error:
            for where, token in error.found:  # a row's key, then where in the row
                row_key = str(where[0]) if where else None
                path = jsontext.path_text(where[1:]) or None
                report.add_problem(None, path, NON_FINITE_MESSAGE.format(token=token), file=label, record=row_key)
            continue
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
        files[role] = (item, data, rows)
    if not report.ok:
        return
    base = files.get("base", (None, b"", {}))[2]
    quality = files.get("quality", (None, b"", {}))[2]
    regions = dict(project.region_vocabulary or {})
    if "quality" in files and not check_regions(quality, regions, report=report, file=files["quality"][0].name):
        return
    writer.quality_file = files["quality"][0].name if "quality" in files else None
    keys = list(dict.fromkeys([*base, *quality]))
    for role, (item, data, rows) in files.items():
        writer.source_files[role] = writer.source_file(item, data, rows, role)
    positions = {role: {key: index for index, key in enumerate(rows)} for role, (_i, _d, rows) in files.items()}
    for key in keys:
        report.lines += 1
        base_row, quality_row = base.get(key), quality.get(key)
        if message := unstorable(key):  # the key is the standard title; the report names it as it can be stored
            shown = key.encode("utf-8", "backslashreplace").decode()
            name = files["base" if base_row is not None else "quality"][0].name
            Problems(report, file=name, record=shown)(None, f"the row's key (the standard title) {message}")
            continue
        ok = True
        for role, row in (("base", base_row), ("quality", quality_row)):
            if row is None:
                continue
            name = files[role][0].name
            problem = Problems(report, file=name, record=key)

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
                and check_row_sizes(row, problem)
                and ok
            )
        if not ok:
            continue
        record = wilova.row_record(key, base_row, quality_row, regions=regions)
        problem = Problems(report, file=files["base" if base_row is not None else "quality"][0].name, record=key)
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


def _only_new(warn: Callable[[str | None, str], None], base_row: dict[str, Any]) -> Callable[[str | None, str], None]:
    """A warning callback for a quality row that stays silent on fields its base row already warned about."""

    def quality_warn(field_name: str | None, message: str) -> None:
        if field_name is None or field_name not in base_row:
            warn(field_name, message)

    return quality_warn
