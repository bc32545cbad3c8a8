"""Query pieces the lists of several apps share."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import User
from django.db.models import F, Func, IntegerField, OuterRef, QuerySet, Subquery
from django.utils import timezone

from common.prepared import Prepared
from common.related import related_known

if TYPE_CHECKING:
    from annotation.models import PagePair, Project, QAItem, Screening


def count_of(related: QuerySet) -> Subquery:
    """How many rows `related` (filtered on an `OuterRef`) has, as a column of the outer query.

    A `Count` over a join makes PostgreSQL join and group every row of the project
    before a paginated list can take its page; this subquery runs only for the rows
    shown, and `count()` leaves it out, so the page count is a plain index count.
    """
    counted = related.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n")
    return Subquery(counted, output_field=IntegerField())


SPAN_FIELDS = ("id", "document", "start", "end", "text", "match", "position")


def items_spans_joined(items: QuerySet[QAItem]) -> QuerySet[QAItem]:
    """`items` with one row per evidence span (or one without any), in the items' and then the spans' order."""
    from annotation.models import QAItem

    return items.annotate(**{f"evidence_{name}": F(f"spans__{name}") for name in SPAN_FIELDS}).order_by(
        *(QAItem._meta.ordering or ()), "spans__position", "spans__id"
    )


def items_of_joined_rows(rows: Iterable[QAItem], db: str) -> list[QAItem]:
    """The items of `items_spans_joined` rows, each once, its spans handed to `item.spans.all()`."""
    from annotation.models import EvidenceSpan

    found: dict[int, tuple[QAItem, list[EvidenceSpan]]] = {}
    span_fields = ["item_id", *SPAN_FIELDS]
    cache = EvidenceSpan.item.field  # the span's item, set as prefetching sets it
    for row in rows:
        item, spans = found.setdefault(row.pk, (row, []))
        values = [getattr(row, f"evidence_{name}") for name in SPAN_FIELDS]
        if values[0] is not None:  # no span: the outer join's empty row
            span = EvidenceSpan.from_db(db, span_fields, [item.pk, *values])
            cache.set_cached_value(span, item)
            spans.append(span)
    for item, spans in found.values():
        related_known(item, "spans", spans)
    return [item for item, _spans in found.values()]


def items_with_spans(items: QuerySet[QAItem]) -> list[QAItem]:
    """The items of `items` (in the items' order) with their evidence spans in one query instead of the two of
    `prefetch_related("spans")`: each item's row joined with its spans, the spans handed to `item.spans.all()` in
    their order. What `items` annotates (or selects with each item) comes along."""
    joined = items_spans_joined(items)
    return items_of_joined_rows(joined, joined.db)


def _pair_page_queries() -> tuple[Prepared[QAItem], Prepared[Screening]]:
    """The authoring page's live items with their spans and its screening history, compiled once
    (common/prepared.py): asked on every view of the page."""
    global _PAIR_PAGE
    if _PAIR_PAGE is None:
        from annotation.models import QAItem, Screening

        _PAIR_PAGE = (
            Prepared(lambda pair_id: items_spans_joined(QAItem.objects.alive().filter(pair_id=pair_id)), int),
            Prepared(lambda pair_id: Screening.objects.filter(pair_id=pair_id).select_related("annotator"), int),
        )
    return _PAIR_PAGE


_PAIR_PAGE: tuple[Prepared[QAItem], Prepared[Screening]] | None = None


def pair_items_with_spans(pair: PagePair) -> list[QAItem]:
    """`items_with_spans` of the pair's live items (without their authors), each item's `pair` set to `pair`."""
    items = items_of_joined_rows(_pair_page_queries()[0].all(int(pair.pk)), "default")
    for item in items:
        item.pair = pair
    return items


def pair_screenings(pair: PagePair) -> list[Screening]:
    """The pair's screening decisions, oldest first, with who made each."""
    return _pair_page_queries()[1].all(int(pair.pk))


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


def _count_distinct(related: QuerySet, field: str) -> Subquery:
    """`count_of`, counting the distinct values of `field` (a pair screened twice is one pair)."""
    counted = related.order_by().annotate(
        n=Func(F(field), function="COUNT", template="COUNT(DISTINCT %(expressions)s)")
    )
    return Subquery(counted.values("n"), output_field=IntegerField())


def _progress_queries() -> tuple[Prepared[Any], Prepared[Any]]:
    """The two queries of `annotator_progress`, compiled once (common/prepared.py): asked on every authoring page."""
    global _PROGRESS
    if _PROGRESS is not None:
        return _PROGRESS
    from annotation.models import PagePair, PairSkip, Project, QAItem, Screening

    def counts(project_id: int, user_id: int, today: datetime, session_started: datetime, now: datetime) -> QuerySet:
        pairs = PagePair.objects.filter(project=OuterRef("pk"), assignee=user_id)
        excluded = Screening.objects.filter(pair__project=OuterRef("pk"), annotator=user_id).exclude(
            decision=Screening.Decision.ANNOTATE
        )
        items = QAItem.objects.alive().filter(project=OuterRef("pk"), author=user_id)
        left = (
            PagePair.objects.filter(project=OuterRef("pk"))
            .available(now)
            .exclude(pk__in=PairSkip.objects.skipped_by(user_id).values("pair_id"))
        )
        counted: dict[str, Subquery] = {}
        for name, start in (("today", today), ("session", session_started)):
            counted[f"submitted_{name}"] = count_of(pairs.filter(submitted_at__gte=start))
            counted[f"excluded_{name}"] = _count_distinct(excluded.filter(created_at__gte=start), "pair_id")
            counted[f"items_{name}"] = count_of(items.filter(submitted_at__gte=start))
        counted["left"] = count_of(left)
        return Project.objects.filter(pk=project_id).annotate(**counted).values(*counted)

    def recent(project_id: int, user_id: int) -> QuerySet:
        return (
            QAItem.objects.alive()
            .filter(project=project_id, author=user_id, submitted_at__isnull=False, active_seconds__gt=0)
            .order_by("-submitted_at")
            .values("active_seconds")[:RECENT_ITEMS]
        )

    _PROGRESS = (Prepared(counts, int, int, datetime, datetime, datetime), Prepared(recent, int, int))
    return _PROGRESS


_PROGRESS: tuple[Prepared[Any], Prepared[Any]] | None = None


def annotator_progress(*, project: Project, user: User, session_started: datetime) -> Progress:
    """Pairs done (submitted, or excluded at screening) and items submitted, today and since `session_started`.

    Every count in one query (counted by the database, not read row by row), the median active time in another."""
    counts, recent = _progress_queries()
    now = timezone.now()
    today = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    (counted,) = counts.dicts(int(project.pk), int(user.pk), today, session_started, now)
    seconds = [row["active_seconds"] for row in recent.dicts(int(project.pk), int(user.pk))]
    return Progress(
        pairs_today=counted["submitted_today"] + counted["excluded_today"],
        items_today=counted["items_today"],
        pairs_session=counted["submitted_session"] + counted["excluded_session"],
        items_session=counted["items_session"],
        median_item_minutes=round(statistics.median(seconds) / 60, 1) if seconds else None,
        pairs_left=counted["left"],
    )
