"""The researcher's calculator: agreement statistics for a CSV of ratings from anywhere.

The management command, the page and the API all call `calculator_compute`.
The file is long format with a header: `unit,rater,value` (any order, more
columns allowed and ignored unless one is named as the stratum column). A bad
row stops everything with an error naming its line and column.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from django.conf import settings

from common import csvfile
from common.errors import InvalidInput
from review.agreement import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_SEED,
    LEVELS,
    AgreementInputError,
    AgreementSummary,
    Level,
    agreement_summary,
)

REQUIRED_COLUMNS = ("unit", "rater", "value")
MAX_PAGE_ROWS = 20_000  # what the page and the API compute within a request
MAX_FIELD_CHARS = 1000


@dataclass(frozen=True)
class Ratings:
    """Judgments read from a file, with the line each came from and, if asked, each unit's stratum."""

    judgments: list[tuple[str, str, Any]]
    lines: list[int]
    strata: dict[str, str] | None


def _problem(message: str, *, line: int | None = None, column: str | None = None) -> InvalidInput:
    where = []
    if line is not None:
        where.append(f"line {line}")
    if column is not None:
        where.append(f"column '{column}'")
    prefix = ", ".join(where)
    text = f"{prefix}: {message}" if prefix else message
    return InvalidInput(text, field="file", details={"file": [text]})


def _numeric_values(level: str, categories: list[Any] | None) -> bool:
    if level in ("interval", "ratio"):
        return True
    if level == "ordinal":
        return categories is None or all(isinstance(category, float) for category in categories)
    return False


def categories_parse(text: str | None, *, level: str) -> list[Any] | None:
    """A comma-separated scale ("1,2,3,4,5" or "low,mid,high") as the values the ratings will hold."""
    if text is None or not text.strip():
        return None
    items = [item.strip() for item in text.split(",")]
    if any(not item for item in items):
        raise InvalidInput("categories: an empty category; separate the values with single commas.", field="categories")
    numbers = []
    for item in items:
        try:
            numbers.append(float(item))
        except ValueError:
            if level in ("interval", "ratio"):
                raise InvalidInput(
                    f"categories: {item!r} is not a number (level {level}).", field="categories"
                ) from None
            return items
    return numbers if level != "nominal" else items


def _text_lines(file: IO[bytes] | IO[str]) -> Iterator[str]:
    if isinstance(file.read(0), str):
        yield from file  # type: ignore[misc]
    else:
        yield from codecs.iterdecode(file, "utf-8-sig")  # type: ignore[arg-type]


