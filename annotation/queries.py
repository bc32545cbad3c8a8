"""Query pieces the lists of several apps share."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.contrib.auth.models import User
from django.db.models import F, Func, IntegerField, QuerySet, Subquery
from django.utils import timezone

if TYPE_CHECKING:
    from annotation.models import Project


def count_of(related: QuerySet) -> Subquery:
    """How many rows `related` (filtered on an `OuterRef`) has, as a column of the outer query.

    A `Count` over a join makes PostgreSQL join and group every row of the project
    before a paginated list can take its page; this subquery runs only for the rows
    shown, and `count()` leaves it out, so the page count is a plain index count.
    """
    counted = related.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n")
    return Subquery(counted, output_field=IntegerField())


@dataclass(frozen=True)
class Progress:
    """What an annotator has done in a project today and in this working session, and what is left."""

    pairs_today: int
    items_today: int
    pairs_session: int
    items_session: int
    median_item_minutes: float | None  # active (not idle) minutes per submitted item, over the recent ones
    pairs_left: int


RECENT_ITEMS = 200  # the median of active time is over this many of the latest items


def _since(times: list[datetime | None], start: datetime) -> int:
    return sum(1 for at in times if at is not None and at >= start)


def annotator_progress(*, project: Project, user: User, session_started: datetime) -> Progress:
    """Pairs done (submitted, or excluded at screening) and items submitted, today and since `session_started`."""
    from annotation.models import PagePair, PairSkip, QAItem, Screening

    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    since = min(today, session_started)
    submitted = list(
        PagePair.objects.filter(project=project, assignee=user, submitted_at__gte=since).values_list(
            "submitted_at", flat=True
        )
    )
    excluded = dict(
        Screening.objects.filter(pair__project=project, annotator=user, created_at__gte=since)
        .exclude(decision=Screening.Decision.ANNOTATE)
        .values_list("pair_id", "created_at")
    )
    pair_times = [*submitted, *excluded.values()]
    item_times = list(
        QAItem.objects.alive()
        .filter(project=project, author=user, submitted_at__gte=since)
        .values_list("submitted_at", flat=True)
    )
    seconds = list(
        QAItem.objects.alive()
        .filter(project=project, author=user, submitted_at__isnull=False, active_seconds__gt=0)
        .order_by("-submitted_at")
        .values_list("active_seconds", flat=True)[:RECENT_ITEMS]
    )
    return Progress(
        pairs_today=_since(pair_times, today),
        items_today=_since(item_times, today),
        pairs_session=_since(pair_times, session_started),
        items_session=_since(item_times, session_started),
        median_item_minutes=round(statistics.median(seconds) / 60, 1) if seconds else None,
        pairs_left=PagePair.objects.filter(project=project)
        .available()
        .exclude(pk__in=PairSkip.objects.filter(annotator=user).values("pair_id"))
        .count(),
    )
