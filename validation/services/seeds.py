"""Seed queries: templates expanded per location, stored without duplicates, written for the collection tool."""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotation.importers.report import ImportReport
from annotation.importers.sources import ImportSource, ProgressCallback
from annotation.languages import LANGUAGES
from annotation.lifecycle import MAX_TEXT_FIELD
from annotation.models import Project
from audit import services as audit
from audit.models import Action
from common.csv_safety import csv_writer
from common.errors import InvalidInput
from validation.importers import (
    read_seed_rows,
)
from validation.locations import LocationForms, MissingForm, fill, has_placeholder, script_of
from validation.models import (
    LOCATION_FORMS,
    Location,
    SeedQuery,
)
from validation.services.projects import validation_settings
from validation.text import find_duplicates, normalise

LOCATION_PLACEHOLDER = "[LOCATION]"


MAX_LOCATIONS = 50


@dataclass
class SeedReport:
    added: int = 0
    exact_duplicates: int = 0
    near_duplicates: int = 0
    missing_forms: dict[str, int] = field(default_factory=dict)  # "location: form" → templates left out
    # "location: script of the templates" → templates left out: written in another script than the location
    other_script: dict[str, int] = field(default_factory=dict)
    removed: list[dict[str, Any]] | None = None  # [{query, location, repeats, exact, score}], first 200

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "exact_duplicates": self.exact_duplicates,
            "near_duplicates": self.near_duplicates,
            "missing_forms": self.missing_forms,
            "missing_forms_total": sum(self.missing_forms.values()),
            "other_script": self.other_script,
            "other_script_total": sum(self.other_script.values()),
            "removed": self.removed or [],
        }


def expand_templates(
    templates: Iterable[tuple[str, str]],
    locations: Sequence[str | LocationForms],
    missing: dict[str, int] | None = None,
    other_script: dict[str, int] | None = None,
) -> list[tuple[str, str, str, str]]:
    """(topic, query, location, template) for every template and location; a template without the placeholder once.

    A template needing a form a location lacks (`validation.locations.fill`) is left out for that location and
    counted in `missing` as "location: form"; a template with the placeholder written in another script than
    the location's name ("best restaurants in [LOCATION]" for الدوحة) is left out and counted in `other_script`
    as "location: script" — never a query mixing two languages.
    """
    places = [loc if isinstance(loc, LocationForms) else LocationForms(loc) for loc in locations]
    scripts = {place.name: script_of(place.name) for place in places}
    rows: list[tuple[str, str, str, str]] = []
    for topic, template in templates:
        written = script_of(template) if has_placeholder(template) else None
        for place in places:
            if written and scripts[place.name] and written != scripts[place.name]:
                if other_script is not None:
                    key = f"{place.name}: {written}"
                    other_script[key] = other_script.get(key, 0) + 1
                continue
            try:
                rows.append((topic, fill(template, place), place.name, template))
            except MissingForm as error:
                if missing is not None:
                    key = f"{place.name}: {error.form}"
                    missing[key] = missing.get(key, 0) + 1
    return rows


def location_forms(project: Project, names: Sequence[str]) -> list[LocationForms]:
    """The project's forms of each named location (a name it does not know has its name only)."""
    known = {loc.name: loc.forms for loc in Location.objects.filter(project=project, name__in=list(names))}
    return [LocationForms(name, known.get(name) or {}) for name in names]


def location_save(
    *, project: Project, name: str, forms: Mapping[str, str], user: User | None, language: str | None = None
) -> Location:
    """Add a location or change its forms (an empty form is dropped: the derived one, if any, applies) and, when
    `language` is given, the language its seed queries are drafted in ("": the project's)."""
    name = name.strip()
    if not name or len(name) > 200:
        raise InvalidInput("name: 1 to 200 characters.", field="name")
    if language and language not in LANGUAGES:
        raise InvalidInput(f"language: {language[:20]!r} is not a language localqa knows.", field="language")
    unknown = sorted(set(forms) - {key for key, _ in LOCATION_FORMS})
    if unknown:
        keys = ", ".join(key for key, _ in LOCATION_FORMS)
        raise InvalidInput(f"forms: unknown form {unknown[0]!r}; use {keys}.", field="forms")
    cleaned = {key: str(value).strip() for key, value in forms.items() if str(value or "").strip()}
    if any(len(value) > 200 for value in cleaned.values()):
        raise InvalidInput("forms: each at most 200 characters.", field="forms")
    with transaction.atomic():
        values: dict[str, object] = {"forms": cleaned, "updated_at": timezone.now()}
        if language is not None:
            values["language"] = language
        location, _ = Location.objects.update_or_create(project=project, name=name, defaults=values)
        audit.record(
            user,
            Action.PROJECT_SETTINGS,
            project,
            location={"name": name, "forms": cleaned, "language": location.language},
        )
    return location


