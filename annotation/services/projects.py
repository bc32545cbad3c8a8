"""Projects: creating one, its settings, slugs and the region vocabulary."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.text import slugify

from annotation import wilova
from annotation.languages import VARIANT_RULE, WIKI_CODE_RULE, UnknownLanguage, get_language, is_variant, is_wiki_code
from annotation.models import DEFAULT_REGIONS, Membership, Project
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, StaleEdit

PROJECT_SETTINGS = (
    "name",
    "guidelines",
    "lead_qa_min",
    "lead_qa_max",
    "collect_document_qa",
    "verification_required",
    "reviewers_per_item",
    "claim_minutes",
    "standard_variant",
    "local_wiki",
    "standard_wiki",
    "region_vocabulary",
    "releases_public",
)


MAX_REGION_NAME = 200  # as long as a label's finer region may be


def _check_language(code: str, field: str) -> None:
    try:
        get_language(code)
    except UnknownLanguage as error:
        raise InvalidInput(str(error), field=field, details={field: [str(error)]}) from None


def _check_project_settings(values: Mapping[str, Any]) -> None:
    errors: dict[str, list[str]] = {}
    lead_min, lead_max = values.get("lead_qa_min"), values.get("lead_qa_max")
    if lead_min is not None and lead_max is not None and lead_min > lead_max:
        errors["lead_qa_min"] = [f"must not exceed lead_qa_max ({lead_max})"]
    if lead_min is not None and not 1 <= lead_min <= 20:
        errors["lead_qa_min"] = ["must be between 1 and 20"]
    if lead_max is not None and not 1 <= lead_max <= 20:
        errors["lead_qa_max"] = ["must be between 1 and 20"]
    if values.get("reviewers_per_item") is not None and not 1 <= values["reviewers_per_item"] <= 10:
        errors["reviewers_per_item"] = ["must be between 1 and 10"]
    if values.get("claim_minutes") is not None and not 1 <= values["claim_minutes"] <= 24 * 60:
        errors["claim_minutes"] = ["must be between 1 and 1440 minutes"]
    if "name" in values and not str(values["name"]).strip():
        errors["name"] = ["must not be empty"]
    for field in ("local_wiki", "standard_wiki"):
        if values.get(field) is not None and not is_wiki_code(values[field]):
            errors[field] = [WIKI_CODE_RULE]
    if values.get("standard_variant") and not is_variant(values["standard_variant"]):
        errors["standard_variant"] = [VARIANT_RULE]
    if errors:
        first = next(iter(errors))
        raise InvalidInput(f"{first}: {errors[first][0]}", field=first, details=errors)


def region_vocabulary_clean(value: Any, *, regions: Iterable[str]) -> dict[str, str]:
    """A fine → coarse region table as given, checked: names as written (trimmed), each mapped to a project region."""
    regions = list(regions)
    field = "region_vocabulary"
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{field}: must be an object of fine region → region", field=field)
    clean: dict[str, str] = {}
    for fine, coarse in value.items():
        name = fine.strip() if isinstance(fine, str) else ""
        if not name:
            raise InvalidInput(f"{field}: a fine region needs a name", field=field)
        if len(name) > MAX_REGION_NAME:
            raise InvalidInput(f"{field}: {name[:40]!r}… is longer than {MAX_REGION_NAME} characters", field=field)
        if coarse not in regions:
            raise InvalidInput(
                f"{field}: {name!r} must map to one of the project's regions ({', '.join(regions)}), not {coarse!r}",
                field=field,
            )
        clean[name] = coarse
    return clean


def project_region_vocabulary_map(
    *, project: Project, mapping: Mapping[str, str], actor: User | None = None
) -> Project:
    """Add fine regions to the project's vocabulary (or remap them), keeping the rest: what an import asks for."""
    clean = region_vocabulary_clean(mapping, regions=project.regions)
    if not clean:
        raise InvalidInput("Map at least one region.", field="region_vocabulary")
    project.refresh_from_db(fields=["region_vocabulary", "version"])
    return project_update(
        project=project, actor=actor, region_vocabulary={**(project.region_vocabulary or {}), **clean}
    )


SLUG_RULE = "letters, digits, hyphens and underscores only, e.g. doha-val"


