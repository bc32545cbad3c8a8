"""Small builders for test data, on the real models and services."""

from __future__ import annotations

import itertools
from typing import Any

from django.contrib.auth import get_user_model

from annotation.models import PagePair, Project
from annotation.services.projects import project_create

PASSWORD = "correct-horse-battery-9"
_counter = itertools.count(1)

# A Cantonese lead with a character outside the Basic Multilingual Plane (𠮶, U+20BB6) early on,
# so UTF-16 and code-point offsets differ for everything after it.
CANTONESE_LEAD = "𠮶間茶餐廳喺深水埗開咗六十幾年，招牌菜係菠蘿油同埋鴛鴦，老闆姓陳，逢星期三休息。"
MANDARIN_LEAD = "这是一家位于深水埗的茶餐厅，以菠萝包闻名。"


def user(username: str, **extra):
    return get_user_model().objects.create_user(username, f"{username}@example.org", PASSWORD, **extra)


def project(
    coordinator, *, slug: str | None = None, local_language: str = "yue", standard_language: str = "cmn", **settings
) -> Project:
    slug = slug or f"project-{next(_counter)}"
    return project_create(
        name=slug.replace("-", " ").title(),
        slug=slug,
        local_language=local_language,
        standard_language=standard_language,
        created_by=coordinator,
        **settings,
    )


def pair(project: Project, **fields) -> PagePair:
    number = next(_counter)
    values: dict[str, Any] = {
        "local_title": f"茶餐廳 {number}",
        "standard_title": f"茶餐厅 {number}",
        "local_url": f"https://zh-yue.wikipedia.org/wiki/P{number}",
        "standard_url": f"https://zh.wikipedia.org/wiki/P{number}",
        "local_lead": CANTONESE_LEAD,
        "standard_lead": MANDARIN_LEAD,
        "source": PagePair.Source.DEMO,
    }
    values.update(fields)
    values.setdefault("local_lead_length", len(values["local_lead"]))
    values.setdefault("standard_lead_length", len(values["standard_lead"]))
    return PagePair.objects.create(project=project, **values)
