"""What annotation's people and authoring pages ask of the review app without importing it (annotation sits
below review; review.apps registers these in `ready()`, like `annotation.lifecycle.review_rounds_register`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ReviewHooks:
    """`reviewer_languages_set(project=, user=, languages=, actor=)` sets a reviewer's languages;
    `review_slots_release(project=, user=)` gives back a person's claimed review slots (their number);
    `latest_verifications(items)` and `verification_panel(item, current=)` build the authoring page's
    verification panel of a lead item."""

    reviewer_languages_set: Callable[..., Any]
    review_slots_release: Callable[..., int]
    latest_verifications: Callable[..., dict[int, Any]]
    verification_panel: Callable[..., Any]


_HOOKS: list[ReviewHooks] = []


def review_hooks_register(hooks: ReviewHooks) -> None:
    _HOOKS[:] = [hooks]


def review_hooks() -> ReviewHooks:
    if not _HOOKS:
        raise RuntimeError("No review hooks are registered: the review app is not installed.")
    return _HOOKS[0]
