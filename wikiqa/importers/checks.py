"""Checking one pair record (a JSONL line, a CSV row, a WiLoVa row): every problem named by field."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from annotation import wilova
from annotation.importers.report import ImportReport, Problems
from annotation.languages import UnknownLanguage, get_language
from annotation.lifecycle import span_problem
from annotation.models import EvidenceSpan, PagePair, Project, QAItem, QAItemRevision, Screening
from annotation.wilova import ItemRecord, PairRecord, locate
from common import jsontext
from common.text import first_unstorable, unstorable

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
_WHITESPACE = re.compile(r"\s")


NON_FINITE_MESSAGE = "is {token}, which JSON does not allow (no NaN or Infinity); write null or a number"


def parse_json_object(text: str, problem: Problems) -> dict[str, Any] | None:
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
        data = jsontext.loads(text, object_pairs_hook=keep_pairs)
    except jsontext.NonFiniteNumber as error:
        for keys, token in error.found:
            problem(jsontext.path_text(keys) or None, NON_FINITE_MESSAGE.format(token=token))
        return None
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
    for key in dict.fromkeys(repeated[-1]):
        problem(key, "appears more than once on this line")
    for key in dict.fromkeys(key for keys in repeated[:-1] for key in keys):
        problem("metadata", f"an object inside repeats the key {key!r}")
    return data if problem.count == before else None


def parse_record(data: dict[str, Any], problem: Problems, project: Project) -> PairRecord | None:
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
        elif message := _too_long(name, value) or unstorable(value):
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
        elif message := _too_long(name, value) or unstorable(value):
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


def _parse_screenings(value: Any, problem: Problems) -> list[tuple[str, str]]:
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
        elif message := unstorable(note):
            problem(f"{where}.note", message)
        else:
            screenings.append((decision, note))
    return screenings


ITEM_FIELDS = frozenset(("kind", "question", "answer_standard", "answer_local", "status", "spans", "metadata"))


def _parse_items(value: Any, problem: Problems, values: dict[str, Any]) -> list[ItemRecord]:
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
            elif message := unstorable(text):
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


def _parse_spans(value: Any, problem: Problems, where: str, values: dict[str, Any], kind: str) -> list[dict[str, Any]]:
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


def check_row_sizes(row: dict[str, Any], problem: Problems) -> bool:
    before = problem.count
    for name in ("dialect_summary", "standard_summary"):
        value = row.get(name)
        if isinstance(value, str) and (message := _too_long(name, value)):
            problem(name, message)
    return problem.count == before


def check_regions(rows: dict[str, Any], regions: Mapping[str, str], *, report: ImportReport, file: str) -> bool:
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
    """Django's URLValidator (http and https), once per site rather than once per URL.

    Its pattern ends in the site (`scheme://host:port`) and then `[/?#]` and anything but whitespace, and the
    site part costs most of its 25 µs. An import's URLs share a few sites, so the site is checked once (cached)
    and the rest for whitespace; whatever that does not accept goes through the whole validator.
    """
    end = value.find("://")
    cut = min((i for i in (value.find(c, end + 3) for c in "/?#") if i != -1), default=-1) if end != -1 else -1
    fits = cut != -1 and len(value) <= _url_validator.max_length and not _WHITESPACE.search(value, cut)
    return (fits and _is_site(value[:cut])) or _validates(value)


@functools.lru_cache(maxsize=1024)
def _is_site(site: str) -> bool:
    return _validates(site)


def _validates(value: str) -> bool:
    try:
        _url_validator(value)
    except ValidationError:
        return False
    return True


def _unstorable_json(value: Any) -> str | None:
    found = first_unstorable(value)
    return None if found is None else found[1]


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
