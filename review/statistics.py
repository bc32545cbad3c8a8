"""The coordinator's numbers for a project."""

from __future__ import annotations

import statistics
from collections import defaultdict
from datetime import timedelta
from typing import Any

from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.models import PagePair, Project, QAItem, deleted_items, deleted_pairs
from review.models import FinalLabel, LabelKind, ReviewSlot
from review.routing import REVIEWABLE, Status


def _median(values: list[int]) -> float | None:
    return statistics.median(values) if values else None


def project_statistics(project: Project) -> dict[str, Any]:
    """The study's statistics table and the team's progress, straight from the database (a fixed number of queries)."""
    pairs = PagePair.objects.filter(project=project)
    longer_text = Q(local_text_length__isnull=True) | Q(standard_text_length__isnull=True)
    longer_text |= Q(local_text_length__gt=F("standard_text_length"))
    counts = pairs.aggregate(
        collected=Count("id"),
        local_heavy=Count("id", filter=Q(local_lead_length__gt=F("standard_lead_length")) & longer_text),
        inspected=Count("id", filter=~Q(screening_decision="")),
        excluded=Count("id", filter=Q(status=PagePair.Status.EXCLUDED)),
        with_qas=Count("id", filter=Q(status=PagePair.Status.SUBMITTED)),
    )
    excluded_by_reason = dict(
        pairs.filter(status=PagePair.Status.EXCLUDED)
        .values_list("screening_decision")
        .annotate(n=Count("id"))
        .order_by()
    )
    items = QAItem.objects.alive().filter(project=project).exclude(status=Status.DRAFT)
    by_kind_status: dict[tuple[str, str], int] = {
        (kind, status): n for kind, status, n in items.values_list("kind", "status").annotate(n=Count("id")).order_by()
    }
    item_counts = {
        "lead": sum(n for (kind, _), n in by_kind_status.items() if kind == QAItem.Kind.LEAD),
        "document": sum(n for (kind, _), n in by_kind_status.items() if kind == QAItem.Kind.DOCUMENT),
        **{status: sum(n for (_, s), n in by_kind_status.items() if s == status) for status in Status.values},
    }
    week_ago = timezone.now() - timedelta(days=7)
    per_author: dict[str, dict[str, Any]] = defaultdict(lambda: {"items": 0, "week": 0, "item_seconds": []})
    all_item_seconds: list[int] = []
    in_review: set[int] = set()
    for pk, status, username, seconds, submitted_at in items.values_list(
        "pk", "status", "author__username", "active_seconds", "submitted_at"
    ):
        if status == REVIEWABLE:
            in_review.add(pk)
        row = per_author[username or "—"]
        row["items"] += 1
        row["week"] += bool(submitted_at and submitted_at >= week_ago)
        if seconds:
            row["item_seconds"].append(seconds)
            all_item_seconds.append(seconds)
    pair_seconds: dict[str, list[int]] = defaultdict(list)
    pairs_submitted: dict[str, int] = defaultdict(int)
    for username, seconds in pairs.filter(status=PagePair.Status.SUBMITTED).values_list(
        "assignee__username", "active_seconds"
    ):
        pairs_submitted[username or "—"] += 1
        if seconds:
            pair_seconds[username or "—"].append(seconds)
    people = [
        {
            "username": username,
            "items": row["items"],
            "week": row["week"],
            "pairs": pairs_submitted.get(username, 0),
            "median_item_seconds": _median(row["item_seconds"]),
            "median_pair_seconds": _median(pair_seconds.get(username, [])),
        }
        for username, row in sorted(per_author.items())
    ]
    # The project's own slots, without a join on the items (`deleted_items`; tests/test_coordinator_plans.py).
    deleted = deleted_items(project)
    workload: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"claimed": 0, "done": 0, "week": 0, "durations": [], "active": []}
    )
    waiting = 0
    for item_id, username, status, claimed_at, completed_at, active in ReviewSlot.objects.filter(
        project=project
    ).values_list("item_id", "reviewer__username", "status", "claimed_at", "completed_at", "active_seconds"):
        waiting += status == ReviewSlot.Status.OPEN and item_id in in_review
        if username is None or item_id in deleted:
            continue
        row = workload[username]
        if status == ReviewSlot.Status.CLAIMED:
            row["claimed"] += 1
        elif status == ReviewSlot.Status.DONE:
            row["done"] += 1
            row["week"] += bool(completed_at and completed_at >= week_ago)
            if claimed_at and completed_at:
                row["durations"].append(int((completed_at - claimed_at).total_seconds()))
            if active:
                row["active"].append(active)
    reviewers = [
        {
            "username": username,
            "claimed": row["claimed"],
            "done": row["done"],
            "week": row["week"],
            "median_review_seconds": _median(row["durations"]),
            "median_active_seconds": _median(row["active"]),
        }
        for username, row in sorted(workload.items())
    ]
    charts: dict[str, dict[str, int]] = {LabelKind.TOPIC: {}, LabelKind.REGION: {}}
    gone = deleted_pairs(project)
    for pair_id, kind, value in FinalLabel.objects.filter(project=project).values_list("pair_id", "kind", "value"):
        if pair_id not in gone:
            charts[kind][value] = charts[kind].get(value, 0) + 1
    return {
        "pairs": counts,
        "excluded_by_reason": excluded_by_reason,
        "items": item_counts,
        "median_item_seconds": _median(all_item_seconds),
        "people": people,
        "reviewers": reviewers,
        "slots_waiting": waiting,
        "topics": _bars(project.topics, charts[LabelKind.TOPIC]),
        "regions": _bars(project.regions, charts[LabelKind.REGION]),
    }


def _bars(order: list[str], counts: dict[str, int]) -> list[dict[str, Any]]:
    """Rows for a server-side bar chart: value, count, and width as a percentage of the largest bar."""
    values = list(order) + [value for value in counts if value not in order]
    top = max(counts.values(), default=0)
    return [
        {
            "value": value,
            "count": counts.get(value, 0),
            "percent": round(100 * counts.get(value, 0) / top) if top else 0,
        }
        for value in values
    ]
