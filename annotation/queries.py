"""Query pieces the lists of several apps share."""

from __future__ import annotations

from django.db.models import F, Func, IntegerField, QuerySet, Subquery


def count_of(related: QuerySet) -> Subquery:
    """How many rows `related` (filtered on an `OuterRef`) has, as a column of the outer query.

    A `Count` over a join makes PostgreSQL join and group every row of the project
    before a paginated list can take its page; this subquery runs only for the rows
    shown, and `count()` leaves it out, so the page count is a plain index count.
    """
    counted = related.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n")
    return Subquery(counted, output_field=IntegerField())
