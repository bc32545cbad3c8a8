"""One place maps codes to the names people read (annotation.display), used by every template's `display` filter."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from annotation.display import display_name


@pytest.mark.parametrize(
    ("value", "kind", "name"),
    [
        ("science-math-technology", "", "Science, math & technology"),
        ("entertainment-art", "", "Entertainment & art"),
        ("history", "", "History"),
        ("very_reliable", "domain", "Very reliable"),
        ("difficult_translation", "problem_tag", "Difficult translation"),
        ("needs_rewrite", "item_status", "Needs rewrite"),
        ("submitted", "item_status", "In review"),
        ("translated", "decision", "Translated"),
        ("not_checked", "verification", "Not checked"),
        ("region", "label_kind", "Region relevance"),
        (True, "", "Yes"),
        (False, "", "No"),
        ("a_project_own-topic", "", "A project own & topic"),
        (None, "", ""),
    ],
)
def test_codes_read_as_display_names(value, kind, name):
    assert display_name(value, kind) == name


def test_the_template_filter_escapes_and_names():
    rendered = Template('{% load localqa %}{{ code|display }} · {{ status|display:"item_status" }}').render(
        Context({"code": "science-math-technology", "status": "accepted"})
    )
    assert rendered == "Science, math &amp; technology · Accepted"
