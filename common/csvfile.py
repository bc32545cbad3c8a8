"""Reading CSV and TSV files people upload: the one reader of every import, saying what to do when it cannot.

- Text must be UTF-8; a file in a legacy encoding (Windows-1256 from an Arabic Excel, Windows-1252) is refused
  with how to save it as UTF-8.
- A long cell is read, not a crash: Python's csv module stops at 131,072 characters per cell with
  "field larger than field limit"; the limit is raised to what an upload may hold, and each import checks
  its own fields' lengths, naming the row and the column.
- A first line missing the expected columns that looks separated by another character (`;` from a European
  spreadsheet, a tab) says so and how to fix it.
- A row the csv module cannot read is refused with its line.

Problems are raised as `CsvProblem(message, line, column)`; each import reports them its own way.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator
from typing import Any

# Characters in one cell the csv module will read (a process-wide setting of the module, set by `csv_reader` where a
# file is read, so no import order decides whether a long cell is read). Uploads are capped in bytes before they
# are read (IMPORT_MAX_BYTES and each import's own cap), so a cell cannot be larger than that.
CELL_READ_LIMIT = 256 * 1024 * 1024

UTF8_REMEDY = (
    "save it as UTF-8 and upload it again (Excel: Save As, “CSV UTF-8”; LibreOffice: Character set “Unicode (UTF-8)”)"
)
SEPARATORS = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "vertical bars"}
_ARABIC = re.compile(r"[\u0600-\u06ff]")


class CsvProblem(Exception):
    """What is wrong with an uploaded CSV/TSV file, where (`line`, `column` when known), and what to do."""

    def __init__(self, message: str, *, line: int | None = None, column: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def decode(data: bytes) -> str:
    """The file's text (UTF-8, with or without a byte-order mark), or CsvProblem saying how to make it UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        guess = "a legacy encoding such as Windows-1252"
        if _ARABIC.search(data.decode("cp1256", errors="replace")):
            guess = "Windows-1256 (Arabic), as Excel saves Arabic text"
        line = data[: error.start].count(b"\n") + 1
        raise CsvProblem(
            f"the file is not UTF-8 text (line {line}, byte {error.start}); it looks like {guess}: {UTF8_REMEDY}",
            line=line,
        ) from None


def csv_reader(lines: Iterable[str], *, delimiter: str = ",") -> Any:  # csv.reader's type is not public
    """`csv.reader` over `lines` that reads cells up to CELL_READ_LIMIT: a long cell reaches the import's own
    length check (row and field named) instead of the csv module's "field larger than field limit". Every CSV
    this project reads goes through here."""
    csv.field_size_limit(CELL_READ_LIMIT)
    return csv.reader(lines, delimiter=delimiter)


def rows(text: str, *, delimiter: str = ",") -> Iterator[tuple[int, list[str]]]:
    """(line where the row ends, its cells) for every row, the first line too; CsvProblem for a row that cannot be
    read. A cell may span lines (quoted newlines), so the line is the file's, not the row's count."""
    reader = csv_reader(io.StringIO(text, newline=""), delimiter=delimiter)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            line = reader.line_num or 1
            raise CsvProblem(f"line {line} cannot be read as CSV ({error}); check its quotes", line=line) from None
        yield reader.line_num, row


def separator_hint(first_line: Iterable[str], delimiter: str) -> str:
    """When a first line that lacks the expected columns looks separated by another character, what to do."""
    text = delimiter.join(first_line)
    for separator, name in SEPARATORS.items():
        if separator != delimiter and text.count(separator) >= 1 and text.count(delimiter) == 0:
            return (
                f"; the first line looks separated by {name}, not {SEPARATORS.get(delimiter, repr(delimiter))}: "
                f"save the file with {SEPARATORS.get(delimiter, repr(delimiter))} between the columns"
            )
    return ""


def dict_rows(
    text: str, *, needed: Iterable[str], delimiter: str = ","
) -> tuple[list[str], Iterator[tuple[int, dict[str | None, Any]]]]:
    """The header (names stripped) and (line, {column: cell}) for every other row, as csv.DictReader gives them
    (extra cells under None, missing ones None). CsvProblem when the file is empty or the header lacks a column
    of `needed`, with the separator hint."""
    found = rows(text, delimiter=delimiter)
    first = next(found, None)
    if first is None or not any(cell.strip() for cell in first[1]):
        raise CsvProblem("the file is empty: its first line must name the columns", line=1)
    header = [name.strip() for name in first[1]]
    missing = [name for name in needed if name not in header]
    if missing:
        raise CsvProblem(
            f"the first line must name the column(s) {', '.join(missing)}{separator_hint(first[1], delimiter)}",
            line=1,
            column=missing[0],
        )

    def records() -> Iterator[tuple[int, dict[str | None, Any]]]:
        for line, cells in found:
            record: dict[str | None, Any] = dict(zip(header, cells, strict=False))
            if len(cells) > len(header):
                record[None] = cells[len(header) :]
            for name in header[len(cells) :]:
                record[name] = None
            yield line, record

    return header, records()
