"""Balance: how many accepted items each category and difficulty has against the project's targets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, F

from annotation.models import Project
from audit import services as audit
from audit.models import Action
from common.errors import InvalidInput, StaleEdit
from multichoice.models import Difficulty, Subset, TriviaItem, TriviaSettings
from multichoice.services.items import Status
from multichoice.services.projects import trivia_settings

MAX_TARGET = 100_000


def trivia_balance(project: Project, *, translated_only: bool = False) -> dict[str, Any]:
    """Counts of live items by category × subset × difficulty, every cell of the project's lists present, each
    cell with its target (if the coordinator set one), how many are missing to reach it, and whether it is among
    the emptiest (`low`). `translated_only` counts only items ready for a release (accepted and translated)."""
    settings = trivia_settings(project)
    categories = list(settings.categories)
    counts: dict[tuple[str, str, str], int] = {}
    items = TriviaItem.objects.filter(project=project, item__deleted_at__isnull=True).exclude(
        item__status=Status.REJECTED
    )
    if translated_only:
        items = items.filter(item__status=Status.ACCEPTED, translation_status=TriviaItem.Translation.DONE)
    rows = items.values_list("category", "subset", "difficulty").annotate(n=Count("id")).order_by()
    for category, subset, difficulty, n in rows:
        counts[(category, subset, difficulty)] = n
        if category not in categories:
            categories.append(category)
    targets = settings.targets or {}
    minimum = min(
        (counts.get((c, s, d), 0) for c in categories for s in Subset.values for d in Difficulty.values), default=0
    )
    table = []
    for category in categories:
        cells: dict[str, dict[str, dict[str, Any]]] = {}
        for subset in Subset.values:
            cells[subset] = {}
            for difficulty in Difficulty.values:
                n = counts.get((category, subset, difficulty), 0)
                target = targets.get(category, {}).get(subset, {}).get(difficulty)
                cells[subset][difficulty] = {
                    "count": n,
                    "target": target,
                    "missing": max(0, target - n) if target is not None else 0,
                    "low": n == minimum,
                }
        total = sum(cell["count"] for by_d in cells.values() for cell in by_d.values())
        table.append({"category": category, "cells": cells, "total": total})
    return {
        "subsets": Subset.values,
        "difficulties": Difficulty.values,
        "rows": table,
        "total": sum(row["total"] for row in table),
        "minimum": minimum,
        "missing": sum(cell["missing"] for row in table for by_d in row["cells"].values() for cell in by_d.values()),
        "translated_only": translated_only,
        "version": settings.version,
    }


def trivia_targets_set(
    *, project: Project, targets: Mapping[str, Any], version: int | None = None, actor: User | None = None
) -> TriviaSettings:
    """The coordinator's targets per category × subset × difficulty (`{category: {subset: {difficulty: n}}}`;
    a cell left out, or empty, has no target). Errors name the cell."""
    settings = trivia_settings(project)
    clean: dict[str, dict[str, dict[str, int]]] = {}
    if not isinstance(targets, Mapping):
        raise InvalidInput("targets: must be {category: {subset: {difficulty: n}}}.", field="targets")
    for category, by_subset in targets.items():
        if category not in settings.categories:
            raise InvalidInput(f"targets.{category}: not one of the project's categories.", field=f"targets.{category}")
        for subset, by_difficulty in (by_subset or {}).items():
            for difficulty, raw in (by_difficulty or {}).items():
                where = f"targets.{category}.{subset}.{difficulty}"
                if subset not in Subset.values or difficulty not in Difficulty.values:
                    raise InvalidInput(f"{where}: no such cell.", field=where)
                if raw in (None, ""):
                    continue
                try:
                    n = int(raw)
                except (TypeError, ValueError):
                    raise InvalidInput(f"{where}: a whole number of items.", field=where) from None
                if not 0 <= n <= MAX_TARGET:
                    raise InvalidInput(f"{where}: between 0 and {MAX_TARGET}.", field=where)
                clean.setdefault(category, {}).setdefault(subset, {})[difficulty] = n
    with transaction.atomic():
        query = TriviaSettings.objects.filter(pk=settings.pk)
        if version is not None:
            query = query.filter(version=version)
        if not query.update(targets=clean, version=F("version") + 1):
            settings.refresh_from_db()
            raise StaleEdit("The trivia settings were changed by someone else; reload them.", current=settings)
        diff = audit.changes({"targets": settings.targets}, {"targets": clean})
        audit.record(actor, Action.PROJECT_SETTINGS, project, before=diff["before"], after=diff["after"])
    settings.refresh_from_db()
    return settings