def project_slug_check(slug: str) -> str:
    """The slug a project's URLs are made of: refused, with a field error, unless `reverse` can use it."""
    slug = (slug or "").strip()
    if not slug:
        raise InvalidInput(f"slug: the project needs a slug ({SLUG_RULE}).", field="slug")
    max_length = Project._meta.get_field("slug").max_length
    if max_length is not None and len(slug) > max_length:
        raise InvalidInput("slug: at most 60 characters.", field="slug")
    try:
        validate_slug(slug)
    except ValidationError:
        raise InvalidInput(f"slug: {slug!r} is not a slug: use {SLUG_RULE}.", field="slug") from None
    return slug


def project_slug_derive(name: str) -> str:
    """The slug of a project whose creator left it empty: the name's ASCII letters and digits, with -2, -3… when
    a project has it already. A name without any (粵語, الدوحة) needs a slug typed."""
    base = slugify(name)[:56].strip("-_")
    if not base:
        return project_slug_check("")
    taken = set(Project.all_objects.filter(slug__startswith=base).values_list("slug", flat=True))
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return project_slug_check(slug)


def project_create(
    *,
    name: str,
    slug: str | None = None,
    local_language: str,
    standard_language: str,
    local_wiki: str | None = None,
    standard_wiki: str | None = None,
    created_by: User | None = None,
    **project_settings: Any,
) -> Project:
    """Create a project; the creator becomes its coordinator. Wiki codes are derived unless given."""
    _check_language(local_language, "local_language")
    _check_language(standard_language, "standard_language")
    slug = project_slug_check(slug) if slug else project_slug_derive(name)
    unknown = set(project_settings) - set(PROJECT_SETTINGS)
    if unknown:
        raise InvalidInput(f"Unknown project setting(s): {', '.join(sorted(unknown))}", field=sorted(unknown)[0])
    values = {
        "name": name,
        "local_wiki": local_wiki or get_language(local_language).wiki,
        "standard_wiki": standard_wiki or get_language(standard_language).wiki,
        **project_settings,
    }
    _check_project_settings(
        {"lead_qa_min": 2, "lead_qa_max": 3, **values}  # defaults of the model, for the range check
    )
    if "region_vocabulary" in values:
        values["region_vocabulary"] = region_vocabulary_clean(values["region_vocabulary"], regions=DEFAULT_REGIONS)
    else:  # the region table of the study in these languages, if localqa knows one
        values["region_vocabulary"] = wilova.region_vocabulary_seed(local_language)
    try:
        with transaction.atomic():
            project = Project.objects.create(
                slug=slug,
                local_language=local_language,
                standard_language=standard_language,
                created_by=created_by,
                **values,
            )
            if created_by is not None:
                Membership.objects.create(project=project, user=created_by, is_coordinator=True)
            audit.record(created_by, Action.PROJECT_CREATED, project, kind=project.kind)
    except IntegrityError:
        raise InvalidInput(f"A project with the slug {slug!r} already exists.", field="slug") from None
    return project


def project_update(
    *, project: Project, version: int | None = None, actor: User | None = None, **changes: Any
) -> Project:
    """Change project settings. With `version`, refuse if someone saved in between."""
    unknown = set(changes) - set(PROJECT_SETTINGS)
    if unknown:
        raise InvalidInput(f"Unknown project setting(s): {', '.join(sorted(unknown))}", field=sorted(unknown)[0])
    merged = {field: getattr(project, field) for field in PROJECT_SETTINGS} | changes
    _check_project_settings(merged)
    if "region_vocabulary" in changes:
        changes["region_vocabulary"] = region_vocabulary_clean(changes["region_vocabulary"], regions=project.regions)
    if "guidelines" in changes and changes["guidelines"] != project.guidelines:
        changes["guidelines_version"] = F("guidelines_version") + 1
    query = Project.objects.filter(pk=project.pk)
    if version is not None:
        query = query.filter(version=version)
    before = {field: getattr(project, field) for field in PROJECT_SETTINGS}
    with transaction.atomic():
        if not query.update(**changes, version=F("version") + 1, updated_at=timezone.now()):
            raise StaleEdit("The project settings were changed by someone else; reload them.", current=project)
        project.refresh_from_db()
        diff = audit.changes(before, {field: getattr(project, field) for field in PROJECT_SETTINGS})
        if diff["after"]:
            audit.record(actor, Action.PROJECT_SETTINGS, project, before=diff["before"], after=diff["after"])
    return project
