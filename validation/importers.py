"""Reading files into a validation project: collected QA pairs, seed-query templates, judged domains.

Every reader reports bad input with `annotation.importers.report.ImportReport` (file,
line, field, message) and writes nothing when anything is wrong.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from annotation.importers.report import ImportReport
from annotation.importers.sources import ImportSource
from annotation.languages import UnknownLanguage, get_language
from annotation.lifecycle import MAX_TEXT_FIELD
from common import csvfile, jsontext
from validation.models import DomainLabel
from validation.text import domain_of

ITEM_FORMATS = ("auto", "tsv", "csv", "jsonl")
# Column names as the collection framework and common spreadsheets spell them → our field.
ALIASES = {
    "question": "question",
    "answer": "answer",
    "answer_urls": "source_urls",
    "source_urls": "source_urls",
    "source_url": "source_urls",
    "urls": "source_urls",
    "url": "source_urls",
    "location": "location",
    "language": "language",
    "topic": "topic",
    "category": "topic",
    "input_query": "input_query",
    "query": "input_query",
    "data_id": "data_id",
    "id": "data_id",
    "question_type": "question_type",
    "alternative_answer": "alternative_answer",
}
MAX_SHORT = {"data_id": 200, "topic": 100, "question_type": 100, "location": 200}
_SPLIT_URLS = re.compile(r"[\s,;|]+")
_url_validator = URLValidator(schemes=["http", "https"])


@dataclass
class CollectedPair:
    line: int
    question: str
    answer: str
    source_urls: list[str] = field(default_factory=list)
    location: str = ""
    language: str = ""
    topic: str = ""
    input_query: str = ""
    data_id: str = ""
    question_type: str = ""
    alternative_answer: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def domain(self) -> str:
        return domain_of(self.source_urls[0]) if self.source_urls else ""


def detect_item_format(name: str) -> str | None:
    lower = name.lower()
    for suffix, fmt in ((".tsv", "tsv"), (".csv", "csv"), (".jsonl", "jsonl"), (".ndjson", "jsonl")):
        if lower.endswith(suffix):
            return fmt
    return None


def _decode(source: ImportSource, report: ImportReport) -> str | None:
    try:
        return csvfile.decode(source.read())
    except csvfile.CsvProblem as problem:
        report.add_problem(problem.line, problem.column, problem.message, file=source.name)
        return None


def _rows(text: str, fmt: str, source: ImportSource, report: ImportReport) -> Iterator[tuple[int, dict[str, Any]]]:
    if fmt == "jsonl":
        for line, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                data = jsontext.loads(raw)
            except RecursionError:  # thousands of nested brackets
                report.add_problem(line, None, jsontext.TOO_DEEP_MESSAGE, file=source.name)
                continue
            except jsontext.NonFiniteNumber as error:
                report.add_problem(line, error.key or None, f"{error.msg}; write null or a number", file=source.name)
                continue
            except json.JSONDecodeError as error:
                report.add_problem(line, None, f"not valid JSON: {error.msg} (column {error.colno})", file=source.name)
                continue
            if not isinstance(data, dict):
                report.add_problem(line, None, "must be a JSON object", file=source.name)
                continue
            if jsontext.deeper_than(data):
                report.add_problem(line, None, jsontext.TOO_DEEP_MESSAGE, file=source.name)
                continue
            yield line, data
        return
    delimiter = "\t" if fmt == "tsv" else ","
    found = csvfile.rows(text, delimiter=delimiter)
    try:
        first = next(found, None)
        if first is None or not any(cell.strip() for cell in first[1]):
            report.add_problem(None, None, "the file is empty: it needs a header line", file=source.name)
            return
        header = [name.strip() for name in first[1]]
        named = {ALIASES.get(name.lower()) for name in header}
        if not {"question", "answer"} <= named:
            hint = csvfile.separator_hint(first[1], delimiter)
            report.add_problem(
                1, None, f"the first line must name a question and an answer column{hint}", file=source.name
            )
            return
        for line, row in found:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                report.add_problem(
                    line, None, f"has {len(row)} columns where the header has {len(header)}", file=source.name
                )
                continue
            yield line, dict(zip(header, row, strict=True))
    except csvfile.CsvProblem as problem:
        report.add_problem(problem.line, problem.column, problem.message, file=source.name)


def parse_urls(value: Any) -> list[str]:
    """A list, a JSON or Python list literal (as pandas writes lists to TSV), or URLs separated by spaces/commas."""
    if isinstance(value, list):
        return [str(url).strip() for url in value if str(url).strip()]
    text = str(value or "").strip()
    if text.startswith("["):
        for parse in (json.loads, ast.literal_eval):
            try:
                parsed = parse(text)
            except (ValueError, SyntaxError, RecursionError, MemoryError):  # not a list literal we can read
                continue
            if isinstance(parsed, list):
                return [str(url).strip() for url in parsed if str(url).strip()]
    return [url for url in _SPLIT_URLS.split(text) if url]


def read_collected_pairs(
    source: ImportSource, *, fmt: str, default_language: str, report: ImportReport
) -> list[CollectedPair]:
    """Every record of the file, checked; problems go to `report` (and the caller writes nothing)."""
    if fmt == "auto":
        detected = detect_item_format(source.name)
        if detected is None:
            report.add_problem(
                None, None, "cannot tell the format from the name: use .tsv, .csv or .jsonl", file=source.name
            )
            return []
        fmt = detected
    if fmt not in ITEM_FORMATS:
        report.add_problem(None, "format", f"unknown format {fmt!r}: use tsv, csv or jsonl", file=source.name)
        return []
    text = _decode(source, report)
    if text is None:
        return []
    pairs: list[CollectedPair] = []
    for line, raw in _rows(text, fmt, source, report):
        report.lines += 1
        pair = _collected_pair(line, raw, default_language, source, report)
        if pair is not None:
            pairs.append(pair)
    if not pairs and report.ok:
        report.add_problem(None, None, "the file holds no QA pairs", file=source.name)
    return pairs


def _collected_pair(
    line: int, raw: dict[str, Any], default_language: str, source: ImportSource, report: ImportReport
) -> CollectedPair | None:
    before = report.problems_total

    def problem(name: str | None, message: str) -> None:
        report.add_problem(line, name, message, file=source.name)

    values: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    columns: dict[str, str] = {}
    for key, value in raw.items():
        target = ALIASES.get(str(key).strip().lower())
        if target is None or target in values:
            metadata[str(key)] = value
            continue
        values[target] = value
        columns[target] = str(key)
    for required in ("question", "answer"):
        value = values.get(required)
        if not isinstance(value, str) or not value.strip():
            problem(columns.get(required, required), "is missing or empty")
    for name in ("question", "answer", "alternative_answer", "input_query"):
        value = values.get(name)
        if value is not None and not isinstance(value, str):
            problem(columns.get(name, name), "must be text")
        elif isinstance(value, str) and len(value) > MAX_TEXT_FIELD:
            problem(columns.get(name, name), f"is longer than {MAX_TEXT_FIELD} characters")
    for name, limit in MAX_SHORT.items():
        value = values.get(name)
        if value is not None and not isinstance(value, str | int):
            problem(columns.get(name, name), "must be text")
        elif value is not None and len(str(value)) > limit:
            problem(columns.get(name, name), f"is longer than {limit} characters")
    urls = parse_urls(values.get("source_urls"))
    for index, url in enumerate(urls):
        try:
            _url_validator(url)
        except (ValidationError, ValueError):  # ValueError: a malformed address, e.g. an unclosed [IPv6 bracket
            problem(f"{columns.get('source_urls', 'source_urls')}[{index}]", f"{url!r} is not an http(s) URL")
    language = str(values.get("language") or "").strip() or default_language
    try:
        language = get_language(language).code
    except UnknownLanguage as error:
        problem(columns.get("language", "language"), str(error))
    if report.problems_total > before:
        return None
    return CollectedPair(
        line=line,
        question=values["question"].strip(),
        answer=values["answer"].strip(),
        source_urls=urls,
        location=str(values.get("location") or "").strip(),
        language=language,
        topic=str(values.get("topic") or "").strip(),
        input_query=str(values.get("input_query") or "").strip(),
        data_id=str(values.get("data_id") or "").strip(),
        question_type=str(values.get("question_type") or "").strip(),
        alternative_answer=str(values.get("alternative_answer") or "").strip(),
        metadata=metadata,
    )


def read_seed_rows(source: ImportSource, report: ImportReport) -> list[tuple[str, str]]:
    """`topic,query` rows (the collection tool's CSV, with or without [LOCATION])."""
    text = _decode(source, report)
    if text is None:
        return []
    rows: list[tuple[str, str]] = []
    try:
        _, records = csvfile.dict_rows(text, needed=("query", "topic"))
        for line, row in records:
            report.lines += 1
            topic, query = (row.get("topic") or "").strip(), (row.get("query") or "").strip()
            if not topic:
                report.add_problem(line, "topic", "is empty", file=source.name)
            elif len(topic) > 100:
                report.add_problem(line, "topic", "is longer than 100 characters", file=source.name)
            if not query:
                report.add_problem(line, "query", "is empty", file=source.name)
            elif len(query) > MAX_TEXT_FIELD:
                report.add_problem(line, "query", f"is longer than {MAX_TEXT_FIELD} characters", file=source.name)
            if topic and query:
                rows.append((topic, query))
    except csvfile.CsvProblem as problem:
        report.add_problem(problem.line, problem.column, problem.message, file=source.name)
    return rows


def read_domain_rows(source: ImportSource, report: ImportReport) -> list[tuple[str, str]]:
    """`base_url,label` rows (annotated_domains.csv; other columns ignored) as (domain, label)."""
    text = _decode(source, report)
    if text is None:
        return []
    try:
        _, records = csvfile.dict_rows(text, needed=("base_url", "label"))
    except csvfile.CsvProblem as problem:
        report.add_problem(problem.line, problem.column, problem.message, file=source.name)
        return []
    labels = {value: value for value in DomainLabel.values}
    labels |= {label.lower(): value for value, label in DomainLabel.choices}
    rows: list[tuple[str, str]] = []
    try:
        for line, row in records:
            _domain_row(line, row, labels, rows, source, report)
    except csvfile.CsvProblem as problem:
        report.add_problem(problem.line, problem.column, problem.message, file=source.name)
    return rows


def _domain_row(
    line: int,
    row: dict[str | None, Any],
    labels: dict[str, str],
    rows: list[tuple[str, str]],
    source: ImportSource,
    report: ImportReport,
) -> None:
    report.lines += 1
    domain = domain_of(row.get("base_url") or "")
    written = (row.get("label") or "").strip().lower()
    label = labels.get(written.replace(" ", "_")) or labels.get(written)
    if not domain:
        report.add_problem(line, "base_url", "is empty or not a host name", file=source.name)
    if label is None:
        report.add_problem(
            line, "label", f"{row.get('label')!r} is not a label: use {', '.join(DomainLabel.values)}", file=source.name
        )
    if domain and label:
        rows.append((domain, label))
