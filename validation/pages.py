"""Helpers of the validation pages only: the plain form's fields as the services take them."""

from __future__ import annotations

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
    return data
