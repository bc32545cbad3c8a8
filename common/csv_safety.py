"""CSV that is safe to open in a spreadsheet: the one way localqa writes CSV.

A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is read by
Excel, LibreOffice and Google Sheets as a formula (`=HYPERLINK(...)`, `@SUM(...)`,
`-2+3`): a rater or stratum name from an uploaded file, a question or a comment
could run one on the reader's machine. Such text cells get a leading `'`, which
spreadsheets show as nothing and which turns the cell into plain text.

Numbers stay numbers: an `int`/`float`/`Decimal` (and a string that is exactly a
number, `-0.25`, `+3`, `1e-5`) cannot be a formula, and a negative kappa must stay
sortable. `#ERROR!` (found in the study's own data, left by a spreadsheet formula
that failed) starts with `#`, which no spreadsheet evaluates: it stays as it is.

Every CSV writer goes through `csv_writer` (tests/security/test_csv_safety.py
checks the code base). No CSV that localqa writes is read back byte for byte by
an importer, so no writer is exempt; one that ever must be (a file meant for
re-import) belongs in that test's `BYTE_EXACT` list with the reason.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_safe(value: Any) -> Any:
    """The cell as a spreadsheet should show it: numbers as they are, formula-like text quoted with `'`."""
    if value is None or isinstance(value, bool | int | float | Decimal):
        return value
    text = str(value)
    if text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


class SpreadsheetSafeWriter:
    """`csv.writer` with every cell passed through `spreadsheet_safe`."""

    def __init__(self, stream: Any, **fmtparams: Any) -> None:
        self._writer = csv.writer(stream, **fmtparams)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([spreadsheet_safe(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(stream: Any, **fmtparams: Any) -> SpreadsheetSafeWriter:
    return SpreadsheetSafeWriter(stream, **fmtparams)