def ratings_read_csv(
    *,
    file: IO[bytes] | IO[str],
    level: str,
    categories: list[Any] | None = None,
    strata_column: str | None = None,
    max_rows: int | None = None,
) -> Ratings:
    if level not in LEVELS:
        raise InvalidInput(f"level: use one of {', '.join(LEVELS)}.", field="level")
    reader = csvfile.csv_reader(_text_lines(file))
    numeric = _numeric_values(level, categories)
    try:
        header = next(reader, None)
        if header is None:
            raise _problem("The file is empty; it needs a header line: unit,rater,value.")
        columns = [name.strip().lower() for name in header]
        wanted = [*REQUIRED_COLUMNS, *([strata_column.strip().lower()] if strata_column else [])]
        missing = [name for name in wanted if name not in columns]
        if missing:
            raise _problem(
                f"the header has no column {', '.join(repr(m) for m in missing)}; "
                f"it needs {', '.join(REQUIRED_COLUMNS)} (found {', '.join(repr(c) for c in columns)})"
                f"{csvfile.separator_hint(header, ',')}.",
                line=1,
            )
        repeated = sorted({name for name in wanted if columns.count(name) > 1})
        if repeated:
            raise _problem(f"the header names {', '.join(repr(r) for r in repeated)} more than once.", line=1)
        position = {name: columns.index(name) for name in wanted}
        width = max(position.values()) + 1
        judgments: list[tuple[str, str, Any]] = []
        lines: list[int] = []
        strata: dict[str, str] | None = {} if strata_column else None
        stratum_lines: dict[str, int] = {}
        seen: dict[tuple[str, str], int] = {}
        for row in reader:
            line = reader.line_num
            if not row or not any(cell.strip() for cell in row):
                continue
            if max_rows is not None and len(judgments) >= max_rows:
                raise _problem(
                    f"The file has more than {max_rows:,} ratings. The page and the API compute files up to "
                    f"{max_rows:,} ratings; use `manage.py agreement_compute --ratings FILE` for larger ones "
                    "(background computation comes with the project reports)."
                )
            if len(row) < width:
                raise _problem(f"has {len(row)} column(s); the header has {len(columns)}.", line=line)
            cells = {name: row[index].strip() for name, index in position.items()}
            for name, cell in cells.items():
                if name in REQUIRED_COLUMNS and not cell:
                    hint = " (leave the row out for a missing judgment)" if name == "value" else ""
                    raise _problem(f"is empty{hint}.", line=line, column=name)
                if len(cell) > MAX_FIELD_CHARS:
                    raise _problem(f"is longer than {MAX_FIELD_CHARS} characters.", line=line, column=name)
            unit, rater, raw = cells["unit"], cells["rater"], cells["value"]
            value: Any = raw
            if numeric:
                try:
                    value = float(raw)
                except ValueError:
                    raise _problem(f"{raw!r} is not a number (level {level}).", line=line, column="value") from None
            earlier = seen.setdefault((unit, rater), line)
            if earlier != line:
                raise _problem(
                    f"rater {rater!r} already judged unit {unit!r} on line {earlier}; each rater judges a unit once.",
                    line=line,
                    column="rater",
                )
            if strata is not None and strata_column:
                label = cells[strata_column.strip().lower()]
                known = strata.setdefault(unit, label)
                if known != label:
                    raise _problem(
                        f"unit {unit!r} is in stratum {known!r} on line {stratum_lines[unit]} but {label!r} here.",
                        line=line,
                        column=strata_column,
                    )
                stratum_lines.setdefault(unit, line)
            judgments.append((unit, rater, value))
            lines.append(line)
    except UnicodeDecodeError:
        raise _problem("The file is not UTF-8 text.", line=reader.line_num + 1) from None
    except csv.Error as error:
        raise _problem(f"is not valid CSV ({error}).", line=reader.line_num) from None
    if not judgments:
        raise _problem("The file has a header but no ratings.")
    return Ratings(judgments=judgments, lines=lines, strata=strata)


def calculator_compute(
    *,
    file: IO[bytes] | IO[str],
    level: str,
    categories: str | list[Any] | None = None,
    strata_column: str | None = None,
    options: int | None = None,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    max_rows: int | None = None,
) -> AgreementSummary:
    """Read a ratings CSV and compute every agreement statistic; bad input raises `InvalidInput` naming line/column."""
    size, limit = getattr(file, "size", None), settings.CALCULATOR_MAX_BYTES
    if max_rows is not None and size is not None and size > limit:  # the page and the API, not the command
        raise InvalidInput(
            f"The file is {size:,} bytes, more than the calculator's limit of {limit:,} bytes (CALCULATOR_MAX_BYTES); "
            "use `manage.py agreement_compute --ratings FILE` for larger files.",
            field="file",
        )
    scale = categories_parse(categories, level=level) if isinstance(categories, str | type(None)) else categories
    ratings = ratings_read_csv(
        file=file, level=level, categories=scale, strata_column=strata_column or None, max_rows=max_rows
    )
    level_: Level = level  # type: ignore[assignment]  # checked by ratings_read_csv
    try:
        return agreement_summary(
            ratings.judgments,
            level_,
            strata=ratings.strata,
            categories=scale,
            options=options,
            bootstrap=bootstrap,
            seed=seed,
        )
    except AgreementInputError as error:
        if error.record is None:
            raise InvalidInput(error.message, field=error.field or "file") from None
        message = error.message.split(": ", 1)[-1]
        raise _problem(message, line=ratings.lines[error.record], column=error.field) from None
