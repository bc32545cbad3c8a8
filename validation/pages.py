"""Helpers of the validation pages only: the plain form's fields as the services take them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from validation.models import (
    ValidationSettings,
)


def judgment_data_from_form(post: Any, settings: ValidationSettings) -> dict[str, Any]:
    """The plain form's fields as `validation_submit` takes them (the API sends the same shape as JSON)."""
    data: dict[str, Any] = {
        key: post.get(key)
        for key in ("question", "question_reason", "location_relevant", "domain_label", "better", "better_comment")
        if post.get(key) is not None
    }
    if post.get("answer") is not None:
        data["answer"] = post.get("answer")
    data["likert"] = {c["key"]: post.get(f"likert_{c['key']}") for c in settings.likert_criteria}
    if post.get("suggestion"):  # the model's suggestion shown, and the fields taken from it (a key or a button)
        data["suggestion"] = post.get("suggestion")
        data["suggestion_taken"] = [field for field in post.getlist("suggestion_taken") if field]
    return data


# What a validator reads for each field the judgment service names (`likert.<key>` are the criteria's labels).
FIELD_WORDS = {
    "question": "Question",
    "question_reason": "Why the question is bad",
    "answer": "Answer",
    "location_relevant": "Location",
    "domain_label": "Source domain",
    "better": "Better answer",
    "better_comment": "Comment on the answers",
    "slot": "This item",
    "item": "This item",
}
# The service lists the codes the API takes; the screen offers them by name.
PAGE_PROBLEMS = {
    "question_reason": "choose a reason from the list",
    "domain_label": "choose how reliable the source domain is",
}


def error_lines(errors: Mapping[str, Sequence[str]], settings: ValidationSettings) -> list[dict[str, str]]:
    """The form's problems in words, each with the field it is about (to link and mark the field)."""
    labels = {f"likert.{c['key']}": c["label"] for c in settings.likert_criteria}
    lines = []
    for field, problems in errors.items():
        label = labels.get(field) or FIELD_WORDS.get(field) or field.replace("_", " ").capitalize()
        for problem in problems:
            lines.append({"field": field, "text": f"{label}: {PAGE_PROBLEMS.get(field, problem)}"})
    return lines


def likert_rows(settings: ValidationSettings, values: Mapping[str, Any], errors: Mapping[str, Any]) -> list[dict]:
    """One row per criterion with the score the validator chose (kept when the form comes back with an error)."""
    return [
        {
            "key": c["key"],
            "label": c["label"],
            "rubric": c["rubric"],
            "value": str(values.get(f"likert_{c['key']}") or ""),
            "error": f"likert.{c['key']}" in errors,
        }
        for c in settings.likert_criteria
    ]
