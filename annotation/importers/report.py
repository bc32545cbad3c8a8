"""What an import reports: each problem and warning by file, line (or record) and field, and the counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_REPORTED_PROBLEMS = 200  # a file that is wrong on every line does not need a million-line report


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


class Problems:
    """Reports problems of one record; `count` says how many so far."""

    def __init__(
        self, report: ImportReport, *, line: int | None = None, file: str | None = None, record: str | None = None
    ) -> None:
        self.report, self.line, self.file, self.record = report, line, file, record

    @property
    def count(self) -> int:
        return self.report.problems_total

    def __call__(self, field_name: str | None, message: str) -> None:
        self.report.add_problem(self.line, field_name, message, file=self.file, record=self.record)