def seed_queries_add(
    *,
    project: Project,
    rows: Sequence[tuple[str, str, str, str]],
    user: User | None,
    progress: Callable[[int], None] | None = None,
) -> SeedReport:
    """Store (topic, query, location, template) rows without exact or near-duplicates (within a location)."""
    threshold = validation_settings(project).duplicate_threshold
    stored: dict[str, list[str]] = defaultdict(list)
    for location, text in SeedQuery.objects.filter(project=project).values_list("location", "normalised"):
        stored[location].append(text)
    duplicates = find_duplicates(
        [row[1] for row in rows], groups=[row[2] for row in rows], threshold=threshold, stored=stored, progress=progress
    )
    dropped = {duplicate.index: duplicate for duplicate in duplicates}
    now = timezone.now()
    new = [
        SeedQuery(
            project=project,
            topic=topic,
            query=query,
            location=location,
            template=template,
            normalised=normalise(query),
            created_by=user,
            created_at=now,
        )
        for index, (topic, query, location, template) in enumerate(rows)
        if index not in dropped
    ]
    # Two locations can expand a place-less template to the same text: one row per project and text.
    new = list({seed.normalised: seed for seed in reversed(new)}.values())[::-1]
    collapsed = len(rows) - len(dropped) - len(new)
    with transaction.atomic():
        SeedQuery.objects.bulk_create(new)
    report = SeedReport(
        added=len(new),
        exact_duplicates=sum(d.exact for d in duplicates) + collapsed,
        near_duplicates=sum(not d.exact for d in duplicates),
        removed=[
            {
                "query": rows[d.index][1],
                "location": rows[d.index][2],
                "repeats": rows[d.of][1] if d.of >= 0 else "(already stored)",
                "exact": d.exact,
                "score": round(d.score, 1),
            }
            for d in duplicates[:200]
        ],
    )
    return report


def check_locations(locations: Sequence[str]) -> list[str]:
    cleaned = list(dict.fromkeys(loc.strip() for loc in locations if loc.strip()))
    if not cleaned:
        raise InvalidInput("locations: give at least one location.", field="locations")
    if len(cleaned) > MAX_LOCATIONS or any(len(loc) > 200 for loc in cleaned):
        raise InvalidInput(f"locations: at most {MAX_LOCATIONS}, each at most 200 characters.", field="locations")
    return cleaned


def seed_queries_import(
    *,
    project: Project,
    source: ImportSource,
    locations: Sequence[str],
    user: User | None,
    progress: ProgressCallback | None = None,
) -> tuple[ImportReport, SeedReport | None]:
    """Read `topic,query` rows (templates with [LOCATION], or plain queries) and add them for each location.

    Pages and the API queue this as an import job (`seed_queries_import_start`): expanded for many
    locations it is tens of thousands of queries. `progress(bytes_done, queries)` as in the QA pair import.
    """
    cleaned = check_locations(locations)
    report = ImportReport()
    rows = read_seed_rows(source, report)
    if not report.ok:
        return report, None
    missing: dict[str, int] = {}
    other_script: dict[str, int] = {}
    expanded = expand_templates(rows, location_forms(project, cleaned), missing, other_script)
    size = source.size()
    tell = progress or (lambda done, records: None)
    tell(int(0.2 * size), len(expanded))
    seeds = seed_queries_add(
        project=project,
        rows=expanded,
        user=user,
        progress=lambda done: tell(int(size * (0.2 + 0.6 * done / len(expanded))), len(expanded)),
    )
    tell(size, len(expanded))
    report.created = seeds.added
    seeds.missing_forms, seeds.other_script = missing, other_script
    return report, seeds


def seed_query_create(*, project: Project, topic: str, query: str, location: str = "", user: User | None) -> SeedReport:
    """One hand-written query (a [LOCATION] in it is filled with `location`, or the project's location)."""
    topic, query = topic.strip(), query.strip()
    if not topic or len(topic) > 100:
        raise InvalidInput("topic: 1 to 100 characters.", field="topic")
    if not query or len(query) > MAX_TEXT_FIELD:
        raise InvalidInput(f"query: 1 to {MAX_TEXT_FIELD} characters.", field="query")
    location = location.strip() or validation_settings(project).location
    if LOCATION_PLACEHOLDER in query and not location:
        raise InvalidInput("location: the query has [LOCATION]; say which location.", field="location")
    with transaction.atomic():
        missing: dict[str, int] = {}
        other_script: dict[str, int] = {}
        rows = expand_templates([(topic, query)], location_forms(project, [location]), missing, other_script)
        if other_script:
            written = next(iter(other_script)).split(": ", 1)[1]
            raise InvalidInput(
                f"location: the query is written in {written} script and {location} is not; give the location's "
                f"name as written in {written} (queries never mix two languages).",
                field="location",
            )
        if missing:
            form = next(iter(missing)).split(": ", 1)[1]
            raise InvalidInput(
                f"query: it needs the {form} form of {location}; add it under Locations first.", field="query"
            )
        report = seed_queries_add(project=project, rows=rows, user=user)
        if report.added:
            audit.record(
                user,
                Action.VALIDATION_SEED_ADDED,
                project=project,
                object_type="seed query",
                label=query,
                topic=topic,
                location=location,
            )
    return report


def seed_queries_csv(project: Project) -> bytes:
    """The seed queries as the collection tool reads them: `topic,query`, and the `location` each was made for.

    People open it too, so it goes through the formula-safe writer: a query starting with `=`, `+`, `-` or `@`
    gets a leading `'` (no search engine needs a query that a spreadsheet would run as a formula).
    """
    out = io.StringIO(newline="")
    writer = csv_writer(out, lineterminator="\n")
    writer.writerow(["topic", "query", "location"])
    rows = SeedQuery.objects.filter(project=project).order_by("id").values_list("topic", "query", "location")
    for topic, query, location in rows:
        writer.writerow([topic, query, location])
    return out.getvalue().encode("utf-8")
