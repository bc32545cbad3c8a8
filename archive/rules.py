"""What an archive row must satisfy beyond its fields' own rules: what the forms and services would refuse.

The reader already checks every plain field against the model field (length, choices, validators: wiki
codes, e-mail addresses, number ranges). These are the rules that live in forms and services rather than in
fields: usernames as sign-in takes them, known language codes, prompt templates, release file names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, cast

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import models

from annotation.languages import LANGUAGES
from exports.formats.prompts import template_problems
from exports.models import Release
from exports.paths import release_files_problems


def username_problem(username: str) -> str | None:
    """Why sign-in could not take this username (None when it could): the model's validator and length, NFKC."""
    user_model = get_user_model()
    field = cast(models.CharField, user_model._meta.get_field(user_model.USERNAME_FIELD))
    if len(username) > (field.max_length or 150):
        return f"at most {field.max_length} characters."
    if user_model.normalize_username(username) != username:
        return "not in the form sign-in normalises names to (Unicode NFKC); rename the person before archiving."
    try:
        for validator in field.validators:
            validator(username)
    except ValidationError as error:
        return "; ".join(error.messages)
    return None


def _languages(*fields: str) -> Callable[[models.Model], Iterator[tuple[str, str]]]:
    def check(obj: models.Model) -> Iterator[tuple[str, str]]:
        for name in fields:
            value = getattr(obj, name)
            if value and value not in LANGUAGES:
                yield name, f"{str(value)[:20]!r} is not a language code this server knows."

    return check


def _templates(obj: models.Model) -> Iterator[tuple[str, str]]:
    for name, problems in template_problems(getattr(obj, "prompt_templates", None) or {}).items():
        yield name, problems[0]


def _release_files(obj: Release) -> Iterator[tuple[str, str]]:
    for problem in release_files_problems(obj.files)[:1]:
        yield "files", problem


ROW_RULES: dict[str, list[Callable[[Any], Iterator[tuple[str, str]]]]] = {
    "annotation.Project": [_languages("local_language", "standard_language")],
    "multichoice.TriviaSettings": [_languages("source_language", "target_language")],
    "exports.ExportSettings": [_templates],
    "exports.Release": [_release_files],
}


def row_problems(label: str, obj: models.Model) -> Iterator[tuple[str, str]]:
    for rule in ROW_RULES.get(label, []):
        yield from rule(obj)
