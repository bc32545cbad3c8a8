"""Claim the next piece of work of a queue (a page pair, a review slot, an item to translate…): one helper for all.

Each waiting condition is read on its own (`status = new`, `status = claimed AND expires < now`…), so the
(status, id) indexes serve each with LIMIT 1; one OR of them made PostgreSQL walk or sort every candidate
(bench/explain.py). The lowest id among their first rows is taken, each read FOR UPDATE SKIP LOCKED (on
PostgreSQL; SQLite serialises writers and ignores the clause), and claimed while still locked by the caller's
conditional update, so people asking at once get different rows and a second delivery is harmless.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from django.db import models, transaction
from django.db.models import Q, QuerySet

Row = TypeVar("Row", bound=models.Model)

ATTEMPTS = 5


def waiting_reads(candidates: QuerySet[Row], waiting: Iterable[Q]) -> list[QuerySet[Row]]:
    """The first waiting row under each condition, locked (what `queue_claim_next` reads, in a transaction)."""
    locked = candidates.select_for_update(skip_locked=True, of=("self",)).order_by("id")
    return [locked.filter(condition)[:1] for condition in waiting]


def queue_claim_next(
    *,
    candidates: QuerySet[Row],
    waiting: Iterable[Q],
    claim: Callable[[Row], bool],
    attempts: int = ATTEMPTS,
) -> Row | None:
    """The row claimed for the caller, or None when nothing waits.

    `candidates`: the rows this person may take (their own exclusions applied, with what the caller shows selected
    with them); `waiting`: the conditions under which a row waits to be taken; `claim(row)`: the caller's
    conditional update, True when it took the row. A claim lost to someone else at the same moment is retried (up
    to `attempts` times).
    """
    reads = waiting_reads(candidates, waiting)
    for _attempt in range(attempts):
        with transaction.atomic():
            found = [next(iter(read.all()), None) for read in reads]
            candidate = min((row for row in found if row is not None), key=lambda row: row.pk, default=None)
            if candidate is None:
                return None
            if claim(candidate):
                return candidate
    return None
