"""Claim the next piece of work of a queue (a page pair, a review slot, an item to translate…): one helper for all.

Each waiting condition is asked on its own (`status = new`, `status = claimed AND expires < now`…), so the
(status, id) index serves each with LIMIT 1; one OR of them made PostgreSQL walk or sort every candidate
(bench/explain.py). The lowest id among them is taken FOR UPDATE SKIP LOCKED (on PostgreSQL; SQLite serialises
writers), and claimed while still locked by the caller's conditional update, so people asking at once get
different rows and a second delivery is harmless.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from django.db import models, transaction
from django.db.models import Q, QuerySet

Row = TypeVar("Row", bound=models.Model)

ATTEMPTS = 5


def queue_claim_next(
    *,
    candidates: QuerySet[Row],
    waiting: Iterable[Q],
    claim: Callable[[Row], bool],
    fields: tuple[str, ...] = ("id",),
    whole: bool = False,
    shown: Mapping[str, Any] | None = None,
    attempts: int = ATTEMPTS,
) -> Row | None:
    """The row claimed for the caller, or None when nothing waits.

    `candidates`: the rows this person may take (their own exclusions applied); `waiting`: the conditions under
    which a row waits to be taken; `claim(row)`: the caller's conditional update, True when it took the row;
    `fields`: the columns read of each candidate. `whole`: the row is claimed read whole, with what `candidates`
    selects with it, for the caller to show without reading it again: the first condition's candidate is read so
    (it is the one taken, mostly), the others' by `fields` and read again whole when one of them is taken;
    `shown`: annotations of the row read whole only (what the caller shows, the claimed slot's spans).
    A claim lost to someone else at the same moment is retried (up to `attempts` times).
    """
    waiting = list(waiting)
    for _attempt in range(attempts):
        with transaction.atomic():
            locked = candidates.select_for_update(skip_locked=True, of=("self",))
            read_whole = locked.annotate(**shown) if shown else locked
            found = [
                (read_whole if whole and number == 0 else locked.select_related(None).only(*fields))
                .filter(condition)
                .order_by("id")
                .first()
                for number, condition in enumerate(waiting)
            ]
            candidate = min((row for row in found if row is not None), key=lambda row: row.pk, default=None)
            if candidate is None:
                return None
            if whole and candidate is not found[0]:
                candidate = read_whole.filter(pk=candidate.pk).first()  # locked by this transaction already
                if candidate is None:
                    continue
            if claim(candidate):
                return candidate
    return None
