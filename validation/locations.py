"""Filling a seed-query template for one location: `[LOCATION]` and the forms around it.

Templates are written for a name, yet many need another form of it: English
"[LOCATION]i" and "[LOCATION]ers" want "Qatari" and "New Yorkers", Arabic
"ال[LOCATION]ية" wants the article and the stem the adjective ending attaches to
("القطرية", "الدوحية"), never "الالدوحةية". A location's forms (`Location.forms`)
say them; Arabic ones a name implies (without the article; the stem without a
final ة) are derived, and a template needing a form the location lacks is left
out and reported rather than filled wrongly. `[LOCATION:form]` names a form outright.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

PLACEHOLDER = "[LOCATION]"
_ARTICLE = "ال"
# An Arabic adjective (nisba) ending glued to the placeholder, with or without the article before it.
_ARABIC_NISBA = re.compile(r"(ال)?\[LOCATION\](يين|يون|يات|ية|ي)(?![\u0621-\u064a])")
_ARABIC_DEFINITE = re.compile(r"ال\[LOCATION\]")
_ENGLISH = re.compile(r"\[LOCATION\](i|ers)(?![a-z])")
_NAMED = re.compile(r"\[LOCATION:(\w+)\]")
_ENGLISH_FORMS = {"i": "adjective", "ers": "demonym"}


@dataclass(frozen=True)
class LocationForms:
    name: str
    forms: Mapping[str, str] = field(default_factory=dict)

    def form(self, key: str) -> str | None:
        given = (self.forms.get(key) or "").strip()
        if given:
            return given
        if key == "bare":
            return self.name.removeprefix(_ARTICLE) if self.name.startswith(_ARTICLE) else self.name
        if key == "nisba" and _is_arabic(self.name):
            bare = self.form("bare") or ""
            return bare.removesuffix("ة")
        return None


def _is_arabic(text: str) -> bool:
    return any("\u0600" <= char <= "\u06ff" for char in text)


_PLACEHOLDERS = re.compile(r"\[LOCATION(?::\w+)?\]")


def has_placeholder(text: str) -> bool:
    return bool(_PLACEHOLDERS.search(text))


def script_of(text: str) -> str | None:
    """The script most of the text's letters are in, placeholders left out: "Arabic", "Latin", or None (no
    letters, another script). A template is filled only with a location written in its script: an English
    template never gets الدوحة, an Arabic one never Doha."""
    text = _PLACEHOLDERS.sub(" ", text)
    arabic = sum(1 for char in text if "\u0621" <= char <= "\u064a" or "\u0671" <= char <= "\u06d3")
    latin = sum(1 for char in text if (char.isalpha() and char.isascii()) or "\u00c0" <= char <= "\u024f")
    if not arabic and not latin:
        return None
    return "Arabic" if arabic >= latin else "Latin"


class MissingForm(Exception):
    def __init__(self, form: str) -> None:
        super().__init__(form)
        self.form = form


def fill(template: str, location: LocationForms) -> str:
    """The template for this location; raises `MissingForm` when it needs a form the location does not have."""

    def need(key: str) -> str:
        value = location.form(key)
        if not value:
            raise MissingForm(key)
        return value

    text = _NAMED.sub(lambda m: location.name if m.group(1) == "name" else need(m.group(1)), template)
    text = _ARABIC_NISBA.sub(lambda m: (m.group(1) or "") + need("nisba") + m.group(2), text)
    text = _ARABIC_DEFINITE.sub(lambda m: _ARTICLE + need("bare"), text)
    text = _ENGLISH.sub(lambda m: need(_ENGLISH_FORMS[m.group(1)]), text)
    return text.replace(PLACEHOLDER, location.name)
