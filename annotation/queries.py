"""Query pieces the lists of several apps share."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Self
from urllib.parse import urlencode

from django.contrib.auth.models import User
from django.db.models import F, Func, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from annotation.models import PagePair, PairSkip, Project, QAItem, Screening


def count_of(related: QuerySet) -> Subquery:
    """How many rows `related` (filtered on an `OuterRef`) has, as a column of the outer query.

    A `Count` over a join makes PostgreSQL join and group every row of the project
    before a paginated list can take its page; this subquery runs only for the rows
    shown, and `count()` leaves it out, so the page count is a plain index count.
    """
    counted = related.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n")
    return Subquery(counted, output_field=IntegerField())


def items_with_spans(items: QuerySet[QAItem]) -> list[QAItem]:
    """The items of `items` (in the items' order) with their evidence spans (`item.spans.all()`, in their order)."""
    return list(items.prefetch_related("spans"))


def pair_items_with_spans(pair: PagePair) -> list[QAItem]:
    """`items_with_spans` of the pair's live items (without their authors), each item's `pair` set to `pair`."""
    items = items_with_spans(QAItem.objects.alive().filter(pair=pair))
    for item in items:
        item.pair = pair
    return items


def pair_screenings(pair: PagePair) -> list[Screening]:
    """The pair's screening decisions, oldest first, with who made each."""
    return list(Screening.objects.filter(pair=pair).select_related("annotator"))


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


def annotator_progress(*, project: Project, user: User, session_started: datetime) -> Progress:
    """Pairs done (submitted, or excluded at screening) and items submitted, today and since `session_started`.

    Every count in one query (counted by the database, not read row by row), the median active time in another."""
    now = timezone.now()
    today = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    pairs = PagePair.objects.filter(project=OuterRef("pk"), assignee=user)
    # The project itself, not the outer row: the planner then knows how few of the decisions are the project's and
    # takes its index (project, annotator, created_at), not a scan of the person's decisions in every project.
    excluded = Screening.objects.filter(project=project, annotator=user).exclude(decision=Screening.Decision.ANNOTATE)
    items = QAItem.objects.alive().filter(project=OuterRef("pk"), author=user)
    left = (
        PagePair.objects.filter(project=OuterRef("pk"))
        .available(now)
        .exclude(pk__in=PairSkip.objects.skipped_by(user.pk).values("pair_id"))
    )
    counts: dict[str, Subquery] = {}
    for name, start in (("today", today), ("session", session_started)):
        counts[f"submitted_{name}"] = count_of(pairs.filter(submitted_at__gte=start))
        counts[f"excluded_{name}"] = _count_distinct(excluded.filter(created_at__gte=start), "pair_id")
        counts[f"items_{name}"] = count_of(items.filter(submitted_at__gte=start))
    counts["left"] = count_of(left)
    counted = Project.objects.filter(pk=project.pk).annotate(**counts).values(*counts).get()
    seconds = list(
        QAItem.objects.alive()
        .filter(project=project, author=user, submitted_at__isnull=False, active_seconds__gt=0)
        .order_by("-submitted_at")
        .values_list("active_seconds", flat=True)[:RECENT_ITEMS]
    )
    return Progress(
        pairs_today=counted["submitted_today"] + counted["excluded_today"],
        items_today=counted["items_today"],
        pairs_session=counted["submitted_session"] + counted["excluded_session"],
        items_session=counted["items_session"],
        median_item_minutes=round(statistics.median(seconds) / 60, 1) if seconds else None,
        pairs_left=counted["left"],
    )


@dataclass(frozen=True)
class ListFilter:
    """What a person narrows a list to (its fields are the URL's query keys); an empty field narrows nothing."""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> Self:
        """The filter a request's query asks for: each field stripped and cut to 200 characters."""
        return cls(**{field.name: str(query.get(field.name, "")).strip()[:200] for field in fields(cls)})

    def as_query(self) -> str:
        """The filter as a URL query, for the pager's links."""
        return urlencode({key: value for key, value in vars(self).items() if value})


@dataclass(frozen=True)
class ItemFilter(ListFilter):
    """A project's item list, narrowed."""

    text: str = ""  # in the question, either answer or the pair's local title
    status: str = ""
    kind: str = ""
    author: str = ""  # a username
    verification: str = ""  # one of VERIFICATION_FILTERS
    topic: str = ""  # the pair's final topic label


# What a lead item's check against the standard page's full text says (its latest verification), as the item
# list filters it and the release readiness counts it.
VERIFICATION_FILTERS = {
    "none": "Not checked",
    "outdated": "Answer changed since the check",
    "found": "Found on the standard page",
    "not_found": "Not found on the standard page",
    "not_possible": "Not possible (no standard full text)",
}


def items_by_verification(items: QuerySet[QAItem], verification: str) -> QuerySet[QAItem]:
    """Lead items whose check says `verification` (a key of VERIFICATION_FILTERS): "none" never checked (an
    imported item's own verification in its metadata counts as a check), "outdated" checked on an answer that has
    changed since ("not possible" is about the pair, and a check from before answers were kept cannot tell), else
    the latest check's result. Any other value narrows nothing."""
    if verification not in VERIFICATION_FILTERS:
        return items
    leads = items.filter(kind=QAItem.Kind.LEAD)
    if verification == "none":
        return leads.filter(verifications__isnull=True).exclude(metadata__has_key="verification")
    # The review app's model, through the relation (this app sits below it and does not import it).
    checks = QAItem._meta.get_field("verifications").related_model
    latest = checks._default_manager.filter(item=OuterRef("pk")).order_by("-number")
    checked = leads.annotate(
        checked_result=Subquery(latest.values("result")[:1]), checked_answer=Subquery(latest.values("answer")[:1])
    )
    if verification == "outdated":
        return (
            checked.filter(checked_answer__isnull=False)
            .exclude(checked_result="not_possible")
            .exclude(checked_answer=F("answer_standard"))
        )
    return checked.filter(checked_result=verification)


@dataclass(frozen=True)
class PairFilter(ListFilter):
    """A project's page pairs, narrowed."""

    text: str = ""  # in either page's title
    status: str = ""
    annotator: str = ""  # the username of the pair's annotator
    topic: str = ""  # the pair's final topic label


def pairs_filtered(pairs: QuerySet[PagePair], flt: PairFilter) -> QuerySet[PagePair]:
    """`pairs` narrowed by `flt`: a status that is not a pair's is ignored, not an error."""
    if flt.status in PagePair.Status.values:
        pairs = pairs.filter(status=flt.status)
    if flt.annotator:
        pairs = pairs.filter(assignee__username=flt.annotator)
    if flt.topic:  # the final label (agreed or adjudicated), the one releases carry
        pairs = pairs.filter(final_labels__kind="topic", final_labels__value=flt.topic)
    if flt.text:
        pairs = pairs.filter(Q(local_title__icontains=flt.text) | Q(standard_title__icontains=flt.text))
    return pairs


def items_filtered(items: QuerySet[QAItem], flt: ItemFilter) -> QuerySet[QAItem]:
    """`items` narrowed by `flt`: a status or kind that is not one of the item's is ignored, not an error."""
    if flt.status in QAItem.Status.values:
        items = items.filter(status=flt.status)
    if flt.kind in QAItem.Kind.values:
        items = items.filter(kind=flt.kind)
    if flt.author:
        items = items.filter(author__username=flt.author)
    items = items_by_verification(items, flt.verification)
    if flt.topic:
        items = items.filter(pair__final_labels__kind="topic", pair__final_labels__value=flt.topic)
    if flt.text:
        text = flt.text
        items = items.filter(
            Q(question__icontains=text)
            | Q(answer_standard__icontains=text)
            | Q(answer_local__icontains=text)
            | Q(pair__local_title__icontains=text)
        )
    return items
